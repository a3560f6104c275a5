/* quota.h -- the rate-limit model: two-level token buckets per replica
 * (the platform's rate-limit contract). */
#ifndef FA_QUOTA_H
#define FA_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

/*
 * The platform's rate-limit contract (docs/references.md): every request is metered
 * by two token buckets, one per API key and one per user (all the keys of
 * one account), checked in that order; the first empty one answers 429
 * rate_limit_exceeded with its scope ("per-key" or "per-user"); a 429 or a
 * 503 spends no quota; each backend replica applies ceil(limit / replicas)
 * on its own, to the key (never the client's address); an administrator
 * may raise one key's limit while the user's limit still applies; a
 * request with an invalid key (401) spends nothing.
 *
 * The model has no clock of its own: every call takes @now_us, any
 * monotonic µs count (the provider passes its own clock, tests pass fake
 * times). Not thread-safe: the caller serialises calls (the provider
 * holds its lock).
 */

/* the platform's rate-limit contract: per-key bucket, 600 requests per minute
 * before the division among replicas */
#define FA_QUOTA_DEFAULT_PER_KEY 600
/* the platform's rate-limit contract: per-user bucket, 1500 requests per minute
 * over all the keys of one user, before the division among replicas */
#define FA_QUOTA_DEFAULT_PER_USER 1500
/* the platform's rate-limit contract: both limits are "per minute"; a scenario
 * shortens it for tests */
#define FA_QUOTA_DEFAULT_PERIOD_S 60
#define FA_QUOTA_PERIOD_MAX_S     86400     /* a day: the longest period a scenario may set */
#define FA_QUOTA_LIMIT_MAX        1000000   /* largest limit (requests per period) */
#define FA_QUOTA_TOKENS_MAX       100000000 /* largest token limit (tokens per period or day) */
/* the LLM rate-limit guide: RPD and TPD are "per day"; a scenario shortens the day for tests */
#define FA_QUOTA_DEFAULT_DAY_S 86400
#define FA_QUOTA_DAY_MAX_S     86400 /* day_s: 1..this s */
#define FA_QUOTA_REPLICAS_MAX  64    /* most virtual replicas */
#define FA_QUOTA_IN_FLIGHT_MAX 10000 /* largest max_in_flight_per_key */
/*
 * Retry-After of a 429 for too many requests in flight, s. Not from the
 * platform's rate-limit contract (which names the concurrency advice, "lower the number of
 * simultaneous requests of this key", but no pause): no refill time tells
 * when a request in flight ends, so the shortest whole pause is named.
 */
#define FA_QUOTA_IN_FLIGHT_RETRY_S 1

/* Which virtual replica serves a request ($.provider.quota.spread). */
enum fa_quota_spread {
	FA_QUOTA_ROUND_ROBIN = 0, /* "round_robin": replicas 1, 2, ..., R, 1, ... (default) */
	FA_QUOTA_RANDOM,          /* "random": uniform, from the provider's seed */
};

/* Which rate-limit headers every quota-governed answer carries
 * ($.provider.quota.headers). */
enum fa_quota_headers {
	FA_QUOTA_HDR_X = 0,     /* "x": X-RateLimit-Limit, -Remaining, -Reset (default) */
	FA_QUOTA_HDR_IETF,      /* "ietf": the IETF httpapi RateLimit fields draft:
	                           RateLimit-Policy: "per-key";q=200;w=60 and
	                           RateLimit: "per-key";r=57;t=0 */
	FA_QUOTA_HDR_LEGACY,    /* "legacy": RateLimit-Limit, -Remaining, -Reset (the
	                           draft's earlier versions) */
	FA_QUOTA_HDR_NONE,      /* "none" */
	FA_QUOTA_HDR_OPENAI,    /* "openai": x-ratelimit-limit-requests, -limit-tokens,
	                           -remaining-requests, -remaining-tokens, -reset-requests,
	                           -reset-tokens (resets as durations: "1s", "6m0s") */
	FA_QUOTA_HDR_ANTHROPIC, /* "anthropic": anthropic-ratelimit-requests-limit,
	                           -remaining, -reset and the same for -tokens,
	                           -input-tokens, -output-tokens (resets as RFC 3339
	                           instants) */
};

