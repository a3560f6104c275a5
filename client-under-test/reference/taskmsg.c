/* taskmsg.c -- reading a task message: its fields, its class and budget, its saved write. */
#include "taskmsg.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"
#include "fingerprint.h"
#include "log.h"
#include "policy.h"
#include "reconcile.h"

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsArray(v))
		return "array";
	return "object";
}

/* *@out = a copy of string field @name, NULL when null or absent (an error
 * if @required). */
static enum fa_rc get_str(const cJSON *msg, const char *name, bool required, char **out,
                          struct fa_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, name);

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v)) {
		if (!required)
			return FA_OK;
		fa_err_set(err, "$.%s: expected string, got nothing", name);
		return FA_EINVAL;
	}
	if (!cJSON_IsString(v)) {
		fa_err_set(err, "$.%s: expected string, got %s", name, type_name(v));
		return FA_EINVAL;
	}
	*out = fa_xstrdup(v->valuestring);
	return FA_OK;
}

/* *@out = number field @name of @obj if present, not null and >= @min;
 * *@present says whether it was there. @path names @obj in messages. */
static enum fa_rc get_num(const cJSON *obj, const char *path, const char *name, double min,
                          bool integer, double *out, bool *present, struct fa_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	*present = false;
	if (v == NULL || cJSON_IsNull(v))
		return FA_OK;
	if (!cJSON_IsNumber(v)) {
		fa_err_set(err, "%s.%s: expected number >= %g, got %s", path, name, min,
		           type_name(v));
		return FA_EINVAL;
	}
	if (v->valuedouble < min || v->valuedouble > 1e9 ||
	    (integer && v->valuedouble != (double)(long long)v->valuedouble)) {
		fa_err_set(err, "%s.%s: expected %s >= %g, got %g", path, name,
		           integer ? "integer" : "number", min, v->valuedouble);
		return FA_EINVAL;
	}
	*out = v->valuedouble;
	*present = true;
	return FA_OK;
}

/* A header name or value may not break the request's framing. */
static bool header_ok(const char *name, const char *value)
{
	if (name[0] == '\0' || strpbrk(name, ":\r\n \t") != NULL)
		return false;
	return strpbrk(value, "\r\n") == NULL;
}

static enum fa_rc read_headers(struct ref_task *t, const cJSON *msg, struct fa_err *err)
{
	const cJSON *hs = cJSON_GetObjectItemCaseSensitive(msg, "headers");
	const cJSON *h;
	size_t n = 0;

	if (hs == NULL || cJSON_IsNull(hs))
		return FA_OK;
	if (!cJSON_IsObject(hs)) {
		fa_err_set(err, "$.headers: expected object, got %s", type_name(hs));
		return FA_EINVAL;
	}
	cJSON_ArrayForEach(h, hs) n++;
	t->headers = fa_xcalloc(n + 1, sizeof(*t->headers));
	cJSON_ArrayForEach(h, hs)
	{
		if (!cJSON_IsString(h)) {
			fa_err_set(err, "$.headers.%s: expected string, got %s", h->string,
			           type_name(h));
			return FA_EINVAL;
		}
		if (!header_ok(h->string, h->valuestring)) {
			fa_err_set(err, "$.headers.%s: not a valid header line", h->string);
			return FA_EINVAL;
		}
		t->headers[t->nheaders++] = fa_xasprintf("%s: %s", h->string, h->valuestring);
	}
	/* A status read has no body: the task's Content-* headers would
	 * describe one. */
	t->read_headers = fa_xcalloc(n + 1, sizeof(*t->read_headers));
	for (size_t i = 0; i < t->nheaders; i++)
		if (strncasecmp(t->headers[i], "Content-", 8) != 0)
			t->read_headers[t->nread_headers++] = t->headers[i];
	return FA_OK;
}

