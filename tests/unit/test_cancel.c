/* test_cancel.c -- the quiet window of a cancelled task, and cancel.quiet. */
#include <CUnit/CUnit.h>

#include "cancel.h"
#include "check_fixture.h"
#include "expect.h"

/* Tasks t1 and t2, both sent at +0 ms, neither cancelled yet. */
static void setup(struct fx *f, const char *expect)
{
	fx_init(f, expect, "t", 2);
}

/* An attempt of @task arriving at @arr_ms, answered @status at
 * @arr_ms + 1 with a pause until @pause_ms (-1: none). */
static void add(struct fx *f, const char *task, int64_t arr_ms, int status, int64_t pause_ms)
{
	fx_add(f, task, arr_ms, status)->pause_until_us = pause_ms < 0 ? -1 : pause_ms * FX_MS;
}

static int64_t until(struct fx *f, const char *task, int64_t cancel_ms, int margin_ms)
{
	return hx_cancel_quiet_until(f->a, f->n, f->m, f->n_msgs, task, cancel_ms * FX_MS,
	                             margin_ms);
}

static struct hx_check_result judge(struct fx *f, enum hx_mode mode)
{
	return fx_judge(f, hx_cancel_check, "cancel.quiet", mode);
}

/* ---- the quiet window ---- */

static void quiet_until__is_the_cancel_plus_the_margin_without_a_wait(void)
{
	struct fx f;

	setup(&f, NULL);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), 1500 * FX_MS);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 0), 500 * FX_MS);
	/* an answer without a pause adds nothing */
	add(&f, "t1", 0, 503, -1);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), 1500 * FX_MS);
	fx_release(&f);
}

static void quiet_until__covers_a_pause_told_before_the_cancel(void)
{
	struct fx f;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, 10001);   /* told: wait until +10001 ms */
	add(&f, "t2", 0, 429, 50000);   /* another task's pause */
	add(&f, "t1", 800, 503, 40000); /* answered after the cancel */
	CU_ASSERT_EQUAL(until(&f, "t1", 300, 1000), 11001 * FX_MS);
	/* an answer the client never got tells it nothing */
	f.a[0].delivered = FA_DELIVERED_DROPPED;
	CU_ASSERT_EQUAL(until(&f, "t1", 300, 1000), 1300 * FX_MS);
	fx_release(&f);
}

static void quiet_until__covers_the_retry_the_client_scheduled(void)
{
	struct fx f;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	fx_say(&f, 2,
	       "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 2, "
	       "\"due_in_ms\": 100}");
	fx_say(&f, 3,
	       "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 2, "
	       "\"due_in_ms\": 4000}");
	fx_say(&f, 4,
	       "{\"type\": \"retry_scheduled\", \"task\": \"t2\", \"attempt\": 2, "
	       "\"due_in_ms\": 90000}");
	fx_say(&f, 900,
	       "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 3, "
	       "\"due_in_ms\": 90000}"); /* after the cancel */
	/* the last before the cancel, counted from the cancel */
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), (500 + 4000 + 1000) * FX_MS);
	/* exec mode has no lines */
	CU_ASSERT_EQUAL(hx_cancel_quiet_until(f.a, f.n, NULL, 0, "t1", 500 * FX_MS, 1000),
	                1500 * FX_MS);
	fx_release(&f);
}

static void quiet_until__margin_comes_from_the_scenario(void)
{
	struct fx f;

	setup(&f, "{\"cancel.quiet\": {\"margin_ms\": 2500}}");
	CU_ASSERT_EQUAL(hx_expect_int(&f.sc, "cancel.quiet", "margin_ms"), 2500);
	fx_release(&f);
	setup(&f, NULL);
	CU_ASSERT_EQUAL(hx_expect_int(&f.sc, "cancel.quiet", "margin_ms"), HX_CANCEL_MARGIN_MS);
	CU_ASSERT_EQUAL(hx_expect_int(NULL, "cancel.quiet", "margin_ms"), HX_CANCEL_MARGIN_MS);
	fx_release(&f);
}

/* ---- cancel.quiet ---- */

