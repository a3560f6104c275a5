/* test_quota.c -- the two-level token buckets with fake times, and the platform's 429. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fault.h"
#include "provider.h"
#include "provider_fixture.h"
#include "quota.h"
#include "scenario.h"

#define S 1000000LL /* µs per second */

/* Two keys of user "u", one of user "v". */
static const struct fa_key keys[] = {
	{ .id = "k1", .secret = "s1", .user = "u" },
	{ .id = "k2", .secret = "s2", .user = "u" },
	{ .id = "k3", .secret = "s3", .user = "v" },
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

/* Admit one request of @key at @t_us; returns whether it was admitted. */
static bool admit(struct fa_quota *q, const char *key, int64_t t_us, struct fa_quota_decision *d)
{
	const char *user = strcmp(key, "k3") == 0 ? "v" : "u";

	CU_ASSERT_EQUAL_FATAL(fa_quota_admit(q, key, user, 0, t_us, d), FA_OK);
	return d->admitted;
}

static void quota__bucket_refills_continuously_up_to_its_capacity(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 2;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.remaining, 1);
	CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.remaining, 0);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	/* one token per 30 s: not yet a whole one just before */
	CU_ASSERT_FALSE(admit(q, "k1", 30 * S - 1, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	CU_ASSERT(admit(q, "k1", 30 * S, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 30 * S, &d));
	/* a long quiet time fills the bucket, never past its capacity */
	CU_ASSERT(admit(q, "k1", 1000 * S, &d));
	CU_ASSERT(admit(q, "k1", 1000 * S, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 1000 * S, &d));
	/* other keys have buckets of their own */
	CU_ASSERT(admit(q, "k2", 1000 * S, &d));
	fa_quota_free(q);
}

static void quota__retry_after_is_the_real_refill_time_rounded_up(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 2; /* 2 per 60 s: a token every 30 s */
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	admit(q, "k1", 0, &d);
	admit(q, "k1", 0, &d);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 30);
	CU_ASSERT_EQUAL(d.reset_s, 30);
	CU_ASSERT_FALSE(admit(q, "k1", 10 * S, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 20);
	CU_ASSERT_FALSE(admit(q, "k1", 10 * S + 1, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 20); /* 19.999999 s rounds up */
	CU_ASSERT_FALSE(admit(q, "k1", 29 * S + 500000, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	fa_quota_free(q);

	/* 200 per minute on a replica: the next token is 0.3 s away, said as 1 */
	fa_quota_spec_init(&spec);
	spec.replicas = 3;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 600; i++)
		CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	fa_quota_free(q);
}

static void quota__each_replica_applies_ceil_of_limit_over_replicas(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;
	int per_replica[3] = { 0 };

	/* the platform's rate-limit contract: per_key 600 on three replicas: 200 each */
	fa_quota_spec_init(&spec);
	spec.replicas = 3;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 600; i++) {
		CU_ASSERT(admit(q, "k1", 0, &d));
		CU_ASSERT_EQUAL(d.replica, i % 3); /* round robin */
		CU_ASSERT_EQUAL(d.limit, 200);
		per_replica[d.replica]++;
	}
	CU_ASSERT(per_replica[0] == 200 && per_replica[1] == 200 && per_replica[2] == 200);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(d.limit, 200);
	CU_ASSERT_EQUAL(d.replica, 0);
	fa_quota_free(q);

	/* 601 / 3 rounds up: 201 per replica, 603 in all; the user's 1500 / 3
	 * = 500 per replica is not reached */
	spec.per_key = 601;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 603; i++)
		CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.limit, 201);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	fa_quota_free(q);
}

