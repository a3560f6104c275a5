/* chat.c -- the OpenAI-compatible endpoint: chat completions, SSE chunks, models. */
#include "chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "exchange.h"
#include "jsontext.h"
#include "response_spec.h"
#include "route.h"
#include "sse.h"

int fa_chat_tokens(size_t len)
{
	size_t t = (len + 3) / 4;

	return t > 0x7fffffff ? 0x7fffffff : (int)t;
}

int fa_chat_cost(const struct fa_chat_req *r)
{
	int64_t cost = (int64_t)r->prompt_tokens + r->max_tokens;

	return cost > 0x7fffffff ? 0x7fffffff : (int)cost;
}

void fa_chat_req_release(struct fa_chat_req *r)
{
	if (r == NULL)
		return;
	free(r->model);
	memset(r, 0, sizeof(*r));
}

int fa_chat_content_tokens(const cJSON *c)
{
	const cJSON *part, *text;
	int n = 0, t;

	if (c == NULL || cJSON_IsNull(c))
		return 0;
	if (cJSON_IsString(c))
		return fa_chat_tokens(strlen(c->valuestring));
	if (!cJSON_IsArray(c))
		return -1;
	cJSON_ArrayForEach(part, c)
	{
		if (!cJSON_IsObject(part))
			return -1;
		text = cJSON_GetObjectItemCaseSensitive(part, "text");
		t = cJSON_IsString(text) ? fa_chat_tokens(strlen(text->valuestring)) : 0;
		n = n > 0x7fffffff - t ? 0x7fffffff : n + t;
	}
	return n;
}

int fa_chat_positive_int(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 0x7fffffff ||
	    v->valuedouble != (double)(int)v->valuedouble)
		return -1;
	return (int)v->valuedouble;
}

/* Why a body the JSON reader refused (@why, its message) is unusable:
 * \u0000 and an unpaired surrogate are valid JSON, but no cJSON string
 * can hold them, so they get a message of their own. */
static const char *unreadable(const char *why)
{
	if (strstr(why, "\\u0000") != NULL)
		return "the request body is JSON fakeapi cannot read: a string holds \\u0000";
	if (strstr(why, "unpaired surrogate") != NULL)
		return "the request body is JSON fakeapi cannot read: a string holds an "
		       "unpaired surrogate";
	return "the request body is not valid JSON";
}

enum fa_rc fa_chat_body(const char *body, size_t len, cJSON **root, char *msg, size_t msg_len)
{
	struct fa_err err = { .msg = "" };

	*root = NULL;
	if (body == NULL || fa_jsontext_parse(body, len, "body", root, &err) != FA_OK) {
		snprintf(msg, msg_len, "%s", unreadable(err.msg));
		return FA_EINVAL;
	}
	if (!cJSON_IsObject(*root)) {
		snprintf(msg, msg_len, "the request body must be a JSON object");
		cJSON_Delete(*root);
		*root = NULL;
		return FA_EINVAL;
	}
	return FA_OK;
}

