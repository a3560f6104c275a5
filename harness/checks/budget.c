/* budget.c -- budget.escalates: a task the provider keeps refusing stops inside its budget and
 * escalates. */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "clock.h"
#include "escalation.h"
#include "evidence.h"
#include "timescale.h"

#define CHECK_ID "budget.escalates"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

/* What the journal and the client show of one listed task. */
struct judged {
	const struct fa_task_spec *t;
	const struct fa_attempt **att; /* owned: its attempts, arrival order */
	size_t n;
	size_t over;                   /* attempts past max_attempts */
	const struct fa_attempt *late; /* the first attempt past the wait budget */
	size_t n_late;
	char *fault; /* owned: why it fails, or NULL */
};

/* The harness started task @id, or (without a record of it) it made an attempt. */
static bool was_sent(const struct hx_check_input *in, const char *id, size_t n_att)
{
	for (size_t i = 0; i < in->n_tasks; i++)
		if (in->tasks[i].spec != NULL && same(in->tasks[i].spec->id, id))
			return in->tasks[i].sent || n_att > 0;
	return n_att > 0;
}

/* The outcome of the last result line for @id, NULL without one. */
static const char *outcome_of(const struct hx_check_input *in, const char *id)
{
	const char *out = NULL;

	for (size_t i = 0; i < in->n_msgs; i++) {
		const cJSON *o;

		if (!same(in->msgs[i].type, "result") || !same(in->msgs[i].task, id))
			continue;
		o = cJSON_GetObjectItemCaseSensitive(in->msgs[i].json, "outcome");
		out = cJSON_IsString(o) ? o->valuestring : "?";
	}
	return out;
}

bool hx_budget_client_escalates(const struct hx_check_input *in)
{
	const cJSON *features, *f;

	if (in->mode != HX_MODE_STDIO)
		return false;
	if (in->hello == NULL)
		return true;
	features = cJSON_GetObjectItemCaseSensitive(in->hello, "features");
	if (!cJSON_IsArray(features))
		return false;
	cJSON_ArrayForEach(f, features) if (cJSON_IsString(f) &&
	                                    strcmp(f->valuestring, "escalation") == 0) return true;
	return false;
}

/* Why @j, of a stdio client without escalation records, is wrong: it
 * reported succeeded though no attempt got a 2xx. NULL otherwise. */
static char *outcome_fault(const struct hx_check_input *in, const struct judged *j)
{
	if (!same(outcome_of(in, j->t->id), "succeeded"))
		return NULL;
	return fa_xasprintf("task %s reported succeeded, but the provider answered none of "
	                    "its %zu attempt%s with a 2xx",
	                    j->t->id, j->n, j->n == 1 ? "" : "s");
}

/* "max_attempts 4, max_wait_s 90": the parts of @b the scenario gave. */
static char *budget_text(const struct fa_budget *b)
{
	if (b->max_attempts > 0 && b->max_wait_s >= 0)
		return fa_xasprintf("max_attempts %d, max_wait_s %d", b->max_attempts,
		                    b->max_wait_s);
	if (b->max_attempts > 0)
		return fa_xasprintf("max_attempts %d", b->max_attempts);
	return fa_xasprintf("max_wait_s %d", b->max_wait_s);
}

/* Collect @j's attempts and measure them against its budget. */
static void measure(const struct hx_check_ctx *c, struct judged *j, int tol_ms)
{
	const struct fa_budget *b = &j->t->budget;
	int64_t limit;

	j->att = fa_xcalloc(c->n + 1, sizeof(*j->att));
	for (size_t i = 0; i < c->n; i++)
		if (same(c->att[i]->task, j->t->id))
			j->att[j->n++] = c->att[i];
	if (b->max_attempts > 0 && j->n > (size_t)b->max_attempts)
		j->over = j->n - (size_t)b->max_attempts;
	if (b->max_wait_s < 0 || j->n == 0)
		return;
	limit = j->att[0]->t_arrival_us + (int64_t)b->max_wait_s * 1000000 + (int64_t)tol_ms * 1000;
	for (size_t k = 1; k < j->n; k++) {
		if (j->att[k]->t_arrival_us <= limit)
			continue;
		if (j->late == NULL)
			j->late = j->att[k];
		j->n_late++;
	}
}

