/* test_budget.c -- budget.escalates on hand-made journals and client lines. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "budget.h"

#define MS 1000 /* µs */
#define S 1000000

/* A record that conforms to docs/escalation.schema.json. */
#define RECORD                                                                       \
	"{\"reason\": \"wait_exceeds_budget\", \"goal\": \"fetch report 7\","         \
	" \"action\": \"retry 3 not sent\", \"provider\": \"http://127.0.0.1:1\","     \
	" \"endpoint\": \"/v1/reports/{id}\", \"method\": \"GET\", \"scope\": \"user:a\"," \
	" \"fingerprint\": \"sha256:" HEX64 "\", \"attempts\": [], \"budget\":"        \
	" {\"max_attempts\": 4, \"max_wait_s\": 90, \"attempts_used\": 2,"            \
	" \"waited_ms\": 1000}, \"idempotency_key\": null,"                           \
	" \"provider_operation_id\": null, \"sent\": \"yes\", \"options\": [\"wait\"]}"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Tasks t1 (max_attempts 4, max_wait_s 90) and t2 (no budget), both sent. */
struct fx {
	struct fa_scenario sc;
	struct fa_task_spec tasks[2];
	struct hx_task_run runs[2];
	struct fa_attempt a[16];
	size_t n;
	struct hx_client_msg m[8];
	size_t n_msgs;
};

static void fx_init(struct fx *f, const char *expect)
{
	memset(f, 0, sizeof(*f));
	f->tasks[0] = (struct fa_task_spec){ .id = "t1", .method = "GET",
					      .budget = { .max_attempts = 4, .max_wait_s = 90 } };
	f->tasks[1] = (struct fa_task_spec){ .id = "t2", .method = "GET",
					      .budget = { .max_attempts = 0, .max_wait_s = -1 } };
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = 2;
	f->sc.harness.expect = expect ? cJSON_Parse(expect) : NULL;
	for (size_t i = 0; i < 2; i++) {
		f->runs[i].spec = &f->tasks[i];
		f->runs[i].sent = true;
		f->runs[i].t_sent_us = 0;
		f->runs[i].t_cancel_us = -1;
	}
}

/* An attempt of @task arriving at @arr_ms, answered 503 at once. */
static uint64_t add(struct fx *f, const char *task, int64_t arr_ms)
{
	struct fa_attempt *a = &f->a[f->n];

	CU_ASSERT_FATAL(f->n < 16);
	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(task);
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = a->t_done_us = arr_ms * MS + 1;
	a->status = 503;
	return a->seq;
}

static void say(struct fx *f, const char *line)
{
	struct hx_client_msg *m = &f->m[f->n_msgs++];

	m->json = cJSON_Parse(line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->json);
	m->type = fa_xstrdup(cJSON_GetObjectItem(m->json, "type")->valuestring);
	m->task = fa_xstrdup(cJSON_GetObjectItem(m->json, "task")->valuestring);
}

/* The client escalated t1 with @record and reported @outcome (NULL: no result). */
static void escalate(struct fx *f, const char *record, const char *outcome)
{
	char *line;

	if (record != NULL) {
		line = fa_xasprintf("{\"type\": \"escalation\", \"task\": \"t1\", \"record\": %s}",
				    record);
		say(f, line);
		free(line);
	}
	if (outcome != NULL) {
		line = fa_xasprintf("{\"type\": \"result\", \"task\": \"t1\", \"outcome\": \"%s\"}",
				    outcome);
		say(f, line);
		free(line);
	}
}

static void fx_release(struct fx *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	for (size_t i = 0; i < f->n_msgs; i++)
		hx_client_msg_release(&f->m[i]);
	cJSON_Delete(f->sc.harness.expect);
}

static struct hx_check_result judge(struct fx *f, enum hx_mode mode)
{
	struct hx_check_input in = { .sc = &f->sc, .attempts = f->a, .n_attempts = f->n,
				     .tasks = f->runs, .n_tasks = 2, .mode = mode,
				     .msgs = f->m, .n_msgs = f->n_msgs };
	struct hx_check_result r = { .id = "budget.escalates" };

	hx_budget_check(&in, &r);
	CU_ASSERT_PTR_NOT_NULL(r.detail);
	return r;
}

static bool has(const struct hx_check_result *r, const char *s)
{
	return r->detail != NULL && strstr(r->detail, s) != NULL;
}

#define T1 "{\"budget.escalates\": {\"tasks\": [\"t1\"]}}"

