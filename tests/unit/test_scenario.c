/* test_scenario.c -- scenario and suite files: the bad-file corpus, every field, suites. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "bad_corpus.h"
#include "digest.h"
#include "jsontext.h"
#include "scenario.h"
#include "schema.h"

#define BAD_DIR      FX_BAD_DIR
#define GOOD_FULL    "tests/data/good/full.json"
#define GOOD_EXAMPLE "tests/data/good/example.json"
#define FORMAT_DOC   "docs/scenario-format.md"

#define FAILF FX_FAILF

/* Whole file, NUL-terminated, or NULL. */
static char *slurp(const char *path, size_t *len)
{
	struct fa_err err = { { 0 } };
	char *text = NULL;
	size_t n = 0;

	if (fa_jsontext_read(path, &text, &n, &err) != FA_OK)
		return NULL;
	if (len != NULL)
		*len = n;
	return text;
}

/* A minimal valid scenario with @routes and @harness spliced in. */
static char *scenario_text(const char *provider_extra, const char *routes, const char *harness)
{
	return fa_xasprintf("{\"id\": \"s1\", \"provider\": {\"keys\": {\"k1\": "
	                    "{\"secret\": \"sk-1\", \"user\": \"u1\"}}%s}, "
	                    "\"routes\": %s%s%s}",
	                    provider_extra, routes, harness ? ", \"harness\": " : "",
	                    harness ? harness : "");
}

#define ROUTE_OK                                                                                   \
	"[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", "                                 \
	"\"responses\": [{\"status\": 200}]}]"

static struct fa_scenario *parse_ok(const char *text)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };

	if (fa_scenario_parse(text, strlen(text), "t.json", &sc, &err) != FA_OK)
		FAILF("unexpected error: %s", err.msg);
	return sc;
}

/* The message @text gets, or "" when it parses. */
static void parse_err(const char *text, struct fa_err *err)
{
	struct fa_scenario *sc = NULL;

	fa_err_clear(err);
	if (fa_scenario_parse(text, strlen(text), "t.json", &sc, err) == FA_OK)
		CU_FAIL("parsed a scenario expected to be invalid");
	CU_ASSERT_PTR_NULL(sc);
	fa_scenario_free(sc);
}

/*
 * One file of the corpus through the provider's loader: its exact
 * message, or, for a case under $.harness.expect, a scenario that loads
 * (the provider keeps expect as it is; the harness validates it).
 */
static void provider_case(const char *json, const char *want)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	enum fa_rc rc = fa_scenario_load(json, &sc, &err);

	if (rc == FA_OK && strstr(want, ": $.harness.expect") != NULL) {
		CU_PASS("left to the harness");
	} else {
		fx_bad_case(json, want, rc == FA_OK || sc != NULL, err.msg);
	}
	fa_scenario_free(sc);
}

static void scenario__bad_files_give_their_exact_message(void)
{
	CU_ASSERT(fx_bad_corpus(provider_case) >= 20);
}

