/* pause.c -- wait.retry_after and wait.scope_pause: an announced pause holds for the task told and
 * for its scope. */
#include "pause.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "evidence.h"
#include "timescale.h"

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* The answer named an instant after itself: a pause to honour. */
static bool announces_pause(const struct fa_attempt *a)
{
	return hx_check_received(a) && a->pause_until_us > a->t_response_us;
}

/* The first attempt of @task that arrived after @t_us, or NULL. */
static const struct fa_attempt *next_of(const struct hx_check_ctx *c, const char *task,
                                        int64_t t_us)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->att[i]->t_arrival_us > t_us && same(c->att[i]->task, task))
			return c->att[i];
	return NULL;
}

/* What the pause checks saw after the pauses they watched. */
struct pause_watch {
	struct hx_evidence bad, good;
	const struct fa_attempt *shown_p, *shown_b; /* the first pause broken, its first intruder */
	const struct fa_attempt *close_p, *close_b; /* the pause kept most narrowly, and the
	                                               attempt that came closest to it */
};

#define NO_PAUSE_ANNOUNCED                                                                         \
	"no response announced a future pause (no Retry-After naming "                             \
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
	if (w->close_b == NULL || b->t_arrival_us - p->pause_until_us <
	                                  w->close_b->t_arrival_us - w->close_p->pause_until_us) {
		w->close_p = p;
		w->close_b = b;
	}
}

/* What announced @p's pause, named by the journal's pause_from: the
 * header whose instant pause_until_us is (with the other one beside it),
 * or a stream's error frame. A journal without pause_from (written before
 * it) gets the old reading: retry-after-ms first (the SDKs that know it
 * read it first), else Retry-After, else the error frame. */
static char *pause_source(const struct fa_attempt *p)
{
	const char *from = p->pause_from;
	const char *ra = p->retry_after, *ms = p->retry_after_ms;

	if (from == NULL) {
		if (ms != NULL && ra != NULL)
			return fa_xasprintf("the retry-after-ms \"%s\" (Retry-After \"%s\")", ms,
			                    ra);
		if (ms != NULL)
			return fa_xasprintf("the retry-after-ms \"%s\"", ms);
		if (ra != NULL)
			return fa_xasprintf("the Retry-After \"%s\"", ra);
		return fa_xstrdup("the error frame's retryAfter");
	}
	if (strcmp(from, "retry-after-ms") == 0 && ms != NULL)
		return ra != NULL ? fa_xasprintf("the retry-after-ms \"%s\" (Retry-After \"%s\")",
		                                 ms, ra)
		                  : fa_xasprintf("the retry-after-ms \"%s\"", ms);
	if (strcmp(from, "retry-after") == 0 && ra != NULL)
		return ms != NULL ? fa_xasprintf(
		                            "the Retry-After \"%s\" (delta-seconds; retry-after-ms "
		                            "\"%s\")",
		                            ra, ms)
		                  : fa_xasprintf("the Retry-After \"%s\" (delta-seconds)", ra);
	if (strcmp(from, "retry-after-date") == 0 && ra != NULL)
		return ms != NULL
		               ? fa_xasprintf("the Retry-After \"%s\" (HTTP-date; retry-after-ms "
		                              "\"%s\")",
		                              ra, ms)
		               : fa_xasprintf("the Retry-After \"%s\" (HTTP-date)", ra);
	return fa_xstrdup("the error frame's retryAfter");
}

void hx_pause_retry_after_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	int tol_ms = (int)hx_check_param(c, "tolerance_ms")->i;
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

	if (announced == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup(NO_PAUSE_ANNOUNCED);
	} else if (followed == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf(
		        "%zu response%s announced a pause (first: seq %llu to task "
		        "%s, until +%.1f ms) but the task made no later attempt",
		        announced, announced > 1 ? "s" : "", (unsigned long long)first_p->seq,
		        first_p->task, ms(first_p->pause_until_us));
	} else if (early > 0) {
		src = pause_source(w.shown_p);
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
		        "%stask %s retried %.1f ms early: seq %llu arrived at "
		        "+%.1f ms, %s of seq %llu named +%.1f ms (tolerance %d ms)",
		        early > 1 ? "several early retries, first: " : "", w.shown_b->task,
		        ms(w.shown_p->pause_until_us - w.shown_b->t_arrival_us),
		        (unsigned long long)w.shown_b->seq, ms(w.shown_b->t_arrival_us), src,
		        (unsigned long long)w.shown_p->seq, ms(w.shown_p->pause_until_us), tol_ms);
		free(src);
		hx_evidence_give(&w.bad, r);
	} else {
		src = pause_source(w.close_p);
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
		        "%stask %s waited: seq %llu arrived at +%.1f ms, %s of seq "
		        "%llu named +%.1f ms (tolerance %d ms)",
		        followed > 1 ? "every retry waited, closest: " : "", w.close_b->task,
		        (unsigned long long)w.close_b->seq, ms(w.close_b->t_arrival_us), src,
		        (unsigned long long)w.close_p->seq, ms(w.close_p->pause_until_us), tol_ms);
		free(src);
		hx_evidence_give(&w.good, r);
	}
	hx_evidence_release(&w.bad);
	hx_evidence_release(&w.good);
}

