/* test_budget.c -- budget.escalates on hand-made journals and client lines. */
#include <CUnit/CUnit.h>

#include "budget.h"
#include "check_fixture.h"

/* A record that conforms to docs/escalation.schema.json. */
#define RECORD                                                                                     \
	"{\"reason\": \"wait_exceeds_budget\", \"goal\": \"fetch report 7\","                      \
	" \"action\": \"retry 3 not sent\", \"provider\": \"http://127.0.0.1:1\","                 \
	" \"endpoint\": \"/v1/reports/{id}\", \"method\": \"GET\", \"scope\": \"user:a\","         \
	" \"fingerprint\": \"sha256:" HEX64 "\", \"attempts\": [], \"budget\":"                    \
	" {\"max_attempts\": 4, \"max_wait_s\": 90, \"attempts_used\": 2,"                         \
	" \"waited_ms\": 1000}, \"idempotency_key\": null,"                                        \
	" \"provider_operation_id\": null, \"sent\": \"yes\", \"options\": [\"wait\"]}"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Tasks t1 (max_attempts 4, max_wait_s 90) and t2 (no budget), both sent. */
static void setup(struct fx *f, const char *expect)
{
	fx_init(f, expect, "t", 2);
	f->tasks[0].method = f->tasks[1].method = "GET";
	f->tasks[0].budget = (struct fa_budget){ .max_attempts = 4, .max_wait_s = 90 };
	f->tasks[1].budget = (struct fa_budget){ .max_attempts = 0, .max_wait_s = -1 };
}

/* An attempt of @task arriving at @arr_ms, answered 503. */
static void add(struct fx *f, const char *task, int64_t arr_ms)
{
	fx_add(f, task, arr_ms, 503);
}

/* The client escalated t1 with @record and reported @outcome (NULL: no result). */
static void escalate(struct fx *f, const char *record, const char *outcome)
{
	if (record != NULL)
		fx_escalation(f, 0, "t1", record);
	if (outcome != NULL)
		fx_result(f, 0, "t1", outcome);
}

static struct hx_check_result judge(struct fx *f, enum hx_mode mode)
{
	return fx_judge(f, hx_budget_check, "budget.escalates", mode);
}

#define T1 "{\"budget.escalates\": {\"tasks\": [\"t1\"]}}"