/* Which kind of bucket a decision names. */
enum fa_quota_bucket {
	FA_QUOTA_REQUESTS = 0,   /* "requests": requests per period (RPM) */
	FA_QUOTA_TOKENS,         /* "tokens": tokens per period (the LLM rate-limit guide's TPM) */
	FA_QUOTA_DAILY_REQUESTS, /* "daily-requests": requests per day (RPD), per key */
	FA_QUOTA_DAILY_TOKENS,   /* "daily-tokens": tokens per day (TPD), per key */
};

/* One per-key override ($.provider.quota.key_limits.<key id>). */
struct fa_quota_key_limit {
	char *key; /* owned: a key id of $.provider.keys */
	int limit; /* requests per period before the division, 1..FA_QUOTA_LIMIT_MAX */
};

/* $.provider.quota. Set the defaults with fa_quota_spec_init(). */
struct fa_quota_spec {
	int per_key;                 /* requests per period per key, 1..FA_QUOTA_LIMIT_MAX,
	                                default FA_QUOTA_DEFAULT_PER_KEY */
	int per_user;                /* requests per period per user, 1..FA_QUOTA_LIMIT_MAX,
	                                default FA_QUOTA_DEFAULT_PER_USER */
	int period_s;                /* the period, 1..FA_QUOTA_PERIOD_MAX_S s,
	                                default FA_QUOTA_DEFAULT_PERIOD_S */
	int replicas;                /* virtual replicas, 1..FA_QUOTA_REPLICAS_MAX, default 1 */
	enum fa_quota_spread spread; /* default FA_QUOTA_ROUND_ROBIN */
	struct fa_quota_key_limit *key_limits; /* owned, n_key_limits; each raises (or sets)
	                                          one key's per_key, the user limit holds */
	size_t n_key_limits;
	int max_in_flight_per_key;     /* requests of one key in flight at once, over all
	                                  replicas, 1..FA_QUOTA_IN_FLIGHT_MAX; 0 = no cap */
	enum fa_quota_headers headers; /* default FA_QUOTA_HDR_X */
	int tpm_per_key;               /* the LLM rate-limit guide's TPM: tokens per
	                                  period per key, before the division,
	                                  1..FA_QUOTA_TOKENS_MAX; 0 = no token limit */
	int tpm_per_user;              /* tokens per period per user, 1..FA_QUOTA_TOKENS_MAX;
	                                  0 = none */
	int rpd_per_key;               /* the LLM rate-limit guide's RPD: requests per day per key,
	                                  1..FA_QUOTA_LIMIT_MAX; 0 = none */
	int tpd_per_key;               /* the LLM rate-limit guide's TPD: tokens per day per key,
	                                  1..FA_QUOTA_TOKENS_MAX; 0 = none */
	int day_s;                     /* the day of rpd/tpd, 1..FA_QUOTA_DAY_MAX_S s, default
	                                  FA_QUOTA_DEFAULT_DAY_S */
};

/* Defaults into @spec (nothing owned yet). */
void fa_quota_spec_init(struct fa_quota_spec *spec);

/* Release what @spec owns and zero it. NULL accepted. */
void fa_quota_spec_release(struct fa_quota_spec *spec);

/* The limit of key @key_id before the division: its override, else per_key. */
int fa_quota_spec_key_limit(const struct fa_quota_spec *spec, const char *key_id);

/* The platform's scope of a platform 429. */
enum fa_quota_scope {
	FA_QUOTA_PER_KEY = 0, /* "per-key" */
	FA_QUOTA_PER_USER,    /* "per-user" */
};

/* "per-key" or "per-user"; static storage. */
const char *fa_quota_scope_str(enum fa_quota_scope scope);

/* "requests", "tokens", "daily-requests" or "daily-tokens"; static storage. */
const char *fa_quota_bucket_str(enum fa_quota_bucket bucket);

/*
 * What fa_quota_admit() decided for one request, and what the answer's
 * headers say. Filled by the quota module; the caller only reads it and
 * hands it back to fa_quota_refund() and fa_quota_leave().
 *
 * The answer describes two buckets: a request bucket (limit, bucket_limit,
 * period_s, remaining, reset_*) and, when the spec meters tokens, a token
 * bucket (has_tokens, token_*). Each is the bucket of its kind that
 * refused, else the scope's per-period one (the key's when admitted; for
 * tokens the key's when tpm_per_key is set, else the user's).
 */
