/* bounded.c -- attempts.bounded: every attempt within a budget, no hang, no tight loop after a
 * Retry-After naming no future instant. */
#include "bounded.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"

/* docs/checks.md explains each number. */
#define LOOP_WINDOW_US    100000 /* window after a bad Retry-After */
#define LOOP_MAX_ATTEMPTS 2      /* attempts allowed inside that window */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A Retry-After that names no future instant: a past date, zero or junk. */
static bool bad_retry_after(const struct fa_attempt *a)
{
	return hx_check_received(a) && a->retry_after != NULL &&
	       a->pause_until_us <= a->t_response_us;
}

/*
 * "task t1 hung: no result within its 17 s timeout, after 5 attempts (the
 * last at +15341.2 ms): it was still retrying, or waiting to, when the
 * timeout passed" -- what a library's maintainer needs to tell a hang
 * from a backoff that outgrew the budget.
 */
static char *hang_text(const struct hx_check_ctx *c, const struct hx_task_run *t, bool more)
{
	const struct fa_attempt *last = NULL;
	size_t n = 0;
	char *what, *out;

	for (size_t j = 0; j < c->n; j++)
		if (same(c->att[j]->task, t->spec->id)) {
			n++;
			if (last == NULL || c->att[j]->t_arrival_us > last->t_arrival_us)
				last = c->att[j];
		}
	if (last == NULL)
		what = fa_xstrdup("before its first attempt");
	else
		what = fa_xasprintf("after %zu attempt%s (the last at +%.1f ms): it was still "
		                    "retrying, or waiting to, when the timeout passed",
		                    n, n == 1 ? "" : "s", (double)last->t_arrival_us / 1000.0);
	out = fa_xasprintf("task %s hung: %s %d s timeout, %s%s", t->spec->id,
	                   c->in->mode == HX_MODE_STDIO ? "no result within its"
	                                                : "its client was killed by its",
	                   t->timeout_s, what, more ? " (and other tasks hung)" : "");
	free(what);
	return out;
}

void hx_bounded_check(const struct hx_check_ctx *c, struct hx_check_result *r)
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

	/* Every attempt counts (the retry-safety guide): one the harness
	 * cannot put on a task escapes every budget, so it fails the check. */
	for (i = 0; i < c->n_un; i++)
		hx_evidence_add(&bad, c->un[i]->seq);
	/* A budget bounds waiting as well as attempts (the retry-safety
	 * guide: count both):
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
			if (over_t == NULL ||
			    n - t->budget.max_attempts > over_n - over_t->budget.max_attempts) {
				over_t = t;
				over_n = n;
			}
			over++;
		} else if (close_t == NULL ||
		           t->budget.max_attempts - n < close_t->budget.max_attempts - close_n) {
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

			if (!same(a->task, ra->task) || a->t_arrival_us <= ra->t_response_us ||
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
		hang_part = hang_text(c, hung_t, hung > 1);
	if (c->n_un > 0)
		un_part = fa_xasprintf(
		        "%zu attempt%s named no task of the scenario (no fa_task "
		        "parameter or X-Fakeapi-Task header naming one, e.g. seq %llu "
		        "%s %s): no budget can account for %s",
		        c->n_un, c->n_un == 1 ? "" : "s", (unsigned long long)c->un[0]->seq,
		        c->un[0]->method, c->un[0]->path, c->n_un == 1 ? "it" : "them");
	if (c->n == 0 && hung == 0 && c->n_un == 0) {
		hx_check_na_empty(c, r);
	} else if (over > 0 || loops > 0 || hung > 0 || c->n_un > 0) {
		r->verdict = HX_FAIL;
		if (over > 0)
			budget_part =
			        fa_xasprintf("task %s made %zu attempts, budget max_attempts %d"
			                     "%s",
			                     over_t->id, over_n, over_t->budget.max_attempts,
			                     over > 1 ? " (and other tasks over budget)" : "");
		if (loops > 0)
			loop_part = fa_xasprintf(
			        "task %s sent %zu attempts within %d ms after the "
			        "Retry-After \"%s\" (no future instant) at seq %llu, "
			        "at most %d allowed%s",
			        loop_r->task, loop_n, LOOP_WINDOW_US / 1000, loop_r->retry_after,
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
			budget_part = fa_xasprintf("%zu budgeted task%s within budget (closest: %s "
			                           "made %zu of max_attempts %d)",
			                           budgeted, budgeted > 1 ? "s" : "", close_t->id,
			                           close_n, close_t->budget.max_attempts);
		if (n_bad_ra > 0)
			loop_part =
			        fa_xasprintf("after %zu Retry-After naming no future instant, at "
			                     "most %zu attempt%s within %d ms",
			                     n_bad_ra, most_in_window,
			                     most_in_window == 1 ? "" : "s", LOOP_WINDOW_US / 1000);
		hx_evidence_give(&good, r);
	}
	if (r->detail == NULL)
		r->detail = fa_xasprintf(
		        "%s%s%s%s%s%s%s", un_part ? un_part : "",
		        un_part && (hang_part || budget_part || loop_part) ? "; " : "",
		        hang_part ? hang_part : "",
		        hang_part && (budget_part || loop_part) ? "; " : "",
		        budget_part ? budget_part : "", budget_part && loop_part ? "; " : "",
		        loop_part ? loop_part : "");
	free(un_part);
	free(hang_part);
	free(budget_part);
	free(loop_part);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
