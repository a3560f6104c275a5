/* reconcile.c -- what the provider's answers say about a write: its record, its error, the status
 * reads. */
#include "reconcile.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

const char *ref_found_str(enum ref_found f)
{
	switch (f) {
	case REF_NOT_FOUND: return "not_found";
	case REF_IN_FLIGHT: return "in_flight";
	case REF_UNAVAILABLE: return "unavailable";
	case REF_TRY_AGAIN: return "try_again";
	case REF_FOUND: break;
	}
	return "found";
}

/* ---- URLs ---------------------------------------------------------------- */

/* @s with every byte outside RFC 3986's unreserved set as %XX (owned). */
static char *pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = fa_xmalloc(3 * strlen(s) + 1), *p = out;

	for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
			*p++ = (char)*c;
		} else {
			*p++ = '%';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 0xf];
		}
	}
	*p = '\0';
	return out;
}

/* Length of "scheme://authority" at the start of @url; 0 when absent. */
static size_t base_len(const char *url)
{
	const char *sep = strstr(url, "://");
	const char *end;

	if (sep == NULL || sep == url)
		return 0;
	end = sep + 3;
	end += strcspn(end, "/?#");
	return end > sep + 3 ? (size_t)(end - url) : 0;
}

/* The raw value of the fa_task query parameter of @url (owned), NULL
 * when it has none. It was written by the harness, already encoded. */
static char *fa_task_param(const char *url)
{
	const char *q = strchr(url, '?');
	size_t qlen;

	if (q == NULL)
		return NULL;
	q++;
	qlen = strcspn(q, "#");
	while (qlen > 0) {
		size_t plen = strcspn(q, "&#");

		if (plen > qlen)
			plen = qlen;
		if (plen > 8 && strncmp(q, "fa_task=", 8) == 0)
			return fa_xstrndup(q + 8, plen - 8);
		if (plen >= qlen)
			break;
		q += plen + 1;
		qlen -= plen + 1;
	}
	return NULL;
}

/* {base}@path@value, then the fa_task parameter after @joiner ('?' or '&'). */
static char *reconcile_url(const char *task_url, const char *path, const char *value, char joiner)
{
	size_t blen = base_len(task_url);
	char *enc, *task, *url;

	if (blen == 0)
		return NULL;
	enc = pct_encode(value);
	task = fa_task_param(task_url);
	if (task != NULL)
		url = fa_xasprintf("%.*s%s%s%cfa_task=%s", (int)blen, task_url, path, enc, joiner,
		                   task);
	else
		url = fa_xasprintf("%.*s%s%s", (int)blen, task_url, path, enc);
	free(enc);
	free(task);
	return url;
}

char *ref_reconcile_operation_url(const char *task_url, const char *key)
{
	return reconcile_url(task_url, "/v1/operations/", key, '?');
}

char *ref_reconcile_records_url(const char *task_url, const char *client_reference)
{
	return reconcile_url(task_url, "/v1/records?client_reference=", client_reference, '&');
}

/* ---- bodies -------------------------------------------------------------- */

static cJSON *parse(const char *body, size_t len)
{
	if (body == NULL || len == 0)
		return NULL;
	return cJSON_ParseWithLengthOpts(body, len, NULL, 0);
}

/* The id member of object @o as a string (owned): a string, or an
 * integer in decimal; NULL otherwise. */
static char *id_of(const cJSON *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "id");

	if (cJSON_IsString(v) && v->valuestring[0] != '\0')
		return fa_xstrdup(v->valuestring);
	if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
		return fa_xasprintf("%lld", (long long)v->valuedouble);
	return NULL;
}

/* Statuses that say "not now" rather than "no": ask again. */
static bool passing(long status)
{
	return status == 0 || status == 408 || status == 429 || (status >= 500 && status != 501);
}

