/* test_grade.c -- level and exit code with --strict, --known-failing and --repeat, and how the
 * reports show them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "known_failing.h"
#include "report.h"

/* A run of one scenario whose checks (every check the harness knows, each
 * required or recommended as its definition says) all pass. */
struct run {
	struct hx_check_result *c;
	struct hx_scenario_result s;
	struct hx_run_result r;
	struct hx_known_failing *kf;
};

static void run_init(struct run *x)
{
	size_t i, n = hx_check_count();

	memset(x, 0, sizeof(*x));
	x->c = calloc(n, sizeof(*x->c));
	CU_ASSERT_PTR_NOT_NULL_FATAL(x->c);
	for (i = 0; i < n; i++) {
		x->c[i].id = hx_check_def_at(i)->id;
		x->c[i].level = hx_check_def_at(i)->level;
		x->c[i].required = hx_check_def_at(i)->required;
		x->c[i].verdict = HX_PASS;
	}
	x->s.checks = x->c;
	x->s.n_checks = n;
	x->r.scenarios = &x->s;
	x->r.n_scenarios = 1;
}

static void run_release(struct run *x)
{
	hx_known_failing_free(x->kf);
	for (size_t i = 0; i < hx_check_count(); i++)
		free(x->c[i].detail);
	free(x->c);
}

/* The result of check @id. */
static struct hx_check_result *check(struct run *x, const char *id)
{
	for (size_t i = 0; i < hx_check_count(); i++)
		if (strcmp(x->c[i].id, id) == 0)
			return &x->c[i];
	CU_FAIL_FATAL("no such check");
	return NULL;
}

/* Give @x the known-failing list @text (file "ci/kf.txt"). */
static void known(struct run *x, const char *text)
{
	struct fa_err err = { "" };

	hx_known_failing_free(x->kf);
	x->kf = NULL;
	CU_ASSERT_EQUAL_FATAL(hx_known_failing_parse("ci/kf.txt", text, strlen(text), &x->kf, &err),
	                      FA_OK);
	x->r.known_failing = x->kf;
}

/* Grade @x; returns its exit reason, which the caller frees. */
static char *grade(struct run *x)
{
	x->r.level = -1;
	x->r.exit_code = -1;
	hx_grade_run(&x->r);
	return hx_grade_exit_reason(&x->r);
}

static void grade__everything_passing_reaches_l4_and_exits_0(void)
{
	struct run x;
	char *why;

	run_init(&x);
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	CU_ASSERT_STRING_EQUAL(why, "no required check failed and at least one passed");
	free(why);
	run_release(&x);
}

