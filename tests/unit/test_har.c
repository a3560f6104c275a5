/* test_har.c -- HAR captures to scenarios: templates, headers, grouping, times, at_ms, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "har.h"
#include "import.h"

/* An entry: started at @t, @method @url, answered @status with the
 * response headers @hdrs (a JSON array text) and body @text (JSON text
 * of a string, or "null" for none), waited @wait ms. */
static char *entry(const char *t, const char *method, const char *url, const char *status,
		   const char *hdrs, const char *text, int wait)
{
	return fa_xasprintf("{\"startedDateTime\": \"%s\", \"time\": 1, \"request\": {\"method\": "
			    "\"%s\", \"url\": \"%s\", \"headers\": []}, \"response\": {\"status\": "
			    "%s, \"headers\": %s, \"content\": {\"mimeType\": \"application/json\", "
			    "\"text\": %s}}, \"timings\": {\"wait\": %d}}",
			    t, method, url, status, hdrs, text, wait);
}

/* Convert a HAR whose entries are the @n texts in @e (freed here). On
 * failure returns NULL with the message in @msg. */
static cJSON *convert(char **e, size_t n, const struct hx_import_opts *opts, char *msg,
		      size_t msg_len)
{
	size_t len = 64;
	char *text, *p;
	struct hx_import_opts none = { 0 };
	struct hx_import_warnings w = { 0 };
	struct fa_err err = { { 0 } };
	cJSON *out = NULL;

	for (size_t i = 0; i < n; i++)
		len += strlen(e[i]) + 2;
	text = fa_xmalloc(len);
	p = text + snprintf(text, len, "{\"log\": {\"version\": \"1.2\", \"entries\": [");
	for (size_t i = 0; i < n; i++) {
		p += snprintf(p, len - (size_t)(p - text), "%s%s", i ? ", " : "", e[i]);
		free(e[i]);
	}
	snprintf(p, len - (size_t)(p - text), "]}}");
	if (hx_har_convert(text, strlen(text), "capture.har", opts ? opts : &none, &out, &w,
			   &err) != FA_OK)
		snprintf(msg, msg_len, "%s", err.msg);
	else
		msg[0] = '\0';
	hx_import_warnings_release(&w);
	free(text);
	return out;
}

/* The scenario loads: what every conversion must give. */
static void assert_loads(const cJSON *sc)
{
	struct fa_err err = { { 0 } };
	char *text = NULL;

	CU_ASSERT_EQUAL(hx_import_render(sc, "out.json", &text, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	free(text);
}

static const cJSON *route(const cJSON *sc, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "routes"), i);
}

static const cJSON *resp(const cJSON *sc, int r, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(route(sc, r), "responses"), i);
}

