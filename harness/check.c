/* check.c -- the conformance checks, computed from the provider's journal. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "budget.h"
#include "cancel.h"
#include "circuit.h"
#include "concurrency.h"
#include "escalation.h"
#include "evidence.h"
#include "interruption.h"
#include "pacing.h"
#include "tally.h"
#include "wave.h"
#include "write.h"

/* docs/checks.md explains each number. */
#define DEFAULT_TOLERANCE_MS 50  /* clock granularity and scheduling slack */
#define MAX_TOLERANCE_MS 600000  /* a larger expect value is ignored */
#define LOOP_WINDOW_US 100000    /* attempts.bounded: window after a bad Retry-After */
#define LOOP_MAX_ATTEMPTS 2      /* attempts allowed inside that window */

/* Definition order is report order; docs/checks.md lists the same rows. */
static const struct hx_check_def defs[] = {
	{ "attempts.bounded", 1, true,
	  "seed 000: retry budgets count every attempt; a past Retry-After date "
	  "gets a small minimum delay, not a tight loop",
	  "no task exceeds its attempt budget or loops after a past or invalid "
	  "Retry-After" },
	{ "wait.retry_after", 1, true,
	  "seed 000: 429 is a scheduler signal; Retry-After wins over a shorter "
	  "local delay",
	  "a task told to wait by Retry-After does not retry before that instant" },
	{ "classify.no_retry_4xx", 1, true,
	  "seed 000: 400, 401, 403, 404 and 422 need a fix, not a retry",
	  "no retry after 400, 401, 403, 404 or 422" },
	{ "wait.scope_pause", 2, true,
	  "seed 000: one local registry per scope; five-step test, step 2",
	  "no other task of the scope arrives inside an announced pause" },
	{ "wait.jitter", 2, true,
	  "seed 000: full jitter keeps workers that failed together from "
	  "returning as one wave; five-step test, step 3",
	  "the tasks a shared pause held do not come back as one wave" },
	{ "attempts.hidden", 2, true,
	  "seed 000: count every attempt really sent, library retries included; "
	  "measure at the fake API",
	  "the client's count of its attempts equals the provider's" },
	{ "write.key_stable", 3, true,
	  "seed 000: one idempotency key per logical operation, kept across "
	  "retries and restarts; five-step test, step 4",
	  "every create of one logical write carries the same idempotency key" },
	{ "write.no_duplicate", 3, true,
	  "seed 000: the most dangerous retry bug is a duplicated side effect",
	  "the provider committed at most one record per logical write" },
	{ "write.reconcile_first", 3, true,
	  "seed 000: after an ambiguous outcome, ask the provider (or replay "
	  "with the same key) before sending the write again",
	  "after an ambiguous outcome the next request is a read or a replay, "
	  "never a fresh create" },
	{ "ambiguity.preserved", 3, true,
	  "seed 000: an outcome nobody can know is reported as unknown or "
	  "escalated, never as a failure or a success without evidence",
	  "an ambiguous write is reported unknown, escalated, or succeeded with "
	  "the provider's own record id" },
	{ "wait.concurrency", 2, false,
	  "seed 000: shared_scope max_concurrent_requests; a scheduler limits "
	  "parallelism, not only the rate",
	  "in-flight attempts per scope stay within the scenario's cap" },
	{ "wait.pacing", 2, false,
	  "seed 001: every call reserves one request and its estimated tokens "
	  "(prompt plus max_tokens) from per-minute limits; a token bucket each",
	  "the client's pace per key stays within the RPM and TPM the scenario "
	  "publishes" },
	{ "budget.escalates", 4, true,
	  "seed 000: a budget counts attempts and waiting, and ends in an "
	  "explicit outcome with context; five-step test, step 5",
	  "a task the provider keeps refusing stops inside its budget and hands "
	  "over an escalation record" },
	{ "escalation.sanitised", 4, true,
	  "seed 000: no secret and no raw request body in what an operator is "
	  "shown; five-step test, step 5",
	  "no key or body canary in the client's output, escalation records or "
	  "state (key only)" },
	{ "cancel.quiet", 4, true,
	  "seed 000: a queue needs cancel; pending retries are deleted before "
	  "they wake; five-step test, step 5",
	  "a cancelled task sends nothing more and reports cancelled" },
	{ "classify.circuit", 4, false,
	  "seed 000: a circuit breaker for repeated identical failures; varied "
	  "whitespace or field order is not a new request",
	  "an identical 4xx failure is not resent past the scenario's count" },
	{ "stream.no_silent_retry", 4, false,
	  "seed 001: after the first streamed token a silent retry is no longer "
	  "possible; the interruption is shown",
	  "a stream that broke after its first token is not retried before the "
	  "client reports stream_interrupted" },
};

