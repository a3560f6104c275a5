/* test_recording.c -- recorded journals to scenarios: responses, faults, tasks, keys, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "import.h"
#include "recording.h"

#define N_MAX 16

struct fixture {
	struct fa_attempt a[N_MAX];
	size_t n;
	struct hx_draft_warnings w;
	struct fa_err err;
};

/* Append an attempt: @method @path at @t_ms, answered @status with @fault
 * by task @task (may be NULL) with key @key of user @user. */
static struct fa_attempt *add(struct fixture *f, const char *method, const char *path, int64_t t_ms,
                              int status, const char *fault, const char *task, const char *key,
                              const char *user)
{
	struct fa_attempt *a = &f->a[f->n++];

	memset(a, 0, sizeof(*a));
	a->seq = f->n;
	a->t_arrival_us = t_ms * 1000;
	a->t_response_us = t_ms * 1000 + 100;
	a->t_done_us = t_ms * 1000 + 200;
	a->method = fa_xstrdup(method);
	a->path = fa_xstrdup(path);
	a->route = fa_xstrdup("r");
	a->status = status;
	a->fault = fa_xstrdup(fault);
	a->task = fa_xstrdup(task);
	a->key = fa_xstrdup(key);
	a->user = fa_xstrdup(user);
	a->scope = user != NULL ? fa_xasprintf("user:%s", user) : NULL;
	a->pause_until_us = -1;
	memset(a->body_sha256, 'e', 64);
	return a;
}

static void teardown(struct fixture *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	hx_draft_warnings_release(&f->w);
}

static cJSON *convert(struct fixture *f, const struct hx_draft_opts *opts)
{
	struct hx_draft_opts none = { 0 };
	cJSON *sc = NULL;

	if (hx_recording_scenario(f->a, f->n, "dir/run.jsonl", opts ? opts : &none, &sc, &f->w,
	                          &f->err) != FA_OK)
		return NULL;
	return sc;
}

static void assert_loads(const cJSON *sc)
{
	struct fa_err err = { { 0 } };
	char *text = NULL;

	CU_ASSERT_EQUAL(hx_import_render(sc, "out.json", &text, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	free(text);
}

static const cJSON *resp(const cJSON *sc, int r, int i)
{
	return cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "routes"), r),
	                            "responses"),
	        i);
}

