/* test_cancel.c -- the quiet window of a cancelled task, and cancel.quiet. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "cancel.h"

#define MS 1000 /* µs */

/* Tasks t1 and t2, both sent at +0 ms, neither cancelled yet. */
struct fx {
	struct fa_scenario sc;
	struct fa_task_spec tasks[2];
	struct hx_task_run runs[2];
	struct fa_attempt a[8];
	size_t n;
	struct hx_client_msg m[8];
	size_t n_msgs;
};

static void fx_init(struct fx *f, const char *expect)
{
	memset(f, 0, sizeof(*f));
	f->tasks[0].id = "t1";
	f->tasks[1].id = "t2";
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = 2;
	f->sc.harness.expect = expect ? cJSON_Parse(expect) : NULL;
	for (size_t i = 0; i < 2; i++) {
		f->runs[i].spec = &f->tasks[i];
		f->runs[i].sent = true;
		f->runs[i].t_cancel_us = -1;
		f->runs[i].t_quiet_until_us = -1;
	}
}

/* An attempt of @task arriving at @arr_ms, answered @status at
 * @arr_ms + 1 with a pause until @pause_ms (-1: none). */
static uint64_t add(struct fx *f, const char *task, int64_t arr_ms, int status,
		    int64_t pause_ms)
{
	struct fa_attempt *a = &f->a[f->n];

	CU_ASSERT_FATAL(f->n < 8);
	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(task);
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = a->t_done_us = (arr_ms + 1) * MS;
	a->status = status;
	a->pause_until_us = pause_ms < 0 ? -1 : pause_ms * MS;
	a->delivered = FA_DELIVERED_COMPLETE;
	return a->seq;
}

/* A line the client printed, read at @t_ms. */
static void say(struct fx *f, int64_t t_ms, const char *line)
{
	struct hx_client_msg *m = &f->m[f->n_msgs++];

	m->json = cJSON_Parse(line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->json);
	m->t_us = t_ms * MS;
	m->type = fa_xstrdup(cJSON_GetObjectItem(m->json, "type")->valuestring);
	m->task = fa_xstrdup(cJSON_GetObjectItem(m->json, "task")->valuestring);
}

static void fx_release(struct fx *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	for (size_t i = 0; i < f->n_msgs; i++)
		hx_client_msg_release(&f->m[i]);
	cJSON_Delete(f->sc.harness.expect);
}

static int64_t until(struct fx *f, const char *task, int64_t cancel_ms, int margin_ms)
{
	return hx_cancel_quiet_until(f->a, f->n, f->m, f->n_msgs, task, cancel_ms * MS,
				     margin_ms);
}

static struct hx_check_result judge(struct fx *f, enum hx_mode mode)
{
	struct hx_check_input in = { .sc = &f->sc, .attempts = f->a, .n_attempts = f->n,
				     .tasks = f->runs, .n_tasks = 2, .mode = mode,
				     .msgs = f->m, .n_msgs = f->n_msgs };
	struct hx_check_result r = { .id = "cancel.quiet" };

	hx_cancel_check(&in, &r);
	CU_ASSERT_PTR_NOT_NULL(r.detail);
	return r;
}

static bool has(const struct hx_check_result *r, const char *s)
{
	return r->detail != NULL && strstr(r->detail, s) != NULL;
}

/* ---- the quiet window ---- */

static void quiet_until__is_the_cancel_plus_the_margin_without_a_wait(void)
{
	struct fx f;

	fx_init(&f, NULL);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), 1500 * MS);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 0), 500 * MS);
	/* an answer without a pause adds nothing */
	add(&f, "t1", 0, 503, -1);
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), 1500 * MS);
	fx_release(&f);
}

static void quiet_until__covers_a_pause_told_before_the_cancel(void)
{
	struct fx f;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, 10001);   /* told: wait until +10001 ms */
	add(&f, "t2", 0, 429, 50000);   /* another task's pause */
	add(&f, "t1", 800, 503, 40000); /* answered after the cancel */
	CU_ASSERT_EQUAL(until(&f, "t1", 300, 1000), 11001 * MS);
	/* an answer the client never got tells it nothing */
	f.a[0].delivered = FA_DELIVERED_DROPPED;
	CU_ASSERT_EQUAL(until(&f, "t1", 300, 1000), 1300 * MS);
	fx_release(&f);
}

