/* test_journal.c -- journal entries, their JSON, the hash chain and its checks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "digest.h"
#include "journal.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"

/* A scratch directory for one test, removed by tmp_done(). */
struct tmp {
	char dir[256];
	char path[300]; /* DIR/journal.jsonl */
};

static void tmp_init(struct tmp *t)
{
	const char *base = getenv("TMPDIR");

	snprintf(t->dir, sizeof(t->dir), "%s/fakeapi-journal-XXXXXX",
	         base != NULL && base[0] != '\0' ? base : P_tmpdir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/journal.jsonl", t->dir);
}

static void tmp_done(struct tmp *t)
{
	unlink(t->path);
	rmdir(t->dir);
}

/* An attempt with every member set, distinct per @i. */
static void fill(struct fa_attempt *a, int i)
{
	memset(a, 0, sizeof(*a));
	a->t_arrival_us = 1000 + i;
	a->t_response_us = 2000 + i;
	a->t_done_us = 3000 + i;
	a->wall_us = 1764492909123456LL + i;
	a->method = fa_xstrdup("POST");
	a->path = fa_xasprintf("/v1/records/%d", i);
	a->route = fa_xstrdup("create-record");
	a->response_index = 2;
	a->task = fa_xasprintf("t%d", i);
	a->key = fa_xstrdup("ops-1");
	a->user = fa_xstrdup("ops-team");
	a->scope = fa_xstrdup("user:ops-team");
	a->idempotency_key = fa_xstrdup("idem-\"quoted\"\n");
	a->client_reference = fa_xstrdup("ref-7");
	fa_digest_sha256_hex("body", 4, a->body_sha256);
	a->attempt_headers[FA_AH_STAINLESS] = fa_xstrdup("1");
	a->attempt_headers[FA_AH_AMZ] = fa_xstrdup("attempt=2; max=3");
	a->attempt_headers[FA_AH_GRPC] = fa_xstrdup("1");
	a->status = 429;
	a->fault = fa_xstrdup("respond");
	a->committed = true;
	a->delivered = FA_DELIVERED_DROPPED;
	a->conn_id = 999999999999999ULL; /* cJSON prints 15 significant digits */
	a->conn_reuse = 3;
	a->retry_after = fa_xstrdup("10");
	a->retry_after_ms = fa_xstrdup("9500");
	a->pause_until_us = 10002000 + i;
	a->pause_from = fa_xstrdup("retry-after-ms");
	a->quota = fa_xstrdup("allowed");
	a->in_flight = 4;
	a->tokens = 1234;
	a->stream_chunks = 7;
	a->stream_end = fa_xstrdup("error_frame");
}

/* An attempt with nothing but times: every string NULL. */
static void fill_bare(struct fa_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->t_arrival_us = 5;
	a->t_response_us = -1;
	a->t_done_us = -1;
	a->wall_us = 0;
	a->response_index = -1;
	a->pause_until_us = -1;
	a->tokens = -1;
}

static bool str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void assert_same(const struct fa_attempt *x, const struct fa_attempt *y)
{
	CU_ASSERT_EQUAL(x->seq, y->seq);
	CU_ASSERT_EQUAL(x->t_arrival_us, y->t_arrival_us);
	CU_ASSERT_EQUAL(x->t_response_us, y->t_response_us);
	CU_ASSERT_EQUAL(x->t_done_us, y->t_done_us);
	CU_ASSERT_EQUAL(x->wall_us, y->wall_us);
	CU_ASSERT(str_eq(x->method, y->method));
	CU_ASSERT(str_eq(x->path, y->path));
	CU_ASSERT(str_eq(x->route, y->route));
	CU_ASSERT_EQUAL(x->response_index, y->response_index);
	CU_ASSERT(str_eq(x->task, y->task));
	CU_ASSERT(str_eq(x->key, y->key));
	CU_ASSERT(str_eq(x->user, y->user));
	CU_ASSERT(str_eq(x->scope, y->scope));
	CU_ASSERT(str_eq(x->idempotency_key, y->idempotency_key));
	CU_ASSERT(str_eq(x->client_reference, y->client_reference));
	CU_ASSERT_STRING_EQUAL(x->body_sha256, y->body_sha256);
	for (int h = 0; h < FA_AH_COUNT; h++)
		CU_ASSERT(str_eq(x->attempt_headers[h], y->attempt_headers[h]));
	CU_ASSERT_EQUAL(x->status, y->status);
	CU_ASSERT(str_eq(x->fault, y->fault));
	CU_ASSERT_EQUAL(x->committed, y->committed);
	CU_ASSERT_EQUAL(x->delivered, y->delivered);
	CU_ASSERT_EQUAL(x->conn_id, y->conn_id);
	CU_ASSERT_EQUAL(x->conn_reuse, y->conn_reuse);
	CU_ASSERT(str_eq(x->retry_after, y->retry_after));
	CU_ASSERT(str_eq(x->retry_after_ms, y->retry_after_ms));
	CU_ASSERT_EQUAL(x->pause_until_us, y->pause_until_us);
	CU_ASSERT(str_eq(x->pause_from, y->pause_from));
	CU_ASSERT(str_eq(x->quota, y->quota));
	CU_ASSERT_EQUAL(x->in_flight, y->in_flight);
	CU_ASSERT_EQUAL(x->tokens, y->tokens);
	if (x->stream_end != NULL) /* without it the count is not written */
		CU_ASSERT_EQUAL(x->stream_chunks, y->stream_chunks);
	CU_ASSERT(str_eq(x->stream_end, y->stream_end));
}

static struct fa_journal *journal_new(const char *path)
{
	struct fa_journal *j = NULL;
	struct fa_err err = { "" };

	CU_ASSERT_EQUAL_FATAL(fa_journal_new(path, &j, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	return j;
}

static uint64_t append_filled(struct fa_journal *j, int i)
{
	struct fa_attempt a;

	fill(&a, i);
	return fa_journal_append(j, &a);
}

static void free_snapshot(struct fa_attempt *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&v[i]);
	free(v);
}

static void counts_each_attempt_once(void)
{
	struct fa_journal *j = journal_new(NULL);
	struct fa_attempt a, *v = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL(fa_journal_count(j), 0);
	for (int i = 1; i <= 3; i++) {
		fill(&a, i);
		CU_ASSERT_EQUAL(fa_journal_append(j, &a), (uint64_t)i);
		CU_ASSERT_PTR_NULL(a.method); /* moved out */
		CU_ASSERT_EQUAL(a.status, 0);
	}
	CU_ASSERT_EQUAL(fa_journal_count(j), 3);
	fa_journal_snapshot(j, 0, &v, &n);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(v[i].seq, i + 1);
		CU_ASSERT_EQUAL(v[i].t_arrival_us, 1000 + (int64_t)i + 1);
	}
	free_snapshot(v, n);
	fa_journal_free(j);
}

static void json_members_in_contract_order_with_nulls(void)
{
	static const char *const order[] = {
		"seq",
		"t_arrival_us",
		"t_response_us",
		"t_done_us",
		"wall",
		"method",
		"path",
		"route",
		"response_index",
		"task",
		"key",
		"user",
		"scope",
		"idempotency_key",
		"client_reference",
		"body_sha256",
		"attempt_headers",
		"status",
		"fault",
		"committed",
		"delivered",
		"conn_id",
		"conn_reuse",
		"retry_after",
		"retry_after_ms",
		"pause_until_us",
		"pause_from",
		"quota",
		"in_flight",
		"tokens",
		"stream_chunks",
		"stream_end",
	};
	static const char *const hdrs[] = {
		"x-stainless-retry-count",
		"amz-sdk-request",
		"grpc-previous-rpc-attempts",
	};
	struct fa_attempt a;
	cJSON *obj, *m;
	size_t i = 0;
	char *text;

	fill_bare(&a);
	obj = fa_attempt_to_json(&a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
	cJSON_ArrayForEach(m, obj)
	{
		CU_ASSERT_FATAL(i < sizeof(order) / sizeof(order[0]));
		CU_ASSERT_STRING_EQUAL(m->string, order[i]);
		i++;
	}
	CU_ASSERT_EQUAL(i, sizeof(order) / sizeof(order[0]));
	CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(obj, "method")));
	CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(obj, "quota")));
	CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(obj, "pause_until_us")));
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(obj, "t_response_us")), -1);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(obj, "t_done_us")), -1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(obj, "wall")),
	                       "1970-01-01T00:00:00.000000Z");
	CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(obj, "delivered")),
	                       "complete");
	CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(obj, "committed")));
	m = cJSON_GetObjectItem(obj, "attempt_headers");
	CU_ASSERT_FATAL(cJSON_IsObject(m));
	i = 0;
	cJSON_ArrayForEach(m, m)
	{
		CU_ASSERT_FATAL(i < 3);
		CU_ASSERT_STRING_EQUAL(m->string, hdrs[i]);
		CU_ASSERT(cJSON_IsNull(m));
		i++;
	}
	CU_ASSERT_EQUAL(i, 3);
	text = cJSON_PrintUnformatted(obj);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "{\"seq\":0,\"t_arrival_us\":5,\"t_response_us\":-1,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
	        text, ",\"pause_until_us\":null,\"pause_from\":null,\"quota\":null,\"in_flight\":0,"
	              "\"tokens\":null,\"stream_chunks\":null,\"stream_end\":null}"));
	cJSON_free(text);
	cJSON_Delete(obj);
}