enum ref_found ref_reconcile_operation(long status, const char *body, size_t len,
                                       char **provider_id)
{
	enum ref_found f = REF_UNAVAILABLE;
	cJSON *o = NULL;
	const cJSON *st;

	*provider_id = NULL;
	if (passing(status))
		return REF_TRY_AGAIN;
	if (status == 409)
		return REF_IN_FLIGHT;
	if (status == 404)
		return ref_reconcile_error_is(body, len, "operation_not_found") ? REF_NOT_FOUND
		                                                                : REF_UNAVAILABLE;
	if (status < 200 || status > 299)
		return REF_UNAVAILABLE;
	o = parse(body, len);
	if (!cJSON_IsObject(o))
		goto out;
	st = cJSON_GetObjectItemCaseSensitive(o, "status");
	if (cJSON_IsString(st) && strcmp(st->valuestring, "in_flight") == 0) {
		f = REF_IN_FLIGHT;
		goto out;
	}
	if (cJSON_IsString(st) && strcmp(st->valuestring, "completed") != 0)
		goto out;
	*provider_id = id_of(cJSON_GetObjectItemCaseSensitive(o, "record"));
	if (*provider_id != NULL)
		f = REF_FOUND;
out:
	cJSON_Delete(o);
	return f;
}

enum ref_found ref_reconcile_records(long status, const char *body, size_t len,
                                     const char *client_reference, char **provider_id,
                                     size_t *n_records)
{
	enum ref_found f = REF_UNAVAILABLE;
	cJSON *o = NULL;
	const cJSON *recs, *r;
	bool any_ref = false;

	*provider_id = NULL;
	*n_records = 0;
	if (passing(status))
		return REF_TRY_AGAIN;
	if (status < 200 || status > 299)
		return REF_UNAVAILABLE;
	o = parse(body, len);
	recs = cJSON_GetObjectItemCaseSensitive(o, "records");
	if (!cJSON_IsArray(recs))
		goto out;
	/* A record naming another reference is not ours; a provider whose
	 * records carry no reference at all is taken at its word. */
	cJSON_ArrayForEach(r, recs)
	{
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "client_reference")))
			any_ref = true;
	}
	cJSON_ArrayForEach(r, recs)
	{
		const cJSON *ref = cJSON_GetObjectItemCaseSensitive(r, "client_reference");
		char *id;

		if (!cJSON_IsObject(r))
			continue;
		if (any_ref &&
		    (!cJSON_IsString(ref) || strcmp(ref->valuestring, client_reference) != 0))
			continue;
		id = id_of(r);
		if (id == NULL)
			continue;
		if (++*n_records == 1)
			*provider_id = id;
		else
			free(id);
	}
	f = *n_records > 0 ? REF_FOUND : REF_NOT_FOUND;
	/* Records without a usable id cannot name the write: no answer. */
	if (f == REF_NOT_FOUND && cJSON_GetArraySize(recs) > 0 && !any_ref)
		f = REF_UNAVAILABLE;
out:
	cJSON_Delete(o);
	return f;
}

char *ref_reconcile_created_id(const char *body, size_t len)
{
	cJSON *o = parse(body, len);
	char *id = NULL;

	if (cJSON_IsObject(o)) {
		id = id_of(o);
		if (id == NULL)
			id = id_of(cJSON_GetObjectItemCaseSensitive(o, "record"));
	}
	cJSON_Delete(o);
	return id;
}

bool ref_reconcile_error_is(const char *body, size_t len, const char *code)
{
	cJSON *o = parse(body, len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
	bool is = cJSON_IsString(c) && strcmp(c->valuestring, code) == 0;

	cJSON_Delete(o);
	return is;
}

char *ref_reconcile_client_reference(const char *body)
{
	cJSON *o = body != NULL ? cJSON_ParseWithLengthOpts(body, strlen(body), NULL, 0) : NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "client_reference");
	char *ref = cJSON_IsString(v) ? fa_xstrdup(v->valuestring) : NULL;

	cJSON_Delete(o);
	return ref;
}
