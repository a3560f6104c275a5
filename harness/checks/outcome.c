/* outcome.c -- outcome.expected: each task ends as the scenario says a correct client ends it. */
#include "outcome.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "budget.h"
#include "evidence.h"
#include "task_spec.h"

/* Tasks named one by one in a pass detail; the rest are counted. */
#define NAMED_MAX 4

/* How one task ended, as the check reads it. */
struct ending {
	unsigned bit; /* FA_OUTCOME_* it ended with; 0 = no outcome */
	bool judged;  /* false: not started, or stopped for good by the scenario */
	char *how;    /* owned: "ended failed (exit 22)", "timed out after 8 s with
	                 no outcome", ...; NULL when not judged */
};

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* Does the scenario kill its client without starting it again? A task
 * that event stopped has no end of its own to judge. */
static bool kills_for_good(const struct fa_scenario *sc)
{
	for (size_t i = 0; i < sc->harness.n_events; i++)
		if (sc->harness.events[i].kill && !sc->harness.events[i].restart)
			return true;
	return false;
}

static const char *name_of(unsigned bit)
{
	for (unsigned i = 0; i < FA_OUTCOME_COUNT; i++)
		if (bit == 1u << i)
			return fa_task_outcome_name(i);
	return "?";
}

/* The `sent` of the last result line stdio task @id printed, or NULL. */
static const char *sent_of(const struct hx_check_input *in, const char *id)
{
	const char *sent = NULL;

	for (size_t i = 0; i < in->n_msgs; i++)
		if (same(in->msgs[i].type, "result") && same(in->msgs[i].task, id)) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(in->msgs[i].json, "sent");

			sent = cJSON_IsString(v) ? v->valuestring : NULL;
		}
	return sent;
}

/* Read how @tr ended into @e. */
static void read_ending(const struct hx_check_input *in, const struct hx_task_run *tr, size_t n_att,
                        struct ending *e)
{
	memset(e, 0, sizeof(*e));
	if (!tr->sent && n_att == 0)
		return;
	e->judged = true;
	if (tr->error != NULL) {
		e->how = fa_xasprintf("ended with no outcome (%s)", tr->error);
	} else if (tr->timed_out) {
		e->how = fa_xasprintf("timed out after %d s with no outcome", tr->timeout_s);
	} else if (in->mode == HX_MODE_STDIO) {
		if (tr->outcome != NULL && same(tr->outcome, "failed") &&
		    same(sent_of(in, tr->spec->id), "unknown")) {
			e->bit = FA_OUTCOME_UNKNOWN;
			e->how = fa_xstrdup("reported failed, sent unknown");
		} else if (tr->outcome != NULL) {
			e->bit = fa_task_outcome_bit(tr->outcome);
			e->how = fa_xasprintf("reported %s", tr->outcome);
		} else if (tr->term_signal == SIGKILL && kills_for_good(in->sc)) {
			e->judged = false;
		} else {
			e->how = fa_xstrdup("ended with no result line");
		}
	} else if (tr->t_cancel_us >= 0) {
		e->bit = FA_OUTCOME_CANCELLED;
		e->how = tr->exit_code >= 0
		                 ? fa_xasprintf("ended cancelled (exit %d after the cancel)",
		                                tr->exit_code)
		                 : fa_xasprintf("ended cancelled (signal %d after the cancel)",
		                                tr->term_signal);
	} else if (tr->exit_code == 0) {
		e->bit = FA_OUTCOME_SUCCEEDED;
		e->how = fa_xstrdup("ended succeeded (exit 0)");
	} else if (tr->exit_code > 0) {
		e->bit = FA_OUTCOME_FAILED;
		e->how = fa_xasprintf("ended failed (exit %d)", tr->exit_code);
	} else if (tr->term_signal == SIGKILL && kills_for_good(in->sc)) {
		e->judged = false;
	} else if (tr->term_signal > 0) {
		e->how = fa_xasprintf("was killed by signal %d with no outcome", tr->term_signal);
	} else {
		e->how = fa_xstrdup("ended with no outcome");
	}
}

