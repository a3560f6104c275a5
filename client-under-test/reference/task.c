/* task.c -- one logical request: its attempts, its waits, its one result. */
#include "task.h"

#include <errno.h>
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
#include "escalate.h"
#include "http.h"
#include "log.h"
#include "pace.h"
#include "policy.h"
#include "stream.h"
#include "taskmsg.h"
#include "taskrun.h"

/* Longest single attempt when the task has no deadline, ms. */
#define ATTEMPT_TIMEOUT_MS 30000L
/* The result goes out at least this long before the deadline, µs. */
#define REPORT_MARGIN_US 200000LL
/* No attempt starts with less time than this before the margin, µs. */
#define ATTEMPT_MIN_US 300000LL
/* A wait budget that sets no limit, µs (sums of it never overflow). */
#define UNBOUNDED_US (INT64_C(1) << 60)

/* When the next attempt may start, and why. */
struct plan {
	int64_t due_us;         /* monotonic instant */
	int64_t floor_us;       /* the earliest instant that would do: the pause's
	                           end, or the backoff's floor */
	enum ref_reason reason; /* REF_REASON_NONE: no wait, send now */
};

/* How a wait ended. */
enum waited { WAIT_DONE, WAIT_OVER_BUDGET, WAIT_CANCELLED };

enum fa_rc ref_task_new(const struct cJSON *msg, const struct ref_shared *sh, struct ref_task **out,
                        struct fa_err *err)
{
	struct ref_task *t = fa_xcalloc(1, sizeof(*t));
	pthread_condattr_t ca;
	enum fa_rc rc;

	*out = NULL;
	pthread_mutex_init(&t->mu, NULL);
	/* Sleeps are timed on the monotonic clock, like the pauses. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&t->cancel, false);
	t->reg = sh->reg;
	t->slots = sh->slots;
	t->circuit = sh->circuit;
	t->pace = sh->pace;
	t->idle_s = sh->stream_idle_s > 0 ? sh->stream_idle_s : REF_STREAM_IDLE_S;

	rc = ref_taskmsg_read(t, msg, sh->st, err);
	if (rc != FA_OK) {
		ref_task_free(t);
		return rc;
	}
	*out = t;
	return FA_OK;
}

const char *ref_task_id(const struct ref_task *t)
{
	return t->id;
}

const char *ref_run_sent(const struct ref_run *run)
{
	return run->sent != NULL   ? run->sent
	       : run->any_response ? "yes"
	       : run->maybe_sent   ? "unknown"
	                           : "no";
}

int ref_task_attempts_used(const struct ref_task *t, const struct ref_run *run)
{
	/* A resumed operation carries the attempts of the processes before. */
	return t->op != NULL ? t->op->attempts : run->n;
}

/* ---- waiting --------------------------------------------------------- */

/* Sleep until monotonic @until_us unless cancelled; false on a cancel. */
static bool sleep_until(struct ref_task *t, int64_t until_us)
{
	struct timespec ts = { .tv_sec = (time_t)(until_us / 1000000),
		               .tv_nsec = (long)(until_us % 1000000) * 1000 };
	bool cancelled;

	pthread_mutex_lock(&t->mu);
	while (!atomic_load(&t->cancel) && fa_clock_mono_us() < until_us)
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
	cancelled = atomic_load(&t->cancel);
	pthread_mutex_unlock(&t->mu);
	return !cancelled;
}

/* What is left of the task's wait budget, µs (>= 0). */
static int64_t wait_left_us(const struct ref_task *t, const struct ref_run *run)
{
	/* DEFECT overbudget: max_wait_s is ignored: the task waits as long
	 * as the provider asks (max_attempts and the deadline still hold). */
	if (defect_is("overbudget"))
		return UNBOUNDED_US;

	return t->max_wait_us > run->waited_us ? t->max_wait_us - run->waited_us : 0;
}

