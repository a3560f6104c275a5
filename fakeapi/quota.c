/* quota.c -- the rate-limit model: two-level token buckets per replica
 * (the platform's rate-limit contract). */
#include "quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "key.h"

/*
 * A bucket counts in units where one token is period_us units and it
 * refills capacity units per µs: integer arithmetic, so a refill never
 * rounds a token away. Capacity is at most FA_QUOTA_TOKENS_MAX and the
 * period at most a day, so a full bucket (capacity * period_us) stays
 * below 8.64e18 < 2^63, and a cost is checked against the capacity
 * before it is turned into units.
 */
struct bucket {
	bool used;       /* touched once: starts full at its first use */
	int64_t units;   /* tokens * period_us */
	int64_t last_us; /* when units was last brought up to date */
};

/* Key buckets per replica and key, in enum fa_quota_bucket order; user
 * buckets per replica and user: requests, tokens. */
#define KEY_KINDS  4
#define USER_KINDS 2

/* One bucket a request is metered by, with what it costs there. */
struct meter {
	struct bucket *b;
	int cap; /* per-replica capacity; the meter exists when > 0 */
	int64_t period_us;
	int64_t cost; /* tokens this request takes from it */
	enum fa_quota_bucket kind;
	enum fa_quota_scope scope;
};
#define MAX_METERS (KEY_KINDS + USER_KINDS)

struct fa_quota {
	const struct fa_quota_spec *spec; /* borrowed */
	const struct fa_key *keys;        /* borrowed, n_keys */
	size_t n_keys;
	const char **users; /* borrowed from keys: each user once, n_users */
	size_t n_users;
	int *key_user;    /* owned, n_keys: index in users of each key's user */
	int *key_cap;     /* owned, n_keys: per-replica capacity of each key */
	int user_cap;     /* per-replica capacity of every user */
	int key_tok_cap;  /* per-replica tpm of a key; 0 = none */
	int user_tok_cap; /* per-replica tpm of a user; 0 = none */
	int key_rpd_cap;  /* per-replica rpd of a key; 0 = none */
	int key_tpd_cap;  /* per-replica tpd of a key; 0 = none */
	int64_t period_us;
	int64_t day_us;
	struct bucket *kb; /* owned, replicas * n_keys * KEY_KINDS */
	struct bucket *ub; /* owned, replicas * n_users * USER_KINDS */
	int *in_flight;    /* owned, n_keys */
	uint64_t turn;     /* round robin: requests seen */
	uint64_t rng;      /* random spread: xorshift64* state, never 0 */
	uint64_t seed;
};