static void attempt_round_trips_through_json(void)
{
	struct fa_attempt a, b, bare;
	struct fa_err err = { "" };
	cJSON *obj, *back;
	char *text;

	fill(&a, 42);
	a.seq = 77;
	obj = fa_attempt_to_json(&a);
	text = cJSON_PrintUnformatted(obj);
	back = cJSON_Parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(back, "wall")),
	                       "2025-11-30T08:55:09.123498Z");
	CU_ASSERT_EQUAL_FATAL(fa_attempt_from_json(back, &b, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	assert_same(&a, &b);
	fa_attempt_release(&b);
	cJSON_free(text);
	cJSON_Delete(back);
	cJSON_Delete(obj);

	fill_bare(&bare);
	obj = fa_attempt_to_json(&bare);
	CU_ASSERT_EQUAL_FATAL(fa_attempt_from_json(obj, &b, &err), FA_OK);
	assert_same(&bare, &b);
	fa_attempt_release(&b);
	/* a journal written before retry_after_ms existed still reads */
	cJSON_DeleteItemFromObject(obj, "retry_after_ms");
	cJSON_DeleteItemFromObject(obj, "pause_from"); /* nor pause_from */
	CU_ASSERT_EQUAL_FATAL(fa_attempt_from_json(obj, &b, &err), FA_OK);
	CU_ASSERT_PTR_NULL(b.retry_after_ms);
	CU_ASSERT_PTR_NULL(b.pause_from);
	fa_attempt_release(&b);
	cJSON_Delete(obj);

	/* time_scale: left out at scale 1, written under a scale, read back */
	CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(back = fa_attempt_to_json(&a), "time_scale"));
	cJSON_Delete(back);
	a.time_scale = 20;
	obj = fa_attempt_to_json(&a);
	CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(obj, "time_scale")), 20,
	                       1e-9);
	CU_ASSERT_EQUAL_FATAL(fa_attempt_from_json(obj, &b, &err), FA_OK);
	CU_ASSERT_DOUBLE_EQUAL(b.time_scale, 20, 1e-9);
	fa_attempt_release(&b);
	cJSON_DeleteItemFromObject(obj, "time_scale"); /* a scale-1 journal's line */
	CU_ASSERT_EQUAL_FATAL(fa_attempt_from_json(obj, &b, &err), FA_OK);
	CU_ASSERT_DOUBLE_EQUAL(b.time_scale, 1, 1e-9);
	fa_attempt_release(&b);
	cJSON_AddStringToObject(obj, "time_scale", "20");
	CU_ASSERT_EQUAL(fa_attempt_from_json(obj, &b, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "$.time_scale: expected number >= 1, got string");
	cJSON_Delete(obj);

	fa_attempt_release(&a);
	CU_ASSERT_PTR_NULL(a.method);
	CU_ASSERT_EQUAL(a.status, 0);
	fa_attempt_release(NULL);
}

