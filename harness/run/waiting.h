/* waiting.h -- the progress line of a scenario that runs long: which tasks it waits for, and on
 * what (private to harness/run/). */
#ifndef HX_WAITING_H
#define HX_WAITING_H

#include <stdint.h>

#include "scenario_state.h"

/* Real time between two "waiting for" lines of one scenario, µs. */
#define HX_WAITING_EVERY_US 10000000

/* HX_WAITING_EVERY_US, or FAKEAPI_PROGRESS_S (seconds, 0.1..3600) when the
 * environment sets it to a number in range, µs. */
int64_t hx_waiting_every_us(void);

/*
 * When @s->opts->waiting is set and opts->waiting_every_us of real time went
 * by since the scenario started or its last such line, hand it one line
 * naming each task still running, with what it waits on: "waiting for t1
 * (Retry-After 120 s, task timeout 45 s, running 30 s)" (times in the
 * provider's clock, virtual under --time-scale); nothing when no task
 * runs. Called once per tick by the drive loops.
 */
void hx__scenario_report_waiting(struct hx__scenario *s);

#endif
