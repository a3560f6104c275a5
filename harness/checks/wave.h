/* wave.h -- wait.jitter: do retries after a shared pause come back as one wave? */
#ifndef HX_WAVE_H
#define HX_WAVE_H

#include "judge.h"

/* Fewest tasks a pause must have held before the spread is judged. */
#define HX_WAVE_MIN_TASKS 8

/* W_min: the least jitter window a client may use, ms (docs/checks.md). */
#define HX_WAVE_W_MIN_MS 1000

/* A wave is a spread of all the returns below this share of W_min... */
#define HX_WAVE_SHARE 0.2

/* ...or, with at least HX_WAVE_OUTLIER_MIN returns, the spread of all but
 * one of them below this share (one outlier cannot hide a wave). */
#define HX_WAVE_SHARE_BUT_ONE 0.08
#define HX_WAVE_OUTLIER_MIN   8

/*
 * Judge wait.jitter on one scenario into @r (id, level and required are
 * the caller's). For each pause a route's answer announced in a scope (the
 * retry-safety guide, five-step test step 3), the tasks of that scope that were started
 * before the pause ended are "held"; the first attempt of each held task
 * at or after the end of the pause (minus the tolerance) is its return.
 * Each return is measured from the task's release: the latest of the end
 * of the pause and the later instants the provider told that task itself
 * before the return that the return respected (arrived at or after, minus
 * the tolerance); a delay is never negative (a return within the tolerance
 * before its release counts as 0). With at least min_tasks returns
 * (parameters "min_tasks", "w_min_ms" and "tolerance_ms"; defaults above
 * and HX_PAUSE_TOLERANCE_MS) the returns are a wave, and the check fails,
 * when all their delays lie within HX_WAVE_SHARE x W_min of each other, or
 * (with HX_WAVE_OUTLIER_MIN returns or more) all but one within
 * HX_WAVE_SHARE_BUT_ONE x W_min. n/a when no pause held enough tasks that
 * came back. Evidence: the pause and the returns.
 */
void hx_wave_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
