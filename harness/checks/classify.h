/* classify.h -- classify.no_retry_4xx: a request the provider called wrong is not resent. */
#ifndef HX_CLASSIFY_H
#define HX_CLASSIFY_H

#include "judge.h"

/*
 * Judge classify.no_retry_4xx (the retry-safety guide: 400, 401, 403, 404
 * and 422 need a fix, not a retry): after a task received one of them, it
 * does not send the same method and path again. n/a when no task received
 * one. Evidence: the 4xx answers, and the retries when it fails.
 * (classify.circuit, the repeated identical failure, is circuit.h's.)
 */
void hx_classify_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