#define N_DEFS (sizeof(defs) / sizeof(defs[0]))

/* The journal as the checks see it. */
struct ctx {
	const struct hx_check_input *in;
	const struct fa_attempt **att; /* attributed attempts by arrival, then seq */
	size_t n;
	size_t n_unattributed;         /* attempts naming no task of the scenario */
	const struct fa_attempt **un;  /* those attempts */
};

size_t hx_check_count(void)
{
	return N_DEFS;
}

const struct hx_check_def *hx_check_def_at(size_t i)
{
	return i < N_DEFS ? &defs[i] : NULL;
}

const struct hx_check_def *hx_check_find(const char *id)
{
	size_t i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < N_DEFS; i++)
		if (strcmp(defs[i].id, id) == 0)
			return &defs[i];
	return NULL;
}

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* The client got this answer: a status went out and was written whole. */
static bool received(const struct fa_attempt *a)
{
	return a->status != 0 && a->t_response_us >= 0 &&
	       a->delivered == FA_DELIVERED_COMPLETE;
}

/* The answer named an instant after itself: a pause to honour. */
static bool announces_pause(const struct fa_attempt *a)
{
	return received(a) && a->pause_until_us > a->t_response_us;
}

/* A Retry-After that names no future instant: a past date, zero or junk. */
static bool bad_retry_after(const struct fa_attempt *a)
{
	return received(a) && a->retry_after != NULL &&
	       a->pause_until_us <= a->t_response_us;
}

static bool non_retryable(int status)
{
	return status == 400 || status == 401 || status == 403 ||
	       status == 404 || status == 422;
}

static const cJSON *expect_of(const struct hx_check_input *in, const char *id)
{
	if (in->sc == NULL || in->sc->harness.expect == NULL)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(in->sc->harness.expect, id);
}

static int tolerance_ms(const struct hx_check_input *in, const char *id)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(expect_of(in, id),
							  "tolerance_ms");

	if (!cJSON_IsNumber(t) || t->valuedouble < 0 ||
	    t->valuedouble > MAX_TOLERANCE_MS)
		return DEFAULT_TOLERANCE_MS;
	return (int)t->valuedouble;
}

/* --strict makes every check required; else the scenario's "required",
 * else the check's default. */
static bool is_required(const struct hx_check_input *in,
			const struct hx_check_def *def)
{
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(
		expect_of(in, def->id), "required");

	if (in->strict)
		return true;
	return cJSON_IsBool(req) ? cJSON_IsTrue(req) : def->required;
}

/* The first attempt of @task that arrived after @t_us, or NULL. */
static const struct fa_attempt *next_of(const struct ctx *c, const char *task,
					int64_t t_us)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->att[i]->t_arrival_us > t_us && same(c->att[i]->task, task))
			return c->att[i];
	return NULL;
}

static void na_empty(const struct ctx *c, struct hx_check_result *r)
{
	r->verdict = HX_NA;
	r->detail = fa_xasprintf("the journal has no attributed attempts "
				 "(%zu unattributed)", c->n_unattributed);
}

/* attempts.bounded: budgets, and no tight loop after a Retry-After that
 * names no future instant (seed 000: apply a small minimum delay). */