static enum fa_rc read_budget(struct ref_task *t, const cJSON *msg, struct fa_err *err)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(msg, "budget");
	double v = 0;
	bool present;
	enum fa_rc rc;

	t->max_attempts = t->cls->max_attempts;
	t->max_wait_us = (int64_t)t->cls->max_wait_s * 1000000;
	if (b == NULL || cJSON_IsNull(b))
		return FA_OK;
	if (!cJSON_IsObject(b)) {
		fa_err_set(err, "$.budget: expected object, got %s", type_name(b));
		return FA_EINVAL;
	}
	/* The retry-safety guide: the class's numbers are rules the caller cannot easily
	 * override: a task's budget may tighten them, never loosen them. */
	rc = get_num(b, "$.budget", "max_attempts", 1, true, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	if (present && (int)v < t->max_attempts)
		t->max_attempts = (int)v;
	rc = get_num(b, "$.budget", "max_wait_s", 0, false, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	if (present && (int64_t)(v * 1e6) < t->max_wait_us)
		t->max_wait_us = (int64_t)(v * 1e6);
	return FA_OK;
}

/* "stream": true or false; null or absent is false. */
static enum fa_rc read_stream(struct ref_task *t, const cJSON *msg, struct fa_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "stream");

	if (v == NULL || cJSON_IsNull(v))
		return FA_OK;
	if (!cJSON_IsBool(v)) {
		fa_err_set(err, "$.stream: expected boolean, got %s", type_name(v));
		return FA_EINVAL;
	}
	t->stream = cJSON_IsTrue(v);
	return FA_OK;
}

/* "tokens" (an integer >= 0, null: 0) and "pacing" ({rpm, tpm, period_s},
 * rpm and tpm integers >= 1 or null, not both null; period_s > 0; null:
 * no pacing). */
static enum fa_rc read_pacing(struct ref_task *t, const cJSON *msg, struct fa_err *err)
{
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(msg, "pacing");
	double v = 0;
	bool present;
	enum fa_rc rc;

