/* test_metrics.c -- the metrics table, its Prometheus text, and what the provider counts in it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "admin.h"
#include "alloc.h"
#include "metrics.h"
#include "provider.h"
#include "provider_fixture.h"

/* Does @text hold @line as a whole line? */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *at = strstr(text, line); at != NULL; at = strstr(at + 1, line))
		if ((at == text || at[-1] == '\n') && at[n] == '\n')
			return true;
	return false;
}

/* Where @line starts in @text (as has_line() finds it), or -1. */
static long line_at(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *at = strstr(text, line); at != NULL; at = strstr(at + 1, line))
		if ((at == text || at[-1] == '\n') && at[n] == '\n')
			return at - text;
	return -1;
}

static void metrics__families_without_labels_read_zero_from_the_start(void)
{
	struct fa_metrics *m = fa_metrics_new();
	size_t len = 0;
	char *text = fa_metrics_text(m, &len);
	size_t types = 0;

	CU_ASSERT_EQUAL(len, strlen(text));
	CU_ASSERT(len > 0 && text[len - 1] == '\n');
	CU_ASSERT(has_line(text, "fakeapi_tokens_reserved_total 0"));
	CU_ASSERT(has_line(text, "fakeapi_tokens_refunded_total 0"));
	CU_ASSERT(has_line(text, "fakeapi_pauses_in_force 0"));
	CU_ASSERT(has_line(text, "fakeapi_journal_entries 0"));
	CU_ASSERT(has_line(text, "fakeapi_journal_bytes_total 0"));
	/* a labelled family has no series before its first count */
	CU_ASSERT_PTR_NULL(strstr(text, "fakeapi_attempts_total{"));
	CU_ASSERT(has_line(text, "# TYPE fakeapi_attempts_total counter"));
	CU_ASSERT(has_line(text, "# TYPE fakeapi_requests_in_flight gauge"));
	for (const char *at = strstr(text, "# TYPE "); at != NULL; at = strstr(at + 1, "# TYPE "))
		types++;
	CU_ASSERT_EQUAL(types, FA_METRIC_COUNT);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_TOKENS_RESERVED, NULL), 0);
	free(text);
	fa_metrics_free(m);
	fa_metrics_free(NULL);
}

static void metrics__every_family_has_help_before_its_type(void)
{
	struct fa_metrics *m = fa_metrics_new();
	char *text = fa_metrics_text(m, NULL);
	/* the names and types docs/internals.md lists */
	static const char *const want[][2] = {
		{ "fakeapi_attempts_total", "counter" },
		{ "fakeapi_streams_total", "counter" },
		{ "fakeapi_rate_limit_refusals_total", "counter" },
		{ "fakeapi_tokens_reserved_total", "counter" },
		{ "fakeapi_tokens_refunded_total", "counter" },
		{ "fakeapi_pauses_in_force", "gauge" },
		{ "fakeapi_requests_in_flight", "gauge" },
		{ "fakeapi_journal_entries", "gauge" },
		{ "fakeapi_journal_bytes_total", "counter" },
	};
	long last = -1;

	CU_ASSERT_EQUAL_FATAL(sizeof(want) / sizeof(want[0]), FA_METRIC_COUNT);
	for (size_t i = 0; i < FA_METRIC_COUNT; i++) {
		char type[128], help[128];
		const char *h;

		snprintf(type, sizeof(type), "# TYPE %s %s\n", want[i][0], want[i][1]);
		snprintf(help, sizeof(help), "# HELP %s ", want[i][0]);
		h = strstr(text, help);
		CU_ASSERT_PTR_NOT_NULL_FATAL(h);
		/* some words of help, then the TYPE line right after it */
		CU_ASSERT(strchr(h, '\n') - h > (long)strlen(help) + 10);
		CU_ASSERT(strncmp(strchr(h, '\n') + 1, type, strlen(type)) == 0);
		CU_ASSERT(h - text > last);
		last = h - text;
	}
	free(text);
	fa_metrics_free(m);
}