static void quiet_until__covers_the_retry_the_client_scheduled(void)
{
	struct fx f;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	say(&f, 2, "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 2, "
		   "\"due_in_ms\": 100}");
	say(&f, 3, "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 2, "
		   "\"due_in_ms\": 4000}");
	say(&f, 4, "{\"type\": \"retry_scheduled\", \"task\": \"t2\", \"attempt\": 2, "
		   "\"due_in_ms\": 90000}");
	say(&f, 900, "{\"type\": \"retry_scheduled\", \"task\": \"t1\", \"attempt\": 3, "
		     "\"due_in_ms\": 90000}"); /* after the cancel */
	/* the last before the cancel, counted from the cancel */
	CU_ASSERT_EQUAL(until(&f, "t1", 500, 1000), (500 + 4000 + 1000) * MS);
	/* exec mode has no lines */
	CU_ASSERT_EQUAL(hx_cancel_quiet_until(f.a, f.n, NULL, 0, "t1", 500 * MS, 1000),
			1500 * MS);
	fx_release(&f);
}

static void quiet_until__margin_comes_from_the_scenario(void)
{
	struct fx f;

	fx_init(&f, "{\"cancel.quiet\": {\"margin_ms\": 2500}}");
	CU_ASSERT_EQUAL(hx_cancel_margin_ms(&f.sc), 2500);
	fx_release(&f);
	fx_init(&f, NULL);
	CU_ASSERT_EQUAL(hx_cancel_margin_ms(&f.sc), HX_CANCEL_MARGIN_MS);
	CU_ASSERT_EQUAL(hx_cancel_margin_ms(NULL), HX_CANCEL_MARGIN_MS);
	fx_release(&f);
}

/* ---- cancel.quiet ---- */

static void cancel__passes_a_task_that_stays_quiet(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, 10001);
	add(&f, "t2", 20000, 200, -1); /* another task may go on */
	f.runs[0].t_cancel_us = 300 * MS;
	f.runs[0].t_quiet_until_us = 11001 * MS;
	say(&f, 310, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"cancelled\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 was cancelled at +300.0 ms after 1 attempt "
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

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, 10001);
	add(&f, "t1", 10002, 503, -1); /* the retry left armed */
	f.runs[0].t_cancel_us = 300 * MS;
	f.runs[0].t_quiet_until_us = 11001 * MS;
	say(&f, 310, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"cancelled\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 was cancelled at +300.0 ms and still sent "
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

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	add(&f, "t1", 340, 503, -1); /* 40 ms after the cancel */
	f.runs[0].t_cancel_us = 300 * MS;
	say(&f, 350, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"cancelled\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(has(&r, "after 2 attempts"));
	CU_ASSERT_TRUE(has(&r, "watched until the scenario ended"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* with no tolerance the same attempt fails */
	fx_init(&f, "{\"cancel.quiet\": {\"tolerance_ms\": 0}}");
	add(&f, "t1", 0, 503, -1);
	add(&f, "t1", 340, 503, -1);
	f.runs[0].t_cancel_us = 300 * MS;
	say(&f, 350, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"cancelled\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "tolerance 0 ms"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__fails_a_missing_or_wrong_result(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	f.runs[0].t_cancel_us = 300 * MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "task t1 was cancelled at +300.0 ms and sent nothing more"));
	CU_ASSERT_TRUE(has(&r, "but reported no result"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	hx_check_result_release(&r);
	say(&f, 2000, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"failed\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "but reported result failed, not cancelled"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__is_na_without_a_cancel_or_in_exec_mode(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 503, -1);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no task was cancelled");
	hx_check_result_release(&r);
	/* exec mode: even an attempt after the cancel proves nothing */
	f.runs[0].t_cancel_us = 300 * MS;
	add(&f, "t1", 5000, 503, -1);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(has(&r, "exec mode"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void cancel__a_task_finished_before_its_cancel_is_not_judged(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	say(&f, 5, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"succeeded\"}");
	f.runs[0].t_cancel_us = 300 * MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 had already reported its result before its "
			       "cancel at +300.0 ms: nothing was left to stop");
	hx_check_result_release(&r);
	fx_release(&f);

	/* a result that crossed the cancel line on its way is the same */
	fx_init(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	say(&f, 320, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"succeeded\"}");
	f.runs[0].t_cancel_us = 300 * MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	hx_check_result_release(&r);
	fx_release(&f);

	/* but one read well after the cancel is a task that went on */
	fx_init(&f, NULL);
	add(&f, "t1", 0, 200, -1);
	say(&f, 900, "{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"succeeded\"}");
	f.runs[0].t_cancel_us = 300 * MS;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "reported result succeeded, not cancelled"));
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