/* fa_attempt_from_json on a valid object edited by @edit. */
static void expect_rejected(void (*edit)(cJSON *obj), const char *msg)
{
	struct fa_attempt a, b;
	struct fa_err err = { "" };
	cJSON *obj;

	fill(&a, 1);
	obj = fa_attempt_to_json(&a);
	edit(obj);
	CU_ASSERT_EQUAL(fa_attempt_from_json(obj, &b, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, msg);
	CU_ASSERT_PTR_NULL(b.method); /* nothing half-filled is left */
	cJSON_Delete(obj);
	fa_attempt_release(&a);
}

static void seq_as_string(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "seq", cJSON_CreateString("1"));
}
static void seq_negative(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "seq", cJSON_CreateNumber(-1));
}
static void status_fraction(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "status", cJSON_CreateNumber(429.5));
}
static void path_missing(cJSON *o)
{
	cJSON_DeleteItemFromObject(o, "path");
}
static void method_number(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "method", cJSON_CreateNumber(1));
}
static void committed_string(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "committed", cJSON_CreateString("yes"));
}
static void delivered_unknown(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "delivered", cJSON_CreateString("lost"));
}
static void wall_bad(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "wall", cJSON_CreateString("yesterday"));
}
static void sha_short(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "body_sha256", cJSON_CreateString("abc"));
}
static void pause_bool(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "pause_until_us", cJSON_CreateTrue());
}
static void header_number(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "attempt_headers"), "amz-sdk-request",
	                          cJSON_CreateNumber(2));
}

/* Found by the journal import's fuzz target: a user of bytes that are
 * not UTF-8 went on into a scenario the loader refuses, an internal error
 * (tests/fuzz/corpus/recording/user-not-utf8.jsonl). */
static void user_not_utf8(cJSON *o)
{
	cJSON_ReplaceItemInObject(o, "user", cJSON_CreateString("\xbaps"));
}
static void header_not_utf8(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "attempt_headers"), "amz-sdk-request",
	                          cJSON_CreateString("attempt=\xff"));
}

