/* test_shape.c -- the platform's 429 and 503 answers, field by field, and the state behind them. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "provider.h"
#include "provider_fixture.h"
#include "scenario.h"
#include "shape.h"

#define S 1000000LL /* µs per second */

/* 2026-11-30T08:55:09.250000Z */
#define WALL 1796028909250000LL

/* The header @name of @a, or NULL. */
static const char *ans_header(const struct fa_shape_answer *a, const char *name)
{
	for (size_t i = 0; i < a->n_headers; i++)
		if (strcmp(a->headers[i].name, name) == 0)
			return a->headers[i].value;
	return NULL;
}

/* Render @shape with default tuning at time 0. */
static void render(struct fa_shape_state *st, enum fa_shape shape, struct fa_shape_answer *a)
{
	struct fa_shape_spec spec = { .shape = shape };

	fa_shape_render(st, &spec, NULL, 0, WALL, a);
}

/* Member names of object @o, joined by ",". */
static void members(const cJSON *o, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const cJSON *c = o->child; c != NULL; c = c->next) {
		if (buf[0] != '\0')
			strncat(buf, ",", len - strlen(buf) - 1);
		strncat(buf, c->string, len - strlen(buf) - 1);
	}
}

static const cJSON *get(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

static void shape__cluster_path_has_provider_status_and_no_scope(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	struct fa_shape_answer a;
	const cJSON *e;
	char names[256];

	render(st, FA_SHAPE_RATE_LIMIT_CLUSTER, &a);
	CU_ASSERT_EQUAL(a.status, 429);
	CU_ASSERT_EQUAL(a.retry_after_s, 12);
	CU_ASSERT_EQUAL(a.n_headers, 1);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "12");
	CU_ASSERT_PTR_NULL(ans_header(&a, "X-RateLimit-Scope"));
	members(a.body, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "error");
	e = get(a.body, "error");
	members(e, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "type,code,message,providerStatusCode,retryAfter");
	CU_ASSERT_STRING_EQUAL(get(e, "type")->valuestring, "rate_limit_exceeded");
	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "rate_limit_exceeded");
	CU_ASSERT(cJSON_IsString(get(e, "message")));
	CU_ASSERT(cJSON_IsNumber(get(e, "providerStatusCode")));
	CU_ASSERT_EQUAL(get(e, "providerStatusCode")->valueint, 429);
	CU_ASSERT(cJSON_IsNumber(get(e, "retryAfter")));
	CU_ASSERT_EQUAL(get(e, "retryAfter")->valueint, 12);
	CU_ASSERT_PTR_NULL(get(e, "scope"));
	CU_ASSERT_PTR_NULL(get(e, "limit"));
	fa_shape_answer_release(&a);
	fa_shape_state_free(st);
}

static void shape__congested_says_shed_and_the_others_do_not(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	struct fa_shape_spec spec = { .shape = FA_SHAPE_AI_CONGESTED, .retry_after_s = 9 };
	struct fa_shape_answer a;
	char names[256];
	const cJSON *e;

	fa_shape_render(st, &spec, NULL, 0, WALL, &a);
	CU_ASSERT_EQUAL(a.status, 429);
	CU_ASSERT_EQUAL(a.n_headers, 2);
	CU_ASSERT_STRING_EQUAL(a.headers[0].name, "Retry-After");
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "9");
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "X-AI-Admission"), "shed");
	e = get(a.body, "error");
	members(e, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "code,message,retryAfter");
	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "ai_congested");
	CU_ASSERT_EQUAL(get(e, "retryAfter")->valueint, 9);
	fa_shape_answer_release(&a);
	/* the default pause */
	render(st, FA_SHAPE_AI_CONGESTED, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "5");
	fa_shape_answer_release(&a);
	/* no other shape carries X-AI-Admission */
	for (int s = FA_SHAPE_NONE + 1; s < FA_SHAPE_COUNT; s++) {
		if (s == FA_SHAPE_AI_CONGESTED)
			continue;
		render(st, (enum fa_shape)s, &a);
		CU_ASSERT_PTR_NULL(ans_header(&a, "X-AI-Admission"));
		CU_ASSERT_PTR_NULL(ans_header(&a, "X-RateLimit-Scope"));
		CU_ASSERT_PTR_NOT_NULL(ans_header(&a, "Retry-After"));
		fa_shape_answer_release(&a);
	}
	fa_shape_state_free(st);
}