static void grade__known_failing_check_that_fails_does_not_exit_1(void)
{
	struct run x;
	char *why;

	run_init(&x);
	check(&x, "wait.jitter")->verdict = HX_FAIL;
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_STRING_EQUAL(why, "a required check failed");
	free(why);

	known(&x, "wait.jitter # spreads too little\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	/* the level stays honest: L2 has a failing check */
	CU_ASSERT_EQUAL(x.r.level, 1);
	CU_ASSERT_EQUAL(hx_grade_known_state(&x.r, "wait.jitter"), HX_KNOWN_FAILING);
	CU_ASSERT_EQUAL(hx_grade_known_state(&x.r, "wait.retry_after"), HX_KNOWN_UNLISTED);
	CU_ASSERT_STRING_EQUAL(why, "no required check failed but 1 known failing, and at "
	                            "least one passed");
	free(why);

	/* --min-level still applies */
	x.r.min_level = 2;
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_STRING_EQUAL(why, "level L1 is below the minimum L2");
	free(why);
	x.r.min_level = 0;

	/* another failure is still one */
	check(&x, "attempts.bounded")->verdict = HX_FAIL;
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_EQUAL(x.r.level, 0);
	CU_ASSERT_STRING_EQUAL(why, "a required check failed");
	free(why);
	run_release(&x);
}

static void grade__known_failing_entry_that_passes_now_exits_1(void)
{
	struct run x;
	char *why;

	run_init(&x);
	known(&x, "wait.jitter\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(hx_grade_known_state(&x.r, "wait.jitter"), HX_KNOWN_PASSES_NOW);
	CU_ASSERT_STRING_EQUAL(why, "known-failing entry wait.jitter passes now: remove it "
	                            "from ci/kf.txt");
	free(why);

	known(&x, "wait.jitter\nattempts.hidden # two\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_STRING_EQUAL(why, "known-failing entries wait.jitter, attempts.hidden pass "
	                            "now: remove them from ci/kf.txt");
	free(why);
	run_release(&x);
}

static void grade__known_failing_entry_not_shown_is_fine(void)
{
	struct run x;
	char *why;

	run_init(&x);
	check(&x, "cancel.quiet")->verdict = HX_NA;
	known(&x, "cancel.quiet # exec mode cannot show it\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	CU_ASSERT_EQUAL(x.r.level, 3); /* n/a blocks L4 as ever */
	CU_ASSERT_EQUAL(hx_grade_known_state(&x.r, "cancel.quiet"), HX_KNOWN_NA);
	CU_ASSERT_STRING_EQUAL(why, "no required check failed and at least one passed");
	free(why);

	/* a recommended check is not counted: listed, it shows nothing */
	check(&x, "cancel.quiet")->verdict = HX_PASS;
	check(&x, "classify.circuit")->required = false;
	check(&x, "classify.circuit")->verdict = HX_PASS;
	known(&x, "classify.circuit\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	CU_ASSERT_EQUAL(hx_grade_known_state(&x.r, "classify.circuit"), HX_KNOWN_NA);
	free(why);
	run_release(&x);
}

static void grade__strict_counts_recommended_checks(void)
{
	struct run x;
	bool counted = true;
	char *why;

	run_init(&x);
	/* recommended by the scenario's expect, whatever the default */
	check(&x, "wait.scope_pause")->required = false;
	check(&x, "wait.scope_pause")->verdict = HX_FAIL;
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	CU_ASSERT_EQUAL(x.r.level, HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(hx_grade_suite_verdict(&x.r, "wait.scope_pause", &counted), HX_FAIL);
	CU_ASSERT_FALSE(counted);
	free(why);

	x.r.strict = true;
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_EQUAL(x.r.level, 1);
	CU_ASSERT_STRING_EQUAL(why, "a required check failed");
	CU_ASSERT_EQUAL(hx_grade_suite_verdict(&x.r, "wait.scope_pause", &counted), HX_FAIL);
	CU_ASSERT_TRUE(counted);
	free(why);

	/* strict and known failing together: forgiven, still not the level */
	known(&x, "wait.scope_pause\n");
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	CU_ASSERT_EQUAL(x.r.level, 1);
	free(why);
	run_release(&x);
}

static void grade__default_recommended_checks_need_strict(void)
{
	size_t n = 0;

	/* at least one check is recommended by default, and strict has
	 * something to turn on */
	for (size_t i = 0; i < hx_check_count(); i++)
		n += !hx_check_def_at(i)->required;
	CU_ASSERT(n >= 1);
	if (n == 0)
		return;
	{
		struct run x;
		char *why;
		size_t i;

		run_init(&x);
		for (i = 0; hx_check_def_at(i)->required; i++)
			;
		x.c[i].verdict = HX_FAIL;
		why = grade(&x);
		CU_ASSERT_EQUAL(x.r.exit_code, 0);
		free(why);
		x.r.strict = true;
		why = grade(&x);
		CU_ASSERT_EQUAL(x.r.exit_code, 1);
		free(why);
		run_release(&x);
	}
}

static void grade__repeat_keeps_tallies_lowest_level_and_worst_code(void)
{
	struct hx_repeat rep;
	struct run x;
	size_t jitter = 0;
	char *why;

	run_init(&x);
	while (strcmp(hx_check_def_at(jitter)->id, "wait.jitter") != 0)
		jitter++;
	hx_repeat_init(&rep, 3, 41);
	CU_ASSERT_EQUAL(rep.planned, 3);
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	check(&x, "wait.jitter")->verdict = HX_FAIL;
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	check(&x, "wait.jitter")->verdict = HX_PASS;
	check(&x, "attempts.hidden")->verdict = HX_NA;
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	hx_repeat_add(&rep, &x.r); /* past the plan: ignored */

	CU_ASSERT_EQUAL(rep.runs, 3);
	CU_ASSERT_EQUAL(rep.tally[jitter].pass, 2);
	CU_ASSERT_EQUAL(rep.tally[jitter].fail, 1);
	CU_ASSERT_EQUAL(rep.tally[jitter].na, 0);
	CU_ASSERT_TRUE(rep.tally[jitter].counted);
	CU_ASSERT_EQUAL(rep.tally[0].pass, 3);
	CU_ASSERT_EQUAL(rep.levels[0], HX_MAX_LEVEL);
	CU_ASSERT_EQUAL(rep.levels[1], 1);
	CU_ASSERT_EQUAL(rep.levels[2], 1); /* attempts.hidden n/a blocks L2 */
	CU_ASSERT_EQUAL(rep.exit_codes[0], 0);
	CU_ASSERT_EQUAL(rep.exit_codes[1], 1);
	CU_ASSERT_EQUAL(rep.exit_codes[2], 0);
	CU_ASSERT_EQUAL(rep.level, 1);
	CU_ASSERT_EQUAL(rep.exit_code, 1);
	CU_ASSERT_EQUAL(rep.worst_run, 1);

	/* the last run carries the repeat's verdict */
	x.r.repeat = &rep;
	x.r.level = rep.level;
	x.r.exit_code = rep.exit_code;
	why = hx_grade_exit_reason(&x.r);
	CU_ASSERT_STRING_EQUAL(why, "run 2 of 3 (seed 42): a required check failed");
	free(why);
	hx_repeat_release(&rep);
	hx_repeat_release(NULL);

	/* every run clean */
	hx_repeat_init(&rep, 2, 0);
	check(&x, "attempts.hidden")->verdict = HX_PASS;
	x.r.repeat = NULL;
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	hx_repeat_add(&rep, &x.r);
	x.r.repeat = &rep;
	why = hx_grade_exit_reason(&x.r);
	CU_ASSERT_STRING_EQUAL(why, "in each of 2 runs: no required check failed and at least "
	                            "one passed");
	free(why);
	hx_repeat_release(&rep);

	/* the plan is clamped */
	hx_repeat_init(&rep, 5000, 0);
	CU_ASSERT_EQUAL(rep.planned, HX_REPEAT_MAX);
	hx_repeat_release(&rep);
	run_release(&x);
}

static void grade__scenario_error_wins_over_known_failing(void)
{
	struct run x;
	char *why;

	run_init(&x);
	known(&x, "wait.jitter\n");
	x.s.error = "s.json: client could not start";
	why = grade(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 2);
	CU_ASSERT_STRING_EQUAL(why, "1 scenario could not run");
	free(why);
	x.r.interrupted = true;
	why = grade(&x);
	CU_ASSERT_STRING_EQUAL(why, "interrupted");
	free(why);
	x.s.error = NULL;
	run_release(&x);
}

/* The text report of @x; the caller frees it. */
static char *text_of(const struct run *x)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &x->r, true);
	fclose(out);
	return text;
}

/* What @write writes for @x, read back from a temporary file; the caller frees it. */
static char *written(const struct run *x,
                     enum fa_rc (*write)(const char *, const struct hx_run_result *,
                                         struct fa_err *))
{
	struct fa_err err = { "" };
	char path[256], *buf;
	long len;
	FILE *in;
	int fd;

	snprintf(path, sizeof(path), "%s/hx-grade-XXXXXX", P_tmpdir);
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(write(path, &x->r, &err), FA_OK);
	in = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	rewind(in);
	buf = fa_xmalloc((size_t)len + 1);
	CU_ASSERT_FATAL(fread(buf, 1, (size_t)len, in) == (size_t)len);
	buf[len] = '\0';
	fclose(in);
	unlink(path);
	return buf;
}

static cJSON *json_of(const struct run *x)
{
	char *text = written(x, hx_report_json);
	cJSON *root = cJSON_Parse(text);

	free(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	return root;
}

/* The top-level "checks" row of check @id. */
static const cJSON *suite_row(const cJSON *root, const char *id)
{
	const cJSON *row;

	cJSON_ArrayForEach(
	        row,
	        cJSON_GetObjectItem(
	                root, "checks")) if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring,
	                                            id) == 0) return row;
	CU_FAIL_FATAL("no such row");
	return NULL;
}

static void grade__reports_show_known_failing_checks(void)
{
	struct run x;
	const cJSON *kfo, *e;
	cJSON *root;
	char *text, *xml;

	run_init(&x);
	check(&x, "wait.jitter")->verdict = HX_FAIL;
	check(&x, "wait.jitter")->detail = fa_xstrdup("one wave");
	check(&x, "cancel.quiet")->verdict = HX_NA;
	known(&x, "wait.jitter # spreads too little\ncancel.quiet\n");
	free(grade(&x));
	CU_ASSERT_EQUAL(x.r.exit_code, 0);

	text = text_of(&x);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "known failing: ci/kf.txt (2 entries)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  FAIL  wait.jitter            (L2) known failing  "
	                                    "one wave\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  FAIL  wait.jitter            (L2) known failing: "
	                                    "spreads too little\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  N/A   cancel.quiet           (L4) known failing, "
	                                    "not shown\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  PASS  wait.retry_after       (L1)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "exit code 0: no required check failed but 1 known "
	                                    "failing, and at least one passed\n"));
	free(text);

	root = json_of(&x);
	kfo = cJSON_GetObjectItem(root, "known_failing");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(kfo, "file")->valuestring, "ci/kf.txt");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(cJSON_GetObjectItem(kfo, "entries")), 2);
	e = cJSON_GetArrayItem(cJSON_GetObjectItem(kfo, "entries"), 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "id")->valuestring, "wait.jitter");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(e, "line")->valueint, 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "reason")->valuestring, "spreads too little");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "state")->valuestring, "failing");
	e = cJSON_GetArrayItem(cJSON_GetObjectItem(kfo, "entries"), 1);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(e, "reason")));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "state")->valuestring, "n/a");
	CU_ASSERT_TRUE(
	        cJSON_IsTrue(cJSON_GetObjectItem(suite_row(root, "wait.jitter"), "known_failing")));
	CU_ASSERT_TRUE(cJSON_IsFalse(
	        cJSON_GetObjectItem(suite_row(root, "wait.scope_pause"), "known_failing")));
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "exit_code")->valueint, 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "level")->valuestring, "L1");
	cJSON_Delete(root);

	/* the CI page is green exactly when the exit code is 0 */
	xml = written(&x, hx_report_junit);
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "name=\"wait.jitter\" time=\"0\">\n"
	                                   "      <skipped message=\"known failing: one wave\"/>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testsuite name=\"known-failing\" tests=\"2\" "
	                                   "failures=\"0\" errors=\"0\" skipped=\"2\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<skipped message=\"fails, as listed: spreads too "
	                                   "little\"/>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<skipped message=\"not shown by the run\"/>"));
	CU_ASSERT_PTR_NULL(strstr(xml, "<failure"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "\" failures=\"0\" errors=\"0\" skipped="));
	free(xml);

	/* an entry that passes now is the run's failure, in every format */
	known(&x, "wait.jitter\nattempts.hidden # two\n");
	free(grade(&x));
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	text = text_of(&x);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  PASS  attempts.hidden        (L2) known failing, "
	                                    "passes now: remove it from ci/kf.txt (line 2)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "exit code 1: known-failing entry attempts.hidden "
	                                    "passes now: remove it from ci/kf.txt\n"));
	free(text);
	root = json_of(&x);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "exit_reason")->valuestring,
	                       "known-failing entry attempts.hidden passes now: remove it from "
	                       "ci/kf.txt");
	e = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "known_failing"), "entries"), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "state")->valuestring, "passes_now");
	cJSON_Delete(root);
	xml = written(&x, hx_report_junit);
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<failure message=\"known-failing entry "
	                                   "attempts.hidden passes now: remove it from "
	                                   "ci/kf.txt\" type=\"known-failing\">line 2</failure>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "\" failures=\"1\" errors=\"0\""));
	free(xml);
	run_release(&x);
}