/*
 * When may attempt @next start? @last is what the previous response
 * asked for (NULL before the first attempt, and when re-reading the
 * registry after a wait); @left_us the wait budget left. The retry-safety guide: a
 * Retry-After is a lower bound, not the moment to pounce; the scope's
 * next_allowed_at holds every task of the scope; full jitter spreads the
 * return; without a usable Retry-After, exponential backoff with full
 * jitter. The jitter is a choice the pause is not: when the pause fits in
 * the budget left, it is drawn within what is left.
 */
static struct plan plan_next(struct ref_task *t, int next, const struct ref_seen *last,
                             int64_t left_us)
{
	int64_t now = fa_clock_mono_us();
	struct plan p = { .due_us = now, .floor_us = now, .reason = REF_REASON_NONE };
	int64_t base = now, window = 0;
	struct ref_pause scope;

	/* DEFECT storm: retry at once, ignoring the Retry-After, the scope
	 * registry and backoff alike (the attempt budget still holds). */
	if (defect_is("storm")) {
		if (last != NULL)
			p.reason = REF_REASON_BACKOFF;
		return p;
	}
	/* DEFECT fixeddelay: every retry waits exactly one second, whatever
	 * the Retry-After, the scope's pause or jitter say (the LLM rate-limit guide's
	 * opening incident: workers that all wait one fixed second come back
	 * together, a wave that earns the next 429). */
	if (defect_is("fixeddelay")) {
		if (last != NULL) {
			p.due_us = p.floor_us = now + 1000000;
			p.reason = REF_REASON_BACKOFF;
		}
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
		int64_t room = now + left_us - base;

		if (room >= 0 && room < window)
			window = room;
		p.floor_us = base;
		p.due_us = base + ref_policy_jitter_us(window);
	} else if (last != NULL) {
		p.floor_us = now + REF_BACKOFF_FLOOR_US;
		p.due_us = now + ref_policy_backoff_us(t->cls, next - 1, left_us);
		p.reason = REF_REASON_BACKOFF;
	}
	return p;
}

/* Wait out plan @p before attempt @next, if the wait budget, the scope's
 * queue and the deadline allow it (else run->stop says which did not);
 * every µs spent is added to run->waited_us. */
static enum waited wait_for(struct ref_task *t, struct ref_run *run, const struct plan *p, int next)
{
	int64_t now = fa_clock_mono_us();
	int64_t wait = p->due_us > now ? p->due_us - now : 0;
	bool ok;

	/* The retry-safety guide: count waiting as well as attempts; a wait that cannot
	 * fit is not started: the task ends with an escalation instead. */
	if (wait > wait_left_us(t, run)) {
		run->stop = REF_STOP_WAIT;
		run->stop_wait = p->reason;
		run->stop_wait_us = p->floor_us > now ? p->floor_us - now : 0;
		FA_LOG(FA_LOG_INFO, "client",
		       "task=%s event=stop why=max_wait wait_ms=%lld waited_ms=%lld", t->id,
		       (long long)(wait / 1000), (long long)(run->waited_us / 1000));
		return WAIT_OVER_BUDGET;
	}
	if (t->deadline_us != 0 &&
	    now + wait + ATTEMPT_MIN_US + REPORT_MARGIN_US > t->deadline_us) {
		run->stop = REF_STOP_DEADLINE;
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=deadline wait_ms=%lld", t->id,
		       (long long)(wait / 1000));
		return WAIT_OVER_BUDGET;
	}
	if (!ref_slots_delay_enter(t->slots, t->scope)) {
		run->stop = REF_STOP_QUEUE;
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=max_delayed_requests", t->id);
		return WAIT_OVER_BUDGET;
	}
	ref_emit_retry_scheduled(t->id, next, (wait + 999) / 1000, p->reason);
	ok = sleep_until(t, p->due_us);
	ref_slots_delay_leave(t->slots, t->scope);
	run->waited_us += fa_clock_mono_us() - now;
	return ok ? WAIT_DONE : WAIT_CANCELLED;
}

/* Take one of the scope's in-flight slots, waiting no longer than the
 * deadline allows and, once the task has made an attempt, than its wait
 * budget: a retry's wait for a slot is waiting like any other, while the
 * first attempt's is the scope's queue, not a retry. */
