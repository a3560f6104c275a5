/* test_write.c -- write tasks, client references, the write checks on hand-made journals. */
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "result.h"
#include "write.h"

#define MS  1000 /* µs */
#define REF "s1.w1.0badcafe"
#define K1  "idk_1"
#define K2  "idk_2"

/* A scenario with a write route (POST /v1/records, effect create), a read
 * route, a write task w1 and a read task r1. */
struct sc {
	struct fa_scenario s;
	struct fa_route_spec routes[2];
	struct fa_task_spec tasks[2];
	struct hx_task_run runs[2];
	struct hx_client_msg msgs[8];
	size_t n_msgs;
	cJSON *store;
	struct hx_restart restarts[2]; /* kill events that fired */
	size_t n_restarts;
};

static void sc_init(struct sc *sc, enum fa_idem_profile profile)
{
	memset(sc, 0, sizeof(*sc));
	sc->s.id = "s1";
	sc->s.file = "s1.json";
	sc->s.has_harness = true;
	sc->s.store.profile = profile;
	sc->routes[0] = (struct fa_route_spec){ .id = "create",
		                                .method = "POST",
		                                .path = "/v1/records",
		                                .effect = FA_EFFECT_CREATE,
		                                .client_reference_field = "client_reference" };
	sc->routes[1] =
	        (struct fa_route_spec){ .id = "read", .method = "GET", .path = "/v1/records/{id}" };
	sc->s.routes = sc->routes;
	sc->s.n_routes = 2;
	sc->tasks[0] = (struct fa_task_spec){ .id = "w1", .method = "POST", .path = "/v1/records" };
	sc->tasks[1] =
	        (struct fa_task_spec){ .id = "r1", .method = "GET", .path = "/v1/records/42" };
	sc->tasks[0].budget.max_wait_s = sc->tasks[1].budget.max_wait_s = -1;
	sc->s.harness.tasks = sc->tasks;
	sc->s.harness.n_tasks = 2;
	for (size_t i = 0; i < 2; i++) {
		sc->runs[i].spec = &sc->tasks[i];
		sc->runs[i].sent = true;
		sc->runs[i].t_exit_us = -1;
	}
	sc->runs[0].client_reference = REF;
	/* the store as fa_store_json() shows it: rec_1 and rec_2 hold REF */
	sc->store = cJSON_Parse("{\"records\": ["
	                        "{\"id\": \"rec_1\", \"client_reference\": \"" REF "\", "
	                        "\"idempotency_key\": \"" K1 "\"},"
	                        "{\"id\": \"rec_2\", \"client_reference\": \"" REF "\", "
	                        "\"idempotency_key\": \"" K2 "\"},"
	                        "{\"id\": \"rec_3\", \"client_reference\": \"other\", "
	                        "\"idempotency_key\": null}]}");
}

/* Keep only the first @n records of the store. */
static void store_keep(struct sc *sc, int n)
{
	cJSON *recs = cJSON_GetObjectItem(sc->store, "records");

	while (cJSON_GetArraySize(recs) > n)
		cJSON_DeleteItemFromArray(recs, n);
}

/* The client's result line for w1. */
static void result(struct sc *sc, const char *json)
{
	struct hx_client_msg *m = &sc->msgs[sc->n_msgs++];

	m->type = fa_xstrdup("result");
	m->task = fa_xstrdup("w1");
	m->json = cJSON_Parse(json);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->json);
}

static void sc_release(struct sc *sc)
{
	for (size_t i = 0; i < sc->n_msgs; i++)
		hx_client_msg_release(&sc->msgs[i]);
	cJSON_Delete(sc->store);
}

/* A hand-made journal, seq = position + 1. */
struct jb {
	struct fa_attempt a[16];
	size_t n;
};

/* Append an attempt of @task that arrived at @arr_ms and was done at
 * @done_ms. @route "create" makes it a create; @fault NULL = "respond".
 * The answer went out at @done_ms unless the fault dropped it. */
