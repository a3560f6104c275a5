/* test_quota_tokens.c -- the LLM rate-limit guide's token and daily buckets, with fake times;
 * the quota_tokens suite. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

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

/* Ask for one request of @key costing @cost tokens at @t_us. */
static bool take(struct fa_quota *q, const char *key, int64_t cost, int64_t t_us,
                 struct fa_quota_decision *d)
{
	const char *user = strcmp(key, "k3") == 0 ? "v" : "u";

	CU_ASSERT_EQUAL_FATAL(fa_quota_admit(q, key, user, cost, t_us, d), FA_OK);
	return d->admitted;
}

/* A spec with request limits high enough never to matter. */
static void roomy(struct fa_quota_spec *spec)
{
	fa_quota_spec_init(spec);
	spec->per_key = 1000;
	spec->per_user = 1000;
}

static void expect_str(const struct fa_quota_decision *d, const char *want)
{
	char *got = fa_quota_decision_str(d);

	CU_ASSERT_STRING_EQUAL(got, want);
	free(got);
}

static void quota_tokens__tpm_bucket_refills_and_names_the_pause_for_the_cost(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	roomy(&spec);
	spec.tpm_per_key = 1000; /* 1000 tokens per 60 s: 1 token per 60 ms */
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 600, 0, &d));
	CU_ASSERT(d.has_tokens);
	CU_ASSERT_EQUAL(d.token_limit, 1000);
	CU_ASSERT_EQUAL(d.token_remaining, 400);
	CU_ASSERT_EQUAL(d.remaining, 999); /* one request taken too */
	/* 600 more need 200 tokens that are not there: 200 * 60 ms = 12 s */
	CU_ASSERT_FALSE(take(q, "k1", 600, 0, &d));
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_TOKENS);
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(d.limit, 1000);
	CU_ASSERT_EQUAL(d.retry_after_s, 12);
	CU_ASSERT_EQUAL(d.retry_after_ms, 12000);
	CU_ASSERT_EQUAL(d.token_reset_s, 12);
	CU_ASSERT_EQUAL(d.remaining, 999); /* the refusal took no request */
	expect_str(&d, "limited tokens per-key replica 1");
	/* while requests remain, a cheap one still fits */
	CU_ASSERT(take(q, "k1", 400, 0, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 0);
	CU_ASSERT_FALSE(take(q, "k1", 600, 6 * S, &d)); /* 100 tokens back */
	CU_ASSERT_EQUAL(d.retry_after_ms, 30000);
	CU_ASSERT_FALSE(take(q, "k1", 600, 36 * S - 1, &d));
	CU_ASSERT_EQUAL(d.retry_after_ms, 1); /* 1 µs rounds up to 1 ms */
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	CU_ASSERT(take(q, "k1", 600, 36 * S, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 0);
	/* a quiet period fills it, never past its capacity */
	CU_ASSERT(take(q, "k1", 0, 1000 * S, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 1000);
	fa_quota_free(q);
}

static void quota_tokens__pause_in_ms_is_exact_and_retry_after_its_ceil(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	roomy(&spec);
	spec.tpm_per_key = 7;
	spec.period_s = 1; /* a token every 142857.14 µs */
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 7, 0, &d));
	CU_ASSERT_FALSE(take(q, "k1", 1, 0, &d));
	CU_ASSERT_EQUAL(d.retry_after_ms, 143);
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	CU_ASSERT_FALSE(take(q, "k1", 7, 0, &d));
	CU_ASSERT_EQUAL(d.retry_after_ms, 1000);
	CU_ASSERT_EQUAL(d.retry_after_s, 1);
	fa_quota_free(q);
}

static void quota_tokens__replicas_divide_the_token_limit(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	roomy(&spec);
	spec.replicas = 3;
	spec.tpm_per_key = 1000; /* ceil(1000 / 3) = 334 each */
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 334, 0, &d));
	CU_ASSERT_EQUAL(d.replica, 0);
	CU_ASSERT_EQUAL(d.token_limit, 334);
	CU_ASSERT_EQUAL(d.token_remaining, 0);
	/* round robin: replicas 2 and 3 have their own */
	CU_ASSERT(take(q, "k1", 334, 0, &d));
	CU_ASSERT(take(q, "k1", 334, 0, &d));
	CU_ASSERT_EQUAL(d.replica, 2);
	CU_ASSERT_FALSE(take(q, "k1", 1, 0, &d));
	CU_ASSERT_EQUAL(d.replica, 0);
	CU_ASSERT_EQUAL(d.limit, 334);
	expect_str(&d, "limited tokens per-key replica 1");
	fa_quota_free(q);
}