static void scenario__full_example_fills_every_field(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	const struct fa_route_spec *rt;
	const struct fa_response_spec *r;
	const struct fa_task_spec *t;
	const struct fa_event_spec *ev;
	char *text;
	size_t len = 0;
	char sha[FA_SHA256_HEX];

	CU_ASSERT_EQUAL_FATAL(fa_scenario_load(GOOD_FULL, &sc, &err), FA_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	CU_ASSERT_STRING_EQUAL(sc->file, GOOD_FULL);
	text = slurp(GOOD_FULL, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	fa_digest_sha256_hex(text, len, sha);
	CU_ASSERT_STRING_EQUAL(sc->sha256, sha);
	free(text);

	CU_ASSERT_STRING_EQUAL(sc->id, "full-1.0_x");
	CU_ASSERT_STRING_EQUAL(sc->title, "every field of the scenario format");
	CU_ASSERT_PTR_NOT_NULL(strstr(sc->comment, "test_scenario.c"));

	/* provider */
	CU_ASSERT_EQUAL_FATAL(sc->n_keys, 3);
	CU_ASSERT_STRING_EQUAL(sc->keys[0].id, "ops-1");
	CU_ASSERT_STRING_EQUAL(sc->keys[0].secret, "sk-test-ops-1");
	CU_ASSERT_STRING_EQUAL(sc->keys[0].user, "ops-team");
	CU_ASSERT_STRING_EQUAL(sc->keys[2].id, "batch.1");
	CU_ASSERT_STRING_EQUAL(sc->keys[2].user, "batch");
	CU_ASSERT_EQUAL_FATAL(sc->n_users, 2); /* named by a key, sorted, once */
	CU_ASSERT_STRING_EQUAL(sc->users[0], "batch");
	CU_ASSERT_STRING_EQUAL(sc->users[1], "ops-team");
	CU_ASSERT_EQUAL(sc->scope, FA_SCOPE_KEY);
	CU_ASSERT_TRUE(sc->has_during_pause);
	CU_ASSERT_EQUAL(sc->during_pause.status, 429);
	CU_ASSERT_EQUAL(sc->during_pause.times, 0);
	CU_ASSERT_EQUAL_FATAL(sc->during_pause.n_headers, 2);
	CU_ASSERT_STRING_EQUAL(sc->during_pause.headers[0].name, "Content-Type");
	CU_ASSERT_STRING_EQUAL(sc->during_pause.headers[0].value, "application/json");
	CU_ASSERT_STRING_EQUAL(sc->during_pause.headers[1].name, "X-Pause");
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(sc->during_pause.body, "error"));
	CU_ASSERT_TRUE(sc->during_pause.has_retry_after);
	CU_ASSERT_EQUAL(sc->during_pause.ra_form, FA_RA_IMF_FIXDATE);
	CU_ASSERT_EQUAL(sc->during_pause.ra_seconds, 5);
	CU_ASSERT_EQUAL(sc->during_pause.delay_ms, 10);

	/* routes */
	CU_ASSERT_EQUAL_FATAL(sc->n_routes, 3);
	rt = &sc->routes[0];
	CU_ASSERT_STRING_EQUAL(rt->id, "read-record");
	CU_ASSERT_STRING_EQUAL(rt->method, "GET");
	CU_ASSERT_STRING_EQUAL(rt->path, "/v1/records/{id}");
	CU_ASSERT_STRING_EQUAL(rt->klass, "read");
	CU_ASSERT_EQUAL(rt->cursor, FA_CURSOR_SCOPE);
	CU_ASSERT_EQUAL_FATAL(rt->n_responses, 6);
	r = &rt->responses[0];
	CU_ASSERT_EQUAL(r->times, 2);
	CU_ASSERT_EQUAL(r->status, 429);
	CU_ASSERT_EQUAL_FATAL(r->n_headers, 1);
	CU_ASSERT_STRING_EQUAL(r->headers[0].name, "Retry-After");
	CU_ASSERT_STRING_EQUAL(r->headers[0].value, "10");
	CU_ASSERT_FALSE(r->has_retry_after);
	CU_ASSERT_EQUAL(r->delay_ms, 0);
	r = &rt->responses[1];
	CU_ASSERT_EQUAL(r->times, 1);
	CU_ASSERT_EQUAL(r->status, 503);
	CU_ASSERT_TRUE(r->has_retry_after);
	CU_ASSERT_EQUAL(r->ra_form, FA_RA_DELTA);
	CU_ASSERT_EQUAL(r->ra_seconds, 3);
	CU_ASSERT_EQUAL(r->delay_ms, 250);
	CU_ASSERT_PTR_NULL(r->body);
	CU_ASSERT_EQUAL(rt->responses[2].ra_form, FA_RA_RFC850);
	CU_ASSERT_EQUAL(rt->responses[2].ra_seconds, -30);
	CU_ASSERT_EQUAL(rt->responses[3].ra_form, FA_RA_ASCTIME);
	CU_ASSERT_EQUAL(rt->responses[4].ra_form, FA_RA_DELTA);
	CU_ASSERT_EQUAL(rt->responses[4].ra_seconds, 2147483648LL);
	r = &rt->responses[5];
	CU_ASSERT_EQUAL(r->times, 0);
	CU_ASSERT_EQUAL(r->status, 200);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r->body, "id")->valuestring, "{id}");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(r->body, "tags")), 4);
	rt = &sc->routes[1];
	CU_ASSERT_STRING_EQUAL(rt->method, "POST");
	CU_ASSERT_PTR_NULL(rt->klass);
	CU_ASSERT_EQUAL(rt->cursor, FA_CURSOR_SHARED);
	CU_ASSERT_EQUAL(rt->responses[0].times, 3); /* last, but counted */
	CU_ASSERT_STRING_EQUAL(rt->responses[0].body->valuestring, "created");
	CU_ASSERT_STRING_EQUAL(sc->routes[2].path, "/");

	/* harness */
	CU_ASSERT_TRUE_FATAL(sc->has_harness);
	CU_ASSERT_EQUAL(sc->harness.timeout_s, 120);
	CU_ASSERT_EQUAL_FATAL(sc->harness.n_tasks, 3);
	t = &sc->harness.tasks[0];
	CU_ASSERT_STRING_EQUAL(t->id, "t1");
	CU_ASSERT_STRING_EQUAL(t->key, "ops-1");
	CU_ASSERT_STRING_EQUAL(t->klass, "read");
	CU_ASSERT_STRING_EQUAL(t->method, "GET");
	CU_ASSERT_STRING_EQUAL(t->path, "/v1/records/42");
	CU_ASSERT_EQUAL(t->budget.max_attempts, 4);
	CU_ASSERT_EQUAL(t->budget.max_wait_s, 90);
	CU_ASSERT_EQUAL(t->timeout_s, 0);
	CU_ASSERT_PTR_NULL(t->body);
	CU_ASSERT_EQUAL(t->n_headers, 0);
	t = &sc->harness.tasks[1];
	CU_ASSERT_STRING_EQUAL(t->path, "/v1/records/43?full=1");
	CU_ASSERT_PTR_NULL(t->klass);
	CU_ASSERT_EQUAL(t->budget.max_attempts, 0);
	CU_ASSERT_EQUAL(t->budget.max_wait_s, -1);
	t = &sc->harness.tasks[2];
	CU_ASSERT_STRING_EQUAL(t->id, "w_1");
	CU_ASSERT_STRING_EQUAL(t->key, "batch.1");
	CU_ASSERT_EQUAL_FATAL(t->n_headers, 2);
	CU_ASSERT_STRING_EQUAL(t->headers[0].name, "Idempotency-Key");
	CU_ASSERT_STRING_EQUAL(t->headers[1].value, "a\tb");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t->body, "client_reference")->valuestring,
	                       "ref-1");
	CU_ASSERT_EQUAL(t->budget.max_attempts, 1);
	CU_ASSERT_EQUAL(t->budget.max_wait_s, -1);
	CU_ASSERT_EQUAL(t->timeout_s, 30);
	CU_ASSERT_EQUAL_FATAL(sc->harness.n_events, 2);
	ev = &sc->harness.events[0];
	CU_ASSERT_EQUAL(ev->at_ms, 0);
	CU_ASSERT_PTR_NULL(ev->after_task);
	CU_ASSERT_EQUAL_FATAL(ev->n_send, 1);
	CU_ASSERT_STRING_EQUAL(ev->send[0], "t1");
	ev = &sc->harness.events[1];
	CU_ASSERT_EQUAL(ev->at_ms, -1);
	CU_ASSERT_STRING_EQUAL(ev->after_task, "t1");
	CU_ASSERT_EQUAL(ev->after_status, 429);
	CU_ASSERT_EQUAL(ev->on, FA_ON_CLIENT_SAW);
	CU_ASSERT_EQUAL(ev->plus_ms, 200);
	CU_ASSERT_EQUAL_FATAL(ev->n_send, 2);
	CU_ASSERT_STRING_EQUAL(ev->send[1], "w_1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc->harness.expect);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(sc->harness.expect), 4);
	CU_ASSERT_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(sc->harness.expect, "wait.retry_after"),
	                            "tolerance_ms")
	                ->valueint,
	        50);

	/* lookups */
	CU_ASSERT_PTR_EQUAL(fa_scenario_key_by_secret(sc, "sk-test-ops-2"), &sc->keys[1]);
	CU_ASSERT_PTR_NULL(fa_scenario_key_by_secret(sc, "ops-2"));
	CU_ASSERT_PTR_NULL(fa_scenario_key_by_secret(sc, NULL));
	CU_ASSERT_PTR_EQUAL(fa_scenario_key_by_id(sc, "batch.1"), &sc->keys[2]);
	CU_ASSERT_PTR_NULL(fa_scenario_key_by_id(sc, "sk-test-ops-1"));
	CU_ASSERT_PTR_EQUAL(fa_scenario_task(sc, "w_1"), &sc->harness.tasks[2]);
	CU_ASSERT_PTR_NULL(fa_scenario_task(sc, "t9"));
	fa_scenario_free(sc);
}

