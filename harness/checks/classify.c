/* classify.c -- classify.no_retry_4xx: a request the provider called wrong is not resent. */
#include "classify.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool non_retryable(int status)
{
	return status == 400 || status == 401 || status == 403 || status == 404 || status == 422;
}

/* The same request again: same method and path (query aside). A task
 * that asks something else after a 404 (a write's status read by key,
 * then by client reference) is not retrying. */
static bool same_request(const struct fa_attempt *a, const struct fa_attempt *b)
{
	return same(a->method, b->method) && same(a->path, b->path);
}

void hx_classify_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	struct hx_evidence bad = { 0 }, good = { 0 };
	const struct fa_attempt *first_p = NULL, *first_b = NULL;
	size_t got = 0, retried = 0, first_n = 0, i, j;

	for (i = 0; i < c->n; i++) {
		const struct fa_attempt *p = c->att[i];
		const struct fa_attempt *b = NULL;
		size_t n = 0;

		if (!hx_check_received(p) || !non_retryable(p->status))
			continue;
		got++;
		for (j = 0; j < c->n; j++) {
			if (c->att[j]->t_arrival_us <= p->t_response_us ||
			    !same(c->att[j]->task, p->task) || !same_request(c->att[j], p))
				continue;
			if (b == NULL)
				b = c->att[j];
			n++;
			hx_evidence_add(&bad, c->att[j]->seq);
		}
		if (b == NULL) {
			hx_evidence_add(&good, p->seq);
			continue;
		}
		hx_evidence_add(&bad, p->seq);
		if (first_p == NULL) {
			first_p = p;
			first_b = b;
			first_n = n;
		}
		retried++;
	}

	if (got == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task received 400, 401, 403, 404 or 422");
	} else if (retried > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
		        "task %s got %d at seq %llu and sent %zu more attempt%s "
		        "(first: seq %llu at +%.1f ms)%s",
		        first_p->task, first_p->status, (unsigned long long)first_p->seq, first_n,
		        first_n > 1 ? "s" : "", (unsigned long long)first_b->seq,
		        ms(first_b->t_arrival_us),
		        retried > 1 ? "; other such responses were retried too" : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%zu non-retryable 4xx response%s, none retried", got,
		                         got > 1 ? "s" : "");
		hx_evidence_give(&good, r);
	}
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