static void metrics__counts_each_label_set_apart(void)
{
	struct fa_metrics *m = fa_metrics_new();
	const char *ok[] = { "read", "200", "respond" };
	const char *limited[] = { "read", "429", "respond" };
	const char *nokey[] = { NULL, "401", "unauthorized" };
	const char *nokey_empty[] = { "", "401", "unauthorized" };
	/* the same bytes split at another place are another series */
	const char *ab_c[] = { "ab", "c", "x" };
	const char *a_bc[] = { "a", "bc", "x" };
	char *text;

	fa_metrics_add(m, FA_METRIC_ATTEMPTS, ok, 1);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, ok, 1);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, limited, 1);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, nokey, 1);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, nokey_empty, 2);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, ab_c, 5);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, a_bc, 7);
	fa_metrics_add(m, FA_METRIC_TOKENS_RESERVED, NULL, 40);
	fa_metrics_add(m, FA_METRIC_TOKENS_RESERVED, NULL, 2);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, ok), 2);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, limited), 1);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, nokey), 3);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, ab_c), 5);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, a_bc), 7);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_TOKENS_RESERVED, NULL), 42);
	/* the same label values in another family are another series */
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_REFUSALS, ok), 0);
	text = fa_metrics_text(m, NULL);
	CU_ASSERT(has_line(text, "fakeapi_attempts_total{route=\"read\",status=\"200\","
	                         "fault=\"respond\"} 2"));
	CU_ASSERT(has_line(text, "fakeapi_attempts_total{route=\"\",status=\"401\","
	                         "fault=\"unauthorized\"} 3"));
	CU_ASSERT(
	        has_line(text, "fakeapi_attempts_total{route=\"ab\",status=\"c\",fault=\"x\"} 5"));
	CU_ASSERT(
	        has_line(text, "fakeapi_attempts_total{route=\"a\",status=\"bc\",fault=\"x\"} 7"));
	CU_ASSERT(has_line(text, "fakeapi_tokens_reserved_total 42"));
	CU_ASSERT_PTR_NULL(strstr(text, "fakeapi_rate_limit_refusals_total{"));
	free(text);
	fa_metrics_free(m);
}

static void metrics__label_values_are_escaped_as_the_format_says(void)
{
	struct fa_metrics *m = fa_metrics_new();
	const char *odd[] = { "say \"hi\"\\now\nthen", "200", "respond" };
	const char *plain[] = { "tab\there {x}, y=z", "200", "respond" };
	char *text;

	fa_metrics_add(m, FA_METRIC_ATTEMPTS, odd, 1);
	fa_metrics_add(m, FA_METRIC_ATTEMPTS, plain, 1);
	text = fa_metrics_text(m, NULL);
	/* backslash, double quote and line feed escaped; nothing else */
	CU_ASSERT(has_line(text, "fakeapi_attempts_total{route=\"say \\\"hi\\\"\\\\now\\nthen\","
	                         "status=\"200\",fault=\"respond\"} 1"));
	CU_ASSERT(has_line(text, "fakeapi_attempts_total{route=\"tab\there {x}, y=z\","
	                         "status=\"200\",fault=\"respond\"} 1"));
	/* the raw line feed never reaches the text */
	CU_ASSERT_PTR_NULL(strstr(text, "now\nthen"));
	free(text);
	fa_metrics_free(m);
}

