/* test_stdio.c -- stdio client mode: line parsing, protocol errors, task lines, sessions. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "client_log.h"
#include "clock.h"
#include "result.h"
#include "scenario.h"
#include "stdio_client.h"
#include "stray.h"

#define HELLO "{\"type\":\"hello\",\"protocol\":1,\"client\":{\"name\":\"t\",\"version\":\"0\"}}"

/* Feed one NUL-terminated line. */
static enum hx_client_line feed(struct hx_client_log *l, const char *line, int64_t t_us)
{
	return hx_client_log_line(l, line, strlen(line), false, t_us);
}

/* A log past its hello that was given task t1. */
static void greeted(struct hx_client_log *l)
{
	hx_client_log_init(l);
	CU_ASSERT_EQUAL_FATAL(feed(l, HELLO, 0), HX_CLIENT_LINE_HELLO);
	hx_client_log_task(l, "t1");
}

static const char *last_error(const struct hx_client_log *l)
{
	return l->n_errors ? l->errors[l->n_errors - 1] : "";
}

static void stdio__first_line_must_be_hello(void)
{
	struct hx_client_log l;

	hx_client_log_init(&l);
	hx_client_log_task(&l, "t1");
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\"}", 5),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_PTR_NULL(l.hello);
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	CU_ASSERT_STRING_EQUAL(last_error(&l), "line 1: expected hello, got type \"action_sent\"");
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"hello\",\"protocol\":\"1\"}", 6),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_STRING_EQUAL(last_error(&l), "line 2: hello: \"protocol\" must be an integer");
	CU_ASSERT_PTR_NULL(l.hello);
	hx_client_log_release(&l);
}

static void stdio__hello_is_kept_apart_from_the_messages(void)
{
	struct hx_client_log l;

	hx_client_log_init(&l);
	CU_ASSERT_EQUAL(feed(&l, HELLO, 0), HX_CLIENT_LINE_HELLO);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.hello);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(l.hello, "protocol")->valueint, 1);
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	CU_ASSERT_EQUAL(l.n_errors, 0);
	CU_ASSERT_EQUAL(l.n_lines, 1);
	hx_client_log_release(&l);
}

/* docs/client-protocol.md: a stream broken past its first token is
 * reported before any retry; the line is kept, stamped, for the check. */
static void stdio__stream_interrupted_is_a_message(void)
{
	struct hx_client_log l;

	greeted(&l);
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"stream_interrupted\",\"task\":\"t1\",\"attempt\":1,"
	                     "\"chunks\":2,\"reason\":\"error_frame\",\"error_code\":"
	                     "\"pool_exhausted\"}",
	                     777),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(l.n_errors, 0);
	CU_ASSERT_EQUAL_FATAL(l.n_msgs, 1);
	CU_ASSERT_STRING_EQUAL(l.msgs[0].type, "stream_interrupted");
	CU_ASSERT_STRING_EQUAL(l.msgs[0].task, "t1");
	CU_ASSERT_EQUAL(l.msgs[0].t_us, 777);
	/* it names a task the client was given, like every message */
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"stream_interrupted\",\"task\":\"t9\"}", 778),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_STRING_EQUAL(last_error(&l), "line 3: unknown task \"t9\"");
	hx_client_log_release(&l);
}

/* docs/client-protocol.md: attempt and chunks are integers >= 1, reason
 * one of four, error_code a string or null; any other is a protocol
 * error and no report of the break. */
static void stdio__malformed_stream_interrupted_is_no_report(void)
{
	static const struct {
		const char *members;
		const char *error;
	} bad[] = {
		{ "\"attempt\":1,\"chunks\":0,\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":1,\"chunks\":-1,\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":1,\"chunks\":1e308,\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":1,\"chunks\":1.5,\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":1,\"chunks\":\"2\",\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":1,\"reason\":\"cut\",\"error_code\":null",
		  "\"chunks\" must be an integer >= 1" },
		{ "\"attempt\":0,\"chunks\":2,\"reason\":\"cut\",\"error_code\":null",
		  "\"attempt\" must be an integer >= 1" },
		{ "\"chunks\":2,\"reason\":\"cut\",\"error_code\":null",
		  "\"attempt\" must be an integer >= 1" },
		{ "\"attempt\":1,\"chunks\":2,\"reason\":\"whatever\",\"error_code\":null",
		  "\"reason\" must be error_frame, cut, stall or transport" },
		{ "\"attempt\":1,\"chunks\":2,\"error_code\":null",
		  "\"reason\" must be error_frame, cut, stall or transport" },
		{ "\"attempt\":1,\"chunks\":2,\"reason\":\"cut\",\"error_code\":7",
		  "\"error_code\" must be a string or null" },
		{ "\"attempt\":1,\"chunks\":2,\"reason\":\"cut\"",
		  "\"error_code\" must be a string or null" },
	};
	static const char *const good[] = {
		"\"attempt\":1,\"chunks\":1,\"reason\":\"transport\",\"error_code\":null",
		"\"attempt\":3,\"chunks\":9,\"reason\":\"stall\",\"error_code\":null",
		"\"attempt\":2,\"chunks\":4,\"reason\":\"error_frame\",\"error_code\":\"x\"",
	};
	struct hx_client_log l;
	char *line, *want;

	greeted(&l);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		line = fa_xasprintf("{\"type\":\"stream_interrupted\",\"task\":\"t1\",%s}",
		                    bad[i].members);
		want = fa_xasprintf("line %zu: stream_interrupted: %s", i + 2, bad[i].error);
		CU_ASSERT_EQUAL(feed(&l, line, 10), HX_CLIENT_LINE_ERROR);
		CU_ASSERT_STRING_EQUAL(last_error(&l), want);
		free(want);
		free(line);
	}
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		line = fa_xasprintf("{\"type\":\"stream_interrupted\",\"task\":\"t1\",%s}",
		                    good[i]);
		CU_ASSERT_EQUAL(feed(&l, line, 10), HX_CLIENT_LINE_MSG);
		free(line);
	}
	CU_ASSERT_EQUAL(l.n_msgs, 3);
	CU_ASSERT_EQUAL(l.n_errors, sizeof(bad) / sizeof(bad[0]));
	hx_client_log_release(&l);
}

