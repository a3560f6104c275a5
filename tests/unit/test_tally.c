/* test_tally.c -- attempts.hidden on hand-made journals and client reports. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check.h"
#include "tally.h"

#define N_MAX 16

struct fixture {
	struct fa_task_spec task;
	struct fa_scenario sc;
	struct fa_attempt a[N_MAX];
	size_t n;
	struct hx_client_msg m[N_MAX];
	size_t n_msgs;
};

static void setup(struct fixture *f, int wire_attempts)
{
	memset(f, 0, sizeof(*f));
	f->task.id = "t1";
	f->sc.harness.tasks = &f->task;
	f->sc.harness.n_tasks = 1;
	for (int i = 0; i < wire_attempts; i++) {
		f->a[i].seq = (uint64_t)i + 1;
		f->a[i].task = fa_xstrdup("t1");
		f->a[i].t_arrival_us = i * 1000;
	}
	f->n = (size_t)wire_attempts;
}

static void say(struct fixture *f, const char *line)
{
	struct hx_client_msg *m = &f->m[f->n_msgs++];
	cJSON *j = cJSON_Parse(line);

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	m->json = j;
	m->type = fa_xstrdup(cJSON_GetObjectItem(j, "type")->valuestring);
	m->task = fa_xstrdup(cJSON_GetObjectItem(j, "task")->valuestring);
}

static void teardown(struct fixture *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	for (size_t i = 0; i < f->n_msgs; i++)
		hx_client_msg_release(&f->m[i]);
}

static struct hx_check_result judge(struct fixture *f, enum hx_mode mode)
{
	struct hx_check_input in = { .sc = &f->sc,
		                     .attempts = f->a,
		                     .n_attempts = f->n,
		                     .mode = mode,
		                     .msgs = f->m,
		                     .n_msgs = f->n_msgs };
	struct hx_check_result r = { .id = "attempts.hidden" };
	struct hx_check_ctx c;

	hx_check_ctx_init(&c, &in);
	hx_check_ctx_focus(&c, hx_check_find(r.id));
	hx_tally_check(&c, &r);
	hx_check_ctx_release(&c);
	return r;
}

static void tally__matching_counts_pass(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 2);
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}");
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":2}");
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":2}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__an_attempt_hidden_from_the_client_fails(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 2);
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}");
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":1}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "reported 1 attempt, the provider saw 2"));
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__reported_attempts_that_never_arrived_fail(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 1);
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}");
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":2}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "never arrived"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__exec_mode_and_silence_are_na(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 1);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	hx_check_result_release(&r);
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "reported on no task"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__attempts_that_are_no_count_fail_the_task(void)
{
	static const struct {
		const char *attempts; /* the member's JSON text; NULL: none */
		const char *detail;
	} cases[] = {
		{ "1e300", "task t1: the client reported attempts 1e+300, not a count" },
		{ "9.3e18", "task t1: the client reported attempts 9.3e+18, not a count" },
		{ "1.9", "task t1: the client reported attempts 1.9, not a count" },
		{ "-1", "task t1: the client reported attempts -1, not a count" },
		{ "1000001", "task t1: the client reported attempts 1000001, not a count" },
		{ "\"2\"", "task t1: the client reported attempts \"2\", not a count" },
		{ "\"0123456789012345678901234567890123456789xyz\"",
		  "task t1: the client reported attempts \"012345678901234567890123456789"
		  "012345678..., not a count" },
		{ NULL, "task t1: the client's result has no \"attempts\", not a count" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct fixture f;
		struct hx_check_result r;
		char *line;

		setup(&f, 2);
		/* the action_sent lines match the journal: only the result is wrong */
		say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}");
		say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":2}");
		line = cases[k].attempts
		               ? fa_xasprintf(
		                         "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":%s}",
		                         cases[k].attempts)
		               : fa_xstrdup("{\"type\":\"result\",\"task\":\"t1\"}");
		say(&f, line);
		free(line);
		r = judge(&f, HX_MODE_STDIO);
		CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
		CU_ASSERT_STRING_EQUAL(r.detail, cases[k].detail);
		CU_ASSERT_EQUAL(r.n_evidence, 2);
		hx_check_result_release(&r);
		teardown(&f);
	}
}

/* "attempts": null: the client cannot observe its attempts. Hidden
 * retries show on the wire; one attempt leaves nothing to compare. */
static void tally__null_attempts_fail_on_a_retry_and_are_na_on_one_attempt(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 3);
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":null}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task t1: the client cannot observe its attempts (it "
	                       "reported \"attempts\": null), and the provider saw 3: the "
	                       "library retried where the application can neither see nor "
	                       "count it");
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	hx_check_result_release(&r);
	teardown(&f);

	setup(&f, 1);
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":null}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "the client cannot observe its attempts (\"attempts\": "
	                       "null) and the provider saw at most one per task (1 task): no "
	                       "retry to hide");
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__bounds_of_a_count_are_counts(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":0}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	teardown(&f);
	setup(&f, 1);
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":1000000}");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "reported 1000000 attempts, the provider saw 1"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void tally__a_restarted_clients_bad_count_fails_the_sum(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 2);
	say(&f, "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}");
	say(&f, "{\"type\":\"result\",\"task\":\"t1\",\"attempts\":0.5}");
	f.m[1].session = 1;
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "task t1: the client reported attempts 0.5, not a count");
	hx_check_result_release(&r);
	teardown(&f);
}

void test_tally_register(void)
{
	CU_pSuite s = CU_add_suite("tally", NULL, NULL);

	CU_add_test(s, "tally__matching_counts_pass", tally__matching_counts_pass);
	CU_add_test(s, "tally__an_attempt_hidden_from_the_client_fails",
	            tally__an_attempt_hidden_from_the_client_fails);
	CU_add_test(s, "tally__reported_attempts_that_never_arrived_fail",
	            tally__reported_attempts_that_never_arrived_fail);
	CU_add_test(s, "tally__exec_mode_and_silence_are_na", tally__exec_mode_and_silence_are_na);
	CU_add_test(s, "tally__attempts_that_are_no_count_fail_the_task",
	            tally__attempts_that_are_no_count_fail_the_task);
	CU_add_test(s, "tally__bounds_of_a_count_are_counts", tally__bounds_of_a_count_are_counts);
	CU_add_test(s, "tally__null_attempts_fail_on_a_retry_and_are_na_on_one_attempt",
	            tally__null_attempts_fail_on_a_retry_and_are_na_on_one_attempt);
	CU_add_test(s, "tally__a_restarted_clients_bad_count_fails_the_sum",
	            tally__a_restarted_clients_bad_count_fails_the_sum);
}