enum fa_rc fa_chat_parse(const char *body, size_t len, struct fa_chat_req *out, char *msg,
                         size_t msg_len)
{
	cJSON *root = NULL;
	const cJSON *v, *m;
	size_t i = 0;
	int t;

	memset(out, 0, sizeof(*out));
	if (fa_chat_body(body, len, &root, msg, msg_len) != FA_OK)
		return FA_EINVAL;
	v = cJSON_GetObjectItemCaseSensitive(root, "messages");
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
		snprintf(msg, msg_len, "'messages' must be a non-empty array");
		goto bad;
	}
	cJSON_ArrayForEach(m, v)
	{
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");

		if (!cJSON_IsObject(m) || !cJSON_IsString(role)) {
			snprintf(msg, msg_len,
			         "'messages[%zu]' must be an object with a string 'role'", i);
			goto bad;
		}
		t = fa_chat_content_tokens(cJSON_GetObjectItemCaseSensitive(m, "content"));
		if (t < 0) {
			snprintf(
			        msg, msg_len,
			        "'messages[%zu].content' must be a string, an array of parts or null",
			        i);
			goto bad;
		}
		out->prompt_tokens =
		        out->prompt_tokens > 0x7fffffff - t ? 0x7fffffff : out->prompt_tokens + t;
		i++;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (v != NULL && !cJSON_IsString(v)) {
		snprintf(msg, msg_len, "'model' must be a string");
		goto bad;
	}
	out->model = fa_xstrdup(v != NULL ? v->valuestring : FA_CHAT_DEFAULT_MODEL);
	v = cJSON_GetObjectItemCaseSensitive(root, "stream");
	if (v != NULL && !cJSON_IsBool(v) && !cJSON_IsNull(v)) {
		snprintf(msg, msg_len, "'stream' must be a boolean");
		goto bad;
	}
	out->stream = cJSON_IsTrue(v);
	v = cJSON_GetObjectItemCaseSensitive(root, "max_tokens");
	if (v == NULL || cJSON_IsNull(v))
		v = cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens");
	if (v != NULL && !cJSON_IsNull(v)) {
		out->max_tokens = fa_chat_positive_int(v);
		if (out->max_tokens < 0) {
			snprintf(msg, msg_len, "'max_tokens' must be a positive integer");
			goto bad;
		}
	}
	cJSON_Delete(root);
	return FA_OK;
bad:
	cJSON_Delete(root);
	fa_chat_req_release(out);
	return FA_EINVAL;
}

cJSON *fa_chat_invalid(const char *message)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(body, "error");

	cJSON_AddStringToObject(e, "type", "invalid_request_error");
	cJSON_AddStringToObject(e, "code", "invalid_request");
	cJSON_AddStringToObject(e, "message", message);
	return body;
}

/* The members every completion and chunk starts with. */
static cJSON *head(const char *object, const struct fa_chat_req *r, uint64_t seq, int64_t created_s)
{
	cJSON *o = cJSON_CreateObject();
	char id[40];

	snprintf(id, sizeof(id), "chatcmpl-%llu", (unsigned long long)seq);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "object", object);
	cJSON_AddNumberToObject(o, "created", (double)created_s);
	cJSON_AddStringToObject(o, "model", r->model != NULL ? r->model : FA_CHAT_DEFAULT_MODEL);
	return o;
}

cJSON *fa_chat_completion(const struct fa_chat_req *r, const char *reply, uint64_t seq,
                          int64_t created_s)
{
	cJSON *o = head("chat.completion", r, seq, created_s);
	cJSON *choice = cJSON_CreateObject();
	cJSON *m, *u;
	int c = fa_chat_tokens(strlen(reply));

	cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "choices"), choice);
	cJSON_AddNumberToObject(choice, "index", 0);
	m = cJSON_AddObjectToObject(choice, "message");
	cJSON_AddStringToObject(m, "role", "assistant");
	cJSON_AddStringToObject(m, "content", reply);
	cJSON_AddStringToObject(choice, "finish_reason", "stop");
	u = cJSON_AddObjectToObject(o, "usage");
	cJSON_AddNumberToObject(u, "prompt_tokens", r->prompt_tokens);
	cJSON_AddNumberToObject(u, "completion_tokens", c);
	cJSON_AddNumberToObject(u, "total_tokens", (double)r->prompt_tokens + c);
	return o;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t fa_chat_pieces(const char *reply, size_t *starts)
{
	size_t n = 0, i = 0;

	while (reply[i] != '\0') {
		size_t start = i;

		while (blank(reply[i]))
			i++;
		if (reply[i] == '\0' && n > 0)
			break; /* trailing blanks: part of the last piece */
		while (reply[i] != '\0' && !blank(reply[i]))
			i++;
		if (starts != NULL)
			starts[n] = start;
		n++;
	}
	return n;
}

