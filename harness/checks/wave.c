/* wave.c -- wait.jitter: do retries after a shared pause come back as one wave? */
#include "wave.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "evidence.h"
#include "timescale.h"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A pause a route announced (during_pause answers only repeat one). */
static bool route_pause(const struct fa_attempt *a)
{
	return a->status != 0 && a->t_response_us >= 0 && a->delivered == FA_DELIVERED_COMPLETE &&
	       a->route != NULL && a->pause_until_us > a->t_response_us && a->scope != NULL;
}

/* When task @id started: the harness's record, else its first arrival. */
static int64_t started_at(const struct hx_check_input *in, const char *id)
{
	int64_t first = -1;

	for (size_t i = 0; i < in->n_tasks; i++)
		if (in->tasks[i].spec != NULL && same(in->tasks[i].spec->id, id) &&
		    in->tasks[i].t_sent_us >= 0)
			return in->tasks[i].t_sent_us;
	for (size_t i = 0; i < in->n_attempts; i++)
		if (same(in->attempts[i].task, id) &&
		    (first < 0 || in->attempts[i].t_arrival_us < first))
			first = in->attempts[i].t_arrival_us;
	return first;
}

/* A task's return after the pause ending at @until: its first attempt at
 * or after until - tol, or NULL. */
static const struct fa_attempt *return_of(const struct hx_check_input *in, const char *task,
                                          int64_t from_us)
{
	const struct fa_attempt *best = NULL;

	for (size_t i = 0; i < in->n_attempts; i++) {
		const struct fa_attempt *a = &in->attempts[i];

		if (same(a->task, task) && a->t_arrival_us >= from_us &&
		    (best == NULL || a->t_arrival_us < best->t_arrival_us))
			best = a;
	}
	return best;
}

/*
 * The instant task @id was free to go again for its return @b: the latest
 * of the scope's pause end @until and the instants the provider told the
 * task itself before @b (a during_pause answer's own Retry-After) that @b
 * respected (arrived at or after, minus @tol_us). An instant @b came back
 * before was not what released it: the task came back for the scope's
 * end, not its own, and counting from the instant it ignored would give
 * it a negative delay.
 */
static int64_t release_of(const struct hx_check_input *in, const char *id,
                          const struct fa_attempt *b, int64_t until, int64_t tol_us)
{
	int64_t release = until;

	for (size_t i = 0; i < in->n_attempts; i++) {
		const struct fa_attempt *a = &in->attempts[i];

		if (!same(a->task, id) || a->t_response_us < 0 ||
		    a->t_response_us >= b->t_arrival_us || a->pause_until_us <= a->t_response_us ||
		    a->pause_until_us <= release)
			continue;
		if (b->t_arrival_us >= a->pause_until_us - tol_us)
			release = a->pause_until_us;
	}
	return release;
}

/* One held task's return and how long after its release it came. */
struct ret {
	const struct fa_attempt *b;
	int64_t delay_us; /* >= 0 */
};

static int by_delay(const void *x, const void *y)
{
	const struct ret *a = x, *b = y;

	return a->delay_us < b->delay_us ? -1 : a->delay_us > b->delay_us;
}

/* How the returns of one pause were spread (delays sorted). */
struct judged {
	const struct fa_attempt *p; /* the pause */
	struct ret *r;              /* owned, n of them, ascending delay */
	size_t n;
	int64_t full_us;           /* largest delay - smallest */
	int64_t robust_us;         /* the same with one left out (the better
	                              end); -1 below HX_WAVE_OUTLIER_MIN */
	const struct ret *outlier; /* the one left out for robust_us */
	int64_t outlier_gap_us;    /* how far it lay from the others */
	bool outlier_late;         /* after the others (else before) */
	bool wave_all, wave_but_one;
};

static void spread_of(struct judged *j, int64_t wave_us, int64_t wave1_us)
{
	size_t n = j->n;

	qsort(j->r, n, sizeof(*j->r), by_delay);
	j->full_us = j->r[n - 1].delay_us - j->r[0].delay_us;
	j->robust_us = -1;
	j->outlier = NULL;
	j->outlier_gap_us = 0;
	j->outlier_late = false;
	if (n >= HX_WAVE_OUTLIER_MIN) {
		int64_t no_hi = j->r[n - 2].delay_us - j->r[0].delay_us;
		int64_t no_lo = j->r[n - 1].delay_us - j->r[1].delay_us;

		j->outlier_late = no_hi <= no_lo;
		j->robust_us = j->outlier_late ? no_hi : no_lo;
		j->outlier = j->outlier_late ? &j->r[n - 1] : &j->r[0];
		j->outlier_gap_us = j->outlier_late ? j->r[n - 1].delay_us - j->r[n - 2].delay_us
		                                    : j->r[1].delay_us - j->r[0].delay_us;
	}
	j->wave_all = j->full_us < wave_us;
	j->wave_but_one = !j->wave_all && j->robust_us >= 0 && j->robust_us < wave1_us;
}

/* The returns to pause @p of the held tasks of its scope into @j (n may be
 * 0; j->r owned). */
static void returns_to(const struct hx_check_input *in, const struct fa_attempt *p, int64_t tol_us,
                       struct judged *j)
{
	size_t n_tasks = in->sc != NULL ? in->sc->harness.n_tasks : 0;