/* The log says which line the hello came on: only line 1 greets a
 * session (hx_stdio_hello). */
static void stdio__hello_line_is_recorded(void)
{
	struct hx_client_log l;

	hx_client_log_init(&l);
	CU_ASSERT_EQUAL(l.hello_line, 0);
	CU_ASSERT_EQUAL(feed(&l, "junk", 0), HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(l.hello_line, 0);
	CU_ASSERT_EQUAL(feed(&l, HELLO, 0), HX_CLIENT_LINE_HELLO);
	CU_ASSERT_EQUAL(l.hello_line, 2);
	hx_client_log_release(&l);

	hx_client_log_init(&l);
	CU_ASSERT_EQUAL(feed(&l, HELLO, 0), HX_CLIENT_LINE_HELLO);
	CU_ASSERT_EQUAL(l.hello_line, 1);
	hx_client_log_release(&l);
}

static void stdio__valid_lines_become_stamped_messages(void)
{
	struct hx_client_log l;

	greeted(&l);
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1,"
	                     "\"idempotency_key\":null}\r",
	                     1234),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(feed(&l,
	                     " {\"type\":\"action_result\",\"task\":\"t1\",\"attempt\":1,"
	                     "\"status\":429,\"retry_after\":\"1\",\"error\":null} ",
	                     2345),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"failed\","
	                     "\"attempts\":1}",
	                     3456),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL_FATAL(l.n_msgs, 3);
	CU_ASSERT_EQUAL(l.n_errors, 0);
	CU_ASSERT_EQUAL(l.msgs[0].t_us, 1234);
	CU_ASSERT_STRING_EQUAL(l.msgs[0].type, "action_sent");
	CU_ASSERT_STRING_EQUAL(l.msgs[0].task, "t1");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(l.msgs[0].json, "attempt")->valueint, 1);
	CU_ASSERT_EQUAL(l.msgs[1].t_us, 2345);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(l.msgs[1].json, "status")->valueint, 429);
	CU_ASSERT_STRING_EQUAL(l.msgs[2].type, "result");
	CU_ASSERT_TRUE(l.has_result[0]);
	hx_client_log_release(&l);
}

static void stdio__malformed_lines_are_numbered_protocol_errors(void)
{
	static const struct {
		const char *line;
		const char *error;
	} cases[] = {
		{ "garbage", "line 2: not a JSON object: garbage" },
		{ "[1,2]", "line 3: not a JSON object: [1,2]" },
		{ "", "line 4: not a JSON object: empty line" },
		{ "{\"type\":\"action_sent\",\"task\":\"t1\"} tail",
		  "line 5: not a JSON object: {\"type\":\"action_sent\",\"task\":\"t1\"} tail" },
		{ "{\"task\":\"t1\"}", "line 6: no \"type\"" },
		{ "{\"type\":7,\"task\":\"t1\"}", "line 7: no \"type\"" },
		{ "{\"type\":\"bogus\",\"task\":\"t1\"}", "line 8: unknown type \"bogus\"" },
		{ "{\"type\":\"action_sent\"}", "line 9: no \"task\"" },
		{ "{\"type\":\"action_sent\",\"task\":\"t9\"}", "line 10: unknown task \"t9\"" },
		{ HELLO, "line 11: a second hello" },
		{ "{\"type\":\"action_result\",\"task\":\"t1\",\"status\":\"429\"}",
		  "line 12: action_result: \"status\" must be an integer 0..999" },
		{ "{\"type\":\"action_result\",\"task\":\"t1\",\"status\":1000}",
		  "line 13: action_result: \"status\" must be an integer 0..999" },
		{ "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"done\"}",
		  "line 14: result: \"outcome\" must be succeeded, failed, escalated or cancelled" },
		{ "{\"type\":\"unknown-and-a-very-long-type-name-that-goes-on-and-on-and-on-for-ever\","
		  "\"task\":\"t1\"}",
		  "line 15: unknown type \"unknown-and-a-very-long-type-name-that-goes-on-and-on-and-on"
		  "...\"" },
	};
	struct hx_client_log l;

	greeted(&l);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(feed(&l, cases[i].line, 1), HX_CLIENT_LINE_ERROR);
		CU_ASSERT_EQUAL_FATAL(l.n_errors, i + 1);
		CU_ASSERT_STRING_EQUAL(l.errors[i], cases[i].error);
	}
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	CU_ASSERT_FALSE(l.has_result[0]);
	hx_client_log_release(&l);
}

