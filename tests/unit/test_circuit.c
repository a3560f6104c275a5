/* test_circuit.c -- classify.circuit on hand-made journals. */
#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check_fixture.h"
#include "circuit.h"

/*
 * Route "search" (POST /v1/search): 422 unsupported_filter, then 422
 * with another code, then 400 whose error is a bare string, then 429.
 * Route "read" (GET /v1/records/{id}): 404 without a body. Tasks q1..q6.
 */
static void setup(struct fx *f, const char *expect)
{
	struct fa_response_spec *on_search = &f->responses[0], *on_read = &f->responses[4];

	fx_init(f, expect, "q", 6);
	on_search[0] = (struct fa_response_spec){
		.status = 422,
		.body = cJSON_Parse("{\"error\": {\"code\": \"unsupported_filter\","
		                    " \"message\": \"no\"}}")
	};
	on_search[1] = (struct fa_response_spec){
		.status = 422, .body = cJSON_Parse("{\"error\": {\"code\": \"too_many\"}}")
	};
	on_search[2] =
	        (struct fa_response_spec){ .status = 400,
		                           .body = cJSON_Parse("{\"error\": \"bad_json\"}") };
	on_search[3] = (struct fa_response_spec){ .status = 429 };
	on_read[0] = (struct fa_response_spec){ .status = 404 };
	f->routes[0] = (struct fa_route_spec){ .id = "search",
		                               .method = "POST",
		                               .path = "/v1/search",
		                               .responses = on_search,
		                               .n_responses = 4 };
	f->routes[1] = (struct fa_route_spec){ .id = "read",
		                               .method = "GET",
		                               .path = "/v1/records/{id}",
		                               .responses = on_read,
		                               .n_responses = 1 };
	f->sc.routes = f->routes;
	f->sc.n_routes = 2;
}

/* An attempt of @task on @route (NULL: none; then @path) at @arr_ms that
 * got response @idx of it with @status. */
static struct fa_attempt *add(struct fx *f, const char *task, const char *route, const char *method,
                              const char *path, int64_t arr_ms, int idx, int status)
{
	struct fa_attempt *a = fx_add(f, task, arr_ms, status);

	a->route = fa_xstrdup(route);
	a->method = fa_xstrdup(method);
	a->path = fa_xstrdup(path);
	a->response_index = idx;
	a->fault = fa_xstrdup(route ? "respond" : "no_route");
	return a;
}

static struct fa_attempt *search(struct fx *f, const char *task, int64_t arr_ms, int idx)
{
	return add(f, task, "search", "POST", "/v1/search", arr_ms, idx, f->responses[idx].status);
}

static struct hx_check_result judge(struct fx *f)
{
	return fx_judge(f, hx_circuit_check, "classify.circuit", HX_MODE_EXEC);
}

#define MAX3 "{\"classify.circuit\": {\"max_identical\": 3}}"

