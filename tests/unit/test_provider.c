/* test_provider.c -- the provider's decisions, without a socket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <CUnit/CUnit.h>

#include "admin.h"
#include "clock.h"
#include "provider.h"
#include "provider_fixture.h"
#include "retry_after.h"

static const char scenario_text[] =
        "{\"id\": \"unit\","
        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"},"
        "                          \"k2\": {\"secret\": \"s2\", \"user\": \"u\"},"
        "                          \"k3\": {\"secret\": \"s3\", \"user\": \"v\"}},"
        "              \"during_pause\": {\"status\": 429}},"
        " \"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/records/{id}\","
        "   \"responses\": [{\"status\": 429, \"retry_after\": 10},"
        "                   {\"status\": 200, \"body\": {\"id\": \"{id}\"}}]}]}";

/* A provider on the scenario above, with its journal. */
struct fixture {
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p;
};

static void setup(struct fixture *f)
{
	struct fa_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(
	        fa_scenario_parse(scenario_text, strlen(scenario_text), "unit.json", &f->sc, &err),
	        FA_OK);
	CU_ASSERT_EQUAL_FATAL(fa_journal_new(NULL, &f->j, &err), FA_OK);
	f->p = fa_provider_new(f->sc, f->j, 1, fa_clock_mono_us());
}

static void teardown(struct fixture *f)
{
	fa_provider_free(f->p);
	fa_journal_free(f->j);
	fa_scenario_free(f->sc);
}

/* Decide and finish one request; returns the status and, in @ra, a copy of
 * the Retry-After sent (or ""). */
static int ask(struct fixture *f, const char *method, const char *path, const char *secret,
               char *ra, size_t ra_len)
{
	struct fa_header h = { .name = "Authorization", .value = NULL };
	char auth[64];
	struct fa_req q = { .method = method,
		            .path = path,
		            .conn_id = 1,
		            .t_arrival_us = fa_provider_now_us(f->p),
		            .wall_us = fa_clock_wall_us() };
	struct fa_resp r = { 0 };
	int status;

	if (secret != NULL) {
		snprintf(auth, sizeof(auth), "Bearer %s", secret);
		h.value = auth;
		q.headers = &h;
		q.n_headers = 1;
	}
	/* as the server routes it */
	if (fa_provider_admin_on(f->p) && fa_admin_is_admin_path(path))
		fa_admin_handle(f->p, &q, &r);
	else
		fa_provider_decide(f->p, &q, &r);
	status = r.status;
	if (ra != NULL) {
		ra[0] = '\0';
		for (size_t i = 0; i < r.n_headers; i++)
			if (strcmp(r.headers[i].name, "Retry-After") == 0)
				snprintf(ra, ra_len, "%s", r.headers[i].value);
	}
	fa_provider_finish(f->p, &r, fa_provider_now_us(f->p), fa_provider_now_us(f->p),
	                   FA_DELIVERED_COMPLETE);
	fa_resp_release(&r);
	return status;
}

static void provider__unknown_key_is_401_and_journaled_without_moving_the_cursor(void)
{
	struct fixture f;

	setup(&f);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", NULL, NULL, 0), 401);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", "nope", NULL, 0), 401);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", "s1", NULL, 0), 429);
	CU_ASSERT_EQUAL(fa_journal_count(f.j), 3);
	teardown(&f);
}

static void provider__pause_covers_the_whole_scope_and_nothing_else(void)
{
	struct fixture f;
	char ra[64];

	setup(&f);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", "s1", ra, sizeof(ra)), 429);
	CU_ASSERT_STRING_EQUAL(ra, "10");
	/* same account, other key: still paused, told the rest of the pause */
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", "s2", ra, sizeof(ra)), 429);
	CU_ASSERT_STRING_EQUAL(ra, "10");
	/* another account: the cursor moved on to 200 */
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/records/1", "s3", ra, sizeof(ra)), 200);
	CU_ASSERT_STRING_EQUAL(ra, "");
	teardown(&f);
}