static void quota__random_spread_is_repeatable_from_the_seed(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d1, d2;
	struct fa_quota *a, *b, *c;
	int seen[4] = { 0 };
	bool differs = false;

	fa_quota_spec_init(&spec);
	spec.replicas = 4;
	spec.spread = FA_QUOTA_RANDOM;
	a = fa_quota_new(&spec, keys, N_KEYS, 7);
	b = fa_quota_new(&spec, keys, N_KEYS, 7);
	c = fa_quota_new(&spec, keys, N_KEYS, 8);
	for (int i = 0; i < 400; i++) {
		admit(a, "k3", i * S, &d1);
		admit(b, "k3", i * S, &d2);
		CU_ASSERT_EQUAL(d1.replica, d2.replica);
		CU_ASSERT(d1.replica >= 0 && d1.replica < 4);
		seen[d1.replica]++;
		admit(c, "k3", i * S, &d2);
		differs = differs || d1.replica != d2.replica;
	}
	for (int r = 0; r < 4; r++)
		CU_ASSERT(seen[r] > 50);
	CU_ASSERT(differs);
	fa_quota_free(a);
	fa_quota_free(b);
	fa_quota_free(c);
}

static void quota__key_is_checked_before_the_user(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 3;
	spec.per_user = 4;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(admit(q, "k1", 0, &d));
	/* k1 is out while its user has one token left: per-key */
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(d.limit, 3);
	CU_ASSERT(admit(q, "k2", 0, &d));
	/* k2 still has 2 tokens, the user none: per-user */
	CU_ASSERT_FALSE(admit(q, "k2", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_USER);
	CU_ASSERT_EQUAL(d.limit, 4);
	CU_ASSERT_EQUAL(d.retry_after_s, 15); /* 4 per 60 s */
	/* another user is untouched */
	CU_ASSERT(admit(q, "k3", 0, &d));
	fa_quota_free(q);

	/* both empty at once: the key, checked first, answers */
	spec.per_key = 2;
	spec.per_user = 2;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &d) && admit(q, "k1", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	fa_quota_free(q);
}

static void quota__a_refusal_debits_neither_bucket(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 3;
	spec.per_user = 4;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 3; i++)
		admit(q, "k1", 0, &d);
	admit(q, "k2", 0, &d);
	/* the user refuses k2 ten times: k2's key bucket keeps its 2 tokens */
	for (int i = 0; i < 10; i++)
		CU_ASSERT_FALSE(admit(q, "k2", 0, &d));
	/* at 15 s the user has one token; k2's bucket 2.75, 1.75 after this */
	CU_ASSERT(admit(q, "k2", 15 * S, &d));
	CU_ASSERT_EQUAL(d.remaining, 1);
	fa_quota_free(q);

	/* the key refuses: the user's bucket is not debited */
	spec.per_key = 1;
	spec.per_user = 2;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &d));
	for (int i = 0; i < 10; i++)
		CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT(admit(q, "k2", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k2", 0, &d));
	fa_quota_free(q);
}

static void quota__refund_gives_both_tokens_back_once(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d, refused;
	struct fa_quota *q;
	char *s;

	fa_quota_spec_init(&spec);
	spec.per_key = 1;
	spec.per_user = 1;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.remaining, 0);
	s = fa_quota_decision_str(&d);
	CU_ASSERT_STRING_EQUAL(s, "admitted replica 1");
	free(s);
	fa_quota_refund(q, &d, 0);
	CU_ASSERT(d.refunded);
	CU_ASSERT_EQUAL(d.remaining, 1);
	CU_ASSERT_EQUAL(d.reset_s, 0);
	s = fa_quota_decision_str(&d);
	CU_ASSERT_STRING_EQUAL(s, "refunded replica 1");
	free(s);
	fa_quota_refund(q, &d, 0); /* once only */
	/* the user's token came back too: k2 of the same user is admitted */
	CU_ASSERT(admit(q, "k2", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 0, &refused));
	CU_ASSERT_EQUAL(refused.scope, FA_QUOTA_PER_USER);
	/* a refused decision has nothing to give back */
	fa_quota_refund(q, &refused, 0);
	CU_ASSERT_FALSE(refused.refunded);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &refused));
	/* a refund never fills a bucket past its capacity */
	fa_quota_refund(q, &d, 1000 * S);
	CU_ASSERT(admit(q, "k2", 1000 * S, &d));
	CU_ASSERT_FALSE(admit(q, "k2", 1000 * S, &d));
	fa_quota_free(q);
}

