/* test_store.c -- records, idempotency rules, expiry and same-key races. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "digest.h"
#include "store.h"

#define S_US 1000000LL

static struct fa_store *store_with(enum fa_idem_profile profile, int retention_s, bool required)
{
	struct fa_store_spec spec = {
		.profile = profile,
		.retention_s = retention_s,
		.key_required = required,
		.by_client_reference = true,
		.by_operation = true,
	};

	return fa_store_new(&spec);
}

static char *sha_of(const char *text, char out[FA_SHA256_HEX])
{
	fa_digest_sha256_hex(text, strlen(text), out);
	return out;
}

/* Commit a write answering 201 {"id": "{provider_id}"}; returns the id. */
static char *commit(struct fa_store *s, const char *key, const char *sha, const char *ref,
                    uint64_t owner, int64_t now, char id[FA_STORE_ID_MAX])
{
	cJSON *body = cJSON_Parse("{\"id\": \"{provider_id}\", \"ok\": true}");
	struct fa_store_write w = {
		.route = "create",
		.client_reference = ref,
		.idempotency_key = key,
		.body_sha256 = sha,
		.status = 201,
		.body = body,
	};

	CU_ASSERT_EQUAL(fa_store_commit(s, &w, owner, now, id), FA_OK);
	cJSON_Delete(body);
	return id;
}

static void store__without_profile_every_write_creates_a_record(void)
{
	struct fa_store *s = store_with(FA_IDEM_NONE, 60, false);
	struct fa_store_answer a;
	char sha[FA_SHA256_HEX], id1[FA_STORE_ID_MAX], id2[FA_STORE_ID_MAX];
	cJSON *op;

	sha_of("{}", sha);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, &a), FA_STORE_PROCEED);
		CU_ASSERT_PTR_NULL(a.body);
		commit(s, "k1", sha, "ref", 1, 0, i == 0 ? id1 : id2);
		fa_store_end(s, "k1", 1, 0);
	}
	CU_ASSERT_STRING_EQUAL(id1, "rec_1");
	CU_ASSERT_STRING_EQUAL(id2, "rec_2");
	CU_ASSERT_EQUAL(fa_store_count(s, "ref"), 2);
	/* the key is only recorded: the operation read finds the newest record */
	op = fa_store_by_key(s, "k1", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(op, "status")->valuestring, "completed");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(op, "record"), "id")->valuestring, "rec_2");
	cJSON_Delete(op);
	CU_ASSERT_PTR_NULL(fa_store_by_key(s, "k2", 0));
	fa_store_free(s);
}

static void store__keyless_writes_each_create_a_record(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];

	sha_of("{}", sha);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(fa_store_begin(s, NULL, sha, 1, 0, NULL), FA_STORE_PROCEED);
		commit(s, NULL, sha, "ref", 1, 0, id);
		fa_store_end(s, NULL, 1, 0);
	}
	CU_ASSERT_EQUAL(fa_store_count(s, "ref"), 3);
	CU_ASSERT_EQUAL(fa_store_count(s, NULL), 3);
	fa_store_free(s);
}

static void store__same_key_same_body_replays_the_stored_answer(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	cJSON *tmpl = cJSON_Parse("{\"id\": \"{provider_id}\", \"n\": \"{n}\", \"x\": \"{x}\"}");
	struct fa_params params = { 0 };
	struct fa_store_write w = {
		.route = "create",
		.client_reference = "r1",
		.idempotency_key = "k1",
		.status = 201,
		.body = tmpl,
		.params = &params,
	};
	struct fa_store_answer a;
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	char want_sha[FA_SHA256_HEX], got_sha[FA_SHA256_HEX];
	cJSON *sent;
	char *sent_text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmpl);
	params.name[0] = fa_xstrdup("n");
	params.value[0] = fa_xstrdup("7");
	params.n = 1;
	w.body_sha256 = sha_of("{\"amount\":10}", sha);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, &a), FA_STORE_PROCEED);
	CU_ASSERT_EQUAL(fa_store_commit(s, &w, 1, 5, id), FA_OK);
	CU_ASSERT_STRING_EQUAL(id, "rec_1");
	/* what the provider sends: the same template, its params plus the id */
	fa_store_params_add_id(&params, id);
	sent = fa_route_render(tmpl, &params);
	sent_text = cJSON_PrintUnformatted(sent);
	CU_ASSERT_STRING_EQUAL(sent_text, "{\"id\":\"rec_1\",\"n\":\"7\",\"x\":\"{x}\"}");
	fa_store_end(s, "k1", 1, 10);

	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 20, &a), FA_STORE_REPLAY);
	CU_ASSERT_EQUAL(a.status, 201);
	CU_ASSERT_STRING_EQUAL(a.provider_id, "rec_1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a.body);
	CU_ASSERT_STRING_EQUAL(sha_of(a.body, got_sha), sha_of(sent_text, want_sha));
	fa_store_answer_release(&a);
	/* a replay begins nothing: its end is a no-op, and replays go on */
	fa_store_end(s, "k1", 2, 30);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 3, 40, &a), FA_STORE_REPLAY);
	fa_store_answer_release(&a);
	CU_ASSERT_EQUAL(fa_store_count(s, NULL), 1);
	free(sent_text);
	cJSON_Delete(sent);
	cJSON_Delete(tmpl);
	fa_params_release(&params);
	fa_store_free(s);
}

