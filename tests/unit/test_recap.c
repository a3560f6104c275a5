/* test_recap.c -- the report's last word: which failure it names, with which mark, and what held
 * the level when nothing failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "known_failing.h"
#include "recap.h"
#include "report.h"
#include "scenario.h"

/* A run of two scenarios, "a" then "b", whose checks (every check the
 * harness knows, required or recommended as defined) all pass. */
struct run2 {
	struct fa_scenario sc[2];
	struct hx_scenario_result s[2];
	struct hx_run_result r;
};

static void run2_init(struct run2 *x)
{
	size_t n = hx_check_count();

	memset(x, 0, sizeof(*x));
	x->sc[0].id = "a";
	x->sc[1].id = "b";
	for (size_t k = 0; k < 2; k++) {
		struct hx_check_result *c = fa_xcalloc(n, sizeof(*c));

		for (size_t i = 0; i < n; i++) {
			c[i].id = hx_check_def_at(i)->id;
			c[i].level = hx_check_def_at(i)->level;
			c[i].required = hx_check_def_at(i)->required;
			c[i].verdict = HX_PASS;
			c[i].detail = fa_xasprintf("%s in %s", c[i].id, x->sc[k].id);
		}
		x->s[k].sc = &x->sc[k];
		x->s[k].checks = c;
		x->s[k].n_checks = n;
	}
	x->r.scenarios = x->s;
	x->r.n_scenarios = 2;
}

static void run2_release(struct run2 *x)
{
	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; i < x->s[k].n_checks; i++)
			free(x->s[k].checks[i].detail);
		free(x->s[k].checks);
	}
}

static struct hx_check_result *result(struct run2 *x, size_t k, const char *id)
{
	for (size_t i = 0; i < x->s[k].n_checks; i++)
		if (strcmp(x->s[k].checks[i].id, id) == 0)
			return &x->s[k].checks[i];
	CU_FAIL_FATAL("no such check");
	return NULL;
}

/* The text report of @x, graded; the caller frees it. */
static char *text_of(struct run2 *x)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	hx_grade_run(&x->r);
	out = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &x->r, false);
	fclose(out);
	return text;
}

/* The text from "\nwhy" on. */
static const char *why_of(const char *text)
{
	const char *why = strstr(text, "\nwhy");

	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	return why;
}

/* A check required in "a" (n/a there) and recommended in "b" (failed
 * there): the failure does not count, and the recap says so, whatever the
 * suite verdict over the counted scenarios is. */
static void recap__uncounted_failure_is_marked_by_its_own_row(void)
{
	struct run2 x;
	struct hx_recap rc;
	char *text;
	const char *why;

	run2_init(&x);
	result(&x, 0, "wait.concurrency")->required = true;
	result(&x, 0, "wait.concurrency")->verdict = HX_NA;
	result(&x, 1, "wait.concurrency")->required = false;
	result(&x, 1, "wait.concurrency")->verdict = HX_FAIL;
	text = text_of(&x);
	hx_recap_build(&x.r, &rc);
	CU_ASSERT_EQUAL_FATAL(rc.n >= 1, 1);
	CU_ASSERT_EQUAL(rc.rows[0].kind, HX_RECAP_FAIL);
	CU_ASSERT_FALSE(rc.rows[0].counted);
	CU_ASSERT_PTR_EQUAL(rc.rows[0].where, &x.s[1]);
	hx_recap_release(&rc);
	why = why_of(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "  FAIL  wait.concurrency       (L2) recommended, not "
	                                   "counted  b: wait.concurrency in b\n"));
	/* the suite line does not hide a check that failed somewhere */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  N/A   wait.concurrency       (L2); failed in 1 "
	                                    "scenario where it was not counted\n"));
	/* n/a where it counts: L2 is held by it, and the recap says that too */
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "  N/A   wait.concurrency       (L2) not judged where "
	                                   "it counts, so L2 is not reached  a: "));
	CU_ASSERT_EQUAL(x.r.exit_code, 0);
	free(text);
	run2_release(&x);
}

/* A check failing first where it does not count and then where it does:
 * the recap names the counted failure, the one behind the exit code. */
