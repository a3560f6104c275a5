/* test_chat.c -- the OpenAI-compatible endpoint: parsing, tokens, completions, SSE, models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "chat.h"
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
	return fa_chat_parse(body, body != NULL ? strlen(body) : 0, r, msg, 160);
}

static void chat__tokens_are_bytes_over_four_rounded_up(void)
{
	CU_ASSERT_EQUAL(fa_chat_tokens(0), 0);
	CU_ASSERT_EQUAL(fa_chat_tokens(1), 1);
	CU_ASSERT_EQUAL(fa_chat_tokens(4), 1);
	CU_ASSERT_EQUAL(fa_chat_tokens(5), 2);
	CU_ASSERT_EQUAL(fa_chat_tokens(4000), 1000);
}

static void chat__parse_reads_model_stream_tokens_and_prompt(void)
{
	struct fa_chat_req r;
	char msg[160];

	/* "hello there" 11 bytes -> 3; "é!" 3 bytes -> 1; parts "abcd" + "abcde" -> 1 + 2 */
	CU_ASSERT_EQUAL_FATAL(
	        parse("{\"model\": \"m-1\", \"stream\": true, \"max_tokens\": 50,"
	              " \"messages\": [{\"role\": \"system\", \"content\": \"hello there\"},"
	              " {\"role\": \"user\", \"content\": \"\xc3\xa9!\"},"
	              " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"abcd\"},"
	              "  {\"type\": \"text\", \"text\": \"abcde\"}]},"
	              " {\"role\": \"assistant\", \"content\": null}]}",
	              &r, msg),
	        FA_OK);
	CU_ASSERT_STRING_EQUAL(r.model, "m-1");
	CU_ASSERT_TRUE(r.stream);
	CU_ASSERT_EQUAL(r.max_tokens, 50);
	CU_ASSERT_EQUAL(r.prompt_tokens, 3 + 1 + 1 + 2);
	fa_chat_req_release(&r);
	CU_ASSERT_EQUAL_FATAL(
	        parse("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}", &r, msg),
	        FA_OK);
	CU_ASSERT_STRING_EQUAL(r.model, FA_CHAT_DEFAULT_MODEL);
	CU_ASSERT_FALSE(r.stream);
	CU_ASSERT_EQUAL(r.max_tokens, 0);
	fa_chat_req_release(&r);
}

static void chat__parse_refuses_what_is_no_chat_request(void)
{
	static const struct {
		const char *body, *msg;
	} bad[] = {
		{ NULL, "the request body is not valid JSON" },
		{ "{\"messages\": [", "the request body is not valid JSON" },
		{ "[]", "the request body must be a JSON object" },
		/* valid JSON that no cJSON string can hold */
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"a\\u0000b\"}]}",
		  "the request body is JSON fakeapi cannot read: a string holds \\u0000" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]}",
		  "the request body is JSON fakeapi cannot read: a string holds an "
		  "unpaired surrogate" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"\\udc00x\"}]}",
		  "the request body is JSON fakeapi cannot read: a string holds an "
		  "unpaired surrogate" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": \"\\u00zz\"}]}",
		  "the request body is not valid JSON" },
		{ "{\"model\": \"m\"}", "'messages' must be a non-empty array" },
		{ "{\"messages\": []}", "'messages' must be a non-empty array" },
		{ "{\"messages\": [{\"content\": \"x\"}]}",
		  "'messages[0]' must be an object with a string 'role'" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}",
		  "'messages[0].content' must be a string, an array of parts or null" },
		{ "{\"messages\": [{\"role\": \"user\"}], \"model\": 3}",
		  "'model' must be a string" },
		{ "{\"messages\": [{\"role\": \"user\"}], \"stream\": \"yes\"}",
		  "'stream' must be a boolean" },
		{ "{\"messages\": [{\"role\": \"user\"}], \"max_tokens\": 0}",
		  "'max_tokens' must be a positive integer" },
		{ "{\"messages\": [{\"role\": \"user\"}], \"max_tokens\": 1.5}",
		  "'max_tokens' must be a positive integer" },
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