static void circuit__passes_up_to_the_count(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, MAX3);
	search(&f, "q1", 0, 0);
	search(&f, "q2", 100, 0);
	search(&f, "q3", 200, 0);
	search(&f, "q4", 300, 1); /* another code: another failure */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "the most repeated failure, POST /v1/search (route "
	                       "search) 422 \"unsupported_filter\" was answered 3 times (tasks "
	                       "q1, q2, q3), at most 3 allowed");
	CU_ASSERT_EQUAL(r.n_evidence, 4);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__fails_past_the_count_across_tasks(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, MAX3);
	search(&f, "q1", 0, 0);
	search(&f, "q1", 50, 0);
	search(&f, "q2", 100, 0);
	search(&f, "q3", 200, 0);
	search(&f, "q4", 300, 1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "POST /v1/search (route search) 422 "
	                       "\"unsupported_filter\" was answered 4 times, at most 3 allowed "
	                       "(tasks q1, q2, q3; seq 4, the first past the count, arrived at "
	                       "+200.0 ms)");
	/* the repeated failures, not the other one */
	CU_ASSERT_EQUAL(r.n_evidence, 4);
	CU_ASSERT_EQUAL(r.evidence[3], 4);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__groups_by_method_route_status_and_code(void)
{
	struct fx f;
	struct hx_check_result r;

	/* a bare string error is the code; 429 and 408 are no identical
	 * failure; a failure the client never got counts for nothing */
	setup(&f, "{\"classify.circuit\": {\"max_identical\": 1}}");
	search(&f, "q1", 0, 0);
	search(&f, "q2", 10, 1);
	search(&f, "q3", 20, 2);
	search(&f, "q4", 30, 3);
	search(&f, "q4", 40, 3);
	add(&f, "q5", "search", "POST", "/v1/search", 50, 0, 408);
	add(&f, "q5", "search", "POST", "/v1/search", 60, 0, 408);
	search(&f, "q6", 70, 0)->delivered = FA_DELIVERED_CLIENT_GONE;
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "at most 1 allowed"));
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	hx_check_result_release(&r);
	search(&f, "q6", 80, 2);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "POST /v1/search (route search) 400 \"bad_json\" was "
	                          "answered 2 times"));
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__attempts_without_a_route_group_by_path(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, "{\"classify.circuit\": {\"max_identical\": 2}}");
	add(&f, "q1", NULL, "GET", "/v1/nowhere", 0, -1, 404);
	add(&f, "q2", NULL, "GET", "/v1/elsewhere", 10, -1, 404);
	add(&f, "q3", NULL, "GET", "/v1/nowhere", 20, -1, 404);
	add(&f, "q4", "read", "GET", "/v1/records/7", 30, 0, 404);
	add(&f, "q5", "read", "GET", "/v1/records/8", 40, 0, 404);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	/* one route template, whatever the id in the path */
	add(&f, "q6", "read", "GET", "/v1/records/9", 50, 0, 404);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "GET /v1/records/{id} (route read) 404 was answered "
	                          "3 times"));
	hx_check_result_release(&r);
	add(&f, "q6", NULL, "GET", "/v1/nowhere", 60, -1, 404);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "GET /v1/nowhere (no route) 404 was answered 3 times"));
	CU_ASSERT_TRUE(fx_has(&r, "other failures repeated too"));
	hx_check_result_release(&r);
	fx_release(&f);
}

/* A 401 is answered before routing (no route in the journal): it still
 * groups under the route template its path matches (the retry-safety guide's example:
 * repeating a 401 after the credentials were revoked). */
static void circuit__unrouted_answers_group_by_template(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, "{\"classify.circuit\": {\"max_identical\": 2}}");
	add(&f, "q1", NULL, "GET", "/v1/records/1", 0, -1, 401);
	add(&f, "q2", NULL, "GET", "/v1/records/2", 10, -1, 401);
	add(&f, "q3", NULL, "GET", "/v1/records/3", 20, -1, 401);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(fx_has(&r, "GET /v1/records/{id} (route read) 401 was answered "
	                          "3 times"));
	hx_check_result_release(&r);
	fx_release(&f);
}

/* Fewer identical failures than the count: the circuit was never tested. */
static void circuit__is_na_below_the_count(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, MAX3);
	search(&f, "q1", 0, 0);
	search(&f, "q2", 100, 0);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "answered 2 times (tasks q1, q2): fewer than the 3 "
	                          "after which the circuit must open"));
	hx_check_result_release(&r);
	search(&f, "q3", 200, 0);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__is_na_without_a_count_or_a_failure(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f, NULL);
	search(&f, "q1", 0, 0);
	search(&f, "q1", 10, 0);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "max_identical"));
	hx_check_result_release(&r);
	fx_release(&f);

	setup(&f, MAX3);
	search(&f, "q1", 0, 3);
	search(&f, "q1", 10, 3);
	add(&f, "q1", "search", "POST", "/v1/search", 20, 0, 200);
	add(&f, NULL, "search", "POST", "/v1/search", 30, 0, 422); /* unattributed */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "no task received a 4xx other than 408 and 429"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_circuit_register(void)
{
	CU_pSuite s = CU_add_suite("circuit", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "circuit__passes_up_to_the_count", circuit__passes_up_to_the_count);
	CU_add_test(s, "circuit__fails_past_the_count_across_tasks",
	            circuit__fails_past_the_count_across_tasks);
	CU_add_test(s, "circuit__groups_by_method_route_status_and_code",
	            circuit__groups_by_method_route_status_and_code);
	CU_add_test(s, "circuit__attempts_without_a_route_group_by_path",
	            circuit__attempts_without_a_route_group_by_path);
	CU_add_test(s, "circuit__unrouted_answers_group_by_template",
	            circuit__unrouted_answers_group_by_template);
	CU_add_test(s, "circuit__is_na_below_the_count", circuit__is_na_below_the_count);
	CU_add_test(s, "circuit__is_na_without_a_count_or_a_failure",
	            circuit__is_na_without_a_count_or_a_failure);
}