struct fa_quota_decision {
	bool admitted;               /* every bucket had room for the cost (all were debited) */
	bool in_flight;              /* refused because max_in_flight_per_key requests of the
	                                key were in flight (scope per-key, no bucket looked at) */
	bool over_capacity;          /* refused for good: the cost is more than the whole
	                                capacity of bucket @bucket (the provider answers 400
	                                tokens_over_limit, no Retry-After) */
	bool refunded;               /* fa_quota_refund() gave the tokens back */
	enum fa_quota_scope scope;   /* the bucket the answer uses: the key's when admitted,
	                                the one that refused otherwise */
	enum fa_quota_bucket bucket; /* the kind of bucket that refused; FA_QUOTA_REQUESTS
	                                when admitted or in_flight */
	int64_t cost;                /* tokens the request reserves (the LLM rate-limit
	                                guide: estimated prompt tokens + max_tokens), >= 0;
	                                it also takes one request */
	int replica;                 /* 0..replicas-1: the replica that served the request */
	int limit;          /* the platform's error.limit: the per-replica limit of the bucket
	                       that refused, ceil(limit / replicas); the cap when
	                       in_flight; the key's request limit when admitted */
	int limit_period_s; /* the period of that bucket, s (period_s or day_s); 0 = period_s */
	int bucket_limit;   /* request bucket: per-replica limit (the key's when in_flight) */
	int period_s;       /* request bucket: its period, s (the headers' window) */
	int remaining;      /* request bucket: whole requests left after this one */
	int reset_s;        /* request bucket: s until it has a request again, rounded
	                       up; 0 when it has one now */
	int64_t full_us;    /* request bucket: µs until it is full again */
	bool has_tokens;    /* a token bucket is described (the spec meters tokens) */
	enum fa_quota_scope token_scope; /* whose token bucket it is */
	int token_limit;                 /* token bucket: per-replica limit */
	int token_period_s;              /* token bucket: its period, s */
	int token_remaining;             /* token bucket: whole tokens left after this request */
	int token_reset_s;      /* token bucket: s until it has room for this request's cost
	                           again, rounded up; 0 when it has */
	int64_t token_full_us;  /* token bucket: µs until it is full again */
	int retry_after_s;      /* refused: the pause, s, >= 1 (the real time until the
	                           bucket has room for the cost, rounded up); 0 when admitted
	                           or over_capacity */
	int64_t retry_after_ms; /* refused: the same pause exactly, ms, >= 1, rounded up
	                           (retry_after_s is its ceil in s); 0 otherwise */
	int key_index;          /* private: the key's bucket row */
	int user_index;         /* private: the user's bucket row */
};

struct fa_key;
struct fa_quota;

/*
 * A model for @spec over the @n_keys keys @keys (their ids and users; both
 * borrowed and kept: they must outlive the model). Every bucket starts
 * full at its first use. @seed drives the random spread. Returns a new
 * model; free with fa_quota_free().
 */
struct fa_quota *fa_quota_new(const struct fa_quota_spec *spec, const struct fa_key *keys,
                              size_t n_keys, uint64_t seed);

/* NULL accepted. */
void fa_quota_free(struct fa_quota *q);

/*
 * Decide one request of key @key_id (of user @user_id) costing @cost
 * tokens (>= 0; 0 for a request that is not a chat completion) at
 * @now_us into @d: choose the replica (spread; one turn per call, refused
 * or not); a cost over the whole capacity of any of the buckets below is
 * refused for good (over_capacity, nothing looked at further); a key with
 * max_in_flight_per_key requests in flight is refused (per-key,
 * in_flight); then, on that replica, the key's buckets (requests, tokens,
 * daily requests, daily tokens), then the user's (requests, tokens), each
 * that the spec sets; the first without room (1 request, or @cost tokens)
 * refuses with its scope and kind and the Retry-After its refill takes;
 * none is debited unless all allow. Buckets refill continuously at their
 * capacity per period (day_s for the daily ones), up to the capacity. An
 * admitted request is in flight until fa_quota_leave(). FA_OK with @d
 * filled; FA_ENOTFOUND when the key or the user is not the model's
 * (nothing changes).
 */
enum fa_rc fa_quota_admit(struct fa_quota *q, const char *key_id, const char *user_id, int64_t cost,
                          int64_t now_us, struct fa_quota_decision *d);

/*
 * Undo the debit of admitted request @d at @now_us (the platform's rate-limit contract: a 429 or a
 * 503 spends no quota): what it took back into every bucket (one request,
 * d->cost tokens), never past their capacity; d->remaining and reset_s are brought up to date and
 * d->refunded set. Once per decision; a refused one is left alone. The
 * request stays in flight until fa_quota_leave().
 */