static void check_bounded(const struct ctx *c, struct hx_check_result *r)
{
	const struct fa_harness_spec *h = c->in->sc ? &c->in->sc->harness : NULL;
	struct hx_evidence bad = { 0 }, good = { 0 };
	const struct fa_task_spec *over_t = NULL, *close_t = NULL;
	const struct fa_attempt *loop_r = NULL;
	size_t over = 0, budgeted = 0, n_bad_ra = 0, loops = 0;
	size_t over_n = 0, close_n = 0, loop_n = 0, most_in_window = 0;
	char *budget_part = NULL, *loop_part = NULL, *hang_part = NULL, *un_part = NULL;
	const struct hx_task_run *hung_t = NULL;
	size_t hung = 0;
	size_t i, j;

	/* Every attempt counts (seed 000): one the harness cannot put on a
	 * task escapes every budget, so it fails the check. */
	for (i = 0; i < c->n_unattributed; i++)
		hx_evidence_add(&bad, c->un[i]->seq);
	/* A budget bounds waiting as well as attempts (seed 000: count both):
	 * a client killed by its timeout neither finished nor gave up. */
	for (i = 0; i < c->in->n_tasks; i++) {
		if (!c->in->tasks[i].timed_out)
			continue;
		if (hung_t == NULL)
			hung_t = &c->in->tasks[i];
		hung++;
		for (j = 0; j < c->n; j++)
			if (same(c->att[j]->task, c->in->tasks[i].spec->id))
				hx_evidence_add(&bad, c->att[j]->seq);
	}
	for (i = 0; h != NULL && i < h->n_tasks; i++) {
		const struct fa_task_spec *t = &h->tasks[i];
		size_t n = 0;

		if (t->budget.max_attempts <= 0)
			continue;
		for (j = 0; j < c->n; j++) {
			if (!same(c->att[j]->task, t->id))
				continue;
			n++;
			hx_evidence_add(n > (size_t)t->budget.max_attempts ? &bad : &good,
				 c->att[j]->seq);
		}
		if (n == 0)
			continue;
		budgeted++;
		if (n > (size_t)t->budget.max_attempts) {
			if (over_t == NULL || n - t->budget.max_attempts >
					      over_n - over_t->budget.max_attempts) {
				over_t = t;
				over_n = n;
			}
			over++;
		} else if (close_t == NULL ||
			   t->budget.max_attempts - n <
				   close_t->budget.max_attempts - close_n) {
			close_t = t;
			close_n = n;
		}
	}
	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *ra = c->att[i];
		size_t k = 0;

		if (!bad_retry_after(ra))
			continue;
		n_bad_ra++;
		for (j = 0; j < c->n; j++) {
			const struct fa_attempt *a = c->att[j];

			if (!same(a->task, ra->task) ||
			    a->t_arrival_us <= ra->t_response_us ||
			    a->t_arrival_us > ra->t_response_us + LOOP_WINDOW_US)
				continue;
			k++;
			hx_evidence_add(k > LOOP_MAX_ATTEMPTS ? &bad : &good, a->seq);
		}
		if (k > LOOP_MAX_ATTEMPTS) {
			hx_evidence_add(&bad, ra->seq);
			if (loop_r == NULL) {
				loop_r = ra;
				loop_n = k;
			}
			loops++;
		} else {
			hx_evidence_add(&good, ra->seq);
			if (k > most_in_window)
				most_in_window = k;
		}
	}

	/* stdio mode kills no client at a task's deadline: the task is
	 * only given up on */
	if (hung > 0)
		hang_part = fa_xasprintf(
			"task %s hung: %s%s", hung_t->spec->id,
			c->in->mode == HX_MODE_STDIO
				? "the client did not report a result before its deadline"
				: "its client was killed by the timeout without finishing "
				  "or giving up",
			hung > 1 ? " (and other tasks hung)" : "");
	if (c->n_unattributed > 0)
		un_part = fa_xasprintf(
			"%zu attempt%s named no task of the scenario (no fa_task "
			"parameter or X-Fakeapi-Task header naming one, e.g. seq %llu "
			"%s %s): no budget can account for %s", c->n_unattributed,
			c->n_unattributed == 1 ? "" : "s",
			(unsigned long long)c->un[0]->seq, c->un[0]->method,
			c->un[0]->path, c->n_unattributed == 1 ? "it" : "them");
	if (c->n == 0 && hung == 0 && c->n_unattributed == 0) {
		na_empty(c, r);
	} else if (over > 0 || loops > 0 || hung > 0 || c->n_unattributed > 0) {
		r->verdict = HX_FAIL;
		if (over > 0)
			budget_part = fa_xasprintf(
				"task %s made %zu attempts, budget max_attempts %d"
				"%s", over_t->id, over_n, over_t->budget.max_attempts,
				over > 1 ? " (and other tasks over budget)" : "");
		if (loops > 0)
			loop_part = fa_xasprintf(
				"task %s sent %zu attempts within %d ms after the "
				"Retry-After \"%s\" (no future instant) at seq %llu, "
				"at most %d allowed%s", loop_r->task, loop_n,
				LOOP_WINDOW_US / 1000, loop_r->retry_after,
				(unsigned long long)loop_r->seq, LOOP_MAX_ATTEMPTS,
				loops > 1 ? " (and more such loops)" : "");
		hx_evidence_give(&bad, r);
	} else if (budgeted == 0 && n_bad_ra == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task with an attempt budget made an "
				       "attempt, and no Retry-After named a past "
				       "or invalid instant");
	} else {
		r->verdict = HX_PASS;
		if (budgeted > 0)
			budget_part = fa_xasprintf(
				"%zu budgeted task%s within budget (closest: %s "
				"made %zu of max_attempts %d)", budgeted,
				budgeted > 1 ? "s" : "", close_t->id, close_n,
				close_t->budget.max_attempts);
		if (n_bad_ra > 0)
			loop_part = fa_xasprintf(
				"after %zu Retry-After naming no future instant, at "
				"most %zu attempt%s within %d ms", n_bad_ra,
				most_in_window, most_in_window == 1 ? "" : "s",
				LOOP_WINDOW_US / 1000);
		hx_evidence_give(&good, r);
	}
	if (r->detail == NULL)
		r->detail = fa_xasprintf("%s%s%s%s%s%s%s",
					 un_part ? un_part : "",
					 un_part && (hang_part || budget_part || loop_part) ? "; " : "",
					 hang_part ? hang_part : "",
					 hang_part && (budget_part || loop_part) ? "; " : "",
					 budget_part ? budget_part : "",
					 budget_part && loop_part ? "; " : "",
					 loop_part ? loop_part : "");
	free(un_part);
	free(hang_part);
	free(budget_part);
	free(loop_part);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}

