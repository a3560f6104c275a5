/* test_messages.c -- the Anthropic-compatible endpoint: parsing, Messages, events, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "chat.h"
#include "messages.h"
#include "provider.h"
#include "provider_fixture.h"
#include "scenario.h"
#include "sse.h"

static const cJSON *get(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

static enum fa_rc parse(const char *body, struct fa_chat_req *r, char *msg)
{
	return fa_messages_parse(body, body != NULL ? strlen(body) : 0, r, msg, 160);
}

static void messages__parse_reads_model_max_tokens_system_and_prompt(void)
{
	struct fa_chat_req r;
	char msg[160];

	/* system "Be terse." 9 bytes -> 3; "hello there" 11 -> 3; blocks "abcd" +
	 * "abcde" (and an image block without text) -> 1 + 2 */
	CU_ASSERT_EQUAL_FATAL(
	        parse("{\"model\": \"claude-x\", \"max_tokens\": 50, \"stream\": true,"
	              " \"system\": \"Be terse.\", \"temperature\": 0.5,"
	              " \"messages\": [{\"role\": \"user\", \"content\": \"hello there\"},"
	              " {\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"abcd\"},"
	              "  {\"type\": \"image\", \"source\": {}},"
	              "  {\"type\": \"text\", \"text\": \"abcde\"}]}]}",
	              &r, msg),
	        FA_OK);
	CU_ASSERT_STRING_EQUAL(r.model, "claude-x");
	CU_ASSERT_TRUE(r.stream);
	CU_ASSERT_EQUAL(r.max_tokens, 50);
	CU_ASSERT_EQUAL(r.prompt_tokens, 3 + 3 + 1 + 2);
	CU_ASSERT_EQUAL(fa_chat_cost(&r), 59);
	fa_chat_req_release(&r);
	/* a system of text blocks; no stream */
	CU_ASSERT_EQUAL_FATAL(
	        parse("{\"model\": \"m\", \"max_tokens\": 1, \"system\": [{\"type\": \"text\","
	              " \"text\": \"12345\"}], \"messages\": [{\"role\": \"user\","
	              " \"content\": \"x\"}]}",
	              &r, msg),
	        FA_OK);
	CU_ASSERT_FALSE(r.stream);
	CU_ASSERT_EQUAL(r.prompt_tokens, 2 + 1);
	fa_chat_req_release(&r);
}

#define M1 "\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]"

static void messages__parse_refuses_what_the_api_refuses(void)
{
	static const struct {
		const char *body, *msg;
	} bad[] = {
		{ NULL, "the request body is not valid JSON" },
		{ "{\"model\": ", "the request body is not valid JSON" },
		{ "[]", "the request body must be a JSON object" },
		{ "{\"model\": \"a\\u0000b\", \"max_tokens\": 1, " M1 "}",
		  "the request body is JSON fakeapi cannot read: a string holds \\u0000" },
		{ "{\"max_tokens\": 1, " M1 "}", "model: Field required" },
		{ "{\"model\": 7, \"max_tokens\": 1, " M1 "}",
		  "model: Input should be a valid string" },
		{ "{\"model\": \"m\", " M1 "}", "max_tokens: Field required" },
		{ "{\"model\": \"m\", \"max_tokens\": \"9\", " M1 "}",
		  "max_tokens: Input should be a valid integer" },
		{ "{\"model\": \"m\", \"max_tokens\": 1.5, " M1 "}",
		  "max_tokens: Input should be a valid integer" },
		{ "{\"model\": \"m\", \"max_tokens\": 0, " M1 "}",
		  "max_tokens: Input should be greater than or equal to 1" },
		{ "{\"model\": \"m\", \"max_tokens\": 3000000000, " M1 "}",
		  "max_tokens: Input should be less than or equal to 2147483647" },
		{ "{\"model\": \"m\", \"max_tokens\": 1}", "messages: Field required" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": {}}",
		  "messages: Input should be a valid list" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": []}",
		  "messages: at least one message is required" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": [\"hi\"]}",
		  "messages.0: Input should be a valid dictionary" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": [{\"role\": \"user\", \"content\": \"a\"},"
		  " {\"role\": \"system\", \"content\": \"b\"}]}",
		  "messages.1.role: Input should be 'user' or 'assistant'" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": [{\"role\": \"user\"}]}",
		  "messages.0.content: Field required" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": [{\"role\": \"user\", \"content\": null}]}",
		  "messages.0.content: Input should be a valid string or a list of content blocks" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"messages\": [{\"role\": \"user\", \"content\": [1]}]}",
		  "messages.0.content: Input should be a valid string or a list of content blocks" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"system\": 5, " M1 "}",
		  "system: Input should be a valid string or a list of text blocks" },
		{ "{\"model\": \"m\", \"max_tokens\": 1, \"stream\": \"yes\", " M1 "}",
		  "stream: Input should be a valid boolean" },
	};
	struct fa_chat_req r;
	char msg[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg[0] = '\0';
		CU_ASSERT_EQUAL(parse(bad[i].body, &r, msg), FA_EINVAL);
		CU_ASSERT_STRING_EQUAL(msg, bad[i].msg);
		CU_ASSERT_PTR_NULL(r.model);
	}
}