static void grade__reports_show_a_repeat(void)
{
	struct hx_repeat rep;
	struct run x;
	const cJSON *ro, *c;
	cJSON *root;
	char *text, *xml;

	run_init(&x);
	hx_repeat_init(&rep, 3, 7);
	check(&x, "wait.retry_after")->verdict = HX_FAIL;
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	check(&x, "wait.retry_after")->verdict = HX_PASS;
	check(&x, "wait.jitter")->verdict = HX_NA;
	free(grade(&x));
	hx_repeat_add(&rep, &x.r);
	hx_repeat_add(&rep, &x.r);
	x.r.repeat = &rep;
	x.r.seed = 9;
	x.r.level = rep.level;
	x.r.exit_code = rep.exit_code;

	text = text_of(&x);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "repeat: 3 runs of 3, seeds 7..9; the scenarios below "
	                                    "are the last run's\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "checks over 3 runs:\n"
	                                    "  attempts.bounded       3/3 pass\n"
	                                    "  wait.retry_after       2/3 pass, 1 fail\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  wait.jitter            1/3 pass, 2 n/a\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "levels: L0 L1 L1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "level reached: L0 (lowest of 3 runs)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "exit code 1: run 1 of 3 (seed 7): a required check "
	                                    "failed\n"));
	free(text);

	root = json_of(&x);
	ro = cJSON_GetObjectItem(root, "repeat");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ro, "runs")->valueint, 3);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ro, "planned")->valueint, 3);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ro, "first_seed")->valueint, 7);
	c = cJSON_GetObjectItem(cJSON_GetObjectItem(ro, "checks"), "wait.retry_after");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(c, "pass")->valueint, 2);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(c, "fail")->valueint, 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(c, "n/a")->valueint, 0);
	CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(c, "pass_rate")->valuedouble, 0.667, 1e-9);
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(c, "counted")));
	c = cJSON_GetObjectItem(cJSON_GetObjectItem(ro, "checks"), "classify.circuit");
	CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(c, "counted")));
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(ro, "checks")),
	                (int)hx_check_count());
	c = cJSON_GetObjectItem(ro, "levels");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(c), 3);
	CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(c, 0)->valuestring, "L0");
	CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(c, 2)->valuestring, "L1");
	c = cJSON_GetObjectItem(ro, "exit_codes");
	CU_ASSERT_EQUAL(cJSON_GetArrayItem(c, 0)->valueint, 1);
	CU_ASSERT_EQUAL(cJSON_GetArrayItem(c, 1)->valueint, 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "level")->valuestring, "L0");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "exit_code")->valueint, 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "seed")->valueint, 9);
	cJSON_Delete(root);

	xml = written(&x, hx_report_junit);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(xml, "<testcase classname=\"?.repeat\" "
	                    "name=\"wait.retry_after\" time=\"0\">\n      <failure "
	                    "message=\"2/3 pass, 1 fail, 0 n/a\" type=\"L1 required\"/>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml,
	                              "name=\"attempts.bounded\" time=\"0\">\n"
	                              "      <system-out>3/3 pass, 0 fail, 0 n/a</system-out>"));
	free(xml);
	hx_repeat_release(&rep);
	run_release(&x);
}