static void chat__cost_is_prompt_plus_max_tokens_saturated(void)
{
	struct fa_chat_req r = { .prompt_tokens = 7 };

	CU_ASSERT_EQUAL(fa_chat_cost(&r), 7);
	r.max_tokens = 50;
	CU_ASSERT_EQUAL(fa_chat_cost(&r), 57);
	r.prompt_tokens = 1;
	r.max_tokens = 0x7fffffff; /* would be 2147483648 */
	CU_ASSERT_EQUAL(fa_chat_cost(&r), 0x7fffffff);
	r.prompt_tokens = 0x7fffffff;
	CU_ASSERT_EQUAL(fa_chat_cost(&r), 0x7fffffff);
}

static void chat__completion_has_every_field_and_usage(void)
{
	struct fa_chat_req r = { .model = "m-2", .prompt_tokens = 9 };
	cJSON *o = fa_chat_completion(&r, "Hello there, world", 42, 1700000000);
	const cJSON *c, *u;

	CU_ASSERT_STRING_EQUAL(get(o, "id")->valuestring, "chatcmpl-42");
	CU_ASSERT_STRING_EQUAL(get(o, "object")->valuestring, "chat.completion");
	CU_ASSERT_EQUAL(get(o, "created")->valuedouble, 1700000000);
	CU_ASSERT_STRING_EQUAL(get(o, "model")->valuestring, "m-2");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(get(o, "choices")), 1);
	c = cJSON_GetArrayItem(get(o, "choices"), 0);
	CU_ASSERT_EQUAL(get(c, "index")->valuedouble, 0);
	CU_ASSERT_STRING_EQUAL(get(get(c, "message"), "role")->valuestring, "assistant");
	CU_ASSERT_STRING_EQUAL(get(get(c, "message"), "content")->valuestring,
	                       "Hello there, world");
	CU_ASSERT_STRING_EQUAL(get(c, "finish_reason")->valuestring, "stop");
	u = get(o, "usage");
	CU_ASSERT_EQUAL(get(u, "prompt_tokens")->valuedouble, 9);
	CU_ASSERT_EQUAL(get(u, "completion_tokens")->valuedouble, 5); /* 18 bytes */
	CU_ASSERT_EQUAL(get(u, "total_tokens")->valuedouble, 14);
	cJSON_Delete(o);
}

static void chat__pieces_are_words_that_add_up_to_the_reply(void)
{
	static const char *const replies[] = {
		"Hello from the fake model.", "  lead", "trail  ", "one", "a\tb\nc", "",
	};
	static const size_t counts[] = { 5, 1, 1, 1, 3, 0 };
	size_t starts[32];

	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		size_t n = fa_chat_pieces(replies[i], starts);

		CU_ASSERT_EQUAL(n, counts[i]);
		if (n > 0)
			CU_ASSERT_EQUAL(starts[0], 0);
		for (size_t k = 1; k < n; k++)
			CU_ASSERT(starts[k] > starts[k - 1]);
	}
	fa_chat_pieces("Hello from", starts);
	CU_ASSERT_EQUAL(starts[1], 5); /* " from": the blank goes with the word after it */
}

/* The frames of @s (up to @max), each the text after "data: ". */
static size_t frames(const char *body, char out[][1024], size_t max)
{
	size_t n = 0;
	const char *p = body;

	while (n < max && strncmp(p, "data: ", 6) == 0) {
		const char *end = strstr(p, "\n\n");

		if (end == NULL)
			break;
		snprintf(out[n++], 1024, "%.*s", (int)(end - p - 6), p + 6);
		p = end + 2;
	}
	return *p == '\0' ? n : (size_t)-1;
}