/*
 * @b arrived within @tol_us after an answer went out at @t_us, so it was on
 * its way before any client could have read that answer: a retry the
 * client had already sent, or the first attempt of a task the harness had
 * handed to the client before that instant (two tasks started together).
 * A task handed over after the answer should have read its scope first.
 */
static bool on_its_way(const struct hx_check_ctx *c, const struct fa_attempt *b, int64_t t_us,
                       int64_t tol_us)
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

/* When the harness handed task @task to the client (µs): its record, or,
 * without one, the task's first arrival (the latest it can have been). -1
 * when neither is known. */
static int64_t handed_at(const struct hx_check_ctx *c, const char *task)
{
	size_t i;

	for (i = 0; i < c->in->n_tasks; i++) {
		const struct hx_task_run *t = &c->in->tasks[i];

		if (t->spec != NULL && same(t->spec->id, task) && t->t_sent_us >= 0)
			return t->t_sent_us;
	}
	for (i = 0; i < c->n; i++)
		if (same(c->att[i]->task, task))
			return c->att[i]->t_arrival_us;
	return -1;
}

/* @b is the how-many-th attempt of its task (1 = its first). */
static size_t attempt_no(const struct hx_check_ctx *c, const struct fa_attempt *b)
{
	size_t i, n = 1;

	for (i = 0; i < c->n && c->att[i] != b; i++)
		if (same(c->att[i]->task, b->task))
			n++;
	return n;
}

/* Task @task was handed over while the pause @p ran, early enough
 * (tolerance @tol_us before its end) that an attempt of it could break
 * it: a task the client could have sent at once. */
static bool handed_inside(const struct hx_check_ctx *c, const char *task,
                          const struct fa_attempt *p, int64_t tol_us)
{
	int64_t t = handed_at(c, task);

	return t >= p->t_response_us && t < p->pause_until_us - tol_us;
}

/* What @b was: "its first attempt; the task was handed over to the client
 * 500.0 ms after the pausing answer" or "its attempt 3, a retry". */
static char *which_attempt(const struct hx_check_ctx *c, const struct fa_attempt *b,
                           const struct fa_attempt *p)
{
	size_t n = attempt_no(c, b);
	int64_t t = handed_at(c, b->task);

	if (n > 1)
		return fa_xasprintf("its attempt %zu, a retry", n);
	if (t < 0)
		return fa_xstrdup("its first attempt");
	return fa_xasprintf("its first attempt; the task was handed over to the client "
	                    "%.1f ms %s the pausing answer",
	                    ms(t >= p->t_response_us ? t - p->t_response_us : p->t_response_us - t),
	                    t >= p->t_response_us ? "after" : "before");
}

/* The n/a line for the pause @p whose scope's other tasks all were handed
 * over before it or after it ended: when each was. */
static char *none_handed_inside(const struct hx_check_ctx *c, const struct fa_attempt *p)
{
	char *list = fa_xstrdup(""), *next, *tail;
	size_t i, j, shown = 0, more = 0;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *a = c->att[i];
		bool seen = false;

		if (same(a->task, p->task) || !same(a->scope, p->scope))
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = same(c->att[j]->task, a->task) && same(c->att[j]->scope, p->scope);
		if (seen)
			continue;
		if (shown == 6) {
			more++;
			continue;
		}
		next = fa_xasprintf("%s%s%s +%.1f ms", list, shown > 0 ? ", " : "", a->task,
		                    ms(handed_at(c, a->task)));
		free(list);
		list = next;
		shown++;
	}
	tail = more > 0 ? fa_xasprintf(", and %zu more", more) : fa_xstrdup("");
	next = fa_xasprintf(
	        "no other task of scope %s was handed over to the client while its pause "
	        "ran (the pause told to task %s at seq %llu: +%.1f ms to +%.1f ms; tasks "
	        "handed over at %s%s): nothing shows whether the client shares it",
	        p->scope, p->task, (unsigned long long)p->seq, ms(p->t_response_us),
	        ms(p->pause_until_us), list, tail);
	free(tail);
	free(list);
	return next;
}