static void stdio__nothing_counts_after_a_task_result(void)
{
	struct hx_client_log l;

	greeted(&l);
	CU_ASSERT_EQUAL(
	        feed(&l, "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"succeeded\"}", 1),
	        HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\"}", 2),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(
	        feed(&l, "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"succeeded\"}", 3),
	        HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(l.n_msgs, 1);
	CU_ASSERT_EQUAL_FATAL(l.n_errors, 2);
	CU_ASSERT_STRING_EQUAL(l.errors[0], "line 3: task \"t1\" already reported its result");
	CU_ASSERT_STRING_EQUAL(l.errors[1], "line 4: task \"t1\" already reported its result");
	hx_client_log_release(&l);
}

static void stdio__cut_and_nul_lines_are_malformed(void)
{
	static const char nul_line[] = "{\"type\":\"action_sent\",\"task\":\"t1\"}\0x";
	struct hx_client_log l;

	greeted(&l);
	CU_ASSERT_EQUAL(hx_client_log_line(&l, "{\"type\":", 8, true, 1), HX_CLIENT_LINE_ERROR);
	CU_ASSERT_STRING_EQUAL(last_error(&l), "line 2: longer than 1048576 bytes, cut");
	CU_ASSERT_EQUAL(hx_client_log_line(&l, nul_line, sizeof(nul_line) - 1, false, 1),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(l.n_errors, 2);
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	hx_client_log_release(&l);
}

static void stdio__errors_past_the_cap_are_counted_then_summed_up(void)
{
	struct hx_client_log l;
	struct hx_scenario_result r;

	memset(&r, 0, sizeof(r));
	greeted(&l);
	for (int i = 0; i < HX_CLIENT_LOG_MAX_ERRORS + 5; i++)
		feed(&l, "x", 1);
	/* how the process ended is kept past the cap */
	hx_client_log_error(&l, "client exited with status %d before shutdown", 3);
	CU_ASSERT_EQUAL(l.n_errors, HX_CLIENT_LOG_MAX_ERRORS + 1);
	CU_ASSERT_EQUAL(l.n_dropped, 5);
	feed(&l, "x", 1);
	CU_ASSERT_EQUAL(l.n_dropped, 6);
	feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\"}", 9);
	hx_client_log_move(&l, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_protocol_errors, HX_CLIENT_LOG_MAX_ERRORS + 2);
	CU_ASSERT_EQUAL(r.n_protocol_errors_seen, HX_CLIENT_LOG_MAX_ERRORS + 7);
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[0], "line 2: not a JSON object: x");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[HX_CLIENT_LOG_MAX_ERRORS],
	                       "6 more protocol errors not listed");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[HX_CLIENT_LOG_MAX_ERRORS + 1],
	                       "client exited with status 3 before shutdown");
	CU_ASSERT_EQUAL(r.n_msgs, 1);
	CU_ASSERT_PTR_NOT_NULL(r.hello);
	CU_ASSERT_EQUAL(l.n_errors, 0);
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	CU_ASSERT_PTR_NULL(l.hello);
	/* the log goes on: line numbers and tasks are kept */
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\"}", 9),
	                HX_CLIENT_LINE_MSG);
	hx_client_log_release(&l);
	hx_scenario_result_release(&r);
}

static void stdio__end_of_session_errors_survive_the_cap_in_order(void)
{
	struct hx_client_log l;
	struct hx_scenario_result r;

	memset(&r, 0, sizeof(r));
	greeted(&l);
	hx_client_log_error(&l, "client exited with status %d before shutdown", 1);
	for (int i = 0; i < HX_CLIENT_LOG_MAX_ERRORS + 2; i++)
		feed(&l, "x", 1);
	hx_client_log_error(&l, "client still running %g s after shutdown: killed", 5.0);
	hx_client_log_move(&l, &r);
	/* a restarted client's session: its own cap, its own count */
	for (int i = 0; i < HX_CLIENT_LOG_MAX_ERRORS + 3; i++)
		feed(&l, "y", 1);
	hx_client_log_move(&l, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_protocol_errors, 2 * HX_CLIENT_LOG_MAX_ERRORS + 4);
	CU_ASSERT_EQUAL(r.n_protocol_errors_seen, 2 * HX_CLIENT_LOG_MAX_ERRORS + 7);
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[0], "client exited with status 1 before shutdown");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[1], "line 2: not a JSON object: x");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[HX_CLIENT_LOG_MAX_ERRORS + 1],
	                       "2 more protocol errors not listed");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[HX_CLIENT_LOG_MAX_ERRORS + 2],
	                       "client still running 5 s after shutdown: killed");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[2 * HX_CLIENT_LOG_MAX_ERRORS + 3],
	                       "3 more protocol errors not listed");
	hx_client_log_release(&l);
	hx_scenario_result_release(&r);
}

static void stdio__result_is_kept_past_the_message_cap(void)
{
	static const char sent[] = "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}";
	struct hx_client_log l;
	char msg[64];

	greeted(&l);
	hx_client_log_task(&l, "t2");
	for (int i = 0; i < HX_CLIENT_LOG_MAX_MSGS; i++)
		CU_ASSERT_EQUAL_FATAL(feed(&l, sent, i), HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(feed(&l, sent, 1), HX_CLIENT_LINE_ERROR);
	snprintf(msg, sizeof(msg), "line %d: more than %d messages, ignored",
	         HX_CLIENT_LOG_MAX_MSGS + 2, HX_CLIENT_LOG_MAX_MSGS);
	CU_ASSERT_STRING_EQUAL(last_error(&l), msg);
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_result\",\"task\":\"t1\",\"status\":200}", 2),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":"
	                     "\"succeeded\",\"attempts\":100000}",
	                     3),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"result\",\"task\":\"t2\",\"outcome\":"
	                     "\"failed\",\"attempts\":0}",
	                     4),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL_FATAL(l.n_msgs, HX_CLIENT_LOG_MAX_MSGS + 2);
	CU_ASSERT_STRING_EQUAL(l.msgs[HX_CLIENT_LOG_MAX_MSGS].type, "result");
	CU_ASSERT_STRING_EQUAL(l.msgs[HX_CLIENT_LOG_MAX_MSGS + 1].task, "t2");
	CU_ASSERT_TRUE(l.has_result[0]);
	CU_ASSERT_TRUE(l.has_result[1]);
	CU_ASSERT_EQUAL(l.n_errors, 2);
	/* a second result for a task is still refused */
	CU_ASSERT_EQUAL(feed(&l,
	                     "{\"type\":\"result\",\"task\":\"t1\",\"outcome\":"
	                     "\"succeeded\",\"attempts\":1}",
	                     5),
	                HX_CLIENT_LINE_ERROR);
	hx_client_log_release(&l);
}

