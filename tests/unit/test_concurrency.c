/* test_concurrency.c -- wait.concurrency on hand-made journals. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "concurrency.h"

#define MS 1000 /* µs */

/* Tasks r1..r4, all sent at +0 ms unless a test says otherwise. */
struct fx {
	struct fa_scenario sc;
	struct fa_task_spec tasks[4];
	struct hx_task_run runs[4];
	size_t n_runs;
	struct fa_attempt a[16];
	size_t n;
};

static void fx_init(struct fx *f, const char *expect)
{
	static const char *ids[] = { "r1", "r2", "r3", "r4" };

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < 4; i++) {
		f->tasks[i].id = (char *)ids[i];
		f->runs[i].spec = &f->tasks[i];
		f->runs[i].sent = true;
		f->runs[i].t_sent_us = 0;
		f->runs[i].t_exit_us = -1;
		f->runs[i].t_cancel_us = -1;
	}
	f->n_runs = 4;
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = 4;
	f->sc.harness.expect = expect ? cJSON_Parse(expect) : NULL;
}

/* An attempt of @task in @scope in flight from @arr_ms to @resp_ms. */
static struct fa_attempt *add(struct fx *f, const char *task, const char *scope,
			      int64_t arr_ms, int64_t resp_ms)
{
	struct fa_attempt *a = &f->a[f->n];

	CU_ASSERT_FATAL(f->n < 16);
	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(task);
	a->scope = fa_xstrdup(scope);
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = resp_ms * MS;
	a->t_done_us = resp_ms * MS + 1;
	a->status = 200;
	a->delivered = FA_DELIVERED_COMPLETE;
	return a;
}

static void fx_release(struct fx *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	cJSON_Delete(f->sc.harness.expect);
}

static struct hx_check_result judge(struct fx *f)
{
	struct hx_check_input in = { .sc = &f->sc, .attempts = f->a, .n_attempts = f->n,
				     .tasks = f->runs, .n_tasks = f->n_runs,
				     .mode = HX_MODE_STDIO };
	struct hx_check_result r = { .id = "wait.concurrency" };

	hx_concurrency_check(&in, &r);
	CU_ASSERT_PTR_NOT_NULL(r.detail);
	return r;
}

#define CAP2 "{\"wait.concurrency\": {\"max_concurrent_requests\": 2}}"

static void concurrency__passes_a_client_that_keeps_the_cap(void)
{
	struct fx f;
	struct hx_check_result r;

	/* two at once; the third starts the instant the first is answered */
	fx_init(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:a", 300, 600);
	add(&f, "r4", "user:a", 305, 605);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail, "at most 2 attempts of a scope in flight at once "
			       "(max_concurrent_requests 2); busiest: scope user:a at +5.0 ms, "
			       "seq 1, 2 (tasks r1, r2)");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__fails_above_the_cap(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:b", 6, 306); /* another scope */
	add(&f, "r3", "user:a", 299, 600);
	add(&f, "r4", "user:a", 400, 700);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "scope user:a had 3 attempts in flight at +299.0 ms: "
			       "seq 1, 2, 4 (tasks r1, r2, r3); max_concurrent_requests 2");
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	CU_ASSERT_EQUAL(r.evidence[1], 2);
	CU_ASSERT_EQUAL(r.evidence[2], 4);
	hx_check_result_release(&r);
	fx_release(&f);

	/* arrivals at the same instant all count */
	fx_init(&f, CAP2);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 0, 300);
	add(&f, "r3", "user:a", 0, 300);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(strstr(r.detail, "3 attempts in flight at +0.0 ms") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__an_abandoned_answer_frees_its_slot(void)
{
	struct fx f;
	struct hx_check_result r;

	/* r1 timed out at 100 ms and retried while the provider still held
	 * the first answer: the client had one request of r1 open */
	fx_init(&f, CAP2);
	add(&f, "r1", "user:a", 0, 5000)->delivered = FA_DELIVERED_CLIENT_GONE;
	add(&f, "r1", "user:a", 100, 200);
	add(&f, "r2", "user:a", 150, 250);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	/* a cancel frees it as well */
	fa_attempt_release(&f.a[1]);
	memmove(&f.a[1], &f.a[2], sizeof(f.a[0]));
	f.n = 2;
	f.a[1].seq = 2;
	f.runs[0].t_cancel_us = 120 * MS;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(strstr(r.detail, "at most 1 attempt of a scope") != NULL);
	hx_check_result_release(&r);
	/* an answer the client did get held its slot to the end */
	f.runs[0].t_cancel_us = -1;
	f.a[0].delivered = FA_DELIVERED_COMPLETE;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(strstr(r.detail, "at most 2 attempts") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void concurrency__is_na_without_a_cap_or_a_chance_to_overlap(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	add(&f, "r1", "user:a", 0, 300);
	add(&f, "r2", "user:a", 5, 305);
	add(&f, "r3", "user:a", 6, 306);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(strstr(r.detail, "max_concurrent_requests") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);

	/* one task at a time: the harness sent each after the last ended */
	fx_init(&f, CAP2);
	add(&f, "r1", "user:a", 0, 100);
	add(&f, "r1", "user:a", 200, 300);
	add(&f, "r2", "user:a", 400, 500);
	add(&f, "r3", "user:b", 50, 60);
	f.runs[1].t_sent_us = 350 * MS;
	f.runs[2].t_sent_us = 40 * MS;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(strstr(r.detail, "no scope had two attempts that could overlap") != NULL);
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	/* r2 in hand while r1 ran, even if the client waited: judged */
	f.runs[1].t_sent_us = 0;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(strstr(r.detail, "at most 1 attempt") != NULL);
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
}