static void scenario__defaults_when_fields_are_left_out(void)
{
	char *text = scenario_text("", ROUTE_OK, NULL);
	struct fa_scenario *sc = parse_ok(text);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_STRING_EQUAL(sc->file, "t.json");
	CU_ASSERT_PTR_NULL(sc->title);
	CU_ASSERT_PTR_NULL(sc->comment);
	CU_ASSERT_EQUAL(sc->scope, FA_SCOPE_USER);
	CU_ASSERT_FALSE(sc->has_during_pause);
	CU_ASSERT_FALSE(sc->has_harness);
	CU_ASSERT_EQUAL(sc->harness.n_tasks, 0);
	CU_ASSERT_EQUAL_FATAL(sc->n_users, 1);
	CU_ASSERT_STRING_EQUAL(sc->users[0], "u1");
	CU_ASSERT_EQUAL(sc->routes[0].cursor, FA_CURSOR_SHARED);
	CU_ASSERT_PTR_NULL(sc->routes[0].klass);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].times, 0);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].n_headers, 0);
	CU_ASSERT_PTR_NULL(sc->routes[0].responses[0].body);
	CU_ASSERT_FALSE(sc->routes[0].responses[0].has_retry_after);
	fa_scenario_free(sc);
	free(text);

	text = scenario_text(
	        "", ROUTE_OK,
	        "{\"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"},"
	        "            {\"id\": \"b\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"}],"
	        " \"events\": [{\"at_ms\": 0, \"send\": [\"a\"]},"
	        "              {\"after\": {\"task\": \"a\", \"status\": 429}, \"send\": [\"b\"]}]}");
	sc = parse_ok(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_TRUE(sc->has_harness);
	CU_ASSERT_EQUAL(sc->harness.timeout_s, 60);
	CU_ASSERT_PTR_NULL(sc->harness.expect);
	CU_ASSERT_EQUAL(sc->harness.tasks[0].budget.max_attempts, 0);
	CU_ASSERT_EQUAL(sc->harness.tasks[0].budget.max_wait_s, -1);
	CU_ASSERT_EQUAL(sc->harness.tasks[0].timeout_s, 0);
	CU_ASSERT_EQUAL(sc->harness.events[1].at_ms, -1);
	CU_ASSERT_EQUAL(sc->harness.events[1].plus_ms, 0);
	CU_ASSERT_EQUAL(sc->harness.events[1].on, FA_ON_SERVER_SENT);
	fa_scenario_free(sc);
	free(text);
}

/* Step 5's additions: a task's goal (up to 500 characters, not bytes),
 * cancel lists (an event may cancel without sending), the new checks'
 * own expect parameters. */
static void scenario__goal_cancel_and_step5_expect_are_read(void)
{
	char goal[500 * 2 + 1];
	char *text;
	struct fa_scenario *sc;
	const cJSON *e;

	for (size_t i = 0; i < 500; i++)
		memcpy(goal + 2 * i, "\xc3\xa9", 2); /* é: two bytes, one character */
	goal[1000] = '\0';
	text = fa_xasprintf(
	        "{\"id\": \"s1\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"sk-1\", \"user\": \"u1\"}}},"
	        " \"routes\": " ROUTE_OK ", \"harness\": {"
	        " \"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\", \"goal\": \"%s\"},"
	        "            {\"id\": \"b\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"}],"
	        " \"events\": [{\"at_ms\": 0, \"send\": [\"a\"]},"
	        "            {\"after\": {\"task\": \"a\", \"status\": 503}, \"send\": [\"b\"], \"cancel\": [\"a\"]},"
	        "            {\"at_ms\": 900, \"cancel\": [\"b\"]}],"
	        " \"expect\": {\"budget.escalates\": {\"tasks\": [\"b\", \"a\"], \"tolerance_ms\": 500, \"required\": false},"
	        "            \"cancel.quiet\": {\"margin_ms\": 0, \"tolerance_ms\": 60000},"
	        "            \"classify.circuit\": {\"max_identical\": 100, \"required\": true},"
	        "            \"wait.concurrency\": {\"max_concurrent_requests\": 1},"
	        "            \"escalation.sanitised\": {\"required\": true}}}}",
	        goal);
	sc = parse_ok(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_STRING_EQUAL(sc->harness.tasks[0].goal, goal);
	CU_ASSERT_PTR_NULL(sc->harness.tasks[1].goal);
	CU_ASSERT_EQUAL(sc->harness.events[0].n_cancel, 0);
	CU_ASSERT_EQUAL_FATAL(sc->harness.events[1].n_cancel, 1);
	CU_ASSERT_STRING_EQUAL(sc->harness.events[1].cancel[0], "a");
	CU_ASSERT_EQUAL(sc->harness.events[1].n_send, 1);
	CU_ASSERT_EQUAL(sc->harness.events[2].n_send, 0);
	CU_ASSERT_EQUAL_FATAL(sc->harness.events[2].n_cancel, 1);
	CU_ASSERT_STRING_EQUAL(sc->harness.events[2].cancel[0], "b");
	CU_ASSERT_FALSE(sc->harness.events[2].kill);
	e = cJSON_GetObjectItemCaseSensitive(sc->harness.expect, "wait.concurrency");
	CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(e, "max_concurrent_requests")->valueint,
	                1);
	fa_scenario_free(sc);
	free(text);
}

static void scenario__times_is_one_each_then_forever_for_the_last(void)
{
	char *text = scenario_text(
	        "",
	        "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", \"responses\": ["
	        "{\"status\": 500}, {\"status\": 502, \"times\": 4}, {\"status\": 503},"
	        "{\"status\": 200}]},"
	        " {\"id\": \"r2\", \"method\": \"GET\", \"path\": \"/b\", \"responses\": ["
	        "{\"status\": 429}, {\"status\": 200, \"times\": 2}]}]",
	        NULL);
	struct fa_scenario *sc = parse_ok(text);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(sc->routes[0].responses[0].times, 1);
	CU_ASSERT_EQUAL(sc->routes[0].responses[1].times, 4);
	CU_ASSERT_EQUAL(sc->routes[0].responses[2].times, 1);
	CU_ASSERT_EQUAL(sc->routes[0].responses[3].times, 0);
	CU_ASSERT_EQUAL(sc->routes[1].responses[0].times, 1);
	CU_ASSERT_EQUAL(sc->routes[1].responses[1].times, 2);
	fa_scenario_free(sc);
	free(text);
}