static void recap__names_the_counted_failure_first(void)
{
	struct run2 x;
	char *text;

	run2_init(&x);
	result(&x, 0, "wait.retry_after")->required = false;
	result(&x, 0, "wait.retry_after")->verdict = HX_FAIL;
	result(&x, 1, "wait.retry_after")->verdict = HX_FAIL;
	text = text_of(&x);
	CU_ASSERT_PTR_NOT_NULL(strstr(
	        why_of(text), "  FAIL  wait.retry_after       (L1)  b: wait.retry_after in b "
	                      "(and in 1 more scenario)\n"));
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	free(text);
	run2_release(&x);
}

/* Nothing failed, but a counted check was n/a everywhere it counted: the
 * recap names it as what held the level, not "no check failed". */
static void recap__names_the_na_check_that_held_the_level(void)
{
	struct run2 x;
	char *text;
	const char *why;

	run2_init(&x);
	result(&x, 0, "wait.jitter")->verdict = HX_NA;
	result(&x, 1, "wait.jitter")->verdict = HX_NA;
	x.r.min_level = 4;
	text = text_of(&x);
	CU_ASSERT_EQUAL(x.r.level, 1);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	why = why_of(text);
	CU_ASSERT_PTR_NULL(strstr(why, "no check failed\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why,
	                              "\nwhy (no check failed, but the level stops at L1):\n"
	                              "  N/A   wait.jitter            (L2) not judged where it "
	                              "counts, so L2 is not reached  a: wait.jitter in a "
	                              "(and in 1 more scenario)\n"));
	free(text);
	run2_release(&x);
}

/* The next level has no counted check at all: said as such. */
static void recap__names_a_level_with_no_counted_check(void)
{
	struct run2 x;
	char *text;

	run2_init(&x);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < x.s[k].n_checks; i++)
			if (x.s[k].checks[i].level == 3)
				x.s[k].checks[i].uncovered = true;
	text = text_of(&x);
	CU_ASSERT_EQUAL(x.r.level, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(why_of(text), "  L3    no L3 check counts here (none is "
	                                            "both covered and required), so L3 is not "
	                                            "reached\n"));
	free(text);
	run2_release(&x);
}

/* A known-failing entry that passes now fails the run by itself: the
 * recap names it first, not a level. */
static void recap__names_a_known_failing_entry_that_passes_now(void)
{
	struct run2 x;
	struct fa_err err = { "" };
	struct hx_known_failing *kf = NULL;
	char *text;

	run2_init(&x);
	CU_ASSERT_EQUAL_FATAL(hx_known_failing_parse("ci/kf.txt", "wait.jitter\n", 12, &kf, &err),
	                      FA_OK);
	x.r.known_failing = kf;
	text = text_of(&x);
	CU_ASSERT_EQUAL(x.r.exit_code, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why_of(text),
	                              "\nwhy (no check failed, but a known-failing entry passes "
	                              "now):\n  PASS  wait.jitter            (L2) known failing, "
	                              "passes now: remove it from ci/kf.txt\n"));
	free(text);
	hx_known_failing_free(kf);
	run2_release(&x);
}

/* All passed: nothing to explain. */
static void recap__is_empty_when_l4_is_reached(void)
{
	struct run2 x;
	struct hx_recap rc;
	char *text;

	run2_init(&x);
	text = text_of(&x);
	hx_recap_build(&x.r, &rc);
	CU_ASSERT_EQUAL(rc.n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nwhy: no check failed\n"));
	hx_recap_release(&rc);
	free(text);
	run2_release(&x);
}

void test_recap_register(void)
{
	CU_pSuite s = CU_add_suite("recap", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "recap__uncounted_failure_is_marked_by_its_own_row",
	            recap__uncounted_failure_is_marked_by_its_own_row);
	CU_add_test(s, "recap__names_the_counted_failure_first",
	            recap__names_the_counted_failure_first);
	CU_add_test(s, "recap__names_the_na_check_that_held_the_level",
	            recap__names_the_na_check_that_held_the_level);
	CU_add_test(s, "recap__names_a_level_with_no_counted_check",
	            recap__names_a_level_with_no_counted_check);
	CU_add_test(s, "recap__names_a_known_failing_entry_that_passes_now",
	            recap__names_a_known_failing_entry_that_passes_now);
	CU_add_test(s, "recap__is_empty_when_l4_is_reached", recap__is_empty_when_l4_is_reached);
}