static void store__same_key_other_body_is_reused(void)
{
	struct fa_store *s = store_with(FA_IDEM_IETF, 60, false);
	struct fa_store_answer a;
	char sha1[FA_SHA256_HEX], sha2[FA_SHA256_HEX], id[FA_STORE_ID_MAX];

	sha_of("{\"amount\":10}", sha1);
	sha_of("{\"amount\":11}", sha2);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha1, 1, 0, NULL), FA_STORE_PROCEED);
	commit(s, "k1", sha1, "r1", 1, 0, id);
	fa_store_end(s, "k1", 1, 0);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha2, 2, 0, &a), FA_STORE_REUSED);
	CU_ASSERT_PTR_NULL(a.body);
	CU_ASSERT_EQUAL(a.status, 0);
	/* the refusal is not stored: the original still replays */
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha1, 3, 0, &a), FA_STORE_REPLAY);
	fa_store_answer_release(&a);
	CU_ASSERT_EQUAL(fa_store_count(s, NULL), 1);
	fa_store_free(s);
}

static void store__same_key_in_flight_is_a_conflict_until_it_ends(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], other[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	struct fa_store_answer a;
	cJSON *op;

	sha_of("{}", sha);
	sha_of("{\"x\":1}", other);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, NULL), FA_STORE_PROCEED);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 0, NULL), FA_STORE_IN_FLIGHT);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", other, 2, 0, NULL), FA_STORE_IN_FLIGHT);
	op = fa_store_by_key(s, "k1", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(op, "status")->valuestring, "in_flight");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(op, "record")));
	cJSON_Delete(op);
	/* a delayed answer commits before it waits: still in flight */
	commit(s, "k1", sha, "r1", 1, 0, id);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 0, NULL), FA_STORE_IN_FLIGHT);
	op = fa_store_by_key(s, "k1", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(op, "status")->valuestring, "in_flight");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(op, "record"), "id")->valuestring, "rec_1");
	cJSON_Delete(op);
	/* another owner's end changes nothing */
	fa_store_end(s, "k1", 2, 0);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 0, NULL), FA_STORE_IN_FLIGHT);
	fa_store_end(s, "k1", 1, 0);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 0, &a), FA_STORE_REPLAY);
	fa_store_answer_release(&a);
	fa_store_free(s);
}

static void store__uncommitted_write_is_forgotten(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], other[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	cJSON *state;

	sha_of("{}", sha);
	sha_of("{\"x\":1}", other);
	/* a scripted 429 or 503, or a drop before the commit */
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, NULL), FA_STORE_PROCEED);
	fa_store_end(s, "k1", 1, 0);
	state = fa_store_json(s, 0);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "keys")), 0);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "in_flight")), 0);
	cJSON_Delete(state);
	CU_ASSERT_PTR_NULL(fa_store_by_key(s, "k1", 0));
	/* so the same key may try again, even with another body */
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", other, 2, 0, NULL), FA_STORE_PROCEED);
	commit(s, "k1", other, "r1", 2, 0, id);
	CU_ASSERT_STRING_EQUAL(id, "rec_1");
	fa_store_end(s, "k1", 2, 0);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 3, 0, NULL), FA_STORE_REUSED);
	fa_store_free(s);
}