static void from_json_rejects_wrong_types(void)
{
	struct fa_attempt b;
	struct fa_err err = { "" };
	cJSON *arr = cJSON_CreateArray();

	expect_rejected(seq_as_string, "$.seq: expected integer >= 0, got string");
	expect_rejected(seq_negative, "$.seq: expected integer >= 0, got number");
	expect_rejected(status_fraction, "$.status: expected integer, got number");
	expect_rejected(path_missing, "$.path: missing");
	expect_rejected(method_number, "$.method: expected string or null, got number");
	expect_rejected(committed_string, "$.committed: expected boolean, got string");
	expect_rejected(
	        delivered_unknown,
	        "$.delivered: expected \"complete\", \"client_gone\" or \"dropped\", got string");
	expect_rejected(wall_bad, "$.wall: expected RFC 3339 UTC time, got string");
	expect_rejected(sha_short,
	                "$.body_sha256: expected 64 lowercase hex digits or \"\", got string");
	expect_rejected(pause_bool, "$.pause_until_us: expected integer or null, got boolean");
	expect_rejected(header_number,
	                "$.attempt_headers.amz-sdk-request: expected string or null, got number");
	expect_rejected(user_not_utf8,
	                "$.user: expected UTF-8 text, got a string that is not UTF-8");
	expect_rejected(header_not_utf8, "$.attempt_headers.amz-sdk-request: expected UTF-8 text, "
	                                 "got a string that is not UTF-8");
	CU_ASSERT_EQUAL(fa_attempt_from_json(arr, &b, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "$: expected object, got array");
	cJSON_Delete(arr);
}

static void json_view_filters_by_since(void)
{
	struct fa_journal *j = journal_new(NULL);
	char head[65], *text;
	cJSON *doc, *entries, *e;
	struct fa_attempt *v = NULL;
	size_t n = 0;
	uint64_t want = 3;

	for (int i = 1; i <= 5; i++)
		append_filled(j, i);
	fa_journal_head(j, head);
	text = fa_journal_json(j, 2);
	doc = cJSON_Parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "head")), head);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "count")), 3);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "last_seq")), 5);
	entries = cJSON_GetObjectItem(doc, "entries");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(entries), 3);
	cJSON_ArrayForEach(e, entries)
	{
		CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "seq")), want);
		CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(e, "prev")));
		want++;
	}
	cJSON_Delete(doc);
	free(text);

	for (uint64_t since = 5; since <= 100; since += 95) {
		text = fa_journal_json(j, since);
		doc = cJSON_Parse(text);
		CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
		CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "count")), 0);
		CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "entries")), 0);
		CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "last_seq")), 5);
		cJSON_Delete(doc);
		free(text);
	}

	fa_journal_snapshot(j, 3, &v, &n);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(v[0].seq, 4);
	CU_ASSERT_EQUAL(v[1].seq, 5);
	free_snapshot(v, n);
	fa_journal_snapshot(j, 5, &v, &n);
	CU_ASSERT_EQUAL(n, 0);
	free_snapshot(v, n);
	fa_journal_free(j);
}

static void snapshot_copies_are_independent(void)
{
	struct fa_journal *j = journal_new(NULL);
	struct fa_attempt *v1 = NULL, *v2 = NULL;
	size_t n1 = 0, n2 = 0;

	append_filled(j, 1);
	fa_journal_snapshot(j, 0, &v1, &n1);
	CU_ASSERT_EQUAL_FATAL(n1, 1);
	v1[0].path[1] = 'X';
	free(v1[0].task);
	v1[0].task = NULL;
	fa_journal_snapshot(j, 0, &v2, &n2);
	CU_ASSERT_EQUAL_FATAL(n2, 1);
	CU_ASSERT_PTR_NOT_EQUAL(v1[0].path, v2[0].path);
	CU_ASSERT_STRING_EQUAL(v2[0].path, "/v1/records/1");
	CU_ASSERT_STRING_EQUAL(v2[0].task, "t1");
	free_snapshot(v1, n1);
	free_snapshot(v2, n2);
	fa_journal_free(j);
}

static void reset_keeps_seq_counting(void)
{
	struct fa_journal *j = journal_new(NULL);
	char before[65], after[65], *text;
	struct fa_attempt *v = NULL;
	size_t n = 0;
	cJSON *doc;

	append_filled(j, 1);
	append_filled(j, 2);
	fa_journal_head(j, before);
	fa_journal_reset(j);
	fa_journal_head(j, after);
	CU_ASSERT_EQUAL(fa_journal_count(j), 0);
	CU_ASSERT_STRING_EQUAL(before, after);
	CU_ASSERT_EQUAL(append_filled(j, 3), 3);
	fa_journal_snapshot(j, 0, &v, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(v[0].seq, 3);
	free_snapshot(v, n);
	text = fa_journal_json(j, 0);
	doc = cJSON_Parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "count")), 1);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "last_seq")), 3);
	/* the chain goes on across the reset */
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetStringValue(cJSON_GetObjectItem(
	                cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "entries"), 0), "prev")),
	        before);
	cJSON_Delete(doc);
	free(text);
	fa_journal_free(j);
}

