/* attempt.h -- one journal entry: an inbound attempt, and its JSON form. */
#ifndef FA_ATTEMPT_H
#define FA_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

/* Attempt-counter headers that SDKs send, recorded verbatim. */
enum fa_attempt_header {
	FA_AH_STAINLESS = 0, /* x-stainless-retry-count (OpenAI/Anthropic SDKs) */
	FA_AH_AMZ,           /* amz-sdk-request (AWS SDKs: "attempt=2; max=3") */
	FA_AH_GRPC,          /* grpc-previous-rpc-attempts */
	FA_AH_COUNT
};

/* How the answer reached the client. */
enum fa_delivery {
	FA_DELIVERED_COMPLETE = 0, /* the whole response was written */
	FA_DELIVERED_CLIENT_GONE,  /* the client closed before it was written */
	FA_DELIVERED_DROPPED,      /* the provider closed on purpose (a fault) */
};

/*
 * One journal entry: one inbound attempt (never admin traffic). Times are
 * CLOCK_MONOTONIC µs since the server started; -1 = not reached. Strings
 * are owned by the entry and may be NULL (= JSON null). Secrets never: a
 * key is recorded by its id.
 */
struct fa_attempt {
	uint64_t seq;           /* 1, 2, ...: assigned by fa_journal_append at completion */
	int64_t t_arrival_us;   /* request line and headers read */
	int64_t t_response_us;  /* response handed to the connection; -1 none */
	int64_t t_done_us;      /* connection finished with the request */
	int64_t wall_us;        /* CLOCK_REALTIME at arrival, µs since epoch */
	char *method;           /* "GET" */
	char *path;             /* path without the query */
	char *route;            /* matched route id; NULL = none */
	int response_index;     /* index in the route's responses; -1 = none */
	char *task;             /* fa_task query parameter or X-Fakeapi-Task header */
	char *key;              /* key id (never the secret); NULL = no valid key */
	char *user;             /* the key's user */
	char *scope;            /* "user:ops-team" / "key:ops-1" */
	char *idempotency_key;  /* Idempotency-Key header */
	char *client_reference; /* from the body, where a route names the field */
	char body_sha256[65];   /* hex SHA-256 of the request body ("" body included) */
	char *attempt_headers[FA_AH_COUNT]; /* raw values or NULL */
	int status;                         /* status sent; 0 = none */
	char *fault;                        /* what was done instead of / besides a plain answer:
	                                       "respond", "delay", "during_pause", "unauthorized",
	                                       "no_route", "too_large" */
	bool committed;                     /* a side effect was committed */
	enum fa_delivery delivered;
	uint64_t conn_id;       /* connection number, 1, 2, ... */
	unsigned conn_reuse;    /* earlier requests on the same connection */
	char *retry_after;      /* Retry-After value sent, or NULL */
	char *retry_after_ms;   /* retry-after-ms value sent, verbatim (ms, the exact
	                           pause some SDKs read first; $.provider.retry_after_ms
	                           or a response's literal header), or NULL */
	int64_t pause_until_us; /* instant that Retry-After (or retry-after-ms, the
	                           earlier of the two) names (monotonic µs since start;
	                           may be before t_response_us for a past date); -1 =
	                           none sent or not parseable */
	char *pause_from;       /* which header's instant pause_until_us is:
	                           "retry-after" (delta-seconds), "retry-after-date"
	                           (an HTTP-date), "retry-after-ms", or "error-frame"
	                           (a stream's error frame, no header); when two name
	                           the same instant, "retry-after"/"retry-after-date";
	                           NULL = no pause (or a journal written before it) */
	char *quota; /* quota decision ("admitted replica 1", "limited per-key replica 2", "refunded
	                replica 1"); NULL without $.provider.quota */
	int in_flight;     /* requests of this scope in flight on arrival, itself included */
	int tokens;        /* the LLM rate-limit guide's cost of a chat
	                      completion request: its estimated prompt tokens
	                      plus max_tokens (chat.h,
	                      fa_chat_tokens); -1 = not a chat request (JSON null) */
	int stream_chunks; /* a streamed reply (text/event-stream): content chunks
	                      (frames carrying a piece of the reply) written to the
	                      connection before the stream ended; meaningful only
	                      with stream_end (JSON null without it) */
	char *stream_end;  /* how that stream ended: "done" ([DONE] after the
	                      whole reply), "error_frame" (a shape's error frame,
	                      then [DONE]), "cut" (closed without [DONE], by a
	                      stop_after_chunks or by the server's stop),
	                      "stall" (went silent; closed or ended by a
	                      stream_idle_timeout frame), "client_gone" (the client
	                      closed first); NULL = not a stream */
	double time_scale; /* the scale S of the provider's clock when the
	                      attempt arrived (docs/time-scale.md): every time
	                      above is then virtual; 0 or 1 = real time, and the
	                      member is left out of the JSON */
};

/* Release what @a owns (not @a itself). NULL is accepted. */
void fa_attempt_release(struct fa_attempt *a);

/* Set @a's pause_from to a copy of @from (NULL clears it). */
void fa_attempt_pause_from(struct fa_attempt *a, const char *from);

/* Name of @d: "complete", "client_gone", "dropped". */
const char *fa_delivery_str(enum fa_delivery d);

/*
 * The entry as a JSON object with exactly these members, in this order:
 * seq, t_arrival_us, t_response_us, t_done_us, wall (RFC 3339 string),
 * method, path, route, response_index, task, key, user, scope,
 * idempotency_key, client_reference, body_sha256, attempt_headers (object
 * of the three header names), status, fault, committed, delivered,
 * conn_id, conn_reuse, retry_after, retry_after_ms, pause_until_us (null
 * when -1), pause_from, quota,
 * in_flight, tokens (null when -1), stream_chunks (null when stream_end is
 * NULL), stream_end, and time_scale only when it is not 1. Caller frees
 * with cJSON_Delete.
 */
cJSON *fa_attempt_to_json(const struct fa_attempt *a);

/* Fill @out from a JSON object as fa_attempt_to_json() writes it (extra
 * members such as "prev" are ignored; retry_after_ms, pause_from, tokens,
 * stream_chunks, stream_end and time_scale may be missing, as in journals
 * written before they existed or at scale 1: NULL, NULL, -1, -1, NULL, 1). FA_EINVAL with
 * "$.member: ..." in @err when another member is missing, a member has the wrong type or a
 * string member is not UTF-8. */
enum fa_rc fa_attempt_from_json(const cJSON *obj, struct fa_attempt *out, struct fa_err *err);

/*
 * The compact JSON text of fa_attempt_to_json(@a) without its first
 * member, seq ("{"t_arrival_us":...}"): byte for byte what
 * cJSON_PrintUnformatted writes for those members, integers below 10^15
 * included (the journal renders one per attempt, so it is written
 * directly instead of through a cJSON tree and printf's floating-point
 * path). *@len gets its length. Caller frees with free().
 */
char *fa_attempt_render_unseq(const struct fa_attempt *a, size_t *len);

/* The JSON type of @v for error messages: "nothing" (NULL), "null",
 * "boolean", "number", "string", "array", "object". */
const char *fa_attempt_json_type(const cJSON *v);

#endif
