/* concurrency.c -- wait.concurrency: in-flight attempts per scope stay under the scenario's cap. */
#include "concurrency.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "evidence.h"
#include "timescale.h"

#define CHECK_ID "wait.concurrency"
#define SHOWN    8 /* seqs named in a detail */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static const struct hx_task_run *run_of(const struct hx_check_input *in, const char *id)
{
	for (size_t i = 0; i < in->n_tasks; i++)
		if (in->tasks[i].spec != NULL && same(in->tasks[i].spec->id, id))
			return &in->tasks[i];
	return NULL;
}

/*
 * When attempt @k of @att (arrival order) stopped holding a slot: the
 * answer handed over, else the connection done. An answer the client
 * walked away from (delivered client_gone: a read timeout, a cancel) ends
 * no later than the instant the client is known to have moved on: the
 * next attempt of its task, its cancel, or its end.
 */
static int64_t end_of(const struct hx_check_input *in, const struct fa_attempt **att, size_t n,
                      size_t k)
{
	const struct fa_attempt *a = att[k];
	const struct hx_task_run *run;
	int64_t end = a->t_response_us >= 0 ? a->t_response_us
	              : a->t_done_us >= 0   ? a->t_done_us
	                                    : INT64_MAX;
	int64_t moved = INT64_MAX;

	if (a->delivered != FA_DELIVERED_CLIENT_GONE)
		return end;
	for (size_t j = k + 1; j < n && moved == INT64_MAX; j++)
		if (same(att[j]->task, a->task))
			moved = att[j]->t_arrival_us;
	run = run_of(in, a->task);
	if (run != NULL && run->t_cancel_us >= a->t_arrival_us && run->t_cancel_us < moved)
		moved = run->t_cancel_us;
	if (run != NULL && run->t_exit_us >= a->t_arrival_us && run->t_exit_us < moved)
		moved = run->t_exit_us;
	return moved < end ? moved : end;
}

/* When task @id was put in the client's hands: the harness sent it, else
 * (no record of that) its first attempt. */
static int64_t started(const struct hx_check_input *in, const char *id,
                       const struct fa_attempt **att, size_t n)
{
	const struct hx_task_run *run = run_of(in, id);

	if (run != NULL && run->t_sent_us >= 0)
		return run->t_sent_us;
	for (size_t j = 0; j < n; j++)
		if (same(att[j]->task, id))
			return att[j]->t_arrival_us;
	return INT64_MAX;
}

/*
 * The client's own start time in @scope, µs: of the first @cap tasks of
 * the scope to reach the provider, the longest from being put in the
 * client's hands to its first attempt. Nothing holds those back in a
 * client that keeps the cap, so this is how long it takes to start, not
 * a wait; an exec client's process start is part of it, and a loaded
 * machine or a time scale stretches it.
 */
static int64_t start_time(const struct fa_attempt **att, const int64_t *start, size_t n,
                          const char *scope, size_t cap)
{
	int64_t most = 0;
	size_t tasks = 0;

	for (size_t k = 0; k < n && tasks < cap; k++) {
		bool first = same(att[k]->scope, scope);

		for (size_t j = 0; first && j < k; j++)
			first = !same(att[j]->task, att[k]->task);
		if (!first)
			continue;
		tasks++;
		if (att[k]->t_arrival_us - start[k] > most)
			most = att[k]->t_arrival_us - start[k];
	}
	return most;
}

/* Attempts of @a's scope but not its task in flight at @t. */
static size_t others_in_flight(const struct fa_attempt **att, const int64_t *end, size_t n,
                               const struct fa_attempt *a, int64_t t)
{
	size_t m = 0;

	for (size_t j = 0; j < n; j++)
		if (same(att[j]->scope, a->scope) && !same(att[j]->task, a->task) &&
		    att[j]->t_arrival_us <= t && end[j] > t)
			m++;
	return m;
}

/*
 * Did the client hold the task of @att[k] (its first attempt) back at the
 * cap? Between @from (it had been in the client's hands for longer than
 * the client takes to start) and its first attempt, @cap attempts of its
 * scope were in flight at some instant. Only then could a client that
 * ignores the cap have been seen to break it: a pass needs such a hold.
 */
static bool held_at_cap(const struct fa_attempt **att, const int64_t *end, size_t n, size_t k,
                        int64_t from, size_t cap)
{
	const struct fa_attempt *a = att[k];

	if (from >= a->t_arrival_us)
		return false;
	if (others_in_flight(att, end, n, a, from) >= cap)
		return true;
	for (size_t j = 0; j < k; j++)
		if (att[j]->t_arrival_us > from &&
		    others_in_flight(att, end, n, a, att[j]->t_arrival_us) >= cap)
			return true;
	return false;
}