static void quota__override_raises_one_key_while_the_user_limit_holds(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_key_limit kl = { .key = "k1", .limit = 10 };
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 2;
	spec.per_user = 5;
	spec.key_limits = &kl;
	spec.n_key_limits = 1;
	CU_ASSERT_EQUAL(fa_quota_spec_key_limit(&spec, "k1"), 10);
	CU_ASSERT_EQUAL(fa_quota_spec_key_limit(&spec, "k2"), 2);
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT(admit(q, "k1", 0, &d));
		CU_ASSERT_EQUAL(d.limit, 10);
	}
	/* past the default 2, stopped by the user's 5, not by the key */
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_USER);
	CU_ASSERT_EQUAL(d.limit, 5);
	fa_quota_free(q);

	/* k2 keeps the default */
	spec.per_user = 100;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k2", 0, &d) && admit(q, "k2", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k2", 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(d.limit, 2);
	fa_quota_free(q);
}

static void quota__in_flight_cap_refuses_per_key_without_spending(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision a, b, c;
	struct fa_quota *q;
	cJSON *body;
	char *s;

	fa_quota_spec_init(&spec);
	spec.per_key = 3;
	spec.max_in_flight_per_key = 2;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &a));
	CU_ASSERT(admit(q, "k1", 0, &b));
	CU_ASSERT_EQUAL(fa_quota_in_flight(q, "k1"), 2);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &c));
	CU_ASSERT(c.in_flight);
	CU_ASSERT_EQUAL(c.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(c.limit, 2);
	CU_ASSERT_EQUAL(c.retry_after_s, FA_QUOTA_IN_FLIGHT_RETRY_S);
	s = fa_quota_decision_str(&c);
	CU_ASSERT_STRING_EQUAL(s, "limited in-flight per-key replica 1");
	free(s);
	body = fa_quota_error_body(&c);
	s = cJSON_PrintUnformatted(body);
	CU_ASSERT_STRING_EQUAL(s,
	                       "{\"error\":{\"type\":\"rate_limit_exceeded\","
	                       "\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit exceeded "
	                       "(per-key). Limit: 2 in flight. Retry after 1 seconds.\","
	                       "\"scope\":\"per-key\",\"limit\":2,\"retryAfter\":1}}");
	free(s);
	cJSON_Delete(body);
	/* another key is not capped; a refused request leaves nothing to end */
	CU_ASSERT(admit(q, "k2", 0, &c));
	fa_quota_leave(q, &c);
	fa_quota_leave(q, &a);
	CU_ASSERT_EQUAL(fa_quota_in_flight(q, "k1"), 1);
	/* the refusal spent no token: the third one is still there */
	CU_ASSERT(admit(q, "k1", 0, &c));
	CU_ASSERT_EQUAL(c.remaining, 0);
	fa_quota_free(q);
}

static void quota__unknown_key_or_user_changes_nothing(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 1;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT_EQUAL(fa_quota_admit(q, "nope", "u", 0, 0, &d), FA_ENOTFOUND);
	CU_ASSERT_EQUAL(fa_quota_admit(q, "k1", "v", 0, 0, &d), FA_ENOTFOUND);
	CU_ASSERT_EQUAL(fa_quota_admit(q, NULL, NULL, 0, 0, &d), FA_ENOTFOUND);
	CU_ASSERT(admit(q, "k1", 0, &d));
	fa_quota_free(q);
}

/* the platform's example, as the page prints it (limit 600, three replicas,
 * no override: 200 per replica; per-key) */
static const char platform_body[] =
        "{\"error\": {\"type\": \"rate_limit_exceeded\", \"code\": \"rate_limit_exceeded\","
        " \"message\": \"Rate limit exceeded (per-key). Limit: 200 per minute. Retry after 12 seconds.\","
        " \"scope\": \"per-key\", \"limit\": 200, \"retryAfter\": 12}}";