static void messages__error_types_follow_the_status(void)
{
	static const struct {
		int status;
		const char *type;
	} t[] = {
		{ 400, "invalid_request_error" },
		{ 401, "authentication_error" },
		{ 402, "billing_error" },
		{ 403, "permission_error" },
		{ 404, "not_found_error" },
		{ 413, "request_too_large" },
		{ 429, "rate_limit_error" },
		{ 500, "api_error" },
		{ 504, "timeout_error" },
		{ 529, "overloaded_error" },
		/* the API's word for the others */
		{ 409, "invalid_request_error" },
		{ 422, "invalid_request_error" },
		{ 502, "api_error" },
		{ 503, "api_error" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_STRING_EQUAL(fa_messages_error_type(t[i].status), t[i].type);
	CU_ASSERT_PTR_NULL(fa_messages_error_type(200));
	CU_ASSERT_PTR_NULL(fa_messages_error_type(399));
}

static void messages__error_body_has_type_message_and_request_id(void)
{
	cJSON *o = fa_messages_error(529, NULL, "req_1");
	char *text = cJSON_PrintUnformatted(o);

	CU_ASSERT_STRING_EQUAL(text, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
	                             "\"message\":\"Overloaded\"},\"request_id\":\"req_1\"}");
	free(text);
	cJSON_Delete(o);
	/* a stream's error event has no request id; a message of our own */
	o = fa_messages_error(429, "slow down", NULL);
	text = cJSON_PrintUnformatted(o);
	CU_ASSERT_STRING_EQUAL(text, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
	                             "\"message\":\"slow down\"}}");
	free(text);
	cJSON_Delete(o);
}

/* the SDKs' own rule, which the header states for them */
static void messages__should_retry_as_the_sdks_decide(void)
{
	static const int yes[] = { 408, 409, 429, 500, 502, 503, 504, 529 };
	static const int no[] = { 400, 401, 403, 404, 413, 422 };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CU_ASSERT_TRUE(fa_messages_should_retry(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CU_ASSERT_FALSE(fa_messages_should_retry(no[i]));
}

static void messages__message_has_every_field_and_usage(void)
{
	struct fa_chat_req r = { .model = "claude-x", .prompt_tokens = 9 };
	cJSON *o = fa_messages_message(&r, "Hello there, world", 42);
	char *text = cJSON_PrintUnformatted(o);

	/* "Hello there, world": 18 bytes, 5 tokens */
	CU_ASSERT_STRING_EQUAL(text,
	                       "{\"id\":\"msg_42\",\"type\":\"message\",\"role\":\"assistant\","
	                       "\"model\":\"claude-x\",\"content\":[{\"type\":\"text\","
	                       "\"text\":\"Hello there, world\"}],\"stop_reason\":\"end_turn\","
	                       "\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,"
	                       "\"output_tokens\":5}}");
	free(text);
	cJSON_Delete(o);
}

/* The events of @body: their names into @names and their data parsed
 * into @data (each deleted by the caller), up to @max; -1 when the body
 * is not "event: NAME\ndata: JSON\n\n" frames through and through. */
static int events(const char *body, size_t len, char names[][32], cJSON **data, int max)
{
	const char *p = body, *end = body + len;
	int n = 0;

	while (p < end && n < max) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop;

		if (strncmp(p, "event: ", 7) != 0 || nl == NULL ||
		    strncmp(nl + 1, "data: ", 6) != 0)
			return -1;
		snprintf(names[n], 32, "%.*s", (int)(nl - p - 7), p + 7);
		stop = strstr(nl + 7, "\n\n");
		if (stop == NULL || stop + 2 > end)
			return -1;
		data[n] = cJSON_ParseWithLength(nl + 7, (size_t)(stop - nl - 7));
		if (data[n] == NULL)
			return -1;
		n++;
		p = stop + 2;
	}
	return p == end ? n : -1;
}

static void free_events(cJSON **data, int n)
{
	for (int i = 0; i < n; i++)
		cJSON_Delete(data[i]);
}

static void messages__stream_events_come_in_the_api_order(void)
{
	static const char *const order[] = {
		"message_start",       "content_block_start", "ping",
		"content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop",  "message_delta",       "message_stop",
	};
	struct fa_chat_req r = { .model = "claude-x", .prompt_tokens = 4 };
	struct fa_sse_stream s;
	char names[16][32], text[64] = "";
	cJSON *data[16];
	int n;

	fa_messages_sse(&r, "one two three", 7, NULL, 0, -1, &s);
	n = events(s.body, s.len, names, data, 16);
	CU_ASSERT_EQUAL_FATAL(n, 9);
	for (int i = 0; i < n; i++) {
		CU_ASSERT_STRING_EQUAL(names[i], order[i]);
		CU_ASSERT_STRING_EQUAL(get(data[i], "type")->valuestring, order[i]);
	}
	CU_ASSERT_EQUAL(s.lead, FA_MESSAGES_LEAD);
	CU_ASSERT_EQUAL(s.n_content, 3);
	CU_ASSERT_EQUAL(s.n_chunks, 8); /* message_stop is the tail */
	CU_ASSERT_EQUAL(s.cut, s.len);
	CU_ASSERT_STRING_EQUAL(get(get(data[0], "message"), "id")->valuestring, "msg_7");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(get(get(data[0], "message"), "content")), 0);
	CU_ASSERT_TRUE(cJSON_IsNull(get(get(data[0], "message"), "stop_reason")));
	CU_ASSERT_EQUAL(get(get(get(data[0], "message"), "usage"), "input_tokens")->valuedouble, 4);
	CU_ASSERT_STRING_EQUAL(get(get(data[1], "content_block"), "type")->valuestring, "text");
	CU_ASSERT_STRING_EQUAL(get(get(data[1], "content_block"), "text")->valuestring, "");
	for (int i = 3; i < 6; i++) {
		CU_ASSERT_EQUAL(get(data[i], "index")->valuedouble, 0);
		CU_ASSERT_STRING_EQUAL(get(get(data[i], "delta"), "type")->valuestring,
		                       "text_delta");
		strncat(text, get(get(data[i], "delta"), "text")->valuestring,
		        sizeof(text) - strlen(text) - 1);
	}
	CU_ASSERT_STRING_EQUAL(text, "one two three");
	CU_ASSERT_STRING_EQUAL(get(get(data[7], "delta"), "stop_reason")->valuestring, "end_turn");
	CU_ASSERT_EQUAL(get(get(data[7], "usage"), "output_tokens")->valuedouble, 4);
	free_events(data, n);
	fa_sse_stream_release(&s);
}

static void messages__error_event_follows_n_deltas_and_ends_the_stream(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	cJSON *err = fa_messages_error(529, NULL, NULL);
	char names[16][32];
	cJSON *data[16];
	int n;

	fa_messages_sse(&r, "a b c", 1, err, 1, -1, &s);
	n = events(s.body, s.len, names, data, 16);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_STRING_EQUAL(names[3], "content_block_delta");
	CU_ASSERT_STRING_EQUAL(names[4], "error");
	CU_ASSERT_STRING_EQUAL(get(get(data[4], "error"), "type")->valuestring, "overloaded_error");
	CU_ASSERT_EQUAL(s.n_content, 1);
	free_events(data, n);
	fa_sse_stream_release(&s);
	/* at once after the lead, or after every piece when asked for more */
	fa_messages_sse(&r, "a b c", 1, err, 0, -1, &s);
	CU_ASSERT_EQUAL(events(s.body, s.len, names, data, 16), 4);
	CU_ASSERT_STRING_EQUAL(names[3], "error");
	free_events(data, 4);
	fa_sse_stream_release(&s);
	fa_messages_sse(&r, "a b c", 1, err, 10, -1, &s);
	CU_ASSERT_EQUAL(s.n_content, 3);
	CU_ASSERT_EQUAL(events(s.body, s.len, names, data, 16), 7);
	CU_ASSERT_STRING_EQUAL(names[6], "error");
	free_events(data, 7);
	fa_sse_stream_release(&s);
	cJSON_Delete(err);
}

static void messages__stop_after_cuts_past_the_lead_and_never_sends_message_stop(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	char names[16][32];
	cJSON *data[16];

	fa_messages_sse(&r, "a b c", 1, NULL, 0, 0, &s);
	CU_ASSERT_EQUAL(events(s.body, s.cut, names, data, 16), 3);
	CU_ASSERT_STRING_EQUAL(names[2], "ping");
	free_events(data, 3);
	fa_sse_stream_release(&s);
	fa_messages_sse(&r, "a b c", 1, NULL, 0, 2, &s);
	CU_ASSERT_EQUAL(events(s.body, s.cut, names, data, 16), 5);
	CU_ASSERT_STRING_EQUAL(names[4], "content_block_delta");
	free_events(data, 5);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, (int)s.lead, (int)s.n_content, s.cut), 2);
	fa_sse_stream_release(&s);
	fa_messages_sse(&r, "a b c", 1, NULL, 0, 99, &s);
	CU_ASSERT_EQUAL(events(s.body, s.cut, names, data, 16), 8);
	CU_ASSERT_STRING_EQUAL(names[7], "message_delta");
	free_events(data, 8);
	fa_sse_stream_release(&s);
}