/* Write @n lines of journal to @t->path, through a reset, and return the head. */
static void write_journal(struct tmp *t, int n, char head[65])
{
	struct fa_journal *j = journal_new(t->path);

	for (int i = 1; i <= n; i++) {
		append_filled(j, i);
		if (i == 2)
			fa_journal_reset(j);
	}
	fa_journal_head(j, head);
	fa_journal_free(j);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *buf = fa_xmalloc(1 << 20);

	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	*len = fread(buf, 1, (1 << 20) - 1, fp);
	buf[*len] = '\0';
	fclose(fp);
	return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
	FILE *fp = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_EQUAL(fwrite(buf, 1, len, fp), len);
	fclose(fp);
}

/* Rewrite @path keeping its lines in the order @keep lists (1-based). */
static void reorder_lines(const char *path, const int *keep, int nkeep)
{
	size_t len, out_len = 0;
	char *buf = slurp(path, &len), *out = fa_xmalloc(len + 1);
	char *lines[64];
	int n = 0;

	for (char *p = buf; *p != '\0' && n < 64; n++) {
		lines[n] = p;
		p = strchr(p, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		*p++ = '\0';
	}
	for (int i = 0; i < nkeep; i++) {
		size_t l = strlen(lines[keep[i] - 1]);

		memcpy(out + out_len, lines[keep[i] - 1], l);
		out_len += l;
		out[out_len++] = '\n';
	}
	spit(path, out, out_len);
	free(out);
	free(buf);
}

static void expect_chain_break(const char *path, size_t line, const char *what)
{
	struct fa_err err = { "" };
	char want[512];
	size_t n = 0;

	snprintf(want, sizeof(want), "%s:%zu: %s", path, line, what);
	CU_ASSERT_EQUAL(fa_journal_verify(path, &n, NULL, NULL, &err), FA_ECHAIN);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
}

#define PREV_BREAK "prev does not match the line before (a line was removed, added or changed)"

static void file_lines_verify(void)
{
	struct tmp t;
	struct fa_err err = { "" };
	struct fa_attempt *v = NULL;
	char head[65], vhead[65];
	size_t n = 0, len;
	char *buf;

	tmp_init(&t);
	write_journal(&t, 5, head);
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, vhead, NULL, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_STRING_EQUAL(vhead, head);
	buf = slurp(t.path, &len);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"prev\":\"" ZEROS "\"}\n{\"seq\":2,"));
	CU_ASSERT_EQUAL(buf[len - 1], '\n');
	spit(t.path, buf, len - 1); /* a missing final newline is fine */
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, vhead, NULL, &err), FA_OK);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_STRING_EQUAL(vhead, head);
	free(buf);

	CU_ASSERT_EQUAL_FATAL(fa_journal_read(t.path, &v, &n, NULL, &err), FA_OK);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	for (size_t i = 0; i < n; i++) {
		struct fa_attempt a;

		fill(&a, (int)i + 1);
		a.seq = i + 1;
		assert_same(&v[i], &a);
		fa_attempt_release(&a);
	}
	free_snapshot(v, n);

	spit(t.path, "", 0);
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, vhead, NULL, &err), FA_OK);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_STRING_EQUAL(vhead, ZEROS);
	tmp_done(&t);
}

static void verify_names_removed_middle_line(void)
{
	static const int keep[] = { 1, 2, 4, 5 };
	struct tmp t;
	char head[65];

	tmp_init(&t);
	write_journal(&t, 5, head);
	reorder_lines(t.path, keep, 4);
	expect_chain_break(t.path, 3, PREV_BREAK);
	tmp_done(&t);
}

static void verify_names_swapped_lines(void)
{
	static const int keep[] = { 1, 3, 2, 4, 5 };
	struct tmp t;
	char head[65];

	tmp_init(&t);
	write_journal(&t, 5, head);
	reorder_lines(t.path, keep, 5);
	expect_chain_break(t.path, 2, PREV_BREAK);
	tmp_done(&t);
}

/* An edited line still parses and carries a good prev: the line after it
 * is the first whose prev no longer matches. */
static void verify_names_line_after_edited_byte(void)
{
	struct tmp t;
	char head[65], *buf, *hit;
	size_t len;

	tmp_init(&t);
	write_journal(&t, 5, head);
	buf = slurp(t.path, &len);
	hit = strstr(buf, "/v1/records/2");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hit);
	hit[strlen("/v1/records/")] = '3';
	spit(t.path, buf, len);
	expect_chain_break(t.path, 3, PREV_BREAK);

	hit[strlen("/v1/records/")] = '2'; /* back, then break the JSON itself */
	hit = strstr(buf, "{\"seq\":4");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hit);
	hit[0] = '[';
	spit(t.path, buf, len);
	expect_chain_break(t.path, 4, "not valid JSON");
	free(buf);
	tmp_done(&t);
}

/* Dropping the last line leaves a valid chain: only the head that the
 * report recorded (journal_head) shows it. */