static void scenario__path_templates(void)
{
	static const char *const good[] = {
		"/",
		"/v1/",
		"/v1/records/{id}",
		"/v1/{account_id}/x/{_b2}",
		"/v1//x",
		"/v1/{a}/{b}/{c}",
		"/~me/a.b-c~d",
	};
	static const char *const bad[] = {
		"/{}",      "/{1a}", "/a{b}c", "/{a}{b}", "/{a-b}",    "/x}",         "/{a",
		"/{a}/{a}", "/a b",  "/a#b",   "/a?b",    "/_fakeapi", "/_fakeapi/x", "a",
	};
	struct fa_err err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *routes =
		        fa_xasprintf("[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"%s\","
		                     " \"responses\": [{\"status\": 200}]}]",
		                     good[i]);
		char *text = scenario_text("", routes, NULL);
		struct fa_scenario *sc = parse_ok(text);

		if (sc != NULL)
			CU_ASSERT_STRING_EQUAL(sc->routes[0].path, good[i]);
		fa_scenario_free(sc);
		free(text);
		free(routes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *routes =
		        fa_xasprintf("[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"%s\","
		                     " \"responses\": [{\"status\": 200}]}]",
		                     bad[i]);
		char *text = scenario_text("", routes, NULL);

		parse_err(text, &err);
		if (strncmp(err.msg, "t.json: $.routes[0].path: ", 26) != 0)
			FAILF("path %s: %s", bad[i], err.msg);
		free(text);
		free(routes);
	}
	/* sixteen parameters is the route matcher's limit */
	{
		char path[256] = "", *routes, *text;
		size_t o = 0;

		for (int i = 0; i < 17; i++)
			o += (size_t)snprintf(path + o, sizeof(path) - o, "/{p%d}", i);
		routes = fa_xasprintf("[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"%s\","
		                      " \"responses\": [{\"status\": 200}]}]",
		                      path);
		text = scenario_text("", routes, NULL);
		parse_err(text, &err);
		CU_ASSERT_STRING_EQUAL(err.msg,
		                       "t.json: $.routes[0].path: more than 16 {name} segments");
		free(text);
		free(routes);
	}
}

/* Each kind of object names its own allowed keys, in table order. */
static void scenario__unknown_key_lists_the_allowed_ones(void)
{
	static const struct {
		const char *provider, *routes, *harness, *want;
	} cases[] = {
		{ ", \"x\": 1", ROUTE_OK, NULL,
		  "t.json: $.provider: unknown key \"x\" (allowed: keys, users, scope, during_pause, idempotency, reconciliation, quota, retry_after_ms)" },
		{ ", \"during_pause\": {\"status\": 429, \"x\": 1}", ROUTE_OK, NULL,
		  "t.json: $.provider.during_pause: unknown key \"x\" (allowed: status, headers, body, retry_after, delay_ms)" },
		{ "",
		  "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", \"x\": 1, \"responses\": [{\"status\": 200}]}]",
		  NULL,
		  "t.json: $.routes[0]: unknown key \"x\" (allowed: id, method, path, class, cursor, responses, effect, client_reference_field, kind, reply, models)" },
		{ "",
		  "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", \"responses\": [{\"status\": 200, \"retry_after\": {\"seconds\": 1, \"x\": 1}}]}]",
		  NULL,
		  "t.json: $.routes[0].responses[0].retry_after: unknown key \"x\" (allowed: seconds, form)" },
		{ "", ROUTE_OK, "{\"x\": 1}",
		  "t.json: $.harness: unknown key \"x\" (allowed: tasks, events, expect, timeout_s, pacing)" },
		{ "", ROUTE_OK,
		  "{\"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\", \"x\": 1}], \"events\": [{\"at_ms\": 0, \"send\": [\"a\"]}]}",
		  "t.json: $.harness.tasks[0]: unknown key \"x\" (allowed: id, key, class, method, path, headers, body, budget, timeout_s, goal, outcome)" },
		{ "", ROUTE_OK,
		  "{\"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\", \"budget\": {\"max_retries\": 3}}], \"events\": [{\"at_ms\": 0, \"send\": [\"a\"]}]}",
		  "t.json: $.harness.tasks[0].budget: unknown key \"max_retries\" (allowed: max_attempts, max_wait_s)" },
		{ "", ROUTE_OK,
		  "{\"tasks\": [{\"id\": \"a\", \"key\": \"k1\", \"method\": \"GET\", \"path\": \"/a\"}], \"events\": [{\"at_ms\": 0, \"send\": [\"a\"], \"x\": 1}]}",
		  "t.json: $.harness.events[0]: unknown key \"x\" (allowed: at_ms, after, plus_ms, send, kill, restart, cancel)" },
	};
	struct fa_err err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = scenario_text(cases[i].provider, cases[i].routes, cases[i].harness);

		parse_err(text, &err);
		if (strcmp(err.msg, cases[i].want) != 0)
			FAILF("case %zu:\n  expected: %s\n  got:      %s", i, cases[i].want,
			      err.msg);
		free(text);
	}
	parse_err("{\"id\": \"s\", \"x\": 1}", &err);
	CU_ASSERT_STRING_EQUAL(
	        err.msg,
	        "t.json: $: unknown key \"x\" (allowed: id, title, comment, provider, routes, harness)");
	parse_err(
	        "{\"id\": \"s\", \"provider\": {\"keys\": {\"k\": {\"secret\": \"s\", \"user\": \"u\", \"x\": 1}}}, \"routes\": " ROUTE_OK
	        "}",
	        &err);
	CU_ASSERT_STRING_EQUAL(
	        err.msg, "t.json: $.provider.keys.k: unknown key \"x\" (allowed: secret, user)");
}

static void scenario__integers_and_descriptions(void)
{
	static const struct {
		const char *status, *want;
	} cases[] = {
		{ "200.0", NULL }, /* no fraction: an integer */
		{ "2e2", NULL },
		{ "99", "expected integer 100..599, got integer 99" },
		{ "-1", "expected integer 100..599, got integer -1" },
		{ "200.5", "expected integer 100..599, got number 200.5" },
		{ "0.1", "expected integer 100..599, got number 0.1" },
		{ "1e400", "expected integer 100..599, got number too large" },
		{ "true", "expected integer 100..599, got true" },
		{ "false", "expected integer 100..599, got false" },
		{ "null", "expected integer 100..599, got null" },
		{ "{}", "expected integer 100..599, got empty object" },
		{ "{\"a\": 1}", "expected integer 100..599, got object" },
		{ "[]", "expected integer 100..599, got empty array" },
		{ "[200]", "expected integer 100..599, got array" },
		{ "\"a\\\"b\\\\c\\n\"",
		  "expected integer 100..599, got string \"a\\\"b\\\\c\\n\"" },
		{ "\"0123456789012345678901234567890123456789\"",
		  "expected integer 100..599, got string \"0123456789012345678901234567890123456789\"" },
		{ "\"0123456789012345678901234567890123456789x\"",
		  "expected integer 100..599, got string \"0123456789012345678901234567890123456789...\"" },
		{ "\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		  "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"",
		  "expected integer 100..599, got string \""
		  "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		  "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9...\"" },
	};
	struct fa_err err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *routes =
		        fa_xasprintf("[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\","
		                     " \"responses\": [{\"status\": %s}]}]",
		                     cases[i].status);
		char *text = scenario_text("", routes, NULL);
		char *want;

		if (cases[i].want == NULL) {
			struct fa_scenario *sc = parse_ok(text);

			if (sc != NULL)
				CU_ASSERT_EQUAL(sc->routes[0].responses[0].status, 200);
			fa_scenario_free(sc);
		} else {
			want = fa_xasprintf("t.json: $.routes[0].responses[0].status: %s",
			                    cases[i].want);
			parse_err(text, &err);
			if (strcmp(err.msg, want) != 0)
				FAILF("status %s:\n  expected: %s\n  got:      %s", cases[i].status,
				      want, err.msg);
			free(want);
		}
		free(text);
		free(routes);
	}
}