static enum ref_sent take_slot(struct ref_task *t, struct ref_run *run)
{
	bool retry = ref_task_attempts_used(t, run) > 0;
	int64_t now = fa_clock_mono_us(), left = wait_left_us(t, run), limit = 0;
	bool by_deadline = false;
	enum ref_slot_rc rc;

	if (retry && left < UNBOUNDED_US)
		limit = now + left;
	if (t->deadline_us != 0) {
		int64_t d = t->deadline_us - ATTEMPT_MIN_US - REPORT_MARGIN_US;

		if (limit == 0 || d < limit) {
			limit = d;
			by_deadline = true;
		}
	}
	if (limit != 0 && limit < now)
		limit = now;
	rc = ref_slots_take(t->slots, t->scope, &t->cancel, limit);
	if (retry)
		run->waited_us += fa_clock_mono_us() - now;
	switch (rc) {
	case REF_SLOT_TAKEN: return REF_SENT;
	case REF_SLOT_CANCELLED: return REF_CANCELLED;
	case REF_SLOT_TIMEOUT: break;
	}
	run->stop = by_deadline ? REF_STOP_DEADLINE : REF_STOP_WAIT;
	run->stop_wait = REF_REASON_NONE;
	run->stop_wait_us = 0;
	FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=%s waiting_for=slot", t->id,
	       by_deadline ? "deadline" : "max_wait");
	return REF_OUT_OF_BUDGET;
}

/* Wait until the task's key has room for its next attempt under its
 * pacing (pace.h): 1 request and @cost tokens (the task's tokens; 0 for a
 * status read). The LLM rate-limit guide: take the limiter's permission before the in-flight
 * slot, so no slot is held while waiting for it. Not a retry wait: it
 * spends nothing of max_wait_s, but stops at the deadline. */
static enum ref_sent pace_wait(struct ref_task *t, struct ref_run *run, int64_t cost)
{
	int64_t limit = 0, waited = 0;
	enum ref_pace_rc rc;

	if (!t->pacing.given)
		return REF_SENT;
	if (t->deadline_us != 0) {
		limit = t->deadline_us - ATTEMPT_MIN_US - REPORT_MARGIN_US;
		if (limit < 1)
			limit = 1;
	}
	rc = ref_pace_wait(t->pace, t->pace_key, &t->pacing, cost, &t->cancel, limit, &waited);
	if (waited >= 1000)
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=pace_wait key=%s waited_ms=%lld",
		       t->id, t->pace_key, (long long)(waited / 1000));
	switch (rc) {
	case REF_PACE_READY: return REF_SENT;
	case REF_PACE_CANCELLED: return REF_CANCELLED;
	case REF_PACE_TIMEOUT:
		run->stop = REF_STOP_DEADLINE;
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=deadline waiting_for=pace",
		       t->id);
		break;
	case REF_PACE_TOO_BIG:
		run->stop = REF_STOP_PACE;
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=over_token_limit tokens=%lld",
		       t->id, (long long)cost);
		break;
	}
	return REF_OUT_OF_BUDGET;
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

/* Prepare attempt @n (@w), announce it unless @quiet, send it; false
 * when it could not be made (nothing went out and nothing was announced;
 * run->stop says why). A @quiet attempt cannot be cancelled. */
static bool attempt(struct ref_task *t, struct ref_run *run, int n, const struct ref_wire *w,
                    bool quiet)
{
	struct fa_err err = { "" };
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
		.cancel = quiet ? NULL : &t->cancel,
		.stream = t->stream && !w->status_read,
		.idle_s = t->idle_s,
	};

	if (req.timeout_ms <= 0) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=deadline", t->id);
		run->stop = REF_STOP_DEADLINE;
		return false;
	}
	if (req.secret == NULL)
		FA_LOG(FA_LOG_WARN, "client", "task=%s event=no_key env=%s sending without a key",
		       t->id, env);
	if (ref_http_new(&req, &h, &err) != FA_OK) {
		FA_LOG(FA_LOG_ERROR, "client", "task=%s event=setup error=\"%s\"", t->id, err.msg);
		run->stop = REF_STOP_SETUP;
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
	if (!quiet)
		ref_emit_action_sent(t->id, n, w->kind, w->idempotency_key);
	ref_http_perform(h, &run->res);
	ref_http_free(h);
	return true;
}