void fa_quota_spec_init(struct fa_quota_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->per_key = FA_QUOTA_DEFAULT_PER_KEY;
	spec->per_user = FA_QUOTA_DEFAULT_PER_USER;
	spec->period_s = FA_QUOTA_DEFAULT_PERIOD_S;
	spec->replicas = 1;
	spec->day_s = FA_QUOTA_DEFAULT_DAY_S;
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

const char *fa_quota_bucket_str(enum fa_quota_bucket bucket)
{
	switch (bucket) {
	case FA_QUOTA_TOKENS: return "tokens";
	case FA_QUOTA_DAILY_REQUESTS: return "daily-requests";
	case FA_QUOTA_DAILY_TOKENS: return "daily-tokens";
	case FA_QUOTA_REQUESTS:
	default: return "requests";
	}
}

/* the platform's rate-limit contract: each replica applies ceil(limit / replicas);
 * 0 stays 0 (none) */
static int per_replica(int limit, int replicas)
{
	return (int)(((int64_t)limit + replicas - 1) / replicas);
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

struct fa_quota *fa_quota_new(const struct fa_quota_spec *spec, const struct fa_key *keys,
                              size_t n_keys, uint64_t seed)
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
		q->key_cap[i] =
		        per_replica(fa_quota_spec_key_limit(spec, keys[i].id), spec->replicas);
	}
	q->user_cap = per_replica(spec->per_user, spec->replicas);
	q->key_tok_cap = per_replica(spec->tpm_per_key, spec->replicas);
	q->user_tok_cap = per_replica(spec->tpm_per_user, spec->replicas);
	q->key_rpd_cap = per_replica(spec->rpd_per_key, spec->replicas);
	q->key_tpd_cap = per_replica(spec->tpd_per_key, spec->replicas);
	q->period_us = (int64_t)spec->period_s * 1000000;
	q->day_us = (int64_t)(spec->day_s > 0 ? spec->day_s : FA_QUOTA_DEFAULT_DAY_S) * 1000000;
	q->kb = fa_xcalloc(r * n_keys * KEY_KINDS + 1, sizeof(*q->kb));
	q->ub = fa_xcalloc(r * q->n_users * USER_KINDS + 1, sizeof(*q->ub));
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

	memset(q->kb, 0, r * q->n_keys * KEY_KINDS * sizeof(*q->kb));
	memset(q->ub, 0, r * q->n_users * USER_KINDS * sizeof(*q->ub));
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

/* Bring meter @m up to @now_us: full at first use, then continuous
 * refill; a clock that goes back refills nothing. */
static void refill(const struct meter *m, int64_t now_us)
{
	struct bucket *b = m->b;
	int64_t full = (int64_t)m->cap * m->period_us;
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
	if (elapsed >= m->period_us || full - b->units <= elapsed * m->cap)
		b->units = full;
	else
		b->units += elapsed * m->cap;
	b->last_us = now_us;
}

/* µs until meter @m (up to date) holds @tokens (<= its capacity). */
static int64_t wait_us(const struct meter *m, int64_t tokens)
{
	int64_t missing = tokens * m->period_us - m->b->units;

	return missing <= 0 ? 0 : (missing + m->cap - 1) / m->cap;
}

/* Does meter @m have room for its cost now? */
static bool has_room(const struct meter *m)
{
	return m->b->units >= m->cost * m->period_us;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* The request side of @d from request meter @m: limit, remaining, reset. */
static void describe(const struct meter *m, struct fa_quota_decision *d)
{
	d->bucket_limit = m->cap;
	d->period_s = (int)(m->period_us / 1000000);
	d->remaining = (int)(m->b->units / m->period_us);
	d->reset_s = (int)ceil_div(wait_us(m, 1), 1000000);
	d->full_us = wait_us(m, m->cap);
}

/* The token side of @d from token meter @m (NULL: none). */
static void describe_tokens(const struct meter *m, struct fa_quota_decision *d)
{
	d->has_tokens = m != NULL;
	if (m == NULL)
		return;
	d->token_scope = m->scope;
	d->token_limit = m->cap;
	d->token_period_s = (int)(m->period_us / 1000000);
	d->token_remaining = (int)(m->b->units / m->period_us);
	d->token_reset_s = (int)ceil_div(wait_us(m, m->cost), 1000000);
	d->token_full_us = wait_us(m, m->cap);
}

static bool is_tokens(enum fa_quota_bucket kind)
{
	return kind == FA_QUOTA_TOKENS || kind == FA_QUOTA_DAILY_TOKENS;
}

/*
 * The meters of key @k (user @u) on @replica for a request of @cost
 * tokens, in the order they are checked (the platform's rate-limit contract: the key, then the
 * user; the LLM rate-limit guide: requests, then tokens, then the daily ones), those the
 * spec sets. Returns how many, into @m (MAX_METERS).
 */
static size_t meters(const struct fa_quota *q, int replica, int k, int u, int64_t cost,
                     struct meter m[MAX_METERS])
{
	struct bucket *kb = &q->kb[((size_t)replica * q->n_keys + (size_t)k) * KEY_KINDS];
	struct bucket *ub = &q->ub[((size_t)replica * q->n_users + (size_t)u) * USER_KINDS];
	const struct meter all[MAX_METERS] = {
		{ &kb[0], q->key_cap[k], q->period_us, 1, FA_QUOTA_REQUESTS, FA_QUOTA_PER_KEY },
		{ &kb[1], q->key_tok_cap, q->period_us, cost, FA_QUOTA_TOKENS, FA_QUOTA_PER_KEY },
		{ &kb[2], q->key_rpd_cap, q->day_us, 1, FA_QUOTA_DAILY_REQUESTS, FA_QUOTA_PER_KEY },
		{ &kb[3], q->key_tpd_cap, q->day_us, cost, FA_QUOTA_DAILY_TOKENS,
		  FA_QUOTA_PER_KEY },
		{ &ub[0], q->user_cap, q->period_us, 1, FA_QUOTA_REQUESTS, FA_QUOTA_PER_USER },
		{ &ub[1], q->user_tok_cap, q->period_us, cost, FA_QUOTA_TOKENS, FA_QUOTA_PER_USER },
	};
	size_t n = 0;

	for (size_t i = 0; i < MAX_METERS; i++)
		if (all[i].cap > 0)
			m[n++] = all[i];
	return n;
}

/* The first meter of @m (@n) of @scope and kind @kind, or NULL. */
static const struct meter *find(const struct meter *m, size_t n, enum fa_quota_scope scope,
                                enum fa_quota_bucket kind)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].scope == scope && m[i].kind == kind)
			return &m[i];
	return NULL;
}