static void scenario__unreadable_file_is_eio(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };

	CU_ASSERT_EQUAL(fa_scenario_load(BAD_DIR "/no-such-file.json", &sc, &err), FA_EIO);
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(err.msg, BAD_DIR
	                       "/no-such-file.json: cannot read: No such file or directory");
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(fa_scenario_load(BAD_DIR, &sc, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg, BAD_DIR ": cannot read: Is a directory");
}

/* "$schema" at the top points an editor at docs/scenario.schema.json:
 * taken and ignored there, an unknown key anywhere else, never listed. */
static void scenario__a_top_level_schema_member_is_ignored(void)
{
	char *text = scenario_text("", ROUTE_OK, NULL);
	char *with = fa_xasprintf("{\"$schema\": \"../docs/scenario.schema.json\", %s", text + 1);
	char *bad = fa_xasprintf("{\"$schema\": true, %s", text + 1);
	char *nested = scenario_text(", \"$schema\": \"x\"", ROUTE_OK, NULL);
	struct fa_scenario *sc = parse_ok(with);
	struct fa_err err;

	CU_ASSERT_PTR_NOT_NULL(sc);
	if (sc != NULL)
		CU_ASSERT_STRING_EQUAL(sc->id, "s1");
	fa_scenario_free(sc);
	parse_err(bad, &err);
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: $[\"$schema\"]: expected string, got true");
	parse_err(nested, &err);
	CU_ASSERT_STRING_EQUAL(err.msg,
	                       "t.json: $.provider: unknown key \"$schema\" (allowed: keys, users, "
	                       "scope, during_pause, idempotency, reconciliation, quota, "
	                       "retry_after_ms)");
	free(nested);
	free(bad);
	free(with);
	free(text);
}

/* A suite handed to the provider is named as what it is. */
static void scenario__a_suite_is_not_a_scenario(void)
{
	struct fa_err err;

	parse_err("{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"a.json\"]}", &err);
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: a suite (it lists scenarios): give one of its "
	                                "scenario files, or run the suite with fakeapi-harness "
	                                "run t.json");
}

/* An unknown key near a known one (case, a slip of a letter or two)
 * names it; a far one only lists the allowed ones. */
static void scenario__unknown_key_near_a_known_one_says_which(void)
{
	static const struct {
		const char *provider, *routes, *want;
	} cases[] = {
		{ "",
		  "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", \"responses\": [{\"Status\": 200}]}]",
		  "t.json: $.routes[0].responses[0]: unknown key \"Status\", did you mean \"status\"? (allowed: times, status, headers, body, retry_after, delay_ms, fault, fault_bytes, hold, hold_ms, shape, retry_after_s, cooldown_s, deadline_ms, error_after_chunks, stop_after_chunks, chunk_delay_ms, stall_after_chunks, stall_ms)" },
		{ ", \"scpoe\": \"key\"", ROUTE_OK,
		  "t.json: $.provider: unknown key \"scpoe\", did you mean \"scope\"? (allowed: keys, users, scope, during_pause, idempotency, reconciliation, quota, retry_after_ms)" },
		{ ", \"quota\": {\"per_kye\": 5}", ROUTE_OK,
		  "t.json: $.provider.quota: unknown key \"per_kye\", did you mean \"per_key\"? (allowed: per_key, per_user, period_s, replicas, spread, key_limits, max_in_flight_per_key, headers, tpm_per_key, tpm_per_user, rpd_per_key, tpd_per_key, day_s)" },
		{ ", \"burst\": 5", ROUTE_OK,
		  "t.json: $.provider: unknown key \"burst\" (allowed: keys, users, scope, during_pause, idempotency, reconciliation, quota, retry_after_ms)" },
		{ "",
		  "[{\"id\": \"r\", \"method\": \"Get\", \"path\": \"/a\", \"responses\": [{\"status\": 200}]}]",
		  "t.json: $.routes[0].method: expected one of GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS, got string \"Get\", did you mean \"GET\"?" },
		{ "",
		  "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", \"responses\": [{\"status\": 200, \"fault\": \"drop_after_comit\"}]}]",
		  "t.json: $.routes[0].responses[0].fault: expected one of respond|drop_before_commit|drop_after_commit|reset|partial_body|close_idle, got string \"drop_after_comit\", did you mean \"drop_after_commit\"?" },
	};
	struct fa_err err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = scenario_text(cases[i].provider, cases[i].routes, NULL);

		parse_err(text, &err);
		if (strcmp(err.msg, cases[i].want) != 0)
			FAILF("case %zu:\n  expected: %s\n  got:      %s", i, cases[i].want,
			      err.msg);
		free(text);
	}
}

/* The digest is of the bytes, not of the JSON they mean. */
static void scenario__sha256_covers_the_raw_bytes(void)
{
	char *a = scenario_text("", ROUTE_OK, NULL);
	char *b = fa_xasprintf("%s\n", a);
	struct fa_scenario *sa = parse_ok(a), *sb = parse_ok(b);
	char want[FA_SHA256_HEX];

	CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sb);
	fa_digest_sha256_hex(a, strlen(a), want);
	CU_ASSERT_STRING_EQUAL(sa->sha256, want);
	CU_ASSERT_EQUAL(strlen(sa->sha256), 64);
	CU_ASSERT_STRING_NOT_EQUAL(sa->sha256, sb->sha256);
	fa_scenario_free(sa);
	fa_scenario_free(sb);
	free(a);
	free(b);
}