static void har__ids_in_paths_become_parameters(void)
{
	static const char *const cases[][2] = {
		{ "/v1/records/42", "/v1/records/{id}" },
		{ "/v1/users/3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f/avatar/7",
		  "/v1/users/{id}/avatar/{id2}" },
		{ "/v1/customers/cus_4QFJqXQ9e8Bq2x", "/v1/customers/{id}" },
		{ "/v1/customers/search", "/v1/customers/search" },
		{ "/v1/files/a%20b", "/v1/files/{id}" },
		{ "/v1/caf%C3%A9", "/v1/caf\xc3\xa9" },
		{ "/v1/x%7By%7D", "/v1/{id}" },
		{ "/v1/", "/v1/" },
		{ "/", "/" },
		{ "/v2024-01-15/x", "/v2024-01-15/x" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = hx_import_template(cases[i][0], true);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		if (strcmp(t, cases[i][1]) != 0)
			fprintf(stderr, "\n%s -> %s, expected %s\n", cases[i][0], t, cases[i][1]);
		CU_ASSERT_STRING_EQUAL(t, cases[i][1]);
		free(t);
	}
	/* a journal's path is decoded already: a % is no escape there */
	char *t = hx_import_template("/v1/50%", false);

	CU_ASSERT_STRING_EQUAL(t, "/v1/{id}");
	free(t);
	CU_ASSERT_PTR_NULL(hx_import_template("/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17", true));
}

static void har__secret_and_hop_by_hop_headers_are_dropped(void)
{
	char msg[1024];
	char *e[] = { entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v1/a", "200",
			    "[{\"name\": \"Set-Cookie\", \"value\": \"sid=1\"},"
			    " {\"name\": \"Authorization\", \"value\": \"Bearer x\"},"
			    " {\"name\": \"X-Api-Key\", \"value\": \"k\"},"
			    " {\"name\": \"X-Auth-Token\", \"value\": \"t\"},"
			    " {\"name\": \"Client-Secret\", \"value\": \"s\"},"
			    " {\"name\": \"Connection\", \"value\": \"close\"},"
			    " {\"name\": \"Content-Length\", \"value\": \"2\"},"
			    " {\"name\": \"Content-Encoding\", \"value\": \"gzip\"},"
			    " {\"name\": \"Proxy-Agent\", \"value\": \"p\"},"
			    " {\"name\": \":status\", \"value\": \"200\"},"
			    " {\"name\": \"X-Request-Id\", \"value\": \"r-1\"},"
			    " {\"name\": \"Content-Type\", \"value\": \"application/json\"}]",
			    "\"{\\\"id\\\": 1, \\\"api_key\\\": \\\"k\\\"}\"", 0) };
	cJSON *sc = convert(e, 1, NULL, msg, sizeof(msg));
	const cJSON *h, *body;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	h = cJSON_GetObjectItem(resp(sc, 0, 0), "headers");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(h), 2);
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(h, "X-Request-Id"));
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(h, "Content-Type"));
	body = cJSON_GetObjectItem(resp(sc, 0, 0), "body");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(body, "api_key")->valuestring, "redacted");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(body, "id")->valueint, 1);
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__routes_group_by_method_and_template_in_entry_order(void)
{
	char msg[1024];
	char *e[] = {
		entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/r/1", "503", "[]", "null", 0),
		entry("2026-03-01T10:00:01Z", "POST", "https://a.example.test/v1/r/1", "201", "[]", "null", 0),
		entry("2026-03-01T10:00:02Z", "GET", "https://a.example.test/v1/r/2", "503", "[]", "null", 0),
		entry("2026-03-01T10:00:03Z", "GET", "https://a.example.test/v1/r/1", "200", "[]", "null", 0),
		entry("2026-03-01T10:00:04Z", "GET", "https://a.example.test/v1/r/1", "503", "[]", "null", 0),
	};
	cJSON *sc = convert(e, 5, NULL, msg, sizeof(msg));

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 2);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(route(sc, 0), "id")->valuestring, "get-v1-r-id");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(route(sc, 1), "method")->valuestring, "POST");
	/* 503 503 merge; 200 then 503 stay apart: only neighbours merge */
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "times")->valueint, 2);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "status")->valueint, 503);
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 1), "times"));
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 1), "status")->valueint, 200);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 2), "status")->valueint, 503);
	CU_ASSERT_PTR_NULL(resp(sc, 0, 3));
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__tasks_start_at_their_first_entrys_offset(void)
{
	char msg[1024];
	char *e[] = {
		/* not sorted, and in two time zones: offsets count from the earliest */
		entry("2026-03-01T11:00:00.250+01:00", "GET", "https://a.example.test/v1/r/1?x=1&fa_task=old",
		      "503", "[]", "null", 40),
		entry("2026-03-01T10:00:00.000Z", "GET", "https://a.example.test/v1/r/2", "200", "[]", "null", 0),
		entry("2026-03-01T10:00:01.500Z", "GET", "https://a.example.test/v1/r/1?x=1&fa_task=old#frag",
		      "200", "[]", "null", 0),
	};
	cJSON *sc = convert(e, 3, NULL, msg, sizeof(msg));
	const cJSON *tasks, *events;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks");
	events = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "events");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(tasks), 2); /* the retry is the same request */
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 0), "path")->valuestring,
			       "/v1/r/1?x=1");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(events, 0), "at_ms")->valueint, 250);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(events, 1), "at_ms")->valueint, 0);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "delay_ms")->valueint, 40);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sc, "comment")->valuestring,
			       "imported from capture.har (3 entries, 1 route, 2 tasks) by "
			       "fakeapi-harness import-har");
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__a_retry_after_date_keeps_its_pause(void)
{
	char msg[1024];
	char *e[] = { entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/a", "429",
			    "[{\"name\": \"Retry-After\", \"value\": \"Sun, 01 Mar 2026 10:00:30 GMT\"}]",
			    "null", 0),
		      entry("2026-03-01T10:00:01Z", "GET", "https://a.example.test/v1/a", "503",
			    "[{\"name\": \"Retry-After\", \"value\": \"soon\"}]", "null", 0) };
	cJSON *sc = convert(e, 2, NULL, msg, sizeof(msg));
	const cJSON *ra;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	ra = cJSON_GetObjectItem(resp(sc, 0, 0), "retry_after");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ra, "seconds")->valueint, 30);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ra, "form")->valuestring, "imf-fixdate");
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 0), "headers"));
	/* not a date nor a number: kept as written */
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(resp(sc, 0, 1), "headers"),
						   "Retry-After")->valuestring, "soon");
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__host_and_prefix_filters_keep_some_entries(void)
{
	char msg[1024];
	const char *hosts[] = { "api.example.test" };
	const char *prefixes[] = { "/v1/" };
	struct hx_import_opts o = { .hosts = hosts, .n_hosts = 1, .prefixes = prefixes,
				    .n_prefixes = 1 };
	char *e[] = {
		entry("2026-03-01T10:00:00Z", "GET", "https://cdn.example.test/v1/a", "200", "[]", "null", 0),
		entry("2026-03-01T10:00:00Z", "GET", "https://API.example.test:8443/v1/b", "200", "[]", "null", 0),
		entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v2/c", "200", "[]", "null", 0),
		/* left out, so only its URL is looked at */
		"{\"request\": {\"url\": \"https://other.example.test/\"}}",
	};
	cJSON *sc;

	e[3] = fa_xstrdup(e[3]);
	sc = convert(e, 4, &o, msg, sizeof(msg));
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(route(sc, 0), "path")->valuestring, "/v1/b");
	cJSON_Delete(sc);
	prefixes[0] = "/v3/";
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v1/a", "200", "[]", "null", 0);
	sc = convert(e, 1, &o, msg, sizeof(msg));
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries: no entry to import (1 read, 1 left "
			       "out by --host, --path-prefix or their scheme, 0 without a final response)");
}

