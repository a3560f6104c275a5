/* shape.h -- the platform's 429 and 503 answers, rendered field by field. */
#ifndef FA_SHAPE_H
#define FA_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/*
 * The platform's rate-limit contract (docs/references.md) lists, besides the
 * platform's own 429 (quota.h), six more answers a client must survive.
 * A scripted response names one with "shape" and the provider renders it
 * exactly (docs/scenario-format.md, "The platform's answer shapes"). Every one
 * carries Retry-After in delta seconds and the same number in the body's
 * retryAfter (ai_pacing_limited: in resetAt); none spends quota.
 */
enum fa_shape {
	FA_SHAPE_NONE = 0,             /* a plain scripted answer */
	FA_SHAPE_RATE_LIMIT_CLUSTER,   /* "rate_limit_cluster": 429 rate_limit_exceeded, the
	                                  model cluster's path: providerStatusCode, no scope,
	                                  no limit, no X-RateLimit-Scope */
	FA_SHAPE_AI_CONGESTED,         /* "ai_congested": 429, X-AI-Admission: shed */
	FA_SHAPE_AI_PACING_LIMITED,    /* "ai_pacing_limited": 429 in the {"success": false,
	                                  "error": {...}} envelope: reason, overageDenied,
	                                  resetAt */
	FA_SHAPE_AI_PROVIDER_COOLDOWN, /* "ai_provider_cooldown": 429, Retry-After = what is
	                                  left of a cooldown that grows while it repeats */
	FA_SHAPE_AI_DEADLINE_EXCEEDED, /* "ai_deadline_exceeded": 429, X-AI-Deadline-Ms */
	FA_SHAPE_POOL_EXHAUSTED,       /* "pool_exhausted": 503, Retry-After drawn 3..7 */
	FA_SHAPE_DB_TRANSIENT,         /* "db_transient": 503, Retry-After drawn 3..7 */
	FA_SHAPE_COUNT
};

/* The names a scenario uses, in enum order from FA_SHAPE_RATE_LIMIT_CLUSTER
 * (index i is shape i + 1), NULL-terminated. */
extern const char *const fa_shape_names[];

/* The name of @shape ("rate_limit_cluster", ...); "none" for FA_SHAPE_NONE. */
const char *fa_shape_str(enum fa_shape shape);

/* The status @shape answers with: 429, or 503 for pool_exhausted and
 * db_transient; 0 for FA_SHAPE_NONE. */
int fa_shape_status(enum fa_shape shape);

/* Defaults and ranges of the response members that tune a shape. */
#define FA_SHAPE_RETRY_AFTER_MAX_S 86400 /* "retry_after_s": 1..this */
/* rate_limit_cluster's default pause, s (the platform's example says 12) */
#define FA_SHAPE_CLUSTER_RA_S   12
#define FA_SHAPE_CONGESTED_RA_S 5 /* ai_congested's default pause, s */
/* ai_pacing_limited's default pause until its window resets, s */
#define FA_SHAPE_PACING_RA_S   60
#define FA_SHAPE_DEADLINE_RA_S 5 /* ai_deadline_exceeded's default pause, s */
/* ai_provider_cooldown's first pause, s ("about a minute") */
#define FA_SHAPE_COOLDOWN_BASE_S 60
#define FA_SHAPE_COOLDOWN_MAX_S  3600 /* "cooldown_s": 1..this */
/* the longest cooldown is this times the first (60 s -> 240 s, "up to
 * four minutes") */
#define FA_SHAPE_COOLDOWN_GROWTH 4
#define FA_SHAPE_DEADLINE_MS     60000   /* ai_deadline_exceeded's platform deadline, ms */
#define FA_SHAPE_DEADLINE_MAX_MS 3600000 /* "deadline_ms": 1..this */
/* a 503's Retry-After is 3..7 s (the platform's rate-limit contract) */
#define FA_SHAPE_TRANSIENT_MIN_S 3
#define FA_SHAPE_TRANSIENT_MAX_S 7
#define FA_SHAPE_PACING_REASON   "daily_window_exceeded" /* ai_pacing_limited's reason */

/* A response's shape and its tuning ($.routes[i].responses[j]). */
struct fa_shape_spec {
	enum fa_shape shape; /* "shape", default FA_SHAPE_NONE */
	int retry_after_s;   /* "retry_after_s": the fixed pause of rate_limit_cluster,
	                        ai_congested, ai_pacing_limited, ai_deadline_exceeded,
	                        1..FA_SHAPE_RETRY_AFTER_MAX_S; 0 = the shape's default */
	int cooldown_s;      /* "cooldown_s": ai_provider_cooldown's first pause,
	                        1..FA_SHAPE_COOLDOWN_MAX_S; 0 = FA_SHAPE_COOLDOWN_BASE_S */
	int deadline_ms;     /* "deadline_ms": ai_deadline_exceeded's platform deadline,
	                        1..FA_SHAPE_DEADLINE_MAX_MS; 0 = FA_SHAPE_DEADLINE_MS */
};

