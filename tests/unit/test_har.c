/* test_har.c -- HAR captures to scenarios: templates, headers, grouping, times, at_ms, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "har.h"
#include "import.h"
#include "redact.h"

/* An entry: started at @t, @method @url, answered @status with the
 * response headers @hdrs (a JSON array text) and body @text (JSON text
 * of a string, or "null" for none), waited @wait ms. */
static char *entry(const char *t, const char *method, const char *url, const char *status,
                   const char *hdrs, const char *text, int wait)
{
	return fa_xasprintf(
	        "{\"startedDateTime\": \"%s\", \"time\": 1, \"request\": {\"method\": "
	        "\"%s\", \"url\": \"%s\", \"headers\": []}, \"response\": {\"status\": "
	        "%s, \"headers\": %s, \"content\": {\"mimeType\": \"application/json\", "
	        "\"text\": %s}}, \"timings\": {\"wait\": %d}}",
	        t, method, url, status, hdrs, text, wait);
}

/* Convert a HAR whose entries are the @n texts in @e (freed here). On
 * failure returns NULL with the message in @msg. The warnings go to
 * @keep (the caller releases them) or are dropped when it is NULL. */
static cJSON *convert_w(char **e, size_t n, const struct hx_draft_opts *opts, char *msg,
                        size_t msg_len, struct hx_draft_warnings *keep)
{
	size_t len = 64;
	char *text, *p;
	struct hx_draft_opts none = { 0 };
	struct hx_draft_warnings w = { 0 };
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
	if (keep != NULL)
		*keep = w;
	else
		hx_draft_warnings_release(&w);
	free(text);
	return out;
}

static cJSON *convert(char **e, size_t n, const struct hx_draft_opts *opts, char *msg,
                      size_t msg_len)
{
	return convert_w(e, n, opts, msg, msg_len, NULL);
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
		char *t = hx_draft_template(cases[i][0], true);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		if (strcmp(t, cases[i][1]) != 0)
			fprintf(stderr, "\n%s -> %s, expected %s\n", cases[i][0], t, cases[i][1]);
		CU_ASSERT_STRING_EQUAL(t, cases[i][1]);
		free(t);
	}
	/* a journal's path is decoded already: a % is no escape there */
	char *t = hx_draft_template("/v1/50%", false);

	CU_ASSERT_STRING_EQUAL(t, "/v1/{id}");
	free(t);
	CU_ASSERT_PTR_NULL(hx_draft_template("/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17", true));
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
		entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/r/1", "503", "[]",
		      "null", 0),
		entry("2026-03-01T10:00:01Z", "POST", "https://a.example.test/v1/r/1", "201", "[]",
		      "null", 0),
		entry("2026-03-01T10:00:02Z", "GET", "https://a.example.test/v1/r/2", "503", "[]",
		      "null", 0),
		entry("2026-03-01T10:00:03Z", "GET", "https://a.example.test/v1/r/1", "200", "[]",
		      "null", 0),
		entry("2026-03-01T10:00:04Z", "GET", "https://a.example.test/v1/r/1", "503", "[]",
		      "null", 0),
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
		entry("2026-03-01T11:00:00.250+01:00", "GET",
		      "https://a.example.test/v1/r/1?x=1&fa_task=old", "503", "[]", "null", 40),
		entry("2026-03-01T10:00:00.000Z", "GET", "https://a.example.test/v1/r/2", "200",
		      "[]", "null", 0),
		entry("2026-03-01T10:00:01.500Z", "GET",
		      "https://a.example.test/v1/r/1?x=1&fa_task=old#frag", "200", "[]", "null", 0),
	};
	cJSON *sc = convert(e, 3, NULL, msg, sizeof(msg));
	const cJSON *tasks, *events;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks");
	events = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "events");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(tasks), 2); /* the retry is the same request */
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 0), "path")->valuestring,
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
	char *e[] = {
		entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/a", "429",
		      "[{\"name\": \"Retry-After\", \"value\": \"Sun, 01 Mar 2026 10:00:30 GMT\"}]",
		      "null", 0),
		entry("2026-03-01T10:00:01Z", "GET", "https://a.example.test/v1/a", "503",
		      "[{\"name\": \"Retry-After\", \"value\": \"soon\"}]", "null", 0)
	};
	cJSON *sc = convert(e, 2, NULL, msg, sizeof(msg));
	const cJSON *ra;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	ra = cJSON_GetObjectItem(resp(sc, 0, 0), "retry_after");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ra, "seconds")->valueint, 30);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ra, "form")->valuestring, "imf-fixdate");
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 0), "headers"));
	/* not a date nor a number: kept as written */
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(resp(sc, 0, 1), "headers"), "Retry-After")
	                ->valuestring,
	        "soon");
	assert_loads(sc);
	cJSON_Delete(sc);
}

