/* pause.h -- wait.retry_after and wait.scope_pause: an announced pause holds for the task told and
 * for its scope. */
#ifndef HX_PAUSE_H
#define HX_PAUSE_H

#include "judge.h"

/* The default tolerance of both checks, ms: clock granularity and
 * scheduling slack (docs/checks.md, "Why 50 ms"). */
#define HX_PAUSE_TOLERANCE_MS 50

/*
 * Judge wait.retry_after (the retry-safety guide: a 429 is a scheduler
 * signal, and a Retry-After wins over a shorter local delay; RFC 9110
 * §10.2.3): after a received answer announced a pause (pause_until_us
 * past its response), its task's next attempt arrives no earlier than
 * the pause's end minus "tolerance_ms". Evidence: each pause and the
 * attempt after it (the early ones when it fails).
 */
void hx_pause_retry_after_check(const struct hx_check_ctx *c, struct hx_check_result *r);

/*
 * Judge wait.scope_pause (the retry-safety guide: one registry per scope;
 * five-step test, step 2): no attempt of another task of the same scope
 * arrives inside an announced pause, minus "tolerance_ms"; an attempt
 * already on its way when the answer went out is not counted. Evidence:
 * the pauses and the intruders, else the earliest later attempts.
 */
void hx_pause_scope_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