static void recording__each_attempt_answers_in_order_with_stand_in_bodies(void)
{
	struct fixture f = { 0 };
	cJSON *sc;
	char *text;

	add(&f, "GET", "/v1/records/42", 0, 503, "respond", "t1", "k1", "u1")->retry_after =
	        fa_xstrdup("2");
	add(&f, "GET", "/v1/records/42", 2100, 503, "respond", "t1", "k1", "u1")->retry_after =
	        fa_xstrdup("2");
	add(&f, "GET", "/v1/records/43", 4200, 200, "respond", "t1", "k1", "u1");
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "times")->valueint, 2);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "retry_after")->valueint, 2);
	text = cJSON_PrintUnformatted(cJSON_GetObjectItem(resp(sc, 0, 0), "body"));
	CU_ASSERT_STRING_EQUAL(text, "{\"error\":{\"code\":\"unavailable\"}}");
	free(text);
	text = cJSON_PrintUnformatted(resp(sc, 0, 1));
	CU_ASSERT_STRING_EQUAL(text, "{\"status\":200,\"body\":{\"ok\":true}}");
	free(text);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sc, "id")->valuestring, "run");
	CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(sc, "comment")->valuestring,
	                              "imported from run.jsonl (3 attempts, 1 route, 1 task)"));
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__connection_faults_delays_and_writes_are_kept(void)
{
	struct fixture f = { 0 };
	struct fa_attempt *a;
	cJSON *sc;

	a = add(&f, "POST", "/v1/records", 0, 0, "drop_after_commit", "w1", "k1", "u1");
	a->committed = true;
	a->client_reference = fa_xstrdup("s.w1.0000000a");
	a = add(&f, "POST", "/v1/records", 1000, 201, "delay", "w1", "k1", "u1");
	a->t_response_us = a->t_arrival_us + 1500400;
	add(&f, "POST", "/v1/records", 3000, 201, "partial_body", "w1", "k1", "u1");
	add(&f, "GET", "/v1/records", 4000, 0, "reset", "r1", "k1", "u1");
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "fault")->valuestring,
	                       "drop_after_commit");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "status")->valueint, 503);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 1), "delay_ms")->valueint, 1500);
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 1), "fault"));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 2), "fault")->valuestring,
	                       "partial_body");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(resp(sc, 1, 0), "fault")->valuestring, "reset");
	/* the committed write had an effect; the read has none */
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "routes"), 0),
	                            "effect")
	                ->valuestring,
	        "create");
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(
	        cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "routes"), 1), "effect"));
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__provider_answers_are_scripted_or_left_out(void)
{
	struct fixture f = { 0 };
	struct fa_attempt *a;
	cJSON *sc;

	add(&f, "GET", "/v1/x", 0, 401, "unauthorized", NULL, NULL, NULL);
	add(&f, "GET", "/v1/x", 10, 404, "no_route", "t1", "k1", "u1");
	add(&f, "GET", "/v1/x", 20, 429, "during_pause", "t1", "k1", "u1")->retry_after =
	        fa_xstrdup("5");
	add(&f, "TRACE", "/v1/x", 25, 405, "respond", "t1", "k1", "u1");
	a = add(&f, "GET", "/v1/records", 30, 200, "respond", "t1", "k1", "u1");
	free(a->route);
	a->route = fa_xstrdup("_reconcile_records");
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "status")->valueint, 404);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 1), "status")->valueint, 429);
	CU_ASSERT_PTR_NULL(resp(sc, 0, 2));
	CU_ASSERT_EQUAL(f.w.n, 3);
	CU_ASSERT_STRING_EQUAL(f.w.msg[0],
	                       "dir/run.jsonl: seq 1: GET /v1/x: unauthorized, left out");
	CU_ASSERT_STRING_EQUAL(f.w.msg[1], "dir/run.jsonl: seq 4: TRACE /v1/x: a method no route "
	                                   "can have, left out");
	CU_ASSERT_STRING_EQUAL(
	        f.w.msg[2], "dir/run.jsonl: seq 5: GET /v1/records: reconciliation read, left out");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__tasks_keys_and_offsets_follow_the_journal(void)
{
	struct fixture f = { 0 };
	const cJSON *tasks, *events, *keys;
	cJSON *sc;

	add(&f, "GET", "/v1/a b", 1000, 200, "respond", "t1", "k1", "u1");
	add(&f, "GET", "/v1/b", 1500, 200, "respond", "w-2", "k2", "u2");
	add(&f, "GET", "/v1/c", 3000, 200, "respond", NULL, "k1", "u1");
	add(&f, "GET", "/v1/c", 3500, 200, "respond", NULL, "k1", "u1");
	/* fa_task is the client's to send: one no task id can be is no task */
	add(&f, "GET", "/v1/d", 3600, 200, "respond", "not a task id", "k1", "u1");
	f.a[1].scope = (free(f.a[1].scope), fa_xstrdup("key:k2"));
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks");
	events = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "events");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(tasks), 4);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 3), "id")->valuestring,
	                       "t3");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 0), "path")->valuestring,
	        "/v1/a%20b");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 1), "key")->valuestring, "k2");
	/* attempts without a task: one task per request, an id no task has */
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 2), "id")->valuestring,
	                       "t2");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(events, 0), "at_ms")->valueint, 0);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(events, 1), "at_ms")->valueint, 500);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(events, 2), "at_ms")->valueint,
	                2000);
	keys = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "provider"), "keys");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(keys, "k2"), "secret")->valuestring,
	        "sk-imported-k2");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(keys, "k2"), "user")->valuestring, "u2");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "provider"), "scope")->valuestring,
	        "key");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__a_retry_after_date_keeps_its_pause(void)
{
	struct fixture f = { 0 };
	struct fa_attempt *a;
	cJSON *sc;
	const cJSON *ra;

	a = add(&f, "GET", "/v1/a", 0, 429, "respond", "t1", "k1", "u1");
	a->retry_after = fa_xstrdup("Sun, 06 Nov 1994 08:49:37 GMT");
	a->pause_until_us = a->t_response_us + 9200000;
	a = add(&f, "GET", "/v1/a", 10, 503, "respond", "t1", "k1", "u1");
	a->retry_after = fa_xstrdup("soon");
	a->retry_after_ms = fa_xstrdup("1500"); /* sent again as written */
	/* a date 60 s in the past, written ceil(now) - 60: a pause of -59.x s */
	a = add(&f, "GET", "/v1/a", 20, 429, "respond", "t1", "k1", "u1");
	a->retry_after = fa_xstrdup("Sunday, 06-Nov-94 08:49:37 GMT");
	a->pause_until_us = a->t_response_us - 59400000;
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	ra = cJSON_GetObjectItem(resp(sc, 0, 0), "retry_after");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ra, "seconds")->valueint, 9);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ra, "form")->valuestring, "imf-fixdate");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(resp(sc, 0, 1), "headers"), "Retry-After")
	                ->valuestring,
	        "soon");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(resp(sc, 0, 1), "headers"),
	                                           "retry-after-ms")
	                               ->valuestring,
	                       "1500");
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 0), "headers"));
	ra = cJSON_GetObjectItem(resp(sc, 0, 2), "retry_after");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(ra, "seconds")->valueint, -60);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(ra, "form")->valuestring, "rfc850");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