static void har__host_and_prefix_filters_keep_some_entries(void)
{
	char msg[1024];
	const char *hosts[] = { "api.example.test" };
	const char *prefixes[] = { "/v1/" };
	struct hx_draft_opts o = {
		.hosts = hosts, .n_hosts = 1, .prefixes = prefixes, .n_prefixes = 1
	};
	char *e[] = {
		entry("2026-03-01T10:00:00Z", "GET", "https://cdn.example.test/v1/a", "200", "[]",
		      "null", 0),
		entry("2026-03-01T10:00:00Z", "GET", "https://API.example.test:8443/v1/b", "200",
		      "[]", "null", 0),
		entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v2/c", "200", "[]",
		      "null", 0),
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
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v1/a", "200", "[]",
	             "null", 0);
	sc = convert(e, 1, &o, msg, sizeof(msg));
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(
	        msg, "capture.har: $.log.entries: no entry to import (1 read, 1 left "
	             "out by --host, --path-prefix or their scheme, 0 without a final response, 0 "
	             "with a path no route can answer)");
}

static void har__errors_name_the_entry(void)
{
	char msg[1024];
	char *e[2];
	cJSON *sc;

	e[0] = entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/", "200", "[]", "null",
	             0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/", "\"200\"", "[]",
	             "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[1].response.status: expected "
	                            "integer 100..599, got string \"200\"");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "/relative", "200", "[]", "null", 0);
	sc = convert(e, 1, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].request.url: expected an "
	                            "absolute http:// or https:// URL, got string \"/relative\"");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "/relative?api_key=SECRETZZ9", "200", "[]",
	             "null", 0);
	sc = convert(e, 1, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].request.url: expected an "
	                            "absolute http:// or https:// URL, got string "
	                            "\"/relative?api_key=redacted\"");
	e[0] = entry("yesterday", "GET", "http://a.example.test/", "200", "[]", "null", 0);
	sc = convert(e, 1, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(
	        msg, "capture.har: $.log.entries[0].startedDateTime: expected an "
	             "ISO 8601 date (2026-11-30T10:00:00.000Z), got string \"yesterday\"");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "200", "[]", "null",
	             0);
	e[1] = entry("2026-03-01T11:00:00.001Z", "GET", "http://a.example.test/x", "200", "[]",
	             "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg,
	                       "capture.har: $.log.entries[1].startedDateTime: 3600001 ms after "
	                       "the first entry, past the 3600000 a scenario's at_ms allows: keep "
	                       "fewer entries (--host, --path-prefix)");
	/* status 0 (no response) and 101 (a WebSocket) are skipped, a data:
	 * URL left out; with nothing else left it is an error */
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "0", "[]", "null", 0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "wss://a.example.test/", "101", "[]", "null",
	             0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(
	        msg, "capture.har: $.log.entries: no entry to import (2 read, 1 left "
	             "out by --host, --path-prefix or their scheme, 1 without a final response, 0 "
	             "with a path no route can answer)");
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "http://a.example.test/", "101", "[]", "null",
	             0);
	e[1] = entry("2026-03-01T10:00:00Z", "GET", "data:text/plain,hi", "200", "[]", "null", 0);
	sc = convert(e, 2, NULL, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(
	        msg, "capture.har: $.log.entries: no entry to import (2 read, 1 left "
	             "out by --host, --path-prefix or their scheme, 1 without a final response, 0 "
	             "with a path no route can answer)");
	cJSON_Delete(sc);
}