/* @j's first attempt the client got a 2xx answer to, or NULL. */
static const struct fa_attempt *answered_2xx(const struct judged *j)
{
	for (size_t k = 0; k < j->n; k++)
		if (j->att[k]->status >= 200 && j->att[k]->status < 300 &&
		    j->att[k]->delivered == FA_DELIVERED_COMPLETE)
			return j->att[k];
	return NULL;
}

/* Why @j broke its budget, or NULL. */
static char *budget_fault(const struct judged *j, int tol_ms)
{
	const struct fa_budget *b = &j->t->budget;

	if (j->over > 0)
		return fa_xasprintf("task %s made %zu attempts, budget max_attempts %d "
		                    "(first past it: seq %llu at +%.1f ms)",
		                    j->t->id, j->n, b->max_attempts,
		                    (unsigned long long)j->att[b->max_attempts]->seq,
		                    ms(j->att[b->max_attempts]->t_arrival_us));
	if (j->late != NULL)
		return fa_xasprintf(
		        "task %s kept going past its wait budget: seq %llu "
		        "arrived at +%.1f ms, %.1f s after its first attempt "
		        "(seq %llu at +%.1f ms), budget max_wait_s %d (tolerance "
		        "%d ms)%s",
		        j->t->id, (unsigned long long)j->late->seq, ms(j->late->t_arrival_us),
		        (double)(j->late->t_arrival_us - j->att[0]->t_arrival_us) / 1e6,
		        (unsigned long long)j->att[0]->seq, ms(j->att[0]->t_arrival_us),
		        b->max_wait_s, tol_ms, j->n_late > 1 ? "; more attempts after it" : "");
	return NULL;
}

/* Why @j's hand-over (stdio mode) is wrong, or NULL. */
static char *escalation_fault(const struct hx_check_input *in, const struct judged *j)
{
	const struct hx_client_msg *line = hx_escalation_line_of(in, j->t->id);
	const char *outcome = outcome_of(in, j->t->id);
	char *why, *fault;

	if (line == NULL)
		return fa_xasprintf("task %s stopped after %zu attempt%s but printed no "
		                    "escalation line (result %s)",
		                    j->t->id, j->n, j->n == 1 ? "" : "s",
		                    outcome ? outcome : "missing");
	why = hx_escalation_invalid(hx_escalation_of(in, j->t->id));
	if (why != NULL) {
		fault = fa_xasprintf("task %s's escalation record breaks the schema: %s", j->t->id,
		                     why);
		free(why);
		return fault;
	}
	if (outcome == NULL)
		return fa_xasprintf("task %s printed an escalation record but no result", j->t->id);
	if (!same(outcome, "escalated"))
		return fa_xasprintf("task %s printed an escalation record but reported result "
		                    "%s, not escalated",
		                    j->t->id, outcome);
	return NULL;
}

/* "3 attempts, the last 10.2 s after the first" */
static char *spent_text(const struct judged *j)
{
	if (j->n == 0)
		return fa_xstrdup("no attempt");
	if (j->n == 1)
		return fa_xasprintf("1 attempt (seq %llu)", (unsigned long long)j->att[0]->seq);
	return fa_xasprintf("%zu attempts, the last (seq %llu) %.1f s after the first", j->n,
	                    (unsigned long long)j->att[j->n - 1]->seq,
	                    (double)(j->att[j->n - 1]->t_arrival_us - j->att[0]->t_arrival_us) /
	                            1e6);
}