/* What the pause checks saw after the pauses they watched. */
struct pause_watch {
	struct hx_evidence bad, good;
	const struct fa_attempt *shown_p, *shown_b; /* the first pause broken, its first intruder */
	const struct fa_attempt *close_p, *close_b; /* the pause kept most narrowly, and the
	                                               attempt that came closest to it */
};

#define NO_PAUSE_ANNOUNCED "no response announced a future pause (no Retry-After naming " \
			   "a later instant)"

/* @b arrived inside the pause @p announced. */
static void pause_broken(struct pause_watch *w, const struct fa_attempt *p,
			 const struct fa_attempt *b)
{
	hx_evidence_add(&w->bad, p->seq);
	hx_evidence_add(&w->bad, b->seq);
	/* name the first pause broken and its first intruder: a later pause
	 * is often the provider answering that intruder, which says less
	 * about what went wrong */
	if (w->shown_b == NULL) {
		w->shown_p = p;
		w->shown_b = b;
	}
}

/* @b, the first attempt after the pause @p announced, waited for it. */
static void pause_kept(struct pause_watch *w, const struct fa_attempt *p,
		       const struct fa_attempt *b)
{
	hx_evidence_add(&w->good, p->seq);
	hx_evidence_add(&w->good, b->seq);
	if (w->close_b == NULL ||
	    b->t_arrival_us - p->pause_until_us <
		    w->close_b->t_arrival_us - w->close_p->pause_until_us) {
		w->close_p = p;
		w->close_b = b;
	}
}

/* What announced @p's pause: its retry-after-ms header (the exact pause,
 * read first by the SDKs that know it), else its Retry-After header, or,
 * with neither (a stream's error frame, seed 002), the frame's retryAfter. */