static void har__no_harness_gives_routes_only(void)
{
	char msg[1024];
	struct hx_draft_opts o = { .no_harness = true, .id = "my-id" };
	char *e[] = { entry("2026-03-01T10:00:00Z", "GET", "https://a.example.test/v1/a", "200",
		            "[]", "\"not json\"", 0) };
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
	char *id = hx_draft_id_from_file("/some/dir/incident 7.har");

	CU_ASSERT_STRING_EQUAL(id, "incident-7");
	free(id);
	id = hx_draft_id_from_file(".har");
	CU_ASSERT_STRING_EQUAL(id, ".har");
	free(id);
	CU_ASSERT_STRING_EQUAL(hx_draft_basename("/a/b/c.har"), "c.har");
}

/* @s with every ' made ": JSON written readably inside C. A new string. */
static char *q(const char *s)
{
	char *out = fa_xstrdup(s);

	for (char *p = out; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return out;
}

/* The rendered scenario holds @needle nowhere. */
static void assert_nowhere(const cJSON *sc, const char *needle)
{
	char *text = cJSON_PrintUnformatted(sc);

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	if (strstr(text, needle) != NULL)
		fprintf(stderr, "\n%s found in %s\n", needle, text);
	CU_ASSERT_PTR_NULL(strstr(text, needle));
	free(text);
}

/* One rule for query parameters, body members (any depth, any type) and
 * headers, and URLs inside header values and body strings. */
static void har__credentials_are_redacted_in_queries_bodies_and_headers(void)
{
	char msg[1024];
	struct hx_draft_warnings w = { 0 };
	char *e[] = { q(
		"{'startedDateTime': '2026-03-01T10:00:00Z', 'request': {'method': 'POST', "
		"'url': 'https://api.example.test/v1/a?api_key=SECRETZZ9&x=1&access_token="
		"SECRETZZ9&key=SECRETZZ9&sig=SECRETZZ9&signature=SECRETZZ9&code=SECRETZZ9&"
		"auth=SECRETZZ9&session=SECRETZZ9&password=SECRETZZ9&passwd=SECRETZZ9&pwd="
		"SECRETZZ9&api%5Fkey=SECRETZZ9&X-Amz-Credential=SECRETZZ9&page=2#access_token="
		"SECRETZZ9', 'postData': {'text': '{\\'password\\': \\'SECRETZZ9\\', "
		"\\'nested\\': {\\'client_secret\\': \\'SECRETZZ9\\', \\'list\\': "
		"[{\\'refresh_token\\': \\'SECRETZZ9\\'}]}, \\'Api_Key\\': \\'SECRETZZ9\\', "
		"\\'token\\': 987654321, \\'max_tokens\\': 100, \\'credentials\\': "
		"{\\'value\\': \\'SECRETZZ9\\'}}'}}, 'response': {'status': 200, 'headers': ["
		"{'name': 'WWW-Authenticate', 'value': 'Bearer realm=SECRETZZ9'}, "
		"{'name': 'Proxy-Authenticate', 'value': 'Basic SECRETZZ9'}, "
		"{'name': 'Authentication-Info', 'value': 'nextnonce=SECRETZZ9'}, "
		"{'name': 'Authentication', 'value': 'SECRETZZ9'}, "
		"{'name': 'X-Auth', 'value': 'SECRETZZ9'}, "
		"{'name': 'X-Session', 'value': 'SECRETZZ9'}, "
		"{'name': 'X-Amz-Security-Token', 'value': 'SECRETZZ9'}, "
		"{'name': 'X-Goog-Api-Key', 'value': 'SECRETZZ9'}, "
		"{'name': 'Private-Token', 'value': 'SECRETZZ9'}, "
		"{'name': 'Location', 'value': 'https://u:SECRETZZ9@x.example.test/cb?code="
		"SECRETZZ9&state=ok'}, "
		"{'name': 'Content-Location', 'value': '/v1/a?token=SECRETZZ9'}, "
		"{'name': 'Link', 'value': '<https://api.example.test/v1/a?page=2&access_token="
		"SECRETZZ9>; rel=next'}, "
		"{'name': 'X-RateLimit-Remaining-Tokens', 'value': '9000'}, "
		"{'name': 'Access-Control-Allow-Credentials', 'value': 'true'}], "
		"'content': {'text': '{\\'Authorization\\': \\'Bearer SECRETZZ9\\', "
		"\\'bearer\\': \\'SECRETZZ9\\', \\'key\\': \\'SECRETZZ9\\', \\'credentials\\': "
		"{\\'value\\': \\'SECRETZZ9\\'}, \\'api_keys\\': [\\'SECRETZZ9\\'], "
		"\\'session\\': {\\'id\\': \\'SECRETZZ9\\'}, \\'pin\\': {\\'password\\': 987654321}, "
		"\\'next\\': \\'https://api.example.test/v1/a?page=2&access_token=SECRETZZ9\\', "
		"\\'error\\': {\\'code\\': \\'rate_limit_exceeded\\'}, \\'usage\\': "
		"{\\'prompt_tokens\\': 7}}'}}}") };
	cJSON *sc = convert_w(e, 1, NULL, msg, sizeof(msg), &w);
	const cJSON *t, *h, *body, *rb;

	if (sc == NULL)
		fprintf(stderr, "\n%s\n", msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	assert_nowhere(sc, "SECRETZZ9");
	assert_nowhere(sc, "987654321");
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks"), 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "path")->valuestring,
	                       "/v1/a?api_key=redacted&x=1&access_token=redacted&key=redacted&"
	                       "sig=redacted&signature=redacted&code=redacted&auth=redacted&"
	                       "session=redacted&password=redacted&passwd=redacted&pwd=redacted&"
	                       "api%5Fkey=redacted&X-Amz-Credential=redacted&page=2");
	rb = cJSON_GetObjectItem(t, "body");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rb, "token")->valuestring, "redacted");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rb, "credentials")->valuestring, "redacted");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(rb, "max_tokens")->valueint, 100);
	h = cJSON_GetObjectItem(resp(sc, 0, 0), "headers");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(h), 5);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "Location")->valuestring,
	                       "https://x.example.test/cb?code=redacted&state=ok");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "Content-Location")->valuestring,
	                       "/v1/a?token=redacted");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(h, "Link")->valuestring,
	        "<https://api.example.test/v1/a?page=2&access_token=redacted>; rel=next");
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(h, "X-RateLimit-Remaining-Tokens"));
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(h, "Access-Control-Allow-Credentials"));
	body = cJSON_GetObjectItem(resp(sc, 0, 0), "body");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(body, "credentials")->valuestring, "redacted");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(body, "api_keys")->valuestring, "redacted");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "error"), "code")->valuestring,
	        "rate_limit_exceeded");
	CU_ASSERT_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "usage"), "prompt_tokens")->valueint,
	        7);
	CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(sc, "comment")->valuestring,
	                              "; credential-like query parameter values redacted"));
	CU_ASSERT_EQUAL_FATAL(w.n, 1);
	CU_ASSERT_STRING_EQUAL(w.msg[0],
	                       "capture.har: $.log.entries[0].request.url: the value of "
	                       "query parameters api_key, access_token, key, sig, signature, code, "
	                       "auth, session, password, passwd, pwd, api%5Fkey, X-Amz-Credential "
	                       "redacted (a credential's name)");
	assert_loads(sc);
	cJSON_Delete(sc);
	hx_draft_warnings_release(&w);
	/* the rule alone: counts are no credentials, an error's code is none in a body */
	CU_ASSERT_TRUE(hx_redact_name("X-Auth-Token", 12, false));
	CU_ASSERT_TRUE(hx_redact_name("code", 4, true));
	CU_ASSERT_FALSE(hx_redact_name("code", 4, false));
	CU_ASSERT_FALSE(hx_redact_name("max_tokens", 10, false));
	CU_ASSERT_FALSE(hx_redact_name("keyword", 7, true));
	CU_ASSERT_FALSE(hx_redact_name("Access-Control-Allow-Headers", 28, false));
}