static void metrics__series_are_sorted_within_their_family(void)
{
	struct fa_metrics *m = fa_metrics_new();
	const char *const ends[] = { "stall", "done", "cut", "client_gone", "error_frame" };
	const char *const want[] = { "client_gone", "cut", "done", "error_frame", "stall" };
	const size_t want_n[] = { 4, 3, 2, 5, 1 }; /* ends[i] counts i + 1 */
	const char *scope[] = { "key:a" };
	long last;
	char *text;

	for (size_t i = 0; i < 5; i++)
		fa_metrics_add(m, FA_METRIC_STREAMS, &ends[i], i + 1);
	fa_metrics_set(m, FA_METRIC_IN_FLIGHT, scope, 3);
	text = fa_metrics_text(m, NULL);
	last = line_at(text, "# TYPE fakeapi_streams_total counter");
	CU_ASSERT_FATAL(last >= 0);
	for (size_t i = 0; i < 5; i++) {
		char line[96];
		long at;

		snprintf(line, sizeof(line), "fakeapi_streams_total{end=\"%s\"} %zu", want[i],
		         want_n[i]);
		at = line_at(text, line);
		CU_ASSERT(at > last);
		last = at;
	}
	/* the family's series come before the next family's HELP */
	CU_ASSERT(last < line_at(text, "# TYPE fakeapi_rate_limit_refusals_total counter"));
	CU_ASSERT(line_at(text, "fakeapi_requests_in_flight{scope=\"key:a\"} 3") >
	          line_at(text, "# TYPE fakeapi_requests_in_flight gauge"));
	free(text);
	fa_metrics_free(m);
}

static void metrics__set_replaces_what_add_adds_to(void)
{
	struct fa_metrics *m = fa_metrics_new();
	const char *scope[] = { "user:u" };

	fa_metrics_set(m, FA_METRIC_IN_FLIGHT, scope, 5);
	fa_metrics_add(m, FA_METRIC_IN_FLIGHT, scope, 1);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_IN_FLIGHT, scope), 6);
	fa_metrics_set(m, FA_METRIC_IN_FLIGHT, scope, 0);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_IN_FLIGHT, scope), 0);
	fa_metrics_set(m, FA_METRIC_JOURNAL_BYTES, NULL, 1234567890123ull);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_JOURNAL_BYTES, NULL), 1234567890123ull);
	fa_metrics_free(m);
}

static void metrics__thousands_of_series_survive_the_table_growing(void)
{
	struct fa_metrics *m = fa_metrics_new();
	char route[32], *text;
	const char *labels[] = { route, "200", "respond" };
	bool all = true;

	for (unsigned i = 0; i < 3000; i++) {
		snprintf(route, sizeof(route), "route-%u", i);
		fa_metrics_add(m, FA_METRIC_ATTEMPTS, labels, i + 1);
	}
	for (unsigned i = 0; i < 3000; i++) {
		snprintf(route, sizeof(route), "route-%u", i);
		all = all && fa_metrics_get(m, FA_METRIC_ATTEMPTS, labels) == i + 1;
	}
	CU_ASSERT(all);
	text = fa_metrics_text(m, NULL);
	CU_ASSERT(has_line(text, "fakeapi_attempts_total{route=\"route-2999\",status=\"200\","
	                         "fault=\"respond\"} 3000"));
	free(text);
	fa_metrics_free(m);
}

/* One thread of the concurrency test: 10000 counts on two series. */
static void *count_many(void *arg)
{
	struct fa_metrics *m = arg;
	const char *ok[] = { "r", "200", "respond" };

	for (int i = 0; i < 10000; i++) {
		fa_metrics_add(m, FA_METRIC_ATTEMPTS, ok, 1);
		fa_metrics_add(m, FA_METRIC_TOKENS_RESERVED, NULL, 2);
	}
	return NULL;
}

static void metrics__counts_from_many_threads_add_up(void)
{
	struct fa_metrics *m = fa_metrics_new();
	const char *ok[] = { "r", "200", "respond" };
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, count_many, m), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_ATTEMPTS, ok), 40000);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_TOKENS_RESERVED, NULL), 80000);
	fa_metrics_free(m);
}

/* A provider metering 2 requests and 100 tokens per key per minute; a
 * route that pauses its scope once, a chat route that answers 200 then 503. */
