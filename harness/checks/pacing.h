/* pacing.h -- wait.pacing: the client keeps each key's pace under the scenario's RPM and TPM. */
#ifndef HX_PACING_H
#define HX_PACING_H

#include "judge.h"

/* The default tolerance_ms: refill credited at each attempt, ms
 * (docs/checks.md, "False failures"). */
#define HX_PACING_TOLERANCE_MS 50

/*
 * wait.pacing (L2; the LLM rate-limit guide: every LLM call reserves one request and its
 * estimated tokens, prompt plus max_tokens, from per-minute limits; a
 * token bucket per limit). Only when $.harness.pacing is given. Per key,
 * every attributed attempt of that key (all tasks, retries and refused
 * ones included: they reached the provider) is replayed in arrival order
 * through two token buckets, capacity rpm and tpm, full at the key's first
 * attempt, refilling continuously rpm (tpm) per period_s. An attempt takes
 * 1 request token and its journal `tokens` (-1 counts 0); when a bucket
 * lacks them, even credited with the parameter "tolerance_ms"
 * (HX_PACING_TOLERANCE_MS by default) of refill, it is a pace violation. Fails on the
 * first violation (by arrival; evidence: that attempt); the detail also
 * counts the quota 429s the client got (journal quota "limited ...").
 * n/a without $.harness.pacing or without an attempt that names a key,
 * and with a tpm but no rpm when no such attempt has a token cost (journal
 * tokens -1 or 0 for all: nothing to judge); passes otherwise (evidence:
 * the attempt that came closest). Both modes (server-measured).
 */
void hx_pacing_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