static void shape__pacing_comes_in_the_success_envelope(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	struct fa_shape_spec spec = { .shape = FA_SHAPE_AI_PACING_LIMITED, .retry_after_s = 30 };
	struct fa_shape_answer a;
	char names[256];
	const cJSON *e;

	fa_shape_render(st, &spec, NULL, 0, WALL, &a);
	CU_ASSERT_EQUAL(a.status, 429);
	CU_ASSERT_EQUAL(a.n_headers, 1);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "30");
	members(a.body, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "success,error");
	CU_ASSERT(cJSON_IsFalse(get(a.body, "success")));
	e = get(a.body, "error");
	members(e, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "code,message,reason,overageDenied,resetAt");
	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "ai_pacing_limited");
	CU_ASSERT_STRING_EQUAL(get(e, "reason")->valuestring, "daily_window_exceeded");
	CU_ASSERT(cJSON_IsTrue(get(e, "overageDenied")));
	/* 08:55:09.25 + 30 s, rounded up to the whole second */
	CU_ASSERT_STRING_EQUAL(get(e, "resetAt")->valuestring, "2026-11-30T08:55:40Z");
	fa_shape_answer_release(&a);
	render(st, FA_SHAPE_AI_PACING_LIMITED, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "60");
	CU_ASSERT_STRING_EQUAL(get(get(a.body, "error"), "resetAt")->valuestring,
	                       "2026-11-30T08:56:10Z");
	fa_shape_answer_release(&a);
	fa_shape_state_free(st);
}

static void shape__transient_503s_match_the_platform_example(void)
{
	static const enum fa_shape shapes[] = { FA_SHAPE_POOL_EXHAUSTED, FA_SHAPE_DB_TRANSIENT };
	struct fa_shape_state *st = fa_shape_state_new(7);
	struct fa_shape_answer a;
	char names[256], ra[8];
	const cJSON *e;

	for (size_t i = 0; i < 2; i++) {
		render(st, shapes[i], &a);
		CU_ASSERT_EQUAL(a.status, 503);
		CU_ASSERT(a.retry_after_s >= 3 && a.retry_after_s <= 7);
		CU_ASSERT_EQUAL(a.n_headers, 1);
		snprintf(ra, sizeof(ra), "%d", a.retry_after_s);
		CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), ra);
		e = get(a.body, "error");
		members(a.body, names, sizeof(names));
		CU_ASSERT_STRING_EQUAL(names, "error");
		members(e, names, sizeof(names));
		CU_ASSERT_STRING_EQUAL(names, "code,type,retryAfter");
		CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, fa_shape_str(shapes[i]));
		CU_ASSERT_STRING_EQUAL(get(e, "type")->valuestring, "server_error");
		CU_ASSERT(cJSON_IsNumber(get(e, "retryAfter")));
		CU_ASSERT_EQUAL(get(e, "retryAfter")->valueint, a.retry_after_s);
		fa_shape_answer_release(&a);
	}
	CU_ASSERT_STRING_EQUAL(fa_shape_str(FA_SHAPE_POOL_EXHAUSTED), "pool_exhausted");
	CU_ASSERT_STRING_EQUAL(fa_shape_str(FA_SHAPE_DB_TRANSIENT), "db_transient");
	fa_shape_state_free(st);
}

static void shape__draws_stay_in_range_and_repeat_by_seed(void)
{
	struct fa_shape_state *a = fa_shape_state_new(42);
	struct fa_shape_state *b = fa_shape_state_new(42);
	struct fa_shape_state *c = fa_shape_state_new(43);
	int first[64], seen[8] = { 0 };
	bool differs = false;

	for (int i = 0; i < 10000; i++) {
		int x = fa_shape_draw_transient(a);

		CU_ASSERT_FATAL(x >= 3 && x <= 7);
		seen[x]++;
		if (i < 64)
			first[i] = x;
		CU_ASSERT_EQUAL(x, fa_shape_draw_transient(b));
		if (fa_shape_draw_transient(c) != x)
			differs = true;
	}
	for (int x = 3; x <= 7; x++)
		CU_ASSERT(seen[x] > 1500); /* about 2000 each */
	CU_ASSERT(differs);
	/* a reset replays the sequence from the start */
	fa_shape_state_reset(a);
	for (int i = 0; i < 64; i++)
		CU_ASSERT_EQUAL(fa_shape_draw_transient(a), first[i]);
	fa_shape_state_free(a);
	fa_shape_state_free(b);
	fa_shape_state_free(c);
}

static void shape__cooldown_doubles_up_to_four_times_the_first(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	int64_t t = 5 * S;

	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t), 60);
	/* while it runs: what is left, rounded up */
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t + 30 * S), 30);
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t + 59 * S + 1), 1);
	/* over: the cluster still fails, the next one is longer */
	t += 60 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t), 120);
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t + 100 * S), 20);
	t += 120 * S + 3 * S; /* a little after its end */
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t), 240);
	t += 240 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t), 240);     /* the cap */
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t + 1), 240); /* 239.999999 s left */
	/* the cluster answered: the streak is over, the running one stays */
	fa_shape_cluster_ok(st);
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t + 40 * S), 200);
	t += 240 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 60, t), 60);
	/* a shortened base: 1, 2, 4, 4 */
	fa_shape_state_reset(st);
	t = 0;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 1, t), 1);
	t += 1 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 1, t), 2);
	t += 2 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 1, t), 4);
	t += 4 * S;
	CU_ASSERT_EQUAL(fa_shape_cooldown(st, 1, t), 4);
	fa_shape_state_free(st);
}

