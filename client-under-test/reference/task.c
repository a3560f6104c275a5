/* task.c -- one logical request: its attempts, its waits, its one result. */
#include "task.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"
#include "emit.h"
#include "http.h"
#include "log.h"
#include "policy.h"
#include "reconcile.h"
#include "taskrun.h"

/* Longest single attempt when the task has no deadline, ms. */
#define ATTEMPT_TIMEOUT_MS 30000L
/* The result goes out at least this long before the deadline, µs. */
#define REPORT_MARGIN_US 200000LL
/* No attempt starts with less time than this before the margin, µs. */
#define ATTEMPT_MIN_US 300000LL

/* When the next attempt may start, and why. */
struct plan {
	int64_t due_us;         /* monotonic instant */
	enum ref_reason reason; /* REF_REASON_NONE: no wait, send now */
};

/* How a wait ended. */
enum waited { WAIT_DONE, WAIT_OVER_BUDGET, WAIT_CANCELLED };

/* ---- reading the task message ------------------------------------- */

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
	rc = get_num(b, "$.budget", "max_attempts", 1, true, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	if (present)
		t->max_attempts = (int)v;
	rc = get_num(b, "$.budget", "max_wait_s", 0, false, &v, &present, err);
	if (rc != FA_OK)
		return rc;
	if (present)
		t->max_wait_us = (int64_t)(v * 1e6);
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
 * do, and so does anything its class calls a write (seed 000's classes). */
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

enum fa_rc ref_task_new(const struct cJSON *msg, struct ref_registry *reg, struct ref_state *st,
                        struct ref_task **out, struct fa_err *err)
{
	enum fa_rc rc;
	struct ref_task *t = fa_xcalloc(1, sizeof(*t));
	char *class_name = NULL, *scope = NULL, *key = NULL;
	double deadline_ms = 0;
	bool present;

	*out = NULL;
	pthread_mutex_init(&t->mu, NULL);
	{
		/* Sleeps are timed on the monotonic clock, like the pauses. */
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&t->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	atomic_init(&t->cancel, false);
	t->reg = reg;

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
	if (rc != FA_OK)
		goto out;
	if (t->id[0] == '\0' || t->method[0] == '\0') {
		fa_err_set(err, "$.%s: expected a non-empty string",
		           t->id[0] == '\0' ? "id" : "method");
		rc = FA_EINVAL;
		goto out;
	}
	t->body_len = t->body != NULL ? strlen(t->body) : 0;
	t->cls = ref_policy_class(class_name);
	rc = read_headers(t, msg, err);
	if (rc != FA_OK)
		goto out;
	rc = read_budget(t, msg, err);
	if (rc != FA_OK)
		goto out;
	rc = get_num(msg, "$", "deadline_ms", 1, false, &deadline_ms, &present, err);
	if (rc != FA_OK)
		goto out;
	if (present)
		t->deadline_us = fa_clock_mono_us() + (int64_t)(deadline_ms * 1000);
	t->reg_scope = registry_scope(t->id, scope, key);
	t->write = is_write(t->method, class_name);
	if (t->write)
		take_op(t, st);

	*out = t;
	t = NULL;
out:
	free(class_name);
	free(scope);
	free(key);
	ref_task_free(t);
	return rc;
}

const char *ref_task_id(const struct ref_task *t)
{
	return t->id;
}

/* ---- waiting --------------------------------------------------------- */

/* Sleep until monotonic @until_us unless cancelled; false on a cancel. */
static bool sleep_until(struct ref_task *t, int64_t until_us)
{
	struct timespec ts = {.tv_sec = (time_t)(until_us / 1000000),
	                      .tv_nsec = (long)(until_us % 1000000) * 1000};
	bool cancelled;

	pthread_mutex_lock(&t->mu);
	while (!atomic_load(&t->cancel) && fa_clock_mono_us() < until_us)
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
	cancelled = atomic_load(&t->cancel);
	pthread_mutex_unlock(&t->mu);
	return !cancelled;
}

/*
 * When may attempt @next start? @last is what the previous response
 * asked for (NULL before the first attempt, and when re-reading the
 * registry after a wait). Seed 000: a Retry-After is a lower bound, not
 * the moment to pounce; the scope's next_allowed_at holds every task of
 * the scope; full jitter spreads the return; without a usable
 * Retry-After, exponential backoff with full jitter.
 */
static struct plan plan_next(struct ref_task *t, int next, const struct ref_seen *last)
{
	int64_t now = fa_clock_mono_us();
	struct plan p = {.due_us = now, .reason = REF_REASON_NONE};
	int64_t base = now, window = 0;
	struct ref_pause scope;

	/* DEFECT storm: retry at once, ignoring the Retry-After, the scope
	 * registry and backoff alike (the attempt budget still holds). */
	if (defect_is("storm")) {
		if (last != NULL)
			p.reason = REF_REASON_BACKOFF;
		return p;
	}

	if (last != NULL && last->ra && last->until_us > now) {
		base = last->until_us;
		window = last->window_us;
		p.reason = REF_REASON_RETRY_AFTER;
	}
	scope = ref_registry_get(t->reg, t->reg_scope);
	if (scope.until_us > base) {
		base = scope.until_us;
		window = scope.window_us;
		p.reason = REF_REASON_SCOPE_PAUSE;
	}
	if (p.reason != REF_REASON_NONE) {
		p.due_us = base + ref_policy_jitter_us(window);
	} else if (last != NULL) {
		p.due_us = now + ref_policy_backoff_us(t->cls, next - 1);
		p.reason = REF_REASON_BACKOFF;
	}
	return p;
}

/* Wait out plan @p before attempt @next, if the budget and the deadline
 * allow it; every µs spent is added to *@waited_us. */
static enum waited wait_for(struct ref_task *t, const struct plan *p, int next, int64_t *waited_us)
{
	int64_t now = fa_clock_mono_us();
	int64_t wait = p->due_us > now ? p->due_us - now : 0;
	bool ok;

	/* Seed 000: count waiting as well as attempts; stop with a result
	 * rather than wait past the budget or the deadline. */
	if (*waited_us + wait > t->max_wait_us) {
		FA_LOG(FA_LOG_INFO, "client",
		       "task=%s event=stop why=max_wait wait_ms=%lld waited_ms=%lld", t->id,
		       (long long)(wait / 1000), (long long)(*waited_us / 1000));
		return WAIT_OVER_BUDGET;
	}
	if (t->deadline_us != 0 &&
	    now + wait + ATTEMPT_MIN_US + REPORT_MARGIN_US > t->deadline_us) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=deadline wait_ms=%lld", t->id,
		       (long long)(wait / 1000));
		return WAIT_OVER_BUDGET;
	}
	ref_emit_retry_scheduled(t->id, next, (wait + 999) / 1000, p->reason);
	ok = sleep_until(t, p->due_us);
	*waited_us += fa_clock_mono_us() - now;
	return ok ? WAIT_DONE : WAIT_CANCELLED;
}

/* ---- one attempt ------------------------------------------------------ */

/* The attempt's time limit: what the deadline leaves, ms; 0 when too
 * little is left for an attempt. A write gets at most half of it: if it
 * times out after the provider acted, the time to read its status must
 * still be there. */
static long attempt_timeout_ms(const struct ref_task *t, bool write)
{
	int64_t left;

	if (t->deadline_us == 0)
		return ATTEMPT_TIMEOUT_MS;
	left = t->deadline_us - REPORT_MARGIN_US - fa_clock_mono_us();
	if (left < ATTEMPT_MIN_US)
		return 0;
	if (write && left / 2 >= ATTEMPT_MIN_US)
		left /= 2;
	return left / 1000 < ATTEMPT_TIMEOUT_MS ? (long)(left / 1000) : ATTEMPT_TIMEOUT_MS;
}

/* Prepare attempt @n (@w), announce it, send it; false when it could
 * not be made (nothing went out and nothing was announced). */
static bool attempt(struct ref_task *t, int n, const struct ref_wire *w, struct ref_http_res *res)
{
	struct fa_err err = {""};
	struct ref_http *h = NULL;
	const char *env = t->key_env != NULL ? t->key_env : "FAKEAPI_KEY";
	struct ref_http_req req = {
	        .method = w->method,
	        .url = w->url,
	        .headers = (const char *const *)(w->status_read ? t->read_headers : t->headers),
	        .nheaders = w->status_read ? t->nread_headers : t->nheaders,
	        .secret = getenv(env),
	        .idempotency_key = w->idempotency_key,
	        .body = w->body,
	        .body_len = w->body_len,
	        .timeout_ms = attempt_timeout_ms(t, strcmp(w->kind, "write") == 0 && t->write),
	        .cancel = &t->cancel,
	};

	if (req.timeout_ms <= 0) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=deadline", t->id);
		return false;
	}
	if (req.secret == NULL)
		FA_LOG(FA_LOG_WARN, "client", "task=%s event=no_key env=%s sending without a key",
		       t->id, env);
	if (ref_http_new(&req, &h, &err) != FA_OK) {
		FA_LOG(FA_LOG_ERROR, "client", "task=%s event=setup error=\"%s\"", t->id, err.msg);
		return false;
	}
	if (t->op != NULL) {
		/* Count the attempt where a restarted process will find it
		 * before it can reach the provider: the budget spans both. */
		t->op->attempts++;
		if (t->persist && ref_state_save(t->state, t->op, &err) != FA_OK)
			FA_LOG(FA_LOG_WARN, "client", "task=%s event=state_save error=\"%s\"",
			       t->id, err.msg);
	}
	ref_emit_action_sent(t->id, n, w->kind, w->idempotency_key);
	ref_http_perform(h, res);
	ref_http_free(h);
	return true;
}