static void provider__journal_records_the_pause_it_announced(void)
{
	struct fixture f;
	struct fa_attempt *a = NULL;
	size_t n = 0;

	setup(&f);
	ask(&f, "GET", "/v1/records/7?x", "s1", NULL, 0);
	fa_journal_snapshot(f.j, 0, &a, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(a[0].retry_after, "10");
	CU_ASSERT_TRUE(a[0].pause_until_us - a[0].t_arrival_us >= 10000000);
	CU_ASSERT_TRUE(a[0].pause_until_us - a[0].t_arrival_us < 10100000);
	CU_ASSERT_STRING_EQUAL(a[0].scope, "user:u");
	CU_ASSERT_STRING_EQUAL(a[0].key, "k1");
	CU_ASSERT_EQUAL(a[0].in_flight, 1);
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&a[i]);
	free(a);
	teardown(&f);
}

static void provider__admin_traffic_is_not_journaled(void)
{
	struct fixture f;

	setup(&f);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/_fakeapi/health", NULL, NULL, 0), 200);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/_fakeapi/journal", NULL, NULL, 0), 200);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/_fakeapi/missing", NULL, NULL, 0), 404);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/_fakeapi/reset", NULL, NULL, 0), 405);
	CU_ASSERT_EQUAL(fa_journal_count(f.j), 0);
	teardown(&f);
}

static void provider__no_route_is_404(void)
{
	struct fixture f;

	setup(&f);
	CU_ASSERT_EQUAL(ask(&f, "DELETE", "/v1/records/1", "s1", NULL, 0), 404);
	CU_ASSERT_EQUAL(ask(&f, "GET", "/v1/other", "s1", NULL, 0), 404);
	CU_ASSERT_EQUAL(fa_journal_count(f.j), 2);
	teardown(&f);
}

/* A scenario whose route answers 429 with the literal headers @headers
 * (JSON object members), then 200; with a during_pause answer. */
static struct fa_provider *literal_start(const char *headers, struct fa_scenario **sc,
                                         struct fa_journal **j)
{
	char text[1024];

	snprintf(text, sizeof(text),
	         "{\"id\": \"lit\","
	         " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
	         "              \"during_pause\": {\"status\": 503}},"
	         " \"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/x\","
	         "   \"responses\": [{\"status\": 429, \"headers\": {%s}},"
	         "                   {\"status\": 200}]}]}",
	         headers);
	return fx_provider_start(text, "lit.json", 1, sc, j);
}

/* The journal's only entry so far, read back from its JSON line as the
 * harness reads it; release with fa_attempt_release(). */