static void quota_tokens__key_then_user_and_no_debit_when_the_user_refuses(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	roomy(&spec);
	spec.tpm_per_key = 1000;
	spec.tpm_per_user = 1500;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 1000, 0, &d));
	/* k2's key bucket has 1000, the account 500 */
	CU_ASSERT_FALSE(take(q, "k2", 600, 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_USER);
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_TOKENS);
	CU_ASSERT_EQUAL(d.limit, 1500);
	CU_ASSERT_EQUAL(d.token_scope, FA_QUOTA_PER_USER);
	CU_ASSERT_EQUAL(d.token_remaining, 500);
	expect_str(&d, "limited tokens per-user replica 1");
	/* nothing was taken from k2's buckets nor the account's */
	CU_ASSERT(take(q, "k2", 500, 0, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 500); /* k2's own bucket */
	CU_ASSERT_EQUAL(d.remaining, 999);
	/* the key comes first: k1 out of tokens and the account too */
	CU_ASSERT_FALSE(take(q, "k1", 1, 0, &d));
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	/* requests before tokens: a key out of both is refused on requests */
	spec.per_key = 1;
	fa_quota_free(q);
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k3", 1000, 0, &d));
	CU_ASSERT_FALSE(take(q, "k3", 1000, 0, &d));
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_REQUESTS);
	expect_str(&d, "limited per-key replica 1");
	fa_quota_free(q);
}

static void quota_tokens__refund_gives_the_tokens_back(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d, d2;
	struct fa_quota *q;

	roomy(&spec);
	spec.tpm_per_key = 1000;
	spec.tpm_per_user = 1000;
	spec.tpd_per_key = 5000;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 800, 0, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 200);
	fa_quota_refund(q, &d, 0);
	CU_ASSERT(d.refunded);
	CU_ASSERT_EQUAL(d.token_remaining, 1000);
	CU_ASSERT_EQUAL(d.remaining, 1000);
	fa_quota_refund(q, &d, 0);              /* once */
	CU_ASSERT(take(q, "k2", 1000, 0, &d2)); /* the account's came back too */
	fa_quota_leave(q, &d);
	fa_quota_leave(q, &d2);
	fa_quota_free(q);
}

static void quota_tokens__daily_buckets_with_a_shortened_day(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;
	cJSON *body;
	char *text;

	roomy(&spec);
	spec.rpd_per_key = 2;
	spec.tpd_per_key = 100;
	spec.day_s = 10; /* 2 requests per 10 s: one every 5 s */
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 10, 0, &d));
	CU_ASSERT(take(q, "k1", 10, 0, &d));
	CU_ASSERT_FALSE(take(q, "k1", 10, 0, &d));
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_DAILY_REQUESTS);
	CU_ASSERT_EQUAL(d.limit, 2);
	CU_ASSERT_EQUAL(d.retry_after_s, 5);
	/* the headers' request side is the bucket that refused */
	CU_ASSERT_EQUAL(d.bucket_limit, 2);
	CU_ASSERT_EQUAL(d.period_s, 10);
	CU_ASSERT_EQUAL(d.remaining, 0);
	expect_str(&d, "limited daily-requests per-key replica 1");
	body = fa_quota_error_body(&d);
	text = cJSON_PrintUnformatted(body);
	CU_ASSERT_PTR_NOT_NULL_FATAL(
	        strstr(text, "Limit: 2 per 10 seconds. Retry after 5 seconds."));
	free(text);
	cJSON_Delete(body);
	/* the day's tokens are full again by 5 s: 80 of the 100 go... */
	CU_ASSERT(take(q, "k1", 80, 5 * S, &d));
	/* ...and 50 come back by 10 s: 70, 20 short of 90 */
	CU_ASSERT_FALSE(take(q, "k1", 90, 10 * S, &d));
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_DAILY_TOKENS);
	CU_ASSERT_EQUAL(d.limit, 100);
	CU_ASSERT_EQUAL(d.retry_after_s, 2); /* 20 tokens at 10 per s */
	CU_ASSERT_EQUAL(d.token_limit, 100);
	CU_ASSERT_EQUAL(d.token_period_s, 10);
	expect_str(&d, "limited daily-tokens per-key replica 1");
	body = fa_quota_error_body(&d);
	text = cJSON_PrintUnformatted(body);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, "Limit: 100 tokens per 10 seconds. Retry after 2 seconds."));
	free(text);
	cJSON_Delete(body);
	fa_quota_free(q);
	/* the default day is 86400 s, said "per day" */
	fa_quota_spec_init(&spec);
	CU_ASSERT_EQUAL(spec.day_s, 86400);
	spec.rpd_per_key = 1;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 0, 0, &d));
	CU_ASSERT_FALSE(take(q, "k1", 0, 3600 * S, &d));
	CU_ASSERT_EQUAL(d.retry_after_s, 82800);
	body = fa_quota_error_body(&d);
	text = cJSON_PrintUnformatted(body);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "Limit: 1 per day."));
	free(text);
	cJSON_Delete(body);
	fa_quota_free(q);
}