static void stdio__key_env_is_upper_case_with_underscores(void)
{
	char *a = hx_stdio_key_env("ops-1");
	char *b = hx_stdio_key_env("a.b_c9Z");

	CU_ASSERT_STRING_EQUAL(a, "FAKEAPI_KEY_OPS_1");
	CU_ASSERT_STRING_EQUAL(b, "FAKEAPI_KEY_A_B_C9Z");
	free(a);
	free(b);
}

static const char scenario_text[] =
        "{\"id\": \"s\", \"provider\": {\"keys\": {\"ops-1\": {\"secret\": \"sk-1\", \"user\": \"ops-team\"}},"
        " \"scope\": \"%s\"},"
        " \"routes\": [{\"id\": \"r\", \"method\": \"POST\", \"path\": \"/v1/records\","
        "   \"responses\": [{\"status\": 200}]},"
        "  {\"id\": \"list\", \"method\": \"GET\", \"path\": \"/v1/records\","
        "   \"responses\": [{\"status\": 200}]}],"
        " \"harness\": {\"tasks\": ["
        "   {\"id\": \"t1\", \"key\": \"ops-1\", \"class\": \"write\", \"method\": \"POST\","
        "    \"path\": \"/v1/records\", \"headers\": {\"Accept\": \"application/json\"},"
        "    \"body\": {\"a\": [1, \"x\"]}, \"budget\": {\"max_attempts\": 4}},"
        "   {\"id\": \"t2\", \"key\": \"ops-1\", \"method\": \"GET\", \"path\": \"/v1/records\","
        "    \"budget\": {\"max_wait_s\": 0}}],"
        "   \"events\": [{\"at_ms\": 0, \"send\": [\"t1\", \"t2\"]}]}}";

static struct fa_scenario *load_scenario(const char *scope)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	char *text = fa_xasprintf(scenario_text, scope);

	if (fa_scenario_parse(text, strlen(text), "s.json", &sc, &err) != FA_OK)
		fprintf(stderr, "test scenario: %s\n", err.msg);
	free(text);
	return sc;
}

static void stdio__task_line_has_the_protocol_fields(void)
{
	struct fa_scenario *sc = load_scenario("user");
	cJSON *t, *budget;
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	t = hx_stdio_task_json(sc, &sc->harness.tasks[0], "http://h/v1/records?fa_task=t1", 75000);
	text = cJSON_PrintUnformatted(t);
	CU_ASSERT_STRING_EQUAL(
	        text, "{\"type\":\"task\",\"id\":\"t1\",\"class\":\"write\",\"method\":\"POST\","
	              "\"url\":\"http://h/v1/records?fa_task=t1\","
	              "\"headers\":{\"Accept\":\"application/json\"},"
	              "\"body\":\"{\\\"a\\\":[1,\\\"x\\\"]}\",\"goal\":null,\"key\":\"ops-1\","
	              "\"key_env\":\"FAKEAPI_KEY_OPS_1\",\"scope\":\"user:ops-team\","
	              "\"budget\":{\"max_attempts\":4,\"max_wait_s\":null},"
	              "\"deadline_ms\":75000,\"stream\":false,\"tokens\":null,"
	              "\"pacing\":null}");
	CU_ASSERT_PTR_NULL(strstr(text, "sk-1")); /* secrets never travel in lines */
	free(text);
	cJSON_Delete(t);
	t = hx_stdio_task_json(sc, &sc->harness.tasks[1], "u", 1);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "class")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "body")));
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(t, "headers")), 0);
	budget = cJSON_GetObjectItem(t, "budget");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(budget, "max_attempts")));
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(budget, "max_wait_s")->valueint, 0);
	cJSON_Delete(t);
	fa_scenario_free(sc);

	sc = load_scenario("key");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	t = hx_stdio_task_json(sc, &sc->harness.tasks[0], "u", 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "scope")->valuestring, "key:ops-1");
	cJSON_Delete(t);
	fa_scenario_free(sc);
}

/* A one-task scenario whose task has @body (JSON text) and whose
 * $.provider and $.harness end with @provider_more and @harness_more. */
static struct fa_scenario *chat_scenario(const char *body, const char *provider_more,
                                         const char *harness_more)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	char *text = fa_xasprintf(
	        "{\"id\": \"s\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"sk-1\", "
	        "\"user\": \"u\"}}%s},"
	        " \"routes\": [{\"id\": \"r\", \"method\": \"POST\", \"path\": \"/v1/chat\","
	        "   \"responses\": [{\"status\": 200}]}],"
	        " \"harness\": {\"tasks\": [{\"id\": \"c1\", \"key\": \"k\", \"method\": \"POST\","
	        "   \"path\": \"/v1/chat\", \"body\": %s}],"
	        "   \"events\": [{\"at_ms\": 0, \"send\": [\"c1\"]}]%s}}",
	        provider_more, body, harness_more);

	if (fa_scenario_parse(text, strlen(text), "s.json", &sc, &err) != FA_OK)
		fprintf(stderr, "test scenario: %s\n", err.msg);
	free(text);
	return sc;
}

/* The members stream, tokens and pacing of @sc's task line, compact. */
static char *stream_members(const struct fa_scenario *sc)
{
	cJSON *t = hx_stdio_task_json(sc, &sc->harness.tasks[0], "u", 1);
	char *a = cJSON_PrintUnformatted(cJSON_GetObjectItem(t, "stream"));
	char *b = cJSON_PrintUnformatted(cJSON_GetObjectItem(t, "tokens"));
	char *c = cJSON_PrintUnformatted(cJSON_GetObjectItem(t, "pacing"));
	char *s = fa_xasprintf("%s %s %s", a, b, c);

	free(a);
	free(b);
	free(c);
	cJSON_Delete(t);
	return s;
}

