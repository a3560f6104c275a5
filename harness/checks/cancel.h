/* cancel.h -- cancel.quiet: cancelled work never wakes up later. */
#ifndef HX_CANCEL_H
#define HX_CANCEL_H

#include <stddef.h>
#include <stdint.h>

#include "judge.h"

/* Watched time past the wait that was pending when the task was
 * cancelled, ms; the parameter "margin_ms" overrides. */
#define HX_CANCEL_MARGIN_MS 1000
/* An attempt arriving this soon after the cancel was already on its way,
 * ms; the parameter "tolerance_ms" overrides. */
#define HX_CANCEL_TOLERANCE_MS 50

/*
 * End of the quiet window of task @task cancelled at @t_cancel_us (server
 * clock µs): the latest of the cancel itself, the pause_until_us of the
 * task's received answers that arrived before the cancel, and the cancel
 * plus the due_in_ms of the client's last `retry_scheduled` line for the
 * task before it (@msgs, stdio mode; NULL/0 in exec mode); plus @margin_ms.
 * The scenario run keeps going at least until this instant, so that a
 * retry the client failed to drop would still be seen. @attempts is the
 * journal (any order).
 */
int64_t hx_cancel_quiet_until(const struct fa_attempt *attempts, size_t n_attempts,
                              const struct hx_client_msg *msgs, size_t n_msgs, const char *task,
                              int64_t t_cancel_us, int margin_ms);

/*
 * cancel.quiet (L4; the retry-safety guide: a queue needs cancel; delete
 * pending retries before they wake; five-step test, step 5). For each task with
 * t_cancel_us >= 0: fails on an attempt of it arriving later than the
 * cancel + tolerance (the window [cancel, t_quiet_until_us] is what was
 * watched; anything later fails too), and in stdio mode when its result
 * is missing or its outcome is not "cancelled". n/a when no task was
 * cancelled, and in exec mode (the harness's own SIGTERM keeps it quiet,
 * which proves nothing about the client).
 */
void hx_cancel_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
