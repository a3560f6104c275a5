/* outcome.h -- outcome.expected: each task ends as the scenario says a correct client ends it. */
#ifndef HX_OUTCOME_H
#define HX_OUTCOME_H

#include "judge.h"

/*
 * outcome.expected (L1; the retry-safety guide: a budget ends in an
 * explicit outcome; a retryable answer is retried within the budget).
 * Judges each task whose spec has an `outcome` (fa_task_spec.outcome) and
 * was started. A task's end: stdio mode, the outcome of its `result`
 * line; exec mode, exit 0 = succeeded, any other exit status of its own =
 * failed (an exec client has no way to say escalated, so a task expected
 * to escalate accepts failed there), an end after the harness cancelled
 * it = cancelled. A task that timed out, was killed by a signal of its
 * own, could not start or printed no result has no outcome and fails.
 * A task the scenario's own kill event stopped for good is not judged.
 * Fails on the first task whose end is not one the scenario lists
 * (detail: how it ended, its attempts, what a correct client achieves,
 * its budget and last answer; evidence: its attempts); passes when every
 * judged task matched; n/a when no task has an `outcome` or none of them
 * was judged. Judged without an attributed attempt too: a client that
 * never sends fails.
 */
void hx_outcome_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
