/* tally.h -- attempts.hidden: the client's count of its attempts against the provider's. */
#ifndef HX_TALLY_H
#define HX_TALLY_H

#include "judge.h"

/* The largest count a result's "attempts" may carry. */
#define HX_TALLY_MAX_ATTEMPTS 1000000

/*
 * Judge attempts.hidden on one scenario into @r (id, level and required
 * are the caller's). The retry-safety guide: a budget must count every
 * attempt really sent, retries an HTTP library made underneath included;
 * only the provider sees them all. For each task the client reported on, its count
 * is, per client process (hx_client_msg.session: a restart event starts
 * a new one), the "attempts" of that process's result line, or without
 * one the number of its action_sent lines, summed over the processes;
 * the provider's count is the journal entries attributed to the task.
 * Any difference fails (more on the wire: hidden retries; fewer: reports
 * of attempts that never arrived), and so does a result whose "attempts"
 * is missing or no integer 0..HX_TALLY_MAX_ATTEMPTS ("task t1: the client
 * reported attempts 1.5, not a count"): the result still ended the task,
 * but its count cannot be compared. n/a in exec mode (the client reports
 * nothing) and when no task was reported on. A result whose "attempts"
 * is null says the client cannot observe its attempts (a library without
 * a retry hook): the task fails when the provider saw more than one
 * attempt of it (the library hid its retries) and is not judged with one
 * or none. Evidence: the journal entries of the tasks that differ (or of
 * all judged).
 */
void hx_tally_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
