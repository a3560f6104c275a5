/* exchange.h -- one request and its answer as the server and every answer module see them. */
#ifndef FA_EXCHANGE_H
#define FA_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "header.h"
#include "journal.h"
#include "quota.h"
#include "response_spec.h"

/* A request as the server read it. All pointers borrowed for the call. */
struct fa_req {
	const char *method;            /* "GET" */
	const char *path;              /* without the query */
	const struct fa_header *query; /* query arguments, decoded, in order */
	size_t n_query;
	const struct fa_header *headers; /* request headers, names as received */
	size_t n_headers;
	const char *body; /* request body, not NUL-terminated; NULL if none */
	size_t body_len;
	bool body_too_large;   /* the body passed FA_PROVIDER_MAX_BODY (answer 413) */
	const char *malformed; /* not NULL: why its framing or target is malformed
	                          (target.h; answer 400, the body unread) */
	uint64_t conn_id;      /* connection number, 1, 2, ... */
	unsigned conn_reuse;   /* earlier requests on this connection */
	int64_t t_arrival_us;  /* monotonic µs since the server started */
	int64_t wall_us;       /* CLOCK_REALTIME at arrival, µs since epoch */
};

/* Largest request body read, bytes; a larger one gets 413. */
#define FA_PROVIDER_MAX_BODY (1024 * 1024)

/* The answer, filled by fa_provider_decide(). Owned by the caller, released
 * with fa_resp_release(). */
struct fa_resp {
	int status;                /* 100..599 */
	struct fa_header *headers; /* owned, n_headers */
	size_t n_headers;
	char *body; /* owned, body_len bytes; NULL = empty */
	size_t body_len;
	struct fa_journal_view *journal_view; /* owned; not NULL: the body is this view,
	                                         streamed (GET /_fakeapi/journal) */
	int delay_ms;                         /* hold the answer this long before the headers */
	enum fa_resp_fault fault;       /* what the server does with the answer; FA_RESP_RESPOND
	                                   (zero) sends it; a close_idle here closes at once */
	int fault_bytes;                /* partial_body: body bytes to send, -1 = half
	                                   (fa_fault_partial_len settles it) */
	bool hold;                      /* keep the answer suspended until fa_server_release()
	                                   or hold_ms passes, then delay_ms, then the fault */
	int hold_ms;                    /* longest hold, ms (1..600000) */
	const char *stream_end;         /* static; not NULL for a text/event-stream answer
	                                   (sse.h) whose body is frames ending in "\n\n":
	                                   attempt.stream_end when every byte went out
	                                   ("done", "error_frame", "cut", "stall"); the
	                                   server journals stream_chunks and stream_end */
	int stream_lead;                /* frames at the body's start before any piece of the
	                                   reply (messages.h: message_start, content_block_start,
	                                   ping; 0 for chat), sent at once */
	int stream_content;             /* frames after those carrying a piece of the reply
	                                   (fa_sse_chunks_sent counts them) */
	int chunk_delay_ms;             /* a stream's frames go this many ms apart, the first
	                                   at once (0..60000); 0 = at once, Content-Length */
	int stall_ms;                   /* > 0: the stream goes silent this long (1..600000 ms)
	                                   before the frame after its stream_content frames,
	                                   the stall's error frame */
	int stall_retry_after_s;        /* that frame's retryAfter, s: pause_until_us is
	                                   set from it when the frame goes out; 0 = the
	                                   frame names no pause */
	bool journaled;                 /* false for admin traffic */
	struct fa_attempt attempt;      /* the journal entry in progress (journaled only) */
	char *scope;                    /* owned: scope whose in-flight count to drop, or NULL */
	bool quota_admitted;            /* the quota model admitted it: fa_provider_finish()
	                                   ends it there (fa_quota_leave) */
	struct fa_quota_decision quota; /* the quota model's decision, when it has one */
};

/* Release what @r owns. NULL accepted. */
void fa_resp_release(struct fa_resp *r);

/* Append a header (copies both strings). */
void fa_resp_add_header(struct fa_resp *r, const char *name, const char *value);

/* Does @r carry a header @name (any letter case)? */
bool fa_resp_has_header(const struct fa_resp *r, const char *name);

/* Drop every header @name (any letter case) from @r, freeing its strings. */
void fa_resp_drop_header(struct fa_resp *r, const char *name);

/*
 * $.provider.retry_after_ms: beside a delta-seconds Retry-After the
 * provider wrote itself, `retry-after-ms: @ms` (the exact pause; the
 * OpenAI SDKs read it before Retry-After; negative counts as 0). Nothing
 * unless @on (the scenario's flag), nor when @resp already carries a
 * retry-after-ms (a response entry's literal one, fa_fault_respond()).
 */
void fa_resp_add_retry_after_ms(struct fa_resp *resp, bool on, int64_t ms);

/* Set @status and, unless @body is NULL, the compact JSON of @body as the
 * body with Content-Type: application/json. @body stays the caller's. */
void fa_resp_set_json(struct fa_resp *r, int status, const cJSON *body);

/* Value of request header @name (case-insensitive), or NULL. */
const char *fa_req_header(const struct fa_req *req, const char *name);

/* Value of query argument @name (case-sensitive), or NULL. */
const char *fa_req_query(const struct fa_req *req, const char *name);

#endif