cJSON *fa_chat_error_frame(const cJSON *shape_body, int retry_after_s)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(shape_body, "error");
	cJSON *frame = cJSON_CreateObject();
	cJSON *copy = cJSON_IsObject(e) ? cJSON_Duplicate(e, true) : cJSON_CreateObject();

	if (cJSON_GetObjectItemCaseSensitive(copy, "retryAfter") == NULL)
		cJSON_AddNumberToObject(copy, "retryAfter", retry_after_s);
	cJSON_AddItemToObject(frame, "error", copy);
	return frame;
}

cJSON *fa_chat_stall_frame(int retry_after_s)
{
	cJSON *frame = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(frame, "error");

	cJSON_AddStringToObject(e, "code", "stream_idle_timeout");
	cJSON_AddStringToObject(e, "type", "server_error");
	cJSON_AddStringToObject(e, "message",
	                        "the model cluster went silent in the middle "
	                        "of the answer; send the request again after retryAfter seconds");
	cJSON_AddNumberToObject(e, "retryAfter", retry_after_s);
	return frame;
}

/* A chat.completion.chunk with @piece (@n bytes; NULL: the empty delta
 * and finish_reason "stop"). */
static void chunk(struct fa_sse_stream *s, const struct fa_chat_req *r, uint64_t seq,
                  int64_t created_s, const char *piece, size_t n)
{
	cJSON *o = head("chat.completion.chunk", r, seq, created_s);
	cJSON *choice = cJSON_CreateObject();
	cJSON *delta;

	cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "choices"), choice);
	cJSON_AddNumberToObject(choice, "index", 0);
	delta = cJSON_AddObjectToObject(choice, "delta");
	if (piece != NULL) {
		char *text = fa_xmalloc(n + 1);

		memcpy(text, piece, n);
		text[n] = '\0';
		cJSON_AddStringToObject(delta, "content", text);
		free(text);
		cJSON_AddNullToObject(choice, "finish_reason");
	} else {
		cJSON_AddStringToObject(choice, "finish_reason", "stop");
	}
	fa_sse_frame(s, NULL, o);
	cJSON_Delete(o);
}

void fa_chat_sse(const struct fa_chat_req *r, const char *reply, uint64_t seq, int64_t created_s,
                 const cJSON *error, int error_after, int stop_after, struct fa_sse_stream *out)
{
	size_t rlen = strlen(reply);
	size_t *starts = fa_xmalloc((rlen + 1) * sizeof(*starts));
	size_t n = fa_chat_pieces(reply, starts);
	size_t send = n;

	memset(out, 0, sizeof(*out));
	if (error != NULL && (size_t)(error_after < 0 ? 0 : error_after) < n)
		send = (size_t)(error_after < 0 ? 0 : error_after);
	for (size_t i = 0; i < send; i++) {
		size_t end = i + 1 < n ? starts[i + 1] : rlen;

		chunk(out, r, seq, created_s, reply + starts[i], end - starts[i]);
	}
	out->n_content = out->n_chunks;
	if (error != NULL)
		fa_sse_frame(out, NULL, error);
	else
		chunk(out, r, seq, created_s, NULL, 0);
	fa_sse_finish(out, stop_after, "data: [DONE]\n\n");
	free(starts);
}

cJSON *fa_chat_models(char *const *models, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *data;

	cJSON_AddStringToObject(o, "object", "list");
	data = cJSON_AddArrayToObject(o, "data");
	for (size_t i = 0; i < n; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "id", models[i]);
		cJSON_AddStringToObject(m, "object", "model");
		cJSON_AddNumberToObject(m, "created", 0);
		cJSON_AddStringToObject(m, "owned_by", "fakeapi");
		cJSON_AddItemToArray(data, m);
	}
	return o;
}

/* The retryAfter of a stall's frame, s: the entry's retry_after_s, else 1. */
static int stall_retry_after(const struct fa_response_spec *spec)
{
	return spec->shape.retry_after_s > 0 ? spec->shape.retry_after_s : 1;
}