/* Describe both sides of @d: the refusing meter @by (NULL when admitted
 * or in flight) for its kind, else the scope's per-period ones. */
static void describe_all(const struct meter *m, size_t n, const struct meter *by,
                         struct fa_quota_decision *d)
{
	const struct meter *req = by != NULL && !is_tokens(by->kind) ? by : NULL;
	const struct meter *tok = by != NULL && is_tokens(by->kind) ? by : NULL;

	if (req == NULL)
		req = find(m, n, d->scope, FA_QUOTA_REQUESTS);
	if (tok == NULL)
		tok = find(m, n, d->scope, FA_QUOTA_TOKENS);
	if (tok == NULL)
		tok = find(m, n,
		           d->scope == FA_QUOTA_PER_KEY ? FA_QUOTA_PER_USER : FA_QUOTA_PER_KEY,
		           FA_QUOTA_TOKENS);
	describe(req, d);
	describe_tokens(tok, d);
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

/* @d refused by meter @by: its scope, kind, limit and pause. */
static void refuse(const struct meter *by, struct fa_quota_decision *d)
{
	d->scope = by->scope;
	d->bucket = by->kind;
	d->limit = by->cap;
	d->limit_period_s = (int)(by->period_us / 1000000);
}

enum fa_rc fa_quota_admit(struct fa_quota *q, const char *key_id, const char *user_id, int64_t cost,
                          int64_t now_us, struct fa_quota_decision *d)
{
	int k = key_index(q, key_id);
	struct meter m[MAX_METERS];
	const struct meter *by = NULL;
	size_t n;

	memset(d, 0, sizeof(*d));
	d->key_index = -1;
	d->user_index = -1;
	if (k < 0 || user_id == NULL || strcmp(q->users[q->key_user[k]], user_id) != 0)
		return FA_ENOTFOUND;
	d->key_index = k;
	d->user_index = q->key_user[k];
	d->cost = cost < 0 ? 0 : cost;
	d->replica = choose_replica(q);
	d->scope = FA_QUOTA_PER_KEY;
	n = meters(q, d->replica, k, d->user_index, d->cost, m);
	for (size_t i = 0; i < n; i++)
		refill(&m[i], now_us);
	/* the LLM rate-limit guide: a reservation larger than a whole bucket never fits;
	 * say so at once rather than name a pause that cannot help */
	for (size_t i = 0; i < n && by == NULL; i++)
		if (m[i].cost > m[i].cap)
			by = &m[i];
	if (by != NULL) {
		d->over_capacity = true;
		refuse(by, d);
		describe_all(m, n, by, d);
		return FA_OK;
	}
	d->limit_period_s = (int)(q->period_us / 1000000);
	if (q->spec->max_in_flight_per_key > 0 &&
	    q->in_flight[k] >= q->spec->max_in_flight_per_key) {
		d->in_flight = true;
		describe_all(m, n, NULL, d);
		d->limit = q->spec->max_in_flight_per_key;
		d->retry_after_s = FA_QUOTA_IN_FLIGHT_RETRY_S;
		d->retry_after_ms = FA_QUOTA_IN_FLIGHT_RETRY_S * 1000;
		return FA_OK;
	}
	for (size_t i = 0; i < n && by == NULL; i++)
		if (!has_room(&m[i]))
			by = &m[i];
	if (by != NULL) {
		int64_t w = wait_us(by, by->cost);

		refuse(by, d);
		describe_all(m, n, by, d);
		d->retry_after_ms = w < 1000 ? 1 : ceil_div(w, 1000);
		d->retry_after_s = (int)ceil_div(d->retry_after_ms, 1000);
		return FA_OK;
	}
	for (size_t i = 0; i < n; i++)
		m[i].b->units -= m[i].cost * m[i].period_us;
	d->admitted = true;
	describe_all(m, n, NULL, d);
	d->limit = q->key_cap[k];
	q->in_flight[k]++;
	return FA_OK;
}

void fa_quota_refund(struct fa_quota *q, struct fa_quota_decision *d, int64_t now_us)
{
	struct meter m[MAX_METERS];
	size_t n;

	if (!d->admitted || d->refunded)
		return;
	n = meters(q, d->replica, d->key_index, d->user_index, d->cost, m);
	for (size_t i = 0; i < n; i++) {
		int64_t full = (int64_t)m[i].cap * m[i].period_us;

		refill(&m[i], now_us);
		m[i].b->units += m[i].cost * m[i].period_us;
		if (m[i].b->units > full)
			m[i].b->units = full;
	}
	d->refunded = true;
	describe_all(m, n, NULL, d);
}

void fa_quota_leave(struct fa_quota *q, const struct fa_quota_decision *d)
{
	if (!d->admitted || d->key_index < 0 || q->in_flight[d->key_index] == 0)
		return;
	q->in_flight[d->key_index]--;
}

char *fa_quota_decision_str(const struct fa_quota_decision *d)
{
	const char *scope = fa_quota_scope_str(d->scope);

	if (d->refunded)
		return fa_xasprintf("refunded replica %d", d->replica + 1);
	if (d->admitted)
		return fa_xasprintf("admitted replica %d", d->replica + 1);
	if (d->in_flight)
		return fa_xasprintf("limited in-flight per-key replica %d", d->replica + 1);
	if (d->over_capacity)
		return fa_xasprintf("limited over-capacity %s %s replica %d",
		                    fa_quota_bucket_str(d->bucket), scope, d->replica + 1);
	if (d->bucket == FA_QUOTA_REQUESTS)
		return fa_xasprintf("limited %s replica %d", scope, d->replica + 1);
	return fa_xasprintf("limited %s %s replica %d", fa_quota_bucket_str(d->bucket), scope,
	                    d->replica + 1);
}

/* "per minute", "per day", "per N seconds" for a period of @period_s. */
static void per_period(char *buf, size_t len, int period_s)
{
	if (period_s == 60)
		snprintf(buf, len, "per minute");
	else if (period_s == 86400)
		snprintf(buf, len, "per day");
	else
		snprintf(buf, len, "per %d seconds", period_s);
}

/* The period of @d's limit: limit_period_s, else (a decision filled by
 * hand) the request bucket's. */
static int limit_period(const struct fa_quota_decision *d)
{
	return d->limit_period_s > 0 ? d->limit_period_s : d->period_s;
}

cJSON *fa_quota_error_body(const struct fa_quota_decision *d)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(body, "error");
	char per[48], msg[256];

