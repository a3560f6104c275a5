/* test_expect.c -- each check's parameters: the registry's tables, validation when the harness
 * loads a scenario, reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "bad_corpus.h"
#include "check.h"
#include "expect.h"
#include "suite.h"

/* A valid scenario with tasks a and b and @expect as $.harness.expect
 * (JSON text; NULL for none). The caller frees it. */
static char *scenario_text(const char *expect)
{
	return fa_xasprintf(
	        "{\"id\": \"s1\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"sk-1\", "
	        "\"user\": \"u1\"}}}, \"routes\": [{\"id\": \"r\", \"method\": \"GET\", "
	        "\"path\": \"/a\", \"responses\": [{\"status\": 200}]}], \"harness\": {"
	        "\"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"},"
	        " {\"id\": \"b\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"}],"
	        " \"events\": [{\"at_ms\": 0, \"send\": [\"a\", \"b\"]}]%s%s}}",
	        expect ? ", \"expect\": " : "", expect ? expect : "");
}

/* The scenario with @expect as the provider loads it (no expect check). */
static struct fa_scenario *provider_parse(const char *expect)
{
	char *text = scenario_text(expect);
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };

	if (fa_scenario_parse(text, strlen(text), "t.json", &sc, &err) != FA_OK)
		FX_FAILF("the provider refused: %s", err.msg);
	free(text);
	return sc;
}

/* The harness's message for @expect, "" when it loads. */
static void harness_err(const char *expect, struct fa_err *err)
{
	char *text = scenario_text(expect);
	struct fa_scenario *sc = NULL;

	fa_err_clear(err);
	if (hx_suite_scenario_parse(text, strlen(text), "t.json", &sc, err) == FA_OK) {
		CU_ASSERT_STRING_EQUAL(err->msg, "");
	} else {
		CU_ASSERT_PTR_NULL(sc);
	}
	fa_scenario_free(sc);
	free(text);
}

/* One file of the corpus through the harness's loader (what run and
 * replay load with): its exact message, provider cases included. */
static void harness_case(const char *json, const char *want)
{
	struct fa_suite *su = NULL;
	struct fa_err err = { { 0 } };

	fx_bad_case(json, want, hx_suite_load(json, &su, &err) == FA_OK || su != NULL, err.msg);
	fa_suite_free(su);
}

static void expect__bad_files_give_their_exact_message(void)
{
	CU_ASSERT(fx_bad_corpus(harness_case) >= 20);
}

/* Each check takes its own parameters and "required", in table order. */
static void expect__a_check_takes_its_own_parameters_only(void)
{
	static const struct {
		const char *expect, *want;
	} cases[] = {
		{ "{\"attempts.bounded\": {\"x\": 1}}",
		  "t.json: $.harness.expect[\"attempts.bounded\"]: unknown key \"x\" (allowed: required)" },
		{ "{\"classify.no_retry_4xx\": {\"tolerance_ms\": 0}}",
		  "t.json: $.harness.expect[\"classify.no_retry_4xx\"]: unknown key \"tolerance_ms\" "
		  "(allowed: required)" },
		{ "{\"wait.jitter\": {\"margin_ms\": 1}}",
		  "t.json: $.harness.expect[\"wait.jitter\"]: unknown key \"margin_ms\" "
		  "(allowed: tolerance_ms, min_tasks, w_min_ms, required)" },
		{ "{\"budget.escalates\": {\"x\": 1}}",
		  "t.json: $.harness.expect[\"budget.escalates\"]: unknown key \"x\" "
		  "(allowed: tasks, tolerance_ms, required)" },
		{ "{\"cancel.quiet\": {\"x\": 1}}",
		  "t.json: $.harness.expect[\"cancel.quiet\"]: unknown key \"x\" "
		  "(allowed: margin_ms, tolerance_ms, required)" },
		{ "{\"wait.jitter\": {\"w_min_ms\": 0}}",
		  "t.json: $.harness.expect[\"wait.jitter\"].w_min_ms: expected integer 1..3600000, "
		  "got integer 0" },
		{ "{\"wait.scope_pause\": {\"tolerance_ms\": 60001}}",
		  "t.json: $.harness.expect[\"wait.scope_pause\"].tolerance_ms: expected integer "
		  "0..60000, got integer 60001" },
		{ "{\"wait.jitter\": {\"min_tasks\": 2.5}}",
		  "t.json: $.harness.expect[\"wait.jitter\"].min_tasks: expected integer 2..1000, "
		  "got number 2.5" },
		{ "{\"wait.retry_after\": 5}",
		  "t.json: $.harness.expect[\"wait.retry_after\"]: expected object, got integer 5" },
		{ "{\"wait.retry_after\": {}, \"wait.retry_after\": {}}",
		  "t.json: $.harness.expect: duplicate key \"wait.retry_after\"" },
		{ "{\"wait.retry_after\": {\"tolerance_ms\": 1, \"tolerance_ms\": 2}}",
		  "t.json: $.harness.expect[\"wait.retry_after\"]: duplicate key \"tolerance_ms\"" },
		{ "{\"budget.escalates\": {\"tasks\": [\"a\", \"\"]}}",
		  "t.json: $.harness.expect[\"budget.escalates\"].tasks[1]: expected non-empty string, "
		  "got string \"\"" },
		{ "{\"budget.escalates\": {\"tasks\": \"a\"}}",
		  "t.json: $.harness.expect[\"budget.escalates\"].tasks: expected non-empty array, "
		  "got string \"a\"" },
		{ "[]", "t.json: $.harness.expect: expected object, got empty array" },
	};
	struct fa_err err = { { 0 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		harness_err(cases[i].expect, &err);
		if (strcmp(err.msg, cases[i].want) != 0)
			FX_FAILF("case %zu:\n  expected: %s\n  got:      %s", i, cases[i].want,
			         err.msg);
	}
	/* every parameter of every check, at its bounds, loads */
	harness_err(
	        "{\"wait.retry_after\": {\"tolerance_ms\": 60000, \"required\": false},"
	        " \"wait.jitter\": {\"tolerance_ms\": 0, \"min_tasks\": 2, \"w_min_ms\": 3600000},"
	        " \"wait.concurrency\": {\"max_concurrent_requests\": 1000},"
	        " \"budget.escalates\": {\"tasks\": [\"b\", \"a\"], \"tolerance_ms\": 60000},"
	        " \"cancel.quiet\": {\"margin_ms\": 0, \"tolerance_ms\": 60000},"
	        " \"classify.circuit\": {\"max_identical\": 100}, \"attempts.bounded\": {}}",
	        &err);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
}

/* The provider keeps expect as it is (an object): the same bad
 * parameter loads there, and only the harness refuses it. */
static void expect__the_provider_leaves_expect_to_the_harness(void)
{
	struct fa_scenario *sc = provider_parse("{\"wait.retry_afer\": {\"x\": 1}}");
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(hx_expect_validate(sc, &err), FA_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.json: $.harness.expect: unknown check "
	                                       "\"wait.retry_afer\", did you mean "
	                                       "\"wait.retry_after\"? (allowed: attempts.bounded, "
	                                       "wait.retry_after, classify.no_retry_4xx, "));
	fa_scenario_free(sc);
	/* nothing to validate without an expect */
	sc = provider_parse(NULL);
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(hx_expect_validate(sc, &err), FA_OK);
	CU_ASSERT_EQUAL(hx_expect_validate(NULL, &err), FA_OK);
	fa_scenario_free(sc);
}

