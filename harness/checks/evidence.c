/* evidence.c -- what a check holds up: the journal in arrival order, the seqs behind its verdict.
 */
#include "evidence.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void hx_evidence_add(struct hx_evidence *e, uint64_t seq)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 8;
		e->v = fa_xrealloc(e->v, e->cap * sizeof(*e->v));
	}
	e->v[e->n++] = seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void hx_evidence_give(struct hx_evidence *e, struct hx_check_result *r)
{
	size_t n = 0;

	if (e->n > 1)
		qsort(e->v, e->n, sizeof(*e->v), cmp_u64);
	for (size_t i = 0; i < e->n; i++)
		if (n == 0 || e->v[n - 1] != e->v[i])
			e->v[n++] = e->v[i];
	free(r->evidence);
	r->evidence = n ? e->v : NULL;
	r->n_evidence = n;
	if (n == 0)
		free(e->v);
	memset(e, 0, sizeof(*e));
}

void hx_evidence_release(struct hx_evidence *e)
{
	if (e == NULL)
		return;
	free(e->v);
	memset(e, 0, sizeof(*e));
}

static int cmp_arrival(const void *a, const void *b)
{
	const struct fa_attempt *x = *(const struct fa_attempt *const *)a;
	const struct fa_attempt *y = *(const struct fa_attempt *const *)b;

	if (x->t_arrival_us != y->t_arrival_us)
		return x->t_arrival_us < y->t_arrival_us ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void hx_evidence_sort_arrival(const struct fa_attempt **att, size_t n)
{
	if (n > 1)
		qsort(att, n, sizeof(*att), cmp_arrival);
}
