/* test_pacing.c -- wait.pacing on hand-made journals. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check_fixture.h"
#include "pacing.h"

/* Tasks p1..p4, all sent at +0 ms; pacing @rpm/@tpm (0 = not set) per
 * @period_s, or none when both are 0. */
static void setup(struct fx *f, const char *expect, int rpm, int tpm, int period_s)
{
	fx_init(f, expect, "p", 4);
	f->sc.harness.pacing = (struct fa_pacing_spec){
		.given = rpm > 0 || tpm > 0, .rpm = rpm, .tpm = tpm, .period_s = period_s
	};
}

/* An attempt of @task with key @key arriving at @arr_ms, costing @tokens
 * (-1: not a chat request). */
static struct fa_attempt *add(struct fx *f, const char *task, const char *key, int64_t arr_ms,
                              int tokens)
{
	struct fa_attempt *a = fx_add(f, task, arr_ms, 200);

	a->key = fa_xstrdup(key);
	a->tokens = tokens;
	return a;
}

static struct hx_check_result judge(struct fx *f)
{
	return fx_judge(f, hx_pacing_check, "wait.pacing", HX_MODE_EXEC);
}

static void pacing__na_without_pacing_or_attempts(void)
{
	struct fx f;
	struct hx_check_result r;
	struct fa_attempt *a;

	setup(&f, NULL, 0, 0, 60);
	add(&f, "p1", "k1", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "the scenario publishes no pacing ($.harness.pacing)");
	hx_check_result_release(&r);
	fx_release(&f);

	/* an attempt without a valid key, or of no task, has no pace */
	setup(&f, NULL, 1, 0, 60);
	a = add(&f, "p1", "k1", 0, -1);
	free(a->key);
	a->key = NULL;
	add(&f, "zz", "k1", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no attempt named a key of the scenario to pace "
	                                 "(rpm 1 per 60 s)");
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void pacing__exactly_at_capacity_passes_one_more_fails(void)
{
	struct fx f;
	struct hx_check_result r;

	/* three at once against rpm 3: the bucket starts full */
	setup(&f, NULL, 3, 0, 1);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p2", "k1", 0, -1);
	add(&f, "p3", "k1", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "3 attempts of 1 key kept the pace (rpm 3 per 1 s, "
	                       "tolerance 50 ms); closest: key k1, seq 3 arrived with 1.0 of 1 "
	                       "request token left; 0 quota 429s");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);

	/* a fourth, refused by the provider's quota, still reached it */
	add(&f, "p4", "k1", 10, -1)->quota = fa_xstrdup("limited per-key replica 1");
	f.a[3].status = 429;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "key k1: seq 4 arrived with 0.0 of 1 request token "
	                                 "left (rpm 3 per 1 s, tolerance 50 ms); 1 quota 429");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 4);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void pacing__tolerance_on_both_sides(void)
{
	struct fx f;
	struct hx_check_result r;

	/* rpm 1 per 1 s: the second request is due at +1000 ms; 50 ms of
	 * refill are credited */
	setup(&f, NULL, 1, 0, 1);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p1", "k1", 950, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "closest: key k1, seq 2 arrived with "));
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, NULL, 1, 0, 1);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p1", "k1", 949, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "key k1: seq 2 arrived with 0.9 of 1 request token left"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* tolerance 0: due means due */
	setup(&f, "{\"wait.pacing\": {\"tolerance_ms\": 0}}", 1, 0, 1);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p1", "k1", 999, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "(rpm 1 per 1 s, tolerance 0 ms)"));
	hx_check_result_release(&r);
	f.a[1].t_arrival_us = 1000 * FX_MS;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void pacing__tokens_per_period(void)
{
	struct fx f;
	struct hx_check_result r;

	/* tpm 1000: 600 + 400 at once is exactly the bucket; a request
	 * without tokens (not a chat request) costs none */
	setup(&f, NULL, 0, 1000, 60);
	add(&f, "p1", "k1", 0, 600);
	add(&f, "p2", "k1", 0, 400);
	add(&f, "p3", "k1", 1, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "(tpm 1000 per 60 s, tolerance 50 ms)"));
	hx_check_result_release(&r);

	/* 3 s later the bucket has refilled 50 tokens, not 100 */
	add(&f, "p4", "k1", 3000, 100);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "key k1: seq 4 needed 100 tokens with 50.0 left "
	                                 "(tpm 1000 per 60 s, tolerance 50 ms); 0 quota 429s");
	CU_ASSERT_EQUAL(r.evidence[0], 4);
	hx_check_result_release(&r);
	fx_release(&f);

	/* both limits: the request bucket is the one that runs out */
	setup(&f, NULL, 1, 1000, 60);
	add(&f, "p1", "k1", 0, 10);
	add(&f, "p2", "k1", 5, 10);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "seq 2 arrived with 0.0 of 1 request token left "
	                          "(rpm 1, tpm 1000 per 60 s"));
	hx_check_result_release(&r);
	fx_release(&f);
}

/* Only a tpm and no attempt with a token cost: nothing could break the
 * pace, so nothing is judged; with an rpm every attempt takes a request
 * token and there is always something to judge. */
static void pacing__na_when_only_tpm_and_no_token_cost(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL, 0, 100, 60);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p2", "k1", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no attempt of a key had a token cost to judge "
	                                 "(tpm 100 per 60 s; 2 attempts, none a chat completion "
	                                 "or Messages request)");
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);

	/* one attempt with a cost is enough to judge them all */
	add(&f, "p3", "k1", 0, 5);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "3 attempts of 1 key kept the pace (tpm 100 per 60 s"));
	hx_check_result_release(&r);
	fx_release(&f);

	/* an rpm judges the same attempts without any token cost */
	setup(&f, NULL, 5, 100, 60);
	add(&f, "p1", "k1", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "1 attempt of 1 key kept the pace (rpm 5, tpm 100 per 60 s"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void pacing__each_key_has_its_own_buckets(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL, 1, 0, 10);
	add(&f, "p1", "k1", 0, -1);
	add(&f, "p2", "k2", 0, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "2 attempts of 2 keys kept the pace"));
	hx_check_result_release(&r);

	/* the first violation by arrival, not by journal order */
	add(&f, "p2", "k2", 300, -1);
	add(&f, "p1", "k1", 200, -1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "key k1: seq 4 arrived with 0.0 of 1 request token left"));
	CU_ASSERT_TRUE(fx_has(&r, "more attempts over the pace followed"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 4);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_pacing_register(void)
{
	CU_pSuite suite = CU_add_suite("pacing", NULL, NULL);

	CU_add_test(suite, "pacing__na_without_pacing_or_attempts",
	            pacing__na_without_pacing_or_attempts);
	CU_add_test(suite, "pacing__exactly_at_capacity_passes_one_more_fails",
	            pacing__exactly_at_capacity_passes_one_more_fails);
	CU_add_test(suite, "pacing__tolerance_on_both_sides", pacing__tolerance_on_both_sides);
	CU_add_test(suite, "pacing__tokens_per_period", pacing__tokens_per_period);
	CU_add_test(suite, "pacing__na_when_only_tpm_and_no_token_cost",
	            pacing__na_when_only_tpm_and_no_token_cost);
	CU_add_test(suite, "pacing__each_key_has_its_own_buckets",
	            pacing__each_key_has_its_own_buckets);
}