static void store__ietf_profile_requires_a_key_when_told(void)
{
	struct fa_store *req = store_with(FA_IDEM_IETF, 60, true);
	struct fa_store *opt = store_with(FA_IDEM_IETF, 60, false);
	struct fa_store *pay = store_with(FA_IDEM_PAYMENT, 60, true);
	char sha[FA_SHA256_HEX];

	sha_of("{}", sha);
	CU_ASSERT_EQUAL(fa_store_begin(req, NULL, sha, 1, 0, NULL), FA_STORE_MISSING);
	CU_ASSERT_EQUAL(fa_store_begin(req, "k", sha, 1, 0, NULL), FA_STORE_PROCEED);
	CU_ASSERT_EQUAL(fa_store_begin(opt, NULL, sha, 1, 0, NULL), FA_STORE_PROCEED);
	/* "required" belongs to the ietf profile (the loader refuses it elsewhere) */
	CU_ASSERT_EQUAL(fa_store_begin(pay, NULL, sha, 1, 0, NULL), FA_STORE_PROCEED);
	CU_ASSERT_STRING_EQUAL(fa_store_verdict_str(FA_STORE_MISSING), "missing");
	fa_store_free(req);
	fa_store_free(opt);
	fa_store_free(pay);
}

static void store__keys_expire_after_retention(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 2, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	struct fa_store_answer a;
	cJSON *op;

	sha_of("{}", sha);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, NULL), FA_STORE_PROCEED);
	commit(s, "k1", sha, "r1", 1, 0, id);
	/* retention counts from the end of the write */
	fa_store_end(s, "k1", 1, 1 * S_US);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 3 * S_US - 1, &a), FA_STORE_REPLAY);
	fa_store_answer_release(&a);
	op = fa_store_by_key(s, "k1", 3 * S_US - 1);
	CU_ASSERT_PTR_NOT_NULL(op);
	cJSON_Delete(op);
	CU_ASSERT_PTR_NULL(fa_store_by_key(s, "k1", 3 * S_US));
	/* expired: a new write, a second record */
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 3 * S_US, NULL), FA_STORE_PROCEED);
	commit(s, "k1", sha, "r1", 2, 3 * S_US, id);
	CU_ASSERT_STRING_EQUAL(id, "rec_2");
	fa_store_end(s, "k1", 2, 3 * S_US);
	CU_ASSERT_EQUAL(fa_store_count(s, "r1"), 2);
	fa_store_free(s);
}

static void store__in_flight_keys_never_expire(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 1, false);
	char sha[FA_SHA256_HEX];
	cJSON *state;

	sha_of("{}", sha);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 1, 0, NULL), FA_STORE_PROCEED);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 2, 3600 * S_US, NULL), FA_STORE_IN_FLIGHT);
	state = fa_store_json(s, 3600 * S_US);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "in_flight")), 1);
	cJSON_Delete(state);
	fa_store_free(s);
}

static void store__retention_forgets_keys_but_keeps_records(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 10, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	cJSON *state, *keys, *k;

	sha_of("{}", sha);
	fa_store_begin(s, "k1", sha, 1, 0, NULL);
	commit(s, "k1", sha, "r1", 1, 0, id);
	fa_store_end(s, "k1", 1, 2 * S_US);
	state = fa_store_json(s, 5 * S_US);
	keys = cJSON_GetObjectItem(state, "keys");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(keys), 1);
	k = cJSON_GetArrayItem(keys, 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(k, "idempotency_key")->valuestring, "k1");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(k, "record")->valuestring, "rec_1");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(k, "expires_us")->valuedouble, 12.0 * S_US);
	cJSON_Delete(state);
	state = fa_store_json(s, 12 * S_US);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "keys")), 0);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "records")), 1);
	cJSON_Delete(state);
	fa_store_free(s);
}

static void store__one_write_commits_once(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX] = "";
	struct fa_store_write w = { .idempotency_key = "k1", .status = 201 };

	w.body_sha256 = sha_of("{}", sha);
	fa_store_begin(s, "k1", sha, 1, 0, NULL);
	CU_ASSERT_EQUAL(fa_store_commit(s, &w, 1, 0, id), FA_OK);
	CU_ASSERT_EQUAL(fa_store_commit(s, &w, 1, 0, NULL), FA_ESTATE);
	CU_ASSERT_EQUAL(fa_store_count(s, NULL), 1);
	fa_store_free(s);
}