static struct fa_attempt *add(struct jb *j, const char *task, const char *route, const char *method,
                              const char *path, int64_t arr_ms, int64_t done_ms, int status,
                              const char *fault)
{
	struct fa_attempt *a;
	bool dropped = fault != NULL &&
	               (strcmp(fault, "drop_after_commit") == 0 ||
	                strcmp(fault, "drop_before_commit") == 0 || strcmp(fault, "reset") == 0);

	CU_ASSERT_FATAL(j->n < sizeof(j->a) / sizeof(j->a[0]));
	a = &j->a[j->n];
	memset(a, 0, sizeof(*a));
	a->seq = ++j->n;
	a->t_arrival_us = arr_ms * MS;
	a->t_done_us = done_ms * MS;
	a->t_response_us = dropped ? -1 : done_ms * MS;
	a->method = fa_xstrdup(method);
	a->path = fa_xstrdup(path);
	a->route = fa_xstrdup(route);
	a->task = fa_xstrdup(task);
	a->scope = fa_xstrdup("user:a");
	a->status = dropped ? 0 : status;
	a->fault = fa_xstrdup(fault ? fault : "respond");
	a->delivered = dropped ? FA_DELIVERED_DROPPED : FA_DELIVERED_COMPLETE;
	a->response_index = -1;
	a->pause_until_us = -1;
	return a;
}

/* A create of w1 carrying REF and @key (NULL = none). */
static struct fa_attempt *create(struct jb *j, const char *key, int64_t arr_ms, int64_t done_ms,
                                 int status, const char *fault, bool committed)
{
	struct fa_attempt *a =
	        add(j, "w1", "create", "POST", "/v1/records", arr_ms, done_ms, status, fault);

	a->client_reference = fa_xstrdup(REF);
	a->idempotency_key = fa_xstrdup(key);
	a->committed = committed;
	return a;
}

/* A status read of w1 by key. */
static struct fa_attempt *read_by_key(struct jb *j, const char *task, const char *key,
                                      int64_t arr_ms)
{
	char *path = fa_xasprintf("/v1/operations/%s", key);
	struct fa_attempt *a =
	        add(j, task, "_reconcile_operation", "GET", path, arr_ms, arr_ms + 1, 200, NULL);

	free(path);
	return a;
}

static void jb_release(struct jb *j)
{
	for (size_t i = 0; i < j->n; i++)
		fa_attempt_release(&j->a[i]);
	j->n = 0;
}

/* Every check on @j under @sc in @mode. */
static struct hx_check_result *run(const struct sc *sc, const struct jb *j, enum hx_mode mode)
{
	struct hx_check_input in = { .sc = &sc->s,
		                     .attempts = j->a,
		                     .n_attempts = j->n,
		                     .tasks = sc->runs,
		                     .n_tasks = 2,
		                     .mode = mode,
		                     .msgs = sc->msgs,
		                     .n_msgs = sc->n_msgs,
		                     .store = sc->store,
		                     .restarts = sc->restarts,
		                     .n_restarts = sc->n_restarts };
	struct hx_check_result *res = NULL;
	size_t n = 0;

	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_FATAL(res != NULL && n == hx_check_count());
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_PTR_NOT_NULL(res[i].detail);
	return res;
}

static const struct hx_check_result *get(const struct hx_check_result *res, const char *id)
{
	for (size_t i = 0; i < hx_check_count(); i++)
		if (strcmp(res[i].id, id) == 0)
			return &res[i];
	CU_FAIL_FATAL("check not in the results");
	return NULL;
}

static void free_results(struct hx_check_result *res)
{
	for (size_t i = 0; i < hx_check_count(); i++)
		hx_check_result_release(&res[i]);
	free(res);
}

