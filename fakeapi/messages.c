/* messages.c -- the Anthropic-compatible endpoint: Messages, their event streams, errors. */
#include "messages.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "chat.h"
#include "exchange.h"
#include "jsontext.h"
#include "response_spec.h"
#include "route.h"
#include "sse.h"

static const cJSON *get(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* @t more tokens into @r's prompt, saturated at INT_MAX. */
static void add_tokens(struct fa_chat_req *r, int t)
{
	r->prompt_tokens = r->prompt_tokens > 0x7fffffff - t ? 0x7fffffff : r->prompt_tokens + t;
}

/* The "messages" array @v into @out; false with the 400's message in
 * @msg when it is no list of user and assistant turns. */
static bool read_turns(const cJSON *v, struct fa_chat_req *out, char *msg, size_t msg_len)
{
	const cJSON *m, *role, *content;
	size_t i = 0;
	int t;

	if (v == NULL) {
		snprintf(msg, msg_len, "messages: Field required");
		return false;
	}
	if (!cJSON_IsArray(v)) {
		snprintf(msg, msg_len, "messages: Input should be a valid list");
		return false;
	}
	if (cJSON_GetArraySize(v) == 0) {
		snprintf(msg, msg_len, "messages: at least one message is required");
		return false;
	}
	cJSON_ArrayForEach(m, v)
	{
		if (!cJSON_IsObject(m)) {
			snprintf(msg, msg_len, "messages.%zu: Input should be a valid dictionary",
			         i);
			return false;
		}
		role = get(m, "role");
		if (!cJSON_IsString(role) || (strcmp(role->valuestring, "user") != 0 &&
		                              strcmp(role->valuestring, "assistant") != 0)) {
			snprintf(msg, msg_len,
			         "messages.%zu.role: Input should be 'user' or 'assistant'", i);
			return false;
		}
		content = get(m, "content");
		if (content == NULL) {
			snprintf(msg, msg_len, "messages.%zu.content: Field required", i);
			return false;
		}
		t = cJSON_IsNull(content) ? -1 : fa_chat_content_tokens(content);
		if (t < 0) {
			snprintf(msg, msg_len,
			         "messages.%zu.content: Input should be a valid string "
			         "or a list of content blocks",
			         i);
			return false;
		}
		add_tokens(out, t);
		i++;
	}
	return true;
}

/* "model", "max_tokens", "system" and "stream" of @root into @out; false
 * with the 400's message in @msg for one the API refuses. */
static bool read_members(const cJSON *root, struct fa_chat_req *out, char *msg, size_t msg_len)
{
	const cJSON *v = get(root, "model");
	int t;

	if (v == NULL || !cJSON_IsString(v)) {
		snprintf(msg, msg_len, "model: %s",
		         v == NULL ? "Field required" : "Input should be a valid string");
		return false;
	}
	out->model = fa_xstrdup(v->valuestring);
	v = get(root, "max_tokens");
	out->max_tokens = fa_chat_positive_int(v);
	if (out->max_tokens < 0) {
		snprintf(msg, msg_len, "max_tokens: %s",
		         v == NULL ? "Field required"
		         : !cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)
		                 ? "Input should be a valid integer"
		         : v->valuedouble < 1 ? "Input should be greater than or equal to 1"
		                              : "Input should be less than or equal to 2147483647");
		return false;
	}
	v = get(root, "system");
	t = v == NULL || cJSON_IsNull(v) ? 0 : fa_chat_content_tokens(v);
	if (t < 0) {
		snprintf(msg, msg_len,
		         "system: Input should be a valid string or a list of "
		         "text blocks");
		return false;
	}
	add_tokens(out, t);
	v = get(root, "stream");
	if (v != NULL && !cJSON_IsBool(v) && !cJSON_IsNull(v)) {
		snprintf(msg, msg_len, "stream: Input should be a valid boolean");
		return false;
	}
	out->stream = cJSON_IsTrue(v);
	return true;
}

enum fa_rc fa_messages_parse(const char *body, size_t len, struct fa_chat_req *out, char *msg,
                             size_t msg_len)
{
	cJSON *root = NULL;
	enum fa_rc rc = FA_EINVAL;

	memset(out, 0, sizeof(*out));
	if (fa_chat_body(body, len, &root, msg, msg_len) != FA_OK)
		return FA_EINVAL;
	if (!read_members(root, out, msg, msg_len) ||
	    !read_turns(get(root, "messages"), out, msg, msg_len))
		goto out;
	rc = FA_OK;
out:
	cJSON_Delete(root);
	if (rc != FA_OK)
		fa_chat_req_release(out);
	return rc;
}

/* The API's error types, and the default message of each (the messages
 * its reference gives). */