static void stdio__task_line_carries_stream_tokens_and_pacing(void)
{
	static const struct {
		const char *body, *provider_more, *harness_more, *want;
	} cases[] = {
		/* 9 bytes of prompt: 3 tokens, plus max_tokens 50 */
		{ "{\"stream\": true, \"max_tokens\": 50, \"messages\": [{\"role\": \"user\", "
		  "\"content\": \"abcdefghi\"}]}",
		  "", ", \"pacing\": {\"rpm\": 10, \"period_s\": 2}",
		  "true 53 {\"rpm\":10,\"tpm\":null,\"period_s\":2}" },
		/* no max_tokens; the period is the quota's, else a minute */
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"abcd\"}, "
		  "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"ab\"}]}]}",
		  ", \"quota\": {\"period_s\": 5}", ", \"pacing\": {\"tpm\": 1000}",
		  "false 2 {\"rpm\":null,\"tpm\":1000,\"period_s\":5}" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"\"}]}", "",
		  ", \"pacing\": {\"tpm\": 1000, \"rpm\": 3}",
		  "false 0 {\"rpm\":3,\"tpm\":1000,\"period_s\":60}" },
		/* not a chat request: no tokens; stream only from a true member */
		{ "{\"stream\": true}", "", "", "true null null" },
		{ "{\"stream\": \"yes\", \"messages\": []}", "", "", "false null null" },
		{ "[{\"stream\": true}]", "", "", "false null null" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fa_scenario *sc =
		        chat_scenario(cases[i].body, cases[i].provider_more, cases[i].harness_more);
		char *got;

		CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
		got = stream_members(sc);
		if (strcmp(got, cases[i].want) != 0)
			fprintf(stderr, "case %zu: got %s\n", i, got);
		CU_ASSERT_STRING_EQUAL(got, cases[i].want);
		free(got);
		fa_scenario_free(sc);
	}
}

/* The body sent (a canary in it, say) decides stream and tokens, in place. */
static void stdio__task_body_sets_stream_and_tokens_in_place(void)
{
	cJSON *line = cJSON_Parse("{\"type\": \"task\", \"body\": null, \"goal\": null, "
	                          "\"stream\": false, \"tokens\": null}");
	cJSON *body = cJSON_Parse("{\"stream\": true, \"max_tokens\": 1, \"messages\": "
	                          "[{\"role\": \"user\", \"content\": \"12345678\"}]}");
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	hx_stdio_task_body(line, body, FA_ROUTE_CHAT);
	text = cJSON_PrintUnformatted(line);
	CU_ASSERT_STRING_EQUAL(text, "{\"type\":\"task\",\"body\":\"{\\\"stream\\\":true,"
	                             "\\\"max_tokens\\\":1,\\\"messages\\\":[{\\\"role\\\":"
	                             "\\\"user\\\",\\\"content\\\":\\\"12345678\\\"}]}\","
	                             "\"goal\":null,\"stream\":true,\"tokens\":3}");
	free(text);
	hx_stdio_task_body(line, NULL, FA_ROUTE_CHAT);
	text = cJSON_PrintUnformatted(line);
	CU_ASSERT_STRING_EQUAL(text, "{\"type\":\"task\",\"body\":null,\"goal\":null,"
	                             "\"stream\":false,\"tokens\":null}");
	free(text);
	cJSON_Delete(body);
	/* a Messages request's system text costs tokens too, as the provider
	 * counts it: 2 (system) + 2 (message) + 1 (max_tokens) */
	body = cJSON_Parse("{\"model\": \"m\", \"max_tokens\": 1, \"system\": \"abcdefgh\", "
	                   "\"messages\": [{\"role\": \"user\", \"content\": \"12345678\"}]}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	hx_stdio_task_body(line, body, FA_ROUTE_MESSAGES);
	CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(line, "tokens")->valuedouble, 5);
	hx_stdio_task_body(line, body, FA_ROUTE_CHAT);
	CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(line, "tokens")->valuedouble, 3);
	cJSON_Delete(body);
	cJSON_Delete(line);
}

/* ---- sessions with real processes ------------------------------------ */

/* Start @cmd with a short grace; FATAL on failure. */
static struct hx_stdio *start(const char *cmd, const char *const *env, int64_t t0_us)
{
	struct hx_stdio_spec spec = {
		.cmd = cmd,
		.env = env,
		.t0_us = t0_us,
		.grace_us = 300000,
	};
	struct fa_err err = { { 0 } };
	struct hx_stdio *c = NULL;

	if (hx_stdio_start(&spec, &c, &err) != FA_OK)
		fprintf(stderr, "start: %s\n", err.msg);
	return c;
}

/* Pump until the session is finished, at most @ms. */
static bool pump_until_finished(struct hx_stdio *c, int ms)
{
	int64_t end = fa_clock_mono_us() + (int64_t)ms * 1000;

	while (!hx_stdio_finished(c) && fa_clock_mono_us() < end)
		hx_stdio_pump(c, 10);
	return hx_stdio_finished(c);
}

/* Pump until the log holds @n messages, at most 5 s. */
static bool pump_until_msgs(struct hx_stdio *c, size_t n)
{
	int64_t end = fa_clock_mono_us() + 5000000;

	while (hx_stdio_log(c)->n_msgs < n && fa_clock_mono_us() < end)
		hx_stdio_pump(c, 10);
	return hx_stdio_log(c)->n_msgs >= n;
}

/* The client's stderr, taken out of the session. */
static const char *take_stderr(struct hx_stdio *c, struct hx_scenario_result *r)
{
	memset(r, 0, sizeof(*r));
	hx_stdio_take(c, r);
	return r->client_stderr ? r->client_stderr : "";
}

/* Live (non-zombie) processes of group @pgid. */
static int group_alive(long pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], state;
		long ppid, pgrp;
		FILE *f;
		char *rp;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		if (rp != NULL && sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 &&
		    pgrp == pgid && state != 'Z' && state != 'X')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* @pid is gone or a zombie within 2 s. */