static void quota__body_matches_the_platform_example_field_by_field(void)
{
	struct fa_quota_decision d = { .scope = FA_QUOTA_PER_KEY,
		                       .limit = 200,
		                       .bucket_limit = 200,
		                       .period_s = 60,
		                       .retry_after_s = 12,
		                       .reset_s = 12 };
	cJSON *want = cJSON_Parse(platform_body);
	cJSON *got = fa_quota_error_body(&d);
	const cJSON *we = cJSON_GetObjectItemCaseSensitive(want, "error");
	const cJSON *ge = cJSON_GetObjectItemCaseSensitive(got, "error");
	const cJSON *w, *g = NULL;
	char *s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(we);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ge);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(got), 1);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(ge), cJSON_GetArraySize(we));
	/* every field, in the contract's order */
	for (w = we->child, g = ge->child; w != NULL && g != NULL; w = w->next, g = g->next) {
		CU_ASSERT_STRING_EQUAL(g->string, w->string);
		CU_ASSERT(cJSON_Compare(g, w, true));
	}
	CU_ASSERT(w == NULL && g == NULL);
	cJSON_Delete(got);

	/* per-user, another period */
	d.scope = FA_QUOTA_PER_USER;
	d.limit = 500;
	d.period_s = 2;
	d.retry_after_s = 1;
	got = fa_quota_error_body(&d);
	ge = cJSON_GetObjectItemCaseSensitive(got, "error");
	s = cJSON_PrintUnformatted(ge);
	CU_ASSERT_STRING_EQUAL(
	        s,
	        "{\"type\":\"rate_limit_exceeded\",\"code\":\"rate_limit_exceeded\","
	        "\"message\":\"Rate limit exceeded (per-user). Limit: 500 per 2 seconds. "
	        "Retry after 1 seconds.\",\"scope\":\"per-user\",\"limit\":500,\"retryAfter\":1}");
	free(s);
	cJSON_Delete(got);
	cJSON_Delete(want);
}

static void quota__model_gives_the_platform_limit_for_three_replicas(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;
	cJSON *got;
	const cJSON *e;

	/* the platform's rate-limit contract: 600 per key, 1500 per user */
	fa_quota_spec_init(&spec);
	spec.replicas = 3;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	for (int i = 0; i < 600; i++)
		admit(q, "k1", 0, &d);
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	got = fa_quota_error_body(&d);
	e = cJSON_GetObjectItemCaseSensitive(got, "error");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "scope")->valuestring, "per-key");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(e, "limit")->valueint, 200);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(e, "retryAfter")->valueint, 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "message")->valuestring,
	                       "Rate limit exceeded (per-key). Limit: 200 per minute. "
	                       "Retry after 1 seconds.");
	cJSON_Delete(got);
	fa_quota_free(q);
}