static const char quota_text[] =
        "{\"id\": \"metrics\","
        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"},"
        "                          \"k2\": {\"secret\": \"s2\", \"user\": \"v\"}},"
        "              \"scope\": \"key\","
        "              \"quota\": {\"per_key\": 2, \"tpm_per_key\": 100}},"
        " \"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/r\","
        "   \"responses\": [{\"times\": 1, \"status\": 429, \"retry_after\": 30},"
        "                   {\"status\": 200}]},"
        "  {\"id\": \"chat\", \"kind\": \"chat_completions\", \"method\": \"POST\","
        "   \"path\": \"/v1/chat/completions\","
        "   \"responses\": [{\"times\": 1, \"status\": 200}, {\"status\": 503}]}]}";

/* 40 bytes of prompt (10 tokens) and @max_tokens. */
static char *chat_body(int max_tokens)
{
	return fa_xasprintf("{\"messages\": [{\"role\": \"user\", \"content\": "
	                    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}], \"max_tokens\": %d}",
	                    max_tokens);
}

/* Decide and finish one request as @secret (NULL: no key); the status. */
static int ask(struct fa_provider *p, const char *secret, const char *method, const char *path,
               const char *body)
{
	struct fa_resp r;
	int status;

	if (secret != NULL) {
		fx_decide_as(p, secret, method, path, body, &r);
	} else {
		struct fa_req q = { .method = method, .path = path, .conn_id = 1 };

		memset(&r, 0, sizeof(r));
		fa_provider_decide(p, &q, &r);
	}
	status = r.status;
	fx_done(p, &r);
	return status;
}

static uint64_t attempts(struct fa_provider *p, const char *route, const char *status,
                         const char *fault)
{
	const char *labels[] = { route, status, fault };

	return fa_metrics_get(fa_provider_metrics(p), FA_METRIC_ATTEMPTS, labels);
}

static uint64_t refusals(struct fa_provider *p, const char *scope, const char *limit,
                         const char *status)
{
	const char *labels[] = { scope, limit, status };

	return fa_metrics_get(fa_provider_metrics(p), FA_METRIC_REFUSALS, labels);
}

static void metrics__provider_counts_attempts_refusals_and_tokens(void)
{
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = fx_provider_start(quota_text, "metrics.json", 1, &sc, &j);
	struct fa_metrics *m = fa_provider_metrics(p);
	char *body20 = chat_body(10), *body500 = chat_body(500);

	CU_ASSERT_EQUAL(ask(p, "s1", "GET", "/v1/r", NULL), 429); /* refunded: costs 0 */
	CU_ASSERT_EQUAL(ask(p, "s1", "POST", "/v1/chat/completions", body20), 200);  /* 20 */
	CU_ASSERT_EQUAL(ask(p, "s1", "POST", "/v1/chat/completions", body20), 503);  /* refunded */
	CU_ASSERT_EQUAL(ask(p, "s1", "POST", "/v1/chat/completions", body500), 400); /* over 100 */
	CU_ASSERT_EQUAL(ask(p, "s1", "GET", "/v1/r", NULL), 200); /* the key's 2nd request */
	CU_ASSERT_EQUAL(ask(p, "s1", "GET", "/v1/r", NULL), 429); /* the quota's */
	CU_ASSERT_EQUAL(ask(p, NULL, "GET", "/v1/r", NULL), 401);
	CU_ASSERT_EQUAL(attempts(p, "r", "429", "respond"), 1);
	CU_ASSERT_EQUAL(attempts(p, "r", "200", "respond"), 1);
	CU_ASSERT_EQUAL(attempts(p, "chat", "200", "respond"), 1);
	CU_ASSERT_EQUAL(attempts(p, "chat", "503", "respond"), 1);
	/* a refusal answers for no route, as the journal says */
	CU_ASSERT_EQUAL(attempts(p, "", "400", "quota"), 1);
	CU_ASSERT_EQUAL(attempts(p, "", "429", "quota"), 1);
	CU_ASSERT_EQUAL(attempts(p, "", "401", "unauthorized"), 1);
	CU_ASSERT_EQUAL(refusals(p, "per-key", "tokens", "400"), 1);
	CU_ASSERT_EQUAL(refusals(p, "per-key", "requests", "429"), 1);
	CU_ASSERT_EQUAL(refusals(p, "per-key", "requests", "400"), 0);
	/* the two chats admitted reserved 20 tokens each; the 503 gave its 20 back */
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_TOKENS_RESERVED, NULL), 40);
	CU_ASSERT_EQUAL(fa_metrics_get(m, FA_METRIC_TOKENS_REFUNDED, NULL), 20);
	CU_ASSERT_EQUAL(fa_journal_count(j), 7);
	/* a reset empties the journal; the counters go on */
	fa_provider_reset(p);
	CU_ASSERT_EQUAL(attempts(p, "r", "429", "respond"), 1);
	free(body20);
	free(body500);
	fx_provider_stop(p, j, sc);
}