static bool gone_soon(long pid)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 200; i++) {
		char path[64], buf[512];
		FILE *f;
		char *rp = NULL;
		bool dead = true;

		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "r");
		if (f != NULL) {
			rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			dead = rp == NULL || rp[2] == 'Z' || rp[2] == 'X';
			fclose(f);
		}
		if (dead)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

static void stdio__session_greets_takes_a_task_and_shuts_down(void)
{
	static const char *const env[] = { "FAKEAPI_KEY_OPS_1=sk-1", NULL };
	const char *cmd =
	        "echo '" HELLO "'; read -r line; printf '%s\\n' \"$line\" >&2; "
	        "echo \"key=$FAKEAPI_KEY_OPS_1\" >&2; "
	        "echo '{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"succeeded\",\"attempts\":0}'; "
	        "read -r line; printf '%s\\n' \"$line\" >&2; read -r line || exit 0; exit 9";
	int64_t t0 = fa_clock_mono_us() - 5000000;
	struct hx_stdio *c = start(cmd, env, t0);
	struct fa_scenario *sc = load_scenario("user");
	struct fa_err err = { { 0 } };
	struct hx_scenario_result r;
	struct hx_stdio_end e;
	cJSON *task;
	const char *tail;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	task = hx_stdio_task_json(sc, &sc->harness.tasks[0], "http://h/?fa_task=t1", 1000);
	hx_stdio_send_task(c, task);
	cJSON_Delete(task);
	CU_ASSERT_TRUE_FATAL(pump_until_msgs(c, 1));
	CU_ASSERT_STRING_EQUAL(hx_stdio_log(c)->msgs[0].type, "result");
	/* stamped on the given origin: at least 5 s after it */
	CU_ASSERT_TRUE(hx_stdio_log(c)->msgs[0].t_us >= 5000000);
	CU_ASSERT_TRUE(hx_stdio_running(c));
	hx_stdio_shutdown(c);
	CU_ASSERT_TRUE_FATAL(pump_until_finished(c, 5000));
	hx_stdio_end(c, &e);
	CU_ASSERT_TRUE(e.reaped);
	CU_ASSERT_FALSE(e.early);
	CU_ASSERT_FALSE(e.killed);
	CU_ASSERT_EQUAL(e.exit_code, 0);
	tail = take_stderr(c, &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(tail, "{\"type\":\"task\",\"id\":\"t1\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(tail, "key=sk-1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tail, "{\"type\":\"shutdown\"}\n"));
	CU_ASSERT_EQUAL(r.n_protocol_errors, 0);
	CU_ASSERT_EQUAL(r.n_msgs, 1);
	CU_ASSERT_PTR_NOT_NULL(r.hello);
	hx_scenario_result_release(&r);
	hx_stdio_free(c);
	fa_scenario_free(sc);
}