static void journaled(struct fa_journal *j, struct fa_attempt *out)
{
	struct fa_attempt *a = NULL;
	struct fa_err err = { 0 };
	size_t n = 0;
	cJSON *line;

	fa_journal_snapshot(j, 0, &a, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	line = fa_attempt_to_json(&a[0]);
	memset(out, 0, sizeof(*out));
	CU_ASSERT_EQUAL(fa_attempt_from_json(line, out, &err), FA_OK);
	if (err.msg[0] != '\0')
		fprintf(stderr, "\njournal line unread: %s\n", err.msg);
	cJSON_Delete(line);
	fa_attempt_release(&a[0]);
	free(a);
}

/* RFC 9111 §1.2.2: a Retry-After of more delta-seconds than 2^31 is a
 * pause of 2^31 s, journaled as sent, and it pauses the scope. */
static void provider__huge_retry_after_pauses_for_2_31_seconds(void)
{
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = literal_start("\"Retry-After\": \"99999999999\"", &sc, &j);
	struct fa_attempt a;
	struct fa_resp r;

	fx_decide(p, "GET", "/v1/x", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 429);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "99999999999");
	fx_done(p, &r);
	journaled(j, &a);
	CU_ASSERT_STRING_EQUAL(a.retry_after, "99999999999");
	CU_ASSERT_TRUE(a.pause_until_us - a.t_arrival_us >= FA_RA_MAX_DELTA_S * 1000000);
	CU_ASSERT_TRUE(a.pause_until_us - a.t_response_us <= FA_RA_MAX_DELTA_S * 1000000);
	fa_attempt_release(&a);
	/* the scope is paused: the next request gets during_pause */
	fx_decide(p, "GET", "/v1/x", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 503);
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

/* A date thousands of years away either way stays a readable journal
 * line: the pause it names is 2^31 s at most (ahead or behind). */
static void provider__far_dates_journal_a_pause_of_at_most_2_31_seconds(void)
{
	static const struct {
		const char *hdr;
		int sign;
	} cases[] = {
		{ "\"Retry-After\": \"Fri, 31 Dec 9999 23:59:59 GMT\"", 1 },
		{ "\"Retry-After\": \"Mon, 01 Jan 0001 00:00:00 GMT\"", -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fa_scenario *sc;
		struct fa_journal *j;
		struct fa_provider *p = literal_start(cases[i].hdr, &sc, &j);
		struct fa_attempt a;
		struct fa_resp r;
		int64_t d;

		fx_decide(p, "GET", "/v1/x", NULL, &r);
		fx_done(p, &r);
		journaled(j, &a);
		CU_ASSERT_PTR_NOT_NULL(a.retry_after);
		d = a.pause_until_us - a.t_arrival_us;
		/* the µs between the answer's wall and mono readings */
		CU_ASSERT_TRUE(llabs(d - cases[i].sign * FA_RA_MAX_DELTA_S * 1000000) < 1000000);
		fa_attempt_release(&a);
		fx_provider_stop(p, j, sc);
	}
}

/* The pause of the journal's only entry, checked against @ms from when
 * its answer was decided: arrival + ms <= pause_until <= response + ms. */
static void assert_pause_ms(const struct fa_attempt *a, int64_t ms)
{
	CU_ASSERT_TRUE(a->pause_until_us >= a->t_arrival_us + ms * 1000);
	CU_ASSERT_TRUE(a->pause_until_us <= a->t_response_us + ms * 1000);
}

/* One 429 from literal_start(@headers), journaled; then the next request,
 * whose status (during_pause's 503 inside a pause, else 200) goes to
 * *@next. */
static void ask_literal(const char *headers, struct fa_attempt *a, int *next)
{
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = literal_start(headers, &sc, &j);
	struct fa_resp r;

	fx_decide(p, "GET", "/v1/x", NULL, &r);
	CU_ASSERT_EQUAL(r.status, 429);
	fx_done(p, &r);
	journaled(j, a);
	fx_decide(p, "GET", "/v1/x", NULL, &r);
	*next = r.status;
	fx_done(p, &r);
	fx_provider_stop(p, j, sc);
}

/* A retry-after-ms written in a response's headers counts as the quota
 * model's does: journaled, and an announced pause of its scope. */
static void provider__literal_retry_after_ms_is_journaled_and_pauses(void)
{
	struct fa_attempt a;
	int next;

	ask_literal("\"retry-after-ms\": \"1500\"", &a, &next);
	CU_ASSERT_STRING_EQUAL(a.retry_after_ms, "1500");
	CU_ASSERT_PTR_NULL(a.retry_after);
	assert_pause_ms(&a, 1500);
	CU_ASSERT_EQUAL(next, 503); /* the scope is paused */
	fa_attempt_release(&a);
	/* any letter case; more ms than 2^31 s saturate as delta-seconds do */
	ask_literal("\"Retry-After-Ms\": \" 99999999999999999 \"", &a, &next);
	CU_ASSERT_STRING_EQUAL(a.retry_after_ms, " 99999999999999999 ");
	assert_pause_ms(&a, FA_RA_MAX_MS);
	CU_ASSERT_EQUAL(next, 503);
	fa_attempt_release(&a);
}

/* With Retry-After and retry-after-ms both, the pause ends at the earlier
 * instant: a client may follow either. */
static void provider__with_both_headers_the_earlier_pause_wins(void)
{
	struct fa_attempt a;
	int next;

	ask_literal("\"Retry-After\": \"10\", \"retry-after-ms\": \"2500\"", &a, &next);
	CU_ASSERT_STRING_EQUAL(a.retry_after, "10");
	CU_ASSERT_STRING_EQUAL(a.retry_after_ms, "2500");
	assert_pause_ms(&a, 2500);
	CU_ASSERT_EQUAL(next, 503);
	fa_attempt_release(&a);
	ask_literal("\"Retry-After\": \"2\", \"retry-after-ms\": \"9000\"", &a, &next);
	assert_pause_ms(&a, 2000);
	fa_attempt_release(&a);
	/* an unparseable Retry-After leaves the retry-after-ms pause */
	ask_literal("\"Retry-After\": \"soon\", \"retry-after-ms\": \"3000\"", &a, &next);
	assert_pause_ms(&a, 3000);
	fa_attempt_release(&a);
}

/* A retry-after-ms that is no non-negative integer is journaled as sent
 * and announces no pause. */
static void provider__malformed_retry_after_ms_announces_no_pause(void)
{
	static const char *const bad[] = { "1.5", "-1", "soon", "1e3", "+5", "0x10" };
	struct fa_attempt a;
	char h[128];
	int next;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(h, sizeof(h), "\"retry-after-ms\": \"%s\"", bad[i]);
		ask_literal(h, &a, &next);
		CU_ASSERT_STRING_EQUAL(a.retry_after_ms, bad[i]);
		CU_ASSERT_EQUAL(a.pause_until_us, -1);
		CU_ASSERT_EQUAL(next, 200);
		fa_attempt_release(&a);
	}
	/* beside a valid Retry-After, that one's pause stands */
	ask_literal("\"Retry-After\": \"2\", \"retry-after-ms\": \"soon\"", &a, &next);
	assert_pause_ms(&a, 2000);
	fa_attempt_release(&a);
}

/* $.provider.retry_after_ms adds the provider's own retry-after-ms beside
 * a Retry-After it writes, but not over a literal one. */
static void provider__literal_retry_after_ms_is_not_doubled(void)
{
	static const char text[] =
	        "{\"id\": \"lit\","
	        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}},"
	        "              \"retry_after_ms\": true},"
	        " \"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/x\","
	        "   \"responses\": [{\"status\": 429, \"retry_after\": 3,"
	        "                    \"headers\": {\"retry-after-ms\": \"1200\"}}]}]}";
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p = fx_provider_start(text, "lit.json", 1, &sc, &j);
	struct fa_attempt a;
	struct fa_resp r;
	size_t n = 0;

	fx_decide(p, "GET", "/v1/x", NULL, &r);
	for (size_t i = 0; i < r.n_headers; i++)
		n += strcasecmp(r.headers[i].name, "retry-after-ms") == 0;
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "retry-after-ms"), "1200");
	CU_ASSERT_STRING_EQUAL(fx_resp_header(&r, "Retry-After"), "3");
	fx_done(p, &r);
	journaled(j, &a);
	CU_ASSERT_STRING_EQUAL(a.retry_after_ms, "1200");
	assert_pause_ms(&a, 1200);
	fa_attempt_release(&a);
	fx_provider_stop(p, j, sc);
}

