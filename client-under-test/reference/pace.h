/* pace.h -- the client's own pace: request and token buckets per key
 * (the LLM rate-limit guide's RPM and TPM). */
#ifndef REF_PACE_H
#define REF_PACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The LLM rate-limit guide: an LLM provider limits requests per minute and tokens per
 * minute, and whichever a workload reaches first is the one that bites; a
 * client keeps under both by taking a request slot and the request's
 * tokens from two token buckets before it calls the API. The task line's
 * `pacing` (docs/client-protocol.md) publishes the limits of the task's
 * key: {rpm, tpm, period_s}. Every key id gets a request bucket of
 * capacity rpm and a token bucket of capacity tpm, full at the start,
 * refilling continuously over period_s, shared by every task of the
 * process. Each attempt, retries and status reads included, takes 1 from
 * the first and its cost (the task line's `tokens`; 0 for a status read)
 * from the second, at the moment it is sent.
 *
 * Safety margin: the client's buckets refill 2% slower than published
 * (each unit takes 1.02 x period / limit to come back), so an attempt
 * whose trip to the provider is shorter than the one before it, by up to
 * 2% of a unit's refill time, still finds room in the provider's buckets,
 * which count arrival times.
 *
 * Shared by every task; every call is thread-safe. No clock of its own
 * beyond the monotonic clock; waiting sleeps on a condition variable,
 * never spins.
 */
struct ref_pace;

/* The limits published for one key; at least one of rpm and tpm is set. */
struct ref_pace_spec {
	bool given;      /* the task line had a pacing object: pace this task */
	int64_t rpm;     /* requests per period, >= 1; 0 = no request limit */
	int64_t tpm;     /* tokens per period, >= 1; 0 = no token limit */
	double period_s; /* the period, s, > 0 */
};

/* How much slower than published the buckets refill (see above). */
#define REF_PACE_MARGIN 0.02

/* How ref_pace_wait() ended. */
enum ref_pace_rc {
	REF_PACE_READY = 0, /* both buckets had room when it returned */
	REF_PACE_CANCELLED, /* *cancel became true first */
	REF_PACE_TIMEOUT,   /* room would come only after @limit_mono_us: it did not
	                       wait (or stopped waiting) */
	REF_PACE_TOO_BIG,   /* the cost exceeds the token bucket's capacity: it can
	                       never be sent */
};

/* Buckets for no key yet. Aborts when memory runs out. */
struct ref_pace *ref_pace_new(void);

/* Free @p; NULL is accepted. No task may wait any more. */
void ref_pace_free(struct ref_pace *p);

/*
 * Wait until @key's buckets (created full under @spec when new; when
 * @spec differs from what they were made with, they take the new limits,
 * keeping their level up to the new capacity) hold 1 request and @tokens
 * tokens, without taking them; until *@cancel is true (checked before
 * every sleep and woken by ref_pace_wake()), or until the monotonic clock
 * would pass @limit_mono_us (0: no limit), in which case it returns
 * REF_PACE_TIMEOUT without waiting for room that cannot come in time.
 * *@waited_us (may be NULL) gets the time spent. @key is copied.
 */
enum ref_pace_rc ref_pace_wait(struct ref_pace *p, const char *key,
                               const struct ref_pace_spec *spec, int64_t tokens,
                               const atomic_bool *cancel, int64_t limit_mono_us,
                               int64_t *waited_us);

/*
 * Take 1 request and @tokens tokens from @key's buckets if both hold
 * them now: true when taken (send at once), false when not (nothing
 * taken: wait again).
 */
bool ref_pace_take(struct ref_pace *p, const char *key, const struct ref_pace_spec *spec,
                   int64_t tokens);

/* Wake every waiter so that a cancelled task notices at once; call after
 * setting its cancel flag. */
void ref_pace_wake(struct ref_pace *p);

#endif
