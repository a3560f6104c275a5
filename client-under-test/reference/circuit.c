/* circuit.c -- the circuit breaker: one path that keeps failing the same way is stopped. */
#include "circuit.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "defect.h"

/* One failure key and how often it was seen. A run meets a handful of
 * failing paths, so a list searched under the lock is all it needs. */
struct key {
	char *method;     /* "POST", owned */
	char *endpoint;   /* "/v1/search", owned */
	long status;      /* 400..499 but 408 and 429 */
	char *code;       /* the body's error.code, "" for none, owned */
	int count;        /* identical failures seen */
	struct key *next; /* next key */
};

struct ref_circuit {
	pthread_mutex_t mu; /* guards the list and every key */
	int max_identical;  /* failures that open a key, >= 1 */
	struct key *head;   /* keys seen so far */
};

struct ref_circuit *ref_circuit_new(int max_identical)
{
	struct ref_circuit *c = fa_xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->mu, NULL);
	c->max_identical = max_identical >= 1 ? max_identical : 1;
	return c;
}

static void key_free(struct key *k)
{
	free(k->method);
	free(k->endpoint);
	free(k->code);
	free(k);
}

void ref_circuit_free(struct ref_circuit *c)
{
	struct key *k, *next;

	if (c == NULL)
		return;
	for (k = c->head; k != NULL; k = next) {
		next = k->next;
		key_free(k);
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* The error.code string of a JSON @body, owned; "" when there is none. */
static char *error_code(const char *body, size_t len)
{
	cJSON *doc, *err, *code;
	char *out = NULL;

	if (body == NULL || len == 0)
		return fa_xstrdup("");
	doc = cJSON_ParseWithLengthOpts(body, len, NULL, 0);
	err = cJSON_GetObjectItemCaseSensitive(doc, "error");
	code = cJSON_GetObjectItemCaseSensitive(err, "code");
	if (cJSON_IsString(code))
		out = fa_xstrdup(code->valuestring);
	cJSON_Delete(doc);
	return out != NULL ? out : fa_xstrdup("");
}

/* Does @status say the request itself is wrong (the retry-safety guide: 400, 401, 403,
 * 404, 422 ask for a fix, not a repeat)? 408 and 429 say "not now". */
static bool identical_candidate(long status)
{
	return status >= 400 && status <= 499 && status != 408 && status != 429;
}

static bool same_path(const struct key *k, const char *method, const char *endpoint)
{
	return strcmp(k->method, method) == 0 && strcmp(k->endpoint, endpoint) == 0;
}

bool ref_circuit_answer(struct ref_circuit *c, const char *method, const char *endpoint,
                        long status, const char *body, size_t len)
{
	struct key *k, **pp;
	char *code;
	bool opened = false;

	if (status >= 200 && status <= 299) {
		pthread_mutex_lock(&c->mu);
		for (pp = &c->head; *pp != NULL;) {
			k = *pp;
			if (same_path(k, method, endpoint) && k->count < c->max_identical) {
				*pp = k->next;
				key_free(k);
			} else {
				pp = &k->next;
			}
		}
		pthread_mutex_unlock(&c->mu);
		return false;
	}
	if (!identical_candidate(status))
		return false;
	code = error_code(body, len);
	pthread_mutex_lock(&c->mu);
	for (k = c->head; k != NULL; k = k->next)
		if (same_path(k, method, endpoint) && k->status == status &&
		    strcmp(k->code, code) == 0)
			break;
	if (k == NULL) {
		k = fa_xcalloc(1, sizeof(*k));
		k->method = fa_xstrdup(method);
		k->endpoint = fa_xstrdup(endpoint);
		k->status = status;
		k->code = code;
		code = NULL;
		k->next = c->head;
		c->head = k;
	}
	k->count++;
	opened = k->count == c->max_identical;
	pthread_mutex_unlock(&c->mu);
	free(code);
	return opened;
}

bool ref_circuit_open(struct ref_circuit *c, const char *method, const char *endpoint, long *status,
                      const char **code)
{
	bool open = false;

	/* DEFECT whitespace: no circuit breaker: a path that keeps failing
	 * the same way is never stopped. */
	if (defect_is("whitespace"))
		return false;

	pthread_mutex_lock(&c->mu);
	for (const struct key *k = c->head; k != NULL; k = k->next) {
		if (same_path(k, method, endpoint) && k->count >= c->max_identical) {
			*status = k->status;
			*code = k->code;
			open = true;
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return open;
}