static void quota__rate_headers_in_each_style(void)
{
	struct fa_quota_decision d = { .scope = FA_QUOTA_PER_KEY,
		                       .limit = 200,
		                       .bucket_limit = 200,
		                       .period_s = 60,
		                       .remaining = 57,
		                       .reset_s = 0 };
	struct fa_quota_header h[FA_QUOTA_MAX_HEADERS];

	CU_ASSERT_EQUAL_FATAL(fa_quota_rate_headers(FA_QUOTA_HDR_IETF, &d, 0, h), 2);
	CU_ASSERT_STRING_EQUAL(h[0].name, "RateLimit-Policy");
	CU_ASSERT_STRING_EQUAL(h[0].value, "\"per-key\";q=200;w=60");
	CU_ASSERT_STRING_EQUAL(h[1].name, "RateLimit");
	CU_ASSERT_STRING_EQUAL(h[1].value, "\"per-key\";r=57;t=0");
	CU_ASSERT_EQUAL_FATAL(fa_quota_rate_headers(FA_QUOTA_HDR_LEGACY, &d, 0, h), 3);
	CU_ASSERT_STRING_EQUAL(h[0].name, "RateLimit-Limit");
	CU_ASSERT_STRING_EQUAL(h[0].value, "200");
	CU_ASSERT_STRING_EQUAL(h[1].name, "RateLimit-Remaining");
	CU_ASSERT_STRING_EQUAL(h[1].value, "57");
	CU_ASSERT_STRING_EQUAL(h[2].name, "RateLimit-Reset");
	CU_ASSERT_STRING_EQUAL(h[2].value, "0");
	d.scope = FA_QUOTA_PER_USER;
	d.remaining = 0;
	d.reset_s = 12;
	CU_ASSERT_EQUAL_FATAL(fa_quota_rate_headers(FA_QUOTA_HDR_X, &d, 0, h), 3);
	CU_ASSERT_STRING_EQUAL(h[0].name, "X-RateLimit-Limit");
	CU_ASSERT_STRING_EQUAL(h[0].value, "200");
	CU_ASSERT_STRING_EQUAL(h[1].name, "X-RateLimit-Remaining");
	CU_ASSERT_STRING_EQUAL(h[1].value, "0");
	CU_ASSERT_STRING_EQUAL(h[2].name, "X-RateLimit-Reset");
	CU_ASSERT_STRING_EQUAL(h[2].value, "12");
	CU_ASSERT_EQUAL(fa_quota_rate_headers(FA_QUOTA_HDR_IETF, &d, 0, h), 2);
	CU_ASSERT_STRING_EQUAL(h[1].value, "\"per-user\";r=0;t=12");
	CU_ASSERT_EQUAL(fa_quota_rate_headers(FA_QUOTA_HDR_NONE, &d, 0, h), 0);
}

/* Anthropic's headers: the resets are the instants each bucket is full
 * again, RFC 3339 rounded up to the second; one token bucket stands for
 * tokens, input-tokens and output-tokens alike */
static void quota__anthropic_headers_name_the_full_instants(void)
{
	struct fa_quota_decision d = { .scope = FA_QUOTA_PER_KEY,
		                       .bucket_limit = 50,
		                       .period_s = 60,
		                       .remaining = 0,
		                       .full_us = 1200000 };
	struct fa_quota_header h[FA_QUOTA_MAX_HEADERS];
	static const char *const kinds[] = { "tokens", "input-tokens", "output-tokens" };
	char name[64];
	/* 2026-11-30T08:55:09.5Z */
	int64_t wall = INT64_C(1796028909) * 1000000 + 500000;

	CU_ASSERT_EQUAL_FATAL(fa_quota_rate_headers(FA_QUOTA_HDR_ANTHROPIC, &d, wall, h), 3);
	CU_ASSERT_STRING_EQUAL(h[0].name, "anthropic-ratelimit-requests-limit");
	CU_ASSERT_STRING_EQUAL(h[0].value, "50");
	CU_ASSERT_STRING_EQUAL(h[1].name, "anthropic-ratelimit-requests-remaining");
	CU_ASSERT_STRING_EQUAL(h[1].value, "0");
	CU_ASSERT_STRING_EQUAL(h[2].name, "anthropic-ratelimit-requests-reset");
	/* 09.5 s + 1.2 s = 10.7 s, rounded up */
	CU_ASSERT_STRING_EQUAL(h[2].value, "2026-11-30T08:55:11Z");
	d.has_tokens = true;
	d.token_limit = 4000;
	d.token_remaining = 3936;
	d.token_full_us = 0;
	CU_ASSERT_EQUAL_FATAL(fa_quota_rate_headers(FA_QUOTA_HDR_ANTHROPIC, &d, wall, h), 12);
	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "anthropic-ratelimit-%s-limit", kinds[k]);
		CU_ASSERT_STRING_EQUAL(h[3 + 3 * k].name, name);
		CU_ASSERT_STRING_EQUAL(h[3 + 3 * k].value, "4000");
		snprintf(name, sizeof(name), "anthropic-ratelimit-%s-remaining", kinds[k]);
		CU_ASSERT_STRING_EQUAL(h[4 + 3 * k].name, name);
		CU_ASSERT_STRING_EQUAL(h[4 + 3 * k].value, "3936");
		snprintf(name, sizeof(name), "anthropic-ratelimit-%s-reset", kinds[k]);
		CU_ASSERT_STRING_EQUAL(h[5 + 3 * k].name, name);
		/* full now: now, rounded up */
		CU_ASSERT_STRING_EQUAL(h[5 + 3 * k].value, "2026-11-30T08:55:10Z");
	}
}

