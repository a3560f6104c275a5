/* test_task_spec.c -- a scenario's tasks once loaded: a route to reach, no key header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "scenario.h"

#define ROUTE_A                                                                                    \
	"[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/a\", "                                 \
	"\"responses\": [{\"status\": 200}]}]"

/* The message (or "") a scenario with routes @routes, $.provider extra
 * @provider_extra and one task "t" sending @method @path, with
 * @task_extra members ("" or ", \"headers\": ..."), gets. */
static void task_err(const char *provider_extra, const char *routes, const char *method,
                     const char *path, const char *task_extra, struct fa_err *err)
{
	char *harness = fa_xasprintf("{\"tasks\": [{\"id\": \"t\", \"key\": \"k1\", "
	                             "\"method\": \"%s\", \"path\": \"%s\"%s}],"
	                             " \"events\": [{\"at_ms\": 0, \"send\": [\"t\"]}]}",
	                             method, path, task_extra);
	char *text = fa_xasprintf("{\"id\": \"s1\", \"provider\": {\"keys\": {\"k1\": "
	                          "{\"secret\": \"sk-1\", \"user\": \"u1\"}}%s}, "
	                          "\"routes\": %s, \"harness\": %s}",
	                          provider_extra, routes, harness);
	struct fa_scenario *sc = NULL;

	fa_err_clear(err);
	if (fa_scenario_parse(text, strlen(text), "t.json", &sc, err) == FA_OK)
		err->msg[0] = '\0';
	fa_scenario_free(sc);
	free(text);
	free(harness);
}

/* task_err() for a task without extra members. */
static void task_route_err(const char *provider_extra, const char *routes, const char *method,
                           const char *path, struct fa_err *err)
{
	task_err(provider_extra, routes, method, path, "", err);
}

/* A task must reach a route (the provider's matching: method, template,
 * decoded path, query ignored) or a reconciliation read kept on; else it
 * would be answered 404 no_route, a scenario's mistake a client passes. */
static void task_spec__task_must_reach_a_route_or_a_reconciliation_read(void)
{
	static const char routes[] =
	        "[{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/records/{id}\","
	        "  \"responses\": [{\"status\": 200}]},"
	        " {\"id\": \"c\", \"kind\": \"chat_completions\", \"method\": \"POST\","
	        "  \"path\": \"/v1/chat/completions\", \"responses\": [{\"status\": 200}]}]";
	static const char *const ok[][2] = {
		{ "GET", "/v1/records/42" },
		{ "GET", "/v1/records/42?fields=id&x" },
		{ "GET", "/v1/rec%6Frds/42" }, /* decoded before routing */
		{ "POST", "/v1/chat/completions" },
		{ "GET", "/v1/records?client_reference=ref-1" },
		{ "GET", "/v1/records?a=1&client%5Freference=ref-1" },
		{ "GET", "/v1/records?client_reference" },
		{ "GET", "/v1/operations/key-1" },
	};
	static const char *const bad[][3] = {
		{ "GET", "/v1/record/42", "GET /v1/record/42" },
		{ "HEAD", "/v1/records/42", "HEAD /v1/records/42" },
		{ "POST", "/v1/records/42", "POST /v1/records/42" },
		{ "GET", "/v1/records/42/x", "GET /v1/records/42/x" },
		{ "GET", "/v1/records/a%2Fb", "GET /v1/records/a%2Fb" }, /* a %2F splits */
		{ "GET", "/v1/records", "GET /v1/records" },
		{ "GET", "/v1/records?client_ref=x", "GET /v1/records?client_ref=x" },
		{ "POST", "/v1/operations/key-1", "POST /v1/operations/key-1" },
		{ "GET", "/v1/operations/a/b", "GET /v1/operations/a/b" },
	};
	struct fa_err err;
	char want[512];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		task_route_err("", routes, ok[i][0], ok[i][1], &err);
		if (err.msg[0] != '\0')
			fprintf(stderr, "\n%s %s refused: %s\n", ok[i][0], ok[i][1], err.msg);
		CU_ASSERT_STRING_EQUAL(err.msg, "");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want),
		         "t.json: $.harness.tasks[0]: %s matches no route (routes: GET "
		         "/v1/records/{id}, POST /v1/chat/completions)",
		         bad[i][2]);
		task_route_err("", routes, bad[i][0], bad[i][1], &err);
		if (strcmp(err.msg, want) != 0)
			fprintf(stderr, "\n%s %s:\n  expected: %s\n  got:      %s\n", bad[i][0],
			        bad[i][1], want, err.msg);
		CU_ASSERT_STRING_EQUAL(err.msg, want);
	}
	/* reconciliation reads switched off answer nothing */
	task_route_err(", \"reconciliation\": {\"by_client_reference\": false}", routes, "GET",
	               "/v1/records?client_reference=ref-1", &err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg,
	                              "$.harness.tasks[0]: GET /v1/records?client_reference"
	                              "=ref-1 matches no route"));
	task_route_err(", \"reconciliation\": {\"by_operation\": false}", routes, "GET",
	               "/v1/operations/key-1", &err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "matches no route"));
}