static const struct {
	int status;          /* HTTP status */
	const char *type;    /* error.type */
	const char *message; /* error.message when the scenario gives none */
} errors[] = {
	{ 400, "invalid_request_error", "Invalid request" },
	{ 401, "authentication_error", "Authentication error" },
	{ 402, "billing_error", "Billing error" },
	{ 403, "permission_error", "Permission denied" },
	{ 404, "not_found_error", "Not found" },
	{ 413, "request_too_large", "Request exceeds the maximum allowed number of bytes" },
	{ 429, "rate_limit_error", "Rate limited" },
	{ 500, "api_error", "Internal server error" },
	{ 504, "timeout_error", "Request timeout" },
	{ 529, "overloaded_error", "Overloaded" },
};

/* The row of exactly @status, or -1. */
static int find_row(int status)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].status == status)
			return (int)i;
	return -1;
}

/* The row of @status: its own, else invalid_request_error's for a 4xx
 * and api_error's for a 5xx; -1 below 400. */
static int error_row(int status)
{
	int i = find_row(status);

	if (i >= 0 || status < 400)
		return i;
	return find_row(status < 500 ? 400 : 500);
}

const char *fa_messages_error_type(int status)
{
	int i = error_row(status);

	return i < 0 ? NULL : errors[i].type;
}

cJSON *fa_messages_error(int status, const char *message, const char *request_id)
{
	int i = error_row(status < 400 ? 500 : status);
	cJSON *body = cJSON_CreateObject();
	cJSON *e;

	cJSON_AddStringToObject(body, "type", "error");
	e = cJSON_AddObjectToObject(body, "error");
	cJSON_AddStringToObject(e, "type", errors[i].type);
	cJSON_AddStringToObject(e, "message", message != NULL ? message : errors[i].message);
	if (request_id != NULL)
		cJSON_AddStringToObject(body, "request_id", request_id);
	return body;
}

bool fa_messages_should_retry(int status)
{
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

/* The message object both answers start from: "content" empty, no stop
 * reason yet, @output_tokens so far. */
static cJSON *message(const struct fa_chat_req *r, uint64_t seq, int output_tokens)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *u;
	char id[40];

	snprintf(id, sizeof(id), "msg_%llu", (unsigned long long)seq);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "type", "message");
	cJSON_AddStringToObject(o, "role", "assistant");
	cJSON_AddStringToObject(o, "model", r->model != NULL ? r->model : FA_CHAT_DEFAULT_MODEL);
	cJSON_AddArrayToObject(o, "content");
	cJSON_AddNullToObject(o, "stop_reason");
	cJSON_AddNullToObject(o, "stop_sequence");
	u = cJSON_AddObjectToObject(o, "usage");
	cJSON_AddNumberToObject(u, "input_tokens", r->prompt_tokens);
	cJSON_AddNumberToObject(u, "output_tokens", output_tokens);
	return o;
}

cJSON *fa_messages_message(const struct fa_chat_req *r, const char *reply, uint64_t seq)
{
	cJSON *o = message(r, seq, fa_chat_tokens(strlen(reply)));
	cJSON *block = cJSON_CreateObject();

	cJSON_AddStringToObject(block, "type", "text");
	cJSON_AddStringToObject(block, "text", reply);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(o, "content"), block);
	cJSON_ReplaceItemInObjectCaseSensitive(o, "stop_reason", cJSON_CreateString("end_turn"));
	return o;
}

/* An event {"type": @type, ...} whose members the caller adds. */
static cJSON *event(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", type);
	return o;
}

/* Append event @o, named after its "type", to @s and delete it. */
static void put(struct fa_sse_stream *s, cJSON *o)
{
	fa_sse_frame(s, get(o, "type")->valuestring, o);
	cJSON_Delete(o);
}

/* The three events before the first text delta. */
static void lead(struct fa_sse_stream *s, const struct fa_chat_req *r, uint64_t seq)
{
	cJSON *o = event("message_start"), *b;

	cJSON_AddItemToObject(o, "message", message(r, seq, 1));
	put(s, o);
	o = event("content_block_start");
	cJSON_AddNumberToObject(o, "index", 0);
	b = cJSON_AddObjectToObject(o, "content_block");
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", "");
	put(s, o);
	put(s, event("ping"));
	s->lead = s->n_chunks;
}

/* A content_block_delta carrying the @n bytes at @piece. */
static void delta(struct fa_sse_stream *s, const char *piece, size_t n)
{
	cJSON *o = event("content_block_delta"), *d;
	char *text = fa_xmalloc(n + 1);

	memcpy(text, piece, n);
	text[n] = '\0';
	cJSON_AddNumberToObject(o, "index", 0);
	d = cJSON_AddObjectToObject(o, "delta");
	cJSON_AddStringToObject(d, "type", "text_delta");
	cJSON_AddStringToObject(d, "text", text);
	free(text);
	put(s, o);
}

/* content_block_stop and message_delta: the reply of @reply_tokens is whole. */
static void close_block(struct fa_sse_stream *s, int reply_tokens)
{
	cJSON *o = event("content_block_stop"), *d;

	cJSON_AddNumberToObject(o, "index", 0);
	put(s, o);
	o = event("message_delta");
	d = cJSON_AddObjectToObject(o, "delta");
	cJSON_AddStringToObject(d, "stop_reason", "end_turn");
	cJSON_AddNullToObject(d, "stop_sequence");
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "usage"), "output_tokens", reply_tokens);
	put(s, o);
}