static void removed_last_line_shows_in_head(void)
{
	static const int keep[] = { 1, 2, 3, 4 };
	struct tmp t;
	struct fa_err err = { "" };
	char head[65], vhead[65];
	size_t n = 0;

	tmp_init(&t);
	write_journal(&t, 5, head);
	reorder_lines(t.path, keep, 4);
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, vhead, NULL, &err), FA_OK);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_STRING_NOT_EQUAL(vhead, head);
	tmp_done(&t);
}

static void verify_names_seq_gap_and_unreadable_file(void)
{
	struct tmp t;
	struct fa_err err = { "" };
	char line1[] = "{\"seq\":1,\"prev\":\"" ZEROS "\"}";
	char hash[65], *text;
	size_t n = 0;

	tmp_init(&t);
	fa_digest_sha256_hex(line1, strlen(line1), hash);
	text = fa_xasprintf("%s\n{\"seq\":3,\"prev\":\"%s\"}\n", line1, hash);
	spit(t.path, text, strlen(text));
	expect_chain_break(t.path, 2, "seq 3 does not follow 1");
	free(text);

	text = fa_xasprintf("%s\n{\"seq\":\"2\",\"prev\":\"%s\"}\n", line1, hash);
	spit(t.path, text, strlen(text));
	expect_chain_break(t.path, 2, "$.seq: expected integer >= 0, got string");
	free(text);

	tmp_done(&t);
	text = fa_xasprintf("%s: cannot read: No such file or directory", t.path);
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, NULL, NULL, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg, text);
	free(text);
}

static void read_names_path_and_line(void)
{
	struct tmp t;
	struct fa_err err = { "" };
	struct fa_attempt *v = (struct fa_attempt *)&err;
	char head[65], *buf, *hit, *want, *text;
	size_t n = 99, len;

	tmp_init(&t);
	write_journal(&t, 3, head);
	buf = slurp(t.path, &len);
	hit = strstr(buf, "{\"seq\":2,");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hit);
	text = fa_xasprintf("%.*s{\"seq\":\"2\",%s", (int)(hit - buf), buf,
	                    hit + strlen("{\"seq\":2,"));
	spit(t.path, text, strlen(text));
	free(text);
	free(buf);
	CU_ASSERT_EQUAL(fa_journal_read(t.path, &v, &n, NULL, &err), FA_EINVAL);
	want = fa_xasprintf("%s:2: $.seq: expected integer >= 0, got string", t.path);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
	CU_ASSERT_PTR_NULL(v);
	CU_ASSERT_EQUAL(n, 0);
	free(want);
	tmp_done(&t);
}

static void new_reports_unopenable_path(void)
{
	struct tmp t;
	struct fa_journal *j = (struct fa_journal *)&t;
	struct fa_err err = { "" };
	char *path, *want;

	tmp_init(&t);
	path = fa_xasprintf("%s/missing/journal.jsonl", t.dir);
	CU_ASSERT_EQUAL(fa_journal_new(path, &j, &err), FA_EIO);
	CU_ASSERT_PTR_NULL(j);
	want = fa_xasprintf("%s: cannot open: No such file or directory", path);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
	free(want);
	free(path);
	tmp_done(&t);
}

#define THREADS    4
#define PER_THREAD 1000

struct worker {
	struct fa_journal *j;
	int id;
	uint64_t seqs[PER_THREAD];
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < PER_THREAD; i++)
		w->seqs[i] = append_filled(w->j, w->id * PER_THREAD + i);
	return NULL;
}