static void metrics__provider_reads_the_gauges_at_scrape_time(void)
{
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = fx_provider_start(quota_text, "metrics.json", 1, &sc, &j);
	struct fa_resp held;
	char *text, line[64];

	CU_ASSERT_EQUAL(ask(p, "s1", "GET", "/v1/r", NULL), 429); /* pauses key:k1 for 30 s */
	fx_decide_as(p, "s2", "GET", "/v1/r", NULL, &held);       /* in flight until finished */
	CU_ASSERT_EQUAL(held.status, 200);
	text = fa_provider_metrics_text(p, NULL);
	CU_ASSERT(has_line(text, "fakeapi_pauses_in_force 1"));
	CU_ASSERT(has_line(text, "fakeapi_requests_in_flight{scope=\"key:k1\"} 0"));
	CU_ASSERT(has_line(text, "fakeapi_requests_in_flight{scope=\"key:k2\"} 1"));
	CU_ASSERT(has_line(text, "fakeapi_journal_entries 1"));
	snprintf(line, sizeof(line), "fakeapi_journal_bytes_total %llu",
	         (unsigned long long)fa_journal_bytes(j));
	CU_ASSERT(fa_journal_bytes(j) > 100);
	CU_ASSERT(has_line(text, line));
	free(text);
	/* the stream end the server sets is counted with the attempt */
	held.attempt.stream_end = fa_xstrdup("client_gone");
	fx_done(p, &held);
	/* a reset ends the pause; the entries kept go, the bytes written stay */
	fa_provider_reset(p);
	text = fa_provider_metrics_text(p, NULL);
	CU_ASSERT(has_line(text, "fakeapi_pauses_in_force 0"));
	CU_ASSERT(has_line(text, "fakeapi_requests_in_flight{scope=\"key:k2\"} 0"));
	CU_ASSERT(has_line(text, "fakeapi_streams_total{end=\"client_gone\"} 1"));
	CU_ASSERT(has_line(text, "fakeapi_journal_entries 0"));
	snprintf(line, sizeof(line), "fakeapi_journal_bytes_total %llu",
	         (unsigned long long)fa_journal_bytes(j));
	CU_ASSERT(has_line(text, line));
	free(text);
	fx_provider_stop(p, j, sc);
}

/* GET @path on @p as the server routes it: the admin module when the
 * provider has it on, else an attempt. */
static void as_server(struct fa_provider *p, const char *method, const char *path,
                      struct fa_resp *r)
{
	struct fa_req q = {
		.method = method, .path = path, .conn_id = 1, .t_arrival_us = fa_provider_now_us(p)
	};

	memset(r, 0, sizeof(*r));
	if (fa_provider_admin_on(p) && fa_admin_is_admin_path(path))
		fa_admin_handle(p, &q, r);
	else
		fa_provider_decide(p, &q, r);
}