#define MESSAGE_STOP "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

void fa_messages_sse(const struct fa_chat_req *r, const char *reply, uint64_t seq,
                     const cJSON *error, int error_after, int stop_after, struct fa_sse_stream *out)
{
	size_t rlen = strlen(reply);
	size_t *starts = fa_xmalloc((rlen + 1) * sizeof(*starts));
	size_t n = fa_chat_pieces(reply, starts);
	size_t send = n;

	memset(out, 0, sizeof(*out));
	lead(out, r, seq);
	if (error != NULL && (size_t)(error_after < 0 ? 0 : error_after) < n)
		send = (size_t)(error_after < 0 ? 0 : error_after);
	for (size_t i = 0; i < send; i++) {
		size_t end = i + 1 < n ? starts[i + 1] : rlen;

		delta(out, reply + starts[i], end - starts[i]);
	}
	out->n_content = send;
	free(starts);
	if (error != NULL) {
		fa_sse_frame(out, "error", error);
		fa_sse_finish(out, stop_after, NULL);
		return;
	}
	close_block(out, fa_chat_tokens(rlen));
	fa_sse_finish(out, stop_after, MESSAGE_STOP);
}

/* fa_sse_pending's renderer for a messages stream. */
static void render(const struct fa_chat_req *creq, const struct fa_sse_pending *pending,
                   struct fa_sse_stream *out)
{
	fa_messages_sse(creq, pending->reply, pending->seq, pending->last, pending->last_after,
	                pending->stop_after, out);
}

bool fa_messages_answer(const struct fa_route_spec *r, const struct fa_response_spec *spec,
                        const struct fa_chat_req *creq, uint64_t seq, struct fa_resp *resp,
                        struct fa_sse_pending *pending)
{
	bool ok2xx = resp->status >= 200 && resp->status < 300;
	cJSON *o = NULL;

	memset(pending, 0, sizeof(*pending));
	pending->seq = seq;
	pending->reply = r->reply;
	pending->stop_after = -1;
	if (!ok2xx && (!creq->stream || spec->error_after_chunks < 0 || resp->status < 400))
		return resp->status == 529;
	if (!ok2xx) {
		/* the 200 and some text went out before the error: it comes as an
		 * event, which names no pause (the loader allows no Retry-After) */
		if (resp->body != NULL)
			fa_jsontext_parse(resp->body, resp->body_len, "body", &o, NULL);
		pending->last = o != NULL ? o : fa_messages_error(resp->status, NULL, NULL);
		pending->last_after = spec->error_after_chunks;
		pending->render = render;
		fa_sse_answer(resp, spec,
		              resp->fault == FA_RESP_PARTIAL_BODY ? "cut" : "error_frame", 0);
		return true;
	}
	if (!creq->stream) {
		o = fa_messages_message(creq, r->reply, seq);
		fa_resp_set_json(resp, resp->status, o);
		cJSON_Delete(o);
		return false;
	}
	pending->render = render;
	pending->last = spec->stall_after_chunks < 0 ? NULL : fa_messages_error(529, NULL, NULL);
	pending->last_after = spec->stall_after_chunks;
	pending->stop_after = spec->stop_after_chunks;
	if (spec->stop_after_chunks >= 0)
		resp->fault = FA_RESP_PARTIAL_BODY;
	fa_sse_answer(resp, spec,
	              resp->fault == FA_RESP_PARTIAL_BODY ? "cut"
	              : spec->stall_after_chunks >= 0     ? "stall"
	                                                  : "done",
	              0);
	return false;
}

void fa_messages_request_id(uint64_t conn_id, unsigned reuse, char buf[FA_MESSAGES_REQUEST_ID_MAX])
{
	snprintf(buf, FA_MESSAGES_REQUEST_ID_MAX, "req_fa%014llu%08u", (unsigned long long)conn_id,
	         reuse);
}

void fa_messages_dress(const struct fa_response_spec *scripted, const char *request_id,
                       struct fa_resp *resp)
{
	cJSON *old = NULL, *body;
	const cJSON *m;

	if (!fa_resp_has_header(resp, "request-id"))
		fa_resp_add_header(resp, "request-id", request_id);
	if (resp->status < 400)
		return;
	if (!fa_resp_has_header(resp, "x-should-retry"))
		fa_resp_add_header(resp, "x-should-retry",
		                   fa_messages_should_retry(resp->status) ? "true" : "false");
	if (scripted != NULL && scripted->body != NULL)
		return;
	if (resp->body != NULL)
		fa_jsontext_parse(resp->body, resp->body_len, "body", &old, NULL);
	m = get(get(old, "error"), "message");
	body = fa_messages_error(resp->status, cJSON_IsString(m) ? m->valuestring : NULL,
	                         request_id);
	fa_resp_set_json(resp, resp->status, body);
	cJSON_Delete(body);
	cJSON_Delete(old);
}
