/* interruption.h -- stream.no_silent_retry: no retry after the first streamed token without a
 * report. */
#ifndef HX_INTERRUPTION_H
#define HX_INTERRUPTION_H

#include "judge.h"

/*
 * How much later than the retry's arrival the harness may have stamped a
 * stream_interrupted line the client wrote before sending that retry, µs:
 * one tick of the scenario loop (docs/checks.md explains it).
 */
#define HX_INTERRUPTION_READ_LAG_US 10000

/*
 * stream.no_silent_retry (L4; the LLM rate-limit guide: once the first token of a
 * streamed answer has reached the user, a silent retry is no longer
 * allowed; the failure is shown). An attempt whose journal entry has a
 * stream_end other than "done" and stream_chunks >= 1 is an interruption
 * after the first token. Every later attempt (arrival order) of the same
 * task needs a stream_interrupted line of that task (a valid one: the
 * client log refuses a malformed line, client_log.h) that the harness read
 * after the interruption's arrival and no later than the retry's arrival
 * plus HX_INTERRUPTION_READ_LAG_US; in exec mode (no lines) every such
 * retry fails. Fails on the first retry without one (evidence: the
 * interruption and the retries at fault); n/a when no attributed attempt
 * was such an interruption; passes otherwise (evidence: the interruptions
 * and their reported retries).
 */
void hx_interruption_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