/* @r's evidence is exactly the @n seqs given, ascending. */
static bool evidence_is(const struct hx_check_result *r, size_t n, ...)
{
	va_list ap;
	bool ok = r->n_evidence == n;

	va_start(ap, n);
	for (size_t i = 0; i < n && ok; i++)
		ok = r->evidence[i] == (uint64_t)va_arg(ap, int);
	va_end(ap);
	return ok;
}

static bool detail_has(const struct hx_check_result *r, const char *s)
{
	return r->detail != NULL && strstr(r->detail, s) != NULL;
}

/* The verdict check @id got in @res. */
#define VERDICT(res, id) (get((res), (id))->verdict)

/* ---- write tasks and their references ---- */

static void write__route_is_the_effect_route_the_provider_answers_with(void)
{
	struct sc sc;
	struct fa_task_spec t = { .id = "x", .method = "POST", .path = "/v1/records?x=1" };

	sc_init(&sc, FA_IDEM_PAYMENT);
	CU_ASSERT_PTR_EQUAL(hx_write_route(&sc.s, &sc.tasks[0]), &sc.routes[0]);
	CU_ASSERT_PTR_EQUAL(hx_write_route(&sc.s, &t), &sc.routes[0]); /* query aside */
	CU_ASSERT_PTR_NULL(hx_write_route(&sc.s, &sc.tasks[1]));       /* a read */
	t.path = "/v1/records/42";
	CU_ASSERT_PTR_NULL(hx_write_route(&sc.s, &t)); /* no route */
	t.method = "PUT";
	t.path = "/v1/records";
	CU_ASSERT_PTR_NULL(hx_write_route(&sc.s, &t)); /* method differs */
	/* the first matching route answers: one without an effect hides it */
	sc.routes[1] =
	        (struct fa_route_spec){ .id = "plain", .method = "POST", .path = "/v1/records" };
	sc.s.routes = &sc.routes[1];
	sc.s.n_routes = 1;
	CU_ASSERT_PTR_NULL(hx_write_route(&sc.s, &sc.tasks[0]));
	CU_ASSERT_PTR_NULL(hx_write_route(NULL, &sc.tasks[0]));
	sc_release(&sc);
}

static void write__body_carries_the_reference(void)
{
	cJSON *body = cJSON_Parse("{\"amount\": 5, \"ref\": \"mine\"}");
	cJSON *arr = cJSON_Parse("[1]");
	cJSON *got;
	char *text;

	got = hx_write_body(body, "ref", "s.t.00000001");
	text = cJSON_PrintUnformatted(got);
	CU_ASSERT_STRING_EQUAL(text, "{\"amount\":5,\"ref\":\"s.t.00000001\"}");
	free(text);
	cJSON_Delete(got);
	/* the task's own body is left alone */
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(body, "ref")->valuestring, "mine");
	got = hx_write_body(NULL, "client_reference", "r");
	text = cJSON_PrintUnformatted(got);
	CU_ASSERT_STRING_EQUAL(text, "{\"client_reference\":\"r\"}");
	free(text);
	cJSON_Delete(got);
	CU_ASSERT_PTR_NULL(hx_write_body(arr, "client_reference", "r"));
	cJSON_Delete(body);
	cJSON_Delete(arr);
}

static void write__references_are_named_and_unique(void)
{
	char *a = hx_write_reference_new("five-step-4", "w1");
	char *b = hx_write_reference_new("five-step-4", "w1");

	CU_ASSERT_EQUAL(strlen(a), strlen("five-step-4.w1.") + HX_WRITE_REF_HEX);
	CU_ASSERT_EQUAL(strncmp(a, "five-step-4.w1.", 15), 0);
	CU_ASSERT_EQUAL(strspn(a + 15, "0123456789abcdef"), HX_WRITE_REF_HEX);
	CU_ASSERT_STRING_NOT_EQUAL(a, b);
	free(a);
	free(b);
}

/* ---- write.key_stable ---- */

