/* quota_answer.h -- the quota model's word on one answer: admission, the refusals, settling. */
#ifndef FA_QUOTA_ANSWER_H
#define FA_QUOTA_ANSWER_H

#include <stdbool.h>
#include <stdint.h>

#include "exchange.h"
#include "quota.h"
#include "scenario.h"

/*
 * Ask quota model @q (of scenario @sc) about the attempt in @resp (valid
 * key, whole body) at @now (µs, the provider's clock), which reserves
 * @cost tokens (the LLM rate-limit guide; 0 when it is not a chat completion). True when
 * it is admitted (resp->quota_admitted set; fa_provider_finish() ends it);
 * false when it was refused and @resp holds the answer: the platform's
 * platform 429 (Retry-After, retry-after-ms with $.provider.retry_after_ms,
 * X-RateLimit-Scope and the rate-limit headers; the attempt's pause ends
 * @now plus that pause), or the 400 tokens_over_limit for a cost no
 * bucket can ever hold. Caller holds the provider's lock.
 */
bool fa_quota_answer_admit(struct fa_quota *q, const struct fa_scenario *sc, struct fa_resp *resp,
                           int64_t cost, int64_t now);

/*
 * An admitted attempt's answer in @resp is decided: a 429 or a 503 (or,
 * with @refund, a stream ending in a shape's error frame) gets its quota
 * back from @q at @now (µs; the platform's rate-limit contract: neither spends quota), and the
 * answer carries the rate-limit headers in @sc's style, each unless it
 * already has a header of that name. Caller holds the provider's lock.
 */
void fa_quota_answer_settle(struct fa_quota *q, const struct fa_scenario *sc, struct fa_resp *resp,
                            bool refund, int64_t now);

#endif