	j->p = p;
	j->n = 0;
	j->r = fa_xcalloc(n_tasks + 1, sizeof(*j->r));
	for (size_t t = 0; t < n_tasks; t++) {
		const char *id = in->sc->harness.tasks[t].id;
		int64_t start = started_at(in, id), release;
		const struct fa_attempt *b;
		bool in_scope = false;

		if (start < 0 || start >= p->pause_until_us)
			continue;
		/* the task belongs to the scope if any attempt of it did */
		for (size_t k = 0; k < in->n_attempts && !in_scope; k++)
			in_scope = same(in->attempts[k].task, id) &&
			           same(in->attempts[k].scope, p->scope);
		if (!in_scope)
			continue;
		b = return_of(in, id, p->pause_until_us - tol_us);
		if (b == NULL)
			continue;
		/* how long after it was free to go: a client without jitter
		 * comes back the same short while after its release, whatever
		 * instant each task was told; one that came back within the
		 * tolerance before it counts as at once */
		release = release_of(in, id, b, p->pause_until_us, tol_us);
		j->r[j->n].b = b;
		j->r[j->n].delay_us = b->t_arrival_us > release ? b->t_arrival_us - release : 0;
		j->n++;
	}
}

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

/* The verdict's line for @j (judged, n >= 1). */
static char *describe(const struct judged *j, int w_min_ms, int64_t wave_us, int64_t wave1_us)
{
	char *rule = fa_xasprintf("a wave is all within %.1f ms of each other, or "
	                          "all but one within %.1f ms (W_min %d ms)",
	                          ms(wave_us), ms(wave1_us), w_min_ms);
	char *where =
	        fa_xasprintf("held by the pause of scope %s (seq %llu, until "
	                     "+%.1f ms) and counted from the instant each was "
	                     "free to go",
	                     j->p->scope, (unsigned long long)j->p->seq, ms(j->p->pause_until_us));
	char *out;

	if (j->wave_all)
		out = fa_xasprintf("one wave: all %zu returns within %.1f ms of each "
		                   "other, %s; %s",
		                   j->n, ms(j->full_us), where, rule);
	else if (j->wave_but_one)
		out = fa_xasprintf("one wave: %zu of %zu returns within %.1f ms of "
		                   "each other; task %s came back %.1f ms %s them; "
		                   "%s; %s",
		                   j->n - 1, j->n, ms(j->robust_us), j->outlier->b->task,
		                   ms(j->outlier_gap_us), j->outlier_late ? "after" : "before",
		                   where, rule);
	else if (j->robust_us >= 0)
		out = fa_xasprintf("spread out: %zu returns span %.1f ms, any %zu of "
		                   "them at least %.1f ms, %s; %s",
		                   j->n, ms(j->full_us), j->n - 1, ms(j->robust_us), where, rule);
	else
		out = fa_xasprintf("spread out: %zu returns span %.1f ms, %s; %s", j->n,
		                   ms(j->full_us), where, rule);
	free(rule);
	free(where);
	return out;
}

void hx_wave_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	int min_tasks = (int)hx_check_param(c, "min_tasks")->i;
	int w_min_ms = (int)hx_check_param(c, "w_min_ms")->i;
	int64_t tol_us = hx_check_param(c, "tolerance_ms")->i * 1000;
	int64_t wave_us = (int64_t)(HX_WAVE_SHARE * w_min_ms * 1000);
	int64_t wave1_us = (int64_t)(HX_WAVE_SHARE_BUT_ONE * w_min_ms * 1000);
	struct judged best = { 0 };
	size_t pauses = 0, best_held = 0;
	struct hx_evidence ev = { 0 };
	int64_t margin;

	for (size_t i = 0; i < in->n_attempts && !(best.wave_all || best.wave_but_one); i++) {
		const struct fa_attempt *p = &in->attempts[i];
		struct judged j = { 0 };

		if (!route_pause(p))
			continue;
		pauses++;
		returns_to(in, p, tol_us, &j);
		if (j.n > best_held)
			best_held = j.n;
		if (j.n < (size_t)min_tasks || j.n == 0) {
			free(j.r);
			continue;
		}
		spread_of(&j, wave_us, wave1_us);
		/* the first wave, else the tightest spread */
		if (best.p == NULL || j.wave_all || j.wave_but_one || j.full_us < best.full_us) {
			free(best.r);
			best = j;
		} else {
			free(j.r);
		}
	}
	if (best.p == NULL) {
		r->verdict = HX_NA;
		r->detail = pauses == 0
		                    ? fa_xstrdup("no route announced a pause")
		                    : fa_xasprintf("no pause held %d tasks that came back after "
		                                   "it (most: %zu)",
		                                   min_tasks, best_held);
		return;
	}
	hx_evidence_add(&ev, best.p->seq);
	for (size_t k = 0; k < best.n; k++)
		hx_evidence_add(&ev, best.r[k].b->seq);
	hx_evidence_give(&ev, r);
	r->verdict = best.wave_all || best.wave_but_one ? HX_FAIL : HX_PASS;
	r->detail = describe(&best, w_min_ms, wave_us, wave1_us);
	margin = hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_SPREAD_US);
	if (r->verdict == HX_PASS && margin > 0 &&
	    (best.full_us <= wave_us + margin ||
	     (best.robust_us >= 0 && best.robust_us <= wave1_us + margin))) {
		/* a scale spreads what a client sends at once by its real
		 * scheduling times S: a spread this small may be a wave */
		char *d = r->detail;

		r->verdict = HX_NA;
		r->detail = fa_xasprintf("cannot tell under --time-scale %g: %s; the scale "
		                         "can spread a wave by up to %.1f ms of virtual time "
		                         "(%d ms of real scheduling x %g), so only a spread past "
		                         "the rule by that much passes (docs/time-scale.md)",
		                         fa_clock_scale(), d, ms(margin),
		                         HX_TIMESCALE_SPREAD_US / 1000, fa_clock_scale() - 1.0);
		free(d);
	}
	free(best.r);
}