bool ref_task_retryable(const struct ref_task *t, const struct ref_run *run)
{
	if (run->res.status == 0)
		return t->cls->retry_transport;
	return ref_policy_retryable(t->cls, run->res.status);
}

enum ref_sent ref_task_send(struct ref_task *t, struct ref_run *run, const struct ref_wire *w)
{
	/* A resumed operation carries the attempts of the processes before. */
	int made = t->op != NULL ? t->op->attempts : run->n;
	struct ref_http_res *res = &run->res;

	if (made >= t->max_attempts) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=max_attempts attempts=%d",
		       t->id, made);
		return REF_OUT_OF_BUDGET;
	}
	for (;;) {
		struct plan p = plan_next(t, run->n + 1, run->last);

		if (p.reason == REF_REASON_NONE)
			break;
		switch (wait_for(t, &p, run->n + 1, &run->waited_us)) {
		case WAIT_CANCELLED: return REF_CANCELLED;
		case WAIT_OVER_BUDGET: return REF_OUT_OF_BUDGET;
		case WAIT_DONE: break;
		}
		/* Read the registry again: another task may have paused the
		 * scope while this one slept. */
		run->last = NULL;
	}
	if (atomic_load(&t->cancel))
		return REF_CANCELLED;

	ref_http_res_release(res);
	if (!attempt(t, run->n + 1, w, res))
		return REF_OUT_OF_BUDGET;
	run->n++;
	run->last = NULL;
	run->maybe_sent = run->maybe_sent || res->maybe_sent;
	if (res->cancelled) /* nothing more for a cancelled task but its result */
		return REF_CANCELLED;
	run->status = res->status;
	run->any_response = run->any_response || res->status != 0;

	run->seen.ra =
	        ref_policy_retry_after(res->retry_after, res->seen_wall_us, res->seen_mono_us,
	                               &run->seen.until_us, &run->seen.window_us);
	/* Seed 000: publish the pause to the whole scope first, before
	 * reporting or scheduling anything, so no other task can take the
	 * next slot in between. */
	if (run->seen.ra)
		ref_registry_raise(t->reg, t->reg_scope, run->seen.until_us, run->seen.window_us);
	ref_emit_action_result(t->id, run->n, w->kind, res->status, res->retry_after,
	                       res->status == 0 ? res->error : NULL);
	return REF_SENT;
}