static void chat__stream_reassembles_and_ends_with_stop_then_done(void)
{
	struct fa_chat_req r = { .model = "m", .prompt_tokens = 1 };
	struct fa_sse_stream s;
	char f[16][1024], text[256] = "";
	size_t n;

	fa_chat_sse(&r, "Hello from the fake model.", 7, 100, NULL, 0, -1, &s);
	n = frames(s.body, f, 16);
	CU_ASSERT_EQUAL_FATAL(n, 7);
	CU_ASSERT_EQUAL(s.n_chunks, 6);
	CU_ASSERT_EQUAL(s.cut, s.len);
	CU_ASSERT_EQUAL(strlen(s.body), s.len);
	for (size_t i = 0; i < 5; i++) {
		cJSON *o = cJSON_Parse(f[i]);
		const cJSON *c = cJSON_GetArrayItem(get(o, "choices"), 0);

		CU_ASSERT_STRING_EQUAL(get(o, "id")->valuestring, "chatcmpl-7");
		CU_ASSERT_STRING_EQUAL(get(o, "object")->valuestring, "chat.completion.chunk");
		CU_ASSERT_EQUAL(get(o, "created")->valuedouble, 100);
		CU_ASSERT_TRUE(cJSON_IsNull(get(c, "finish_reason")));
		strncat(text, get(get(c, "delta"), "content")->valuestring,
		        sizeof(text) - strlen(text) - 1);
		cJSON_Delete(o);
	}
	CU_ASSERT_STRING_EQUAL(text, "Hello from the fake model.");
	CU_ASSERT_PTR_NOT_NULL(strstr(f[5], "\"delta\":{},\"finish_reason\":\"stop\""));
	CU_ASSERT_STRING_EQUAL(f[6], "[DONE]");
	fa_sse_stream_release(&s);
}

/* The longest reply, as one-letter words: 32768 frames rendered in one
 * body, every one well-formed and in order (the body grows linearly). */
static void chat__longest_reply_streams_every_word_in_order(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	char *reply = malloc(FA_CHAT_REPLY_MAX + 1);
	char *text = calloc(1, FA_CHAT_REPLY_MAX + 1);
	const char *p;
	size_t n = 0, tlen = 0;
	bool stop = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (size_t i = 0; i < FA_CHAT_REPLY_MAX; i++)
		reply[i] = i % 2 == 0 ? (char)('a' + (i / 2) % 26) : ' ';
	reply[FA_CHAT_REPLY_MAX] = '\0';
	fa_chat_sse(&r, reply, 9, 100, NULL, 0, -1, &s);
	CU_ASSERT_EQUAL(s.n_content, FA_CHAT_REPLY_MAX / 2);
	CU_ASSERT_EQUAL(s.n_chunks, FA_CHAT_REPLY_MAX / 2 + 1);
	CU_ASSERT_EQUAL(s.cut, s.len);
	CU_ASSERT_EQUAL_FATAL(strlen(s.body), s.len);
	for (p = s.body; strncmp(p, "data: {", 7) == 0; n++) {
		const char *end = strstr(p, "\n\n");
		cJSON *o = end != NULL ? cJSON_ParseWithLength(p + 6, (size_t)(end - p - 6)) : NULL;
		const cJSON *c = cJSON_GetArrayItem(get(o, "choices"), 0);
		const cJSON *piece = get(get(c, "delta"), "content");

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		if (cJSON_IsString(piece) &&
		    tlen + strlen(piece->valuestring) <= FA_CHAT_REPLY_MAX) {
			memcpy(text + tlen, piece->valuestring, strlen(piece->valuestring));
			tlen += strlen(piece->valuestring);
		} else {
			stop = cJSON_IsString(get(c, "finish_reason"));
		}
		cJSON_Delete(o);
		p = end + 2;
	}
	CU_ASSERT_EQUAL(n, FA_CHAT_REPLY_MAX / 2 + 1);
	CU_ASSERT_TRUE(stop);
	CU_ASSERT_STRING_EQUAL(p, "data: [DONE]\n\n");
	CU_ASSERT_EQUAL(tlen, FA_CHAT_REPLY_MAX);
	CU_ASSERT_EQUAL(memcmp(text, reply, FA_CHAT_REPLY_MAX), 0);
	fa_sse_stream_release(&s);
	free(reply);
	free(text);
}