static void key_stable__passes_one_key_across_attempts_and_reads(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_before_commit", false);
	read_by_key(&j, "w1", K1, 10);
	create(&j, K1, 20, 21, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_PASS);
	CU_ASSERT_TRUE(evidence_is(get(res, "write.key_stable"), 2, 1, 3));
	CU_ASSERT_TRUE(detail_has(get(res, "write.key_stable"), "2 creates"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void key_stable__fails_a_second_key_or_none(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_IETF);
	create(&j, K1, 0, 5, 201, "drop_before_commit", false);
	create(&j, K2, 20, 21, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_EXEC); /* the journal suffices */
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.key_stable"),
	                          "write w1 (client reference " REF "): create seq 1 carried "
	                          "the key \"idk_1\", create seq 2 the key \"idk_2\""));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.key_stable"), 2, 1, 2));
	free_results(res);
	jb_release(&j);

	create(&j, NULL, 0, 5, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.key_stable"),
	                          "create seq 1 carried no Idempotency-Key"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void key_stable__is_na_without_a_profile_or_a_create(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_NONE);
	create(&j, K1, 0, 5, 201, NULL, true);
	create(&j, K2, 20, 21, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "write.key_stable"), "no idempotency support"));
	free_results(res);
	jb_release(&j);

	sc.s.store.profile = FA_IDEM_PAYMENT;
	add(&j, "r1", "read", "GET", "/v1/records/42", 0, 1, 200, NULL);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "write.key_stable"), "no create attempt"));
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_NA);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- write.no_duplicate ---- */

static void no_duplicate__passes_one_commit_and_its_replay(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	struct fa_attempt *a;

	sc_init(&sc, FA_IDEM_PAYMENT);
	store_keep(&sc, 1);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	a = create(&j, K1, 20, 21, 201, NULL, false);
	free(a->fault);
	a->fault = fa_xstrdup("replay");
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "write.no_duplicate"),
	                          "was committed once: record rec_1 (seq 1)"));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.no_duplicate"), 1, 1));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void no_duplicate__fails_two_commits_naming_both_records(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_NONE);
	create(&j, NULL, 0, 5, 201, "drop_after_commit", true);
	create(&j, NULL, 1000, 1001, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.no_duplicate"),
	                          "write w1 (client reference " REF ") was committed 2 "
	                          "times: records rec_1, rec_2 (seq 1, 2)"));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.no_duplicate"), 2, 1, 2));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void no_duplicate__attributes_by_client_reference_not_by_task(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	struct fa_attempt *a;

	sc_init(&sc, FA_IDEM_NONE);
	create(&j, NULL, 0, 5, 201, NULL, true);
	/* the second carries the write's reference but names no task (a
	 * client that dropped fa_task): it is still the same write */
	a = create(&j, NULL, 100, 101, 201, NULL, true);
	free(a->task);
	a->task = NULL;
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(get(res, "write.no_duplicate"), 2, 1, 2));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- write.reconcile_first ---- */

