/* concurrency.h -- wait.concurrency: in-flight attempts per scope stay under the scenario's cap. */
#ifndef HX_CONCURRENCY_H
#define HX_CONCURRENCY_H

#include "judge.h"

/*
 * wait.concurrency (L2; the retry-safety guide: shared_scope
 * max_concurrent_requests).
 * An attempt is in flight from its t_arrival_us until its t_response_us
 * (the answer handed over; t_done_us when none was), so a client that
 * starts the next request the instant it reads an answer is never counted
 * twice. Fails when, at some attempt's arrival, more attempts of its
 * scope are in flight (itself included) than
 * $.harness.expect["wait.concurrency"].max_concurrent_requests (1..1000);
 * evidence: the attempts in flight at the worst instant. n/a without that
 * expectation or when no scope had two attempts that could overlap; passes
 * otherwise. Both modes (server-measured).
 */
void hx_concurrency_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