/* The provider decodes the whole path, then routes: the template is made
 * the same way, dot segments are resolved as clients resolve them, and a
 * path no client would send as captured is skipped, named. */
static void har__paths_are_templated_as_the_provider_routes_them(void)
{
	static const char *const urls[] = {
		"https://api.example.test/v1/files/a%2Fb",
		"https://api.example.test/v1/../../etc/passwd",
		"https://api.example.test/v1/./x/.",
		"https://api.example.test/_fakeapi/../v1/y",
		"https://api.example.test/v1/a%zz/b",
		"https://api.example.test/v1/a%00b",
		"https://api.example.test/v1/%2E%2E/z",
		"https://api.example.test/v1/a%2F..%2Fb",
	};
	static const char *const want[][2] = {
		/* route, task path */
		{ "/v1/files/a/b", "/v1/files/a%2Fb" },
		{ "/etc/passwd", "/etc/passwd" },
		{ "/v1/x/", "/v1/x/" },
		{ "/v1/y", "/v1/y" },
		{ "/v1/{id}/b", "/v1/a%25zz/b" },
	};
	char msg[1024];
	char *e[8];
	struct hx_draft_warnings w = { 0 };
	const cJSON *tasks;
	cJSON *sc;

	for (size_t i = 0; i < 8; i++)
		e[i] = entry("2026-03-01T10:00:00Z", "GET", urls[i], "200", "[]", "null", 0);
	sc = convert_w(e, 8, NULL, msg, sizeof(msg), &w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 5);
	tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks");
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(route(sc, i), "path")->valuestring,
		                       want[i][0]);
		CU_ASSERT_STRING_EQUAL(
		        cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, i), "path")->valuestring,
		        want[i][1]);
	}
	CU_ASSERT_EQUAL_FATAL(w.n, 6);
	CU_ASSERT_STRING_EQUAL(
	        w.msg[0], "capture.har: $.log.entries[1].request.url: "
	                  "/v1/../../etc/passwd is sent as /etc/passwd (dot segments resolved, "
	                  "as clients do)");
	CU_ASSERT_STRING_EQUAL(w.msg[3],
	                       "capture.har: $.log.entries[5].request.url: the path "
	                       "holds a %00, at which the provider's path ends: skipped (no route "
	                       "could answer it as a client sends it)");
	CU_ASSERT_STRING_EQUAL(
	        w.msg[4], "capture.har: $.log.entries[6].request.url: the path "
	                  "holds a \".\" or \"..\" segment once decoded (%2E, %2F), which "
	                  "clients resolve in different ways: skipped (no route could answer it "
	                  "as a client sends it)");
	CU_ASSERT_PTR_NOT_NULL(strstr(w.msg[5], "entries[7]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(sc, "comment")->valuestring,
	                              "; entries with a path no route can answer skipped"));
	assert_loads(sc);
	cJSON_Delete(sc);
	hx_draft_warnings_release(&w);
	/* /_fakeapi/ is judged once the dots are resolved, and decoded */
	e[0] = entry("2026-03-01T10:00:00Z", "POST",
	             "https://api.example.test/v1/../_fakeapi/reset", "200", "[]", "null", 0);
	CU_ASSERT_PTR_NULL(convert(e, 1, NULL, msg, sizeof(msg)));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].request.url: a path under "
	                            "/_fakeapi/, which the provider keeps for itself");
	e[0] = entry("2026-03-01T10:00:00Z", "POST", "https://api.example.test/%5Ffakeapi%2Freset",
	             "200", "[]", "null", 0);
	CU_ASSERT_PTR_NULL(convert(e, 1, NULL, msg, sizeof(msg)));
	CU_ASSERT_STRING_EQUAL(msg, "capture.har: $.log.entries[0].request.url: a path under "
	                            "/_fakeapi/, which the provider keeps for itself");
	/* only unfit paths: nothing to import, and the count says why */
	e[0] = entry("2026-03-01T10:00:00Z", "GET", "https://api.example.test/v1/a%00", "200", "[]",
	             "null", 0);
	CU_ASSERT_PTR_NULL(convert(e, 1, NULL, msg, sizeof(msg)));
	CU_ASSERT_STRING_EQUAL(msg,
	                       "capture.har: $.log.entries: no entry to import (1 read, 0 left "
	                       "out by --host, --path-prefix or their scheme, 0 without a final "
	                       "response, 1 with a path no route can answer)");
}