static void reconcile_first__passes_a_read_or_a_same_key_replay(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	read_by_key(&j, "w1", K1, 50);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"),
	                          "after seq 1 (drop_after_commit: committed, the answer "
	                          "dropped), the next attempt, seq 2, was a read (GET "
	                          "/v1/operations/idk_1)"));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.reconcile_first"), 2, 1, 2));
	free_results(res);
	jb_release(&j);

	create(&j, K1, 0, 5, 201, "reset", true);
	create(&j, K1, 50, 51, 201, "replay", false);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"), "a replay with the same key"));
	free_results(res);
	jb_release(&j);

	/* a read by key that names no task is the write's by its key */
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	read_by_key(&j, NULL, K1, 50);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_PASS);
	CU_ASSERT_TRUE(evidence_is(get(res, "write.reconcile_first"), 2, 1, 2));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void reconcile_first__fails_a_fresh_create(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	create(&j, K2, 50, 51, 201, NULL, true);
	read_by_key(&j, "w1", K2, 100); /* too late */
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"),
	                          "the next attempt, seq 2, was a fresh create (key "
	                          "\"idk_2\", not \"idk_1\")"));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.reconcile_first"), 2, 1, 2));
	free_results(res);
	jb_release(&j);

	create(&j, NULL, 0, 5, 201, "partial_body", true);
	j.a[0].delivered = FA_DELIVERED_DROPPED;
	create(&j, NULL, 50, 51, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"),
	                          "a fresh create without an Idempotency-Key"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void reconcile_first__counts_a_read_timeout_as_ambiguous(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	/* delivered whole, but only at +3500 ms: the client's next attempt
	 * came at +2900 ms, so it had given up on the answer */
	create(&j, K1, 0, 3500, 201, "delay", true);
	create(&j, K2, 2900, 2901, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_FAIL);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "write.reconcile_first"), "after the client had moved on"));
	free_results(res);
	jb_release(&j);

	/* the client's result came before the answer: the same */
	create(&j, K1, 0, 3500, 201, "delay", true);
	sc.runs[0].t_exit_us = 2950 * MS;
	result(&sc, "{\"type\": \"result\", \"task\": \"w1\", \"outcome\": \"failed\", "
	            "\"sent\": \"no\"}");
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"), "no further attempt"));
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_FAIL);
	free_results(res);
	jb_release(&j);

	/* a client that waited for the answer knew the outcome */
	create(&j, K1, 0, 3500, 201, "delay", true);
	sc.runs[0].t_exit_us = 3600 * MS;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_NA);
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void reconcile_first__is_na_in_exec_mode_and_without_ambiguity(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	create(&j, K2, 50, 51, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "write.reconcile_first"), "exec mode"));
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_FAIL);
	free_results(res);
	jb_release(&j);

	/* nothing committed before the drop: a plain retry is right */
	create(&j, K1, 0, 5, 201, "drop_before_commit", false);
	create(&j, K1, 50, 51, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.reconcile_first"), HX_NA);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "write.reconcile_first"), "no create's outcome was ambiguous"));
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	CU_ASSERT_EQUAL(VERDICT(res, "write.key_stable"), HX_PASS);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_PASS);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- ambiguity.preserved ---- */

static void ambiguity__passes_escalated_unknown_and_the_held_record(void)
{
	static const char *const ok[] = {
		"{\"outcome\": \"escalated\", \"sent\": \"unknown\"}",
		"{\"outcome\": \"failed\", \"sent\": \"unknown\"}",
		"{\"outcome\": \"succeeded\", \"sent\": \"yes\", \"provider_id\": \"rec_1\"}",
	};
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		sc_init(&sc, FA_IDEM_PAYMENT);
		store_keep(&sc, 1);
		create(&j, K1, 0, 5, 201, "drop_after_commit", true);
		read_by_key(&j, "w1", K1, 50);
		result(&sc, ok[i]);
		res = run(&sc, &j, HX_MODE_STDIO);
		CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_PASS);
		CU_ASSERT_TRUE(evidence_is(get(res, "ambiguity.preserved"), 1, 1));
		free_results(res);
		jb_release(&j);
		sc_release(&sc);
	}
	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	result(&sc, ok[2]);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "ambiguity.preserved"),
	                   "succeeded with provider_id rec_1, the record the provider holds"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void ambiguity__fails_failed_and_success_without_the_record(void)
{
	static const struct {
		const char *result, *detail;
	} bad[] = {
		{ "{\"outcome\": \"failed\", \"sent\": \"no\"}",
		  "the client reported failed with sent \"no\", though the provider holds rec_1" },
		{ "{\"outcome\": \"failed\"}", "the client reported failed with sent missing" },
		{ "{\"outcome\": \"succeeded\", \"sent\": \"yes\", \"provider_id\": null}",
		  "succeeded without a provider_id (the provider holds rec_1)" },
		{ "{\"outcome\": \"succeeded\", \"sent\": \"yes\", \"provider_id\": \"rec_3\"}",
		  "succeeded with provider_id \"rec_3\", but the provider holds rec_1" },
		{ "{\"outcome\": \"succeeded\", \"sent\": \"unknown\", \"provider_id\": \"rec_\"}",
		  "provider_id \"rec_\", but" },
	};
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sc_init(&sc, FA_IDEM_PAYMENT);
		store_keep(&sc, 1);
		create(&j, K1, 0, 5, 201, "reset", true);
		result(&sc, bad[i].result);
		res = run(&sc, &j, HX_MODE_STDIO);
		CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_FAIL);
		if (!detail_has(get(res, "ambiguity.preserved"), bad[i].detail))
			CU_FAIL("detail does not name the fault");
		CU_ASSERT_TRUE(evidence_is(get(res, "ambiguity.preserved"), 1, 1));
		free_results(res);
		jb_release(&j);
		sc_release(&sc);
	}
}