static char *pause_source(const struct fa_attempt *p)
{
	if (p->retry_after_ms != NULL && p->retry_after != NULL)
		return fa_xasprintf("the retry-after-ms \"%s\" (Retry-After \"%s\")",
				    p->retry_after_ms, p->retry_after);
	if (p->retry_after_ms != NULL)
		return fa_xasprintf("the retry-after-ms \"%s\"", p->retry_after_ms);
	if (p->retry_after != NULL)
		return fa_xasprintf("the Retry-After \"%s\"", p->retry_after);
	return fa_xstrdup("the error frame's retryAfter");
}

/* wait.retry_after: the told task's next attempt waits for the pause. */
static void check_retry_after(const struct ctx *c, struct hx_check_result *r)
{
	int tol_ms = tolerance_ms(c->in, r->id);
	int64_t tol_us = (int64_t)tol_ms * 1000;
	struct pause_watch w = { 0 };
	const struct fa_attempt *first_p = NULL;
	size_t announced = 0, followed = 0, early = 0, i;
	char *src;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *p = c->att[i], *b;

		if (!announces_pause(p))
			continue;
		announced++;
		if (first_p == NULL)
			first_p = p;
		b = next_of(c, p->task, p->t_response_us);
		if (b == NULL)
			continue;
		followed++;
		if (b->t_arrival_us < p->pause_until_us - tol_us) {
			early++;
			pause_broken(&w, p, b);
		} else {
			pause_kept(&w, p, b);
		}
	}

	if (c->n == 0) {
		na_empty(c, r);
	} else if (announced == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup(NO_PAUSE_ANNOUNCED);
	} else if (followed == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf(
			"%zu response%s announced a pause (first: seq %llu to task "
			"%s, until +%.1f ms) but the task made no later attempt",
			announced, announced > 1 ? "s" : "",
			(unsigned long long)first_p->seq, first_p->task,
			ms(first_p->pause_until_us));
	} else if (early > 0) {
		src = pause_source(w.shown_p);
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
			"%stask %s retried %.1f ms early: seq %llu arrived at "
			"+%.1f ms, %s of seq %llu named +%.1f ms (tolerance %d ms)",
			early > 1 ? "several early retries, first: " : "",
			w.shown_b->task, ms(w.shown_p->pause_until_us - w.shown_b->t_arrival_us),
			(unsigned long long)w.shown_b->seq, ms(w.shown_b->t_arrival_us), src,
			(unsigned long long)w.shown_p->seq, ms(w.shown_p->pause_until_us),
			tol_ms);
		free(src);
		hx_evidence_give(&w.bad, r);
	} else {
		src = pause_source(w.close_p);
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
			"%stask %s waited: seq %llu arrived at +%.1f ms, %s of seq "
			"%llu named +%.1f ms (tolerance %d ms)",
			followed > 1 ? "every retry waited, closest: " : "",
			w.close_b->task, (unsigned long long)w.close_b->seq,
			ms(w.close_b->t_arrival_us), src,
			(unsigned long long)w.close_p->seq, ms(w.close_p->pause_until_us),
			tol_ms);
		free(src);
		hx_evidence_give(&w.good, r);
	}
	hx_evidence_release(&w.bad);
	hx_evidence_release(&w.good);
}

/* The same request again: same method and path (query aside). A task
 * that asks something else after a 404 (a write's status read by key,
 * then by client reference) is not retrying. */
static bool same_request(const struct fa_attempt *a, const struct fa_attempt *b)
{
	return same(a->method, b->method) && same(a->path, b->path);
}

