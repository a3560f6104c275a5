/* cancel.c -- cancel.quiet: cancelled work never wakes up later. */
#include "cancel.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "clock.h"
#include "evidence.h"
#include "timescale.h"

#define CHECK_ID   "cancel.quiet"
#define MAX_DUE_MS 86400000 /* a due_in_ms past a day is no plan to honour */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

int64_t hx_cancel_quiet_until(const struct fa_attempt *attempts, size_t n_attempts,
                              const struct hx_client_msg *msgs, size_t n_msgs, const char *task,
                              int64_t t_cancel_us, int margin_ms)
{
	int64_t until = t_cancel_us;
	const cJSON *due = NULL;

	/* a pause the provider had told the task: a retry left armed would
	 * fire when it ends */
	for (size_t i = 0; i < n_attempts; i++) {
		const struct fa_attempt *a = &attempts[i];

		if (same(a->task, task) && a->status != 0 && a->t_response_us >= 0 &&
		    a->delivered == FA_DELIVERED_COMPLETE && a->t_response_us <= t_cancel_us &&
		    a->pause_until_us > until)
			until = a->pause_until_us;
	}
	/* the wait the client itself announced last, counted from the cancel
	 * (it began earlier, so this is the later bound) */
	for (size_t i = 0; msgs != NULL && i < n_msgs; i++)
		if (msgs[i].t_us <= t_cancel_us && same(msgs[i].type, "retry_scheduled") &&
		    same(msgs[i].task, task))
			due = cJSON_GetObjectItemCaseSensitive(msgs[i].json, "due_in_ms");
	if (cJSON_IsNumber(due) && due->valuedouble > 0 && due->valuedouble <= MAX_DUE_MS &&
	    t_cancel_us + (int64_t)(due->valuedouble * 1000) > until)
		until = t_cancel_us + (int64_t)(due->valuedouble * 1000);
	return until + (int64_t)(margin_ms > 0 ? margin_ms : 0) * 1000;
}

/* The last result line the client printed for @id, NULL without one. */
static const struct hx_client_msg *result_of(const struct hx_check_input *in, const char *id)
{
	const struct hx_client_msg *res = NULL;

	for (size_t i = 0; i < in->n_msgs; i++)
		if (same(in->msgs[i].type, "result") && same(in->msgs[i].task, id))
			res = &in->msgs[i];
	return res;
}

static const char *outcome(const struct hx_client_msg *m)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(m->json, "outcome");

	return cJSON_IsString(o) ? o->valuestring : "?";
}

/* "watched until +6200.0 ms" */
static char *watched(const struct hx_task_run *run)
{
	if (run->t_quiet_until_us < 0)
		return fa_xstrdup("watched until the scenario ended");
	return fa_xasprintf("watched until +%.1f ms", ms(run->t_quiet_until_us));
}

/* Task @id has an attempt arriving after @t_us. */
static bool sent_after(const struct hx_check_input *in, const char *id, int64_t t_us)
{
	for (size_t k = 0; k < in->n_attempts; k++)
		if (same(in->attempts[k].task, id) && in->attempts[k].t_arrival_us > t_us)
			return true;
	return false;
}