static void messages__request_ids_differ_per_request(void)
{
	char a[FA_MESSAGES_REQUEST_ID_MAX], b[FA_MESSAGES_REQUEST_ID_MAX];

	fa_messages_request_id(3, 0, a);
	fa_messages_request_id(3, 1, b);
	CU_ASSERT_EQUAL(strncmp(a, "req_", 4), 0);
	CU_ASSERT_EQUAL(strlen(a), 4 + 24);
	CU_ASSERT_STRING_NOT_EQUAL(a, b);
}

static const char *const scenario_text =
        "{\"id\": \"m\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
        " \"routes\": ["
        "  {\"id\": \"msg\", \"kind\": \"messages\", \"method\": \"POST\","
        "   \"path\": \"/v1/messages\", \"reply\": \"one two\","
        "   \"responses\": [{\"status\": 200, \"times\": 2},"
        "    {\"status\": 529, \"error_after_chunks\": 1},"
        "    {\"status\": 529, \"retry_after\": 3},"
        "    {\"status\": 529, \"headers\": {\"x-should-retry\": \"false\"}},"
        "    {\"status\": 400, \"body\": {\"type\": \"error\", \"error\": {\"type\":"
        "     \"invalid_request_error\", \"message\": \"as written\"}}},"
        "    {\"status\": 200}]}]}";