	if (d->in_flight)
		snprintf(per, sizeof(per), "in flight");
	else
		per_period(per, sizeof(per), limit_period(d));
	snprintf(msg, sizeof(msg),
	         "Rate limit exceeded (%s). Limit: %d %s%s. Retry after %d seconds.",
	         fa_quota_scope_str(d->scope), d->limit, is_tokens(d->bucket) ? "tokens " : "", per,
	         d->retry_after_s);
	/* the platform's member order */
	cJSON_AddStringToObject(e, "type", "rate_limit_exceeded");
	cJSON_AddStringToObject(e, "code", "rate_limit_exceeded");
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(e, "scope", fa_quota_scope_str(d->scope));
	cJSON_AddNumberToObject(e, "limit", d->limit);
	cJSON_AddNumberToObject(e, "retryAfter", d->retry_after_s);
	return body;
}

cJSON *fa_quota_over_capacity_body(const struct fa_quota_decision *d)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(body, "error");
	char per[48], msg[320];

	per_period(per, sizeof(per), limit_period(d));
	snprintf(msg, sizeof(msg),
	         "This request reserves %lld tokens (prompt and max_tokens), more than "
	         "the %s limit of %d tokens %s: it can never be admitted. Shorten the "
	         "prompt or lower max_tokens.",
	         (long long)d->cost, fa_quota_scope_str(d->scope), d->limit, per);
	cJSON_AddStringToObject(e, "type", "invalid_request_error");
	cJSON_AddStringToObject(e, "code", "tokens_over_limit");
	cJSON_AddStringToObject(e, "message", msg);
	return body;
}

