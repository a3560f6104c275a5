/* test_coverage.c -- which checks a scenario and a mode cover, the level over covered checks, the
 * profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check.h"
#include "coverage.h"
#include "grade.h"
#include "scenario.h"

/* A scenario of one account "u" (keys k1, k2) and one read route whose
 * answers are @responses; tasks and events as @harness gives them. */
static struct fa_scenario *load(const char *responses, const char *harness)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { "" };
	char *text = fa_xasprintf(
	        "{\"id\": \"c\", \"provider\": {\"keys\": {"
	        "\"k1\": {\"secret\": \"sk-c-1\", \"user\": \"u\"},"
	        "\"k2\": {\"secret\": \"sk-c-2\", \"user\": \"u\"}}},"
	        "\"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/records/{id}\","
	        "\"responses\": %s}], \"harness\": %s}",
	        responses, harness);

	if (fa_scenario_parse(text, strlen(text), "c.json", &sc, &err) != FA_OK)
		fprintf(stderr, "test_coverage: %s\n", err.msg);
	free(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	return sc;
}

#define TASK(id, key)                                                                              \
	"{\"id\": \"" id "\", \"key\": \"" key "\", \"method\": \"GET\", "                         \
	"\"path\": \"/v1/records/1\"}"
#define PAUSE "[{\"times\": 1, \"status\": 429, \"retry_after\": 2}, {\"status\": 200}]"

/* Whether check @id is covered by @sc in @mode; its why into @why. */
static bool covered(const struct fa_scenario *sc, enum hx_mode mode, const char *id,
                    const char **why)
{
	struct hx_check_input in = { .sc = sc, .mode = mode };
	struct hx_check_ctx c;
	bool ok;

	hx_check_ctx_init(&c, &in);
	hx_check_ctx_focus(&c, hx_check_find(id));
	ok = hx_check_covered(&c, why);
	hx_check_ctx_release(&c);
	return ok;
}

static void coverage__scope_pause_needs_a_later_release(void)
{
	const char *why = NULL;
	struct fa_scenario *later = load(
	        PAUSE,
	        "{\"tasks\": [" TASK("t1", "k1") "," TASK(
	                "t2",
	                "k2") "],"
	                      "\"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]},"
	                      "{\"after\": {\"task\": \"t1\", \"status\": 429}, \"send\": [\"t2\"]}]}");
	struct fa_scenario *at_once = load(
	        PAUSE,
	        "{\"tasks\": [" TASK("t1", "k1") "," TASK(
	                "t2", "k2") "],"
	                            "\"events\": [{\"at_ms\": 0, \"send\": [\"t1\", \"t2\"]}]}");
	struct fa_scenario *delayed = load(
	        PAUSE,
	        "{\"tasks\": [" TASK("t1", "k1") "," TASK(
	                "t2",
	                "k2") "],"
	                      "\"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]}, {\"at_ms\": 300, \"send\": [\"t2\"]}]}");
	struct fa_scenario *alone = load(
	        PAUSE, "{\"tasks\": [" TASK(
	                       "t1", "k1") "], \"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]}]}");
	struct fa_scenario *no_pause = load(
	        "[{\"status\": 503}]",
	        "{\"tasks\": [" TASK("t1", "k1") "," TASK(
	                "t2",
	                "k2") "],"
	                      "\"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]},"
	                      "{\"after\": {\"task\": \"t1\", \"status\": 503}, \"send\": [\"t2\"]}]}");

	CU_ASSERT_TRUE(covered(later, HX_MODE_EXEC, "wait.scope_pause", &why));
	CU_ASSERT_EQUAL(hx_coverage_release_ms(later, "t1"), 0);
	CU_ASSERT_EQUAL(hx_coverage_release_ms(later, "t2"), 1);
	CU_ASSERT_TRUE(covered(delayed, HX_MODE_STDIO, "wait.scope_pause", &why));
	CU_ASSERT_FALSE(covered(at_once, HX_MODE_STDIO, "wait.scope_pause", &why));
	CU_ASSERT_STRING_EQUAL(why, "every task of the scope starts at 0 ms, so whether one "
	                            "starts inside the pause is start-up luck");
	CU_ASSERT_FALSE(covered(alone, HX_MODE_STDIO, "wait.scope_pause", &why));
	CU_ASSERT_STRING_EQUAL(why, "no scope has two tasks: a pause told to one task holds "
	                            "no other");
	CU_ASSERT_FALSE(covered(no_pause, HX_MODE_STDIO, "wait.scope_pause", &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "announces a pause"));
	/* the same pause-less scenario: nothing to wait for, no 4xx */
	CU_ASSERT_FALSE(covered(no_pause, HX_MODE_STDIO, "wait.retry_after", &why));
	CU_ASSERT_FALSE(covered(no_pause, HX_MODE_STDIO, "classify.no_retry_4xx", &why));
	CU_ASSERT_TRUE(covered(later, HX_MODE_STDIO, "wait.retry_after", &why));
	/* two tasks are fewer than min_tasks (8): no spread to judge */
	CU_ASSERT_FALSE(covered(later, HX_MODE_STDIO, "wait.jitter", &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "min_tasks"));
	fa_scenario_free(later);
	fa_scenario_free(at_once);
	fa_scenario_free(delayed);
	fa_scenario_free(alone);
	fa_scenario_free(no_pause);
}