/* Does @e meet @want? A write left open (failed, sent unknown) is a
 * failure too. A client that cannot escalate (exec mode, or a hello
 * without the "escalation" feature) ends failed where it would: that
 * stands for escalated; and an exec client's non-zero exit for unknown. */
static bool meets(const struct hx_check_input *in, const struct ending *e, unsigned want)
{
	if (e->bit == 0)
		return false;
	if (want & e->bit)
		return true;
	if (e->bit == FA_OUTCOME_UNKNOWN && (want & FA_OUTCOME_FAILED))
		return true;
	if ((e->bit == FA_OUTCOME_FAILED || e->bit == FA_OUTCOME_UNKNOWN) &&
	    (want & FA_OUTCOME_ESCALATED) && !hx_budget_client_escalates(in))
		return true;
	return in->mode == HX_MODE_EXEC && e->bit == FA_OUTCOME_FAILED &&
	       (want & FA_OUTCOME_UNKNOWN);
}

/* "succeeds", "succeeds or escalates": what a correct client does. */
static char *want_text(unsigned want)
{
	static const char *const verbs[FA_OUTCOME_COUNT] = {
		"succeeds",
		"fails",
		"escalates",
		"reports cancelled",
		"leaves the write's outcome unknown",
	};
	char buf[128] = "";
	size_t used = 0;

	for (unsigned i = 0; i < FA_OUTCOME_COUNT; i++) {
		int n;

		if (!(want & (1u << i)))
			continue;
		n = snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? " or " : "", verbs[i]);
		if (n > 0 && (size_t)n < sizeof(buf) - used)
			used += (size_t)n;
	}
	return fa_xstrdup(buf);
}

/* " within its budget of 4 attempts and 5 s of waiting", or "". */
static char *budget_text(const struct fa_budget *b)
{
	if (b->max_attempts > 0 && b->max_wait_s >= 0)
		return fa_xasprintf(" within its budget of %d attempts and %d s of waiting",
		                    b->max_attempts, b->max_wait_s);
	if (b->max_attempts > 0)
		return fa_xasprintf(" within its budget of %d attempts", b->max_attempts);
	if (b->max_wait_s >= 0)
		return fa_xasprintf(" within its budget of %d s of waiting", b->max_wait_s);
	return fa_xstrdup("");
}

/* Answers that say the request was not processed, retryable for every
 * request class (RFC 9110 §15.5.9, §15.6.4; RFC 6585 §4). */
static bool plainly_retryable(int status)
{
	return status == 408 || status == 429 || status == 503;
}

/* ": the 503 with Retry-After: 0 is retryable", ": its last answer was
 * 404", or "" without an attempt. */
static char *last_text(const struct fa_attempt *a)
{
	char ra[96] = "";

	if (a == NULL)
		return fa_xstrdup(": it sent no attempt");
	if (a->status == 0 || a->delivered != FA_DELIVERED_COMPLETE)
		return fa_xasprintf(": its last attempt (seq %llu) got no whole answer",
		                    (unsigned long long)a->seq);
	if (a->stream_end != NULL && !same(a->stream_end, "done"))
		return fa_xasprintf(": its last answer (seq %llu) was a %d stream that ended "
		                    "with %s after %d chunk%s",
		                    (unsigned long long)a->seq, a->status, a->stream_end,
		                    a->stream_chunks, a->stream_chunks == 1 ? "" : "s");
	if (a->retry_after != NULL)
		snprintf(ra, sizeof(ra), " with Retry-After: %.60s", a->retry_after);
	else if (a->retry_after_ms != NULL)
		snprintf(ra, sizeof(ra), " with retry-after-ms: %.60s", a->retry_after_ms);
	if (plainly_retryable(a->status))
		return fa_xasprintf(": the %d%s (seq %llu) is retryable", a->status, ra,
		                    (unsigned long long)a->seq);
	return fa_xasprintf(": its last answer was %d%s (seq %llu)", a->status, ra,
	                    (unsigned long long)a->seq);
}