static void ambiguity__is_na_in_exec_mode_without_ambiguity_or_result(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	res = run(&sc, &j, HX_MODE_STDIO); /* no result line */
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "ambiguity.preserved"), "no result for write w1"));
	free_results(res);
	result(&sc, "{\"outcome\": \"failed\", \"sent\": \"no\"}");
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	free_results(res);
	jb_release(&j);
	/* answered in full: the client knew */
	create(&j, K1, 0, 5, 201, NULL, true);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_NA);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- write.body_stable ---- */

#define SHA_A     "9b07e4a1c2d3ffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void body(struct fa_attempt *a, const char *sha)
{
	snprintf(a->body_sha256, sizeof(a->body_sha256), "%s", sha);
}

static void body_stable__passes_one_body_across_retries(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	body(create(&j, K1, 0, 5, 201, "drop_before_commit", false), SHA_A);
	read_by_key(&j, "w1", K1, 10);
	body(create(&j, K1, 20, 21, 201, NULL, true), SHA_A);
	res = run(&sc, &j, HX_MODE_EXEC); /* the journal suffices */
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "write.body_stable"),
	                          "write w1 (client reference " REF "): 2 creates, each with the "
	                          "body sha256 9b07e4a1c2d3.."));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.body_stable"), 2, 1, 3));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void body_stable__fails_a_retry_with_another_body(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	struct fa_attempt *a;

	sc_init(&sc, FA_IDEM_PAYMENT);
	body(create(&j, K1, 0, 5, 201, "drop_before_commit", false), SHA_A);
	read_by_key(&j, "w1", K1, 10);
	a = create(&j, K1, 20, 21, 201, NULL, true);
	body(a, SHA_EMPTY); /* a stream the first send consumed */
	free(a->client_reference);
	a->client_reference = NULL;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.body_stable"),
	                          "write w1 (client reference " REF "): attempt 3 (seq 3) sent a "
	                          "different body than attempt 1 (seq 1): sha256 e3b0c44298fc.. "
	                          "(empty) instead of 9b07e4a1c2d3..; a body stream the first send "
	                          "consumed, resent empty?"));
	CU_ASSERT_TRUE(evidence_is(get(res, "write.body_stable"), 2, 1, 3));
	free_results(res);
	jb_release(&j);

	/* another body that lost the client reference */
	body(create(&j, K1, 0, 5, 201, "drop_before_commit", false), SHA_A);
	a = create(&j, K1, 20, 21, 201, NULL, true);
	body(a, "1234567890abffffffffffffffffffffffffffffffffffffffffffffffffffff");
	free(a->client_reference);
	a->client_reference = NULL;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "write.body_stable"),
	                          "sha256 1234567890ab.. instead of 9b07e4a1c2d3..; the body lost "
	                          "the client reference"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void body_stable__is_na_without_a_retried_write(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	struct fa_attempt *a;

	sc_init(&sc, FA_IDEM_PAYMENT);
	body(create(&j, K1, 0, 5, 201, NULL, true), SHA_A);
	read_by_key(&j, "w1", K1, 10);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "write.body_stable"),
	                          "no write was retried: 1 write, one create each"));
	free_results(res);
	/* a create whose body the provider did not read whole is no evidence */
	a = create(&j, K1, 20, 21, 0, "incomplete_request", false);
	body(a, SHA_EMPTY);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_NA);
	free_results(res);
	jb_release(&j);
	add(&j, "r1", "read", "GET", "/v1/records/42", 0, 1, 200, NULL);
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.body_stable"), HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "write.body_stable"), "no create attempt"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- write.no_duplicate: where the second create came from ---- */

