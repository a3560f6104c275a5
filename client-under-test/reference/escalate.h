/* escalate.h -- the escalation record: a task handed to a person with what they need to decide. */
#ifndef REF_ESCALATE_H
#define REF_ESCALATE_H

#include "taskrun.h"

/*
 * The retry-safety guide: when the wait the provider asks for exceeds what the task may
 * still spend, when its attempts run out, or when nobody can tell whether
 * a write happened, the task stops and hands over a compact case an
 * operator can decide on: the goal and the exact step where it stopped;
 * the provider, endpoint, method, scope and a sanitised fingerprint of the
 * request; every attempt's time, status, Retry-After and rate-limit
 * fields; the budget spent; the write's key, the provider's operation id
 * and the client reference; and the safe next steps. The record follows
 * docs/escalation.schema.json. It never carries the key's secret, a
 * header's value or the request body (the fingerprint is a hash).
 */

/* Longest goal and action, in bytes (cut at a UTF-8 boundary, so never
 * more characters than the schema allows). */
#define REF_ESCALATE_TEXT_MAX 500

/*
 * Hand @t to a person: print its `escalation` line and set run->outcome
 * to "escalated" (run->sent is left as it is; the record's `sent` is
 * ref_run_sent()). @reason is a lower-case word: "wait_exceeds_budget",
 * "attempts_exhausted", "deadline", "scope_queue_full",
 * "over_token_limit" or "ambiguous_write"; @action one line saying where the task stopped.
 */
void ref_escalate(struct ref_task *t, struct ref_run *run, const char *reason, const char *action);

/*
 * ref_task_send() sent nothing for @w because of run->stop (one of
 * REF_STOP_ATTEMPTS, _WAIT, _DEADLINE, _QUEUE, _PACE): escalate with the reason
 * that names it and an action naming the attempt not sent.
 */
void ref_escalate_stop(struct ref_task *t, struct ref_run *run, const struct ref_wire *w);

#endif