/* ---- the task's thread ------------------------------------------------ */

/* GET, HEAD and OPTIONS change nothing (RFC 9110 §9.2.1). */
static bool safe_method(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	       strcmp(method, "OPTIONS") == 0;
}

/* A request that is not a guarded write: retried as its class says. */
static void run_plain(struct ref_task *t, struct ref_run *run)
{
	const struct ref_wire w = {
	        .kind = safe_method(t->method) ? "read" : "write",
	        .method = t->method,
	        .url = t->url,
	        .body = t->body,
	        .body_len = t->body_len,
	};

	for (;;) {
		enum ref_sent s = ref_task_send(t, run, &w);

		if (s == REF_CANCELLED)
			run->outcome = "cancelled";
		if (s != REF_SENT)
			return;
		if (run->res.status >= 200 && run->res.status <= 299) {
			run->outcome = "succeeded";
			return;
		}
		if (!ref_task_retryable(t, run))
			return;
		run->last = &run->seen;
	}
}

/* Is @url an http or https URL? Only those are attempts on the provider;
 * anything else (file://, ftp://, no scheme at all) is refused before
 * it is announced, as libcurl is told to refuse it (http.c). */
static bool http_url(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

static void *task_main(void *arg)
{
	struct ref_task *t = arg;
	struct ref_run run = {.outcome = "failed"};
	const char *sent;

	if (!http_url(t->url)) {
		/* Nothing to send it with: no attempt, nothing saved. */
		FA_LOG(FA_LOG_ERROR, "client",
		       "task=%s event=bad_url error=\"the url's scheme is not http or https\"",
		       t->id);
		ref_emit_result(t->id, "failed", 0, 0, "no", 0, NULL);
		return NULL;
	}
	if (t->write)
		ref_write_run(t, &run);
	else
		run_plain(t, &run);
	ref_http_res_release(&run.res);
	sent = run.sent != NULL   ? run.sent
	       : run.any_response ? "yes"
	       : run.maybe_sent   ? "unknown"
	                          : "no";
	ref_emit_result(t->id, run.outcome, run.n, run.waited_us / 1000, sent, run.status,
	                run.provider_id);
	return NULL;
}

enum fa_rc ref_task_start(struct ref_task *t, struct fa_err *err)
{
	int e = pthread_create(&t->thread, NULL, task_main, t);

	if (e != 0) {
		fa_err_set(err, "task %s: pthread_create: %s", t->id, strerror(e));
		ref_emit_result(t->id, "failed", 0, 0,
		                t->resumed || t->unknown_past ? "unknown" : "no", 0, NULL);
		return FA_EIO;
	}
	t->started = true;
	return FA_OK;
}

void ref_task_cancel(struct ref_task *t)
{
	pthread_mutex_lock(&t->mu);
	atomic_store(&t->cancel, true);
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

void ref_task_free(struct ref_task *t)
{
	if (t == NULL)
		return;
	if (t->started)
		pthread_join(t->thread, NULL);
	for (size_t i = 0; i < t->nheaders; i++)
		free(t->headers[i]);
	free(t->headers);
	free(t->read_headers); /* its lines are headers' */
	ref_op_free(t->op);
	free(t->id);
	free(t->method);
	free(t->url);
	free(t->body);
	free(t->key_env);
	free(t->reg_scope);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