static void chat__error_frame_comes_last_after_n_chunks(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	cJSON *shape = cJSON_Parse("{\"error\": {\"code\": \"pool_exhausted\","
	                           " \"type\": \"server_error\", \"retryAfter\": 5}}");
	cJSON *pacing =
	        cJSON_Parse("{\"success\": false, \"error\": {\"code\": \"ai_pacing_limited\"}}");
	cJSON *frame = fa_chat_error_frame(shape, 9), *frame2 = fa_chat_error_frame(pacing, 9);
	char f[16][1024];

	/* a retryAfter of its own stays; the pacing envelope gets one */
	CU_ASSERT_EQUAL(get(get(frame, "error"), "retryAfter")->valuedouble, 5);
	CU_ASSERT_EQUAL(get(get(frame2, "error"), "retryAfter")->valuedouble, 9);
	CU_ASSERT_PTR_NULL(get(frame2, "success"));
	fa_chat_sse(&r, "a b c d", 1, 0, frame, 2, -1, &s);
	CU_ASSERT_EQUAL_FATAL(frames(s.body, f, 16), 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(f[0], "\"content\":\"a\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(f[1], "\"content\":\" b\""));
	CU_ASSERT_STRING_EQUAL(f[2], "{\"error\":{\"code\":\"pool_exhausted\","
	                             "\"type\":\"server_error\",\"retryAfter\":5}}");
	CU_ASSERT_STRING_EQUAL(f[3], "[DONE]");
	fa_sse_stream_release(&s);
	/* more chunks asked than the reply has: all of them, then the error */
	fa_chat_sse(&r, "a b", 1, 0, frame, 10, -1, &s);
	CU_ASSERT_EQUAL(frames(s.body, f, 16), 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(f[2], "pool_exhausted"));
	fa_sse_stream_release(&s);
	cJSON_Delete(frame);
	cJSON_Delete(frame2);
	cJSON_Delete(shape);
	cJSON_Delete(pacing);
}

static void chat__stop_after_cuts_at_a_frame_boundary_before_done(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	char f[16][1024];
	char *head;

	fa_chat_sse(&r, "a b c", 1, 0, NULL, 0, 2, &s);
	head = strndup(s.body, s.cut);
	CU_ASSERT_EQUAL(frames(head, f, 16), 2);
	CU_ASSERT_PTR_NULL(strstr(head, "[DONE]"));
	free(head);
	fa_sse_stream_release(&s);
	fa_chat_sse(&r, "a b c", 1, 0, NULL, 0, 0, &s);
	CU_ASSERT_EQUAL(s.cut, 0);
	fa_sse_stream_release(&s);
	/* past the last chunk: every chunk (the stop one too), never [DONE] */
	fa_chat_sse(&r, "a b c", 1, 0, NULL, 0, 99, &s);
	CU_ASSERT_EQUAL(s.cut, s.len - strlen("data: [DONE]\n\n"));
	fa_sse_stream_release(&s);
}

/* [DONE] travels with the frame before it; a frame is "data: ...\n\n" */
static void chat__frame_end_joins_done_to_the_frame_before(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	size_t e0, e1;

	fa_chat_sse(&r, "a b", 1, 0, NULL, 0, -1, &s);
	CU_ASSERT_EQUAL(s.n_content, 2);
	e0 = strstr(s.body, "\n\n") + 2 - s.body;
	e1 = strstr(s.body + e0, "\n\n") + 2 - s.body;
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, 0), e0);
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, e0), e1);
	/* the stop chunk and [DONE]: one frame for pacing */
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, e1), s.len);
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, s.len), s.len);
	/* from inside a frame: its end */
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, 3), e0);
	/* no "\n\n" after @pos: the end of the body */
	CU_ASSERT_EQUAL(fa_sse_frame_end("data: x", 7, 0), 7);
	fa_sse_stream_release(&s);
}

