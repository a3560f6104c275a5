/* chat.h -- the OpenAI-compatible endpoint: chat completions, SSE chunks, models. */
#ifndef FA_CHAT_H
#define FA_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

struct fa_resp;
struct fa_route_spec;
struct fa_response_spec;

/*
 * A route with "kind": "chat_completions" answers its 2xx responses with a
 * chat completion rendered here (docs/scenario-format.md, "Chat
 * completions"); "kind": "models" answers them with the model list. Every
 * function here is pure: no clock, no state; the provider passes the
 * completion's sequence number and the wall clock in.
 */

#define FA_CHAT_DEFAULT_MODEL "fake-model-1" /* "models" default; a request with no model */
#define FA_CHAT_DEFAULT_REPLY "This is a deterministic reply from the fake model."
#define FA_CHAT_REPLY_MAX     65536 /* "reply": 1..this bytes */
#define FA_CHAT_MAX_MODELS    64    /* "models": 1..this names */

/*
 * The LLM rate-limit guide's "estimated prompt tokens": ceil(@len / 4) for a text of @len
 * UTF-8 bytes (0 for an empty text). A rough rule of thumb for English,
 * the same for prompts and replies, so a test can compute it by hand.
 */
int fa_chat_tokens(size_t len);

/* What a request to POST /v1/chat/completions asked for (fa_chat_parse),
 * or one to POST /v1/messages (messages.h: fa_messages_parse). */
struct fa_chat_req {
	char *model;       /* owned: "model", FA_CHAT_DEFAULT_MODEL when absent */
	bool stream;       /* "stream": true */
	int max_tokens;    /* "max_tokens" (or "max_completion_tokens"), >= 1; 0 = not given */
	int prompt_tokens; /* sum of fa_chat_content_tokens() over every message's
	                      "content" (and the messages endpoint's "system") */
};

/*
 * The tokens of one message's "content" @c (NULL when absent): a string,
 * an array of parts (objects) whose string "text" members count, or null
 * (0); -1 for anything else. Saturated at INT_MAX.
 */
int fa_chat_content_tokens(const cJSON *c);

/* @v as a positive integer that fits an int, or -1. */
int fa_chat_positive_int(const cJSON *v);

/*
 * Read request body @body (@len bytes; NULL for none) into *@root, which
 * must be a JSON object (the caller deletes it): FA_OK, or FA_EINVAL
 * with *@root NULL and the 400's message in @msg (@msg_len bytes): "the
 * request body is not valid JSON", "the request body must be a JSON
 * object", or for valid JSON whose strings cJSON cannot hold (\u0000, an
 * unpaired surrogate) "the request body is JSON fakeapi cannot read: a
 * string holds ...".
 */
enum fa_rc fa_chat_body(const char *body, size_t len, cJSON **root, char *msg, size_t msg_len);

/*
 * Parse a request body of @len bytes (@body may be NULL for none) into
 * @out. It must be a JSON object whose "messages" is a non-empty array of
 * objects, each with a string "role" and a "content" that is a string, an
 * array of parts or null; "model" a string when present, "stream" a
 * boolean, "max_tokens" a positive integer; other members are ignored.
 * Returns FA_OK (release @out with fa_chat_req_release), or FA_EINVAL with
 * a one-line reason in @msg (@msg_len bytes) and @out zeroed. Valid JSON
 * whose strings cJSON cannot hold (\u0000, an unpaired surrogate) gets
 * "the request body is JSON fakeapi cannot read: a string holds ...".
 */
enum fa_rc fa_chat_parse(const char *body, size_t len, struct fa_chat_req *out, char *msg,
                         size_t msg_len);

/* Free what @r owns and zero it. NULL accepted. */
void fa_chat_req_release(struct fa_chat_req *r);

/*
 * The LLM rate-limit guide's cost of @r in tokens, "estimated prompt tokens + max output
 * tokens": prompt_tokens plus max_tokens (0 when not given), saturated at
 * INT_MAX (2147483647), so the journal's "tokens" and the quota's
 * tokens_over_limit message name the same number (every token limit is
 * far below it, so saturation changes no decision).
 */
int fa_chat_cost(const struct fa_chat_req *r);

/* The 400 for a bad request: {"error": {"type": "invalid_request_error",
 * "code": "invalid_request", "message": @message}}. Caller deletes it. */
cJSON *fa_chat_invalid(const char *message);

/*
 * The non-streaming answer: {"id": "chatcmpl-<@seq>", "object":
 * "chat.completion", "created": @created_s, "model": the request's,
 * "choices": [{"index": 0, "message": {"role": "assistant", "content":
 * @reply}, "finish_reason": "stop"}], "usage": {"prompt_tokens",
 * "completion_tokens": fa_chat_tokens(reply), "total_tokens"}}. Caller
 * deletes it.
 */