static void quota_tokens__cost_over_a_whole_bucket_is_refused_for_good(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;
	cJSON *body;
	char *text;

	roomy(&spec);
	spec.tpm_per_key = 4000;
	spec.tpm_per_user = 10000;
	spec.max_in_flight_per_key = 1;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT_FALSE(take(q, "k1", 5200, 0, &d));
	CU_ASSERT(d.over_capacity);
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_TOKENS);
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_KEY);
	CU_ASSERT_EQUAL(d.retry_after_s, 0);
	CU_ASSERT_EQUAL(d.retry_after_ms, 0);
	CU_ASSERT_EQUAL(d.cost, 5200);
	expect_str(&d, "limited over-capacity tokens per-key replica 1");
	body = fa_quota_over_capacity_body(&d);
	text = cJSON_PrintUnformatted(body);
	CU_ASSERT_STRING_EQUAL(
	        text, "{\"error\":{\"type\":\"invalid_request_error\","
	              "\"code\":\"tokens_over_limit\",\"message\":\"This request reserves "
	              "5200 tokens (prompt and max_tokens), more than the per-key limit of "
	              "4000 tokens per minute: it can never be admitted. Shorten the prompt "
	              "or lower max_tokens.\"}}");
	free(text);
	cJSON_Delete(body);
	/* nothing was spent, nothing is in flight: the whole bucket is there */
	CU_ASSERT(take(q, "k1", 4000, 0, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 0);
	CU_ASSERT_EQUAL(fa_quota_in_flight(q, "k1"), 1);
	/* said before the in-flight cap, which k1 has reached */
	CU_ASSERT_FALSE(take(q, "k1", 10001, 0, &d));
	CU_ASSERT(d.over_capacity);
	CU_ASSERT_FALSE(d.in_flight);
	fa_quota_free(q);
	/* over the account's capacity alone */
	roomy(&spec);
	spec.tpm_per_user = 100;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT_FALSE(take(q, "k3", 101, 0, &d));
	CU_ASSERT(d.over_capacity);
	CU_ASSERT_EQUAL(d.scope, FA_QUOTA_PER_USER);
	expect_str(&d, "limited over-capacity tokens per-user replica 1");
	CU_ASSERT(take(q, "k3", 100, 0, &d));
	fa_quota_free(q);
}

static void quota_tokens__a_request_without_cost_takes_no_tokens(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;

	roomy(&spec);
	spec.per_key = 2;
	spec.tpm_per_key = 10;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 0, 0, &d));
	CU_ASSERT_EQUAL(d.token_remaining, 10);
	CU_ASSERT(take(q, "k1", 0, 0, &d));
	CU_ASSERT_FALSE(take(q, "k1", 0, 0, &d)); /* one request each still */
	CU_ASSERT_EQUAL(d.bucket, FA_QUOTA_REQUESTS);
	fa_quota_free(q);
}

/* The headers of @d in @style, "name: value" lines. */
static void headers_text(enum fa_quota_headers style, const struct fa_quota_decision *d, char *buf,
                         size_t len)
{
	struct fa_quota_header h[FA_QUOTA_MAX_HEADERS];
	size_t n = fa_quota_rate_headers(style, d, 0, h), off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s: %s\n", h[i].name, h[i].value);
}

