/* write.h -- logical writes: which tasks write, their client references, the write checks. */
#ifndef HX_WRITE_H
#define HX_WRITE_H

#include <cJSON.h>

#include "judge.h"
#include "scenario.h"

/* Hex digits of randomness at the end of a client reference. */
#define HX_WRITE_REF_HEX 8

/*
 * The route task @t writes through: the first route of @sc with the
 * task's method whose template matches the task's path (its query left
 * out), which is the route the provider answers it with, when the method
 * is POST, PUT or PATCH and that route has an "effect". NULL otherwise:
 * the task is no logical write. Borrowed from @sc.
 */
const struct fa_route_spec *hx_write_route(const struct fa_scenario *sc,
                                           const struct fa_task_spec *t);

/*
 * A fresh client reference for task @task_id of scenario @scenario_id:
 * "<scenario id>.<task id>.<HX_WRITE_REF_HEX hex digits>", the digits from
 * getrandom() (from the clock and a counter should the kernel refuse), so
 * that the harness can attribute a write's attempts without trusting the
 * client. Returns a new string the caller frees. Thread-safe.
 */
char *hx_write_reference_new(const char *scenario_id, const char *task_id);

/*
 * @body (borrowed; NULL = the task has none) with its top-level member
 * @field set to the string @ref: a copy with the member replaced or
 * added, or {"@field": @ref} when @body is NULL. NULL when @body is not a
 * JSON object: the reference cannot go in. The caller deletes the result.
 */
cJSON *hx_write_body(const cJSON *body, const char *field, const char *ref);

/*
 * The write checks of docs/checks.md (level 3), each judging one scenario
 * into @r (id, level and required are the caller's). A *logical write* is
 * a task hx_write_route() calls a write; its attempts are the journal
 * entries carrying its client reference (->client_reference of its task
 * run), else naming its task, and the reads of GET /v1/operations/KEY for
 * a key its creates carried. A *create* is an attempt on an effect route
 * (replays and the idempotency layer's refusals included); every other
 * attempt of the write is a read. A create's outcome is *ambiguous* when
 * it committed and the client cannot have had its answer: not delivered
 * whole (a drop after the commit, a reset, a partial body, a client gone),
 * or another attempt of the write arrived before the answer went out (the
 * client gave up waiting: a read timeout).
 */

/* write.key_stable: with an idempotency profile, every create of a write
 * carries the same non-empty Idempotency-Key (across a restart too); n/a
 * without a profile or without a create. Evidence: the creates. */
void hx_write_key_stable(const struct hx_check_ctx *c, struct hx_check_result *r);

/* write.body_stable: every create of a write whose body the provider read
 * whole carries the body of its first create (the journal's body_sha256);
 * n/a without a create, or when no write made a second one. Evidence: the
 * creates of the writes judged (of those that changed, on a failure). */
void hx_write_body_stable(const struct hx_check_ctx *c, struct hx_check_result *r);

/* write.no_duplicate: each write committed at most one create (replays
 * commit nothing); the records the store holds for its client reference
 * are named. n/a without a create. Evidence: the committed creates. */
void hx_write_no_duplicate(const struct hx_check_ctx *c, struct hx_check_result *r);

/* write.reconcile_first: after an ambiguous create, the write's next
 * attempt is a read or a create carrying the same key; no next attempt
 * passes too. n/a in exec mode and without an ambiguous create. Evidence:
 * each ambiguous create and the attempt after it. */
void hx_write_reconcile_first(const struct hx_check_ctx *c, struct hx_check_result *r);

/* ambiguity.preserved: a write with an ambiguous create is reported
 * escalated, or with sent "unknown" (not succeeded), or succeeded with a
 * provider_id the store holds for its client reference; anything else
 * fails. n/a in exec mode, without an ambiguous create, or without the
 * client's result for it. Evidence: the write's committed creates. */
void hx_write_ambiguity(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