static void cancel__passes_a_task_that_stays_quiet(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, 10001);
	add(&f, "t2", 20000, 200, -1); /* another task may go on */
	f.runs[0].t_cancel_us = 300 * FX_MS;
	f.runs[0].t_quiet_until_us = 11001 * FX_MS;
	fx_result(&f, 310, "t1", "cancelled");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task t1 was cancelled at +300.0 ms after 1 attempt "
	                       "and sent nothing more (watched until +11001.0 ms), result "
	                       "cancelled");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__fails_a_retry_that_wakes_up(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, 10001);
	add(&f, "t1", 10002, 503, -1); /* the retry left armed */
	f.runs[0].t_cancel_us = 300 * FX_MS;
	f.runs[0].t_quiet_until_us = 11001 * FX_MS;
	fx_result(&f, 310, "t1", "cancelled");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task t1 was cancelled at +300.0 ms and still sent "
	                       "seq 2 at +10002.0 ms, 9702.0 ms after the cancel (watched "
	                       "until +11001.0 ms; tolerance 50 ms)");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 2);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__tolerates_an_attempt_already_on_its_way(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	add(&f, "t1", 340, 503, -1); /* 40 ms after the cancel */
	f.runs[0].t_cancel_us = 300 * FX_MS;
	fx_result(&f, 350, "t1", "cancelled");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "after 2 attempts"));
	CU_ASSERT_TRUE(fx_has(&r, "watched until the scenario ended"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* with no tolerance the same attempt fails */
	setup(&f, "{\"cancel.quiet\": {\"tolerance_ms\": 0}}");
	add(&f, "t1", 0, 503, -1);
	add(&f, "t1", 340, 503, -1);
	f.runs[0].t_cancel_us = 300 * FX_MS;
	fx_result(&f, 350, "t1", "cancelled");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "tolerance 0 ms"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__fails_a_missing_or_wrong_result(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	f.runs[0].t_cancel_us = 300 * FX_MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "task t1 was cancelled at +300.0 ms and sent nothing more"));
	CU_ASSERT_TRUE(fx_has(&r, "but reported no result"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	hx_check_result_release(&r);
	fx_result(&f, 2000, "t1", "failed");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "but reported result failed, not cancelled"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__is_na_without_a_cancel_or_in_exec_mode(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no task was cancelled");
	hx_check_result_release(&r);
	/* exec mode: even an attempt after the cancel proves nothing */
	f.runs[0].t_cancel_us = 300 * FX_MS;
	add(&f, "t1", 5000, 503, -1);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "exec mode"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__a_task_finished_before_its_cancel_is_not_judged(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	fx_result(&f, 5, "t1", "succeeded");
	f.runs[0].t_cancel_us = 300 * FX_MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 had already reported its result when its "
	                                 "cancel went out at +300.0 ms, and sent nothing after it: "
	                                 "nothing was left to stop");
	hx_check_result_release(&r);
	fx_release(&f);

	/* a result that crossed the cancel line on its way is the same */
	setup(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	fx_result(&f, 320, "t1", "succeeded");
	f.runs[0].t_cancel_us = 300 * FX_MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	hx_check_result_release(&r);
	fx_release(&f);

	/* a result that crossed the cancel says nothing of a retry left
	 * armed: an attempt after the cancel still fails */
	setup(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	fx_result(&f, 320, "t1", "failed");
	f.runs[0].t_cancel_us = 300 * FX_MS;
	add(&f, "t1", 2100, 503, -1);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "still sent seq 2 at +2100.0 ms"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* but one read well after the cancel is a task that went on */
	setup(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	fx_result(&f, 900, "t1", "succeeded");
	f.runs[0].t_cancel_us = 300 * FX_MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "reported result succeeded, not cancelled"));
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_cancel_register(void)
{
	CU_pSuite s = CU_add_suite("cancel", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "quiet_until__is_the_cancel_plus_the_margin_without_a_wait",
	            quiet_until__is_the_cancel_plus_the_margin_without_a_wait);
	CU_add_test(s, "quiet_until__covers_a_pause_told_before_the_cancel",
	            quiet_until__covers_a_pause_told_before_the_cancel);
	CU_add_test(s, "quiet_until__covers_the_retry_the_client_scheduled",
	            quiet_until__covers_the_retry_the_client_scheduled);
	CU_add_test(s, "quiet_until__margin_comes_from_the_scenario",
	            quiet_until__margin_comes_from_the_scenario);
	CU_add_test(s, "cancel__passes_a_task_that_stays_quiet",
	            cancel__passes_a_task_that_stays_quiet);
	CU_add_test(s, "cancel__fails_a_retry_that_wakes_up", cancel__fails_a_retry_that_wakes_up);
	CU_add_test(s, "cancel__tolerates_an_attempt_already_on_its_way",
	            cancel__tolerates_an_attempt_already_on_its_way);
	CU_add_test(s, "cancel__fails_a_missing_or_wrong_result",
	            cancel__fails_a_missing_or_wrong_result);
	CU_add_test(s, "cancel__is_na_without_a_cancel_or_in_exec_mode",
	            cancel__is_na_without_a_cancel_or_in_exec_mode);
	CU_add_test(s, "cancel__a_task_finished_before_its_cancel_is_not_judged",
	            cancel__a_task_finished_before_its_cancel_is_not_judged);
}