static void metrics__admin_endpoint_serves_the_text_unless_the_admin_api_is_off(void)
{
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = fx_provider_start(quota_text, "metrics.json", 1, &sc, &j);
	struct fa_resp r;
	char *text;

	as_server(p, "GET", "/_fakeapi/metrics", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"),
	                       "text/plain; version=0.0.4; charset=utf-8");
	CU_ASSERT_FATAL(r.body != NULL && r.body_len == strlen(r.body));
	CU_ASSERT(strncmp(r.body, "# HELP fakeapi_attempts_total ", 30) == 0);
	fx_done(p, &r);
	as_server(p, "HEAD", "/_fakeapi/metrics", &r);
	CU_ASSERT_EQUAL(r.status, 200);
	fx_done(p, &r);
	as_server(p, "POST", "/_fakeapi/metrics", &r);
	CU_ASSERT_EQUAL(r.status, 405);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Allow"), "GET");
	fx_done(p, &r);
	as_server(p, "GET", "/_fakeapi/metric", &r);
	CU_ASSERT_EQUAL(r.status, 404);
	CU_ASSERT_STRING_EQUAL(r.body, "{\"error\":{\"code\":\"unknown_endpoint\",\"message\":"
	                               "\"unknown admin endpoint (health, journal, metrics, reset, "
	                               "state)\"}}");
	fx_done(p, &r);
	/* admin traffic is no attempt */
	CU_ASSERT_EQUAL(fa_journal_count(j), 0);
	text = fa_provider_metrics_text(p, NULL);
	CU_ASSERT_PTR_NULL(strstr(text, "fakeapi_attempts_total{"));
	free(text);
	/* under the harness the server hands it to the provider: an ordinary
	 * attempt, journaled and counted, and 404 for want of a route */
	fa_provider_set_admin(p, false);
	CU_ASSERT_FALSE(fa_provider_admin_on(p));
	fx_decide(p, "GET", "/_fakeapi/metrics", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 404);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Content-Type"), "application/json");
	fx_done(p, &r);
	CU_ASSERT_EQUAL(fa_journal_count(j), 1);
	CU_ASSERT_EQUAL(attempts(p, "", "404", "no_route"), 1);
	fx_provider_stop(p, j, sc);
}

void test_metrics_register(void)
{
	CU_pSuite s = CU_add_suite("metrics", NULL, NULL);

	CU_add_test(s, "metrics__families_without_labels_read_zero_from_the_start",
	            metrics__families_without_labels_read_zero_from_the_start);
	CU_add_test(s, "metrics__every_family_has_help_before_its_type",
	            metrics__every_family_has_help_before_its_type);
	CU_add_test(s, "metrics__counts_each_label_set_apart",
	            metrics__counts_each_label_set_apart);
	CU_add_test(s, "metrics__label_values_are_escaped_as_the_format_says",
	            metrics__label_values_are_escaped_as_the_format_says);
	CU_add_test(s, "metrics__series_are_sorted_within_their_family",
	            metrics__series_are_sorted_within_their_family);
	CU_add_test(s, "metrics__set_replaces_what_add_adds_to",
	            metrics__set_replaces_what_add_adds_to);
	CU_add_test(s, "metrics__thousands_of_series_survive_the_table_growing",
	            metrics__thousands_of_series_survive_the_table_growing);
	CU_add_test(s, "metrics__counts_from_many_threads_add_up",
	            metrics__counts_from_many_threads_add_up);
	CU_add_test(s, "metrics__provider_counts_attempts_refusals_and_tokens",
	            metrics__provider_counts_attempts_refusals_and_tokens);
	CU_add_test(s, "metrics__provider_reads_the_gauges_at_scrape_time",
	            metrics__provider_reads_the_gauges_at_scrape_time);
	CU_add_test(s, "metrics__admin_endpoint_serves_the_text_unless_the_admin_api_is_off",
	            metrics__admin_endpoint_serves_the_text_unless_the_admin_api_is_off);
}
