/* quota.h -- the rate-limit model: two-level token buckets per replica (seed 002). */
#ifndef FA_QUOTA_H
#define FA_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

/*
 * Seed 002 (a real platform's rate-limit page): every request is metered
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

/* seed 002: per-key bucket, 600 requests per minute before the division
 * among replicas */
#define FA_QUOTA_DEFAULT_PER_KEY 600
/* seed 002: per-user bucket, 1500 requests per minute over all the keys of
 * one user, before the division among replicas */
#define FA_QUOTA_DEFAULT_PER_USER 1500
/* seed 002: both limits are "per minute"; a scenario shortens it for tests */
#define FA_QUOTA_DEFAULT_PERIOD_S 60
#define FA_QUOTA_PERIOD_MAX_S 86400  /* a day: the longest period a scenario may set */
#define FA_QUOTA_LIMIT_MAX 1000000   /* largest limit (requests per period) */
#define FA_QUOTA_REPLICAS_MAX 64     /* most virtual replicas */
#define FA_QUOTA_IN_FLIGHT_MAX 10000 /* largest max_in_flight_per_key */
/*
 * Retry-After of a 429 for too many requests in flight, s. Not from the
 * seed (which names the concurrency advice, "lower the number of
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
	FA_QUOTA_HDR_X = 0,   /* "x": X-RateLimit-Limit, -Remaining, -Reset (default) */
	FA_QUOTA_HDR_IETF,    /* "ietf": the IETF httpapi RateLimit fields draft:
	                         RateLimit-Policy: "per-key";q=200;w=60 and
	                         RateLimit: "per-key";r=57;t=0 */
	FA_QUOTA_HDR_LEGACY,  /* "legacy": RateLimit-Limit, -Remaining, -Reset (the
	                         draft's earlier versions) */
	FA_QUOTA_HDR_NONE,    /* "none" */
};

/* One per-key override ($.provider.quota.key_limits.<key id>). */
struct fa_quota_key_limit {
	char *key; /* owned: a key id of $.provider.keys */
	int limit; /* requests per period before the division, 1..FA_QUOTA_LIMIT_MAX */
};

/* $.provider.quota. Set the defaults with fa_quota_spec_init(). */
struct fa_quota_spec {
	int per_key;                /* requests per period per key, 1..FA_QUOTA_LIMIT_MAX,
	                               default FA_QUOTA_DEFAULT_PER_KEY */
	int per_user;               /* requests per period per user, 1..FA_QUOTA_LIMIT_MAX,
	                               default FA_QUOTA_DEFAULT_PER_USER */
	int period_s;               /* the period, 1..FA_QUOTA_PERIOD_MAX_S s,
	                               default FA_QUOTA_DEFAULT_PERIOD_S */
	int replicas;               /* virtual replicas, 1..FA_QUOTA_REPLICAS_MAX, default 1 */
	enum fa_quota_spread spread;  /* default FA_QUOTA_ROUND_ROBIN */
	struct fa_quota_key_limit *key_limits; /* owned, n_key_limits; each raises (or sets)
	                                          one key's per_key, the user limit holds */
	size_t n_key_limits;
	int max_in_flight_per_key;  /* requests of one key in flight at once, over all
	                               replicas, 1..FA_QUOTA_IN_FLIGHT_MAX; 0 = no cap */
	enum fa_quota_headers headers; /* default FA_QUOTA_HDR_X */
};

/* Defaults into @spec (nothing owned yet). */
void fa_quota_spec_init(struct fa_quota_spec *spec);

/* Release what @spec owns and zero it. NULL accepted. */
void fa_quota_spec_release(struct fa_quota_spec *spec);

/* The limit of key @key_id before the division: its override, else per_key. */
int fa_quota_spec_key_limit(const struct fa_quota_spec *spec, const char *key_id);

/* Seed 002's scope of a platform 429. */
enum fa_quota_scope {
	FA_QUOTA_PER_KEY = 0, /* "per-key" */
	FA_QUOTA_PER_USER,    /* "per-user" */
};

/* "per-key" or "per-user"; static storage. */
const char *fa_quota_scope_str(enum fa_quota_scope scope);

/*
 * What fa_quota_admit() decided for one request, and what the answer's
 * headers say. Filled by the quota module; the caller only reads it and
 * hands it back to fa_quota_refund() and fa_quota_leave().
 */