/* @us as OpenAI's reset durations print it: "250ms" below a second, else
 * hours, minutes and seconds with up to three decimals ("1s", "6m0s",
 * "1h0m0.5s"); "0s" for none. Rounded up to the ms. */
static void duration(char *buf, size_t len, int64_t us)
{
	int64_t ms = ceil_div(us < 0 ? 0 : us, 1000);
	int64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60, frac = ms % 1000;
	char s[32];
	size_t n = 0;

	if (ms == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(buf, len, "%lldms", (long long)ms);
		return;
	}
	if (frac == 0) {
		snprintf(s, sizeof(s), "%llds", (long long)sec);
	} else {
		n = (size_t)snprintf(s, sizeof(s), "%lld.%03lld", (long long)sec, (long long)frac);
		while (s[n - 1] == '0')
			s[--n] = '\0';
		snprintf(s + n, sizeof(s) - n, "s");
	}
	if (h > 0)
		snprintf(buf, len, "%lldh%lldm%s", (long long)h, (long long)m, s);
	else if (m > 0)
		snprintf(buf, len, "%lldm%s", (long long)m, s);
	else
		snprintf(buf, len, "%s", s);
}

static size_t put(struct fa_quota_header *out, size_t i, const char *name, long long value)
{
	out[i].name = name;
	snprintf(out[i].value, sizeof(out[i].value), "%lld", value);
	return i + 1;
}

/* Anthropic's limit, remaining and reset (the instant @full_us from
 * @wall_us) of one bucket, named @names[0..2], at @out[@i]. */
static size_t anthropic(struct fa_quota_header *out, size_t i, const char *const names[3],
                        int limit, int remaining, int64_t wall_us, int64_t full_us)
{
	i = put(out, i, names[0], limit);
	i = put(out, i, names[1], remaining);
	out[i].name = names[2];
	fa_clock_rfc3339_s(wall_us + (full_us < 0 ? 0 : full_us), out[i].value,
	                   sizeof(out[i].value));
	return i + 1;
}

