/* test_concurrency.c -- wait.concurrency on hand-made journals. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check_fixture.h"
#include "concurrency.h"

/* Tasks r1..r4, all sent at +0 ms unless a test says otherwise. */
static void setup(struct fx *f, const char *expect)
{
	fx_init(f, expect, "r", 4);
}

/* An attempt of @task in @scope in flight from @arr_ms to @resp_ms. */
static struct fa_attempt *add(struct fx *f, const char *task, const char *scope, int64_t arr_ms,
                              int64_t resp_ms)
{
	struct fa_attempt *a = fx_add(f, task, arr_ms, 200);

	a->scope = fa_xstrdup(scope);
	a->t_response_us = resp_ms * FX_MS;
	a->t_done_us = resp_ms * FX_MS + 1;
	return a;
}

static struct hx_check_result judge(struct fx *f)
{
	return fx_judge(f, hx_concurrency_check, "wait.concurrency", HX_MODE_STDIO);
}

#define CAP2 "{\"wait.concurrency\": {\"max_concurrent_requests\": 2}}"

static void concurrency__passes_a_client_that_keeps_the_cap(void)
{
	struct fx f;
	struct hx_check_result r;

	/* two at once; the third starts the instant the first is answered */
	setup(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:a", 300, 600);
	add(&f, "r4", "user:a", 305, 605);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "at most 2 attempts of a scope in flight at once "
	                       "(max_concurrent_requests 2); busiest: scope user:a at +5.0 ms, "
	                       "seq 1, 2 (tasks r1, r2); task r3 waited 300.0 ms for a slot");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__fails_above_the_cap(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:b", 6, 306); /* another scope */
	add(&f, "r3", "user:a", 299, 600);
	add(&f, "r4", "user:a", 400, 700);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "scope user:a had 3 attempts in flight at +299.0 ms: "
	                       "seq 1, 2, 4 (tasks r1, r2, r3); max_concurrent_requests 2");
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	CU_ASSERT_EQUAL(r.evidence[1], 2);
	CU_ASSERT_EQUAL(r.evidence[2], 4);
	hx_check_result_release(&r);
	fx_release(&f);

	/* arrivals at the same instant all count */
	setup(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 0, 300);
	add(&f, "r3", "user:a", 0, 300);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "3 attempts in flight at +0.0 ms"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__an_abandoned_answer_frees_its_slot(void)
{
	struct fx f;
	struct hx_check_result r;

	/* r1 timed out at 100 ms and retried while the provider still held
	 * the first answer: the client had one request of r1 open; r3 waited
	 * for a slot while r1's retry and r2 ran */
	setup(&f, CAP2);
	f.runs[1].t_sent_us = 140 * FX_MS;
	add(&f, "r1", "user:a", 0, 5000)->delivered = FA_DELIVERED_CLIENT_GONE;
	add(&f, "r1", "user:a", 100, 200);
	add(&f, "r2", "user:a", 150, 250);
	add(&f, "r3", "user:a", 250, 400);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "at most 2 attempts"));
	hx_check_result_release(&r);
	/* an answer the client did get held its slot to the end */
	f.a[0].delivered = FA_DELIVERED_COMPLETE;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "3 attempts in flight at +150.0 ms"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* a cancel frees it as well */
	setup(&f, CAP2);
	f.runs[1].t_sent_us = f.runs[3].t_sent_us = 140 * FX_MS;
	f.runs[0].t_cancel_us = 120 * FX_MS;
	add(&f, "r1", "user:a", 0, 5000)->delivered = FA_DELIVERED_CLIENT_GONE;
	add(&f, "r2", "user:a", 150, 250);
	add(&f, "r4", "user:a", 150, 250);
	add(&f, "r3", "user:a", 250, 400);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	f.runs[0].t_cancel_us = -1;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__is_na_without_a_cap_or_a_chance_to_overlap(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:a", 6, 306);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "max_concurrent_requests"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* one task at a time: the harness sent each after the last ended */
	setup(&f, CAP2);
	add(&f, "r1", "user:a", 0, 100);
	add(&f, "r1", "user:a", 200, 300);
	add(&f, "r2", "user:a", 400, 500);
	add(&f, "r3", "user:b", 50, 60);
	f.runs[1].t_sent_us = 350 * FX_MS;
	f.runs[2].t_sent_us = 40 * FX_MS;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "the cap was never tested: no task was in the client's hands "
	                          "while 2 attempts of its scope were in flight"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	/* r2 in hand while r1 ran: two tasks cannot break a cap of 2 */
	f.runs[1].t_sent_us = 0;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	hx_check_result_release(&r);
	fx_release(&f);
}

/* Four tasks sent at once to a client that takes its time to start each
 * (an exec client's processes on a loaded machine, or under a time scale):
 * they never overlap, but nothing shows the client waited for a slot. */
static void concurrency__is_na_when_late_starts_keep_tasks_apart(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, CAP2);
	add(&f, "r1", "user:a", 40, 100);
	add(&f, "r2", "user:a", 90, 150);
	add(&f, "r3", "user:a", 160, 220);
	add(&f, "r4", "user:a", 210, 270);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "(180.0 ms at most: the longest any of the first 2 tasks "
	                          "of a scope waited for its first attempt, a tighter cap's wait "
	                          "included; 4 attempts with a scope)"));
	hx_check_result_release(&r);
	/* the same client, started at once and kept at the cap: judged */
	fa_attempt_release(&f.a[2]);
	fa_attempt_release(&f.a[3]);
	f.n = 2;
	add(&f, "r3", "user:a", 300, 400);
	add(&f, "r4", "user:a", 305, 405);
	f.a[0].t_arrival_us = 0;
	f.a[1].t_arrival_us = 5 * FX_MS;
	f.a[0].t_response_us = 300 * FX_MS;
	f.a[1].t_response_us = 305 * FX_MS;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_concurrency_register(void)
{
	CU_pSuite s = CU_add_suite("concurrency", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "concurrency__passes_a_client_that_keeps_the_cap",
	            concurrency__passes_a_client_that_keeps_the_cap);
	CU_add_test(s, "concurrency__fails_above_the_cap", concurrency__fails_above_the_cap);
	CU_add_test(s, "concurrency__an_abandoned_answer_frees_its_slot",
	            concurrency__an_abandoned_answer_frees_its_slot);
	CU_add_test(s, "concurrency__is_na_without_a_cap_or_a_chance_to_overlap",
	            concurrency__is_na_without_a_cap_or_a_chance_to_overlap);
	CU_add_test(s, "concurrency__is_na_when_late_starts_keep_tasks_apart",
	            concurrency__is_na_when_late_starts_keep_tasks_apart);
}