static void no_duplicate__names_the_restarted_client_and_what_it_must_store(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, FA_IDEM_PAYMENT);
	create(&j, K1, 0, 5, 201, "drop_after_commit", true);
	create(&j, K2, 1000, 1001, 201, NULL, true);
	sc.restarts[0] = (struct hx_restart){ .t_kill_us = 812 * MS, .t_restart_us = 900 * MS };
	sc.n_restarts = 1;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_FAIL);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "write.no_duplicate"),
	                   "was committed 2 times: records rec_1, rec_2 (seq 1, 2); the "
	                   "second create (seq 2) came from the client restarted after the "
	                   "kill at +812.0 ms, with a new idempotency key \"idk_2\" (the first "
	                   "create carried \"idk_1\"): a client survives a restart only if it "
	                   "stores the key (its operation record) before its first send"));
	free_results(res);
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_TRUE(detail_has(get(res, "write.no_duplicate"),
	                          "came from the task's command run again after the kill"));
	free_results(res);
	/* a kill that did not restart the client, or came after both: no restart */
	sc.restarts[0].t_restart_us = -1;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_TRUE(detail_has(get(res, "write.no_duplicate"),
	                          "the second create (seq 2) went out with a new idempotency key "
	                          "\"idk_2\" (the first create carried \"idk_1\")"));
	CU_ASSERT_FALSE(detail_has(get(res, "write.no_duplicate"), "restart"));
	free_results(res);
	sc.restarts[0] = (struct hx_restart){ .t_kill_us = 2000 * MS, .t_restart_us = 2100 * MS };
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_FALSE(detail_has(get(res, "write.no_duplicate"), "restart"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void no_duplicate__names_a_record_without_the_client_reference(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	struct fa_attempt *a;

	sc_init(&sc, FA_IDEM_NONE);
	cJSON_Delete(sc.store);
	/* rec_1 from the first create; rec_2 from a retry whose body lost
	 * the reference; rec_3 another write's, made at the same time */
	sc.store = cJSON_Parse(
	        "{\"records\": ["
	        "{\"id\": \"rec_1\", \"route\": \"create\", \"client_reference\": \"" REF
	        "\", \"idempotency_key\": null, \"body_sha256\": \"" SHA_A
	        "\", \"created_us\": 2000},"
	        "{\"id\": \"rec_2\", \"route\": \"create\", \"client_reference\": "
	        "null, \"idempotency_key\": null, \"body_sha256\": \"" SHA_EMPTY
	        "\", \"created_us\": 100500},"
	        "{\"id\": \"rec_3\", \"route\": \"create\", \"client_reference\": "
	        "null, \"idempotency_key\": \"other\", \"body_sha256\": \"" SHA_EMPTY
	        "\", \"created_us\": 100500}]}");
	body(create(&j, NULL, 0, 5, 201, "drop_after_commit", true), SHA_A);
	a = create(&j, NULL, 100, 101, 201, NULL, true);
	body(a, SHA_EMPTY);
	free(a->client_reference);
	a->client_reference = NULL;
	res = run(&sc, &j, HX_MODE_EXEC);
	CU_ASSERT_EQUAL(VERDICT(res, "write.no_duplicate"), HX_FAIL);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "write.no_duplicate"),
	                   "was committed 2 times: records rec_1, rec_2 (no client "
	                   "reference) (seq 1, 2); the second create (seq 2) went out without "
	                   "an idempotency key, like the first"));
	CU_ASSERT_FALSE(detail_has(get(res, "write.no_duplicate"), "rec_3"));
	CU_ASSERT_FALSE(detail_has(get(res, "write.no_duplicate"), "(null)"));
	free_results(res);
	/* the client reporting that record is reporting the write's own */
	result(&sc, "{\"outcome\": \"succeeded\", \"sent\": \"yes\", \"provider_id\": \"rec_2\"}");
	free(j.a[0].fault);
	j.a[0].fault = fa_xstrdup("reset");
	j.a[0].delivered = FA_DELIVERED_DROPPED;
	j.a[0].t_response_us = -1;
	res = run(&sc, &j, HX_MODE_STDIO);
	CU_ASSERT_EQUAL(VERDICT(res, "ambiguity.preserved"), HX_PASS);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