static void budget__passes_a_task_that_stops_and_escalates(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, T1);
	add(&f, "t1", 0);
	add(&f, "t1", 2000);
	add(&f, "t2", 100); /* not listed */
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task t1 stopped within its budget (2 attempts, the "
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

	setup(&f, T1);
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
	setup(&f, T1);
	add(&f, "t1", 1000);
	add(&f, "t1", 91400);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	add(&f, "t1", 91600);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task t1 kept going past its wait budget: seq 3 "
	                       "arrived at +91600.0 ms, 90.6 s after its first attempt (seq 1 "
	                       "at +1000.0 ms), budget max_wait_s 90 (tolerance 500 ms)");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);
	fx_release(&f);

	/* the tolerance comes from the scenario */
	setup(&f, "{\"budget.escalates\": {\"tasks\": [\"t1\"], \"tolerance_ms\": 0}}");
	add(&f, "t1", 1000);
	add(&f, "t1", 91001);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "(tolerance 0 ms)"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__fails_without_a_valid_escalation_and_result(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, NULL, "failed");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 stopped after 1 attempt but printed no "
	                                 "escalation line (result failed)");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, "{\"reason\": \"wait_exceeds_budget\"}", "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1's escalation record breaks the schema: "
	                                 "$.record: missing member \"goal\"");
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, T1);
	add(&f, "t1", 0);
	fx_escalation(&f, 0, "t1", NULL);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "$.record: missing"));
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, RECORD, "failed");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 printed an escalation record but reported "
	                                 "result failed, not escalated");
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, RECORD, NULL);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "but no result"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__names_the_first_failing_task_of_several(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, "{\"budget.escalates\": {\"tasks\": [\"t1\", \"t2\"]}}");
	f.tasks[1].budget.max_attempts = 1;
	add(&f, "t1", 0);
	add(&f, "t2", 0);
	add(&f, "t2", 10);
	escalate(&f, RECORD, "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "task t2 made 2 attempts, budget max_attempts 1"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__exec_mode_within_budget_is_na(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, T1);
	add(&f, "t1", 0);
	add(&f, "t1", 500);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "exec mode: task t1 stayed within its budget"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

/* budget.escalates with @hello as the client's hello (stdio mode). */
static struct hx_check_result judge_hello(struct fx *f, const char *hello)
{
	struct hx_check_input in = fx_input(f, HX_MODE_STDIO);
	struct hx_check_result r = { .id = "budget.escalates" };
	struct hx_check_ctx c;
	cJSON *h = cJSON_Parse(hello);

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	in.hello = h;
	hx_check_ctx_init(&c, &in);
	hx_check_ctx_focus(&c, hx_check_find(r.id));
	hx_budget_check(&c, &r);
	hx_check_ctx_release(&c);
	cJSON_Delete(h);
	return r;
}

#define NO_ESCALATION "{\"type\": \"hello\", \"protocol\": 1, \"features\": [\"cancel\"]}"

/* A stdio client whose hello lists no "escalation" is judged as in exec
 * mode: on its budget, and on not reporting success; never on a record. */
static void budget__a_client_without_escalation_is_judged_on_the_budget(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, T1);
	add(&f, "t1", 0);
	add(&f, "t1", 500);
	escalate(&f, NULL, "failed");
	r = judge_hello(&f, NO_ESCALATION);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "judged on the budget alone (the client's hello lists "
	                       "no \"escalation\" feature): task t1 stayed within its budget (2 "
	                       "attempts, the last (seq 2) 0.5 s after the first; max_attempts "
	                       "4, max_wait_s 90) and reported failed, not succeeded; no "
	                       "escalation record to judge");
	hx_check_result_release(&r);
	/* a hello that lists it is held to the record */
	r = judge_hello(&f, "{\"type\": \"hello\", \"protocol\": 1, \"features\": "
	                    "[\"escalation\"]}");
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "printed no escalation line"));
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, T1);
	add(&f, "t1", 0);
	escalate(&f, NULL, "succeeded");
	r = judge_hello(&f, "{\"type\": \"hello\", \"protocol\": 1}");
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 reported succeeded, but the provider answered "
	                                 "none of its 1 attempt with a 2xx");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	hx_check_result_release(&r);
	fx_release(&f);

	/* past its budget it fails as any client does */
	setup(&f, T1);
	for (int i = 0; i < 5; i++)
		add(&f, "t1", i * 100);
	r = judge_hello(&f, NO_ESCALATION);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "task t1 made 5 attempts, budget max_attempts 4"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__is_na_without_a_judged_task(void)
{
	struct fx f;
	struct hx_check_result r;

	/* no expectation */
	setup(&f, NULL);
	add(&f, "t1", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "lists no task"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* the listed task was never sent */
	setup(&f, T1);
	f.runs[0].sent = false;
	add(&f, "t2", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no listed task was sent (first: t1)");
	hx_check_result_release(&r);
	fx_release(&f);

	/* the listed task has no budget to judge it against */
	setup(&f, "{\"budget.escalates\": {\"tasks\": [\"t2\"]}}");
	add(&f, "t2", 0);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t2 has no budget (neither max_attempts nor "
	                                 "max_wait_s): nothing to judge it against");
	hx_check_result_release(&r);
	fx_release(&f);
}

/* A listed task the provider let through had no budget run out: n/a,
 * not a missing escalation; still a failure when it broke the budget. */
static void budget__a_task_that_succeeded_is_na(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, T1);
	add(&f, "t1", 0);
	fx_add(&f, "t1", 1000, 200);
	fx_result(&f, 0, "t1", "succeeded");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1 got a 2xx answer (seq 2) within its budget: "
	                                 "nothing ran out, nothing to escalate");
	hx_check_result_release(&r);
	for (int i = 2; i < 6; i++)
		add(&f, "t1", i * 1000);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "made 6 attempts"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void budget__a_wait_budget_alone_is_enough(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, "{\"budget.escalates\": {\"tasks\": [\"t2\"]}}");
	f.tasks[1].budget.max_wait_s = 0;
	add(&f, "t2", 0);
	add(&f, "t2", 400);
	fx_escalation(&f, 0, "t2", RECORD);
	fx_result(&f, 0, "t2", "escalated");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "max_wait_s 0)"));
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
	CU_add_test(s, "budget__a_client_without_escalation_is_judged_on_the_budget",
	            budget__a_client_without_escalation_is_judged_on_the_budget);
	CU_add_test(s, "budget__is_na_without_a_judged_task", budget__is_na_without_a_judged_task);
	CU_add_test(s, "budget__a_task_that_succeeded_is_na", budget__a_task_that_succeeded_is_na);
	CU_add_test(s, "budget__a_wait_budget_alone_is_enough",
	            budget__a_wait_budget_alone_is_enough);
}