static void chat__chunks_sent_counts_whole_content_frames(void)
{
	struct fa_chat_req r = { .model = "m" };
	struct fa_sse_stream s;
	size_t e0, e1;

	fa_chat_sse(&r, "a b", 1, 0, NULL, 0, -1, &s);
	e0 = fa_sse_frame_end(s.body, s.len, 0);
	e1 = fa_sse_frame_end(s.body, s.len, e0);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, 0), 0);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, e0 - 1), 0);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, e0), 1);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, e1 - 1), 1);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, e1), 2);
	/* the stop chunk carries no piece of the reply */
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 2, s.len), 2);
	fa_sse_stream_release(&s);
	/* an error frame after one chunk: one content chunk at most */
	{
		cJSON *frame = fa_chat_stall_frame(1);

		fa_chat_sse(&r, "a b c", 1, 0, frame, 1, -1, &s);
		CU_ASSERT_EQUAL(s.n_content, 1);
		CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, (int)s.n_content, s.len), 1);
		fa_sse_stream_release(&s);
		cJSON_Delete(frame);
	}
}

static void chat__stall_frame_is_stream_idle_timeout(void)
{
	cJSON *f = fa_chat_stall_frame(2);
	const cJSON *e = get(f, "error");
	cJSON *it;
	size_t n = 0;

	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "stream_idle_timeout");
	CU_ASSERT_STRING_EQUAL(get(e, "type")->valuestring, "server_error");
	CU_ASSERT(cJSON_IsString(get(e, "message")));
	CU_ASSERT_EQUAL(get(e, "retryAfter")->valuedouble, 2);
	cJSON_ArrayForEach(it, f) n++;
	CU_ASSERT_EQUAL(n, 1);
	cJSON_Delete(f);
}

static void chat__models_list_each_name(void)
{
	char *names[] = { "a", "b" };
	cJSON *o = fa_chat_models(names, 2);
	char *text = cJSON_PrintUnformatted(o);

	CU_ASSERT_STRING_EQUAL(
	        text,
	        "{\"object\":\"list\",\"data\":["
	        "{\"id\":\"a\",\"object\":\"model\",\"created\":0,\"owned_by\":\"fakeapi\"},"
	        "{\"id\":\"b\",\"object\":\"model\",\"created\":0,\"owned_by\":\"fakeapi\"}]}");
	free(text);
	cJSON_Delete(o);
}

static const char *const scenario_text =
        "{\"id\": \"c\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
        " \"routes\": ["
        "  {\"id\": \"chat\", \"kind\": \"chat_completions\", \"method\": \"POST\","
        "   \"path\": \"/v1/chat/completions\", \"reply\": \"one two\","
        "   \"responses\": [{\"status\": 200, \"times\": 2},"
        "    {\"shape\": \"db_transient\", \"error_after_chunks\": 1},"
        "    {\"status\": 200, \"stop_after_chunks\": 1}]},"
        "  {\"id\": \"models\", \"kind\": \"models\", \"method\": \"GET\", \"path\": \"/v1/models\","
        "   \"responses\": [{\"status\": 200}]}]}";

#define MSG "\"messages\": [{\"role\": \"user\", \"content\": \"12345\"}]"