cJSON *fa_chat_completion(const struct fa_chat_req *r, const char *reply, uint64_t seq,
                          int64_t created_s);

/*
 * The pieces a streamed @reply is cut into: one per word, each word with
 * the blanks before it (trailing blanks join the last piece), so the
 * pieces put together are @reply exactly. An empty reply has no piece.
 * Returns the number of pieces and, when @starts is not NULL, the byte
 * offset where piece i starts in @starts[i] (room for strlen(reply) + 1).
 */
size_t fa_chat_pieces(const char *reply, size_t *starts);

/*
 * The error frame of a shape in a stream: {"error": {...}} with
 * the members of @shape_body's "error" object (the pacing envelope's too)
 * and "retryAfter": @retry_after_s added when it has none. Caller deletes
 * it.
 */
cJSON *fa_chat_error_frame(const cJSON *shape_body, int retry_after_s);

/*
 * The frame a stall ends with (the platform's stream_idle_timeout: the cluster
 * went silent mid-answer): {"error": {"code": "stream_idle_timeout",
 * "type": "server_error", "message": "...", "retryAfter": @retry_after_s}}.
 * Caller deletes it.
 */
cJSON *fa_chat_stall_frame(int retry_after_s);

struct fa_sse_stream;

/*
 * The whole text/event-stream body at once (sse.h), into @out (zeroed
 * here): a chat.completion.chunk frame per piece of @reply ({"id",
 * "object": "chat.completion.chunk", "created", "model", "choices":
 * [{"index": 0, "delta": {"content": PIECE}, "finish_reason": null}]}),
 * a last chunk with an empty delta and "finish_reason": "stop", then
 * "data: [DONE]\n\n". With @error (not NULL, borrowed:
 * fa_chat_error_frame) only the first @error_after pieces go (all of
 * them when there are fewer), then "data: " + @error, then [DONE], and
 * no stop chunk. n_content counts the piece frames, n_chunks those and
 * the stop (or error) frame. @stop_after >= 0 sets ->cut to the bytes of
 * the first min(@stop_after, n_chunks) frames: the provider sends only
 * those and closes; -1 leaves cut = len. Release with
 * fa_sse_stream_release.
 */
void fa_chat_sse(const struct fa_chat_req *r, const char *reply, uint64_t seq, int64_t created_s,
                 const cJSON *error, int error_after, int stop_after, struct fa_sse_stream *out);

/* GET /v1/models: {"object": "list", "data": [{"id", "object": "model",
 * "created": 0, "owned_by": "fakeapi"}, ...]} for the @n names of
 * @models. Caller deletes it. */
cJSON *fa_chat_models(char *const *models, size_t n);

struct fa_sse_pending;

/*
 * Decide, over the answer @resp already holds for response entry @spec
 * of route @r (a chat_completions or models route; the provider built it
 * from the entry, and its shape when it has one), what the endpoint
 * answers (docs/scenario-format.md, "Chat completions"): a 2xx becomes
 * the model list, or the completion "chatcmpl-<@seq>" created at
 * @created_s (wall clock, s) for @creq, a stream of chunks when it asked
 * for one, cut after stop_after_chunks frames as a partial_body
 * (resp->fault set here, fault_bytes by fa_sse_render); a shape
 * to a stream becomes a 200 whose last frame before [DONE] is the shape's
 * error, after error_after_chunks chunks, with its Retry-After,
 * retry-after-ms and X-AI-* headers removed and attempt.retry_after cleared (attempt.pause_until_us
 * stays: the frame's retryAfter names it). With stall_after_chunks, the
 * first N chunks go, then the stall frame (fa_chat_stall_frame,
 * retryAfter the entry's retry_after_s or 1) and [DONE]. Every stream
 * gets its status, headers and @resp's stream members (provider.h:
 * stream_end, chunk_delay_ms, stall_ms, stall_retry_after_s) here; its
 * body, stream_content and fault_bytes come from fa_sse_render(@pending),
 * which the caller must call (or fa_sse_pending_release) afterwards,
 * with @creq still alive. Any other answer stays as it is, and @pending
 * has nothing to render. Returns true for such a shaped stream (it
 * spends no quota).
 */
bool fa_chat_answer(const struct fa_route_spec *r, const struct fa_response_spec *spec,
                    const struct fa_chat_req *creq, uint64_t seq, int64_t created_s,
                    struct fa_resp *resp, struct fa_sse_pending *pending);

#endif
