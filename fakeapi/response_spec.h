/* response_spec.h -- one response entry: a route's responses[j] and $.provider.during_pause. */
#ifndef FA_RESPONSE_SPEC_H
#define FA_RESPONSE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "header.h"
#include "rc.h"
#include "retry_after.h"
#include "schema.h"
#include "shape.h"

/* Bounds of a response's stream options (chat_completions and messages
 * routes: chat.h, messages.h); "error_after_chunks", "stop_after_chunks"
 * and "stall_after_chunks" are 0..FA_STREAM_MAX_CHUNKS. */
#define FA_STREAM_MAX_CHUNKS         100000
#define FA_STREAM_CHUNK_DELAY_MAX_MS 60000  /* "chunk_delay_ms": 0..this */
#define FA_STREAM_STALL_MAX_MS       600000 /* "stall_ms": 1..this */
#define FA_STREAM_STALL_DEFAULT_MS   30000  /* "stall_ms" when not given */

/*
 * What happens to the connection instead of (or around) a plain answer
 * ($.routes[i].responses[j].fault). On a route with an effect, every
 * fault but FA_RESP_DROP_BEFORE_COMMIT and FA_RESP_CLOSE_IDLE commits the
 * side effect first: the client cannot know whether its write happened.
 */
enum fa_resp_fault {
	FA_RESP_RESPOND = 0,        /* "respond": the scripted answer (default) */
	FA_RESP_DROP_BEFORE_COMMIT, /* "drop_before_commit": close with a clean EOF, nothing
	                               committed */
	FA_RESP_DROP_AFTER_COMMIT,  /* "drop_after_commit": commit, then close with a clean EOF, no
	                               response */
	FA_RESP_RESET,              /* "reset": commit, then a true TCP RST, no response */
	FA_RESP_PARTIAL_BODY,       /* "partial_body": commit, send the headers and the first
	                               fault_bytes of the body (Content-Length of the whole), close */
	FA_RESP_CLOSE_IDLE,         /* "close_idle": on a reused keep-alive connection, close it
	                               when this request arrives, before reading it further and
	                               without committing; on a fresh connection, answer as respond */
};

/* One entry of a response sequence ($.routes[i].responses[j]), or the
 * provider's during_pause answer. */
struct fa_response_spec {
	int times;  /* consecutive answers it gives, >= 1; 0 = for ever (last entry only) */
	int status; /* 100..599 */
	struct fa_header *headers; /* owned, n_headers entries */
	size_t n_headers;
	cJSON *body;                /* owned; NULL = empty body; sent as compact JSON */
	bool has_retry_after;       /* "retry_after" given: the provider writes the header */
	enum fa_ra_form ra_form;    /* its form */
	int64_t ra_seconds;         /* pause asked, s; negative only for date forms (a past date) */
	int delay_ms;               /* wait before the headers go out, 0..600000 ms; on an
	                               effect route the commit happens before the wait */
	enum fa_resp_fault fault;   /* "fault", default FA_RESP_RESPOND */
	int fault_bytes;            /* partial_body: body bytes sent, 0..1048576; -1 = half */
	bool hold;                  /* "hold": after the commit, keep the answer (suspended)
	                               until the harness releases it (fa_server_release) or
	                               hold_ms passes, then apply the fault */
	int hold_ms;                /* longest hold, 1..600000 ms, default 60000 */
	struct fa_shape_spec shape; /* "shape" and its tuning: the platform's answer rendered
	                               by the provider (shape.h) instead of status, body
	                               and Retry-After; status is then the shape's;
	                               routes only (not during_pause) */
	int error_after_chunks;     /* "error_after_chunks": on a chat_completions route, a
	                               shaped answer to a stream sends this many chunks of
	                               the reply before its error frame; on a messages
	                               route, an error status to a stream is a 200 with
	                               this many text deltas, then its error event;
	                               0..FA_STREAM_MAX_CHUNKS; -1 = not
	                               given (chat: 0; messages: no stream) */
	int stop_after_chunks;      /* "stop_after_chunks": on a chat_completions or messages
	                               route, a 2xx stream is closed after this many chunks,
	                               without its end ([DONE], message_stop; journaled as
	                               partial_body), 0..FA_STREAM_MAX_CHUNKS; -1 = not given */
	int chunk_delay_ms;         /* "chunk_delay_ms": on a chat_completions or messages
	                               route, a stream's frames go out this many ms apart
	                               (the first at once), 0..60000; 0 = all at once
	                               (default) */
	int stall_after_chunks;     /* "stall_after_chunks": on a chat_completions or
	                               messages route, a 2xx stream goes silent after this
	                               many chunks (the platform's stream_idle_timeout),
	                               0..FA_STREAM_MAX_CHUNKS; -1 = not given */
	int stall_ms;               /* "stall_ms": how long it stays silent, 1..600000 ms,
	                               then the stall's error frame (and [DONE] for chat);
	                               needs stall_after_chunks; default 30000 */
};

/*
 * Read the response object @obj (at the current path of @s) into @r:
 * "times" (1..1000000; not in during_pause), "status" (100..599; required
 * unless a "shape" gives it, and a shape's own status if both), "headers",
 * "body" (any JSON), "retry_after" (delta-seconds 0..FA_RA_MAX_DELTA_S or
 * {"seconds", "form"}, never with a Retry-After header), "delay_ms"
 * (0..600000), and outside during_pause "fault" with "fault_bytes"
 * (partial_body only), "hold" with "hold_ms" (1..600000, default 60000),
 * the shape members ("shape", "retry_after_s", "cooldown_s",
 * "deadline_ms") and the chat stream members ("error_after_chunks",
 * "stop_after_chunks", "chunk_delay_ms", "stall_after_chunks",
 * "stall_ms"; chat_spec.h checks them against the route). @last: the
 * sequence's last entry, which answers for ever (times 0) unless it says
 * "times". @pause: the provider's during_pause answer. Errors are recorded
 * through @s as fa_scenario_parse() describes; on FA_EINVAL whatever was
 * read stays in @r for fa_response_spec_release().
 */
enum fa_rc fa_response_spec_read(struct fa_schema *s, const cJSON *obj, struct fa_response_spec *r,
                                 bool last, bool pause);

/*
 * The first header among @r's that announces a pause: a literal
 * "Retry-After" or "retry-after-ms" (any letter case), or NULL. Borrowed
 * from @r.
 */
const struct fa_header *fa_response_spec_pause_header(const struct fa_response_spec *r);

/* Free @r's headers and body (not @r itself). */
void fa_response_spec_release(struct fa_response_spec *r);

#endif
