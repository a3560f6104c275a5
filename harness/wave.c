/* wave.c -- wait.jitter: do retries after a shared pause come back as one wave? */
#include "wave.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A pause a route announced (during_pause answers only repeat one). */
static bool route_pause(const struct fa_attempt *a)
{
	return a->status != 0 && a->t_response_us >= 0 &&
	       a->delivered == FA_DELIVERED_COMPLETE && a->route != NULL &&
	       a->pause_until_us > a->t_response_us && a->scope != NULL;
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
static const struct fa_attempt *return_of(const struct hx_check_input *in,
					  const char *task, int64_t from_us)
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
 * The instant task @id was free to go again for its return @b: the end of
 * the scope's pause @until, or a later instant the provider told the task
 * itself before @b (a during_pause answer's own Retry-After).
 */
static int64_t release_of(const struct hx_check_input *in, const char *id,
			  const struct fa_attempt *b, int64_t until)
{
	int64_t release = until;

	for (size_t i = 0; i < in->n_attempts; i++) {
		const struct fa_attempt *a = &in->attempts[i];

		if (same(a->task, id) && a->t_response_us >= 0 &&
		    a->t_response_us < b->t_arrival_us &&
		    a->pause_until_us > a->t_response_us && a->pause_until_us > release)
			release = a->pause_until_us;
	}
	return release;
}

void hx_wave_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	int min_tasks = (int)hx_check_param(c, "min_tasks")->i;
	int w_min_ms = (int)hx_check_param(c, "w_min_ms")->i;
	int tol_ms = (int)hx_check_param(c, "tolerance_ms")->i;
	int64_t wave_us = (int64_t)(HX_WAVE_SHARE * w_min_ms * 1000);
	const struct fa_attempt *judged = NULL;
	int64_t judged_spread = -1;
	size_t judged_n = 0, pauses = 0, best_held = 0;
	struct hx_evidence ev = { 0 };
	bool wave = false;

	for (size_t i = 0; i < in->n_attempts && !wave; i++) {
		const struct fa_attempt *p = &in->attempts[i];
		const struct fa_attempt **back;
		size_t n_back = 0, n_tasks = in->sc != NULL ? in->sc->harness.n_tasks : 0;
		int64_t lo = INT64_MAX, hi = INT64_MIN;

		if (!route_pause(p))
			continue;
		pauses++;
		back = fa_xcalloc(n_tasks + 1, sizeof(*back));
		for (size_t t = 0; t < n_tasks; t++) {
			const char *id = in->sc->harness.tasks[t].id;
			int64_t start = started_at(in, id);
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
			b = return_of(in, id, p->pause_until_us - (int64_t)tol_ms * 1000);
			if (b == NULL)
				continue;
			back[n_back++] = b;
			/* how long after it was free to go: a client without
			 * jitter comes back the same short while after its
			 * release, whatever instant each task was told */
			int64_t late = b->t_arrival_us - release_of(in, id, b, p->pause_until_us);
			if (late < lo)
				lo = late;
			if (late > hi)
				hi = late;
		}
		if (n_back > best_held)
			best_held = n_back;
		if (n_back >= (size_t)min_tasks &&
		    (judged == NULL || hi - lo < judged_spread || hi - lo < wave_us)) {
			judged = p;
			judged_spread = hi - lo;
			judged_n = n_back;
			wave = judged_spread < wave_us;
			ev.n = 0;
			hx_evidence_add(&ev, p->seq);
			for (size_t k = 0; k < n_back; k++)
				hx_evidence_add(&ev, back[k]->seq);
		}
		free(back);
	}
	if (judged == NULL) {
		r->verdict = HX_NA;
		r->detail = pauses == 0
			? fa_xstrdup("no route announced a pause")
			: fa_xasprintf("no pause held %d tasks that came back after "
				       "it (most: %zu)", min_tasks, best_held);
		hx_evidence_release(&ev);
		return;
	}
	hx_evidence_give(&ev, r);
	r->verdict = wave ? HX_FAIL : HX_PASS;
	r->detail = fa_xasprintf(
		"%s: %zu tasks held by the pause of scope %s (seq %llu, until "
		"+%.1f ms) came back %.1f ms apart, counted from the instant each "
		"was free to go; a wave is under %.1f ms (%.1f x W_min %d ms)", wave ? "one wave" : "spread out", judged_n,
		judged->scope, (unsigned long long)judged->seq,
		(double)judged->pause_until_us / 1000.0, (double)judged_spread / 1000.0,
		(double)wave_us / 1000.0, HX_WAVE_SHARE, w_min_ms);
}