/* Keep attempt run->n's outcome for an escalation record. */
static void log_attempt(struct ref_run *run)
{
	const struct ref_http_res *res = &run->res;
	struct ref_attempt_log *a;

	if (run->nlog == run->caplog) {
		run->caplog = run->caplog ? 2 * run->caplog : 4;
		run->log = fa_xrealloc(run->log, run->caplog * sizeof(*run->log));
	}
	a = &run->log[run->nlog++];
	memset(a, 0, sizeof(*a));
	a->attempt = run->n;
	a->at_wall_us = res->sent_wall_us;
	a->status = res->status;
	a->retry_after = res->retry_after != NULL ? fa_xstrdup(res->retry_after) : NULL;
	if (res->n_ratelimit > 0) {
		a->ratelimit = fa_xcalloc(res->n_ratelimit, sizeof(*a->ratelimit));
		for (size_t i = 0; i < res->n_ratelimit; i++) {
			a->ratelimit[i].name = fa_xstrdup(res->ratelimit[i].name);
			a->ratelimit[i].value = fa_xstrdup(res->ratelimit[i].value);
		}
		a->n_ratelimit = res->n_ratelimit;
	}
}

static void free_log(struct ref_run *run)
{
	for (size_t i = 0; i < run->nlog; i++) {
		for (size_t k = 0; k < run->log[i].n_ratelimit; k++) {
			free(run->log[i].ratelimit[k].name);
			free(run->log[i].ratelimit[k].value);
		}
		free(run->log[i].ratelimit);
		free(run->log[i].retry_after);
	}
	free(run->log);
	run->log = NULL;
	run->nlog = run->caplog = 0;
}

/* DEFECT wakeup: a cancel that came while the task waited for retry
 * @p is reported at once, but the retry stays armed: when it is due it
 * goes on the wire all the same, unannounced. */
static void wake_later(struct ref_task *t, struct ref_run *run, const struct ref_wire *w,
                       const struct plan *p)
{
	struct timespec ts = { .tv_sec = (time_t)(p->due_us / 1000000),
		               .tv_nsec = (long)(p->due_us % 1000000) * 1000 };

	if (!defect_is("wakeup"))
		return;
	ref_emit_result(t->id, "cancelled", run->n, run->waited_us / 1000, ref_run_sent(run),
	                run->status, NULL);
	run->reported = true;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	ref_http_res_release(&run->res);
	attempt(t, run, run->n + 1, w, true);
}

/* Did the stream of @res break after its first token reached the client
 * (the LLM rate-limit guide: from then on no silent retry)? */
static bool broke_after_token(const struct ref_http_res *res)
{
	return res->stream_end != REF_STREAM_NONE && res->stream_end != REF_STREAM_DONE &&
	       res->stream_chunks > 0;
}

bool ref_task_retryable(const struct ref_task *t, const struct ref_run *run)
{
	/* DEFECT whitespace: a 4xx is met by sending the request again
	 * (with its body's whitespace varied, ref_task_send()). */
	if (defect_is("whitespace") && run->res.status >= 400 && run->res.status <= 499)
		return true;

	/* A stream that broke before its first token (one that broke after
	 * it is never retried, run_plain()): an error frame is the platform's 503
	 * with its retryAfter; a cut, a stall or a broken connection is a
	 * transport error. */
	if (run->res.stream_end == REF_STREAM_ERROR_FRAME)
		return ref_policy_retryable(t->cls, 503);
	if (run->res.stream_end >= REF_STREAM_CUT)
		return t->cls->retry_transport;
	if (run->res.status == 0)
		return t->cls->retry_transport;
	return ref_policy_retryable(t->cls, run->res.status);
}