static void quota_tokens__headers_describe_the_token_bucket(void)
{
	struct fa_quota_decision d = {
		.scope = FA_QUOTA_PER_KEY,
		.bucket_limit = 600,
		.period_s = 60,
		.remaining = 599,
		.reset_s = 0,
		.full_us = 100000,
		.has_tokens = true,
		.token_scope = FA_QUOTA_PER_KEY,
		.token_limit = 300000,
		.token_period_s = 60,
		.token_remaining = 295000,
		.token_reset_s = 0,
		.token_full_us = 360 * S,
	};
	char buf[1024];

	headers_text(FA_QUOTA_HDR_X, &d, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(
	        buf, "X-RateLimit-Limit: 600\nX-RateLimit-Remaining: 599\n"
	             "X-RateLimit-Reset: 0\nX-RateLimit-Limit-Tokens: 300000\n"
	             "X-RateLimit-Remaining-Tokens: 295000\nX-RateLimit-Reset-Tokens: 0\n");
	headers_text(FA_QUOTA_HDR_IETF, &d, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(
	        buf, "RateLimit-Policy: \"per-key\";q=600;w=60, "
	             "\"per-key-tokens\";q=300000;w=60\n"
	             "RateLimit: \"per-key\";r=599;t=0, \"per-key-tokens\";r=295000;t=0\n");
	headers_text(FA_QUOTA_HDR_LEGACY, &d, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "RateLimit-Limit: 600\nRateLimit-Remaining: 599\n"
	                            "RateLimit-Reset: 0\n");
	headers_text(FA_QUOTA_HDR_OPENAI, &d, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "x-ratelimit-limit-requests: 600\n"
	                            "x-ratelimit-remaining-requests: 599\n"
	                            "x-ratelimit-reset-requests: 100ms\n"
	                            "x-ratelimit-limit-tokens: 300000\n"
	                            "x-ratelimit-remaining-tokens: 295000\n"
	                            "x-ratelimit-reset-tokens: 6m0s\n");
	/* OpenAI's durations */
	d.full_us = 0;
	d.token_full_us = 1500 * 1000;
	headers_text(FA_QUOTA_HDR_OPENAI, &d, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-requests: 0s\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-tokens: 1.5s\n"));
	d.full_us = 3600 * S + 1;
	d.token_full_us = 61 * S + 250000;
	headers_text(FA_QUOTA_HDR_OPENAI, &d, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-requests: 1h0m0.001s\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-tokens: 1m1.25s\n"));
	/* the account's token bucket, and no tokens at all */
	d.token_scope = FA_QUOTA_PER_USER;
	headers_text(FA_QUOTA_HDR_IETF, &d, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"per-user-tokens\";q=300000;w=60\n"));
	d.has_tokens = false;
	CU_ASSERT_EQUAL(fa_quota_rate_headers(FA_QUOTA_HDR_X, &d, 0,
	                                      (struct fa_quota_header[FA_QUOTA_MAX_HEADERS]){ 0 }),
	                3);
	CU_ASSERT_EQUAL(fa_quota_rate_headers(FA_QUOTA_HDR_OPENAI, &d, 0,
	                                      (struct fa_quota_header[FA_QUOTA_MAX_HEADERS]){ 0 }),
	                3);
	headers_text(FA_QUOTA_HDR_IETF, &d, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "RateLimit-Policy: \"per-key\";q=600;w=60\n"
	                            "RateLimit: \"per-key\";r=599;t=0\n");
}

static void quota_tokens__model_fills_the_headers_of_a_token_refusal(void)
{
	struct fa_quota_spec spec;
	struct fa_quota_decision d;
	struct fa_quota *q;
	char buf[1024];

	roomy(&spec);
	spec.per_key = 600;
	spec.tpm_per_key = 300;
	q = fa_quota_new(&spec, keys, N_KEYS, 1);
	CU_ASSERT(take(q, "k1", 250, 0, &d));
	CU_ASSERT_FALSE(take(q, "k1", 100, 0, &d));
	headers_text(FA_QUOTA_HDR_X, &d, buf, sizeof(buf));
	/* 50 tokens missing at 5 per s: 10 s; full again after 50 s */
	CU_ASSERT_STRING_EQUAL(buf,
	                       "X-RateLimit-Limit: 600\nX-RateLimit-Remaining: 599\n"
	                       "X-RateLimit-Reset: 0\nX-RateLimit-Limit-Tokens: 300\n"
	                       "X-RateLimit-Remaining-Tokens: 50\nX-RateLimit-Reset-Tokens: 10\n");
	headers_text(FA_QUOTA_HDR_OPENAI, &d, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-tokens: 50s\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x-ratelimit-reset-requests: 100ms\n"));
	fa_quota_free(q);
}

/* ---- through the provider, without a socket ---- */

static const char chat_text[] =
        "{\"id\": \"tokens-unit\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
        " %s \"quota\": {\"per_key\": 100, \"tpm_per_key\": 40}},"
        " \"routes\": [{\"id\": \"chat\", \"method\": \"POST\", \"path\": \"/v1/chat/completions\","
        "               \"kind\": \"chat_completions\", \"responses\": [{\"status\": 200, \"times\": 2},"
        "                {\"shape\": \"ai_congested\", \"times\": 1},"
        "                {\"status\": 503, \"retry_after\": 3, \"times\": 1},"
        "                {\"status\": 503, \"retry_after\": {\"seconds\": 3, \"form\": \"imf-fixdate\"}, \"times\": 1},"
        "                {\"status\": 503, \"headers\": {\"Retry-After\": \"4\"}}]},"
        "              {\"id\": \"ok\", \"method\": \"GET\", \"path\": \"/v1/ok\","
        "               \"responses\": [{\"status\": 200}]}]}";

/* The provider playing chat_text with @extra in $.provider. */
static struct fa_provider *start(const char *extra, struct fa_scenario **sc, struct fa_journal **j)
{
	char text[2048];

	snprintf(text, sizeof(text), chat_text, extra);
	return fx_provider_start(text, "t.json", 1, sc, j);
}

/* 40 bytes of prompt: 10 tokens */
#define PROMPT                                                                                     \
	"{\"messages\": [{\"role\": \"user\", \"content\": \"0123456789012345678901234567890123456789\"}]"

static void quota_tokens__provider_meters_a_chat_request_by_its_cost(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p = start("", &sc, &j);
	struct fa_resp r;

	CU_ASSERT_FALSE(sc->retry_after_ms);
	CU_ASSERT_EQUAL(sc->quota.tpm_per_key, 40);
	/* 10 prompt tokens + 20 max_tokens */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT ", \"max_tokens\": 20}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.tokens, 30);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining-Tokens"), "10");
	fx_done(p, &r);
	/* an unusable body: its 400, no token, no quota decision */
	fx_decide(p, "POST", "/v1/chat/completions", "{\"messages\": 1}", &r);
	CU_ASSERT_EQUAL(r.status, 400);
	CU_ASSERT_EQUAL(r.attempt.tokens, -1);
	CU_ASSERT_PTR_NULL(r.attempt.quota);
	fx_done(p, &r);
	/* another 30 do not fit: the platform's 429 naming tokens */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT ", \"max_tokens\": 20}", &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_EQUAL(r.attempt.tokens, 30);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "limited tokens per-key replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "30"); /* 20 tokens at 40/min */
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "retry-after-ms"));        /* not asked for */
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(r.body, "Limit: 40 tokens per minute. Retry after 30 seconds."));
	CU_ASSERT(r.attempt.pause_until_us - r.attempt.t_arrival_us >= 30 * S);
	fx_done(p, &r);
	/* the prompt alone without max_tokens; a non-chat request costs nothing */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT "}", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.tokens, 10);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining-Tokens"), "0");
	fx_done(p, &r);
	fx_decide(p, "GET", "/v1/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.tokens, -1);
	fx_done(p, &r);
	/* more than the bucket ever holds: 400, nothing spent, no pause */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT ", \"max_tokens\": 31}", &r);
	CU_ASSERT_EQUAL(r.status, 400);
	CU_ASSERT_EQUAL(r.attempt.tokens, 41);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "limited over-capacity tokens per-key replica 1");
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "Retry-After"));
	CU_ASSERT_PTR_NULL(r.attempt.retry_after);
	CU_ASSERT_EQUAL(r.attempt.pause_until_us, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"code\":\"tokens_over_limit\""));
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static void quota_tokens__provider_refunds_tokens_and_says_retry_after_ms(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p = start("\"retry_after_ms\": true,", &sc, &j);
	struct fa_resp r;

	CU_ASSERT_TRUE(sc->retry_after_ms);
	for (int i = 0; i < 2; i++) {
		fx_decide(p, "POST", "/v1/chat/completions", PROMPT "}", &r);
		CU_ASSERT_EQUAL(r.status, 200);
		CU_ASSERT_PTR_NULL(fx_resp_header(&r, "retry-after-ms"));
		fx_done(p, &r);
	}
	/* the shape: Retry-After 5 s, 5000 ms, its tokens back */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT "}", &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "5");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "retry-after-ms"), "5000");
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining-Tokens"), "20");
	fx_done(p, &r);
	/* an entry's delta retry_after: 3000 ms, and the 503's tokens back */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT "}", &r);
	CU_ASSERT_EQUAL(r.status, 503);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "retry-after-ms"), "3000");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining-Tokens"), "20");
	fx_done(p, &r);
	/* a date form and a literal header are left alone */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT "}", &r);
	CU_ASSERT_PTR_NOT_NULL(fx_resp_header(&r, "Retry-After"));
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "retry-after-ms"));
	fx_done(p, &r);
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT ", \"max_tokens\": 10}", &r);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "4");
	CU_ASSERT_PTR_NULL(fx_resp_header(&r, "retry-after-ms"));
	fx_done(p, &r);
	/* the quota's own 429: the exact refill in ms, Retry-After its ceil */
	fx_decide(p, "POST", "/v1/chat/completions", PROMPT ", \"max_tokens\": 30}", &r);
	CU_ASSERT_EQUAL(r.status, 429);
	{
		const char *ms = fx_resp_header(&r, "retry-after-ms");
		long long v = ms != NULL ? strtoll(ms, NULL, 10) : 0;
		long long s = strtoll(fx_resp_header(&r, "Retry-After"), NULL, 10);

		/* 20 tokens missing at 40 per minute: 30 s, less what refilled */
		CU_ASSERT(v > 29000 && v <= 30000);
		CU_ASSERT_EQUAL(s, (v + 999) / 1000);
		CU_ASSERT(r.attempt.pause_until_us - r.attempt.t_arrival_us >= v * 1000);
		CU_ASSERT(r.attempt.pause_until_us - r.attempt.t_arrival_us <= v * 1000 + 1000000);
	}
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