void hx_pause_scope_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	int tol_ms = (int)hx_check_param(c, "tolerance_ms")->i;
	int64_t tol_us = (int64_t)tol_ms * 1000;
	struct pause_watch w = { 0 };
	const struct fa_attempt *first_p = NULL, *unjudged_p = NULL;
	size_t announced = 0, watched = 0, inside = 0, i, j;
	char *what;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *p = c->att[i];
		const struct fa_attempt *earliest = NULL;
		bool any_after = false;

		if (!announces_pause(p) || p->scope == NULL)
			continue;
		announced++;
		if (first_p == NULL)
			first_p = p;
		for (j = 0; j < c->n; j++) {
			const struct fa_attempt *b = c->att[j];

			if (same(b->task, p->task) || !same(b->scope, p->scope) ||
			    b->t_arrival_us <= p->t_response_us ||
			    on_its_way(c, b, p->t_response_us,
			               tol_us + hx_timescale_margin_us(fa_clock_scale(),
			                                               HX_TIMESCALE_LATE_US)))
				continue;
			any_after = true;
			if (b->t_arrival_us < p->pause_until_us - tol_us) {
				inside++;
				pause_broken(&w, p, b);
				continue;
			}
			/* a pass needs a task the client could have sent inside
			 * the pause: one handed over while it ran */
			if (earliest == NULL && handed_inside(c, b->task, p, tol_us))
				earliest = b;
		}
		if (earliest != NULL) {
			watched++;
			pause_kept(&w, p, earliest);
		} else if (any_after && unjudged_p == NULL) {
			unjudged_p = p;
		}
	}

	if (announced == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup(NO_PAUSE_ANNOUNCED);
	} else if (inside > 0) {
		what = which_attempt(c, w.shown_b, w.shown_p);
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
		        "%stask %s arrived %.1f ms inside the pause of scope %s: "
		        "seq %llu at +%.1f ms (%s), the pause told to task %s at seq "
		        "%llu at +%.1f ms lasts until +%.1f ms (tolerance %d ms)",
		        inside > 1 ? "several attempts inside a scope pause, first: " : "",
		        w.shown_b->task, ms(w.shown_p->pause_until_us - w.shown_b->t_arrival_us),
		        w.shown_p->scope, (unsigned long long)w.shown_b->seq,
		        ms(w.shown_b->t_arrival_us), what, w.shown_p->task,
		        (unsigned long long)w.shown_p->seq, ms(w.shown_p->t_response_us),
		        ms(w.shown_p->pause_until_us), tol_ms);
		free(what);
		hx_evidence_give(&w.bad, r);
	} else if (watched > 0) {
		what = which_attempt(c, w.close_b, w.close_p);
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
		        "other tasks of scope %s waited for the pause told to task "
		        "%s at seq %llu (+%.1f ms until +%.1f ms): the earliest handed "
		        "over while it ran, task %s seq %llu (%s), arrived at +%.1f ms "
		        "(tolerance %d ms)",
		        w.close_p->scope, w.close_p->task, (unsigned long long)w.close_p->seq,
		        ms(w.close_p->t_response_us), ms(w.close_p->pause_until_us),
		        w.close_b->task, (unsigned long long)w.close_b->seq, what,
		        ms(w.close_b->t_arrival_us), tol_ms);
		free(what);
		hx_evidence_give(&w.good, r);
	} else if (unjudged_p != NULL) {
		r->verdict = HX_NA;
		r->detail = none_handed_inside(c, unjudged_p);
	} else {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("%zu pause%s announced (first: seq %llu to task %s, scope "
		                         "%s, until +%.1f ms) but no other task of the scope made "
		                         "an attempt after it",
		                         announced, announced > 1 ? "s" : "",
		                         (unsigned long long)first_p->seq, first_p->task,
		                         first_p->scope, ms(first_p->pause_until_us));
	}
	hx_evidence_release(&w.bad);
	hx_evidence_release(&w.good);
}

typedef void (*check_fn)(const struct hx_check_ctx *c, struct hx_check_result *r);
typedef void (*judge_fn)(const struct hx_check_input *in, struct hx_check_result *r);