/* The one-line fault of task @t. */
static char *fault_text(const struct fa_task_spec *t, const struct ending *e,
                        const struct fa_attempt *last, size_t n_att)
{
	char *want = want_text(t->outcome);
	char *b = t->outcome == FA_OUTCOME_CANCELLED ? fa_xstrdup(" when the harness cancels it")
	                                             : budget_text(&t->budget);
	char *l = last_text(last);
	char *s = fa_xasprintf("task %s %s after %zu attempt%s; a correct client %s%s%s", t->id,
	                       e->how, n_att, n_att == 1 ? "" : "s", want, b, l);

	free(want);
	free(b);
	free(l);
	return s;
}

void hx_outcome_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t n_want = 0, n_judged = 0, n_bad = 0, used = 0;
	char *first_fault = NULL, named[256] = "", *silent_how = NULL;
	const char *unjudged = NULL, *silent = NULL;

	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct hx_task_run *tr = &in->tasks[i];
		const struct fa_task_spec *t = tr->spec;
		const struct fa_attempt *last = NULL;
		struct ending e;
		size_t n_att = 0;
		int n;

		if (t == NULL || t->outcome == 0)
			continue;
		n_want++;
		for (size_t k = 0; k < c->n; k++)
			if (same(c->att[k]->task, t->id)) {
				n_att++;
				last = c->att[k];
			}
		read_ending(in, tr, n_att, &e);
		if (!e.judged) {
			if (unjudged == NULL)
				unjudged = t->id;
			continue;
		}
		/* the right ending without an attempt followed from no answer:
		 * it shows nothing (a client that does nothing and exits 1
		 * "fails" a 400 it never got) */
		if (n_att == 0 && meets(in, &e, t->outcome)) {
			if (silent == NULL) {
				silent = t->id;
				silent_how = e.how;
				e.how = NULL;
			}
			free(e.how);
			continue;
		}
		n_judged++;
		if (!meets(in, &e, t->outcome)) {
			if (n_bad++ == 0) {
				first_fault = fault_text(t, &e, last, n_att);
				for (size_t k = 0; k < c->n; k++)
					if (same(c->att[k]->task, t->id))
						hx_evidence_add(&bad, c->att[k]->seq);
			}
		} else {
			for (size_t k = 0; k < c->n; k++)
				if (same(c->att[k]->task, t->id))
					hx_evidence_add(&good, c->att[k]->seq);
			if (n_judged - n_bad <= NAMED_MAX) {
				n = snprintf(named + used, sizeof(named) - used, "%s%s %s",
				             used ? ", " : "", t->id, name_of(e.bit));
				if (n > 0 && (size_t)n < sizeof(named) - used)
					used += (size_t)n;
			}
		}
		free(e.how);
	}

	if (n_want == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task says how a correct client ends it "
		                       "($.harness.tasks[i].outcome)");
	} else if (n_judged == 0 && silent != NULL) {
		r->verdict = HX_NA;
		r->detail =
		        fa_xasprintf("task %s %s without sending an attempt: an ending no answer "
		                     "led to shows nothing of how the client handles one",
		                     silent, silent_how ? silent_how : "ended");
	} else if (n_judged == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("no task with an expected outcome ran to its own end "
		                         "(first: %s, never started or stopped by the "
		                         "scenario's kill)",
		                         unjudged ? unjudged : "?");
	} else if (n_bad > 0) {
		r->verdict = HX_FAIL;
		r->detail = n_bad > 1 ? fa_xasprintf("%s; %zu other task%s of %zu ended "
		                                     "otherwise too",
		                                     first_fault, n_bad - 1, n_bad == 2 ? "" : "s",
		                                     n_judged)
		                      : fa_xstrdup(first_fault);
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%zu task%s ended as a correct client ends %s (%s%s)%s",
		                         n_judged, n_judged == 1 ? "" : "s",
		                         n_judged == 1 ? "it" : "them", named,
		                         n_judged > NAMED_MAX ? ", ..." : "",
		                         in->mode == HX_MODE_EXEC ? "; exec mode: read from exit "
		                                                    "statuses"
		                                                  : "");
		hx_evidence_give(&good, r);
	}
	free(first_fault);
	free(silent_how);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
