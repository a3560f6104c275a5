/* test_circuit.c -- classify.circuit on hand-made journals. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "circuit.h"

#define MS 1000 /* µs */

/*
 * Route "search" (POST /v1/search): 422 unsupported_filter, then 422
 * with another code, then 400 whose error is a bare string, then 429.
 * Route "read" (GET /v1/records/{id}): 404 without a body. Tasks q1..q6.
 */
struct fx {
	struct fa_scenario sc;
	struct fa_route_spec routes[2];
	struct fa_response_spec search[4], read[1];
	struct fa_task_spec tasks[6];
	struct fa_attempt a[16];
	size_t n;
};

static void fx_init(struct fx *f, const char *expect)
{
	static const char *ids[] = { "q1", "q2", "q3", "q4", "q5", "q6" };

	memset(f, 0, sizeof(*f));
	f->search[0] = (struct fa_response_spec){
		.status = 422, .body = cJSON_Parse("{\"error\": {\"code\": \"unsupported_filter\","
						   " \"message\": \"no\"}}") };
	f->search[1] = (struct fa_response_spec){
		.status = 422, .body = cJSON_Parse("{\"error\": {\"code\": \"too_many\"}}") };
	f->search[2] = (struct fa_response_spec){
		.status = 400, .body = cJSON_Parse("{\"error\": \"bad_json\"}") };
	f->search[3] = (struct fa_response_spec){ .status = 429 };
	f->read[0] = (struct fa_response_spec){ .status = 404 };
	f->routes[0] = (struct fa_route_spec){ .id = "search", .method = "POST",
					       .path = "/v1/search", .responses = f->search,
					       .n_responses = 4 };
	f->routes[1] = (struct fa_route_spec){ .id = "read", .method = "GET",
					       .path = "/v1/records/{id}", .responses = f->read,
					       .n_responses = 1 };
	f->sc.routes = f->routes;
	f->sc.n_routes = 2;
	for (size_t i = 0; i < 6; i++)
		f->tasks[i].id = (char *)ids[i];
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = 6;
	f->sc.harness.expect = expect ? cJSON_Parse(expect) : NULL;
}

/* An attempt of @task on @route (NULL: none; then @path) at @arr_ms that
 * got response @idx of it with @status. */
static struct fa_attempt *add(struct fx *f, const char *task, const char *route,
			      const char *method, const char *path, int64_t arr_ms, int idx,
			      int status)
{
	struct fa_attempt *a = &f->a[f->n];

	CU_ASSERT_FATAL(f->n < 16);
	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(task);
	a->route = fa_xstrdup(route);
	a->method = fa_xstrdup(method);
	a->path = fa_xstrdup(path);
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = a->t_done_us = (arr_ms + 1) * MS;
	a->response_index = idx;
	a->status = status;
	a->delivered = FA_DELIVERED_COMPLETE;
	a->fault = fa_xstrdup(route ? "respond" : "no_route");
	return a;
}

static struct fa_attempt *search(struct fx *f, const char *task, int64_t arr_ms, int idx)
{
	return add(f, task, "search", "POST", "/v1/search", arr_ms, idx, f->search[idx].status);
}

static void fx_release(struct fx *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	for (size_t i = 0; i < 4; i++)
		cJSON_Delete(f->search[i].body);
	cJSON_Delete(f->sc.harness.expect);
}

static struct hx_check_result judge(struct fx *f)
{
	struct hx_check_input in = { .sc = &f->sc, .attempts = f->a, .n_attempts = f->n,
				     .mode = HX_MODE_EXEC };
	struct hx_check_result r = { .id = "classify.circuit" };

	hx_circuit_check(&in, &r);
	CU_ASSERT_PTR_NOT_NULL(r.detail);
	return r;
}

#define MAX3 "{\"classify.circuit\": {\"max_identical\": 3}}"

static void circuit__passes_up_to_the_count(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, MAX3);
	search(&f, "q1", 0, 0);
	search(&f, "q2", 100, 0);
	search(&f, "q3", 200, 0);
	search(&f, "q4", 300, 1); /* another code: another failure */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_STRING_EQUAL(r.detail, "the most repeated failure, POST /v1/search (route "
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

	fx_init(&f, MAX3);
	search(&f, "q1", 0, 0);
	search(&f, "q1", 50, 0);
	search(&f, "q2", 100, 0);
	search(&f, "q3", 200, 0);
	search(&f, "q4", 300, 1);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "POST /v1/search (route search) 422 "
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
	fx_init(&f, "{\"classify.circuit\": {\"max_identical\": 1}}");
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
	CU_ASSERT_TRUE(strstr(r.detail, "at most 1 allowed") != NULL);
	CU_ASSERT_EQUAL(r.n_evidence, 3);
	hx_check_result_release(&r);
	search(&f, "q6", 80, 2);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(strstr(r.detail, "POST /v1/search (route search) 400 \"bad_json\" was "
				       "answered 2 times") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__attempts_without_a_route_group_by_path(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, "{\"classify.circuit\": {\"max_identical\": 2}}");
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
	CU_ASSERT_TRUE(strstr(r.detail, "GET /v1/records/{id} (route read) 404 was answered "
				       "3 times") != NULL);
	hx_check_result_release(&r);
	add(&f, "q6", NULL, "GET", "/v1/nowhere", 60, -1, 404);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_TRUE(strstr(r.detail, "GET /v1/nowhere (no route) 404 was answered 3 times")
		       != NULL);
	CU_ASSERT_TRUE(strstr(r.detail, "other failures repeated too") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void circuit__is_na_without_a_count_or_a_failure(void)
{
	struct fx f;
	struct hx_check_result r;

	fx_init(&f, NULL);
	search(&f, "q1", 0, 0);
	search(&f, "q1", 10, 0);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(strstr(r.detail, "max_identical") != NULL);
	hx_check_result_release(&r);
	fx_release(&f);

	fx_init(&f, MAX3);
	search(&f, "q1", 0, 3);
	search(&f, "q1", 10, 3);
	add(&f, "q1", "search", "POST", "/v1/search", 20, 0, 200);
	add(&f, NULL, "search", "POST", "/v1/search", 30, 0, 422); /* unattributed */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(strstr(r.detail, "no task received a 4xx other than 408 and 429") != NULL);
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
	CU_add_test(s, "circuit__is_na_without_a_count_or_a_failure",
		    circuit__is_na_without_a_count_or_a_failure);
}