/* A delta-seconds above 2^31 announced a pause of 2^31 s (RFC 9111
 * §1.2.2); the scenario sends it again as written, not as 2^31. */
static void recording__a_saturated_retry_after_is_sent_again_as_written(void)
{
	struct fixture f = { 0 };
	struct fa_attempt *a;
	cJSON *sc;

	a = add(&f, "GET", "/v1/a", 0, 429, "respond", "t1", "k1", "u1");
	a->retry_after = fa_xstrdup("99999999999");
	a->pause_until_us = a->t_response_us + 2147483648LL * 1000000;
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(resp(sc, 0, 0), "retry_after"));
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(resp(sc, 0, 0), "headers"), "Retry-After")
	                ->valuestring,
	        "99999999999");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__attempts_are_taken_in_arrival_order(void)
{
	struct fixture f = { 0 };
	cJSON *sc;

	/* seq counts completions: the quick drop that came second was seq 1 */
	add(&f, "POST", "/v1/r", 50, 0, "drop_before_commit", "w1", "k1", "u1");
	add(&f, "POST", "/v1/r", 0, 201, "delay", "w0", "k1", "u1");
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 0), "status")->valueint, 201);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(resp(sc, 0, 1), "fault")->valuestring,
	                       "drop_before_commit");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(
	                cJSON_GetArrayItem(
	                        cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks"),
	                        0),
	                "id")
	                ->valuestring,
	        "w0");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

static void recording__errors_name_the_file_and_line(void)
{
	char path[] = "/tmp/recording-XXXXXX";
	int fd = mkstemp(path);
	FILE *fp;
	struct hx_draft_opts o = { 0 };
	struct hx_draft_warnings w = { 0 };
	struct fa_err err = { { 0 } };
	struct fixture f = { 0 };
	cJSON *sc = NULL;
	char *want;

	CU_ASSERT_FATAL(fd >= 0);
	fp = fdopen(fd, "w");
	fputs("{\"seq\": 1}\n", fp);
	fclose(fp);
	CU_ASSERT_EQUAL(hx_recording_convert(path, &o, &sc, &w, &err), FA_EINVAL);
	CU_ASSERT_PTR_NULL(sc);
	want = fa_xasprintf("%s:1: ", path);
	CU_ASSERT_EQUAL(strncmp(err.msg, want, strlen(want)), 0);
	free(want);
	unlink(path);
	hx_draft_warnings_release(&w);
	/* only attempts the provider makes again itself: nothing to import */
	add(&f, "GET", "/v1/x", 0, 401, "unauthorized", NULL, NULL, NULL);
	CU_ASSERT_PTR_NULL(convert(&f, NULL));
	CU_ASSERT_STRING_EQUAL(f.err.msg,
	                       "dir/run.jsonl: no attempt to import (1 read, 1 left out)");
	teardown(&f);
	/* a status no HTTP answer has is no drop: the line is named, not made 503 */
	memset(&f, 0, sizeof(f));
	add(&f, "GET", "/v1/x", 0, 200, NULL, NULL, NULL, NULL);
	add(&f, "GET", "/v1/x", 10, 999, NULL, NULL, NULL, NULL);
	CU_ASSERT_PTR_NULL(convert(&f, NULL));
	CU_ASSERT_STRING_EQUAL(f.err.msg, "dir/run.jsonl:2: $.status: expected integer 100..599, "
	                                  "got 999");
	teardown(&f);
	memset(&f, 0, sizeof(f));
	add(&f, "GET", "/v1/x", 0, 99, NULL, NULL, NULL, NULL);
	CU_ASSERT_PTR_NULL(convert(&f, NULL));
	CU_ASSERT_STRING_EQUAL(f.err.msg, "dir/run.jsonl:1: $.status: expected integer 100..599, "
	                                  "got 99");
	teardown(&f);
}