/* fa_sse_pending's renderer for a chat completion stream. */
static void render(const struct fa_chat_req *creq, const struct fa_sse_pending *pending,
                   struct fa_sse_stream *out)
{
	fa_chat_sse(creq, pending->reply, pending->seq, pending->created_s, pending->last,
	            pending->last_after, pending->stop_after, out);
}

/* A shape's answer to a stream: the 200 stream ending in its error frame. */
static void shaped_stream(const struct fa_route_spec *r, const struct fa_response_spec *spec,
                          struct fa_resp *resp, struct fa_sse_pending *pending)
{
	const char *ra = resp->attempt.retry_after;
	cJSON *o = NULL;

	if (resp->body != NULL)
		fa_jsontext_parse(resp->body, resp->body_len, "shape", &o, NULL);
	pending->last = fa_chat_error_frame(o, ra != NULL ? (int)strtol(ra, NULL, 10) : 0);
	cJSON_Delete(o);
	pending->reply = r->reply;
	pending->last_after = spec->error_after_chunks < 0 ? 0 : spec->error_after_chunks;
	pending->stop_after = -1;
	fa_resp_drop_header(resp, "Retry-After");
	fa_resp_drop_header(resp, "retry-after-ms");
	fa_resp_drop_header(resp, "X-AI-Admission");
	fa_resp_drop_header(resp, "X-AI-Deadline-Ms");
	free(resp->attempt.retry_after);
	resp->attempt.retry_after = NULL;
	free(resp->attempt.retry_after_ms);
	resp->attempt.retry_after_ms = NULL;
	/* the pause, if any, is now the frame's retryAfter */
	fa_attempt_pause_from(&resp->attempt,
	                      resp->attempt.pause_until_us != -1 ? "error-frame" : NULL);
	fa_sse_answer(resp, spec, resp->fault == FA_RESP_PARTIAL_BODY ? "cut" : "error_frame",
	              stall_retry_after(spec));
}

bool fa_chat_answer(const struct fa_route_spec *r, const struct fa_response_spec *spec,
                    const struct fa_chat_req *creq, uint64_t seq, int64_t created_s,
                    struct fa_resp *resp, struct fa_sse_pending *pending)
{
	cJSON *o;
	bool ok2xx = resp->status >= 200 && resp->status < 300;

	memset(pending, 0, sizeof(*pending));
	if (r->kind == FA_ROUTE_MODELS && ok2xx) {
		o = fa_chat_models(r->models, r->n_models);
		fa_resp_set_json(resp, resp->status, o);
		cJSON_Delete(o);
	}
	if (r->kind != FA_ROUTE_CHAT)
		return false;
	pending->seq = seq;
	pending->created_s = created_s;
	if (spec->shape.shape != FA_SHAPE_NONE) {
		if (!creq->stream)
			return false;
		shaped_stream(r, spec, resp, pending);
		pending->render = render;
		return true;
	}
	if (!ok2xx)
		return false;
	if (!creq->stream) {
		o = fa_chat_completion(creq, r->reply, seq, created_s);
		fa_resp_set_json(resp, resp->status, o);
		cJSON_Delete(o);
		return false;
	}
	/* the platform's stream_idle_timeout: the silence, then its error frame */
	pending->render = render;
	pending->reply = r->reply;
	pending->last =
	        spec->stall_after_chunks < 0 ? NULL : fa_chat_stall_frame(stall_retry_after(spec));
	pending->last_after = spec->stall_after_chunks;
	pending->stop_after = spec->stop_after_chunks;
	if (spec->stop_after_chunks >= 0)
		resp->fault = FA_RESP_PARTIAL_BODY;
	fa_sse_answer(resp, spec,
	              resp->fault == FA_RESP_PARTIAL_BODY ? "cut"
	              : spec->stall_after_chunks >= 0     ? "stall"
	                                                  : "done",
	              stall_retry_after(spec));
	return false;
}
