/* test_attempt.c -- the journal's own rendering of an entry against cJSON's. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "attempt.h"

/* A deterministic stream of numbers for one test run. */
static unsigned long long state = 88172645463325252ULL;

static unsigned long long next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* NULL one time in five, else 0..40 bytes drawn from 1..255. */
static char *random_str(void)
{
	size_t n = next() % 41;
	char *s;

	if (next() % 5 == 0)
		return NULL;
	s = fa_xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(1 + next() % 255);
	s[n] = '\0';
	return s;
}

/* A value in [-2^52, 2^52) with every digit count about equally likely. */
static int64_t random_i64(void)
{
	int digits = 1 + (int)(next() % 15);
	int64_t v = (int64_t)(next() % 10);

	for (int i = 1; i < digits; i++)
		v = v * 10 + (int64_t)(next() % 10);
	return next() % 4 == 0 ? -v : v;
}

static void random_attempt(struct fa_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->seq = (uint64_t)(next() % 1000000);
	a->t_arrival_us = random_i64();
	a->t_response_us = next() % 3 == 0 ? -1 : random_i64();
	a->t_done_us = random_i64();
	a->wall_us = 1764492909123456LL + (int64_t)(next() % 1000000000);
	a->method = random_str();
	a->path = random_str();
	a->route = random_str();
	a->response_index = (int)(next() % 7) - 1;
	a->task = random_str();
	a->key = random_str();
	a->user = random_str();
	a->scope = random_str();
	a->idempotency_key = random_str();
	a->client_reference = random_str();
	if (next() % 2)
		memcpy(a->body_sha256,
		       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 65);
	for (int h = 0; h < FA_AH_COUNT; h++)
		a->attempt_headers[h] = random_str();
	a->status = (int)(next() % 600);
	a->fault = random_str();
	a->committed = next() % 2;
	a->delivered = (enum fa_delivery)(next() % 3);
	a->conn_id = (uint64_t)(next() % 100000);
	a->conn_reuse = (unsigned)(next() % 4294967296ULL);
	a->retry_after = random_str();
	a->retry_after_ms = random_str();
	a->pause_until_us = next() % 2 ? -1 : random_i64();
	a->pause_from = random_str();
	a->quota = random_str();
	a->in_flight = (int)(next() % 100);
	a->tokens = next() % 2 ? -1 : (int)(next() % 2147483647);
	a->stream_chunks = (int)(next() % 1000);
	a->stream_end = random_str();
	a->time_scale = next() % 4 == 0 ? 1.0 + (double)(next() % 100000) / 7.0 : 1.0;
}

static void render_equals_cjsons_print(void)
{
	for (int i = 0; i < 2000; i++) {
		struct fa_attempt a;
		cJSON *obj;
		char *want, *got;
		size_t len;

		random_attempt(&a);
		obj = fa_attempt_to_json(&a);
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "seq");
		want = cJSON_PrintUnformatted(obj);
		got = fa_attempt_render_unseq(&a, &len);
		CU_ASSERT_EQUAL(len, strlen(got));
		CU_ASSERT_STRING_EQUAL(got, want);
		if (strcmp(got, want) != 0)
			break; /* one report is enough */
		cJSON_free(want);
		free(got);
		cJSON_Delete(obj);
		fa_attempt_release(&a);
	}
}

void test_attempt_register(void)
{
	CU_pSuite s = CU_add_suite("attempt", NULL, NULL);

	CU_add_test(s, "attempt__render_equals_cjsons_print", render_equals_cjsons_print);
}