/* A client sent "/v1/%2E%2E/x": the provider decoded it to "/v1/../x",
 * which a replaying client would resolve to "/x" and never send. */
static void recording__dot_segments_are_left_out(void)
{
	struct fixture f = { 0 };
	cJSON *sc;

	add(&f, "GET", "/v1/../x", 0, 200, NULL, NULL, NULL, NULL);
	add(&f, "GET", "/v1/./y", 10, 200, NULL, NULL, NULL, NULL);
	add(&f, "GET", "/v1/..", 20, 200, NULL, NULL, NULL, NULL);
	add(&f, "GET", "/v1/..a/.b/c.", 30, 200, NULL, NULL, NULL, NULL);
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "routes")), 1);
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "routes"), 0),
	                            "path")
	                ->valuestring,
	        "/v1/..a/.b/c.");
	CU_ASSERT_EQUAL_FATAL(f.w.n, 3);
	CU_ASSERT_STRING_EQUAL(f.w.msg[0], "dir/run.jsonl: seq 1: GET /v1/../x: a \".\" or "
	                                   "\"..\" segment, left out");
	cJSON_Delete(sc);
	teardown(&f);
}

/* Found by the journal import's fuzz target: key ids the loader refuses
 * side by side ("ops-1" and "ops.1" share FAKEAPI_KEY_OPS_1; "OPS-1" is
 * the same key to cJSON's lookup) made a scenario that does not load, an
 * internal error (tests/fuzz/corpus/recording/key-ids-share-env.jsonl). */
static void recording__key_ids_that_share_a_variable_are_one_key(void)
{
	struct fixture f = { 0 };
	const cJSON *tasks, *keys;
	cJSON *sc;

	add(&f, "GET", "/v1/a", 1000, 200, "respond", "t1", "ops-1", "u1");
	add(&f, "GET", "/v1/a", 1100, 200, "respond", "t2", "ops.1", "u2");
	add(&f, "GET", "/v1/a", 1200, 200, "respond", "t3", "OPS-1", "u1");
	add(&f, "GET", "/v1/a", 1300, 200, "respond", "t2", "ops.1", "u2");
	sc = convert(&f, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	keys = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "provider"), "keys");
	CU_ASSERT_EQUAL(cJSON_GetArraySize(keys), 1);
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItemCaseSensitive(keys, "ops-1"));
	tasks = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "harness"), "tasks");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(tasks), 3);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_STRING_EQUAL(
		        cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, i), "key")->valuestring,
		        "ops-1");
	CU_ASSERT_EQUAL_FATAL(f.w.n, 2);
	CU_ASSERT_STRING_EQUAL(f.w.msg[0],
	                       "dir/run.jsonl: seq 2: key ids ops-1 and ops.1 would share the "
	                       "environment variable of a key: imported as ops-1");
	assert_loads(sc);
	cJSON_Delete(sc);
	teardown(&f);
}

void test_recording_register(void)
{
	CU_pSuite s = CU_add_suite("recording", NULL, NULL);

	CU_add_test(s, "recording__each_attempt_answers_in_order_with_stand_in_bodies",
	            recording__each_attempt_answers_in_order_with_stand_in_bodies);
	CU_add_test(s, "recording__connection_faults_delays_and_writes_are_kept",
	            recording__connection_faults_delays_and_writes_are_kept);
	CU_add_test(s, "recording__provider_answers_are_scripted_or_left_out",
	            recording__provider_answers_are_scripted_or_left_out);
	CU_add_test(s, "recording__tasks_keys_and_offsets_follow_the_journal",
	            recording__tasks_keys_and_offsets_follow_the_journal);
	CU_add_test(s, "recording__a_retry_after_date_keeps_its_pause",
	            recording__a_retry_after_date_keeps_its_pause);
	CU_add_test(s, "recording__a_saturated_retry_after_is_sent_again_as_written",
	            recording__a_saturated_retry_after_is_sent_again_as_written);
	CU_add_test(s, "recording__attempts_are_taken_in_arrival_order",
	            recording__attempts_are_taken_in_arrival_order);
	CU_add_test(s, "recording__errors_name_the_file_and_line",
	            recording__errors_name_the_file_and_line);
	CU_add_test(s, "recording__dot_segments_are_left_out",
	            recording__dot_segments_are_left_out);
	CU_add_test(s, "recording__key_ids_that_share_a_variable_are_one_key",
	            recording__key_ids_that_share_a_variable_are_one_key);
}