static void shape__cooldown_answer_carries_what_is_left(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	struct fa_shape_spec spec = { .shape = FA_SHAPE_AI_PROVIDER_COOLDOWN };
	struct fa_shape_answer a;
	char names[256];
	const cJSON *e;

	fa_shape_render(st, &spec, NULL, 0, WALL, &a);
	CU_ASSERT_EQUAL(a.status, 429);
	CU_ASSERT_EQUAL(a.n_headers, 1);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "60");
	e = get(a.body, "error");
	members(e, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "code,message,retryAfter");
	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "ai_provider_cooldown");
	CU_ASSERT_EQUAL(get(e, "retryAfter")->valueint, 60);
	fa_shape_answer_release(&a);
	fa_shape_render(st, &spec, NULL, 45 * S, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "15");
	CU_ASSERT_EQUAL(get(get(a.body, "error"), "retryAfter")->valueint, 15);
	fa_shape_answer_release(&a);
	/* the first is over, the cluster still fails: the next is twice as long */
	fa_shape_render(st, &spec, NULL, 60 * S, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "120");
	fa_shape_answer_release(&a);
	/* "cooldown_s" shortens the base (and so the cap: 4 x 2 s) */
	fa_shape_state_reset(st);
	spec.cooldown_s = 2;
	fa_shape_render(st, &spec, NULL, 0, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "2");
	fa_shape_answer_release(&a);
	fa_shape_state_free(st);
}

static void shape__deadline_budget_is_only_ever_shortened(void)
{
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, NULL), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "1500"), 1500);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, " 1500 "), 1500);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "59999"), 59999);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "1"), 1);
	/* larger or equal: the platform's */
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "60000"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "90000"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "99999999999999999999999"), 60000);
	/* non-positive or non-numeric: as if absent */
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "0"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "000"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "-5"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "+5"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "abc"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "15s"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "1.5"), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, ""), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(60000, "   "), 60000);
	CU_ASSERT_EQUAL(fa_shape_deadline_budget(2000, "1999"), 1999);
}

static void shape__deadline_answer_names_the_budget_it_had(void)
{
	struct fa_shape_state *st = fa_shape_state_new(1);
	struct fa_shape_spec spec = { .shape = FA_SHAPE_AI_DEADLINE_EXCEEDED };
	struct fa_shape_answer a;
	char names[256];
	const cJSON *e;

	fa_shape_render(st, &spec, NULL, 0, WALL, &a);
	CU_ASSERT_EQUAL(a.status, 429);
	CU_ASSERT_EQUAL(a.n_headers, 2);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "5");
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "X-AI-Deadline-Ms"), "60000");
	e = get(a.body, "error");
	members(e, names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "type,code,message,retryAfter");
	CU_ASSERT_STRING_EQUAL(get(e, "type")->valuestring, "rate_limit_exceeded");
	CU_ASSERT_STRING_EQUAL(get(e, "code")->valuestring, "ai_deadline_exceeded");
	CU_ASSERT_EQUAL(get(e, "retryAfter")->valueint, 5);
	fa_shape_answer_release(&a);
	spec.deadline_ms = 8000;
	spec.retry_after_s = 2;
	fa_shape_render(st, &spec, "2500", 0, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "X-AI-Deadline-Ms"), "2500");
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "Retry-After"), "2");
	fa_shape_answer_release(&a);
	fa_shape_render(st, &spec, "9000", 0, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "X-AI-Deadline-Ms"), "8000");
	fa_shape_answer_release(&a);
	fa_shape_render(st, &spec, "-1", 0, WALL, &a);
	CU_ASSERT_STRING_EQUAL(ans_header(&a, "X-AI-Deadline-Ms"), "8000");
	fa_shape_answer_release(&a);
	fa_shape_state_free(st);
}

/* ---- through the provider ---- */

static const char provider_text[] =
        "{\"id\": \"shapes\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
        "  \"quota\": {\"per_key\": 2, \"period_s\": 60}},"
        " \"routes\": ["
        "  {\"id\": \"cluster\", \"method\": \"GET\", \"path\": \"/c\","
        "   \"responses\": [{\"shape\": \"rate_limit_cluster\", \"retry_after_s\": 3}]},"
        "  {\"id\": \"pool\", \"method\": \"GET\", \"path\": \"/p\","
        "   \"responses\": [{\"shape\": \"pool_exhausted\", \"status\": 503,"
        "                    \"headers\": {\"X-Extra\": \"1\"}}]},"
        "  {\"id\": \"cool\", \"method\": \"GET\", \"path\": \"/cool\","
        "   \"responses\": [{\"shape\": \"ai_provider_cooldown\", \"cooldown_s\": 7}]},"
        "  {\"id\": \"ok\", \"method\": \"GET\", \"path\": \"/ok\","
        "   \"responses\": [{\"status\": 200}]}]}";

