/* task.h -- one logical request: its attempts, its waits, its one result. */
#ifndef REF_TASK_H
#define REF_TASK_H

#include "circuit.h"
#include "pace.h"
#include "rc.h"
#include "registry.h"
#include "slot.h"
#include "state.h"

struct cJSON;

/*
 * A task is the one layer that owns retries (the retry-safety guide): it decides, from
 * its class (policy.h), each response and the scope registry, whether and
 * when to try again, and reports every step on stdout (emit.h). It runs in
 * its own thread so that several tasks proceed at once. A write (method
 * POST, PUT or PATCH, or class idempotent_write or uncertain_write) is
 * also guarded against ambiguity (write.c): a stable idempotency key, the
 * operation saved before the first send, and a status read after an
 * outcome that leaves it unknown whether the write happened.
 */
struct ref_task;

/* What every task of the process shares. All borrowed: each must outlive
 * every task. */
struct ref_shared {
	struct ref_registry *reg;    /* pauses per scope (registry.h) */
	struct ref_state *st;        /* saved write operations (state.h) */
	struct ref_slots *slots;     /* in-flight slots and waiting tasks per scope (slot.h) */
	struct ref_circuit *circuit; /* identical failures per path (circuit.h) */
	struct ref_pace *pace;       /* request and token buckets per key (pace.h) */
	int stream_idle_s;           /* a stream's idle timeout, s, >= 1 (stream.h) */
};

/*
 * Read a `task` message (docs/client-protocol.md): id, method and url are
 * required strings; class, headers (object of strings), body (string),
 * key, key_env, scope, goal (strings), budget ({max_attempts >= 1,
 * max_wait_s >= 0}, either null), deadline_ms (> 0), stream (boolean),
 * tokens (integer >= 0) and pacing ({rpm, tpm: integers >= 1 or null,
 * period_s > 0}) may be null or absent. A stream task is never a write.
 * The budget can only tighten the class's numbers (the lower wins; a null
 * field leaves the class's); the deadline counts from this call. Unknown
 * fields are ignored. A write takes the operation @sh->st saved for the
 * same task id, if any and if it is the same write (method and body): the
 * task resumes it. When @sh->st holds a file for the task that cannot be
 * used (ref_state_take()), the write asks the provider by
 * client reference before it sends anything. A task whose url is not
 * http:// or https:// is accepted and, once started, fails at once with
 * no attempt (sent "no"). On FA_EINVAL @err says which field is wrong
 * ("$.budget.max_attempts: expected integer >= 1, got 0") and *@out is
 * NULL. Call from one thread only (ref_state_take()).
 */
enum fa_rc ref_task_new(const struct cJSON *msg, const struct ref_shared *sh, struct ref_task **out,
                        struct fa_err *err);

/* The task's id (owned by the task). */
const char *ref_task_id(const struct ref_task *t);

/*
 * Start the task's thread. It reports action_sent, action_result and
 * retry_scheduled as it goes, an `escalation` when it hands the task to a
 * person (escalate.h), and exactly one `result` at the end. On
 * FA_EIO (no thread) @err says why and the task has reported a `failed`
 * result with no attempt.
 */
enum fa_rc ref_task_start(struct ref_task *t, struct fa_err *err);

/*
 * Cancel: a task waiting (for a pause, a backoff, a slot or its key's
 * pace) wakes at once and its pending retry is dropped, an attempt in
 * flight is aborted (within about a second, libcurl's progress tick) and
 * its slot given back, no further attempt is made, and the result says `cancelled`,
 * once. A finished task ignores it. Thread-safe.
 */
void ref_task_cancel(struct ref_task *t);

/* Wait for the task's thread to end (if it was started) and free @t;
 * NULL is accepted. */
void ref_task_free(struct ref_task *t);

#endif