void test_provider_register(void)
{
	CU_pSuite s = CU_add_suite("provider", NULL, NULL);

	CU_add_test(s, "provider__unknown_key_is_401_and_journaled_without_moving_the_cursor",
	            provider__unknown_key_is_401_and_journaled_without_moving_the_cursor);
	CU_add_test(s, "provider__pause_covers_the_whole_scope_and_nothing_else",
	            provider__pause_covers_the_whole_scope_and_nothing_else);
	CU_add_test(s, "provider__journal_records_the_pause_it_announced",
	            provider__journal_records_the_pause_it_announced);
	CU_add_test(s, "provider__admin_traffic_is_not_journaled",
	            provider__admin_traffic_is_not_journaled);
	CU_add_test(s, "provider__no_route_is_404", provider__no_route_is_404);
	CU_add_test(s, "provider__huge_retry_after_pauses_for_2_31_seconds",
	            provider__huge_retry_after_pauses_for_2_31_seconds);
	CU_add_test(s, "provider__far_dates_journal_a_pause_of_at_most_2_31_seconds",
	            provider__far_dates_journal_a_pause_of_at_most_2_31_seconds);
	CU_add_test(s, "provider__literal_retry_after_ms_is_journaled_and_pauses",
	            provider__literal_retry_after_ms_is_journaled_and_pauses);
	CU_add_test(s, "provider__with_both_headers_the_earlier_pause_wins",
	            provider__with_both_headers_the_earlier_pause_wins);
	CU_add_test(s, "provider__malformed_retry_after_ms_announces_no_pause",
	            provider__malformed_retry_after_ms_announces_no_pause);
	CU_add_test(s, "provider__literal_retry_after_ms_is_not_doubled",
	            provider__literal_retry_after_ms_is_not_doubled);
}