#define BODY                                                                                       \
	"\"model\": \"claude-x\", \"max_tokens\": 8, "                                             \
	"\"messages\": [{\"role\": \"user\", \"content\": \"12345\"}]"

static void messages__provider_plays_the_endpoint(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;

	p = fx_provider_start(scenario_text, "m.json", 3, &sc, &j);
	CU_ASSERT_EQUAL(sc->routes[0].kind, FA_ROUTE_MESSAGES);
	/* a bad request: 400 in Anthropic's shape, no cursor moved, not retried */
	fx_decide(p, "POST", "/v1/messages", "{\"model\": \"x\", \"max_tokens\": 1}", &r);
	CU_ASSERT_EQUAL(r.status, 400);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body,
	                              "{\"type\":\"error\",\"error\":{\"type\":"
	                              "\"invalid_request_error\",\"message\":\"messages: Field "
	                              "required\"},\"request_id\":\"req_"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "false");
	CU_ASSERT_PTR_NOT_NULL(fx_resp_header(&r, "request-id"));
	CU_ASSERT_EQUAL(r.attempt.response_index, -1);
	fx_done(p, &r);
	/* a Message, its cost journaled: ceil(5 / 4) + 8 */
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.tokens, 10);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"msg_1\""));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(r.body, "\"usage\":{\"input_tokens\":2,\"output_tokens\":2}"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "application/json");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "request-id"), "req_fa0000000000000100000000");
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "x-should-retry"));
	fx_done(p, &r);
	/* its event stream */
	fx_decide(p, "POST", "/v1/messages", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "text/event-stream");
	CU_ASSERT_STRING_EQUAL(r.stream_end, "done");
	CU_ASSERT_EQUAL(r.stream_lead, FA_MESSAGES_LEAD);
	CU_ASSERT_EQUAL(r.stream_content, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"msg_2\""));
	CU_ASSERT(r.body_len > 20 && strstr(r.body, "event: message_stop\n") != NULL);
	fx_done(p, &r);
	/* 529 to a stream: a 200, one delta, the error event; no pause, no quota */
	fx_decide(p, "POST", "/v1/messages", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.status, 200);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "error_frame");
	CU_ASSERT_EQUAL(r.stream_content, 1);
	CU_ASSERT_EQUAL(r.attempt.pause_until_us, -1);
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "x-should-retry"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"text\":\"one\""));
	CU_ASSERT_PTR_NULL(strstr(r.body, "\" two\""));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(r.body, "event: error\ndata: {\"type\":\"error\",\"error\":"
	                       "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"));
	fx_done(p, &r);
	/* a scripted 529 with retry_after: overloaded_error, a pause announced */
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 529);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "3");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "true");
	CU_ASSERT(r.attempt.pause_until_us >= r.attempt.t_arrival_us + 3000000);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"error\":{\"type\":\"overloaded_error\","
	                                      "\"message\":\"Overloaded\"}"));
	fx_done(p, &r);
	/* the scenario's own x-should-retry wins */
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 529);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "false");
	fx_done(p, &r);
	/* a body written in the scenario goes as written */
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 400);
	CU_ASSERT_STRING_EQUAL(r.body, "{\"type\":\"error\",\"error\":{\"type\":"
	                               "\"invalid_request_error\",\"message\":\"as written\"}}");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "false");
	fx_done(p, &r);
	/* an unknown key: authentication_error */
	fx_decide_as(p, "nope", "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 401);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"error\":{\"type\":\"authentication_error\","
	                                      "\"message\":\"missing or unknown API key\"}"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "false");
	fx_done(p, &r);
	/* a reset numbers Messages from 1 again */
	fa_provider_reset(p);
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"msg_1\""));
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static const char *const quota_text =
        "{\"id\": \"q\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}},"
        " \"quota\": {\"per_key\": 1, \"per_user\": 10, \"period_s\": 60, \"tpm_per_key\": 1000,"
        "  \"headers\": \"anthropic\"}, \"retry_after_ms\": true},"
        " \"routes\": [{\"id\": \"msg\", \"kind\": \"messages\", \"method\": \"POST\","
        "   \"path\": \"/v1/messages\", \"responses\": [{\"status\": 529, \"times\": 1},"
        "   {\"status\": 529, \"error_after_chunks\": 0, \"times\": 1}, {\"status\": 200}]}]}";