/* Values as given, defaults otherwise, the listed tasks as the
 * scenario's own; a hand-built object that breaks the table reads as
 * the defaults. */
/* Check @id's parameters in @sc, read by its registry row's table. */
static void read_params(const struct fa_scenario *sc, const char *id, struct hx_param_set *e)
{
	const struct hx_check_def *def = hx_check_find(id);

	hx_param_read(sc, def->id, def->params, def->n_params, e);
}

static void expect__read_gives_values_defaults_and_tasks(void)
{
	struct fa_scenario *sc = provider_parse(
	        "{\"wait.jitter\": {\"min_tasks\": 3, \"required\": false},"
	        " \"budget.escalates\": {\"tasks\": [\"b\", \"a\"]},"
	        " \"cancel.quiet\": {\"margin_ms\": 2500},"
	        " \"classify.circuit\": {\"max_identical\": 0, \"required\": true}}");
	struct hx_param_set e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	read_params(sc, "wait.jitter", &e);
	CU_ASSERT_EQUAL_FATAL(e.n, 3);
	CU_ASSERT_FALSE(e.v[0].given); /* tolerance_ms */
	CU_ASSERT_EQUAL(e.v[0].i, 50);
	CU_ASSERT_TRUE(e.v[1].given); /* min_tasks */
	CU_ASSERT_EQUAL(e.v[1].i, 3);
	CU_ASSERT_EQUAL(e.v[2].i, 1000); /* w_min_ms */
	CU_ASSERT_TRUE(e.required.given);
	CU_ASSERT_EQUAL(e.required.i, 0);
	hx_param_set_release(&e);
	CU_ASSERT_PTR_NULL(e.v);

	read_params(sc, "budget.escalates", &e);
	CU_ASSERT_TRUE(e.v[0].given);
	CU_ASSERT_EQUAL_FATAL(e.v[0].n_tasks, 2);
	CU_ASSERT_PTR_EQUAL(e.v[0].tasks[0], fa_scenario_task(sc, "b"));
	CU_ASSERT_PTR_EQUAL(e.v[0].tasks[1], fa_scenario_task(sc, "a"));
	CU_ASSERT_EQUAL(e.v[1].i, 500);
	CU_ASSERT_FALSE(e.required.given);
	hx_param_set_release(&e);

	/* max_identical 0 breaks the table: the check reads as unset, its
	 * "required" too */
	read_params(sc, "classify.circuit", &e);
	CU_ASSERT_FALSE(e.v[0].given);
	CU_ASSERT_EQUAL(e.v[0].i, HX_PARAM_NO_DEFAULT);
	CU_ASSERT_FALSE(e.required.given);
	hx_param_set_release(&e);

	/* no scenario: every default */
	read_params(NULL, "cancel.quiet", &e);
	CU_ASSERT_EQUAL(e.v[0].i, 1000);
	CU_ASSERT_EQUAL(e.v[1].i, 50);
	hx_param_set_release(&e);
	hx_param_set_release(NULL);

	CU_ASSERT_EQUAL(hx_expect_int(sc, "cancel.quiet", "margin_ms"), 2500);
	CU_ASSERT_EQUAL(hx_expect_int(NULL, "cancel.quiet", "margin_ms"), 1000);
	CU_ASSERT_EQUAL(hx_expect_int(sc, "wait.retry_after", "tolerance_ms"), 50);
	fa_scenario_free(sc);
}

