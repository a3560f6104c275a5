/* response_spec.h -- one response entry: a route's responses[j] and $.provider.during_pause. */
#ifndef FA_RESPONSE_SPEC_H
#define FA_RESPONSE_SPEC_H

#include <stdbool.h>

#include <cJSON.h>

#include "rc.h"
#include "scenario.h"
#include "schema.h"

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
enum fa_rc fa_response_spec_read(struct fa_schema *s, const cJSON *obj,
				 struct fa_response_spec *r, bool last, bool pause);

/*
 * The first header among @r's that announces a pause: a literal
 * "Retry-After" or "retry-after-ms" (any letter case), or NULL. Borrowed
 * from @r.
 */
const struct fa_header *fa_response_spec_pause_header(const struct fa_response_spec *r);

/* Free @r's headers and body (not @r itself). */
void fa_response_spec_release(struct fa_response_spec *r);

#endif
