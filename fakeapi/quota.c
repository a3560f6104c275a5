/* quota.c -- the rate-limit model: two-level token buckets per replica (seed 002). */
#include "quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scenario.h"

/*
 * A bucket counts in units where one token is period_us units and it
 * refills capacity units per µs: integer arithmetic, so a refill never
 * rounds a token away. Capacity is at most FA_QUOTA_LIMIT_MAX and the
 * period at most a day, so a full bucket (capacity * period_us) stays
 * below 2^57.
 */
struct bucket {
	bool used;       /* touched once: starts full at its first use */
	int64_t units;   /* tokens * period_us */
	int64_t last_us; /* when units was last brought up to date */
};

struct fa_quota {
	const struct fa_quota_spec *spec; /* borrowed */
	const struct fa_key *keys;        /* borrowed, n_keys */
	size_t n_keys;
	const char **users;               /* borrowed from keys: each user once, n_users */
	size_t n_users;
	int *key_user;                    /* owned, n_keys: index in users of each key's user */
	int *key_cap;                     /* owned, n_keys: per-replica capacity of each key */
	int user_cap;                     /* per-replica capacity of every user */
	int64_t period_us;
	struct bucket *kb;                /* owned, replicas * n_keys, row replica * n_keys + key */
	struct bucket *ub;                /* owned, replicas * n_users */
	int *in_flight;                   /* owned, n_keys */
	uint64_t turn;                    /* round robin: requests seen */
	uint64_t rng;                     /* random spread: xorshift64* state, never 0 */
	uint64_t seed;
};

void fa_quota_spec_init(struct fa_quota_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->per_key = FA_QUOTA_DEFAULT_PER_KEY;
	spec->per_user = FA_QUOTA_DEFAULT_PER_USER;
	spec->period_s = FA_QUOTA_DEFAULT_PERIOD_S;
	spec->replicas = 1;
}

void fa_quota_spec_release(struct fa_quota_spec *spec)
{
	if (spec == NULL)
		return;
	for (size_t i = 0; i < spec->n_key_limits && spec->key_limits != NULL; i++)
		free(spec->key_limits[i].key);
	free(spec->key_limits);
	memset(spec, 0, sizeof(*spec));
}

int fa_quota_spec_key_limit(const struct fa_quota_spec *spec, const char *key_id)
{
	for (size_t i = 0; i < spec->n_key_limits; i++)
		if (strcmp(spec->key_limits[i].key, key_id) == 0)
			return spec->key_limits[i].limit;
	return spec->per_key;
}

const char *fa_quota_scope_str(enum fa_quota_scope scope)
{
	return scope == FA_QUOTA_PER_USER ? "per-user" : "per-key";
}

/* seed 002: each replica applies ceil(limit / replicas) */
static int per_replica(int limit, int replicas)
{
	return (limit + replicas - 1) / replicas;
}

/* splitmix64, to turn any seed (0 included) into a non-zero state */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x != 0 ? x : 1;
}

struct fa_quota *fa_quota_new(const struct fa_quota_spec *spec,
			      const struct fa_key *keys, size_t n_keys,
			      uint64_t seed)
{
	struct fa_quota *q = fa_xcalloc(1, sizeof(*q));
	size_t r = (size_t)spec->replicas;

	q->spec = spec;
	q->keys = keys;
	q->n_keys = n_keys;
	q->users = fa_xcalloc(n_keys + 1, sizeof(*q->users));
	q->key_user = fa_xcalloc(n_keys + 1, sizeof(*q->key_user));
	q->key_cap = fa_xcalloc(n_keys + 1, sizeof(*q->key_cap));
	for (size_t i = 0; i < n_keys; i++) {
		size_t u = 0;

		while (u < q->n_users && strcmp(q->users[u], keys[i].user) != 0)
			u++;
		if (u == q->n_users)
			q->users[q->n_users++] = keys[i].user;
		q->key_user[i] = (int)u;
		q->key_cap[i] = per_replica(fa_quota_spec_key_limit(spec, keys[i].id),
					    spec->replicas);
	}
	q->user_cap = per_replica(spec->per_user, spec->replicas);
	q->period_us = (int64_t)spec->period_s * 1000000;
	q->kb = fa_xcalloc(r * n_keys + 1, sizeof(*q->kb));
	q->ub = fa_xcalloc(r * q->n_users + 1, sizeof(*q->ub));
	q->in_flight = fa_xcalloc(n_keys + 1, sizeof(*q->in_flight));
	q->seed = seed;
	q->rng = mix(seed);
	return q;
}