/* The tables themselves: names unique and never "required", defaults
 * inside the range, "required" last in every allowed list. */
static void expect__every_table_is_sound(void)
{
	for (size_t i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);

		CU_ASSERT_TRUE(d->n_params == 0 || d->params != NULL);
		for (size_t k = 0; k < d->n_params; k++) {
			const struct hx_check_param *p = &d->params[k];

			CU_ASSERT_STRING_NOT_EQUAL(p->name, hx_param_required.name);
			CU_ASSERT_PTR_NOT_NULL(p->doc);
			for (size_t j = 0; j < k; j++)
				CU_ASSERT_STRING_NOT_EQUAL(p->name, d->params[j].name);
			if (p->kind != HX_PARAM_INT)
				continue;
			CU_ASSERT_TRUE(p->min <= p->max);
			CU_ASSERT_TRUE(p->dflt == HX_PARAM_NO_DEFAULT ||
			               (p->dflt >= p->min && p->dflt <= p->max));
		}
	}
}

/* The good files load through the harness too: every key they use is one
 * a check takes. */
static void expect__good_files_load(void)
{
	static const char *const files[] = { "tests/data/good/full.json",
		                             "tests/data/good/example.json",
		                             "scenarios/five-step/suite.json" };
	struct fa_err err = { { 0 } };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fa_suite *su = NULL;

		fa_err_clear(&err);
		CU_ASSERT_EQUAL(hx_suite_load(files[i], &su, &err), FA_OK);
		CU_ASSERT_STRING_EQUAL(err.msg, "");
		fa_suite_free(su);
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* A suite names the scenario whose expect is wrong; the provider's own
 * suite loader takes it. */
static void suite__names_the_scenario_whose_expect_is_wrong(void)
{
	char dir[] = "/tmp/fx-expect-XXXXXX";
	char *good = scenario_text("{\"wait.retry_after\": {\"tolerance_ms\": 10}}");
	char *bad = scenario_text("{\"cancel.quiet\": {\"margin_ms\": 60001}}");
	char *p_suite, *p_a, *p_b, *want;
	struct fa_suite *su = NULL;
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	p_suite = fa_xasprintf("%s/suite.json", dir);
	p_a = fa_xasprintf("%s/a.json", dir);
	p_b = fa_xasprintf("%s/b.json", dir);
	write_text(p_a, good);
	/* another id, or the suite refuses the pair before expect is read */
	bad[9] = '2';
	write_text(p_b, bad);
	write_text(p_suite,
	           "{\"id\": \"x\", \"version\": \"1\", \"scenarios\": [\"a.json\", \"b.json\"]}");

	CU_ASSERT_EQUAL(hx_suite_load(p_suite, &su, &err), FA_EINVAL);
	CU_ASSERT_PTR_NULL(su);
	want = fa_xasprintf("%s: $.harness.expect[\"cancel.quiet\"].margin_ms: expected integer "
	                    "0..60000, got integer 60001",
	                    p_b);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
	CU_ASSERT_EQUAL(fa_suite_load(p_suite, &su, &err), FA_OK);
	fa_suite_free(su);
	su = NULL;
	/* the good one alone loads */
	CU_ASSERT_EQUAL(hx_suite_load(p_a, &su, &err), FA_OK);
	CU_ASSERT_PTR_NOT_NULL(su);
	fa_suite_free(su);

	unlink(p_a);
	unlink(p_b);
	unlink(p_suite);
	rmdir(dir);
	free(want);
	free(p_suite);
	free(p_a);
	free(p_b);
	free(good);
	free(bad);
}

void test_expect_register(void)
{
	CU_pSuite s = CU_add_suite("expect", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "expect__bad_files_give_their_exact_message",
	            expect__bad_files_give_their_exact_message);
	CU_add_test(s, "expect__a_check_takes_its_own_parameters_only",
	            expect__a_check_takes_its_own_parameters_only);
	CU_add_test(s, "expect__the_provider_leaves_expect_to_the_harness",
	            expect__the_provider_leaves_expect_to_the_harness);
	CU_add_test(s, "expect__read_gives_values_defaults_and_tasks",
	            expect__read_gives_values_defaults_and_tasks);
	CU_add_test(s, "expect__every_table_is_sound", expect__every_table_is_sound);
	CU_add_test(s, "expect__good_files_load", expect__good_files_load);
	CU_add_test(s, "suite__names_the_scenario_whose_expect_is_wrong",
	            suite__names_the_scenario_whose_expect_is_wrong);
}