static void chat__provider_plays_the_endpoint(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;

	p = fx_provider_start(scenario_text, "c.json", 3, &sc, &j);
	CU_ASSERT_EQUAL(sc->routes[0].kind, FA_ROUTE_CHAT);
	CU_ASSERT_EQUAL(sc->routes[1].kind, FA_ROUTE_MODELS);
	CU_ASSERT_EQUAL_FATAL(sc->routes[1].n_models, 1);
	CU_ASSERT_STRING_EQUAL(sc->routes[1].models[0], FA_CHAT_DEFAULT_MODEL);
	CU_ASSERT_EQUAL(sc->routes[0].responses[1].error_after_chunks, 1);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].stop_after_chunks, -1);

	/* a bad request is 400 and moves no cursor */
	fx_decide(p, "POST", "/v1/chat/completions", "{\"model\": \"x\"}", &r);
	CU_ASSERT_EQUAL(r.status, 400);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"code\":\"invalid_request\""));
	CU_ASSERT_EQUAL(r.attempt.response_index, -1);
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/chat/completions", "{\"model\": \"x\", " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.response_index, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"chatcmpl-1\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"content\":\"one two\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"usage\":{\"prompt_tokens\":2,"
	                                      "\"completion_tokens\":2,\"total_tokens\":4}"));
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "application/json");
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/chat/completions", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "text/event-stream");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"chatcmpl-2\""));
	CU_ASSERT(r.body_len > 14 && memcmp(r.body + r.body_len - 14, "data: [DONE]\n\n", 14) == 0);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_RESPOND);
	fx_done(p, &r);
	/* the shape: a 200 stream whose last frame is the error, no Retry-After header */
	fx_decide(p, "POST", "/v1/chat/completions", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.status, 200);
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "Retry-After"));
	CU_ASSERT_PTR_NULL(r.attempt.retry_after);
	CU_ASSERT(r.attempt.pause_until_us > 0);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "text/event-stream");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"content\":\"one\""));
	CU_ASSERT_PTR_NULL(strstr(r.body, "\" two\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "data: {\"error\":{\"code\":\"db_transient\""));
	fx_done(p, &r);
	/* stop_after_chunks: a partial body of exactly one frame */
	fx_decide(p, "POST", "/v1/chat/completions", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_PARTIAL_BODY);
	CU_ASSERT_STRING_EQUAL(r.attempt.fault, "partial_body");
	CU_ASSERT_EQUAL_FATAL(r.fault_bytes, (int)(strstr(r.body, "\n\n") + 2 - r.body));
	fx_done(p, &r);
	/* the same entry without a stream: a whole completion */
	fx_decide(p, "POST", "/v1/chat/completions", "{" MSG "}", &r);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_RESPOND);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"object\":\"chat.completion\""));
	fx_done(p, &r);
	fx_decide(p, "GET", "/v1/models", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"fake-model-1\""));
	fx_done(p, &r);
	/* a reset numbers completions from 1 again */
	fa_provider_reset(p);
	fx_decide(p, "POST", "/v1/chat/completions", "{" MSG "}", &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"chatcmpl-1\""));
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static const char *const quota_text =
        "{\"id\": \"q\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}},"
        " \"quota\": {\"per_key\": 1, \"per_user\": 10, \"period_s\": 60}},"
        " \"routes\": [{\"id\": \"chat\", \"kind\": \"chat_completions\", \"method\": \"POST\","
        "   \"path\": \"/c\", \"responses\": [{\"shape\": \"pool_exhausted\", \"times\": 2},"
        "   {\"status\": 200}]}]}";

/* the platform's rate-limit contract: a shape spends no quota, in a stream too;
 * a completed stream does */
static void chat__shaped_stream_spends_no_quota(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;

	p = fx_provider_start(quota_text, "q.json", 3, &sc, &j);
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "pool_exhausted"));
	fx_done(p, &r);
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "pool_exhausted"));
	fx_done(p, &r);
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "data: [DONE]"));
	CU_ASSERT_PTR_NULL(strstr(r.body, "error"));
	fx_done(p, &r);
	/* the one request of the minute is spent now */
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_STRING_EQUAL(r.attempt.fault, "quota");
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static const char *const paced_text =
        "{\"id\": \"p\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
        " \"routes\": [{\"id\": \"chat\", \"kind\": \"chat_completions\", \"method\": \"POST\","
        "   \"path\": \"/c\", \"reply\": \"one two three\", \"responses\": ["
        "   {\"status\": 200, \"chunk_delay_ms\": 250},"
        "   {\"status\": 200, \"stall_after_chunks\": 2, \"stall_ms\": 1500,"
        "    \"retry_after_s\": 2, \"chunk_delay_ms\": 10},"
        "   {\"status\": 200, \"stall_after_chunks\": 0},"
        "   {\"shape\": \"pool_exhausted\", \"error_after_chunks\": 1, \"chunk_delay_ms\": 5},"
        "   {\"status\": 200, \"stop_after_chunks\": 1},"
        "   {\"status\": 200}]}]}";