/* The routes a no-route message lists stop, with "...", where the error
 * would be cut short. */
static void task_spec__no_route_message_lists_as_many_routes_as_fit(void)
{
	char routes[4096] = "[";
	size_t used = 1;
	struct fa_err err;

	for (int i = 0; i < 40; i++)
		used += (size_t)snprintf(routes + used, sizeof(routes) - used,
		                         "%s{\"id\": \"r%d\", \"method\": \"GET\", "
		                         "\"path\": \"/v1/route-number-%d\", "
		                         "\"responses\": [{\"status\": 200}]}",
		                         i > 0 ? ", " : "", i, i);
	snprintf(routes + used, sizeof(routes) - used, "]");
	task_route_err("", routes, "GET", "/v1/nowhere", &err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "matches no route (routes: GET /v1/route-number-0, "
	                                       "GET /v1/route-number-1, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ", ...)"));
	CU_ASSERT_PTR_NULL(strstr(err.msg, "route-number-39"));
	CU_ASSERT_TRUE(strlen(err.msg) < sizeof(err.msg) - 1);
}

/* The provider reads a key from Authorization and X-Api-Key: a task
 * header by either name (any letter case) is refused, others pass. */
static void task_spec__a_task_header_never_carries_a_key(void)
{
	static const char *const bad[] = { "Authorization", "authorization", "X-Api-Key",
		                           "x-api-key" };
	struct fa_err err;
	char extra[160], want[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(extra, sizeof(extra),
		         ", \"headers\": {\"Accept\": \"*/*\", \"%s\": \"Bearer x\"}", bad[i]);
		snprintf(want, sizeof(want),
		         "t.json: $.harness.tasks[0].headers: header \"%s\" cannot go in a task "
		         "(the client sends its key, FAKEAPI_KEY, itself)",
		         bad[i]);
		task_err("", ROUTE_A, "GET", "/a", extra, &err);
		CU_ASSERT_STRING_EQUAL(err.msg, want);
	}
	task_err("", ROUTE_A, "GET", "/a",
	         ", \"headers\": {\"Idempotency-Key\": \"k-1\", \"Proxy-Authorization\": \"x\"}",
	         &err);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
}

void test_task_spec_register(void)
{
	CU_pSuite s = CU_add_suite("task_spec", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "task_spec__task_must_reach_a_route_or_a_reconciliation_read",
	            task_spec__task_must_reach_a_route_or_a_reconciliation_read);
	CU_add_test(s, "task_spec__no_route_message_lists_as_many_routes_as_fit",
	            task_spec__no_route_message_lists_as_many_routes_as_fit);
	CU_add_test(s, "task_spec__a_task_header_never_carries_a_key",
	            task_spec__a_task_header_never_carries_a_key);
}