/* Strict JSON, beyond what cJSON alone would refuse. */
static void jsontext__strict_syntax_with_positions(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "{\"a\": 01}", "j:1:7: invalid number (leading zero)" },
		{ "{\"a\": 1.}", "j:1:7: invalid number (expected a digit after '.')" },
		{ "{\"a\": -}", "j:1:7: invalid number (expected a digit)" },
		{ "{\"a\": 1e}", "j:1:7: invalid number (expected a digit in the exponent)" },
		{ "{\"a\": \"x\ty\"}", "j:1:9: unescaped control character U+0009 in string" },
		{ "{\"a\": \"\\u0000\"}", "j:1:8: \\u0000 is not allowed in strings" },
		{ "{\"a\": \"\\ud800\"}", "j:1:8: unpaired surrogate \\uD800 in string" },
		{ "{\"a\": \"\\udc00\"}", "j:1:8: unpaired surrogate \\uDC00 in string" },
		{ "{\"a\": \"\\u12\"}",
		  "j:1:8: invalid \\u escape in string (expected 4 hex digits)" },
		{ "{\"a\": \"\\x\"}", "j:1:8: invalid escape '\\x' in string" },
		{ "{\"a\": \"\xff\"}", "j:1:8: invalid UTF-8 in string" },
		{ "{\"a\": \"\xed\xa0\x80\"}", "j:1:8: invalid UTF-8 in string" },
		{ "{\"\xc3\xa9\xc3\xa9\": x}", "j:1:8: expected a value, got 'x'" },
		{ "{\"a\":\n  True}", "j:2:3: expected a value, got 'True'" },
		{ "{\"a\": tru", "j:1:10: unexpected end of input" },
		{ "{\"a\": NaN}", "j:1:7: expected a value, got 'NaN'" },
		{ "{\"a\": 1,\n}", "j:1:8: a trailing comma before '}' (JSON allows none)" },
		{ "[1, 2 , ]", "j:1:7: a trailing comma before ']' (JSON allows none)" },
		{ "{\"a\": [1,],}", "j:1:9: a trailing comma before ']' (JSON allows none)" },
		{ "{\n  // a note\n  \"a\": 1}", "j:2:3: a comment (JSON has none)" },
		{ "{\"a\": /* soon */ 1}", "j:1:7: a comment (JSON has none)" },
		{ "{\"a\": 1 /* x */}", "j:1:9: a comment (JSON has none)" },
		{ "[1, // one\n 2]", "j:1:5: a comment (JSON has none)" },
		{ "{\"a\": 1}\n// the end", "j:2:1: a comment (JSON has none)" },
		{ "/* unterminated", "j:1:1: a comment (JSON has none)" },
		{ "{\"a\": 1 / 2}", "j:1:9: expected ',' or '}', got '/'" },
		{ "{\"a\": \"//not a comment\",}",
		  "j:1:24: a trailing comma before '}' (JSON allows none)" },
		{ "{\"a\" 1}", "j:1:6: expected ':' after the key, got '1'" },
		{ "[1 2]", "j:1:4: expected ',' or ']', got '2'" },
		{ "{\"a\": \xe2\x80\x9cq\xe2\x80\x9d}",
		  "j:1:7: expected a value, got '\xe2\x80\x9c' (U+201C)" },
		{ "{\x01}", "j:1:2: expected a string key or '}', got control character U+0001" },
		{ "{\"a\": 1}\x80", "j:1:9: trailing characters after the JSON value" },
		{ "{}\n\n  }", "j:3:3: trailing characters after the JSON value" },
		{ "  \n ", "j:1:1: unexpected end of input" },
		{ "{\"a\": [1,\n", "j:1:10: unexpected end of input" },
		{ "\xef\xbb\xbf{\"a\": x}", "j:1:7: expected a value, got 'x'" },
	};
	struct fa_err err;
	cJSON *root = NULL;
	char deep[2 * FA_JSONTEXT_MAX_DEPTH + 8];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fa_err_clear(&err);
		if (fa_jsontext_parse(cases[i].text, strlen(cases[i].text), "j", &root, &err) ==
		    FA_OK) {
			FAILF("case %zu parsed, expected: %s", i, cases[i].want);
			cJSON_Delete(root);
		} else if (strcmp(err.msg, cases[i].want) != 0) {
			FAILF("case %zu:\n  expected: %s\n  got:      %s", i, cases[i].want,
			      err.msg);
		}
		CU_ASSERT_PTR_NULL(root);
	}

	/* accepted: a byte order mark, surrogate pairs, escapes, deep but not too deep */
	CU_ASSERT_EQUAL(fa_jsontext_parse("\xef\xbb\xbf{\"a\": \"\\ud83d\\ude00\\n\\/\"}",
	                                  strlen("\xef\xbb\xbf{\"a\": \"\\ud83d\\ude00\\n\\/\"}"),
	                                  "j", &root, &err),
	                FA_OK);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "a")->valuestring, "\xf0\x9f\x98\x80\n/");
	cJSON_Delete(root);
	for (int i = 0; i < FA_JSONTEXT_MAX_DEPTH; i++)
		deep[n++] = '[';
	for (int i = 0; i < FA_JSONTEXT_MAX_DEPTH; i++)
		deep[n++] = ']';
	CU_ASSERT_EQUAL(fa_jsontext_parse(deep, n, "j", &root, &err), FA_OK);
	cJSON_Delete(root);
	memmove(deep + 1, deep, n++);
	deep[0] = '[';
	deep[n++] = ']';
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(fa_jsontext_parse(deep, n, "j", &root, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "j:1:513: nesting deeper than 512 levels");
	/* not NUL-terminated: only len bytes are read */
	CU_ASSERT_EQUAL(fa_jsontext_parse("{}xyz", 2, "j", &root, &err), FA_OK);
	cJSON_Delete(root);
}

/* Writes @text to @dir/@name (creating @dir/sub as needed). */
static void write_file(const char *dir, const char *name, const char *text)
{
	char *path = fa_xasprintf("%s/%s", dir, name);
	FILE *f;

	if (strchr(name, '/') != NULL) {
		char *sub = fa_xasprintf("%s/sub", dir);

		mkdir(sub, 0700);
		free(sub);
	}
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* Removes what the suite tests write under @dir, @dir, and frees @dir. */
static void remove_tree(char *dir)
{
	static const char *const names[] = {
		"sub/a.json", "sub/inner.json", "b.json",    "c.json",
		"suite.json", "bad.json",       "fifo.json", "sub",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = fa_xasprintf("%s/%s", dir, names[i]);

		remove(path);
		free(path);
	}
	rmdir(dir);
	free(dir);
}

/* A new empty folder under $TMPDIR (or the system's), for suite files. */
static char *temp_dir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir = fa_xasprintf("%s/fakeapi-test-suite-XXXXXX",
	                         base != NULL && base[0] != '\0' ? base : P_tmpdir);

	if (mkdtemp(dir) == NULL) {
		free(dir);
		return NULL;
	}
	return dir;
}