static void quota__reset_fills_every_bucket(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	fa_quota_spec_init(&spec);
	spec.per_key = 1;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_FALSE(admit(q, "k1", 0, &d));
	fa_quota_reset(q);
	CU_ASSERT(admit(q, "k1", 0, &d));
	CU_ASSERT_STRING_EQUAL(fa_fault_str(FA_FAULT_QUOTA), "quota");
	fa_quota_free(q);
}

/* ---- through the provider, without a socket ---- */

static const char provider_text[] =
        "{\"id\": \"quota-unit\","
        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
        "              \"quota\": {\"per_key\": 2, \"per_user\": 10, \"headers\": \"x\"}},"
        " \"routes\": [{\"id\": \"ok\", \"method\": \"GET\", \"path\": \"/v1/ok\","
        "               \"responses\": [{\"status\": 200, \"body\": {}}]},"
        "              {\"id\": \"busy\", \"method\": \"GET\", \"path\": \"/v1/busy\","
        "               \"responses\": [{\"status\": 503, \"body\": {}}]}]}";

static void quota__provider_answers_the_platform_429_and_refunds_503(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p = fx_provider_start(provider_text, "q.json", 1, &sc, &j);
	struct fa_resp r;
	struct fa_attempt *e = NULL;
	size_t n = 0;

	CU_ASSERT_FATAL(sc->has_quota);

	/* an invalid key is 401 and spends nothing */
	fx_decide_as(p, "wrong", "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 401);
	CU_ASSERT_PTR_NULL(r.attempt.quota);
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "X-RateLimit-Remaining"));
	fx_done(p, &r);
	fx_decide(p, "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "admitted replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Limit"), "2");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining"), "1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Reset"), "0");
	fx_done(p, &r);
	/* a scripted 503 spends no quota */
	fx_decide(p, "GET", "/v1/busy", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 503);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining"), "1");
	fx_done(p, &r);
	fx_decide(p, "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining"), "0");
	fx_done(p, &r);
	/* the third admitted one: the platform's 429 */
	fx_decide(p, "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_STRING_EQUAL(r.body,
	                       "{\"error\":{\"type\":\"rate_limit_exceeded\","
	                       "\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit exceeded "
	                       "(per-key). Limit: 2 per minute. Retry after 30 seconds.\","
	                       "\"scope\":\"per-key\",\"limit\":2,\"retryAfter\":30}}");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "30");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Scope"), "per-key");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining"), "0");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Reset"), "30");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "application/json");
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "limited per-key replica 1");
	CU_ASSERT_STRING_EQUAL(r.attempt.fault, "quota");
	CU_ASSERT_PTR_NULL(r.attempt.route); /* no cursor moved */
	CU_ASSERT_STRING_EQUAL(r.attempt.retry_after, "30");
	CU_ASSERT(r.attempt.pause_until_us >= r.attempt.t_arrival_us + 30 * S);
	CU_ASSERT(r.attempt.pause_until_us <= r.attempt.t_arrival_us + 31 * S);
	fx_done(p, &r);
	CU_ASSERT_EQUAL(fa_journal_count(j), 5);
	fa_journal_snapshot(j, 0, &e, &n);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_STRING_EQUAL(e[4].fault, "quota");
	CU_ASSERT_EQUAL(e[4].status, 429);
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&e[i]);
	free(e);
	/* an admin reset fills the buckets again */
	fa_provider_reset(p);
	fx_decide(p, "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static void quota__scenario_defaults_and_overrides(void)
{
	static const char text[] =
	        "{\"id\": \"q\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"},"
	        " \"k2\": {\"secret\": \"s2\", \"user\": \"u\"}},"
	        " \"quota\": {\"replicas\": 3, \"spread\": \"random\", \"key_limits\": {\"k2\": 900},"
	        "             \"max_in_flight_per_key\": 4, \"headers\": \"ietf\"}},"
	        " \"routes\": [{\"id\": \"ok\", \"method\": \"GET\", \"path\": \"/\","
	        "               \"responses\": [{\"status\": 200}]}]}";
	struct fa_scenario *sc = NULL;
	struct fa_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fa_scenario_parse(text, strlen(text), "q.json", &sc, &err), FA_OK);
	CU_ASSERT(sc->has_quota);
	CU_ASSERT_EQUAL(sc->quota.per_key, 600);
	CU_ASSERT_EQUAL(sc->quota.per_user, 1500);
	CU_ASSERT_EQUAL(sc->quota.period_s, 60);
	CU_ASSERT_EQUAL(sc->quota.replicas, 3);
	CU_ASSERT_EQUAL(sc->quota.spread, FA_QUOTA_RANDOM);
	CU_ASSERT_EQUAL(sc->quota.headers, FA_QUOTA_HDR_IETF);
	CU_ASSERT_EQUAL(sc->quota.max_in_flight_per_key, 4);
	CU_ASSERT_EQUAL_FATAL(sc->quota.n_key_limits, 1);
	CU_ASSERT_STRING_EQUAL(sc->quota.key_limits[0].key, "k2");
	CU_ASSERT_EQUAL(sc->quota.key_limits[0].limit, 900);
	fa_scenario_free(sc);
}