static void budget__passes_a_task_that_stops_and_escalates(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, T1);
	add(&f, "t1", 0);
	add(&f, "t1", 2000);
	add(&f, "t2", 100); /* not listed */
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 stopped within its budget (2 attempts, the "
			       "last (seq 2) 2.0 s after the first; max_attempts 4, "
			       "max_wait_s 90) and escalated (reason wait_exceeds_budget)");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__fails_attempts_past_max_attempts(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, T1);
	for (int i = 0; i < 6; i++)
		add(&f, "t1", i * 1000);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 made 6 attempts, budget max_attempts 4 "
			       "(first past it: seq 5 at +4000.0 ms)");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	CU_ASSERT_EQUAL(r.evidence[0], 5);
	CU_ASSERT_EQUAL(r.evidence[1], 6);
	hx_check_result_release(&r);
	/* exec mode judges the attempts too */
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__fails_an_attempt_past_max_wait_s(void)
{
	struct fx f;
	struct hx_check_result r;

	/* 90 s + 500 ms of tolerance after the first arrival at +1000 ms */
	fx_init(&f, T1);
	add(&f, "t1", 1000);
	add(&f, "t1", 91400);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	add(&f, "t1", 91600);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 kept going past its wait budget: seq 3 "
			       "arrived at +91600.0 ms, 90.6 s after its first attempt (seq 1 "
			       "at +1000.0 ms), budget max_wait_s 90 (tolerance 500 ms)");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);
	fx_release(&f);

	/* the tolerance comes from the scenario */
	fx_init(&f, "{\"budget.escalates\": {\"tasks\": [\"t1\"], \"tolerance_ms\": 0}}");
	add(&f, "t1", 1000);
	add(&f, "t1", 91001);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "(tolerance 0 ms)"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__fails_without_a_valid_escalation_and_result(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, NULL, "failed");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 stopped after 1 attempt but printed no "
			       "escalation line (result failed)");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	hx_check_result_release(&r);
	fx_release(&f);

	fx_init(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, "{\"reason\": \"wait_exceeds_budget\"}", "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1's escalation record breaks the schema: "
			       "$.record: missing member \"goal\"");
	hx_check_result_release(&r);
	fx_release(&f);

	fx_init(&f, T1);
	add(&f, "t1", 0);
	say(&f, "{\"type\": \"escalation\", \"task\": \"t1\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "$.record: missing"));
	hx_check_result_release(&r);
	fx_release(&f);

	fx_init(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, RECORD, "failed");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 printed an escalation record but reported "
			       "result failed, not escalated");
	hx_check_result_release(&r);
	fx_release(&f);

	fx_init(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, RECORD, NULL);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "but no result"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__names_the_first_failing_task_of_several(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, "{\"budget.escalates\": {\"tasks\": [\"t1\", \"t2\"]}}");
	f.tasks[1].budget.max_attempts = 1;
	add(&f, "t1", 0);
	add(&f, "t2", 0);
	add(&f, "t2", 10);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(has(&r, "task t2 made 2 attempts, budget max_attempts 1"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__exec_mode_within_budget_is_na(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, T1);
	add(&f, "t1", 0);
	add(&f, "t1", 500);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(has(&r, "exec mode: task t1 stayed within its budget"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__is_na_without_a_judged_task(void)
{
	struct fx f;
	struct hx_check_result r;

	/* no expectation */
	fx_init(&f, NULL);
	add(&f, "t1", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(has(&r, "lists no task"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* the listed task was never sent */
	fx_init(&f, T1);
	f.runs[0].sent = false;
	add(&f, "t2", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no listed task was sent (first: t1)");
	hx_check_result_release(&r);
	fx_release(&f);

	/* the listed task has no budget to judge it against */
	fx_init(&f, "{\"budget.escalates\": {\"tasks\": [\"t2\"]}}");
	add(&f, "t2", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t2 has no budget (neither max_attempts nor "
			       "max_wait_s): nothing to judge it against");
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__a_wait_budget_alone_is_enough(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, "{\"budget.escalates\": {\"tasks\": [\"t2\"]}}");
	f.tasks[1].budget.max_wait_s = 0;
	add(&f, "t2", 0);
	add(&f, "t2", 400);
	say(&f, "{\"type\": \"escalation\", \"task\": \"t2\", \"record\": " RECORD "}");
	say(&f, "{\"type\": \"result\", \"task\": \"t2\", \"outcome\": \"escalated\"}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(has(&r, "max_wait_s 0)"));
	hx_check_result_release(&r);
	add(&f, "t2", 600);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_budget_register(void)
{
	CU_pSuite s = CU_add_suite("budget", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "budget__passes_a_task_that_stops_and_escalates",
		    budget__passes_a_task_that_stops_and_escalates);
	CU_add_test(s, "budget__fails_attempts_past_max_attempts",
		    budget__fails_attempts_past_max_attempts);
	CU_add_test(s, "budget__fails_an_attempt_past_max_wait_s",
		    budget__fails_an_attempt_past_max_wait_s);
	CU_add_test(s, "budget__fails_without_a_valid_escalation_and_result",
		    budget__fails_without_a_valid_escalation_and_result);
	CU_add_test(s, "budget__names_the_first_failing_task_of_several",
		    budget__names_the_first_failing_task_of_several);
	CU_add_test(s, "budget__exec_mode_within_budget_is_na",
		    budget__exec_mode_within_budget_is_na);
	CU_add_test(s, "budget__is_na_without_a_judged_task", budget__is_na_without_a_judged_task);
	CU_add_test(s, "budget__a_wait_budget_alone_is_enough",
		    budget__a_wait_budget_alone_is_enough);
}