/* what the server needs to pace a stream and journal how it ended */
static void chat__answer_plans_paced_and_stalling_streams(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;
	const char *stall;

	p = fx_provider_start(paced_text, "p.json", 3, &sc, &j);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].stall_after_chunks, -1);
	CU_ASSERT_EQUAL(sc->routes[0].responses[2].stall_ms, FA_STREAM_STALL_DEFAULT_MS);
	/* paced: every frame D apart; ends "done" */
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "done");
	CU_ASSERT_EQUAL(r.stream_content, 3);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 250);
	CU_ASSERT_EQUAL(r.stall_ms, 0);
	fx_done(p, &r);
	/* a stall after two chunks: no stop chunk, the idle-timeout frame, [DONE] */
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "stall");
	CU_ASSERT_EQUAL(r.stream_content, 2);
	CU_ASSERT_EQUAL(r.stall_ms, 1500);
	CU_ASSERT_EQUAL(r.stall_retry_after_s, 2);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 10);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_RESPOND);
	CU_ASSERT_PTR_NULL(strstr(r.body, "\"finish_reason\":\"stop\""));
	CU_ASSERT_PTR_NULL(strstr(r.body, "three"));
	stall = strstr(r.body, "data: {\"error\":{\"code\":\"stream_idle_timeout\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(stall);
	CU_ASSERT_PTR_NOT_NULL(strstr(stall, "\"retryAfter\":2}}\n\ndata: [DONE]\n\n"));
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(r.body, r.body_len, 0, r.stream_content, r.body_len), 2);
	fx_done(p, &r);
	/* at once after the headers, the default silence and retryAfter 1 */
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_EQUAL(r.stream_content, 0);
	CU_ASSERT_EQUAL(r.stall_ms, 30000);
	CU_ASSERT_EQUAL(r.stall_retry_after_s, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"retryAfter\":1}}"));
	fx_done(p, &r);
	/* a shape: an error frame, paced too */
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "error_frame");
	CU_ASSERT_EQUAL(r.stream_content, 1);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 5);
	CU_ASSERT_EQUAL(r.stall_ms, 0);
	fx_done(p, &r);
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "cut");
	fx_done(p, &r);
	/* no stream asked: a completion, no stream members */
	fx_decide(p, "POST", "/c", "{" MSG "}", &r);
	CU_ASSERT_PTR_NULL(r.stream_end);
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 0);
	fx_done(p, &r);
	fx_decide(p, "POST", "/c", "{\"stream\": true, " MSG "}", &r);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "done");
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 0);
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

/* fa_chat_answer decides under the provider's lock and leaves the body;
 * fa_sse_render, which needs no lock, renders it */
