/* fault.h -- what the provider does instead of (or before) a plain answer. */
#ifndef FA_FAULT_H
#define FA_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exchange.h"
#include "response_spec.h"
#include "route.h"

/*
 * The journal's `fault` vocabulary: what was done with one attempt, named
 * after the fault actually applied. respond, delay and the connection
 * faults come from a scenario's response entries (enum fa_resp_fault); the
 * others are the provider's own answers (docs/internals.md lists the faults
 * still to come: slow bodies, streams, malformed answers). A "hold" is no
 * fault of its own: a held answer is journaled under the fault applied when
 * it is let go, and the hold shows in t_response_us / t_done_us (the
 * response entry, route + response_index, says it was a hold).
 */
enum fa_fault {
	FA_FAULT_RESPOND = 0,  /* the scripted status, headers and body */
	FA_FAULT_DELAY,        /* the same, after delay_ms before the headers */
	FA_FAULT_DURING_PAUSE, /* the scenario's during_pause answer */
	FA_FAULT_UNAUTHORIZED, /* 401: no valid API key */
	FA_FAULT_NO_ROUTE,     /* 404: no route matches */
	FA_FAULT_TOO_LARGE,    /* 413: body over FA_PROVIDER_MAX_BODY */
	FA_FAULT_INCOMPLETE,   /* the client left before the request was whole */
	/* the connection faults; "committed" on a route with an effect */
	FA_FAULT_DROP_BEFORE_COMMIT, /* closed (clean EOF), nothing committed, nothing sent */
	FA_FAULT_DROP_AFTER_COMMIT,  /* committed, then closed (clean EOF), nothing sent */
	FA_FAULT_RESET,              /* committed, then a TCP RST, nothing sent */
	FA_FAULT_PARTIAL_BODY,       /* committed, headers and part of the body sent, closed */
	FA_FAULT_CLOSE_IDLE,         /* a reused keep-alive connection closed on its next
	                                request: nothing committed, nothing sent */
	FA_FAULT_REPLAY,             /* the idempotency layer replayed a stored answer
	                                (same key, same body): nothing committed */
	FA_FAULT_IDEM_CONFLICT,      /* 409: the same key is still in flight */
	FA_FAULT_IDEM_REUSED,        /* 422: the same key came with another body */
	FA_FAULT_IDEM_MISSING,       /* 400: the ietf profile requires a key, none given */
	FA_FAULT_IDEM_INVALID,       /* 400: a key that is not 1..255 printable ASCII characters */
	FA_FAULT_QUOTA,              /* 429: the quota model refused it (quota.h, the platform's
	                                platform rate_limit_exceeded) */
	FA_FAULT_JOURNAL,            /* 503: the journal's file could not be written, so the
	                                provider refuses what it could not record */
	FA_FAULT_MALFORMED,          /* 400: framing or target malformed (target.h) */
};

/* "respond", "delay", "during_pause", "unauthorized", "no_route",
 * "too_large", "incomplete_request", "drop_before_commit",
 * "drop_after_commit", "reset", "partial_body", "close_idle", "replay",
 * "idempotency_conflict", "idempotency_reused", "idempotency_missing",
 * "idempotency_invalid", "quota", "journal_unavailable",
 * "malformed_request"; static
 * storage; "unknown" for a value outside the enum. */
const char *fa_fault_str(enum fa_fault f);

/*
 * The journal's name for response fault @f applied with @delay_ms before
 * it: FA_FAULT_DELAY for a plain answer with a delay, else the fault of
 * the same name (a delay before a drop is not named: the response entry
 * says it and t_done_us shows it).
 */
enum fa_fault fa_fault_of(enum fa_resp_fault f, int delay_ms);

/*
 * Whether an answer with fault @f and scripted @status commits the side
 * effect of a route that has one (scenario-format: a 2xx answer, or a
 * drop after commit, a reset or a partial body whatever the status; never
 * a drop before commit or a close_idle). Delays and holds change nothing:
 * the commit comes first.
 */
bool fa_fault_commits(enum fa_resp_fault f, int status);

/*
 * Settle what happens on this connection: a close_idle on a connection
 * that has served @conn_reuse > 0 requests before closes at once (no
 * delay, no hold); on a fresh one it answers as a plain respond. Updates
 * @resp->fault, delay_ms and hold and returns the journal's name for it
 * (fa_fault_of). Call after fa_fault_respond().
 */
enum fa_fault fa_fault_settle(struct fa_resp *resp, unsigned conn_reuse);

/*
 * Body bytes a partial_body answer sends of a @body_len-byte body:
 * @fault_bytes, or half the body (rounded down) when it is -1, and never
 * the whole body: at most @body_len - 1 (0 for an empty body), so the
 * client always finds fewer bytes than Content-Length announces.
 */
size_t fa_fault_partial_len(int fault_bytes, size_t body_len);

/*
 * Build the answer a response entry scripts into @resp: its headers, its
 * body with {param}s from @params (may be NULL) rendered, its status and
 * delay_ms. A Retry-After comes from, in order: a literal "Retry-After"
 * among the entry's headers (sent verbatim, parsed only to learn the
 * instant it names); the entry's retry_after (formatted by the
 * retry_after module for an answer going out at @send_us); or, when
 * @auto_until_us >= 0, delta-seconds covering the rest of that pause,
 * rounded up so a client that obeys it also clears the pause. @send_us and
 * @auto_until_us are µs since the server started; @wall_send_us is
 * CLOCK_REALTIME at @send_us. A literal "retry-after-ms" among the
 * headers (OpenAI's exact pause in ms) is journaled as sent and, when it
 * is a non-negative integer (fa_retry_after_ms_parse), names a pause
 * ending @send_us + that many ms; with a Retry-After too, the pause ends
 * at the earlier of the two instants (both are the provider's word and a
 * client may follow either). Copies the entry's connection fault, hold
 * and hold_ms (and its fault_bytes, -1 = half the body) into @resp.
 * Records status, retry_after, retry_after_ms and pause_until_us in
 * @resp->attempt and returns the pause: the instant the Retry-After (or
 * retry-after-ms) names (µs since start; possibly in the past), or -1
 * when none was sent or it names no instant.
 */
int64_t fa_fault_respond(const struct fa_response_spec *spec, const struct fa_params *params,
                         int64_t send_us, int64_t wall_send_us, int64_t auto_until_us,
                         struct fa_resp *resp);

#endif