static void store__lookups_by_client_reference_and_by_key(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	cJSON *arr, *rec, *op;

	sha_of("{}", sha);
	commit(s, NULL, sha, "r1", 1, 100, id);
	commit(s, NULL, sha, "r2", 1, 200, id);
	fa_store_begin(s, "k3", sha, 1, 300, NULL);
	commit(s, "k3", sha, "r1", 1, 300, id);
	fa_store_end(s, "k3", 1, 300);
	arr = fa_store_by_client_reference(s, "r1");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(arr), 2);
	rec = cJSON_GetArrayItem(arr, 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rec, "id")->valuestring, "rec_1");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rec, "route")->valuestring, "create");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rec, "client_reference")->valuestring, "r1");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(rec, "idempotency_key")));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(rec, "body_sha256")->valuestring, sha);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(rec, "status")->valueint, 201);
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "body"), "id")->valuestring, "rec_1");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(rec, "created_us")->valuedouble, 100.0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 1), "id")->valuestring,
	                       "rec_3");
	cJSON_Delete(arr);
	arr = fa_store_by_client_reference(s, "nope");
	CU_ASSERT_TRUE(cJSON_IsArray(arr));
	CU_ASSERT_EQUAL(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	op = fa_store_by_key(s, "k3", 400);
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(op, "idempotency_key")->valuestring, "k3");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(op, "status")->valuestring, "completed");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(op, "record"), "id")->valuestring, "rec_3");
	cJSON_Delete(op);
	CU_ASSERT_PTR_NULL(fa_store_by_key(s, "k4", 400));
	CU_ASSERT_PTR_NULL(fa_store_by_key(s, NULL, 400));
	fa_store_free(s);
}

static void store__reset_forgets_everything_but_ids_go_on(void)
{
	struct fa_store *s = store_with(FA_IDEM_PAYMENT, 60, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];

	sha_of("{}", sha);
	fa_store_begin(s, "k1", sha, 1, 0, NULL);
	commit(s, "k1", sha, "r1", 1, 0, id);
	fa_store_begin(s, "k2", sha, 2, 0, NULL);
	fa_store_reset(s);
	CU_ASSERT_EQUAL(fa_store_count(s, NULL), 0);
	/* the old writes end after the reset: nothing to end */
	fa_store_end(s, "k1", 1, 0);
	fa_store_end(s, "k2", 2, 0);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k1", sha, 3, 0, NULL), FA_STORE_PROCEED);
	CU_ASSERT_EQUAL(fa_store_begin(s, "k2", sha, 4, 0, NULL), FA_STORE_PROCEED);
	commit(s, "k1", sha, "r1", 3, 0, id);
	CU_ASSERT_STRING_EQUAL(id, "rec_2");
	fa_store_free(s);
}

static void store__id_param_is_added_once_and_never_past_the_limit(void)
{
	struct fa_params p = { 0 };

	fa_store_params_add_id(&p, "rec_1");
	fa_store_params_add_id(&p, "rec_2");
	CU_ASSERT_EQUAL_FATAL(p.n, 1);
	CU_ASSERT_STRING_EQUAL(p.name[0], FA_STORE_ID_PARAM);
	CU_ASSERT_STRING_EQUAL(p.value[0], "rec_2");
	fa_params_release(&p);
	for (int i = 0; i < FA_ROUTE_MAX_PARAMS; i++) {
		p.name[i] = fa_xasprintf("p%d", i);
		p.value[i] = fa_xstrdup("v");
	}
	p.n = FA_ROUTE_MAX_PARAMS;
	fa_store_params_add_id(&p, "rec_1");
	CU_ASSERT_EQUAL(p.n, FA_ROUTE_MAX_PARAMS);
	fa_params_release(&p);
}

static void store__state_lists_records_keys_and_in_flight(void)
{
	struct fa_store *s = store_with(FA_IDEM_IETF, 60, false);
	char sha[FA_SHA256_HEX], id[FA_STORE_ID_MAX];
	cJSON *state, *fl;

	sha_of("{}", sha);
	fa_store_begin(s, "done", sha, 1, 0, NULL);
	commit(s, "done", sha, "r1", 1, 0, id);
	fa_store_end(s, "done", 1, 0);
	fa_store_begin(s, "busy", sha, 7, 50, NULL);
	state = fa_store_json(s, 100);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(state, "profile")->valuestring, "ietf");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(state, "retention_s")->valueint, 60);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "records")), 1);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(state, "keys")), 1);
	fl = cJSON_GetObjectItem(state, "in_flight");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(fl), 1);
	fl = cJSON_GetArrayItem(fl, 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(fl, "idempotency_key")->valuestring, "busy");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(fl, "owner")->valueint, 7);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(fl, "since_us")->valueint, 50);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(fl, "record")));
	cJSON_Delete(state);
	fa_store_free(s);
}

/* Two (or more) writers with one key, started together. */
struct racer {
	struct fa_store *s;
	pthread_barrier_t *go;
	uint64_t owner;
	const char *sha;
	enum fa_store_verdict verdict;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct fa_store_answer a;
	char id[FA_STORE_ID_MAX];

