/* fault.h -- what the provider does instead of (or before) a plain answer. */
#ifndef FA_FAULT_H
#define FA_FAULT_H

#include <stdint.h>

#include "provider.h"
#include "route.h"
#include "scenario.h"

/*
 * The journal's `fault` vocabulary: what was done with one attempt. Only
 * respond and delay come from a scenario's response entries so far; the
 * others are the provider's own answers (docs/internals.md lists the faults still
 * to come: drops before and after commit, resets, partial and slow
 * bodies, streams, malformed answers).
 */
enum fa_fault {
	FA_FAULT_RESPOND = 0,    /* the scripted status, headers and body */
	FA_FAULT_DELAY,          /* the same, after delay_ms before the headers */
	FA_FAULT_DURING_PAUSE,   /* the scenario's during_pause answer */
	FA_FAULT_UNAUTHORIZED,   /* 401: no valid API key */
	FA_FAULT_NO_ROUTE,       /* 404: no route matches */
	FA_FAULT_TOO_LARGE,      /* 413: body over FA_PROVIDER_MAX_BODY */
	FA_FAULT_INCOMPLETE,     /* the client left before the request was whole */
};

/* "respond", "delay", "during_pause", "unauthorized", "no_route",
 * "too_large", "incomplete_request"; static storage. */
const char *fa_fault_str(enum fa_fault f);

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
 * CLOCK_REALTIME at @send_us. Records status, retry_after and
 * pause_until_us in @resp->attempt and returns the pause: the instant the
 * Retry-After names (µs since start; possibly in the past), or -1 when
 * none was sent or it names no instant.
 */
int64_t fa_fault_respond(const struct fa_response_spec *spec,
			 const struct fa_params *params, int64_t send_us,
			 int64_t wall_send_us, int64_t auto_until_us,
			 struct fa_resp *resp);

#endif