/* classify.no_retry_4xx: a request the provider called wrong is not resent. */
static void check_no_retry_4xx(const struct ctx *c, struct hx_check_result *r)
{
	struct hx_evidence bad = { 0 }, good = { 0 };
	const struct fa_attempt *first_p = NULL, *first_b = NULL;
	size_t got = 0, retried = 0, first_n = 0, i, j;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *p = c->att[i];
		const struct fa_attempt *b = NULL;
		size_t n = 0;

		if (!received(p) || !non_retryable(p->status))
			continue;
		got++;
		for (j = 0; j < c->n; j++) {
			if (c->att[j]->t_arrival_us <= p->t_response_us ||
			    !same(c->att[j]->task, p->task) || !same_request(c->att[j], p))
				continue;
			if (b == NULL)
				b = c->att[j];
			n++;
			hx_evidence_add(&bad, c->att[j]->seq);
		}
		if (b == NULL) {
			hx_evidence_add(&good, p->seq);
			continue;
		}
		hx_evidence_add(&bad, p->seq);
		if (first_p == NULL) {
			first_p = p;
			first_b = b;
			first_n = n;
		}
		retried++;
	}

	if (c->n == 0) {
		na_empty(c, r);
	} else if (got == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task received 400, 401, 403, 404 or 422");
	} else if (retried > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
			"task %s got %d at seq %llu and sent %zu more attempt%s "
			"(first: seq %llu at +%.1f ms)%s", first_p->task,
			first_p->status, (unsigned long long)first_p->seq, first_n,
			first_n > 1 ? "s" : "", (unsigned long long)first_b->seq,
			ms(first_b->t_arrival_us),
			retried > 1 ? "; other such responses were retried too" : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
			"%zu non-retryable 4xx response%s, none retried", got,
			got > 1 ? "s" : "");
		hx_evidence_give(&good, r);
	}
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}

/*
 * @b arrived within @tol_us after an answer went out at @t_us, so it was on
 * its way before any client could have read that answer: a retry the
 * client had already sent, or the first attempt of a task the harness had
 * handed to the client before that instant (two tasks started together).
 * A task handed over after the answer should have read its scope first.
 */
static bool on_its_way(const struct ctx *c, const struct fa_attempt *b,
		       int64_t t_us, int64_t tol_us)
{
	size_t i;

	if (b->t_arrival_us > t_us + tol_us)
		return false;
	for (i = 0; i < c->n && c->att[i] != b; i++)
		if (same(c->att[i]->task, b->task))
			return true; /* a retry already on its way */
	for (i = 0; i < c->in->n_tasks; i++) {
		const struct hx_task_run *t = &c->in->tasks[i];

		if (t->spec != NULL && same(t->spec->id, b->task))
			return t->t_sent_us >= 0 && t->t_sent_us < t_us;
	}
	return false;
}

/* wait.scope_pause: a pause told to one task holds for its whole scope. */
static void check_scope_pause(const struct ctx *c, struct hx_check_result *r)
{
	int tol_ms = tolerance_ms(c->in, r->id);
	int64_t tol_us = (int64_t)tol_ms * 1000;
	struct pause_watch w = { 0 };
	const struct fa_attempt *first_p = NULL;
	size_t announced = 0, watched = 0, inside = 0, i, j;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *p = c->att[i];
		const struct fa_attempt *earliest = NULL;

		if (!announces_pause(p) || p->scope == NULL)
			continue;
		announced++;
		if (first_p == NULL)
			first_p = p;
		for (j = 0; j < c->n; j++) {
			const struct fa_attempt *b = c->att[j];

			if (same(b->task, p->task) || !same(b->scope, p->scope) ||
			    b->t_arrival_us <= p->t_response_us ||
			    on_its_way(c, b, p->t_response_us, tol_us))
				continue;
			if (earliest == NULL)
				earliest = b;
			if (b->t_arrival_us >= p->pause_until_us - tol_us)
				continue;
			inside++;
			pause_broken(&w, p, b);
		}
		if (earliest == NULL)
			continue;
		watched++;
		pause_kept(&w, p, earliest);
	}

	if (c->n == 0) {
		na_empty(c, r);
	} else if (announced == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup(NO_PAUSE_ANNOUNCED);
	} else if (watched == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf(
			"%zu pause%s announced (first: seq %llu to task %s, scope "
			"%s, until +%.1f ms) but no other task of the scope made "
			"an attempt after it", announced, announced > 1 ? "s" : "",
			(unsigned long long)first_p->seq, first_p->task,
			first_p->scope, ms(first_p->pause_until_us));
	} else if (inside > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
			"%stask %s arrived %.1f ms inside the pause of scope %s: "
			"seq %llu at +%.1f ms, the pause told to task %s at seq "
			"%llu lasts until +%.1f ms (tolerance %d ms)",
			inside > 1 ? "several attempts inside a scope pause, first: "
				   : "",
			w.shown_b->task, ms(w.shown_p->pause_until_us - w.shown_b->t_arrival_us),
			w.shown_p->scope, (unsigned long long)w.shown_b->seq,
			ms(w.shown_b->t_arrival_us), w.shown_p->task,
			(unsigned long long)w.shown_p->seq, ms(w.shown_p->pause_until_us),
			tol_ms);
		hx_evidence_give(&w.bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
			"other tasks of scope %s waited for the pause told to task "
			"%s at seq %llu (until +%.1f ms): the earliest, task %s seq "
			"%llu, arrived at +%.1f ms (tolerance %d ms)",
			w.close_p->scope, w.close_p->task, (unsigned long long)w.close_p->seq,
			ms(w.close_p->pause_until_us), w.close_b->task,
			(unsigned long long)w.close_b->seq, ms(w.close_b->t_arrival_us),
			tol_ms);
		hx_evidence_give(&w.good, r);
	}
	hx_evidence_release(&w.bad);
	hx_evidence_release(&w.good);
}