void fa_quota_free(struct fa_quota *q)
{
	if (q == NULL)
		return;
	free(q->users);
	free(q->key_user);
	free(q->key_cap);
	free(q->kb);
	free(q->ub);
	free(q->in_flight);
	free(q);
}

void fa_quota_reset(struct fa_quota *q)
{
	size_t r = (size_t)q->spec->replicas;

	memset(q->kb, 0, r * q->n_keys * sizeof(*q->kb));
	memset(q->ub, 0, r * q->n_users * sizeof(*q->ub));
	q->turn = 0;
	q->rng = mix(q->seed);
}

static int key_index(const struct fa_quota *q, const char *key_id)
{
	for (size_t i = 0; key_id != NULL && i < q->n_keys; i++)
		if (strcmp(q->keys[i].id, key_id) == 0)
			return (int)i;
	return -1;
}

int fa_quota_in_flight(const struct fa_quota *q, const char *key_id)
{
	int k = key_index(q, key_id);

	return k < 0 ? 0 : q->in_flight[k];
}

/* Bring @b (capacity @cap) up to @now_us: full at first use, then
 * continuous refill; a clock that goes back refills nothing. */
static void refill(const struct fa_quota *q, struct bucket *b, int cap,
		   int64_t now_us)
{
	int64_t full = (int64_t)cap * q->period_us;
	int64_t elapsed = now_us - b->last_us;

	if (!b->used) {
		b->used = true;
		b->units = full;
		b->last_us = now_us;
		return;
	}
	if (elapsed <= 0)
		return;
	/* a whole period fills any bucket, and keeps the product small */
	if (elapsed >= q->period_us || full - b->units <= elapsed * cap)
		b->units = full;
	else
		b->units += elapsed * cap;
	b->last_us = now_us;
}

/* µs until @b (capacity @cap, up to date) holds a whole token. */
static int64_t wait_us(const struct fa_quota *q, const struct bucket *b, int cap)
{
	int64_t missing = q->period_us - b->units;

	return missing <= 0 ? 0 : (missing + cap - 1) / cap;
}

/* What the headers say of bucket @b: limit, remaining, reset. */
static void describe(const struct fa_quota *q, const struct bucket *b, int cap,
		     struct fa_quota_decision *d)
{
	int64_t w = wait_us(q, b, cap);

	d->bucket_limit = cap;
	d->remaining = (int)(b->units / q->period_us);
	d->reset_s = (int)((w + 999999) / 1000000);
}

static int choose_replica(struct fa_quota *q)
{
	uint64_t r = (uint64_t)q->spec->replicas;
	uint64_t x;

	if (q->spec->spread != FA_QUOTA_RANDOM)
		return (int)(q->turn++ % r);
	x = q->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	q->rng = x;
	return (int)((x * 0x2545f4914f6cdd1dull >> 32) % r);
}

enum fa_rc fa_quota_admit(struct fa_quota *q, const char *key_id,
			  const char *user_id, int64_t now_us,
			  struct fa_quota_decision *d)
{
	int k = key_index(q, key_id);
	struct bucket *kb, *ub;
	int kcap, ucap;

	memset(d, 0, sizeof(*d));
	d->key_index = -1;
	d->user_index = -1;
	if (k < 0 || user_id == NULL || strcmp(q->users[q->key_user[k]], user_id) != 0)
		return FA_ENOTFOUND;
	d->key_index = k;
	d->user_index = q->key_user[k];
	d->period_s = q->spec->period_s;
	d->replica = choose_replica(q);
	kcap = q->key_cap[k];
	ucap = q->user_cap;
	kb = &q->kb[(size_t)d->replica * q->n_keys + (size_t)k];
	ub = &q->ub[(size_t)d->replica * q->n_users + (size_t)d->user_index];
	refill(q, kb, kcap, now_us);
	refill(q, ub, ucap, now_us);
	d->scope = FA_QUOTA_PER_KEY;
	if (q->spec->max_in_flight_per_key > 0 &&
	    q->in_flight[k] >= q->spec->max_in_flight_per_key) {
		d->in_flight = true;
		describe(q, kb, kcap, d);
		d->limit = q->spec->max_in_flight_per_key;
		d->retry_after_s = FA_QUOTA_IN_FLIGHT_RETRY_S;
		return FA_OK;
	}
	/* seed 002: the key first, then the user; the first empty one answers */
	if (kb->units < q->period_us || ub->units < q->period_us) {
		struct bucket *b = kb->units < q->period_us ? kb : ub;
		int cap = b == kb ? kcap : ucap;

		d->scope = b == kb ? FA_QUOTA_PER_KEY : FA_QUOTA_PER_USER;
		describe(q, b, cap, d);
		d->limit = cap;
		d->retry_after_s = d->reset_s > 1 ? d->reset_s : 1;
		return FA_OK;
	}
	kb->units -= q->period_us;
	ub->units -= q->period_us;
	d->admitted = true;
	describe(q, kb, kcap, d);
	d->limit = kcap;
	q->in_flight[k]++;
	return FA_OK;
}