static void stdio__silence_is_a_start_failure_after_the_timeout(void)
{
	struct hx_stdio *c = start("exec sleep 30", NULL, fa_clock_mono_us());
	struct fa_err err = { { 0 } };
	int64_t t = fa_clock_mono_us();

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(hx_stdio_hello(c, 200000, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg, "client did not say hello within 0.2 s");
	CU_ASSERT_TRUE(fa_clock_mono_us() - t < 3000000);
	hx_stdio_kill(c);
	CU_ASSERT_TRUE(pump_until_finished(c, 5000));
	hx_stdio_free(c);
}

static void stdio__exit_before_hello_names_the_status_and_stderr(void)
{
	struct hx_stdio *c = start("echo first >&2; echo boom >&2; exit 3", NULL, 0);
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(hx_stdio_hello(c, 5000000, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg, "client exited with status 3 before saying hello: boom");
	hx_stdio_free(c);
}

static void stdio__other_first_line_or_version_is_refused(void)
{
	struct hx_stdio *c = start("echo 'hi there'; sleep 5", NULL, 0);
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(hx_stdio_hello(c, 5000000, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg,
	                       "client did not say hello: line 1: not a JSON object: hi there");
	hx_stdio_free(c);

	fa_err_clear(&err);
	c = start("echo '{\"type\":\"hello\",\"protocol\":2}'; sleep 5", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(hx_stdio_hello(c, 5000000, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "client speaks protocol 2, harness knows 1");
	hx_stdio_free(c);
}

/* A bad first line fails the hello even when the hello follows it in
 * the same write(), so in the same read. */
static void stdio__bad_first_line_fails_even_with_hello_in_the_same_read(void)
{
	static const struct {
		const char *first;
		const char *error;
	} cases[] = {
		{ "junk", "line 1: not a JSON object: junk" },
		{ "{\"type\":\"action_sent\",\"task\":\"t1\",\"attempt\":1}",
		  "line 1: expected hello, got type \"action_sent\"" },
		{ "{\"type\":\"stream_interrupted\",\"task\":\"t1\",\"attempt\":1,"
		  "\"chunks\":2,\"reason\":\"cut\",\"error_code\":null}",
		  "line 1: expected hello, got type \"stream_interrupted\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* printf writes its whole output at once, on exit */
		char *cmd = fa_xasprintf("printf '%%s\\n%%s\\n' '%s' '" HELLO "'; sleep 5",
		                         cases[i].first);
		struct hx_stdio *c = start(cmd, NULL, 0);
		struct fa_err err = { { 0 } };
		char *want = fa_xasprintf("client did not say hello: %s", cases[i].error);

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		/* both lines are there before the first look */
		usleep(200000);
		CU_ASSERT_EQUAL(hx_stdio_hello(c, 5000000, &err), FA_EIO);
		CU_ASSERT_STRING_EQUAL(err.msg, want);
		CU_ASSERT_EQUAL(hx_stdio_log(c)->n_lines, 2);
		hx_stdio_free(c);
		free(want);
		free(cmd);
	}
}

static void stdio__ignored_shutdown_kills_the_group_after_the_grace(void)
{
	const char *cmd = "trap '' TERM HUP; echo '" HELLO "'; echo \"$$\" >&2; "
	                  "sleep 30 & sleep 30; sleep 30";
	struct hx_stdio *c = start(cmd, NULL, 0);
	struct fa_err err = { { 0 } };
	struct hx_scenario_result r;
	struct hx_stdio_end e;
	int64_t t;
	long pgid;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	hx_stdio_pump(c, 100); /* its pid on stderr */
	t = fa_clock_mono_us();
	hx_stdio_shutdown(c);
	CU_ASSERT_TRUE_FATAL(pump_until_finished(c, 5000));
	CU_ASSERT_TRUE(fa_clock_mono_us() - t >= 300000);
	hx_stdio_end(c, &e);
	CU_ASSERT_TRUE(e.killed);
	CU_ASSERT_FALSE(e.early);
	CU_ASSERT_EQUAL(e.term_signal, SIGKILL);
	pgid = strtol(take_stderr(c, &r), NULL, 10);
	CU_ASSERT_TRUE_FATAL(pgid > 1);
	CU_ASSERT_EQUAL(group_alive(pgid), 0);
	CU_ASSERT_EQUAL_FATAL(r.n_protocol_errors, 1);
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[0],
	                       "client still running 0.3 s after shutdown: killed");
	hx_scenario_result_release(&r);
	hx_stdio_free(c);
}

static void stdio__early_exit_is_a_protocol_error(void)
{
	struct hx_stdio *c = start("echo '" HELLO "'; exit 4", NULL, 0);
	struct fa_err err = { { 0 } };
	struct hx_scenario_result r;
	struct hx_stdio_end e;
	char *how;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	CU_ASSERT_TRUE_FATAL(pump_until_finished(c, 5000));
	hx_stdio_end(c, &e);
	CU_ASSERT_TRUE(e.early);
	CU_ASSERT_EQUAL(e.exit_code, 4);
	how = hx_stdio_end_str(&e);
	CU_ASSERT_STRING_EQUAL(how, "exited with status 4");
	free(how);
	take_stderr(c, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_protocol_errors, 1);
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[0], "client exited with status 4 before shutdown");
	hx_scenario_result_release(&r);
	/* nothing goes to a client that is gone, and nothing breaks */
	hx_stdio_shutdown(c);
	hx_stdio_pump(c, 0);
	hx_stdio_free(c);
}

static void stdio__plain_text_has_no_control_bytes(void)
{
	const char raw[] = "a\x1b[31mb\x7f\xff\xc3\xa9\tc\n\0d";
	char *plain = hx_client_log_plain(raw, sizeof(raw) - 1);

	/* ESC, DEL, a stray byte, TAB, LF and NUL go; é stays */
	CU_ASSERT_STRING_EQUAL(plain, "a?[31mb??\xc3\xa9?c??d");
	free(plain);
	plain = hx_client_log_plain("", 0);
	CU_ASSERT_STRING_EQUAL(plain, "");
	free(plain);
	/* a sequence cut at the end is not UTF-8 */
	plain = hx_client_log_plain("x\xc3", 2);
	CU_ASSERT_STRING_EQUAL(plain, "x?");
	free(plain);
	/* overlong forms, a surrogate and a code point past U+10FFFF are
	 * not UTF-8, byte by byte; an emoji is */
	plain = hx_client_log_plain("\xc0\xaf|\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|"
	                            "\xf0\x9f\x98\x80",
	                            20);
	CU_ASSERT_STRING_EQUAL(plain, "??|???|???|????|\xf0\x9f\x98\x80");
	free(plain);
}

static void stdio__end_by_signal_names_the_signal(void)
{
	struct hx_stdio_end e = { .reaped = true, .exit_code = -1, .term_signal = SIGKILL };
	char *how = hx_stdio_end_str(&e);

	CU_ASSERT_STRING_EQUAL(how, "was killed by signal 9 (SIGKILL)");
	free(how);
}

static void stdio__stderr_before_hello_is_plain_in_the_error(void)
{
	struct hx_stdio *c = start("printf '\\033[31mno\\033[0m\\n' >&2; exit 5", NULL, 0);
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(hx_stdio_hello(c, 5000000, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg, "client exited with status 5 before saying hello: "
	                                "?[31mno?[0m");
	hx_stdio_free(c);
}

static void stdio__session_gets_a_marker_and_its_escapee_dies_with_it(void)
{
	/* the escapee writes its pid, then the session says hello and leaves */
	const char *tmp = getenv("TMPDIR");
	char *pidfile = fa_xasprintf("%s/test-stdio-escapee-%ld.pid", tmp && *tmp ? tmp : P_tmpdir,
	                             (long)getpid());
	char *cmd = fa_xasprintf(
	        "setsid sh -c 'echo $$ > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; exec sleep 30' '%s' & "
	        "while [ ! -s '%s' ]; do sleep 0.01; done; "
	        "printf '%%s\\n' '" HELLO "'; [ ${#" HX_STRAY_ENV "} -eq 32 ] || exit 9; exit 0",
	        pidfile, pidfile);
	struct hx_stdio *c;
	struct fa_err err = { { 0 } };
	struct hx_stdio_end e;
	FILE *f;
	long pid = 0;

	unlink(pidfile);
	c = start(cmd, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	CU_ASSERT_TRUE_FATAL(pump_until_finished(c, 5000));
	hx_stdio_end(c, &e);
	CU_ASSERT_EQUAL(e.exit_code, 0); /* it saw its marker */
	f = fopen(pidfile, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_TRUE(gone_soon(pid));
	hx_stdio_free(c);
	unlink(pidfile);
	free(pidfile);
	free(cmd);
}

static void stdio__writing_to_a_client_that_left_raises_no_sigpipe(void)
{
	struct hx_stdio *c = start("echo '" HELLO "'; exec 0<&-; sleep 0.2", NULL, 0);
	struct fa_err err = { { 0 } };
	const struct timespec nap = { 0, 100 * 1000 * 1000 };
	cJSON *msg = cJSON_CreateObject();

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	nanosleep(&nap, NULL); /* its stdin is closed by now: writes get EPIPE */
	cJSON_AddStringToObject(msg, "type", "cancel");
	cJSON_AddStringToObject(msg, "id", "t1");
	for (int i = 0; i < 10; i++)
		hx_stdio_send(c, msg);
	cJSON_Delete(msg);
	CU_ASSERT_TRUE(pump_until_finished(c, 5000));
	hx_stdio_free(c);
}

static void stdio__long_line_is_cut_and_the_next_one_read(void)
{
	const char *cmd = "echo '" HELLO "'; head -c 1100000 /dev/zero | tr '\\0' x; echo; "
	                  "echo '{\"type\":\"action_sent\",\"task\":\"t9\"}'";
	struct hx_stdio *c = start(cmd, NULL, 0);
	struct fa_err err = { { 0 } };
	struct hx_scenario_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(hx_stdio_hello(c, 5000000, &err), FA_OK);
	CU_ASSERT_TRUE_FATAL(pump_until_finished(c, 5000));
	take_stderr(c, &r);
	CU_ASSERT_EQUAL_FATAL(r.n_protocol_errors, 3);
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[0], "line 2: longer than 1048576 bytes, cut");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[1], "line 3: unknown task \"t9\"");
	CU_ASSERT_STRING_EQUAL(r.protocol_errors[2], "client exited with status 0 before shutdown");
	hx_scenario_result_release(&r);
	hx_stdio_free(c);
}

void test_stdio_register(void)
{
	CU_pSuite s = CU_add_suite("stdio", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "stdio__first_line_must_be_hello", stdio__first_line_must_be_hello);
	CU_add_test(s, "stdio__hello_is_kept_apart_from_the_messages",
	            stdio__hello_is_kept_apart_from_the_messages);
	CU_add_test(s, "stdio__valid_lines_become_stamped_messages",
	            stdio__valid_lines_become_stamped_messages);
	CU_add_test(s, "stdio__malformed_lines_are_numbered_protocol_errors",
	            stdio__malformed_lines_are_numbered_protocol_errors);
	CU_add_test(s, "stdio__nothing_counts_after_a_task_result",
	            stdio__nothing_counts_after_a_task_result);
	CU_add_test(s, "stdio__cut_and_nul_lines_are_malformed",
	            stdio__cut_and_nul_lines_are_malformed);
	CU_add_test(s, "stdio__errors_past_the_cap_are_counted_then_summed_up",
	            stdio__errors_past_the_cap_are_counted_then_summed_up);
	CU_add_test(s, "stdio__end_of_session_errors_survive_the_cap_in_order",
	            stdio__end_of_session_errors_survive_the_cap_in_order);
	CU_add_test(s, "stdio__result_is_kept_past_the_message_cap",
	            stdio__result_is_kept_past_the_message_cap);
	CU_add_test(s, "stdio__key_env_is_upper_case_with_underscores",
	            stdio__key_env_is_upper_case_with_underscores);
	CU_add_test(s, "stdio__task_line_has_the_protocol_fields",
	            stdio__task_line_has_the_protocol_fields);
	CU_add_test(s, "stdio__stream_interrupted_is_a_message",
	            stdio__stream_interrupted_is_a_message);
	CU_add_test(s, "stdio__task_line_carries_stream_tokens_and_pacing",
	            stdio__task_line_carries_stream_tokens_and_pacing);
	CU_add_test(s, "stdio__task_body_sets_stream_and_tokens_in_place",
	            stdio__task_body_sets_stream_and_tokens_in_place);
	CU_add_test(s, "stdio__session_greets_takes_a_task_and_shuts_down",
	            stdio__session_greets_takes_a_task_and_shuts_down);
	CU_add_test(s, "stdio__silence_is_a_start_failure_after_the_timeout",
	            stdio__silence_is_a_start_failure_after_the_timeout);
	CU_add_test(s, "stdio__exit_before_hello_names_the_status_and_stderr",
	            stdio__exit_before_hello_names_the_status_and_stderr);
	CU_add_test(s, "stdio__other_first_line_or_version_is_refused",
	            stdio__other_first_line_or_version_is_refused);
	CU_add_test(s, "stdio__bad_first_line_fails_even_with_hello_in_the_same_read",
	            stdio__bad_first_line_fails_even_with_hello_in_the_same_read);
	CU_add_test(s, "stdio__malformed_stream_interrupted_is_no_report",
	            stdio__malformed_stream_interrupted_is_no_report);
	CU_add_test(s, "stdio__hello_line_is_recorded", stdio__hello_line_is_recorded);
	CU_add_test(s, "stdio__ignored_shutdown_kills_the_group_after_the_grace",
	            stdio__ignored_shutdown_kills_the_group_after_the_grace);
	CU_add_test(s, "stdio__early_exit_is_a_protocol_error",
	            stdio__early_exit_is_a_protocol_error);
	CU_add_test(s, "stdio__writing_to_a_client_that_left_raises_no_sigpipe",
	            stdio__writing_to_a_client_that_left_raises_no_sigpipe);
	CU_add_test(s, "stdio__plain_text_has_no_control_bytes",
	            stdio__plain_text_has_no_control_bytes);
	CU_add_test(s, "stdio__end_by_signal_names_the_signal",
	            stdio__end_by_signal_names_the_signal);
	CU_add_test(s, "stdio__stderr_before_hello_is_plain_in_the_error",
	            stdio__stderr_before_hello_is_plain_in_the_error);
	CU_add_test(s, "stdio__session_gets_a_marker_and_its_escapee_dies_with_it",
	            stdio__session_gets_a_marker_and_its_escapee_dies_with_it);
	CU_add_test(s, "stdio__long_line_is_cut_and_the_next_one_read",
	            stdio__long_line_is_cut_and_the_next_one_read);
}