/* the quota's 429 is a rate_limit_error with Anthropic's headers; a 529
 * and an error event spend no quota */
static void messages__quota_answers_a_rate_limit_error(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;

	p = fx_provider_start(quota_text, "q.json", 3, &sc, &j);
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 529);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "anthropic-ratelimit-requests-remaining"), "1");
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/messages", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "error_frame");
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "admitted replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "anthropic-ratelimit-requests-limit"), "1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "anthropic-ratelimit-requests-remaining"), "0");
	CU_ASSERT_PTR_NOT_NULL(fx_resp_header(&r, "anthropic-ratelimit-requests-reset"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "anthropic-ratelimit-input-tokens-limit"),
	                       "1000");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "anthropic-ratelimit-output-tokens-remaining"),
	                       "990");
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/messages", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_STRING_EQUAL(r.attempt.fault, "quota");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "60");
	CU_ASSERT_PTR_NOT_NULL(fx_resp_header(&r, "retry-after-ms"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "x-should-retry"), "true");
	CU_ASSERT(r.attempt.pause_until_us > r.attempt.t_arrival_us);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body,
	                              "{\"type\":\"error\",\"error\":{\"type\":"
	                              "\"rate_limit_error\",\"message\":\"Rate limit exceeded "
	                              "(per-key). Limit: 1 per minute."));
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static const char *const paced_text =
        "{\"id\": \"p\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
        " \"routes\": [{\"id\": \"msg\", \"kind\": \"messages\", \"method\": \"POST\","
        "   \"path\": \"/m\", \"reply\": \"one two three\", \"responses\": ["
        "   {\"status\": 200, \"chunk_delay_ms\": 250},"
        "   {\"status\": 200, \"stall_after_chunks\": 2, \"stall_ms\": 1500},"
        "   {\"status\": 200, \"stop_after_chunks\": 1},"
        "   {\"status\": 503, \"error_after_chunks\": 2, \"chunk_delay_ms\": 5}]}]}";