void hx_cancel_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	/* under a scale, the real flight of an attempt crossing the cancel is
	 * multiplied: the tolerance grows by it (docs/time-scale.md) */
	int64_t tol_us = hx_check_param(c, "tolerance_ms")->i * 1000 +
	                 hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_LATE_US);
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t n_cancelled = 0, n_judged = 0, n_bad = 0;
	const struct hx_task_run *done_first = NULL;
	char *shown = NULL;

	if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("exec mode: the harness's own SIGTERM ends a cancelled "
		                       "task's process, which proves nothing about the client");
		return;
	}
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct hx_task_run *run = &in->tasks[i];
		const char *id = run->spec != NULL ? run->spec->id : NULL;
		const struct fa_attempt *late = NULL;
		const struct hx_client_msg *res;
		size_t n_late = 0, n_before = 0, mark = bad.n;
		char *fault = NULL, *w;

		if (id == NULL || run->t_cancel_us < 0)
			continue;
		n_cancelled++;
		res = result_of(in, id);
		/* a task that had already finished was not running to cancel:
		 * its result was read before the cancel, or crossed it on the
		 * way (read within the tolerance, not "cancelled"). Unless it
		 * still sent something after the cancel: a result says nothing
		 * of a retry left armed. */
		if (res != NULL &&
		    (res->t_us < run->t_cancel_us || (res->t_us <= run->t_cancel_us + tol_us &&
		                                      !same(outcome(res), "cancelled"))) &&
		    !sent_after(in, id, run->t_cancel_us + tol_us)) {
			if (done_first == NULL)
				done_first = run;
			continue;
		}
		n_judged++;
		for (size_t k = 0; k < in->n_attempts; k++) {
			const struct fa_attempt *a = &in->attempts[k];

			if (!same(a->task, id))
				continue;
			if (a->t_arrival_us <= run->t_cancel_us + tol_us) {
				n_before++;
				hx_evidence_add(&good, a->seq);
				continue;
			}
			n_late++;
			hx_evidence_add(&bad, a->seq);
			if (late == NULL || a->t_arrival_us < late->t_arrival_us)
				late = a;
		}
		w = watched(run);
		if (late != NULL)
			fault = fa_xasprintf("task %s was cancelled at +%.1f ms and still sent seq "
			                     "%llu at +%.1f ms, %.1f ms after the cancel (%s; "
			                     "tolerance %lld ms)%s",
			                     id, ms(run->t_cancel_us),
			                     (unsigned long long)late->seq, ms(late->t_arrival_us),
			                     ms(late->t_arrival_us - run->t_cancel_us), w,
			                     (long long)(tol_us / 1000),
			                     n_late > 1 ? "; more attempts after it" : "");
		else if (res == NULL)
			fault = fa_xasprintf("task %s was cancelled at +%.1f ms and sent nothing "
			                     "more (%s), but reported no result",
			                     id, ms(run->t_cancel_us), w);
		else if (!same(outcome(res), "cancelled"))
			fault = fa_xasprintf("task %s was cancelled at +%.1f ms and sent nothing "
			                     "more (%s), but reported result %s, not cancelled",
			                     id, ms(run->t_cancel_us), w, outcome(res));
		if (fault != NULL) {
			/* the attempts before the cancel show what was stopped */
			for (size_t k = 0; late == NULL && k < in->n_attempts; k++)
				if (same(in->attempts[k].task, id))
					hx_evidence_add(&bad, in->attempts[k].seq);
			if (n_bad++ == 0) {
				free(shown);
				shown = fault;
			} else {
				free(fault);
			}
		} else {
			bad.n = mark;
			if (shown == NULL)
				shown = fa_xasprintf("task %s was cancelled at +%.1f ms after %zu "
				                     "attempt%s and sent nothing more (%s), result "
				                     "cancelled",
				                     id, ms(run->t_cancel_us), n_before,
				                     n_before == 1 ? "" : "s", w);
		}
		free(w);
	}

	if (n_cancelled == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task was cancelled");
	} else if (n_judged == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("task %s had already reported its result when its "
		                         "cancel went out at +%.1f ms, and sent nothing after "
		                         "it: nothing was left to stop",
		                         done_first->spec->id, ms(done_first->t_cancel_us));
	} else if (n_bad > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown,
		                         n_bad > 1 ? "; other cancelled tasks "
		                                     "failed too"
		                                   : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = n_judged > 1 ? fa_xasprintf("%zu cancelled tasks stayed quiet; %s",
		                                        n_judged, shown)
		                         : fa_xstrdup(shown);
		hx_evidence_give(&good, r);
	}
	free(shown);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