static char *scenario_with_id(const char *id)
{
	return fa_xasprintf("{\"id\": \"%s\", \"provider\": {\"keys\": {\"k1\": "
	                    "{\"secret\": \"sk-1\", \"user\": \"u1\"}}}, \"routes\": " ROUTE_OK "}",
	                    id);
}

static void suite__loads_scenarios_in_order_from_its_folder(void)
{
	char *dir = temp_dir();
	char *a = scenario_with_id("s-a"), *b = scenario_with_id("s-b");
	char *path, *want;
	struct fa_suite *su = NULL;
	struct fa_err err = { { 0 } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	write_file(dir, "sub/a.json", a);
	write_file(dir, "b.json", b);
	write_file(dir, "suite.json",
	           "{\"id\": \"five-step\", \"version\": \"1\", \"title\": \"the five steps\","
	           " \"scenarios\": [\"b.json\", \"sub/a.json\"]}");
	path = fa_xasprintf("%s/suite.json", dir);
	CU_ASSERT_EQUAL(fa_suite_load(path, &su, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(su);
	CU_ASSERT_STRING_EQUAL(su->file, path);
	CU_ASSERT_STRING_EQUAL(su->id, "five-step");
	CU_ASSERT_STRING_EQUAL(su->version, "1");
	CU_ASSERT_STRING_EQUAL(su->title, "the five steps");
	CU_ASSERT_EQUAL_FATAL(su->n_scenarios, 2);
	CU_ASSERT_STRING_EQUAL(su->scenarios[0]->id, "s-b");
	CU_ASSERT_STRING_EQUAL(su->scenarios[1]->id, "s-a");
	want = fa_xasprintf("%s/sub/a.json", dir);
	CU_ASSERT_STRING_EQUAL(su->scenarios[1]->file, want);
	free(want);
	{
		char sha[FA_SHA256_HEX];

		fa_digest_sha256_hex(b, strlen(b), sha);
		CU_ASSERT_STRING_EQUAL(su->scenarios[0]->sha256, sha);
	}
	fa_suite_free(su);
	su = NULL;

	/* a lone scenario is a suite of one */
	free(path);
	path = fa_xasprintf("%s/b.json", dir);
	CU_ASSERT_EQUAL(fa_suite_load(path, &su, &err), FA_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(su);
	CU_ASSERT_STRING_EQUAL(su->id, "s-b");
	CU_ASSERT_STRING_EQUAL(su->version, "");
	CU_ASSERT_PTR_NULL(su->title);
	CU_ASSERT_EQUAL_FATAL(su->n_scenarios, 1);
	CU_ASSERT_STRING_EQUAL(su->scenarios[0]->file, path);
	fa_suite_free(su);
	fa_suite_free(NULL);

	free(path);
	free(a);
	free(b);
	remove_tree(dir);
}

/* @tmpl with each "{dir}" replaced by @dir; the caller frees it. */
static char *subst_dir(const char *tmpl, const char *dir)
{
	char *out = fa_xstrdup(""), *next;
	const char *p = tmpl, *hit;

	while ((hit = strstr(p, "{dir}")) != NULL) {
		next = fa_xasprintf("%s%.*s%s", out, (int)(hit - p), p, dir);
		free(out);
		out = next;
		p = hit + 5;
	}
	next = fa_xasprintf("%s%s", out, p);
	free(out);
	return next;
}

/* A FIFO or a device is refused at once, never waited on: open would
 * block on a FIFO without a writer, and a read on one without an end. */
static void scenario__a_file_that_is_no_file_is_refused_at_once(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	char *dir = temp_dir(), *fifo, *want;
	char *text = NULL;
	size_t len = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	fifo = fa_xasprintf("%s/fifo.json", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	want = fa_xasprintf("%s: not a regular file", fifo);
	CU_ASSERT_EQUAL(fa_scenario_load(fifo, &sc, &err), FA_EINVAL);
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(fa_jsontext_read("/dev/null", &text, &len, &err), FA_EINVAL);
	CU_ASSERT_PTR_NULL(text);
	CU_ASSERT_STRING_EQUAL(err.msg, "/dev/null: not a regular file");
	remove(fifo);
	free(want);
	free(fifo);
	remove_tree(dir);
}

static void suite__errors_name_the_file_at_fault(void)
{
	static const struct {
		const char *suite, *want; /* "{dir}" stands for the folder */
	} cases[] = {
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\", \"c.json\"]}",
		  "{dir}/c.json: $.id: duplicate scenario id \"s-b\" (also in {dir}/b.json)" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\", \"bad.json\"]}",
		  "{dir}/bad.json: $.routes[0].responses[0].status: expected integer 100..599, got string \"200\"" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\", \"missing.json\"]}",
		  "{dir}/suite.json: $.scenarios[1]: {dir}/missing.json: cannot read: No such file or directory" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"sub\"]}",
		  "{dir}/suite.json: $.scenarios[0]: {dir}/sub: cannot read: Is a directory" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"fifo.json\"]}",
		  "{dir}/suite.json: $.scenarios[0]: {dir}/fifo.json: not a regular file" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"sub/inner.json\"]}",
		  "{dir}/suite.json: $.scenarios[0]: \"sub/inner.json\" is a suite: a suite lists scenario files, not suites" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\"], \"$schema\": 1}",
		  "{dir}/suite.json: $[\"$schema\"]: expected string, got integer 1" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\"], \"Title\": \"x\"}",
		  "{dir}/suite.json: $: unknown key \"Title\", did you mean \"title\"? (allowed: id, version, title, scenarios)" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"/etc/x.json\"]}",
		  "{dir}/suite.json: $.scenarios[0]: expected a path relative to the suite file's folder, got string \"/etc/x.json\"" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": []}",
		  "{dir}/suite.json: $.scenarios: expected non-empty array, got empty array" },
		{ "{\"id\": \"s\", \"version\": 1, \"scenarios\": [\"b.json\"]}",
		  "{dir}/suite.json: $.version: expected non-empty string, got integer 1" },
		{ "{\"id\": \"s\", \"scenarios\": [\"b.json\"]}",
		  "{dir}/suite.json: $: missing required key \"version\"" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"b.json\"], \"routes\": []}",
		  "{dir}/suite.json: $: unknown key \"routes\" (allowed: id, version, title, scenarios)" },
		{ "{\"id\": \"s\", \"version\": \"1\", \"scenarios\": [\"suite.json\"]}",
		  "{dir}/suite.json: $.scenarios[0]: \"suite.json\" is a suite: a suite lists scenario files, not suites" },
		{ "{\"id\": \"s\", \"version\": \"1\",\n \"scenarios\": [\"b.json\",]}",
		  "{dir}/suite.json:2:24: a trailing comma before ']' (JSON allows none)" },
	};
	char *dir = temp_dir();
	char *b = scenario_with_id("s-b");
	char *bad = fa_xasprintf("{\"id\": \"x\", \"provider\": {\"keys\": {\"k1\": "
	                         "{\"secret\": \"sk-1\", \"user\": \"u1\"}}}, \"routes\": "
	                         "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", "
	                         "\"responses\": [{\"status\": \"200\"}]}]}");
	char *path;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	write_file(dir, "b.json", b);
	write_file(dir, "c.json", b);
	write_file(dir, "bad.json", bad);
	write_file(dir, "sub/inner.json",
	           "{\"id\": \"in\", \"version\": \"1\", \"scenarios\": [\"x.json\"]}");
	path = fa_xasprintf("%s/fifo.json", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	free(path);
	path = fa_xasprintf("%s/suite.json", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fa_suite *su = NULL;
		struct fa_err err = { { 0 } };
		char *want = subst_dir(cases[i].want, dir);

		write_file(dir, "suite.json", cases[i].suite);
		if (fa_suite_load(path, &su, &err) == FA_OK)
			FAILF("case %zu loaded, expected: %s", i, want);
		else if (strcmp(err.msg, want) != 0)
			FAILF("case %zu:\n  expected: %s\n  got:      %s", i, want, err.msg);
		CU_ASSERT_PTR_NULL(su);
		fa_suite_free(su);
		free(want);
	}
	free(path);
	free(b);
	free(bad);
	remove_tree(dir);
}

/* The example in the format reference is real and valid. */
static void scenario__documented_example_is_valid(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	char *doc = slurp(FORMAT_DOC, NULL);
	char *example = slurp(GOOD_EXAMPLE, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(example);
	if (strstr(doc, example) == NULL)
		FAILF("%s does not hold %s verbatim", FORMAT_DOC, GOOD_EXAMPLE);
	CU_ASSERT_EQUAL(fa_scenario_load(GOOD_EXAMPLE, &sc, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	fa_scenario_free(sc);
	free(doc);
	free(example);
}

static void schema__paths_quote_keys_that_are_not_identifiers(void)
{
	struct fa_schema s;
	struct fa_err err = { { 0 } };
	size_t m;

	fa_schema_init(&s, "f", &err);
	m = fa_schema_enter(&s, "provider");
	fa_schema_enter(&s, "keys");
	fa_schema_enter(&s, "ops-1");
	CU_ASSERT_STRING_EQUAL(s.path, "$.provider.keys[\"ops-1\"]");
	fa_schema_leave(&s, m);
	fa_schema_enter(&s, "a\"b");
	fa_schema_enter_index(&s, 3);
	fa_schema_enter(&s, "_ok9");
	CU_ASSERT_STRING_EQUAL(s.path, "$[\"a\\\"b\"][3]._ok9");
	CU_ASSERT_EQUAL(fa_schema_fail(&s, "boom %d", 1), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "f: $[\"a\\\"b\"][3]._ok9: boom 1");
	fa_schema_leave(&s, 0);
	CU_ASSERT_STRING_EQUAL(s.path, "");
	/* a very long path is cut short, never overflowed */
	fa_schema_init(&s, "f", &err);
	for (int i = 0; i < 200; i++)
		fa_schema_enter(&s, "abcdefgh");
	CU_ASSERT_EQUAL(strlen(s.path), sizeof(s.path) - 1);
	CU_ASSERT_EQUAL(s.len, sizeof(s.path) - 1);
}

void test_scenario_register(void)
{
	CU_pSuite suite = CU_add_suite("scenario", NULL, NULL);

	if (suite == NULL)
		return;
	CU_add_test(suite, "scenario__bad_files_give_their_exact_message",
	            scenario__bad_files_give_their_exact_message);
	CU_add_test(suite, "scenario__full_example_fills_every_field",
	            scenario__full_example_fills_every_field);
	CU_add_test(suite, "scenario__defaults_when_fields_are_left_out",
	            scenario__defaults_when_fields_are_left_out);
	CU_add_test(suite, "scenario__times_is_one_each_then_forever_for_the_last",
	            scenario__times_is_one_each_then_forever_for_the_last);
	CU_add_test(suite, "scenario__path_templates", scenario__path_templates);
	CU_add_test(suite, "scenario__goal_cancel_and_step5_expect_are_read",
	            scenario__goal_cancel_and_step5_expect_are_read);
	CU_add_test(suite, "scenario__unknown_key_lists_the_allowed_ones",
	            scenario__unknown_key_lists_the_allowed_ones);
	CU_add_test(suite, "scenario__integers_and_descriptions",
	            scenario__integers_and_descriptions);
	CU_add_test(suite, "scenario__unreadable_file_is_eio", scenario__unreadable_file_is_eio);
	CU_add_test(suite, "scenario__a_file_that_is_no_file_is_refused_at_once",
	            scenario__a_file_that_is_no_file_is_refused_at_once);
	CU_add_test(suite, "scenario__a_top_level_schema_member_is_ignored",
	            scenario__a_top_level_schema_member_is_ignored);
	CU_add_test(suite, "scenario__a_suite_is_not_a_scenario",
	            scenario__a_suite_is_not_a_scenario);
	CU_add_test(suite, "scenario__unknown_key_near_a_known_one_says_which",
	            scenario__unknown_key_near_a_known_one_says_which);
	CU_add_test(suite, "scenario__sha256_covers_the_raw_bytes",
	            scenario__sha256_covers_the_raw_bytes);
	CU_add_test(suite, "scenario__documented_example_is_valid",
	            scenario__documented_example_is_valid);
	CU_add_test(suite, "jsontext__strict_syntax_with_positions",
	            jsontext__strict_syntax_with_positions);
	CU_add_test(suite, "schema__paths_quote_keys_that_are_not_identifiers",
	            schema__paths_quote_keys_that_are_not_identifiers);
	CU_add_test(suite, "suite__loads_scenarios_in_order_from_its_folder",
	            suite__loads_scenarios_in_order_from_its_folder);
	CU_add_test(suite, "suite__errors_name_the_file_at_fault",
	            suite__errors_name_the_file_at_fault);
}