void fa_quota_refund(struct fa_quota *q, struct fa_quota_decision *d,
		     int64_t now_us)
{
	struct bucket *kb, *ub;
	int kcap, ucap;

	if (!d->admitted || d->refunded)
		return;
	kcap = q->key_cap[d->key_index];
	ucap = q->user_cap;
	kb = &q->kb[(size_t)d->replica * q->n_keys + (size_t)d->key_index];
	ub = &q->ub[(size_t)d->replica * q->n_users + (size_t)d->user_index];
	refill(q, kb, kcap, now_us);
	refill(q, ub, ucap, now_us);
	kb->units += q->period_us;
	if (kb->units > (int64_t)kcap * q->period_us)
		kb->units = (int64_t)kcap * q->period_us;
	ub->units += q->period_us;
	if (ub->units > (int64_t)ucap * q->period_us)
		ub->units = (int64_t)ucap * q->period_us;
	d->refunded = true;
	describe(q, kb, kcap, d);
}

void fa_quota_leave(struct fa_quota *q, const struct fa_quota_decision *d)
{
	if (!d->admitted || d->key_index < 0 || q->in_flight[d->key_index] == 0)
		return;
	q->in_flight[d->key_index]--;
}

char *fa_quota_decision_str(const struct fa_quota_decision *d)
{
	if (d->refunded)
		return fa_xasprintf("refunded replica %d", d->replica + 1);
	if (d->admitted)
		return fa_xasprintf("admitted replica %d", d->replica + 1);
	if (d->in_flight)
		return fa_xasprintf("limited in-flight per-key replica %d", d->replica + 1);
	return fa_xasprintf("limited %s replica %d", fa_quota_scope_str(d->scope),
			    d->replica + 1);
}

cJSON *fa_quota_error_body(const struct fa_quota_decision *d)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(body, "error");
	char per[48], msg[256];

	if (d->in_flight)
		snprintf(per, sizeof(per), "in flight");
	else if (d->period_s == 60)
		snprintf(per, sizeof(per), "per minute");
	else
		snprintf(per, sizeof(per), "per %d seconds", d->period_s);
	snprintf(msg, sizeof(msg),
		 "Rate limit exceeded (%s). Limit: %d %s. Retry after %d seconds.",
		 fa_quota_scope_str(d->scope), d->limit, per, d->retry_after_s);
	/* seed 002's member order */
	cJSON_AddStringToObject(e, "type", "rate_limit_exceeded");
	cJSON_AddStringToObject(e, "code", "rate_limit_exceeded");
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(e, "scope", fa_quota_scope_str(d->scope));
	cJSON_AddNumberToObject(e, "limit", d->limit);
	cJSON_AddNumberToObject(e, "retryAfter", d->retry_after_s);
	return body;
}

size_t fa_quota_rate_headers(enum fa_quota_headers style,
			     const struct fa_quota_decision *d,
			     struct fa_quota_header out[FA_QUOTA_MAX_HEADERS])
{
	const char *scope = fa_quota_scope_str(d->scope);
	const char *const *names;
	static const char *const legacy[] = {
		"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	};
	static const char *const x[] = {
		"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	};

	switch (style) {
	case FA_QUOTA_HDR_NONE:
		return 0;
	case FA_QUOTA_HDR_IETF:
		out[0].name = "RateLimit-Policy";
		snprintf(out[0].value, sizeof(out[0].value), "\"%s\";q=%d;w=%d", scope,
			 d->bucket_limit, d->period_s);
		out[1].name = "RateLimit";
		snprintf(out[1].value, sizeof(out[1].value), "\"%s\";r=%d;t=%d", scope,
			 d->remaining, d->reset_s);
		return 2;
	case FA_QUOTA_HDR_LEGACY:
		names = legacy;
		break;
	case FA_QUOTA_HDR_X:
	default:
		names = x;
		break;
	}
	for (int i = 0; i < 3; i++)
		out[i].name = names[i];
	snprintf(out[0].value, sizeof(out[0].value), "%d", d->bucket_limit);
	snprintf(out[1].value, sizeof(out[1].value), "%d", d->remaining);
	snprintf(out[2].value, sizeof(out[2].value), "%d", d->reset_s);
	return 3;
}