static void concurrent_appends_get_unique_seqs(void)
{
	struct tmp t;
	struct fa_err err = { "" };
	struct worker *w = fa_xcalloc(THREADS, sizeof(*w));
	pthread_t tid[THREADS];
	unsigned char *seen = fa_xcalloc(THREADS * PER_THREAD + 1, 1);
	struct fa_attempt *v = NULL;
	char head[65], vhead[65];
	size_t n = 0;

	tmp_init(&t);
	w[0].j = journal_new(t.path);
	for (int i = 0; i < THREADS; i++) {
		w[i].j = w[0].j;
		w[i].id = i;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	CU_ASSERT_EQUAL(fa_journal_count(w[0].j), THREADS * PER_THREAD);
	for (int i = 0; i < THREADS; i++) {
		for (int k = 0; k < PER_THREAD; k++) {
			uint64_t s = w[i].seqs[k];

			CU_ASSERT_FATAL(s >= 1 && s <= THREADS * PER_THREAD);
			CU_ASSERT(!seen[s]);
			seen[s] = 1;
			if (k > 0)
				CU_ASSERT(s > w[i].seqs[k - 1]);
		}
	}
	fa_journal_snapshot(w[0].j, 0, &v, &n);
	CU_ASSERT_EQUAL_FATAL(n, THREADS * PER_THREAD);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(v[i].seq, i + 1);
	free_snapshot(v, n);
	fa_journal_head(w[0].j, head);
	fa_journal_free(w[0].j);
	CU_ASSERT_EQUAL(fa_journal_verify(t.path, &n, vhead, NULL, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	CU_ASSERT_EQUAL(n, THREADS * PER_THREAD);
	CU_ASSERT_STRING_EQUAL(vhead, head);
	tmp_done(&t);
	free(seen);
	free(w);
}

/* The document read through a view in pieces of @piece bytes. */
static char *read_view(struct fa_journal *j, uint64_t since, size_t piece)
{
	struct fa_journal_view *w = fa_journal_view_open(j, since);
	size_t size = (size_t)fa_journal_view_size(w), pos = 0;
	char *buf = fa_xmalloc(size + 1);

	while (pos < size) {
		ssize_t got = fa_journal_view_read(w, pos, buf + pos,
		                                   piece < size - pos ? piece : size - pos);

		CU_ASSERT_FATAL(got > 0);
		pos += (size_t)got;
	}
	CU_ASSERT_EQUAL(fa_journal_view_read(w, pos, buf, 1), 0);
	buf[pos] = '\0';
	fa_journal_view_close(w);
	return buf;
}

/* Every way of reading @j after @since says the same: the view in 1, 7
 * and 64 KiB pieces, fa_journal_json, and the snapshot's seqs. */
static void check_reads_agree(struct fa_journal *j, uint64_t since, size_t want)
{
	char *whole = fa_journal_json(j, since);
	static const size_t pieces[] = { 1, 7, 65536 };
	cJSON *doc = cJSON_Parse(whole);
	struct fa_attempt *v = NULL;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "entries")), (int)want);
	CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "count")), want);
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		char *text = read_view(j, since, pieces[i]);

		CU_ASSERT_STRING_EQUAL(text, whole);
		free(text);
	}
	fa_journal_snapshot(j, since, &v, &n);
	CU_ASSERT_EQUAL_FATAL(n, want);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(v[i].seq, since + 1 + i);
	free_snapshot(v, n);
	cJSON_Delete(doc);
	free(whole);
}

static void view_streams_the_same_document_in_any_piece_size(void)
{
	struct fa_journal *j = journal_new(NULL);

	check_reads_agree(j, 0, 0);
	for (int i = 1; i <= 40; i++)
		append_filled(j, i);
	check_reads_agree(j, 0, 40);
	check_reads_agree(j, 39, 1);
	check_reads_agree(j, 40, 0);
	fa_journal_free(j);
}

static void view_is_fixed_when_it_opens(void)
{
	struct fa_journal *j = journal_new(NULL);
	struct fa_journal_view *w;
	char *before, *after;
	char buf[65536];
	ssize_t got;

	for (int i = 1; i <= 3; i++)
		append_filled(j, i);
	before = fa_journal_json(j, 0);
	w = fa_journal_view_open(j, 0);
	append_filled(j, 4);
	fa_journal_reset(j);
	got = fa_journal_view_read(w, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(got, (ssize_t)strlen(before));
	CU_ASSERT_EQUAL(memcmp(buf, before, strlen(before)), 0);
	fa_journal_view_close(w);
	after = fa_journal_json(j, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(after, "\"count\":0,\"last_seq\":4,\"entries\":[]}"));
	free(before);
	free(after);
	fa_journal_free(j);
}

/* With no spill file possible every line stays in memory; with /dev/null
 * as the file the lines are read back from a spill file. */
static void lines_are_read_back_whatever_the_store(void)
{
	const char *old = getenv("TMPDIR");
	char *saved = old != NULL ? fa_xstrdup(old) : NULL;
	struct fa_journal *j;

	setenv("TMPDIR", "/nonexistent-dir-for-the-journal-test", 1);
	j = journal_new(NULL);
	for (int i = 1; i <= 5; i++)
		append_filled(j, i);
	check_reads_agree(j, 0, 5);
	check_reads_agree(j, 2, 3);
	fa_journal_free(j);
	if (saved != NULL)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);

	j = journal_new("/dev/null");
	for (int i = 1; i <= 5; i++)
		append_filled(j, i);
	check_reads_agree(j, 1, 4);
	CU_ASSERT_EQUAL(fa_journal_bytes(j) > 5 * 100, 1);
	fa_journal_free(j);
}

/* The line written is cJSON's own rendering of fa_attempt_to_json with
 * "prev" added, byte for byte, extreme integers included (below 10^15:
 * there cJSON may write 1e+15, the journal all the digits). */
