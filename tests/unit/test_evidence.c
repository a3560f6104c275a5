/* test_evidence.c -- evidence lists handed to a check's result, the journal in arrival order. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "evidence.h"

static void evidence__is_given_ascending_without_repeats(void)
{
	struct hx_evidence e = { 0 };
	struct hx_check_result r = { .id = "x" };
	static const uint64_t seqs[] = { 9, 3, 7, 3, 1, 9, 9 };

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		hx_evidence_add(&e, seqs[i]);
	CU_ASSERT_EQUAL(e.n, 7);
	hx_evidence_give(&e, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_evidence, 4);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	CU_ASSERT_EQUAL(r.evidence[1], 3);
	CU_ASSERT_EQUAL(r.evidence[2], 7);
	CU_ASSERT_EQUAL(r.evidence[3], 9);
	/* the list is emptied and can gather again */
	CU_ASSERT_PTR_NULL(e.v);
	CU_ASSERT_EQUAL(e.n, 0);
	hx_evidence_add(&e, 5);
	hx_evidence_give(&e, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 5);
	hx_check_result_release(&r);
}

static void evidence__empty_list_leaves_no_evidence(void)
{
	struct hx_evidence e = { 0 };
	struct hx_check_result r = { .id = "x" };

	hx_evidence_add(&e, 2);
	hx_evidence_give(&e, &r);
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	/* an empty list replaces what the result held */
	hx_evidence_give(&e, &r);
	CU_ASSERT_PTR_NULL(r.evidence);
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_evidence_add(&e, 4);
	hx_evidence_release(&e);
	CU_ASSERT_PTR_NULL(e.v);
	CU_ASSERT_EQUAL(e.n, 0);
	hx_evidence_release(NULL);
	hx_check_result_release(&r);
}

static void evidence__grows_past_its_first_block(void)
{
	struct hx_evidence e = { 0 };
	struct hx_check_result r = { .id = "x" };

	for (uint64_t s = 1000; s > 0; s--)
		hx_evidence_add(&e, s);
	hx_evidence_give(&e, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_evidence, 1000);
	for (size_t i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(r.evidence[i], i + 1);
	hx_check_result_release(&r);
}

static void evidence__arrival_order_is_by_time_then_seq(void)
{
	struct fa_attempt a[4];
	const struct fa_attempt *order[4];

	memset(a, 0, sizeof(a));
	/* the journal is in completion order: seq 1 arrived last */
	a[0].seq = 1;
	a[0].t_arrival_us = 300;
	a[1].seq = 2;
	a[1].t_arrival_us = 100;
	a[2].seq = 3;
	a[2].t_arrival_us = 200;
	a[3].seq = 4;
	a[3].t_arrival_us = 100;
	for (size_t i = 0; i < 4; i++)
		order[3 - i] = &a[i];
	hx_evidence_sort_arrival(order, 4);
	CU_ASSERT_EQUAL(order[0]->seq, 2);
	CU_ASSERT_EQUAL(order[1]->seq, 4);
	CU_ASSERT_EQUAL(order[2]->seq, 3);
	CU_ASSERT_EQUAL(order[3]->seq, 1);
	hx_evidence_sort_arrival(order, 0);
	CU_ASSERT_EQUAL(order[0]->seq, 2);
}

void test_evidence_register(void)
{
	CU_pSuite s = CU_add_suite("evidence", NULL, NULL);

	CU_add_test(s, "evidence__is_given_ascending_without_repeats",
	            evidence__is_given_ascending_without_repeats);
	CU_add_test(s, "evidence__empty_list_leaves_no_evidence",
	            evidence__empty_list_leaves_no_evidence);
	CU_add_test(s, "evidence__grows_past_its_first_block",
	            evidence__grows_past_its_first_block);
	CU_add_test(s, "evidence__arrival_order_is_by_time_then_seq",
	            evidence__arrival_order_is_by_time_then_seq);
}
