/* test_route.c -- path templates, body rendering, cursors. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "route.h"
#include "scope.h"

static void route__matches_literal_and_param_segments(void)
{
	struct fa_params p = { 0 };

	CU_ASSERT_TRUE(fa_route_match("/v1/records/{id}", "/v1/records/42", &p));
	CU_ASSERT_EQUAL_FATAL(p.n, 1);
	CU_ASSERT_STRING_EQUAL(p.name[0], "id");
	CU_ASSERT_STRING_EQUAL(p.value[0], "42");
	fa_params_release(&p);
	CU_ASSERT_TRUE(fa_route_match("/a/{x}/b/{y}", "/a/1/b/2", &p));
	CU_ASSERT_EQUAL(p.n, 2);
	CU_ASSERT_STRING_EQUAL(p.value[1], "2");
	fa_params_release(&p);
	CU_ASSERT_TRUE(fa_route_match("/", "/", NULL));
}

static void route__rejects_other_shapes(void)
{
	CU_ASSERT_FALSE(fa_route_match("/v1/records/{id}", "/v1/records", NULL));
	CU_ASSERT_FALSE(fa_route_match("/v1/records/{id}", "/v1/records/", NULL));
	CU_ASSERT_FALSE(fa_route_match("/v1/records/{id}", "/v1/records/1/x", NULL));
	CU_ASSERT_FALSE(fa_route_match("/v1/records", "/v1/recordsX", NULL));
	CU_ASSERT_FALSE(fa_route_match("/v1/records", "/v2/records", NULL));
	CU_ASSERT_FALSE(fa_route_match("/v1", "v1", NULL));
}

static void route__renders_params_inside_strings_only(void)
{
	struct fa_params p = { 0 };
	cJSON *body = cJSON_Parse("{\"id\": \"{id}\", \"{id}\": [\"x-{id}-{nope}\", 1]}");
	cJSON *out;
	char *text;

	CU_ASSERT_TRUE_FATAL(fa_route_match("/r/{id}", "/r/a\"b", &p));
	out = fa_route_render(body, &p);
	text = cJSON_PrintUnformatted(out);
	CU_ASSERT_STRING_EQUAL(text, "{\"id\":\"a\\\"b\",\"{id}\":[\"x-a\\\"b-{nope}\",1]}");
	free(text);
	cJSON_Delete(out);
	cJSON_Delete(body);
	fa_params_release(&p);
	CU_ASSERT_PTR_NULL(fa_route_render(NULL, NULL));
}

/* A scenario with one route: 429 twice, then 500 once, then 200 for ever. */
static struct fa_response_spec responses[3] = {
	{ .times = 2, .status = 429 },
	{ .times = 1, .status = 500 },
	{ .times = 0, .status = 200 },
};
static struct fa_route_spec routes[1] = {
	{ .id = "r", .method = "GET", .path = "/r", .responses = responses, .n_responses = 3 },
};

static void route__shared_cursor_plays_times_then_next(void)
{
	struct fa_cursors *c = fa_cursors_new(routes, 1);
	size_t want[] = { 0, 0, 1, 2, 2, 2 };

	routes[0].cursor = FA_CURSOR_SHARED;
	for (size_t i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(fa_cursors_next(c, 0, i % 2 ? "user:a" : "user:b"), want[i]);
	fa_cursors_reset(c);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:a"), 0);
	fa_cursors_free(c);
}

static void route__scope_cursor_keeps_one_position_per_scope(void)
{
	struct fa_cursors *c = fa_cursors_new(routes, 1);

	routes[0].cursor = FA_CURSOR_SCOPE;
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:a"), 0);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:a"), 0);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:b"), 0);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:a"), 1);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:b"), 0);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, "user:b"), 1);
	routes[0].cursor = FA_CURSOR_SHARED;
	fa_cursors_free(c);
}

static void route__last_entry_with_times_repeats(void)
{
	struct fa_response_spec two[2] = { { .times = 1, .status = 429 },
		                           { .times = 1, .status = 200 } };
	struct fa_route_spec r = {
		.id = "r", .method = "GET", .path = "/r", .responses = two, .n_responses = 2
	};
	struct fa_cursors *c = fa_cursors_new(&r, 1);

	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, NULL), 0);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, NULL), 1);
	CU_ASSERT_EQUAL(fa_cursors_next(c, 0, NULL), 1);
	fa_cursors_free(c);
}

static void scope__pause_only_grows_and_in_flight_counts(void)
{
	struct fa_scopes *s = fa_scopes_new();

	CU_ASSERT_EQUAL(fa_scopes_pause_until(s, "user:a"), -1);
	fa_scopes_pause(s, "user:a", 1000);
	fa_scopes_pause(s, "user:a", 500);
	CU_ASSERT_EQUAL(fa_scopes_pause_until(s, "user:a"), 1000);
	CU_ASSERT_EQUAL(fa_scopes_pause_until(s, "user:b"), -1);
	CU_ASSERT_EQUAL(fa_scopes_enter(s, "user:a"), 1);
	CU_ASSERT_EQUAL(fa_scopes_enter(s, "user:a"), 2);
	fa_scopes_leave(s, "user:a");
	fa_scopes_leave(s, "user:a");
	fa_scopes_leave(s, "user:a");
	CU_ASSERT_EQUAL(fa_scopes_enter(s, "user:a"), 1);
	fa_scopes_reset(s);
	CU_ASSERT_EQUAL(fa_scopes_pause_until(s, "user:a"), -1);
	fa_scopes_free(s);
}

void test_route_register(void)
{
	CU_pSuite s = CU_add_suite("route", NULL, NULL);

	CU_add_test(s, "route__matches_literal_and_param_segments",
	            route__matches_literal_and_param_segments);
	CU_add_test(s, "route__rejects_other_shapes", route__rejects_other_shapes);
	CU_add_test(s, "route__renders_params_inside_strings_only",
	            route__renders_params_inside_strings_only);
	CU_add_test(s, "route__shared_cursor_plays_times_then_next",
	            route__shared_cursor_plays_times_then_next);
	CU_add_test(s, "route__scope_cursor_keeps_one_position_per_scope",
	            route__scope_cursor_keeps_one_position_per_scope);
	CU_add_test(s, "route__last_entry_with_times_repeats",
	            route__last_entry_with_times_repeats);
	CU_add_test(s, "scope__pause_only_grows_and_in_flight_counts",
	            scope__pause_only_grows_and_in_flight_counts);
}