static void shape__provider_renders_refunds_and_journals_the_pause(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_resp r;
	int first_pool;

	p = fx_provider_start(provider_text, "s.json", 5, &sc, &j);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].status, 429);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].shape.shape, FA_SHAPE_RATE_LIMIT_CLUSTER);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].shape.retry_after_s, 3);
	CU_ASSERT_EQUAL(sc->routes[2].responses[0].shape.cooldown_s, 7);
	CU_ASSERT_EQUAL(sc->routes[3].responses[0].shape.shape, FA_SHAPE_NONE);

	/* four shaped answers on a key allowed two: each got its token back */
	for (int i = 0; i < 4; i++) {
		fx_decide(p, "GET", "/c", NULL, &r);
		CU_ASSERT_EQUAL(r.status, 429);
		CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
		CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "3");
		CU_ASSERT_PTR_NULL(fx_resp_header(&r, "X-RateLimit-Scope"));
		CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-RateLimit-Remaining"), "2");
		CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "application/json");
		CU_ASSERT_STRING_EQUAL(r.attempt.retry_after, "3");
		CU_ASSERT_EQUAL(r.attempt.status, 429);
		CU_ASSERT(r.attempt.pause_until_us >= r.attempt.t_arrival_us + 3 * S);
		CU_ASSERT(r.attempt.pause_until_us <= fa_provider_now_us(p) + 3 * S);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "\"providerStatusCode\":429"));
		fx_done(p, &r);
	}
	fx_decide(p, "GET", "/p", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 503);
	CU_ASSERT_STRING_EQUAL(r.attempt.quota, "refunded replica 1");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "X-Extra"), "1");
	first_pool = (int)strtol(fx_resp_header(&r, "Retry-After"), NULL, 10);
	CU_ASSERT(first_pool >= 3 && first_pool <= 7);
	/* the instant Retry-After names, counted from when the answer goes out */
	CU_ASSERT(r.attempt.pause_until_us >= r.attempt.t_arrival_us + first_pool * S);
	CU_ASSERT(r.attempt.pause_until_us <= fa_provider_now_us(p) + first_pool * S);
	fx_done(p, &r);
	/* the cooldown runs: the second answer has what is left */
	fx_decide(p, "GET", "/cool", NULL, &r);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "7");
	fx_done(p, &r);
	fx_decide(p, "GET", "/cool", NULL, &r);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "7"); /* < 1 s later */
	fx_done(p, &r);
	fx_decide(p, "GET", "/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 200);
	fx_done(p, &r);
	/* a reset replays the 503 draws from the seed */
	fa_provider_reset(p);
	fx_decide(p, "GET", "/p", NULL, &r);
	CU_ASSERT_EQUAL((int)strtol(fx_resp_header(&r, "Retry-After"), NULL, 10), first_pool);
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

void test_shape_register(void)
{
	CU_pSuite suite = CU_add_suite("shape", NULL, NULL);

	CU_add_test(suite, "shape__cluster_path_has_provider_status_and_no_scope",
	            shape__cluster_path_has_provider_status_and_no_scope);
	CU_add_test(suite, "shape__congested_says_shed_and_the_others_do_not",
	            shape__congested_says_shed_and_the_others_do_not);
	CU_add_test(suite, "shape__pacing_comes_in_the_success_envelope",
	            shape__pacing_comes_in_the_success_envelope);
	CU_add_test(suite, "shape__transient_503s_match_the_platform_example",
	            shape__transient_503s_match_the_platform_example);
	CU_add_test(suite, "shape__draws_stay_in_range_and_repeat_by_seed",
	            shape__draws_stay_in_range_and_repeat_by_seed);
	CU_add_test(suite, "shape__cooldown_doubles_up_to_four_times_the_first",
	            shape__cooldown_doubles_up_to_four_times_the_first);
	CU_add_test(suite, "shape__cooldown_answer_carries_what_is_left",
	            shape__cooldown_answer_carries_what_is_left);
	CU_add_test(suite, "shape__deadline_budget_is_only_ever_shortened",
	            shape__deadline_budget_is_only_ever_shortened);
	CU_add_test(suite, "shape__deadline_answer_names_the_budget_it_had",
	            shape__deadline_answer_names_the_budget_it_had);
	CU_add_test(suite, "shape__provider_renders_refunds_and_journals_the_pause",
	            shape__provider_renders_refunds_and_journals_the_pause);
}
