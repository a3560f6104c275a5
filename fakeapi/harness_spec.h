/* harness_spec.h -- a scenario's $.harness block: tasks, events, pacing; expect kept for the harness. */
#ifndef FA_HARNESS_SPEC_H
#define FA_HARNESS_SPEC_H

#include <cJSON.h>

#include "rc.h"
#include "scenario.h"
#include "schema.h"

/*
 * Read the $.harness object @obj (at the current path of @s) into
 * sc->harness: tasks, events (each task sent by exactly one event, no
 * cycle of "after" triggers; an "after" trigger is a status or "held":
 * true; "send" may be left out with "kill": true or a "cancel" list, and
 * "restart" needs "kill"; each task cancelled by one event at most, never
 * by the event that sends it), the tasks' optional "goal" (1..500
 * characters), expect (an object, copied as it is: the harness validates
 * each check's parameters), timeout_s (default 60) and pacing (rpm
 * 1..1000000 and/or tpm 1..100000000, period_s 1..86400, default
 * sc->quota.period_s with a quota, else 60). Keys and the quota must
 * already be in @sc, since tasks name the one and pacing defaults to the
 * other. Errors are recorded
 * through @s as fa_scenario_parse() describes; on FA_EINVAL whatever was
 * read stays in sc->harness for fa_harness_spec_release().
 */
enum fa_rc fa_harness_spec_read(struct fa_schema *s, const cJSON *obj,
				struct fa_scenario *sc);

/* Release what @h owns and zero it (the struct itself is embedded).
 * NULL accepted. */
void fa_harness_spec_release(struct fa_harness_spec *h);

#endif