static void coverage__mode_and_prerequisites(void)
{
	const char *why = NULL;
	struct fa_scenario *sc = load(
	        "[{\"status\": 400}]",
	        "{\"tasks\": [" TASK(
	                "t1",
	                "k1") "], \"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]},"
	                      "{\"after\": {\"task\": \"t1\", \"status\": 400}, \"cancel\": [\"t1\"]}]}");
	struct fa_scenario *plain =
	        load("[{\"status\": 200}]",
	             "{\"tasks\": [" TASK(
	                     "t1", "k1") "], \"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]}]}");

	CU_ASSERT_FALSE(covered(sc, HX_MODE_EXEC, "attempts.hidden", &why));
	CU_ASSERT_STRING_EQUAL(why, "an exec client reports no attempt count");
	CU_ASSERT_TRUE(covered(sc, HX_MODE_STDIO, "attempts.hidden", &why));
	CU_ASSERT_TRUE(covered(sc, HX_MODE_EXEC, "classify.no_retry_4xx", &why));
	CU_ASSERT_TRUE(covered(sc, HX_MODE_STDIO, "cancel.quiet", &why));
	/* exec mode poses the cancel but cannot show the answer: covered */
	CU_ASSERT_TRUE(covered(sc, HX_MODE_EXEC, "cancel.quiet", &why));
	CU_ASSERT_FALSE(covered(plain, HX_MODE_STDIO, "cancel.quiet", &why));
	CU_ASSERT_STRING_EQUAL(why, "no event cancels a task");
	CU_ASSERT_FALSE(covered(plain, HX_MODE_STDIO, "write.no_duplicate", &why));
	CU_ASSERT_FALSE(covered(plain, HX_MODE_STDIO, "budget.escalates", &why));
	CU_ASSERT_FALSE(covered(plain, HX_MODE_STDIO, "wait.pacing", &why));
	CU_ASSERT_FALSE(covered(plain, HX_MODE_STDIO, "stream.no_silent_retry", &why));
	CU_ASSERT_TRUE(covered(plain, HX_MODE_EXEC, "attempts.bounded", &why));
	CU_ASSERT_TRUE(covered(plain, HX_MODE_EXEC, "escalation.sanitised", &why));
	fa_scenario_free(sc);
	fa_scenario_free(plain);
}

/* The engine does not judge a check it does not cover. */
static void coverage__engine_marks_not_covered(void)
{
	struct fa_scenario *plain =
	        load("[{\"status\": 200}]",
	             "{\"tasks\": [" TASK(
	                     "t1", "k1") "], \"events\": [{\"at_ms\": 0, \"send\": [\"t1\"]}]}");
	struct hx_check_input in = { .sc = plain, .mode = HX_MODE_EXEC };
	struct hx_check_result *res = NULL;
	size_t n = 0;

	hx_check_run_all(&in, &res, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].id, "attempts.hidden") == 0) {
			CU_ASSERT_TRUE(res[i].uncovered);
			CU_ASSERT_EQUAL(res[i].verdict, HX_NA);
			CU_ASSERT_STRING_EQUAL(res[i].detail, "not judged here: an exec client "
			                                      "reports no attempt count");
		}
		if (strcmp(res[i].id, "attempts.bounded") == 0)
			CU_ASSERT_FALSE(res[i].uncovered);
		hx_check_result_release(&res[i]);
	}
	free(res);
	fa_scenario_free(plain);
}

/* A run of @n scenarios, every check required as its default says, all
 * passing and covered; tweaked by each test. */
struct run {
	struct hx_scenario_result s[2];
	struct hx_run_result r;
};

static void run_init(struct run *x, size_t n)
{
	memset(x, 0, sizeof(*x));
	for (size_t k = 0; k < n; k++) {
		x->s[k].checks = fa_xcalloc(hx_check_count(), sizeof(*x->s[k].checks));
		x->s[k].n_checks = hx_check_count();
		for (size_t i = 0; i < hx_check_count(); i++) {
			struct hx_check_result *c = &x->s[k].checks[i];

			c->id = hx_check_def_at(i)->id;
			c->level = hx_check_def_at(i)->level;
			c->required = hx_check_def_at(i)->required;
			c->verdict = HX_PASS;
		}
	}
	x->r.scenarios = x->s;
	x->r.n_scenarios = n;
}