enum ref_sent ref_task_send(struct ref_task *t, struct ref_run *run, const struct ref_wire *w)
{
	int made = ref_task_attempts_used(t, run);
	struct ref_http_res *res = &run->res;
	bool own = strcmp(w->kind, "reconcile") != 0;
	int64_t cost = own ? t->tokens : 0;
	struct ref_wire varied = *w;
	char *body = NULL;
	const char *code = NULL;
	long status = 0;
	enum ref_sent s;

	run->stop = REF_STOP_NONE;
	/* The retry-safety guide: the same failure again and again is a plan to change,
	 * not a request to repeat; status reads are exempt (they are how a
	 * write's fate is learnt). */
	if (own && ref_circuit_open(t->circuit, t->method, t->endpoint, &status, &code)) {
		FA_LOG(FA_LOG_WARN, "client",
		       "task=%s event=circuit_open method=%s endpoint=%s status=%ld code=\"%s\" "
		       "refused before sending",
		       t->id, t->method, t->endpoint, status, code);
		run->stop = REF_STOP_CIRCUIT;
		run->status = status;
		return REF_REFUSED;
	}
	if (made >= t->max_attempts) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=stop why=max_attempts attempts=%d",
		       t->id, made);
		run->stop = REF_STOP_ATTEMPTS;
		return REF_OUT_OF_BUDGET;
	}
	for (;;) {
		struct plan p = plan_next(t, run->n + 1, run->last, wait_left_us(t, run));

		if (p.reason != REF_REASON_NONE) {
			switch (wait_for(t, run, &p, run->n + 1)) {
			case WAIT_CANCELLED: wake_later(t, run, w, &p); return REF_CANCELLED;
			case WAIT_OVER_BUDGET: return REF_OUT_OF_BUDGET;
			case WAIT_DONE: break;
			}
			/* Read the registry again: another task may have
			 * paused the scope while this one slept. */
			run->last = NULL;
			continue;
		}
		if (atomic_load(&t->cancel))
			return REF_CANCELLED;
		s = pace_wait(t, run, cost);
		if (s != REF_SENT)
			return s;
		s = take_slot(t, run);
		if (s != REF_SENT)
			return s;
		/* A pause set while this task waited for its slot: wait it
		 * out holding none. The pace is taken last, at the moment of
		 * sending: the provider counts arrivals, and a debit made
		 * before a wait for the slot would reach it later, bunched. */
		if (plan_next(t, run->n + 1, NULL, wait_left_us(t, run)).reason ==
		            REF_REASON_NONE &&
		    (!t->pacing.given || ref_pace_take(t->pace, t->pace_key, &t->pacing, cost)))
			break;
		ref_slots_give(t->slots, t->scope, REF_SLOT_NO_NEWS);
	}

	/* DEFECT whitespace: a request the provider refused goes again with
	 * its body's whitespace varied, as if that made it a new request. */
	if (defect_is("whitespace") && own && w->body != NULL && run->n > 0) {
		body = fa_xasprintf("%*s%s\n", run->n, "", w->body);
		varied.body = body;
		varied.body_len = strlen(body);
	}

	ref_http_res_release(res);
	if (!attempt(t, run, run->n + 1, &varied, false)) {
		ref_slots_give(t->slots, t->scope, REF_SLOT_NO_NEWS);
		free(body);
		return REF_OUT_OF_BUDGET;
	}
	free(body);
	run->n++;
	run->last = NULL;
	run->maybe_sent = run->maybe_sent || res->maybe_sent;
	if (res->cancelled) { /* nothing more for a cancelled task but its result */
		ref_slots_give(t->slots, t->scope, REF_SLOT_NO_NEWS);
		return REF_CANCELLED;
	}
	run->status = res->status;
	run->any_response = run->any_response || res->status != 0;
	/* DEFECT silentretry: a stream broken past its first token is taken
	 * for a hiccup: its error frame's pause is dropped, not published,
	 * and the task asks again at once (run_plain()). */
	if (defect_is("silentretry") && broke_after_token(&run->res)) {
		free(res->retry_after);
		res->retry_after = NULL;
	}

	run->seen.ra =
	        ref_policy_retry_after(res->retry_after, res->seen_wall_us, res->seen_mono_us,
	                               &run->seen.until_us, &run->seen.window_us);
	/* The retry-safety guide: publish the pause to the whole scope first, before the
	 * slot is given back or anything is reported, so no other task can
	 * take the next slot in between. */
	if (run->seen.ra) {
		ref_registry_raise(t->reg, t->reg_scope, run->seen.until_us, run->seen.window_us);
		run->asked_us = run->seen.until_us - res->seen_mono_us;
	}
	if (own && ref_circuit_answer(t->circuit, t->method, t->endpoint, res->status, res->body,
	                              res->body_len))
		FA_LOG(FA_LOG_WARN, "client",
		       "task=%s event=circuit_opened method=%s endpoint=%s status=%ld", t->id,
		       t->method, t->endpoint, res->status);
	ref_slots_give(t->slots, t->scope,
	               run->seen.ra       ? REF_SLOT_PAUSED
	               : res->status != 0 ? REF_SLOT_ANSWERED
	                                  : REF_SLOT_NO_NEWS);
	log_attempt(run);
	/* A stream that broke after its status line has both a status and
	 * the break's text. */
	ref_emit_action_result(t->id, run->n, w->kind, res->status, res->retry_after,
	                       res->status == 0 || res->error[0] != '\0' ? res->error : NULL);
	return REF_SENT;
}