static void har__a_url_needs_a_host_and_a_port_in_range(void)
{
	static const char *const bad[][2] = {
		{ "http://[::1/v1/a", "a host \"[::1\" without its closing \"]\"" },
		{ "https://api.example.test:99999/v1/a", "port \"99999\", expected 1..65535" },
		{ "https://api.example.test:-1/v1/a", "port \"-1\", expected 1..65535" },
		{ "https://api.example.test:0/v1/a", "port \"0\", expected 1..65535" },
		{ "http:///v1/a", "no host" },
		{ "http://[::1]x/v1/a", "\"x\" after the host \"[::1]\"" },
	};
	static const char *const good[] = {
		"http://[::1]:8080/v1/a",
		"http://u:p@api.example.test:8443/v1/a",
		"http://api.example.test:/v1/a",
		"http://[::1]/v1/a",
	};
	char msg[1024], *e[1], *want;
	cJSON *sc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e[0] = entry("2026-03-01T10:00:00Z", "GET", bad[i][0], "200", "[]", "null", 0);
		CU_ASSERT_PTR_NULL(convert(e, 1, NULL, msg, sizeof(msg)));
		want = fa_xasprintf(
		        "capture.har: $.log.entries[0].request.url: not a URL's host and "
		        "port: %s",
		        bad[i][1]);
		if (strcmp(msg, want) != 0)
			fprintf(stderr, "\n%s: %s\n", bad[i][0], msg);
		CU_ASSERT_STRING_EQUAL(msg, want);
		free(want);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		e[0] = entry("2026-03-01T10:00:00Z", "GET", good[i], "200", "[]", "null", 0);
		sc = convert(e, 1, NULL, msg, sizeof(msg));
		CU_ASSERT_PTR_NOT_NULL(sc);
		cJSON_Delete(sc);
	}
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
	CU_add_test(s, "har__a_retry_after_date_keeps_its_pause",
	            har__a_retry_after_date_keeps_its_pause);
	CU_add_test(s, "har__host_and_prefix_filters_keep_some_entries",
	            har__host_and_prefix_filters_keep_some_entries);
	CU_add_test(s, "har__errors_name_the_entry", har__errors_name_the_entry);
	CU_add_test(s, "har__no_harness_gives_routes_only", har__no_harness_gives_routes_only);
	CU_add_test(s, "har__file_names_make_ids_and_comments_without_folders",
	            har__file_names_make_ids_and_comments_without_folders);
	CU_add_test(s, "har__credentials_are_redacted_in_queries_bodies_and_headers",
	            har__credentials_are_redacted_in_queries_bodies_and_headers);
	CU_add_test(s, "har__paths_are_templated_as_the_provider_routes_them",
	            har__paths_are_templated_as_the_provider_routes_them);
	CU_add_test(s, "har__a_url_needs_a_host_and_a_port_in_range",
	            har__a_url_needs_a_host_and_a_port_in_range);
}
