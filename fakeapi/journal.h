/* journal.h -- every inbound attempt, appended once, hash-chained. */
#ifndef FA_JOURNAL_H
#define FA_JOURNAL_H

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
 * "$.member: ..." in @err when another member is missing or a member has the wrong type. */
enum fa_rc fa_attempt_from_json(const cJSON *obj, struct fa_attempt *out, struct fa_err *err);

struct fa_journal;

/*
 * A new, empty journal. @path NULL keeps it in memory only; anything else
 * is a file created or truncated (FA_EIO "PATH: cannot open: strerror"),
 * "-" included: stdout is never the journal's file, since a reader there
 * could stall every append; a live view of the journal is a sink writing
 * to a feed (follow.h, livefeed.h). Every appended line is written and
 * flushed at once.
 */
enum fa_rc fa_journal_new(const char *path, struct fa_journal **out, struct fa_err *err);

/* Flush and close the file, free everything. NULL is accepted. */
void fa_journal_free(struct fa_journal *j);

/*
 * A sink sees every entry as it is appended (fa_journal_set_sink): @a is
 * the entry as kept, seq set, and @line its JSONL line as written to the
 * file, "prev" included, without the newline (both borrowed for the call).
 * It runs with the journal's lock held, after the file's line is written,
 * so entries reach it one at a time in seq order whatever thread finished
 * them; it must not call back into the journal, and must not wait on
 * anything outside the process (a reader of stdout, say): every attempt
 * being appended waits for it.
 */
typedef void (*fa_journal_sink_fn)(void *ctx, const struct fa_attempt *a, const char *line,
                                   size_t len);

/*
 * Give every entry appended from now on to @fn with @ctx as well (NULL =
 * no sink; one sink at a time, the last call wins). @ctx is borrowed and
 * must outlive the journal or the next call. The file, the chain and the
 * entries kept are the same with or without a sink. Thread-safe. Used by
 * --follow and the harness's --journal - (follow.h).
 */
void fa_journal_set_sink(struct fa_journal *j, fa_journal_sink_fn fn, void *ctx);

/*
 * Append an attempt: takes *@a's contents (the entry is moved, *@a is
 * zeroed), assigns the next seq and returns it. The line written is the
 * compact JSON of fa_attempt_to_json() with one more member, "prev": the
 * hex SHA-256 of the previous line's bytes (without its newline), or 64
 * zeros for the first line. Thread-safe. Never drops an entry: a write
 * error is logged and the entry is still kept in memory.
 */
uint64_t fa_journal_append(struct fa_journal *j, struct fa_attempt *a);

/* Number of entries kept in memory. Thread-safe. */
size_t fa_journal_count(struct fa_journal *j);

/* Bytes of every line appended so far, newlines included (what the file
 * holds when every write succeeded); not lowered by a reset. Thread-safe. */
uint64_t fa_journal_bytes(struct fa_journal *j);

/* Hex SHA-256 of the last line appended (64 zeros when empty) into @out. */
void fa_journal_head(struct fa_journal *j, char out[65]);

/*
 * Entries with seq > @since as {"head": "...", "count": N,
 * "last_seq": S, "entries": [lines as objects, "prev" included]}, a string
 * the caller frees. N counts the entries returned; S is the highest seq
 * ever assigned (0 before the first; not lowered by a reset), so a poller
 * passes it back as @since. Thread-safe.
 */
char *fa_journal_json(struct fa_journal *j, uint64_t since);

/*
 * Copies of the entries with seq > @since: *@out is an array of *@n
 * entries the caller releases with fa_attempt_release() each, then free().
 * Thread-safe.
 */
void fa_journal_snapshot(struct fa_journal *j, uint64_t since, struct fa_attempt **out, size_t *n);

/* Forget the entries kept in memory (admin reset). seq keeps counting and
 * the file and its chain go on. Thread-safe. */
void fa_journal_reset(struct fa_journal *j);

/*
 * Check a JSONL journal file: every line parses, its "prev" is the SHA-256
 * of the line before (64 zeros on the first), and seq runs 1, 2, 3, ...
 * On success *@n_lines gets the line count and @head_out (65 bytes, may be
 * NULL) the hash of the last line (64 zeros for an empty file; a missing
 * final newline is fine). The first break is FA_ECHAIN with
 * "PATH:LINE: not valid JSON", "PATH:LINE: prev does not match the line
 * before (a line was removed, added or changed)" or "PATH:LINE: seq N does
 * not follow M"; unreadable is FA_EIO "PATH: cannot read: strerror".
 * An edited line shows as a break on the line after it. A file cut after
 * its last line still verifies: only the head tells, which is why the
 * report records journal_head and a checker compares it with @head_out.
 */
enum fa_rc fa_journal_verify(const char *path, size_t *n_lines, char *head_out, struct fa_err *err);

/* Read a JSONL journal file into entries (as fa_journal_snapshot hands
 * them out), checking nothing but syntax. Errors name PATH:LINE. */
enum fa_rc fa_journal_read(const char *path, struct fa_attempt **out, size_t *n,
                           struct fa_err *err);

#endif
