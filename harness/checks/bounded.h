/* bounded.h -- attempts.bounded: every attempt within a budget, no hang, no tight loop after a
 * Retry-After naming no future instant. */
#ifndef HX_BOUNDED_H
#define HX_BOUNDED_H

#include "judge.h"

/*
 * Judge attempts.bounded (docs/checks.md; the retry-safety guide: a
 * budget counts every attempt and the time waited, and a Retry-After
 * date already past gets a small minimum delay, not a tight loop). Fails
 * on an unattributed attempt, a task whose client hung past its timeout,
 * a task over its budget.max_attempts, and more than 2 attempts of a task
 * within 100 ms after a received Retry-After naming no future instant.
 * Runs without attributed attempts too (an unattributed one fails it).
 * Evidence: the attempts at fault, else the budgeted and windowed ones.
 */
void hx_bounded_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