/* "seq 1, 2, 3 (tasks t1, t2, t3)" of the @n attempts at @w. */
static char *in_flight_text(const struct fa_attempt **w, size_t n)
{
	char *seqs = fa_xstrdup(""), *tasks = fa_xstrdup(""), *more, *out;

	for (size_t k = 0; k < n && k < SHOWN; k++) {
		more = fa_xasprintf("%s%s%llu", seqs, k ? ", " : "", (unsigned long long)w[k]->seq);
		free(seqs);
		seqs = more;
		more = fa_xasprintf("%s%s%s", tasks, k ? ", " : "", w[k]->task);
		free(tasks);
		tasks = more;
	}
	out = fa_xasprintf("seq %s%s (tasks %s%s)", seqs, n > SHOWN ? ", ..." : "", tasks,
	                   n > SHOWN ? ", ..." : "");
	free(seqs);
	free(tasks);
	return out;
}

void hx_concurrency_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	const struct hx_param_value *cap_p = hx_check_param(c, "max_concurrent_requests");
	const struct fa_attempt **att, **now, **worst;
	int64_t *end, *start, worst_at = 0;
	size_t n = 0, cap, n_worst = 0, n_over = 0;
	const char *worst_scope = NULL;
	const struct fa_attempt *held = NULL;
	int64_t held_from = 0, allowance = 0, scale_us;
	struct hx_evidence ev = { 0 };
	char *list;

	if (!cap_p->given) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the scenario sets no cap ($.harness.expect[\"" CHECK_ID
		                       "\"].max_concurrent_requests)");
		return;
	}
	cap = (size_t)cap_p->i;
	/* the attributed attempts with a scope, arrival order */
	att = fa_xcalloc(c->n + 1, sizeof(*att));
	for (size_t i = 0; i < c->n; i++)
		if (c->att[i]->scope != NULL)
			att[n++] = c->att[i];
	end = fa_xcalloc(n + 1, sizeof(*end));
	start = fa_xcalloc(n + 1, sizeof(*start));
	for (size_t k = 0; k < n; k++) {
		end[k] = end_of(in, att, n, k);
		start[k] = started(in, att[k]->task, att, n);
	}
	now = fa_xcalloc(n + 1, sizeof(*now));
	worst = fa_xcalloc(n + 1, sizeof(*worst));

	for (size_t k = 0; k < n; k++) {
		const struct fa_attempt *a = att[k];
		size_t m = 0;

		/* in flight at a's arrival: arrived no later, not yet ended;
		 * attempts that arrived at the same instant all count */
		for (size_t j = 0; j < n; j++)
			if (same(att[j]->scope, a->scope) &&
			    att[j]->t_arrival_us <= a->t_arrival_us &&
			    (j == k || end[j] > a->t_arrival_us))
				now[m++] = att[j];
		if (m > cap)
			n_over++;
		/* the worst instant: the busiest, the first of them */
		if (m > n_worst) {
			n_worst = m;
			worst_at = a->t_arrival_us;
			worst_scope = a->scope;
			memcpy(worst, now, m * sizeof(*now));
		}
	}
	/* a hold: a task in the client's hands past twice its start time
	 * (and what a time scale adds to it) while cap attempts of its scope
	 * were in flight */
	scale_us = hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_SPREAD_US);
	for (size_t k = 0; k < n && held == NULL; k++) {
		bool first = true;
		int64_t wait;

		for (size_t j = 0; first && j < k; j++)
			first = !same(att[j]->task, att[k]->task);
		if (!first)
			continue;
		wait = 2 * start_time(att, start, n, att[k]->scope, cap) + scale_us;
		if (wait > allowance)
			allowance = wait;
		if (held_at_cap(att, end, n, k, start[k] + wait, cap)) {
			held = att[k];
			held_from = start[k];
		}
	}

	if (n_over == 0 && held == NULL) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf(
		        "the cap was never tested: no task was in the client's hands while "
		        "%zu attempts of its scope were in flight, past twice the client's own "
		        "start time%s (%.1f ms at most: the longest any of the first %zu tasks "
		        "of a scope waited for its first attempt, a tighter cap's wait included; "
		        "%zu attempt%s with a scope)",
		        cap, scale_us > 0 ? " and what the time scale adds" : "",
		        (double)allowance / 1000.0, cap, n, n == 1 ? "" : "s");
	} else {
		for (size_t k = 0; k < n_worst; k++)
			hx_evidence_add(&ev, worst[k]->seq);
		list = in_flight_text(worst, n_worst);
		r->verdict = n_over > 0 ? HX_FAIL : HX_PASS;
		r->detail =
		        n_over > 0 ? fa_xasprintf(
		                             "scope %s had %zu attempts in flight at +%.1f ms: %s; "
		                             "max_concurrent_requests %zu",
		                             worst_scope, n_worst, (double)worst_at / 1000.0, list,
		                             cap)
		                   : fa_xasprintf(
		                             "at most %zu attempt%s of a scope in flight at once "
		                             "(max_concurrent_requests %zu); busiest: scope %s at "
		                             "+%.1f ms, %s; task %s waited %.1f ms for a slot",
		                             n_worst, n_worst == 1 ? "" : "s", cap, worst_scope,
		                             (double)worst_at / 1000.0, list, held->task,
		                             (double)(held->t_arrival_us - held_from) / 1000.0);
		free(list);
		hx_evidence_give(&ev, r);
	}
	hx_evidence_release(&ev);
	free(att);
	free(end);
	free(start);
	free(now);
	free(worst);
}