static void quota_tokens__scenario_reads_the_new_members(void)
{
	static const char text[] =
	        "{\"id\": \"q\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
	        " \"quota\": {\"tpm_per_key\": 300000, \"tpm_per_user\": 100000000, \"rpd_per_key\": 10000,"
	        "             \"tpd_per_key\": 5, \"day_s\": 30, \"headers\": \"openai\"}},"
	        " \"routes\": [{\"id\": \"ok\", \"method\": \"GET\", \"path\": \"/\","
	        "               \"responses\": [{\"status\": 200}]}]}";
	struct fa_scenario *sc = NULL;
	struct fa_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fa_scenario_parse(text, strlen(text), "q.json", &sc, &err), FA_OK);
	CU_ASSERT_EQUAL(sc->quota.tpm_per_key, 300000);
	CU_ASSERT_EQUAL(sc->quota.tpm_per_user, 100000000);
	CU_ASSERT_EQUAL(sc->quota.rpd_per_key, 10000);
	CU_ASSERT_EQUAL(sc->quota.tpd_per_key, 5);
	CU_ASSERT_EQUAL(sc->quota.day_s, 30);
	CU_ASSERT_EQUAL(sc->quota.headers, FA_QUOTA_HDR_OPENAI);
	CU_ASSERT_FALSE(sc->retry_after_ms);
	fa_scenario_free(sc);
}

void test_quota_tokens_register(void);

void test_quota_tokens_register(void)
{
	CU_pSuite suite = CU_add_suite("quota_tokens", NULL, NULL);

#define T(f) CU_add_test(suite, #f, f)
	T(quota_tokens__tpm_bucket_refills_and_names_the_pause_for_the_cost);
	T(quota_tokens__pause_in_ms_is_exact_and_retry_after_its_ceil);
	T(quota_tokens__replicas_divide_the_token_limit);
	T(quota_tokens__key_then_user_and_no_debit_when_the_user_refuses);
	T(quota_tokens__refund_gives_the_tokens_back);
	T(quota_tokens__daily_buckets_with_a_shortened_day);
	T(quota_tokens__cost_over_a_whole_bucket_is_refused_for_good);
	T(quota_tokens__a_request_without_cost_takes_no_tokens);
	T(quota_tokens__headers_describe_the_token_bucket);
	T(quota_tokens__model_fills_the_headers_of_a_token_refusal);
	T(quota_tokens__provider_meters_a_chat_request_by_its_cost);
	T(quota_tokens__provider_refunds_tokens_and_says_retry_after_ms);
	T(quota_tokens__scenario_reads_the_new_members);
#undef T
}
