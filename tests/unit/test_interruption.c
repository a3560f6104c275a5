/* test_interruption.c -- stream.no_silent_retry on hand-made journals and client lines. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check_fixture.h"
#include "interruption.h"

/* Tasks c1..c3, all sent at +0 ms. */
static void setup(struct fx *f)
{
	fx_init(f, NULL, "c", 3);
}

/* A streamed answer to @task arriving at @arr_ms, done 5 ms later after
 * @chunks content chunks, ending @end (NULL: no stream). */
static struct fa_attempt *stream(struct fx *f, const char *task, int64_t arr_ms, int chunks,
                                 const char *end)
{
	struct fa_attempt *a = fx_add(f, task, arr_ms, 200);

	a->t_done_us = (arr_ms + 5) * FX_MS;
	a->tokens = 20;
	a->stream_chunks = end != NULL ? chunks : -1;
	a->stream_end = end != NULL ? fa_xstrdup(end) : NULL;
	return a;
}

/* The client's stream_interrupted line for @task, read at @t_ms. */
static void report(struct fx *f, int64_t t_ms, const char *task)
{
	char *line = fa_xasprintf("{\"type\": \"stream_interrupted\", \"task\": \"%s\", "
	                          "\"attempt\": 1, \"chunks\": 2, \"reason\": \"error_frame\", "
	                          "\"error_code\": \"pool_exhausted\"}",
	                          task);

	fx_say(f, t_ms, line);
	free(line);
}

static struct hx_check_result judge(struct fx *f, enum hx_mode mode)
{
	return fx_judge(f, hx_interruption_check, "stream.no_silent_retry", mode);
}

static void interruption__na_without_a_stream_broken_past_a_token(void)
{
	struct fx f;
	struct hx_check_result r;

	/* a whole stream, a stream cut before its first chunk, a plain
	 * answer: each retried, none judged */
	setup(&f);
	stream(&f, "c1", 0, 9, "done");
	stream(&f, "c1", 100, 0, "error_frame");
	stream(&f, "c1", 200, 0, NULL);
	stream(&f, "c1", 300, 0, NULL);
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_STRING_EQUAL(r.detail, "no streamed answer broke after its first token "
	                                 "(2 streams, none cut past a chunk)");
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void interruption__exec_retry_fails_no_retry_passes(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f);
	stream(&f, "c1", 0, 3, "error_frame");
	stream(&f, "c2", 10, 0, NULL); /* another task's attempt is no retry */
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail, "task c1's stream broke after 3 chunks (error_frame) at "
	                                 "seq 1 and the task was not retried");
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	hx_check_result_release(&r);

	stream(&f, "c1", 417, 9, "done");
	r = judge(&f, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task c1 retried 412.0 ms after its stream broke after 3 "
	                       "chunks (error_frame) without reporting stream_interrupted (exec "
	                       "mode: a client cannot report, so a retry there is always silent): "
	                       "seq 1, then seq 3");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	CU_ASSERT_EQUAL(r.evidence[1], 3);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void interruption__stdio_report_before_the_retry_passes(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f);
	stream(&f, "c1", 0, 2, "cut");
	report(&f, 6, "c1");
	stream(&f, "c1", 100, 9, "done");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "task c1 reported stream_interrupted before retrying: "
	                       "its stream broke after 2 chunks (cut) at seq 1, the report was "
	                       "read at +6.0 ms, the retry seq 2 arrived at +100.0 ms");
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void interruption__stdio_report_after_the_retry_fails(void)
{
	struct fx f;
	struct hx_check_result r;

	/* read exactly one loop tick after the retry's arrival: the client
	 * may have written it first */
	setup(&f);
	stream(&f, "c1", 0, 2, "stall");
	stream(&f, "c1", 100, 9, "done");
	report(&f, 100 + HX_INTERRUPTION_READ_LAG_US / FX_MS, "c1");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	fx_release(&f);

	/* one ms more: it came after the retry */
	setup(&f);
	stream(&f, "c1", 0, 2, "stall");
	stream(&f, "c1", 100, 9, "done");
	report(&f, 101 + HX_INTERRUPTION_READ_LAG_US / FX_MS, "c1");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(
	        r.detail, "task c1 retried 95.0 ms after its stream broke after 2 "
	                  "chunks (stall) without reporting stream_interrupted first (its "
	                  "report was read 11.0 ms after the retry arrived): seq 1, then seq 2");
	hx_check_result_release(&r);
	fx_release(&f);

	/* a report of another task, or one read before the stream began,
	 * is not about this interruption */
	setup(&f);
	report(&f, 0, "c1");
	stream(&f, "c1", 1, 2, "client_gone");
	report(&f, 10, "c2");
	stream(&f, "c1", 100, 9, "done");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "without reporting stream_interrupted: seq 1, then seq 2"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void interruption__each_break_needs_its_own_report(void)
{
	struct fx f;
	struct hx_check_result r;

	/* broke, reported, retried; broke again and retried silently */
	setup(&f);
	stream(&f, "c1", 0, 1, "error_frame");
	report(&f, 20, "c1");
	stream(&f, "c1", 100, 4, "cut");
	stream(&f, "c1", 300, 9, "done");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "task c1 retried 195.0 ms after its stream broke after 4 "
	                          "chunks (cut)"));
	CU_ASSERT_TRUE(fx_has(&r, "seq 2, then seq 3"));
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	CU_ASSERT_EQUAL(r.evidence[0], 2);
	CU_ASSERT_EQUAL(r.evidence[1], 3);
	hx_check_result_release(&r);

	/* reported the second time too */
	report(&f, 150, "c1");
	r = judge(&f, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "every other retry was reported too"));
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_interruption_register(void)
{
	CU_pSuite suite = CU_add_suite("interruption", NULL, NULL);

	CU_add_test(suite, "interruption__na_without_a_stream_broken_past_a_token",
	            interruption__na_without_a_stream_broken_past_a_token);
	CU_add_test(suite, "interruption__exec_retry_fails_no_retry_passes",
	            interruption__exec_retry_fails_no_retry_passes);
	CU_add_test(suite, "interruption__stdio_report_before_the_retry_passes",
	            interruption__stdio_report_before_the_retry_passes);
	CU_add_test(suite, "interruption__stdio_report_after_the_retry_fails",
	            interruption__stdio_report_after_the_retry_fails);
	CU_add_test(suite, "interruption__each_break_needs_its_own_report",
	            interruption__each_break_needs_its_own_report);
}