struct fa_quota_decision {
	bool admitted;       /* both buckets had a token (both were debited) */
	bool in_flight;      /* refused because max_in_flight_per_key requests of the
	                        key were in flight (scope per-key, no bucket looked at) */
	bool refunded;       /* fa_quota_refund() gave the tokens back */
	enum fa_quota_scope scope; /* the bucket the answer uses: the key's when admitted,
	                              the one that refused otherwise */
	int replica;         /* 0..replicas-1: the replica that served the request */
	int limit;           /* seed 002's error.limit: the per-replica limit of that
	                        bucket, ceil(limit / replicas); the cap when in_flight */
	int bucket_limit;    /* the headers' quota: the per-replica limit of that bucket
	                        (the key's when in_flight) */
	int period_s;        /* the spec's period, s (the headers' window) */
	int remaining;       /* whole tokens left in that bucket after the request (the
	                        key's bucket, untouched, when in_flight) */
	int reset_s;         /* s until that bucket has a token again, rounded up; 0 when
	                        it has one now */
	int retry_after_s;   /* refused: the pause, s, >= 1 (the real time until the
	                        bucket has a token, rounded up); 0 when admitted */
	int key_index;       /* private: the key's bucket row */
	int user_index;      /* private: the user's bucket row */
};

struct fa_key;
struct fa_quota;

/*
 * A model for @spec over the @n_keys keys @keys (their ids and users; both
 * borrowed and kept: they must outlive the model). Every bucket starts
 * full at its first use. @seed drives the random spread. Returns a new
 * model; free with fa_quota_free().
 */
struct fa_quota *fa_quota_new(const struct fa_quota_spec *spec,
			      const struct fa_key *keys, size_t n_keys,
			      uint64_t seed);

/* NULL accepted. */
void fa_quota_free(struct fa_quota *q);

/*
 * Decide one request of key @key_id (of user @user_id) at @now_us into
 * @d: choose the replica (spread; one turn per call, refused or not); a
 * key with max_in_flight_per_key requests in flight is refused (per-key,
 * in_flight); then the key's bucket of that replica is checked, then the
 * user's; the first without a whole token refuses with its scope and the
 * Retry-After its refill takes; neither is debited unless both allow.
 * Buckets refill continuously at their capacity per period, up to the
 * capacity. An admitted request is in flight until fa_quota_leave().
 * FA_OK with @d filled; FA_ENOTFOUND when the key or the user is not the
 * model's (nothing changes).
 */
enum fa_rc fa_quota_admit(struct fa_quota *q, const char *key_id,
			  const char *user_id, int64_t now_us,
			  struct fa_quota_decision *d);

/*
 * Undo the debit of admitted request @d at @now_us (seed 002: a 429 or a
 * 503 spends no quota): one token back into both buckets, never past
 * their capacity; d->remaining and reset_s are brought up to date and
 * d->refunded set. Once per decision; a refused one is left alone. The
 * request stays in flight until fa_quota_leave().
 */
void fa_quota_refund(struct fa_quota *q, struct fa_quota_decision *d,
		     int64_t now_us);

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
 * "refunded replica 1", "limited per-key replica 2", "limited per-user
 * replica 1", "limited in-flight per-key replica 3" (replicas counted
 * from 1). The caller frees it.
 */
char *fa_quota_decision_str(const struct fa_quota_decision *d);

/*
 * Seed 002's platform 429 body for refused @d: {"error": {"type":
 * "rate_limit_exceeded", "code": "rate_limit_exceeded", "message": "Rate
 * limit exceeded (per-key). Limit: 200 per minute. Retry after 12
 * seconds.", "scope": "per-key", "limit": 200, "retryAfter": 12}}; the
 * message says "per minute" for a 60 s period, else "per N seconds", and
 * "Limit: N in flight" for an in-flight refusal. Caller frees with
 * cJSON_Delete.
 */
cJSON *fa_quota_error_body(const struct fa_quota_decision *d);

/* One response header. */
struct fa_quota_header {
	const char *name; /* static storage */
	char value[96];   /* the value */
};
#define FA_QUOTA_MAX_HEADERS 3

/*
 * The rate-limit headers in style @style for the bucket @d used, into @out
 * (FA_QUOTA_MAX_HEADERS entries); returns how many. The limit is the
 * bucket's per-replica limit (d->bucket_limit), the window the period, the remaining the
 * whole tokens left, the reset the seconds until it has a token again
 * (delta seconds in every style). Seed 002's 429 adds Retry-After and
 * X-RateLimit-Scope itself (the provider writes those).
 */
size_t fa_quota_rate_headers(enum fa_quota_headers style,
			     const struct fa_quota_decision *d,
			     struct fa_quota_header out[FA_QUOTA_MAX_HEADERS]);

#endif