/* what the server needs to pace a stream and journal how it ended */
static void messages__answer_plans_paced_and_stalling_streams(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;
	const char *stall;

	p = fx_provider_start(paced_text, "p.json", 3, &sc, &j);
	fx_decide(p, "POST", "/m", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "done");
	CU_ASSERT_EQUAL(r.stream_lead, 3);
	CU_ASSERT_EQUAL(r.stream_content, 3);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 250);
	fx_done(p, &r);
	/* a stall after two deltas: silence, then overloaded_error, no pause named */
	fx_decide(p, "POST", "/m", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "stall");
	CU_ASSERT_EQUAL(r.stream_content, 2);
	CU_ASSERT_EQUAL(r.stall_ms, 1500);
	CU_ASSERT_EQUAL(r.stall_retry_after_s, 0);
	CU_ASSERT_PTR_NULL(strstr(r.body, "three"));
	CU_ASSERT_PTR_NULL(strstr(r.body, "message_stop"));
	stall = strstr(r.body, "event: error\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(stall);
	CU_ASSERT_PTR_NOT_NULL(strstr(stall, "overloaded_error"));
	fx_done(p, &r);
	fx_decide(p, "POST", "/m", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "cut");
	CU_ASSERT_EQUAL(r.fault, FA_RESP_PARTIAL_BODY);
	CU_ASSERT_EQUAL_FATAL(r.fault_bytes > 0, 1);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(r.body, r.body_len, r.stream_lead, r.stream_content,
	                                   (size_t)r.fault_bytes),
	                1);
	fx_done(p, &r);
	/* a 503 to a stream: api_error after two deltas, paced */
	fx_decide(p, "POST", "/m", "{\"stream\": true, " BODY "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "error_frame");
	CU_ASSERT_EQUAL(r.stream_content, 2);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 5);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"type\":\"api_error\""));
	fx_done(p, &r);
	/* the same entry without a stream: the plain 503 */
	fx_decide(p, "POST", "/m", "{" BODY "}", &r);
	CU_ASSERT_EQUAL(r.status, 503);
	CU_ASSERT_PTR_NULL(r.stream_end);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"type\":\"api_error\""));
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

void test_messages_register(void)
{
	CU_pSuite suite = CU_add_suite("messages", NULL, NULL);

	CU_add_test(suite, "messages__parse_reads_model_max_tokens_system_and_prompt",
	            messages__parse_reads_model_max_tokens_system_and_prompt);
	CU_add_test(suite, "messages__parse_refuses_what_the_api_refuses",
	            messages__parse_refuses_what_the_api_refuses);
	CU_add_test(suite, "messages__error_types_follow_the_status",
	            messages__error_types_follow_the_status);
	CU_add_test(suite, "messages__error_body_has_type_message_and_request_id",
	            messages__error_body_has_type_message_and_request_id);
	CU_add_test(suite, "messages__should_retry_as_the_sdks_decide",
	            messages__should_retry_as_the_sdks_decide);
	CU_add_test(suite, "messages__message_has_every_field_and_usage",
	            messages__message_has_every_field_and_usage);
	CU_add_test(suite, "messages__stream_events_come_in_the_api_order",
	            messages__stream_events_come_in_the_api_order);
	CU_add_test(suite, "messages__error_event_follows_n_deltas_and_ends_the_stream",
	            messages__error_event_follows_n_deltas_and_ends_the_stream);
	CU_add_test(suite, "messages__stop_after_cuts_past_the_lead_and_never_sends_message_stop",
	            messages__stop_after_cuts_past_the_lead_and_never_sends_message_stop);
	CU_add_test(suite, "messages__request_ids_differ_per_request",
	            messages__request_ids_differ_per_request);
	CU_add_test(suite, "messages__provider_plays_the_endpoint",
	            messages__provider_plays_the_endpoint);
	CU_add_test(suite, "messages__quota_answers_a_rate_limit_error",
	            messages__quota_answers_a_rate_limit_error);
	CU_add_test(suite, "messages__answer_plans_paced_and_stalling_streams",
	            messages__answer_plans_paced_and_stalling_streams);
}
