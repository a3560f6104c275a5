/* slot.h -- the shared scope's budget: requests in flight and tasks waiting, per scope. */
#ifndef REF_SLOT_H
#define REF_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

/*
 * The retry-safety guide: a shared scope has a budget of its own (shared_scope in
 * policy.c): at most max_concurrent_requests of its requests in flight at
 * once, and at most max_delayed_requests of its tasks waiting to retry.
 * Each scope gets a counting semaphore (a mutex and a condition variable)
 * for the first and a counter for the second. A task takes a slot just
 * before an attempt goes on the wire and gives it back as soon as its
 * answer is read; while it waits (for a slot, a pause or a backoff) it
 * holds none. A cancel wakes a task waiting for a slot at once
 * (ref_slots_wake()). Shared by every task of the process; every call is
 * thread-safe.
 *
 * A scope opens with one slot: until the provider has answered a request
 * of it, and again after an answer that paused it, a single request (a
 * probe) goes first and the others wait for its answer. Two requests sent
 * at the same instant would otherwise both be on their way before either
 * answer could say "pause": the second would reach the provider inside
 * the pause the first one was told.
 */
struct ref_slots;

/* How ref_slots_take() ended. */
enum ref_slot_rc {
	REF_SLOT_TAKEN = 0, /* the caller holds a slot: give it back */
	REF_SLOT_CANCELLED, /* *cancel became true first: no slot held */
	REF_SLOT_TIMEOUT,   /* the limit came first: no slot held */
};

/* Slots for every scope under budget @b (borrowed, static). Aborts when
 * memory runs out. Free with ref_slots_free(). */
struct ref_slots *ref_slots_new(const struct ref_scope_budget *b);

/* Free @s and every scope's record; NULL is accepted. No slot may be held
 * and no task may wait any more. */
void ref_slots_free(struct ref_slots *s);

/*
 * Take one of @scope's in-flight slots, waiting while all are held, until
 * *@cancel is true (NULL: never) or the monotonic clock reaches
 * @limit_mono_us (0: no limit). @scope is copied.
 */
enum ref_slot_rc ref_slots_take(struct ref_slots *s, const char *scope, const atomic_bool *cancel,
                                int64_t limit_mono_us);

/* What the attempt that held a slot learnt of its scope. */
enum ref_slot_news {
	REF_SLOT_NO_NEWS = 0, /* nothing: no answer (transport error, cancel), or
	                         the slot was not used */
	REF_SLOT_ANSWERED,    /* an answer that paused nothing: every slot may be used */
	REF_SLOT_PAUSED,      /* an answer that paused the scope: one slot (a probe)
	                         until the next answer */
};

/* Give back a slot of @scope taken with ref_slots_take(), with what its
 * attempt learnt; wakes the waiters. */
void ref_slots_give(struct ref_slots *s, const char *scope, enum ref_slot_news news);

/* A task of @scope is about to wait out a pause or a backoff: true when
 * it may (it is counted until ref_slots_delay_leave()), false when
 * max_delayed_requests tasks of the scope are already waiting. */
bool ref_slots_delay_enter(struct ref_slots *s, const char *scope);

/* The wait that ref_slots_delay_enter() let start is over. */
void ref_slots_delay_leave(struct ref_slots *s, const char *scope);

/* Wake every task waiting for a slot so that a cancelled one notices at
 * once; call after setting its cancel flag. */
void ref_slots_wake(struct ref_slots *s);

#endif