/* ---- the task's thread ------------------------------------------------ */

/* GET, HEAD and OPTIONS change nothing (RFC 9110 §9.2.1). */
static bool safe_method(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	       strcmp(method, "OPTIONS") == 0;
}

/* A request that is not a guarded write: retried as its class says;
 * when the budget ends it before an answer that settles it, escalated. */
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

		switch (s) {
		case REF_CANCELLED: run->outcome = "cancelled"; return;
		case REF_REFUSED: return; /* failed, with the circuit's status */
		case REF_OUT_OF_BUDGET:
			if (run->stop != REF_STOP_SETUP)
				ref_escalate_stop(t, run, &w);
			return;
		case REF_SENT: break;
		}
		if (broke_after_token(&run->res)) {
			/* DEFECT silentretry: the broken stream is asked for
			 * again at once, and nobody hears of the break. */
			if (defect_is("silentretry")) {
				run->last = NULL;
				continue;
			}
			/* The LLM rate-limit guide: the user has seen part of the answer; say
			 * it was interrupted and stop ("The response was
			 * interrupted. Retry?" is theirs to answer). */
			ref_emit_stream_interrupted(t->id, run->n, run->res.stream_chunks,
			                            ref_stream_end_str(run->res.stream_end),
			                            run->res.stream_code);
			FA_LOG(FA_LOG_INFO, "client",
			       "task=%s event=stream_interrupted chunks=%d reason=%s", t->id,
			       run->res.stream_chunks, ref_stream_end_str(run->res.stream_end));
			return;
		}
		if (run->res.status >= 200 && run->res.status <= 299 &&
		    (run->res.stream_end == REF_STREAM_NONE ||
		     run->res.stream_end == REF_STREAM_DONE)) {
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
	struct ref_run run = { .outcome = "failed", .asked_us = -1 };

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
	if (!run.reported)
		ref_emit_result(t->id, run.outcome, run.n, run.waited_us / 1000, ref_run_sent(&run),
		                run.status, run.provider_id);
	free_log(&run);
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
	/* A task waiting for an in-flight slot, or for its key's pace,
	 * sleeps on that one's own condition variable. */
	ref_slots_wake(t->slots);
	if (t->pace != NULL)
		ref_pace_wake(t->pace);
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
	free(t->goal);
	free(t->scope);
	free(t->reg_scope);
	free(t->endpoint);
	free(t->pace_key);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
