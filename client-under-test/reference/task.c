/* task.c -- one logical request: its attempts, its waits, its one result. */
#include "task.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"
#include "emit.h"
#include "http.h"
#include "log.h"
#include "policy.h"

/* Longest single attempt when the task has no deadline, ms. */
#define ATTEMPT_TIMEOUT_MS 30000L
/* The result goes out at least this long before the deadline, µs. */
#define REPORT_MARGIN_US 200000LL
/* No attempt starts with less time than this before the margin, µs. */
#define ATTEMPT_MIN_US 300000LL

struct ref_task {
	char *id;                    /* the harness's task id */
	char *method;                /* "GET", ... */
	char *url;                   /* used as given (carries fa_task) */
	char **headers;              /* "Name: value" lines */
	size_t nheaders;             /* entries in headers */
	char *body;                  /* request body, or NULL */
	size_t body_len;             /* bytes of body */
	char *key_env;               /* variable holding the key, or NULL */
	char *reg_scope;             /* the registry key this task uses */
	const struct ref_class *cls; /* the task's class (static) */
	int max_attempts;            /* class default or the task's budget */
	int64_t max_wait_us;         /* the same, for total waiting */
	int64_t deadline_us;         /* monotonic: result due; 0 = none */
	struct ref_registry *reg;    /* shared by all tasks (borrowed) */
	pthread_t thread;            /* runs task_main() */
	bool started;                /* thread is valid and must be joined */
	pthread_mutex_t mu;          /* with cv: cancellable sleeps */
	pthread_cond_t cv;           /* signalled by ref_task_cancel() */
	atomic_bool cancel;          /* set once, never cleared */
};

/* When the next attempt may start, and why. */
struct plan {
	int64_t due_us;         /* monotonic instant */
	enum ref_reason reason; /* REF_REASON_NONE: no wait, send now */
};

/* What the previous response asked for, if anything. */
struct seen {
	bool ra;           /* it carried a Retry-After naming a future instant */
	int64_t until_us;  /* that instant, monotonic */
	int64_t window_us; /* its jitter window */
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

enum fa_rc ref_task_new(const struct cJSON *msg, struct ref_registry *reg, struct ref_task **out,
                        struct fa_err *err)
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
static struct plan plan_next(struct ref_task *t, int next, const struct seen *last)
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
 * little is left for an attempt. */
static long attempt_timeout_ms(const struct ref_task *t)
{
	int64_t left;

	if (t->deadline_us == 0)
		return ATTEMPT_TIMEOUT_MS;
	left = t->deadline_us - REPORT_MARGIN_US - fa_clock_mono_us();
	if (left < ATTEMPT_MIN_US)
		return 0;
	return left / 1000 < ATTEMPT_TIMEOUT_MS ? (long)(left / 1000) : ATTEMPT_TIMEOUT_MS;
}

/* Prepare attempt @n, announce it, send it; false when it could not be
 * made (nothing went out and nothing was announced). */
static bool attempt(struct ref_task *t, int n, struct ref_http_res *res)
{
	struct fa_err err = {""};
	struct ref_http *h = NULL;
	const char *env = t->key_env != NULL ? t->key_env : "FAKEAPI_KEY";
	struct ref_http_req req = {
	        .method = t->method,
	        .url = t->url,
	        .headers = (const char *const *)t->headers,
	        .nheaders = t->nheaders,
	        .secret = getenv(env),
	        .body = t->body,
	        .body_len = t->body_len,
	        .timeout_ms = attempt_timeout_ms(t),
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
	ref_emit_action_sent(t->id, n);
	ref_http_perform(h, res);
	ref_http_free(h);
	return true;
}

/* Is @res worth another attempt in @t's class? */
static bool retryable(const struct ref_task *t, const struct ref_http_res *res)
{
	if (res->status == 0)
		return t->cls->retry_transport;
	return ref_policy_retryable(t->cls, res->status);
}

/* ---- the task's thread ------------------------------------------------ */

static void *task_main(void *arg)
{
	struct ref_task *t = arg;
	struct ref_http_res res = {0};
	struct seen seen = {false, 0, 0};
	const struct seen *last = NULL;
	const char *outcome = "failed";
	bool any_response = false, maybe_sent = false;
	int64_t waited_us = 0;
	long status = 0;
	int n = 0;

	for (;;) {
		struct plan p = plan_next(t, n + 1, last);
		enum waited w;

		if (p.reason != REF_REASON_NONE) {
			w = wait_for(t, &p, n + 1, &waited_us);
			if (w == WAIT_CANCELLED)
				outcome = "cancelled";
			if (w != WAIT_DONE)
				break;
			/* Read the registry again: another task may have
			 * paused the scope while this one slept. */
			last = NULL;
			continue;
		}
		if (atomic_load(&t->cancel)) {
			outcome = "cancelled";
			break;
		}

		ref_http_res_release(&res);
		if (!attempt(t, n + 1, &res))
			break;
		n++;
		maybe_sent = maybe_sent || res.maybe_sent;
		if (res.cancelled) {
			/* Nothing more for a cancelled task but its result. */
			outcome = "cancelled";
			break;
		}
		status = res.status;
		any_response = any_response || res.status != 0;

		seen.ra = ref_policy_retry_after(res.retry_after, res.seen_wall_us,
		                                 res.seen_mono_us, &seen.until_us, &seen.window_us);
		/* Seed 000: publish the pause to the whole scope first, before
		 * reporting or scheduling anything, so no other task can take
		 * the next slot in between. */
		if (seen.ra)
			ref_registry_raise(t->reg, t->reg_scope, seen.until_us, seen.window_us);
		ref_emit_action_result(t->id, n, res.status, res.retry_after,
		                       res.status == 0 ? res.error : NULL);

		if (res.status >= 200 && res.status <= 299) {
			outcome = "succeeded";
			break;
		}
		if (!retryable(t, &res))
			break;
		if (n >= t->max_attempts) {
			FA_LOG(FA_LOG_INFO, "client",
			       "task=%s event=stop why=max_attempts attempts=%d", t->id, n);
			break;
		}
		last = &seen;
	}
	ref_http_res_release(&res);
	ref_emit_result(t->id, outcome, n, waited_us / 1000,
	                any_response ? "yes"
	                : maybe_sent ? "unknown"
	                             : "no",
	                status);
	return NULL;
}

enum fa_rc ref_task_start(struct ref_task *t, struct fa_err *err)
{
	int e = pthread_create(&t->thread, NULL, task_main, t);

	if (e != 0) {
		fa_err_set(err, "task %s: pthread_create: %s", t->id, strerror(e));
		ref_emit_result(t->id, "failed", 0, 0, "no", 0);
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
