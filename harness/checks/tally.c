/* tally.c -- attempts.hidden: the client's count of its attempts against the provider's. */
#include "tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "evidence.h"

/* Bytes of a result's "attempts" quoted when they are no count. */
#define NO_COUNT_SHOWN 40

/* What a client process said it sent for a task: nothing, a count, a
 * value that is no count, or null (it cannot observe its attempts). */
enum said { SAID_NOTHING = 0, SAID_COUNT, SAID_NO_COUNT, SAID_UNOBSERVED };

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* @v, a result's "attempts" member (NULL: none), is a count. */
static bool is_count(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	       v->valuedouble <= HX_TALLY_MAX_ATTEMPTS && v->valuedouble == floor(v->valuedouble);
}

/*
 * What the client's process @session said it sent for @task, in *@n: the
 * attempts of its result (SAID_NO_COUNT, with the member in *@bad, when
 * they are no count), else the number of its action_sent lines.
 */
static enum said reported_in(const struct hx_check_input *in, const char *task, unsigned session,
                             long *n, const cJSON **bad)
{
	long sent = 0;

	for (size_t i = 0; i < in->n_msgs; i++) {
		const struct hx_client_msg *m = &in->msgs[i];

		if (m->session != session || !same(m->task, task))
			continue;
		if (same(m->type, "result")) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->json, "attempts");

			if (cJSON_IsNull(v))
				return SAID_UNOBSERVED;
			if (!is_count(v)) {
				*bad = v;
				return SAID_NO_COUNT;
			}
			*n = (long)v->valuedouble;
			return SAID_COUNT;
		}
		if (same(m->type, "action_sent"))
			sent++;
	}
	*n = sent;
	return sent > 0 ? SAID_COUNT : SAID_NOTHING;
}

/* What the client said it sent for @task, summed over its processes (a
 * killed one and the one restarted after it each count their own), in
 * *@n; SAID_NO_COUNT, with the member in *@bad, as soon as one result's
 * attempts are no count, SAID_UNOBSERVED as soon as they are null. */
static enum said reported(const struct hx_check_input *in, const char *task, long *n,
                          const cJSON **bad)
{
	enum said total = SAID_NOTHING;
	unsigned last = 0;

	*n = 0;
	for (size_t i = 0; i < in->n_msgs; i++)
		if (in->msgs[i].session > last)
			last = in->msgs[i].session;
	for (unsigned s = 0; s <= last; s++) {
		long k = 0;
		enum said one = reported_in(in, task, s, &k, bad);

		if (one == SAID_NO_COUNT || one == SAID_UNOBSERVED)
			return one;
		if (one == SAID_COUNT) {
			*n += k;
			total = SAID_COUNT;
		}
	}
	return total;
}

/* The detail for task @task whose result's attempts, @bad (NULL: none),
 * are no count; a new string. */
static char *no_count(const char *task, const cJSON *bad)
{
	char *text, *d;

	if (bad == NULL)
		return fa_xasprintf("task %s: the client's result has no \"attempts\", "
		                    "not a count",
		                    task);
	text = fa_xcheck(cJSON_PrintUnformatted(bad), "attempts.hidden detail");
	d = fa_xasprintf("task %s: the client reported attempts %.*s%s, not a count", task,
	                 NO_COUNT_SHOWN, text, strlen(text) > NO_COUNT_SHOWN ? "..." : "");
	cJSON_free(text);
	return d;
}

void hx_tally_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	size_t n_tasks = in->sc != NULL ? in->sc->harness.n_tasks : 0;
	struct hx_evidence bad = { 0 }, all = { 0 };
	size_t judged = 0, differ = 0, unobserved = 0;
	char *first = NULL;

	if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("exec mode: the client reports no attempts");
		goto out;
	}
	for (size_t t = 0; t < n_tasks; t++) {
		const char *id = in->sc->harness.tasks[t].id;
		const cJSON *odd = NULL;
		long said = 0, seen = 0;
		enum said how = reported(in, id, &said, &odd);
		size_t mark = bad.n;

		if (how == SAID_NOTHING)
			continue;
		for (size_t i = 0; i < in->n_attempts; i++)
			seen += same(in->attempts[i].task, id);
		/* null: nothing to compare unless the provider saw a retry */
		if (how == SAID_UNOBSERVED && seen <= 1) {
			unobserved++;
			continue;
		}
		judged++;
		for (size_t i = 0; i < in->n_attempts; i++) {
			if (!same(in->attempts[i].task, id))
				continue;
			hx_evidence_add(&all, in->attempts[i].seq);
			hx_evidence_add(&bad, in->attempts[i].seq);
		}
		if (how == SAID_COUNT && said == seen) {
			bad.n = mark;
			continue;
		}
		if (differ++ > 0)
			continue;
		if (how == SAID_NO_COUNT)
			first = no_count(id, odd);
		else if (how == SAID_UNOBSERVED)
			first = fa_xasprintf(
			        "task %s: the client cannot observe its attempts (it reported "
			        "\"attempts\": null), and the provider saw %ld: the library "
			        "retried where the application can neither see nor count it",
			        id, seen);
		else
			first = fa_xasprintf(
			        "task %s: the client reported %ld attempt%s, the provider "
			        "saw %ld (%s)",
			        id, said, said == 1 ? "" : "s", seen,
			        seen > said ? "attempts hidden from the client's count"
			                    : "reported attempts that never arrived");
	}
	if (judged == 0 && unobserved > 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("the client cannot observe its attempts (\"attempts\": "
		                         "null) and the provider saw at most one per task (%zu "
		                         "task%s): no retry to hide",
		                         unobserved, unobserved == 1 ? "" : "s");
	} else if (judged == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the client reported on no task");
	} else if (differ > 0) {
		r->verdict = HX_FAIL;
		r->detail =
		        fa_xasprintf("%s%s", first, differ > 1 ? "; other tasks differ too" : "");
		hx_evidence_give(&bad, r);
	} else {
		char *more =
		        unobserved == 0
		                ? fa_xstrdup("")
		                : fa_xasprintf(
		                          "; %zu more reported \"attempts\": null with at most "
		                          "one attempt each, not judged",
		                          unobserved);

		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%zu task%s: the client's counts match the "
		                         "provider's%s",
		                         judged, judged == 1 ? "" : "s", more);
		free(more);
		hx_evidence_give(&all, r);
	}
out:
	free(first);
	hx_evidence_release(&bad);
	hx_evidence_release(&all);
}