void fa_quota_refund(struct fa_quota *q, struct fa_quota_decision *d, int64_t now_us);

/* Admitted request @d is over: its key has one fewer in flight. Call once
 * per admitted decision; a refused one is left alone. */
void fa_quota_leave(struct fa_quota *q, const struct fa_quota_decision *d);

/* Requests of key @key_id in flight now (0 for an unknown key). */
int fa_quota_in_flight(const struct fa_quota *q, const char *key_id);

/* Admin reset: every bucket full again, the round robin back to replica 1;
 * the in-flight counts stay (those requests are still running). */
void fa_quota_reset(struct fa_quota *q);

/*
 * The journal's `quota` field for @d, e.g. "admitted replica 1",
 * "refunded replica 1", "limited per-key replica 2" (a request bucket),
 * "limited per-user replica 1", "limited tokens per-key replica 1",
 * "limited daily-requests per-key replica 1", "limited daily-tokens
 * per-key replica 1", "limited in-flight per-key replica 3", "limited
 * over-capacity tokens per-user replica 1" (replicas counted from 1). The
 * caller frees it.
 */
char *fa_quota_decision_str(const struct fa_quota_decision *d);

/*
 * The platform's 429 body for refused @d: {"error": {"type":
 * "rate_limit_exceeded", "code": "rate_limit_exceeded", "message": "Rate
 * limit exceeded (per-key). Limit: 200 per minute. Retry after 12
 * seconds.", "scope": "per-key", "limit": 200, "retryAfter": 12}}; the
 * message says "per minute" for a 60 s period, "per day" for 86400 s,
 * else "per N seconds", names tokens for a token bucket ("Limit: 1000
 * tokens per minute"), and says "Limit: N in flight" for an in-flight
 * refusal. Caller frees with cJSON_Delete.
 */
cJSON *fa_quota_error_body(const struct fa_quota_decision *d);

/*
 * The 400 for over_capacity @d (the LLM rate-limit guide: a request that reserves more
 * tokens than the bucket ever holds can never pass; no pause helps):
 * {"error": {"type": "invalid_request_error", "code": "tokens_over_limit",
 * "message": "This request reserves 5200 tokens (prompt and max_tokens),
 * more than the per-key limit of 4000 tokens per minute: it can never be
 * admitted. Shorten the prompt or lower max_tokens."}}. Caller frees with
 * cJSON_Delete.
 */
cJSON *fa_quota_over_capacity_body(const struct fa_quota_decision *d);

/* One response header. */
struct fa_quota_header {
	const char *name; /* static storage */
	char value[128];  /* the value */
};
#define FA_QUOTA_MAX_HEADERS 12

/*
 * The rate-limit headers in style @style for the buckets @d describes at
 * wall clock @wall_us (µs since the epoch; only "anthropic" reads it),
 * into @out (FA_QUOTA_MAX_HEADERS entries); returns how many. The limit
 * is the bucket's per-replica limit, the window its period, the remaining
 * what is left, the reset the seconds until it has room again (delta
 * seconds). With a token bucket (d->has_tokens): "x" adds
 * X-RateLimit-Limit-Tokens, -Remaining-Tokens, -Reset-Tokens; "ietf" a
 * second list member "per-key-tokens" (or "per-user-tokens") to both
 * fields; "legacy" stays with the request bucket (the draft's earlier
 * versions name one quota). "openai" gives OpenAI's six headers, whose
 * resets are the time until the bucket is full again as a duration
 * ("1s", "6m0s", "250ms"); without a token bucket only the three
 * -requests ones. "anthropic" gives Anthropic's requests-limit,
 * -remaining, -reset, whose reset is the instant the bucket is full
 * again (RFC 3339, rounded up to the second), and with a token bucket the
 * same three for tokens, input-tokens and output-tokens, all describing
 * that one bucket (the model meters a request's prompt and max_tokens
 * together). The platform's 429 adds Retry-After and X-RateLimit-Scope itself
 * (the provider writes those).
 */
size_t fa_quota_rate_headers(enum fa_quota_headers style, const struct fa_quota_decision *d,
                             int64_t wall_us, struct fa_quota_header out[FA_QUOTA_MAX_HEADERS]);

#endif