static void har__errors_name_the_entry(void)
{
	char msg[1024];
	char *e[2];
	cJSON *sc;

	e[0] = entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/", "200", "[]", "null", 0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/", "\"200\"", "[]", "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[1].response.status: expected "
			       "integer 100..599, got string \"200\"");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "/relative", "200", "[]", "null", 0);
	sc = convert(e, 1, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].request.url: expected an "
			       "absolute http:// or https:// URL, got string \"/relative\"");
	e[0] = entry("yesterday", "GET", "http://a.example.test/", "200", "[]", "null", 0);
	sc = convert(e, 1, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].startedDateTime: expected an "
			       "ISO 8601 date (2026-11-30T10:00:00.000Z), got string \"yesterday\"");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "200", "[]", "null", 0);
	e[1] = entry("2026-03-01T11:00:00.001Z", "GET", "http://a.example.test/x", "200", "[]", "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[1].startedDateTime: 3600001 ms after "
			       "the first entry, past the 3600000 a scenario's at_ms allows: keep "
			       "fewer entries (--host, --path-prefix)");
	/* status 0 (no response) and 101 (a WebSocket) are skipped, a data:
	 * URL left out; with nothing else left it is an error */
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "0", "[]", "null", 0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "wss://a.example.test/", "101", "[]", "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries: no entry to import (2 read, 1 left "
			       "out by --host, --path-prefix or their scheme, 1 without a final response)");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "101", "[]", "null", 0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "data:text/plain,hi", "200", "[]", "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries: no entry to import (2 read, 1 left "
			       "out by --host, --path-prefix or their scheme, 1 without a final response)");
	cJSON_Delete(sc);
}

static void har__no_harness_gives_routes_only(void)
{
	char msg[1024];
	struct hx_import_opts o = { .no_harness = true, .id = "my-id" };
	char *e[] = { entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/a", "200", "[]",
			    "\"not json\"", 0) };
	cJSON *sc = convert(e, 1, &o, msg, sizeof(msg));

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(sc, "harness"));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sc, "id")->valuestring, "my-id");
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 0), "body"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(sc, "comment")->valuestring,
				      "bodies that are not JSON left out"));
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__file_names_make_ids_and_comments_without_folders(void)
{
	char *id = hx_import_id_from_file("/some/dir/incident 7.har");

	CU_ASSERT_STRING_EQUAL(id, "incident-7");
	free(id);
	id = hx_import_id_from_file(".har");
	CU_ASSERT_STRING_EQUAL(id, ".har");
	free(id);
	CU_ASSERT_STRING_EQUAL(hx_import_basename("/a/b/c.har"), "c.har");
}

void test_har_register(void)
{
	CU_pSuite s = CU_add_suite("har", NULL, NULL);

	CU_add_test(s, "har__ids_in_paths_become_parameters", har__ids_in_paths_become_parameters);
	CU_add_test(s, "har__secret_and_hop_by_hop_headers_are_dropped",
		    har__secret_and_hop_by_hop_headers_are_dropped);
	CU_add_test(s, "har__routes_group_by_method_and_template_in_entry_order",
		    har__routes_group_by_method_and_template_in_entry_order);
	CU_add_test(s, "har__tasks_start_at_their_first_entrys_offset",
		    har__tasks_start_at_their_first_entrys_offset);
	CU_add_test(s, "har__a_retry_after_date_keeps_its_pause", har__a_retry_after_date_keeps_its_pause);
	CU_add_test(s, "har__host_and_prefix_filters_keep_some_entries",
		    har__host_and_prefix_filters_keep_some_entries);
	CU_add_test(s, "har__errors_name_the_entry", har__errors_name_the_entry);
	CU_add_test(s, "har__no_harness_gives_routes_only", har__no_harness_gives_routes_only);
	CU_add_test(s, "har__file_names_make_ids_and_comments_without_folders",
		    har__file_names_make_ids_and_comments_without_folders);
}
