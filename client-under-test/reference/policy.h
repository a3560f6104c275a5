/* policy.h -- request classes, what is retryable, and how long to wait, as data
 * (the retry-safety guide). */
#ifndef REF_POLICY_H
#define REF_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Why the client waits before an attempt: the `reason` of retry_scheduled. */
enum ref_reason {
	REF_REASON_NONE = 0,    /* no wait: send now */
	REF_REASON_RETRY_AFTER, /* the task's own response named an instant */
	REF_REASON_SCOPE_PAUSE, /* another task's response paused the whole scope */
	REF_REASON_BACKOFF,     /* no usable Retry-After: exponential backoff */
};

/* Most retryable statuses a class lists. */
#define REF_MAX_STATUSES 8

/*
 * One request class (the retry-safety guide: retry rules are data the caller cannot
 * easily override). A task names its class; its `budget` fields, when
 * given, can only tighten max_attempts and max_wait_s (the lower wins).
 */
struct ref_class {
	const char *name;                   /* "read", "idempotent_write", ... */
	int max_attempts;                   /* first attempt included, >= 1 */
	int max_wait_s;                     /* total waiting between attempts, s */
	int base_ms;                        /* backoff: first retry's ceiling, ms */
	int cap_ms;                         /* backoff: largest ceiling, ms */
	int retry_status[REF_MAX_STATUSES]; /* retryable HTTP statuses, 0-terminated */
	bool retry_transport;               /* retry a transport error (no status) */
};

/*
 * The budget of one shared scope (the retry-safety guide's shared_scope): what all the
 * tasks of one scope (the task's `scope`, else its key) may put on the
 * provider together, whatever each task's own budget says.
 */
struct ref_scope_budget {
	int max_delayed_requests;    /* tasks of the scope waiting out a pause or a
	                                backoff at once; one more escalates, >= 1 */
	int max_concurrent_requests; /* attempts of the scope in flight at once, >= 1 */
};

/* Identical failures (same method, endpoint template, status 400..499 but
 * 408 and 429, and error.code) after which this client process refuses
 * that method and endpoint (the retry-safety guide: a circuit breaker for repeated
 * identical failures). */
#define REF_CIRCUIT_MAX_IDENTICAL 3

/* Shortest backoff delay, µs: an unusable Retry-After never becomes a
 * tight loop (the retry-safety guide: a past date gets a small minimum delay). */
#define REF_BACKOFF_FLOOR_US 100000LL

/* Bounds of the jitter window after a Retry-After, µs. The lower bound is
 * W_min of the wait.jitter check (docs/checks.md). */
#define REF_WINDOW_MIN_US 1000000LL
#define REF_WINDOW_MAX_US 30000000LL

/*
 * The class called @name. For NULL or a name not in the table: "read"
 * when @method is safe (GET, HEAD, OPTIONS), else "default", which has
 * read's budget numbers but retries only the statuses that say the
 * request was not processed (it may be a write). Static storage, never
 * NULL.
 */
const struct ref_class *ref_policy_class(const char *name, const char *method);

/* The budget of every shared scope (static storage). */
const struct ref_scope_budget *ref_policy_scope(void);

/*
 * Is an HTTP @status (100..599) worth another attempt in class @c?
 * 2xx never is (done); 400, 401, 403, 404, 409, 422 and every other 4xx
 * outside the class's list are not (the retry-safety guide: fix the request, do not
 * repeat it).
 */
bool ref_policy_retryable(const struct ref_class *c, long status);

/*
 * Full-jitter exponential backoff before retry number @retry (1 = the
 * first retry): uniform(0, min(cap, base * 2^(retry-1), @max_us)), never
 * below REF_BACKOFF_FLOOR_US (so the result exceeds @max_us only when
 * @max_us is below the floor: the wait cannot fit). µs.
 */
int64_t ref_policy_backoff_us(const struct ref_class *c, int retry, int64_t max_us);

/* Jitter window J for a pause of @pause_us: half the pause, clamped to
 * REF_WINDOW_MIN_US..REF_WINDOW_MAX_US. µs. */
int64_t ref_policy_window_us(int64_t pause_us);

/* The random part added to a pause's end: uniform(0, @window_us), µs
 * (full jitter, so the tasks a shared pause held do not return in one
 * wave). */
int64_t ref_policy_jitter_us(int64_t window_us);

/*
 * Where a Retry-After value received at (@seen_wall_us, @seen_mono_us)
 * points: on true, *@until_mono_us is the named instant on the monotonic
 * clock and *@window_us its jitter window. False for NULL, an invalid
 * value, 0 or a date not after the moment it was seen: the caller treats
 * the header as absent and backs off (the retry-safety guide: never a tight loop). Both
 * forms of RFC 9110 §10.2.3 are read by fakeapi's own parser.
 */
bool ref_policy_retry_after(const char *value, int64_t seen_wall_us, int64_t seen_mono_us,
                            int64_t *until_mono_us, int64_t *window_us);

/* Seed the shared random generator (splitmix64, thread-safe). Call once
 * from main() before any task starts. */
void ref_policy_seed(uint64_t seed);

/* Name of @r as retry_scheduled spells it ("retry_after", ...; "none"). */
const char *ref_reason_str(enum ref_reason r);

#endif
