/* messages.h -- the Anthropic-compatible endpoint: Messages, their event streams, errors. */
#ifndef FA_MESSAGES_H
#define FA_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

struct fa_chat_req;
struct fa_resp;
struct fa_route_spec;
struct fa_response_spec;
struct fa_sse_pending;
struct fa_sse_stream;

/*
 * A route with "kind": "messages" plays Anthropic's Messages API
 * (docs/scenario-format.md, "Messages"), so the official Anthropic SDKs
 * can be pointed at fakeapi: a 2xx is a Message, or its stream of named
 * events (message_start, content_block_start, ping, content_block_delta
 * per piece of the reply, content_block_stop, message_delta,
 * message_stop); an error status answers in Anthropic's error shape with
 * the request-id and x-should-retry headers the SDKs read. Requests
 * parse into a struct fa_chat_req (chat.h), whose token estimate and
 * cost are the chat endpoint's. Every function here is pure.
 */

/* frames before the first text delta: message_start, content_block_start, ping */
#define FA_MESSAGES_LEAD           3
#define FA_MESSAGES_REQUEST_ID_MAX 48 /* bytes a request id takes, NUL included */

/*
 * Parse a request body of @len bytes (@body may be NULL for none) into
 * @out: a JSON object with a string "model", a positive integer
 * "max_tokens" and a non-empty array "messages" of objects, each with
 * "role" "user" or "assistant" and a "content" that is a string or an
 * array of content blocks (objects); "system" a string or an array of
 * blocks when present, "stream" a boolean; other members are ignored.
 * prompt_tokens counts the messages' and the system's text
 * (fa_chat_content_tokens). Returns FA_OK (release @out with
 * fa_chat_req_release), or FA_EINVAL with @out zeroed and the 400's
 * message in @msg (@msg_len bytes), in the real API's "field: reason"
 * form ("max_tokens: Field required", "messages.0.role: Input should be
 * 'user' or 'assistant'") or fa_chat_body()'s for the body itself.
 */
enum fa_rc fa_messages_parse(const char *body, size_t len, struct fa_chat_req *out, char *msg,
                             size_t msg_len);

/*
 * Anthropic's error type for HTTP @status: 400 invalid_request_error,
 * 401 authentication_error, 402 billing_error, 403 permission_error,
 * 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 500
 * api_error, 504 timeout_error, 529 overloaded_error; any other 4xx
 * invalid_request_error, any other 5xx api_error; NULL below 400.
 * Static storage.
 */
const char *fa_messages_error_type(int status);

/*
 * The error body {"type": "error", "error": {"type": the type of
 * @status, "message": @message, or the API's default for that type
 * ("Overloaded", "Rate limited", ...) when NULL}, "request_id":
 * @request_id} (no "request_id" when it is NULL, as in a stream's error
 * event). @status >= 400. Caller deletes it.
 */
cJSON *fa_messages_error(int status, const char *message, const char *request_id);

/*
 * Does an answer of @status tell the SDKs to retry (x-should-retry)? As
 * they decide without the header: 408, 409, 429 and every 5xx.
 */
bool fa_messages_should_retry(int status);

/*
 * The Message answering @r: {"id": "msg_<@seq>", "type": "message",
 * "role": "assistant", "model": the request's, "content": [{"type":
 * "text", "text": @reply}], "stop_reason": "end_turn", "stop_sequence":
 * null, "usage": {"input_tokens": prompt_tokens, "output_tokens":
 * fa_chat_tokens(reply)}}. Caller deletes it.
 */
cJSON *fa_messages_message(const struct fa_chat_req *r, const char *reply, uint64_t seq);

/*
 * The whole event stream at once (sse.h), into @out (zeroed here): the
 * FA_MESSAGES_LEAD lead events, a content_block_delta (text_delta) per
 * piece of @reply (fa_chat_pieces), then content_block_stop,
 * message_delta (stop_reason "end_turn", usage.output_tokens) and
 * message_stop. With @error (not NULL, borrowed: an error body) only the
 * first @error_after pieces go (all of them when there are fewer), then
 * "event: error" with @error as its data, and nothing after it.
 * @stop_after >= 0 sets ->cut past the lead events and the first
 * min(@stop_after, n_chunks - lead) events after them: the provider
 * sends only those and closes (never message_stop); -1 leaves cut = len.
 * Release with fa_sse_stream_release.
 */
void fa_messages_sse(const struct fa_chat_req *r, const char *reply, uint64_t seq,
                     const cJSON *error, int error_after, int stop_after,
                     struct fa_sse_stream *out);

/*
 * Decide, over the answer @resp already holds for response entry @spec
 * of messages route @r (the provider built it from the entry), what the
 * endpoint answers for @creq: a 2xx becomes the Message "msg_<@seq>", or
 * to a stream its events, cut after stop_after_chunks events as a
 * partial_body, or silent after stall_after_chunks text deltas for
 * stall_ms, then an overloaded_error event (no pause named); an error
 * status with error_after_chunks becomes, to a stream, a 200 whose
 * error event (the entry's body, else fa_messages_error() of its
 * status) follows that many text deltas. A stream's body comes from
 * fa_sse_render(@pending), which the caller must call (or
 * fa_sse_pending_release) afterwards, with @creq still alive. Returns
 * true when the answer spends no quota: a stream ending in an error
 * event, and a 529 (overloaded: never served, as a 503).
 */
bool fa_messages_answer(const struct fa_route_spec *r, const struct fa_response_spec *spec,
                        const struct fa_chat_req *creq, uint64_t seq, struct fa_resp *resp,
                        struct fa_sse_pending *pending);

/* The request id of the @reuse-th request on connection @conn_id into
 * @buf: "req_" and 24 characters, unique within a provider's run. */
void fa_messages_request_id(uint64_t conn_id, unsigned reuse, char buf[FA_MESSAGES_REQUEST_ID_MAX]);

/*
 * Dress the decided answer @resp of a messages route as the API does:
 * request-id: @request_id on every answer, and on an error status
 * x-should-retry (fa_messages_should_retry), each unless @resp has it
 * already; an error body in Anthropic's shape (fa_messages_error, its
 * message the one @resp's {"error": {"message"}} gives, if any) unless
 * @scripted, the response entry that answered (NULL for the provider's
 * own answers: 401, 413, 400, the quota's), wrote a "body" itself.
 */
void fa_messages_dress(const struct fa_response_spec *scripted, const char *request_id,
                       struct fa_resp *resp);

#endif