void hx_budget_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	const struct hx_param_value *list = hx_check_param(c, "tasks");
	/* under a scale, the provider's stamps lag the client's own clock by
	 * its real delays times the scale (docs/time-scale.md) */
	int tol_ms = (int)hx_check_param(c, "tolerance_ms")->i +
	             (int)(hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_LATE_US) / 1000);
	size_t n_list = list->n_tasks, n_j = 0, n_bad = 0;
	struct judged *js = fa_xcalloc(n_list + 1, sizeof(*js));
	struct hx_evidence bad = { 0 }, good = { 0 };
	const char *unsent = NULL, *unbudgeted = NULL, *succeeded = NULL;
	uint64_t succeeded_seq = 0;
	const struct judged *shown = NULL;

	for (size_t l = 0; l < n_list; l++) {
		const struct fa_task_spec *t = list->tasks[l];
		struct judged *j = &js[n_j];

		j->t = t;
		measure(c, j, tol_ms);
		if (!was_sent(in, t->id, j->n)) {
			if (unsent == NULL)
				unsent = t->id;
			free(j->att);
			memset(j, 0, sizeof(*j));
			continue;
		}
		if (t->budget.max_attempts <= 0 && t->budget.max_wait_s < 0) {
			if (unbudgeted == NULL)
				unbudgeted = t->id;
			free(j->att);
			memset(j, 0, sizeof(*j));
			continue;
		}
		j->fault = budget_fault(j, tol_ms);
		if (j->fault == NULL && answered_2xx(j) != NULL) {
			/* the provider let it through: no budget ran out */
			if (succeeded == NULL) {
				succeeded = t->id;
				succeeded_seq = answered_2xx(j)->seq;
			}
			free(j->att);
			memset(j, 0, sizeof(*j));
			continue;
		}
		n_j++;
		if (j->fault != NULL) {
			for (size_t k = 0; k < j->n; k++)
				if ((j->over > 0 && k >= (size_t)t->budget.max_attempts) ||
				    (j->late != NULL &&
				     j->att[k]->t_arrival_us >= j->late->t_arrival_us))
					hx_evidence_add(&bad, j->att[k]->seq);
		} else if (in->mode == HX_MODE_STDIO) {
			j->fault = hx_budget_client_escalates(in) ? escalation_fault(in, j)
			                                          : outcome_fault(in, j);
			for (size_t k = 0; j->fault != NULL && k < j->n; k++)
				hx_evidence_add(&bad, j->att[k]->seq);
		}
		for (size_t k = 0; j->fault == NULL && k < j->n; k++)
			hx_evidence_add(&good, j->att[k]->seq);
		if (j->fault != NULL && n_bad++ == 0)
			shown = j;
		if (j->fault == NULL && shown == NULL && n_bad == 0)
			shown = j;
	}

	if (n_list == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the scenario lists no task whose budget is to run out "
		                       "($.harness.expect[\"" CHECK_ID "\"].tasks)");
	} else if (n_j == 0) {
		r->verdict = HX_NA;
		if (succeeded != NULL)
			r->detail = fa_xasprintf("task %s got a 2xx answer (seq %llu) within its "
			                         "budget: nothing ran out, nothing to escalate",
			                         succeeded, (unsigned long long)succeeded_seq);
		else if (unbudgeted != NULL)
			r->detail = fa_xasprintf("task %s has no budget (neither max_attempts nor "
			                         "max_wait_s): nothing to judge it against",
			                         unbudgeted);
		else
			r->detail = fa_xasprintf("no listed task was sent (first: %s)",
			                         unsent ? unsent : "none in the scenario");
	} else if (n_bad > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown->fault,
		                         n_bad > 1 ? "; other listed tasks failed too" : "");
		hx_evidence_give(&bad, r);
	} else {
		char *spent = spent_text(shown), *b = budget_text(&shown->t->budget);
		const cJSON *rec = hx_escalation_of(in, shown->t->id);
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rec, "reason");

		if (in->mode != HX_MODE_STDIO) {
			r->verdict = HX_NA;
			r->detail = fa_xasprintf("exec mode: task %s stayed within its budget "
			                         "(%s; %s), but an exec client prints no "
			                         "escalation record to judge",
			                         shown->t->id, spent, b);
		} else if (!hx_budget_client_escalates(in)) {
			const char *outcome = outcome_of(in, shown->t->id);

			r->verdict = HX_NA;
			r->detail = fa_xasprintf("judged on the budget alone (the client's hello "
			                         "lists no \"escalation\" feature): task %s stayed "
			                         "within its budget (%s; %s) and reported %s, not "
			                         "succeeded; no escalation record to judge",
			                         shown->t->id, spent, b,
			                         outcome ? outcome : "no result");
		} else {
			r->verdict = HX_PASS;
			r->detail =
			        fa_xasprintf("%stask %s stopped within its budget (%s; %s) "
			                     "and escalated (reason %s)",
			                     n_j > 1 ? "every listed task stopped and escalated; "
			                               "first: "
			                             : "",
			                     shown->t->id, spent, b,
			                     cJSON_IsString(reason) ? reason->valuestring : "?");
			hx_evidence_give(&good, r);
		}
		free(spent);
		free(b);
	}
	for (size_t i = 0; i < n_j; i++) {
		free(js[i].att);
		free(js[i].fault);
	}
	free(js);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