	pthread_barrier_wait(r->go);
	r->verdict = fa_store_begin(r->s, "same", r->sha, r->owner, 0, &a);
	if (r->verdict == FA_STORE_PROCEED) {
		struct fa_store_write w = {
			.route = "create",
			.client_reference = "r",
			.idempotency_key = "same",
			.body_sha256 = r->sha,
			.status = 201,
		};

		if (fa_store_commit(r->s, &w, r->owner, 0, id) != FA_OK)
			r->verdict = FA_STORE_MISSING; /* flagged below */
		fa_store_end(r->s, "same", r->owner, 0);
	}
	fa_store_answer_release(&a);
	return NULL;
}

static void run_race(size_t n_threads, int rounds)
{
	char sha[FA_SHA256_HEX];

	sha_of("{\"amount\":1}", sha);
	for (int round = 0; round < rounds; round++) {
		struct fa_store *s =
		        store_with(round % 2 ? FA_IDEM_IETF : FA_IDEM_PAYMENT, 60, false);
		pthread_barrier_t go;
		pthread_t th[8];
		struct racer rs[8];
		size_t proceed = 0, other = 0;

		pthread_barrier_init(&go, NULL, (unsigned)n_threads);
		for (size_t i = 0; i < n_threads; i++) {
			rs[i] = (struct racer){ .s = s, .go = &go, .owner = i + 1, .sha = sha };
			CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, race, &rs[i]), 0);
		}
		for (size_t i = 0; i < n_threads; i++)
			pthread_join(th[i], NULL);
		for (size_t i = 0; i < n_threads; i++) {
			if (rs[i].verdict == FA_STORE_PROCEED)
				proceed++;
			else if (rs[i].verdict == FA_STORE_IN_FLIGHT ||
			         rs[i].verdict == FA_STORE_REPLAY)
				other++;
		}
		CU_ASSERT_EQUAL(proceed, 1);
		CU_ASSERT_EQUAL(other, n_threads - 1);
		CU_ASSERT_EQUAL(fa_store_count(s, NULL), 1);
		pthread_barrier_destroy(&go);
		fa_store_free(s);
	}
}

static void store__two_threads_racing_one_key_create_once(void)
{
	run_race(2, 300);
}

static void store__eight_threads_racing_one_key_create_once(void)
{
	run_race(8, 50);
}

void test_store_register(void)
{
	CU_pSuite suite = CU_add_suite("store", NULL, NULL);

	CU_add_test(suite, "store__without_profile_every_write_creates_a_record",
	            store__without_profile_every_write_creates_a_record);
	CU_add_test(suite, "store__keyless_writes_each_create_a_record",
	            store__keyless_writes_each_create_a_record);
	CU_add_test(suite, "store__same_key_same_body_replays_the_stored_answer",
	            store__same_key_same_body_replays_the_stored_answer);
	CU_add_test(suite, "store__same_key_other_body_is_reused",
	            store__same_key_other_body_is_reused);
	CU_add_test(suite, "store__same_key_in_flight_is_a_conflict_until_it_ends",
	            store__same_key_in_flight_is_a_conflict_until_it_ends);
	CU_add_test(suite, "store__uncommitted_write_is_forgotten",
	            store__uncommitted_write_is_forgotten);
	CU_add_test(suite, "store__ietf_profile_requires_a_key_when_told",
	            store__ietf_profile_requires_a_key_when_told);
	CU_add_test(suite, "store__keys_expire_after_retention",
	            store__keys_expire_after_retention);
	CU_add_test(suite, "store__in_flight_keys_never_expire",
	            store__in_flight_keys_never_expire);
	CU_add_test(suite, "store__retention_forgets_keys_but_keeps_records",
	            store__retention_forgets_keys_but_keeps_records);
	CU_add_test(suite, "store__one_write_commits_once", store__one_write_commits_once);
	CU_add_test(suite, "store__lookups_by_client_reference_and_by_key",
	            store__lookups_by_client_reference_and_by_key);
	CU_add_test(suite, "store__reset_forgets_everything_but_ids_go_on",
	            store__reset_forgets_everything_but_ids_go_on);
	CU_add_test(suite, "store__id_param_is_added_once_and_never_past_the_limit",
	            store__id_param_is_added_once_and_never_past_the_limit);
	CU_add_test(suite, "store__state_lists_records_keys_and_in_flight",
	            store__state_lists_records_keys_and_in_flight);
	CU_add_test(suite, "store__two_threads_racing_one_key_create_once",
	            store__two_threads_racing_one_key_create_once);
	CU_add_test(suite, "store__eight_threads_racing_one_key_create_once",
	            store__eight_threads_racing_one_key_create_once);
}