void test_write_register(void)
{
	CU_pSuite s = CU_add_suite("write", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "write__route_is_the_effect_route_the_provider_answers_with",
	            write__route_is_the_effect_route_the_provider_answers_with);
	CU_add_test(s, "write__body_carries_the_reference", write__body_carries_the_reference);
	CU_add_test(s, "write__references_are_named_and_unique",
	            write__references_are_named_and_unique);
	CU_add_test(s, "key_stable__passes_one_key_across_attempts_and_reads",
	            key_stable__passes_one_key_across_attempts_and_reads);
	CU_add_test(s, "key_stable__fails_a_second_key_or_none",
	            key_stable__fails_a_second_key_or_none);
	CU_add_test(s, "key_stable__is_na_without_a_profile_or_a_create",
	            key_stable__is_na_without_a_profile_or_a_create);
	CU_add_test(s, "no_duplicate__passes_one_commit_and_its_replay",
	            no_duplicate__passes_one_commit_and_its_replay);
	CU_add_test(s, "no_duplicate__fails_two_commits_naming_both_records",
	            no_duplicate__fails_two_commits_naming_both_records);
	CU_add_test(s, "no_duplicate__attributes_by_client_reference_not_by_task",
	            no_duplicate__attributes_by_client_reference_not_by_task);
	CU_add_test(s, "no_duplicate__names_the_restarted_client_and_what_it_must_store",
	            no_duplicate__names_the_restarted_client_and_what_it_must_store);
	CU_add_test(s, "no_duplicate__names_a_record_without_the_client_reference",
	            no_duplicate__names_a_record_without_the_client_reference);
	CU_add_test(s, "body_stable__passes_one_body_across_retries",
	            body_stable__passes_one_body_across_retries);
	CU_add_test(s, "body_stable__fails_a_retry_with_another_body",
	            body_stable__fails_a_retry_with_another_body);
	CU_add_test(s, "body_stable__is_na_without_a_retried_write",
	            body_stable__is_na_without_a_retried_write);
	CU_add_test(s, "reconcile_first__passes_a_read_or_a_same_key_replay",
	            reconcile_first__passes_a_read_or_a_same_key_replay);
	CU_add_test(s, "reconcile_first__fails_a_fresh_create",
	            reconcile_first__fails_a_fresh_create);
	CU_add_test(s, "reconcile_first__counts_a_read_timeout_as_ambiguous",
	            reconcile_first__counts_a_read_timeout_as_ambiguous);
	CU_add_test(s, "reconcile_first__is_na_in_exec_mode_and_without_ambiguity",
	            reconcile_first__is_na_in_exec_mode_and_without_ambiguity);
	CU_add_test(s, "ambiguity__passes_escalated_unknown_and_the_held_record",
	            ambiguity__passes_escalated_unknown_and_the_held_record);
	CU_add_test(s, "ambiguity__fails_failed_and_success_without_the_record",
	            ambiguity__fails_failed_and_success_without_the_record);
	CU_add_test(s, "ambiguity__is_na_in_exec_mode_without_ambiguity_or_result",
	            ambiguity__is_na_in_exec_mode_without_ambiguity_or_result);
}