typedef void (*check_fn)(const struct ctx *c, struct hx_check_result *r);
typedef void (*judge_fn)(const struct hx_check_input *in, struct hx_check_result *r);

/* Same order as defs[]: a check judged here, or one its own module judges
 * (on a journal with an attributed attempt, n/a without one, unless
 * `always`: a canary leak needs no attempt to show). */
static const struct {
	check_fn here;
	judge_fn module;
	bool always;
} fns[N_DEFS] = {
	{ check_bounded, NULL, false },
	{ check_retry_after, NULL, false },
	{ check_no_retry_4xx, NULL, false },
	{ check_scope_pause, NULL, false },
	{ NULL, hx_wave_check, false },
	{ NULL, hx_tally_check, false },
	{ NULL, hx_write_key_stable, false },
	{ NULL, hx_write_no_duplicate, false },
	{ NULL, hx_write_reconcile_first, false },
	{ NULL, hx_write_ambiguity, false },
	{ NULL, hx_concurrency_check, false },
	{ NULL, hx_pacing_check, false },
	{ NULL, hx_budget_check, false },
	{ NULL, hx_escalation_sanitised_check, true },
	{ NULL, hx_cancel_check, false },
	{ NULL, hx_circuit_check, false },
	{ NULL, hx_interruption_check, false },
};

void hx_check_run_all(const struct hx_check_input *in,
		      struct hx_check_result **out, size_t *n)
{
	struct ctx c = { .in = in };
	struct hx_check_result *res;
	size_t i;

	c.att = fa_xcalloc(in->n_attempts ? in->n_attempts : 1, sizeof(*c.att));
	c.un = fa_xcalloc(in->n_attempts ? in->n_attempts : 1, sizeof(*c.un));
	for (i = 0; i < in->n_attempts; i++) {
		/* a task id the scenario does not have is no attribution:
		 * the checks must not count it as another task of the scope */
		if (in->attempts[i].task == NULL || in->sc == NULL ||
		    fa_scenario_task(in->sc, in->attempts[i].task) == NULL)
			c.un[c.n_unattributed++] = &in->attempts[i];
		else
			c.att[c.n++] = &in->attempts[i];
	}
	hx_evidence_sort_arrival(c.att, c.n);

	res = fa_xcalloc(N_DEFS, sizeof(*res));
	for (i = 0; i < N_DEFS; i++) {
		res[i].id = defs[i].id;
		res[i].level = defs[i].level;
		res[i].required = is_required(in, &defs[i]);
		res[i].verdict = HX_NA;
		if (fns[i].here != NULL)
			fns[i].here(&c, &res[i]);
		else if (c.n == 0 && !fns[i].always)
			na_empty(&c, &res[i]);
		else
			fns[i].module(in, &res[i]);
		if (res[i].detail == NULL)
			res[i].detail = fa_xstrdup("not evaluated");
	}
	free(c.att);
	free(c.un);
	*out = res;
	*n = N_DEFS;
}