void test_grade_register(void)
{
	CU_pSuite s = CU_add_suite("grade", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "grade__everything_passing_reaches_l4_and_exits_0",
	            grade__everything_passing_reaches_l4_and_exits_0);
	CU_add_test(s, "grade__known_failing_check_that_fails_does_not_exit_1",
	            grade__known_failing_check_that_fails_does_not_exit_1);
	CU_add_test(s, "grade__known_failing_entry_that_passes_now_exits_1",
	            grade__known_failing_entry_that_passes_now_exits_1);
	CU_add_test(s, "grade__known_failing_entry_not_shown_is_fine",
	            grade__known_failing_entry_not_shown_is_fine);
	CU_add_test(s, "grade__strict_counts_recommended_checks",
	            grade__strict_counts_recommended_checks);
	CU_add_test(s, "grade__default_recommended_checks_need_strict",
	            grade__default_recommended_checks_need_strict);
	CU_add_test(s, "grade__repeat_keeps_tallies_lowest_level_and_worst_code",
	            grade__repeat_keeps_tallies_lowest_level_and_worst_code);
	CU_add_test(s, "grade__scenario_error_wins_over_known_failing",
	            grade__scenario_error_wins_over_known_failing);
	CU_add_test(s, "grade__reports_show_known_failing_checks",
	            grade__reports_show_known_failing_checks);
	CU_add_test(s, "grade__reports_show_a_repeat", grade__reports_show_a_repeat);
}
