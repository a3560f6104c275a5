/* tally.c -- attempts.hidden: the client's count of its attempts against the provider's. */
#include "tally.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* What the client's process @session said it sent for @task: the
 * attempts of its result, else its action_sent lines; -1 when it said
 * nothing. */
static long reported_in(const struct hx_check_input *in, const char *task, unsigned session)
{
	long sent = 0;
	bool any = false;

	for (size_t i = 0; i < in->n_msgs; i++) {
		const struct hx_client_msg *m = &in->msgs[i];

		if (m->session != session || !same(m->task, task))
			continue;
		if (same(m->type, "result")) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(m->json, "attempts");

			if (cJSON_IsNumber(n) && n->valuedouble >= 0)
				return (long)n->valuedouble;
		} else if (same(m->type, "action_sent")) {
			sent++;
			any = true;
		}
	}
	return any ? sent : -1;
}

/* What the client said it sent for @task, summed over its processes (a
 * killed one and the one restarted after it each count their own): -1
 * when none said anything. */
static long reported(const struct hx_check_input *in, const char *task)
{
	unsigned last = 0;
	long total = -1;

	for (size_t i = 0; i < in->n_msgs; i++)
		if (in->msgs[i].session > last)
			last = in->msgs[i].session;
	for (unsigned s = 0; s <= last; s++) {
		long n = reported_in(in, task, s);

		if (n >= 0)
			total = total < 0 ? n : total + n;
	}
	return total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void hx_tally_check(const struct hx_check_input *in, struct hx_check_result *r)
{
	size_t n_tasks = in->sc != NULL ? in->sc->harness.n_tasks : 0;
	uint64_t *bad = fa_xcalloc(in->n_attempts + 1, sizeof(*bad));
	uint64_t *all = fa_xcalloc(in->n_attempts + 1, sizeof(*all));
	size_t n_bad = 0, n_all = 0, judged = 0, differ = 0;
	const char *first = NULL;
	long first_said = 0, first_seen = 0;

	if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("exec mode: the client reports no attempts");
		goto out;
	}
	for (size_t t = 0; t < n_tasks; t++) {
		const char *id = in->sc->harness.tasks[t].id;
		long said = reported(in, id), seen = 0;
		size_t mark = n_bad;

		if (said < 0)
			continue;
		judged++;
		for (size_t i = 0; i < in->n_attempts; i++) {
			if (!same(in->attempts[i].task, id))
				continue;
			seen++;
			all[n_all++] = in->attempts[i].seq;
			bad[n_bad++] = in->attempts[i].seq;
		}
		if (said == seen) {
			n_bad = mark;
			continue;
		}
		if (differ++ == 0) {
			first = id;
			first_said = said;
			first_seen = seen;
		}
	}
	if (judged == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the client reported on no task");
		goto out;
	}
	if (differ > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
			"task %s: the client reported %ld attempt%s, the provider "
			"saw %ld (%s)%s", first, first_said, first_said == 1 ? "" : "s",
			first_seen, first_seen > first_said ? "attempts hidden from the "
			"client's count" : "reported attempts that never arrived",
			differ > 1 ? "; other tasks differ too" : "");
		qsort(bad, n_bad, sizeof(*bad), cmp_u64);
		r->evidence = bad;
		r->n_evidence = n_bad;
		bad = NULL;
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%zu task%s: the client's counts match the "
					 "provider's", judged, judged == 1 ? "" : "s");
		qsort(all, n_all, sizeof(*all), cmp_u64);
		r->evidence = n_all ? all : NULL;
		r->n_evidence = n_all;
		if (n_all)
			all = NULL;
	}
out:
	free(bad);
	free(all);
}
