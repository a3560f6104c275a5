/* registry.h -- the local registry of pauses, one next_allowed_at per scope
 * (the retry-safety guide). */
#ifndef REF_REGISTRY_H
#define REF_REGISTRY_H

#include <stdint.h>

/*
 * The retry-safety guide: keep a local registry for each known scope (account, key),
 * read it before every call, and record a refusal in it *before*
 * scheduling any retry, so that no worker of the scope believes the next
 * slot is its own. Shared by all task threads; every call is thread-safe.
 */
struct ref_registry;

/* A scope's pause: the earliest instant the next attempt may start and the
 * jitter window that goes with it. */
struct ref_pause {
	int64_t until_us;  /* next_allowed_at, monotonic µs; 0 = never paused */
	int64_t window_us; /* jitter window of the pause that set until_us, µs */
};

/* An empty registry; free with ref_registry_free(). Aborts when memory
 * runs out. */
struct ref_registry *ref_registry_new(void);

/* Free @reg and every entry; NULL is accepted. No task may use it any more. */
void ref_registry_free(struct ref_registry *reg);

/*
 * Record a pause in @scope: next_allowed_at = max(current, @until_us); when
 * @until_us wins, its @window_us goes with it. A pause never shrinks.
 * @scope is copied.
 */
void ref_registry_raise(struct ref_registry *reg, const char *scope, int64_t until_us,
                        int64_t window_us);

/* The pause now recorded for @scope ({0, 0} for a scope never paused). */
struct ref_pause ref_registry_get(struct ref_registry *reg, const char *scope);

#endif