	rc = get_num(msg, "$", "tokens", 0, true, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	t->tokens = present ? (int64_t)v : 0;
	if (pc == NULL || cJSON_IsNull(pc))
		return FA_OK;
	if (!cJSON_IsObject(pc)) {
		fa_err_set(err, "$.pacing: expected object, got %s", type_name(pc));
		return FA_EINVAL;
	}
	rc = get_num(pc, "$.pacing", "rpm", 1, true, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	t->pacing.rpm = present ? (int64_t)v : 0;
	rc = get_num(pc, "$.pacing", "tpm", 1, true, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	t->pacing.tpm = present ? (int64_t)v : 0;
	rc = get_num(pc, "$.pacing", "period_s", 0.001, false, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	if (!present) {
		fa_err_set(err, "$.pacing.period_s: expected number >= 0.001, got nothing");
		return FA_EINVAL;
	}
	t->pacing.period_s = v;
	/* Neither limit set: nothing to keep under. */
	t->pacing.given = t->pacing.rpm > 0 || t->pacing.tpm > 0;

	/* DEFECT nopace: the published limits are read and then ignored:
	 * every attempt goes out as soon as the rest of the rules allow. */
	if (defect_is("nopace"))
		t->pacing.given = false;
	return FA_OK;
}

/* The registry key: the task's scope, else its key, else one shared
 * scope for everything unnamed. */
static char *registry_scope(const char *id, const char *scope, const char *key)
{
	/* DEFECT solo: every task gets a registry entry of its own, so a
	 * pause told to one task holds only that task and the other tasks
	 * of the scope never see it. */
	if (defect_is("solo"))
		return fa_xasprintf("task:%s", id);

	if (scope != NULL)
		return fa_xstrdup(scope);
	if (key != NULL)
		return fa_xasprintf("key:%s", key);
	return fa_xstrdup("default");
}

/* Does the task change something on the provider? POST, PUT and PATCH
 * do, and so does anything its class calls a write (the retry-safety guide's classes). */
static bool is_write(const char *method, const char *class_name)
{
	if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
	    strcmp(method, "PATCH") == 0)
		return true;
	return class_name != NULL && (strcmp(class_name, "idempotent_write") == 0 ||
	                              strcmp(class_name, "uncertain_write") == 0);
}

static bool same_text(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* The operation of write task @t: the one saved for its id when it is the
 * same write (a restarted client gets the same task again), else a new
 * one. */
static void take_op(struct ref_task *t, struct ref_state *st)
{
	struct ref_op *saved = NULL;
	char *ref = ref_reconcile_client_reference(t->body);

	t->state = st;
	if (ref_write_persists()) {
		t->persist = ref_state_persistent(st);
		if (ref_state_take(st, t->id, &saved) == REF_SAVED_UNUSABLE) {
			/* Never a fresh create before the provider was asked
			 * (write.c). */
			FA_LOG(FA_LOG_WARN, "client",
			       "task=%s event=state_unusable a file for this task cannot be used: "
			       "reconcile by client reference first",
			       t->id);
			t->unknown_past = true;
		}
		if (!t->persist)
			FA_LOG(FA_LOG_WARN, "client",
			       "task=%s event=no_state_dir CLIENT_STATE_DIR is not set: the write "
			       "cannot be resumed after a restart",
			       t->id);
	}
	if (saved != NULL &&
	    (strcmp(saved->method, t->method) != 0 || !same_text(saved->body, t->body))) {
		/* Another write under a reused task id: its key must not
		 * travel with this body (the provider would answer 422). */
		FA_LOG(FA_LOG_WARN, "client",
		       "task=%s event=state_mismatch the saved operation is another write: a new "
		       "one",
		       t->id);
		ref_op_free(saved);
		saved = NULL;
	}
	if (saved != NULL) {
		/* The body is the same bytes: its reference is the one to ask
		 * about, whatever a hand-edited file says. */
		free(saved->client_reference);
		saved->client_reference = ref;
		ref = NULL;
		t->op = saved;
		t->resumed = true;
	} else {
		t->op = ref_op_new(t->id, t->method, t->url, t->body, ref);
	}
	free(ref);
}

enum fa_rc ref_taskmsg_read(struct ref_task *t, const cJSON *msg, struct ref_state *st,
                            struct fa_err *err)
{
	enum fa_rc rc;
	char *class_name = NULL, *scope = NULL, *key = NULL;
	double deadline_ms = 0;
	bool present;

	rc = get_str(msg, "id", true, &t->id, err);
	if (rc == FA_OK)
		rc = get_str(msg, "method", true, &t->method, err);
	if (rc == FA_OK)
		rc = get_str(msg, "url", true, &t->url, err);
	if (rc == FA_OK)
		rc = get_str(msg, "class", false, &class_name, err);
	if (rc == FA_OK)
		rc = get_str(msg, "body", false, &t->body, err);
	if (rc == FA_OK)
		rc = get_str(msg, "key_env", false, &t->key_env, err);
	if (rc == FA_OK)
		rc = get_str(msg, "key", false, &key, err);
	if (rc == FA_OK)
		rc = get_str(msg, "scope", false, &scope, err);
	if (rc == FA_OK)
		rc = get_str(msg, "goal", false, &t->goal, err);
	if (rc != FA_OK)
		goto out;
	if (t->id[0] == '\0' || t->method[0] == '\0') {
		fa_err_set(err, "$.%s: expected a non-empty string",
		           t->id[0] == '\0' ? "id" : "method");
		rc = FA_EINVAL;
		goto out;
	}
	t->body_len = t->body != NULL ? strlen(t->body) : 0;
	t->cls = ref_policy_class(class_name, t->method);
	rc = read_headers(t, msg, err);
	if (rc != FA_OK)
		goto out;
	rc = read_budget(t, msg, err);
	if (rc != FA_OK)
		goto out;
	rc = read_stream(t, msg, err);
	if (rc != FA_OK)
		goto out;
	rc = read_pacing(t, msg, err);
	if (rc != FA_OK)
		goto out;
	t->pace_key = fa_xstrdup(key != NULL ? key : "");
	rc = get_num(msg, "$", "deadline_ms", 1, false, &deadline_ms, &present, err);
	if (rc != FA_OK)
		goto out;
	if (present)
		t->deadline_us = fa_clock_mono_us() + (int64_t)(deadline_ms * 1000);
	t->reg_scope = registry_scope(t->id, scope, key);
	/* The scope's own budget (slot.h) is the scope's whatever the
	 * registry does: one name for the provider's scope. */
	t->scope = scope != NULL && scope[0] != '\0' ? fa_xstrdup(scope)
	           : key != NULL                     ? fa_xasprintf("key:%s", key)
	                                             : fa_xstrdup("default");
	t->endpoint = ref_fingerprint_endpoint(t->url);
	/* A stream is a chat completion: it creates nothing on the provider
	 * to reconcile, and the LLM rate-limit guide's first-token rule, not a status read,
	 * is what keeps its retries safe. */
	t->write = is_write(t->method, class_name) && !t->stream;
	if (t->write)
		take_op(t, st);
out:
	free(class_name);
	free(scope);
	free(key);
	return rc;
}