static const char *const anthropic_names[4][3] = {
	{ "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
	  "anthropic-ratelimit-requests-reset" },
	{ "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
	  "anthropic-ratelimit-tokens-reset" },
	{ "anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
	  "anthropic-ratelimit-input-tokens-reset" },
	{ "anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
	  "anthropic-ratelimit-output-tokens-reset" },
};

size_t fa_quota_rate_headers(enum fa_quota_headers style, const struct fa_quota_decision *d,
                             int64_t wall_us, struct fa_quota_header out[FA_QUOTA_MAX_HEADERS])
{
	const char *scope = fa_quota_scope_str(d->scope);
	const char *tscope = fa_quota_scope_str(d->token_scope);
	size_t n = 0;

	switch (style) {
	case FA_QUOTA_HDR_NONE: return 0;
	case FA_QUOTA_HDR_ANTHROPIC:
		n = anthropic(out, n, anthropic_names[0], d->bucket_limit, d->remaining, wall_us,
		              d->full_us);
		for (int k = 1; k < 4 && d->has_tokens; k++)
			n = anthropic(out, n, anthropic_names[k], d->token_limit,
			              d->token_remaining, wall_us, d->token_full_us);
		return n;
	case FA_QUOTA_HDR_IETF:
		out[0].name = "RateLimit-Policy";
		out[1].name = "RateLimit";
		if (!d->has_tokens) {
			snprintf(out[0].value, sizeof(out[0].value), "\"%s\";q=%d;w=%d", scope,
			         d->bucket_limit, d->period_s);
			snprintf(out[1].value, sizeof(out[1].value), "\"%s\";r=%d;t=%d", scope,
			         d->remaining, d->reset_s);
			return 2;
		}
		snprintf(out[0].value, sizeof(out[0].value),
		         "\"%s\";q=%d;w=%d, \"%s-tokens\";q=%d;w=%d", scope, d->bucket_limit,
		         d->period_s, tscope, d->token_limit, d->token_period_s);
		snprintf(out[1].value, sizeof(out[1].value),
		         "\"%s\";r=%d;t=%d, \"%s-tokens\";r=%d;t=%d", scope, d->remaining,
		         d->reset_s, tscope, d->token_remaining, d->token_reset_s);
		return 2;
	case FA_QUOTA_HDR_OPENAI:
		n = put(out, n, "x-ratelimit-limit-requests", d->bucket_limit);
		n = put(out, n, "x-ratelimit-remaining-requests", d->remaining);
		out[n].name = "x-ratelimit-reset-requests";
		duration(out[n].value, sizeof(out[n].value), d->full_us);
		n++;
		if (!d->has_tokens)
			return n;
		n = put(out, n, "x-ratelimit-limit-tokens", d->token_limit);
		n = put(out, n, "x-ratelimit-remaining-tokens", d->token_remaining);
		out[n].name = "x-ratelimit-reset-tokens";
		duration(out[n].value, sizeof(out[n].value), d->token_full_us);
		return n + 1;
	case FA_QUOTA_HDR_LEGACY:
		n = put(out, n, "RateLimit-Limit", d->bucket_limit);
		n = put(out, n, "RateLimit-Remaining", d->remaining);
		return put(out, n, "RateLimit-Reset", d->reset_s);
	case FA_QUOTA_HDR_X:
	default:
		n = put(out, n, "X-RateLimit-Limit", d->bucket_limit);
		n = put(out, n, "X-RateLimit-Remaining", d->remaining);
		n = put(out, n, "X-RateLimit-Reset", d->reset_s);
		if (!d->has_tokens)
			return n;
		n = put(out, n, "X-RateLimit-Limit-Tokens", d->token_limit);
		n = put(out, n, "X-RateLimit-Remaining-Tokens", d->token_remaining);
		return put(out, n, "X-RateLimit-Reset-Tokens", d->token_reset_s);
	}
}