/* The default pause of fixed-pause @shape, s; 0 for the others. */
int fa_shape_default_retry_after(enum fa_shape shape);

/*
 * The state shapes keep between requests: the cooldown of
 * ai_provider_cooldown and the random generator of the 503 pauses. Not
 * thread-safe: the provider calls it under its lock.
 */
struct fa_shape_state;

/* A new state whose draws follow @seed (same seed, same sequence). Free
 * with fa_shape_state_free(). */
struct fa_shape_state *fa_shape_state_new(uint64_t seed);

/* NULL accepted. */
void fa_shape_state_free(struct fa_shape_state *st);

/* Admin reset: the generator back to its seed, no cooldown, no streak. */
void fa_shape_state_reset(struct fa_shape_state *st);

/* The next 503 pause: an integer FA_SHAPE_TRANSIENT_MIN_S..MAX_S, s. */
int fa_shape_draw_transient(struct fa_shape_state *st);

/*
 * ai_provider_cooldown at @now_us (µs, any monotonic origin) with first
 * pause @base_s (> 0): while a cooldown runs, the seconds left of it,
 * rounded up; otherwise a new cooldown starts, of base_s for the first of
 * a streak and twice the previous one for each next (60, 120, 240, 240 s
 * with the default base: capped at FA_SHAPE_COOLDOWN_GROWTH * base_s),
 * and its whole length is returned. Returns >= 1.
 */
int fa_shape_cooldown(struct fa_shape_state *st, int base_s, int64_t now_us);

/* The cluster answered (a scripted 2xx): the cooldown streak is over, the
 * next cooldown is base_s again. A cooldown still running stays. */
void fa_shape_cluster_ok(struct fa_shape_state *st);

/*
 * ai_deadline_exceeded's budget, ms: @platform_ms, shortened by the
 * request's own X-AI-Deadline-Ms value @req_value (NULL = absent) when
 * that is a positive decimal integer (blanks around it allowed) smaller
 * than it. A larger, zero, negative or non-numeric value is ignored.
 */
int fa_shape_deadline_budget(int platform_ms, const char *req_value);

/* One response header of a shape. */
struct fa_shape_header {
	const char *name; /* static storage */
	char value[32];
};
#define FA_SHAPE_MAX_HEADERS 3

/* A rendered shape. */
struct fa_shape_answer {
	int status;                                           /* 429 or 503 */
	cJSON *body;                                          /* owned: cJSON_Delete */
	int retry_after_s;                                    /* the Retry-After sent, s, >= 1 */
	struct fa_shape_header headers[FA_SHAPE_MAX_HEADERS]; /* Retry-After first */
	size_t n_headers;
};

/*
 * Render @spec's shape (not FA_SHAPE_NONE) into @out for a request whose
 * answer goes out at @now_us (monotonic) and @wall_us (µs since the
 * epoch, for resetAt); @req_deadline is the request's X-AI-Deadline-Ms or
 * NULL. Draws a 503 pause or starts a cooldown in @st as the shape needs.
 * The bodies, member for member in this order:
 *   rate_limit_cluster: {"error": {"type": "rate_limit_exceeded", "code":
 *     "rate_limit_exceeded", "message", "providerStatusCode": 429, "retryAfter"}}
 *   ai_congested, ai_provider_cooldown: {"error": {"code", "message", "retryAfter"}}
 *   ai_pacing_limited: {"success": false, "error": {"code", "message", "reason",
 *     "overageDenied": true, "resetAt": "YYYY-MM-DDTHH:MM:SSZ"}} (resetAt = the
 *     instant Retry-After names, whole seconds rounded up)
 *   ai_deadline_exceeded: {"error": {"type": "rate_limit_exceeded", "code",
 *     "message", "retryAfter"}}
 *   pool_exhausted, db_transient: {"error": {"code", "type": "server_error",
 *     "retryAfter"}} (the platform's example exactly)
 * Headers: Retry-After, then X-AI-Admission: shed (ai_congested) or
 * X-AI-Deadline-Ms (ai_deadline_exceeded).
 */
void fa_shape_render(struct fa_shape_state *st, const struct fa_shape_spec *spec,
                     const char *req_deadline, int64_t now_us, int64_t wall_us,
                     struct fa_shape_answer *out);

/* Free what @out owns and zero it. */
void fa_shape_answer_release(struct fa_shape_answer *out);

#endif