static void run_release(struct run *x)
{
	for (size_t k = 0; k < x->r.n_scenarios; k++)
		free(x->s[k].checks);
}

static struct hx_check_result *res(struct run *x, size_t k, const char *id)
{
	for (size_t i = 0; i < hx_check_count(); i++)
		if (strcmp(x->s[k].checks[i].id, id) == 0)
			return &x->s[k].checks[i];
	CU_FAIL_FATAL("no such check");
	return NULL;
}

/* Not covered in scenario @k. */
static void uncover(struct run *x, size_t k, const char *id)
{
	res(x, k, id)->uncovered = true;
	res(x, k, id)->verdict = HX_NA;
}

/* Exec mode: attempts.hidden is covered nowhere, so L2 is reached on the
 * other checks; the write checks covered nowhere: L3 is not reached. */
static void coverage__exec_mode_reaches_l2_without_attempts_hidden(void)
{
	struct run x;
	struct hx_profile_entry p;

	run_init(&x, 2);
	x.r.mode = HX_MODE_EXEC;
	for (size_t k = 0; k < 2; k++)
		uncover(&x, k, "attempts.hidden");
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < hx_check_count(); i++)
			if (hx_check_def_at(i)->level == 3)
				uncover(&x, k, hx_check_def_at(i)->id);
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, 2);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	hx_grade_profile(&x.r, "attempts.hidden", &p);
	CU_ASSERT_FALSE(p.covered);
	CU_ASSERT_EQUAL(p.not_covered, 2);
	CU_ASSERT_STRING_EQUAL(hx_grade_profile_str(&p), "not_covered");
	CU_ASSERT_FALSE(hx_grade_covered(&x.r, "attempts.hidden"));
	run_release(&x);
}

/* A covered n/a blocks its level, though the check is not covered
 * elsewhere; a pass elsewhere makes the suite verdict pass. */
static void coverage__covered_na_blocks_the_level(void)
{
	struct run x;
	struct hx_profile_entry p;

	run_init(&x, 2);
	uncover(&x, 0, "wait.scope_pause");
	res(&x, 1, "wait.scope_pause")->verdict = HX_NA;
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, 1);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	hx_grade_profile(&x.r, "wait.scope_pause", &p);
	CU_ASSERT_TRUE(p.covered);
	CU_ASSERT_EQUAL(p.na, 1);
	CU_ASSERT_EQUAL(p.not_covered, 1);
	CU_ASSERT_STRING_EQUAL(hx_grade_profile_str(&p), "n/a");
	/* a pass where it is covered: the level is back */
	res(&x, 1, "wait.scope_pause")->verdict = HX_PASS;
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	/* a not covered result never fails: its verdict is ignored */
	res(&x, 0, "wait.scope_pause")->verdict = HX_FAIL;
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(hx_grade_suite_verdict(&x.r, "wait.scope_pause", NULL), HX_PASS);
	run_release(&x);
}

/* A level whose checks are all not covered is not reached, and the
 * levels above it neither. */
static void coverage__level_with_only_uncovered_checks_is_not_reached(void)
{
	struct run x;

	run_init(&x, 1);
	for (size_t i = 0; i < hx_check_count(); i++)
		if (hx_check_def_at(i)->level == 1)
			uncover(&x, 0, hx_check_def_at(i)->id);
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, 0);
	/* a recommended check does not count: L2 with only it covered is not
	 * reached either */
	run_release(&x);
	run_init(&x, 1);
	for (size_t i = 0; i < hx_check_count(); i++)
		if (hx_check_def_at(i)->level == 2 && hx_check_def_at(i)->required)
			uncover(&x, 0, hx_check_def_at(i)->id);
	hx_grade_run(&x.r);
	CU_ASSERT_EQUAL(x.r.level, 1);
	run_release(&x);
}

void test_coverage_register(void)
{
	CU_pSuite s = CU_add_suite("coverage", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "coverage__scope_pause_needs_a_later_release",
	            coverage__scope_pause_needs_a_later_release);
	CU_add_test(s, "coverage__mode_and_prerequisites", coverage__mode_and_prerequisites);
	CU_add_test(s, "coverage__engine_marks_not_covered", coverage__engine_marks_not_covered);
	CU_add_test(s, "coverage__exec_mode_reaches_l2_without_attempts_hidden",
	            coverage__exec_mode_reaches_l2_without_attempts_hidden);
	CU_add_test(s, "coverage__covered_na_blocks_the_level",
	            coverage__covered_na_blocks_the_level);
	CU_add_test(s, "coverage__level_with_only_uncovered_checks_is_not_reached",
	            coverage__level_with_only_uncovered_checks_is_not_reached);
}