static void line_is_cjsons_rendering(void)
{
	struct tmp t;
	struct fa_journal *j;
	struct fa_attempt a;
	cJSON *obj;
	char *want, line[8192];
	FILE *fp;

	tmp_init(&t);
	j = journal_new(t.path);
	fill(&a, 1);
	a.t_arrival_us = -1;
	a.t_done_us = 4503599627370495LL; /* 2^52 - 1 */
	a.conn_id = 999999999999999ULL;   /* 15 digits */
	a.response_index = -2147483647 - 1;
	a.conn_reuse = 4294967295U;
	obj = fa_attempt_to_json(&a);
	cJSON_SetNumberValue(cJSON_GetObjectItem(obj, "seq"), 1);
	cJSON_AddStringToObject(obj, "prev", ZEROS);
	want = cJSON_PrintUnformatted(obj);
	CU_ASSERT_EQUAL(fa_journal_append(j, &a), 1);
	fa_journal_free(j);
	fp = fopen(t.path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(line, sizeof(line), fp));
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';
	CU_ASSERT_STRING_EQUAL(line, want);
	cJSON_free(want);
	cJSON_Delete(obj);
	tmp_done(&t);
}

/* The chain's hash: SHA-256 itself, the empty input's shortcut included. */
static void digest_is_sha256(void)
{
	char hex[FA_SHA256_HEX];

	fa_digest_sha256_hex("", 0, hex);
	CU_ASSERT_STRING_EQUAL(hex,
	                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	fa_digest_sha256_hex("abc", 3, hex);
	CU_ASSERT_STRING_EQUAL(hex,
	                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* Appenders for views_stay_whole_under_appends. */
static void *append_many(void *arg)
{
	for (int i = 0; i < 1500; i++)
		append_filled(arg, i);
	return NULL;
}

/* A view opened while lines are being written reads whole: it covers the
 * lines stored when it opened, none appended while it waited for them. */
static void views_stay_whole_under_appends(void)
{
	struct fa_journal *j = journal_new(NULL);
	pthread_t t[4];
	int views = 0, bad = 0;

	for (int k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, append_many, j);
	while (fa_journal_count(j) < 6000 && views < 3000) {
		struct fa_journal_view *w = fa_journal_view_open(j, 0);
		size_t size = (size_t)fa_journal_view_size(w), pos = 0;
		char *buf = fa_xmalloc(size + 1);
		cJSON *doc;

		while (pos < size) {
			ssize_t got = fa_journal_view_read(w, pos, buf + pos, size - pos);

			if (got <= 0)
				break;
			pos += (size_t)got;
		}
		buf[pos] = '\0';
		doc = pos == size ? cJSON_Parse(buf) : NULL;
		if (doc == NULL ||
		    cJSON_GetArraySize(cJSON_GetObjectItem(doc, "entries")) !=
		            (int)cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "count")))
			bad++;
		cJSON_Delete(doc);
		free(buf);
		fa_journal_view_close(w);
		views++;
	}
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(views > 0);
	fa_journal_free(j);
}

void test_journal_register(void)
{
	CU_pSuite s = CU_add_suite("journal", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "journal__counts_each_attempt_once", counts_each_attempt_once);
	CU_add_test(s, "journal__json_members_in_contract_order_with_nulls",
	            json_members_in_contract_order_with_nulls);
	CU_add_test(s, "journal__attempt_round_trips_through_json",
	            attempt_round_trips_through_json);
	CU_add_test(s, "journal__from_json_rejects_wrong_types", from_json_rejects_wrong_types);
	CU_add_test(s, "journal__json_view_filters_by_since", json_view_filters_by_since);
	CU_add_test(s, "journal__snapshot_copies_are_independent", snapshot_copies_are_independent);
	CU_add_test(s, "journal__view_streams_the_same_document_in_any_piece_size",
	            view_streams_the_same_document_in_any_piece_size);
	CU_add_test(s, "journal__view_is_fixed_when_it_opens", view_is_fixed_when_it_opens);
	CU_add_test(s, "journal__lines_are_read_back_whatever_the_store",
	            lines_are_read_back_whatever_the_store);
	CU_add_test(s, "journal__line_is_cjsons_rendering", line_is_cjsons_rendering);
	CU_add_test(s, "journal__digest_is_sha256", digest_is_sha256);
	CU_add_test(s, "journal__views_stay_whole_under_appends", views_stay_whole_under_appends);
	CU_add_test(s, "journal__reset_keeps_seq_counting", reset_keeps_seq_counting);
	CU_add_test(s, "journal__file_lines_verify", file_lines_verify);
	CU_add_test(s, "journal__verify_names_removed_middle_line",
	            verify_names_removed_middle_line);
	CU_add_test(s, "journal__verify_names_swapped_lines", verify_names_swapped_lines);
	CU_add_test(s, "journal__verify_names_line_after_edited_byte",
	            verify_names_line_after_edited_byte);
	CU_add_test(s, "journal__removed_last_line_shows_in_head", removed_last_line_shows_in_head);
	CU_add_test(s, "journal__verify_names_seq_gap_and_unreadable_file",
	            verify_names_seq_gap_and_unreadable_file);
	CU_add_test(s, "journal__read_names_path_and_line", read_names_path_and_line);
	CU_add_test(s, "journal__new_reports_unopenable_path", new_reports_unopenable_path);
	CU_add_test(s, "journal__concurrent_appends_get_unique_seqs",
	            concurrent_appends_get_unique_seqs);
}