void test_quota_register(void)
{
	CU_pSuite suite = CU_add_suite("quota", NULL, NULL);

	CU_add_test(suite, "quota__bucket_refills_continuously_up_to_its_capacity",
	            quota__bucket_refills_continuously_up_to_its_capacity);
	CU_add_test(suite, "quota__retry_after_is_the_real_refill_time_rounded_up",
	            quota__retry_after_is_the_real_refill_time_rounded_up);
	CU_add_test(suite, "quota__each_replica_applies_ceil_of_limit_over_replicas",
	            quota__each_replica_applies_ceil_of_limit_over_replicas);
	CU_add_test(suite, "quota__random_spread_is_repeatable_from_the_seed",
	            quota__random_spread_is_repeatable_from_the_seed);
	CU_add_test(suite, "quota__key_is_checked_before_the_user",
	            quota__key_is_checked_before_the_user);
	CU_add_test(suite, "quota__a_refusal_debits_neither_bucket",
	            quota__a_refusal_debits_neither_bucket);
	CU_add_test(suite, "quota__refund_gives_both_tokens_back_once",
	            quota__refund_gives_both_tokens_back_once);
	CU_add_test(suite, "quota__override_raises_one_key_while_the_user_limit_holds",
	            quota__override_raises_one_key_while_the_user_limit_holds);
	CU_add_test(suite, "quota__in_flight_cap_refuses_per_key_without_spending",
	            quota__in_flight_cap_refuses_per_key_without_spending);
	CU_add_test(suite, "quota__unknown_key_or_user_changes_nothing",
	            quota__unknown_key_or_user_changes_nothing);
	CU_add_test(suite, "quota__body_matches_the_platform_example_field_by_field",
	            quota__body_matches_the_platform_example_field_by_field);
	CU_add_test(suite, "quota__model_gives_the_platform_limit_for_three_replicas",
	            quota__model_gives_the_platform_limit_for_three_replicas);
	CU_add_test(suite, "quota__anthropic_headers_name_the_full_instants",
	            quota__anthropic_headers_name_the_full_instants);
	CU_add_test(suite, "quota__rate_headers_in_each_style", quota__rate_headers_in_each_style);
	CU_add_test(suite, "quota__reset_fills_every_bucket", quota__reset_fills_every_bucket);
	CU_add_test(suite, "quota__provider_answers_the_platform_429_and_refunds_503",
	            quota__provider_answers_the_platform_429_and_refunds_503);
	CU_add_test(suite, "quota__scenario_defaults_and_overrides",
	            quota__scenario_defaults_and_overrides);
}