static void chat__answer_leaves_the_stream_body_to_render(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	struct fa_chat_req creq = { .model = "m", .stream = true };
	struct fa_sse_pending pending;
	struct fa_resp r = { .status = 200 };
	const struct fa_route_spec *rt;

	CU_ASSERT_EQUAL_FATAL(
	        fa_scenario_parse(paced_text, strlen(paced_text), "p.json", &sc, &err), FA_OK);
	rt = &sc->routes[0];
	/* stop_after_chunks 1: cut, its length known only once rendered */
	CU_ASSERT_FALSE(fa_chat_answer(rt, &rt->responses[4], &creq, 3, 100, &r, &pending));
	CU_ASSERT_PTR_NOT_NULL(pending.render);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "cut");
	CU_ASSERT_EQUAL(r.fault, FA_RESP_PARTIAL_BODY);
	CU_ASSERT_PTR_NULL(r.body);
	fa_sse_render(&creq, &pending, &r);
	CU_ASSERT_PTR_NULL(pending.render);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r.body);
	CU_ASSERT_EQUAL(r.stream_content, 3);
	CU_ASSERT_EQUAL(r.body_len, strlen(r.body));
	CU_ASSERT_EQUAL((size_t)r.fault_bytes, fa_sse_frame_end(r.body, r.body_len, 0));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"id\":\"chatcmpl-3\""));
	fa_resp_release(&r);
	/* a completion is rendered at once: nothing pending */
	memset(&r, 0, sizeof(r));
	r.status = 200;
	creq.stream = false;
	fa_chat_answer(rt, &rt->responses[0], &creq, 4, 100, &r, &pending);
	CU_ASSERT_PTR_NULL(pending.render);
	CU_ASSERT_PTR_NOT_NULL(r.body);
	fa_sse_render(&creq, &pending, &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"object\":\"chat.completion\""));
	fa_resp_release(&r);
	fa_scenario_free(sc);
}

void test_chat_register(void)
{
	CU_pSuite suite = CU_add_suite("chat", NULL, NULL);

	CU_add_test(suite, "chat__tokens_are_bytes_over_four_rounded_up",
	            chat__tokens_are_bytes_over_four_rounded_up);
	CU_add_test(suite, "chat__parse_reads_model_stream_tokens_and_prompt",
	            chat__parse_reads_model_stream_tokens_and_prompt);
	CU_add_test(suite, "chat__parse_refuses_what_is_no_chat_request",
	            chat__parse_refuses_what_is_no_chat_request);
	CU_add_test(suite, "chat__cost_is_prompt_plus_max_tokens_saturated",
	            chat__cost_is_prompt_plus_max_tokens_saturated);
	CU_add_test(suite, "chat__completion_has_every_field_and_usage",
	            chat__completion_has_every_field_and_usage);
	CU_add_test(suite, "chat__pieces_are_words_that_add_up_to_the_reply",
	            chat__pieces_are_words_that_add_up_to_the_reply);
	CU_add_test(suite, "chat__stream_reassembles_and_ends_with_stop_then_done",
	            chat__stream_reassembles_and_ends_with_stop_then_done);
	CU_add_test(suite, "chat__longest_reply_streams_every_word_in_order",
	            chat__longest_reply_streams_every_word_in_order);
	CU_add_test(suite, "chat__error_frame_comes_last_after_n_chunks",
	            chat__error_frame_comes_last_after_n_chunks);
	CU_add_test(suite, "chat__stop_after_cuts_at_a_frame_boundary_before_done",
	            chat__stop_after_cuts_at_a_frame_boundary_before_done);
	CU_add_test(suite, "chat__frame_end_joins_done_to_the_frame_before",
	            chat__frame_end_joins_done_to_the_frame_before);
	CU_add_test(suite, "chat__chunks_sent_counts_whole_content_frames",
	            chat__chunks_sent_counts_whole_content_frames);
	CU_add_test(suite, "chat__stall_frame_is_stream_idle_timeout",
	            chat__stall_frame_is_stream_idle_timeout);
	CU_add_test(suite, "chat__answer_plans_paced_and_stalling_streams",
	            chat__answer_plans_paced_and_stalling_streams);
	CU_add_test(suite, "chat__answer_leaves_the_stream_body_to_render",
	            chat__answer_leaves_the_stream_body_to_render);
	CU_add_test(suite, "chat__models_list_each_name", chat__models_list_each_name);
	CU_add_test(suite, "chat__provider_plays_the_endpoint", chat__provider_plays_the_endpoint);
	CU_add_test(suite, "chat__shaped_stream_spends_no_quota",
	            chat__shaped_stream_spends_no_quota);
}
