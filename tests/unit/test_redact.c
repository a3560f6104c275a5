/* test_redact.c -- the credential-name rule: words, not substrings; bodies, pairs, free text,
 * forms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "redact.h"

static bool cred(const char *name, unsigned flags)
{
	return hx_redact_is_credential(name, strlen(name), flags);
}

/* Ordinary names that merely hold a credential word's letters stay. */
static void redact__ordinary_names_are_kept(void)
{
	static const char *const kept[] = {
		"author",
		"authority",
		"authored_at",
		"oauth_provider",
		"tokenizer",
		"token_budget",
		"session_count",
		"pagination_token",
		"nextPageToken",
		"max_tokens",
		"max_completion_tokens",
		"input_tokens",
		"prompt_tokens",
		"keys",
		"keywords",
		"sort_key",
		"Idempotency-Key",
		"code",
		"passage",
		"token_type",
		"X-RateLimit-Remaining-Tokens",
		"x-ratelimit-reset-tokens",
		"X-Tokens-Remaining",
		"Access-Control-Allow-Credentials",
		"Access-Control-Allow-Headers",
		NULL,
	};

	for (size_t i = 0; kept[i] != NULL; i++) {
		if (cred(kept[i], 0))
			fprintf(stderr, "\n%s taken for a credential\n", kept[i]);
		CU_ASSERT_FALSE(cred(kept[i], 0));
	}
	/* counts with a number, a text piece below logprobs */
	CU_ASSERT_FALSE(cred("tokens", HX_REDACT_NUMBER));
	CU_ASSERT_FALSE(cred("Tokens", HX_REDACT_NUMBER | HX_REDACT_URL));
	CU_ASSERT_FALSE(cred("token", HX_REDACT_LOGPROBS));
	CU_ASSERT_FALSE(cred("code", 0));
}

/* Names made of credential words, in any case and joining, are credentials. */
static void redact__credential_words_are_found(void)
{
	static const char *const secret[] = {
		"tokenString",
		"refresh_tokens",
		"access_tokens",
		"Tokens",
		"TOKENS",
		"tokens",
		"X-Api-Tokens",
		"X-Access-Tokens",
		"jwt",
		"X-Jwt",
		"passphrase",
		"client_assertion",
		"sid",
		"otp",
		"pin",
		"hmac",
		"nonce",
		"privateKey",
		"XApiKey",
		"api_keys",
		"session_id",
		"sessionId",
		"X-Csrf-Token",
		"X-Auth-Token",
		"X-Auth",
		"auth",
		"Authorization",
		"Proxy-Authorization",
		"WWW-Authenticate",
		"Authentication-Info",
		"Set-Cookie",
		"clientSecret",
		"X-Hub-Signature-256",
		"X-Amz-Credential",
		"X-Amz-Security-Token",
		"accesstoken",
		"id_token",
		"oauth",
		"user_session",
		"key",
		"pwd",
		"password",
		"Private-Token",
		NULL,
	};

	for (size_t i = 0; secret[i] != NULL; i++) {
		if (!cred(secret[i], 0))
			fprintf(stderr, "\n%s not taken for a credential\n", secret[i]);
		CU_ASSERT_TRUE(cred(secret[i], 0));
	}
	/* a numeric PIN is one all the same; code only in a URL */
	CU_ASSERT_TRUE(cred("pin", HX_REDACT_NUMBER));
	CU_ASSERT_TRUE(cred("token", HX_REDACT_NUMBER));
	CU_ASSERT_TRUE(cred("code", HX_REDACT_URL));
	CU_ASSERT_TRUE(hx_redact_name("tokens", 6, true));
	CU_ASSERT_FALSE(hx_redact_name("code", 4, false));
}

static void assert_absent(const char *text, const char *needle)
{
	if (strstr(text, needle) != NULL)
		fprintf(stderr, "\n%s found in %s\n", needle, text);
	CU_ASSERT_PTR_NULL(strstr(text, needle));
}

/* Bodies: members, name/value pairs, "keys" lists, free text, forms;
 * ordinary members keep their values. */
static void redact__bodies_keep_ordinary_members_and_no_secret(void)
{
	static const char body[] =
	        "{\"author\": {\"name\": \"Jane\"}, \"authority\": \"x1\", \"tokenizer\": \"cl100k\","
	        " \"token_budget\": 500, \"session_count\": 3, \"pagination_token\": \"p2\","
	        " \"logprobs\": {\"content\": [{\"token\": \"Hello\", \"top_logprobs\":"
	        " [{\"token\": \"Hi\"}]}]}, \"keys\": [\"name\", \"age\"], \"max_tokens\": 100,"
	        " \"oauth_provider\": \"github\", \"authored_at\": \"2020\","
	        " \"error\": {\"code\": \"E42\"},"
	        " \"tokenString\": \"SECRETQQ7a\", \"refresh_tokens\": [\"SECRETQQ7b\"],"
	        " \"TOKENS\": \"SECRETQQ7c\", \"jwt\": \"SECRETQQ7d\", \"sid\": \"SECRETQQ7e\","
	        " \"x\": {\"keys\": [\"SECRETQQ7f\"], \"kid\": \"ok\"},"
	        " \"headers\": [{\"name\": \"Authorization\", \"value\": \"Bearer SECRETQQ7g\"},"
	        " {\"name\": \"Accept\", \"value\": \"text/plain\"}],"
	        " \"message\": \"Authorization: Bearer SECRETQQ7h\\nnext line\","
	        " \"note\": \"sent with bearer SECRETQQ7i, then failed\","
	        " \"form\": \"user=a&password=SECRETQQ7j&page=2\","
	        " \"next\": \"https://a.test/v1?page=2&cursor=abc\", \"token\": \"SECRETQQ7k\"}";
	struct hx_redact_stats st = { 0 };
	cJSON *v = cJSON_Parse(body);
	const cJSON *lp;
	char *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	hx_redact_json(v, &st);
	out = cJSON_PrintUnformatted(v);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	assert_absent(out, "SECRETQQ7");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(v, "author"), "name")->valuestring, "Jane");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "authority")->valuestring, "x1");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "tokenizer")->valuestring, "cl100k");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(v, "token_budget")->valueint, 500);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(v, "session_count")->valueint, 3);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "pagination_token")->valuestring, "p2");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "oauth_provider")->valuestring, "github");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "authored_at")->valuestring, "2020");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(v, "max_tokens")->valueint, 100);
	lp = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "logprobs"), "content"),
	                        0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(lp, "token")->valuestring, "Hello");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(lp, "top_logprobs"), 0),
	                            "token")
	                ->valuestring,
	        "Hi");
	CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "keys"), 1)->valuestring,
	                       "age");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "x"), "kid")->valuestring,
	                       "ok");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "headers"), 1),
	                            "value")
	                ->valuestring,
	        "text/plain");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "message")->valuestring,
	                       "Authorization: redacted\nnext line");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "note")->valuestring,
	                       "sent with bearer redacted, then failed");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "form")->valuestring,
	                       "user=a&password=redacted&page=2");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "next")->valuestring,
	                       "https://a.test/v1?page=2&cursor=abc");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(v, "error"), "code")->valuestring, "E42");
	CU_ASSERT_EQUAL(st.text, 2);
	free(out);
	cJSON_Delete(v);
}

/* Queries: words decide, a number of tokens is a count. */
static void redact__queries_follow_the_words(void)
{
	struct hx_redact_stats st = { 0 };
	char *q = hx_redact_text("sid=S1&jwt=S2&tokens=S3&max_tokens=S4&tokens=7&page_token=p&"
	                         "tokenString=S5",
	                         true, &st);

	CU_ASSERT_STRING_EQUAL(q, "sid=redacted&jwt=redacted&tokens=redacted&max_tokens=S4&"
	                          "tokens=7&page_token=p&tokenString=redacted");
	CU_ASSERT_EQUAL(st.n, 4);
	CU_ASSERT_STRING_EQUAL(st.names, "sid, jwt, tokens, tokenString");
	free(q);
	q = hx_redact_text("Bearer   abc.def", false, NULL);
	CU_ASSERT_STRING_EQUAL(q, "Bearer redacted");
	free(q);
	q = hx_redact_text("proxy-authorization: Basic xyz\r\nok", false, NULL);
	CU_ASSERT_STRING_EQUAL(q, "proxy-authorization: redacted\r\nok");
	free(q);
	q = hx_redact_text("<https://a.test/?page=2>; rel=next;  token=S6", false, NULL);
	CU_ASSERT_STRING_EQUAL(q, "<https://a.test/?page=2>; rel=next;  token=redacted");
	free(q);
	q = hx_redact_text("the Bearers stay; unbearer x too", false, NULL);
	CU_ASSERT_STRING_EQUAL(q, "the Bearers stay; unbearer x too");
	free(q);
}

/* Values are judged by their shape too: JWTs, payment and OpenAI keys,
 * AWS key ids, long random tokens; UUIDs and hex digests stay. */
static void redact__values_shaped_like_credentials_are_found(void)
{
	static const char *const secret[] = {
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
		"sk_live_4eC39HqLyjWDarjtT1zdp7dc",
		"rk_test_51HqLyjWDarjtT1",
		"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
		"AKIAIOSFODNN7EXAMPLE",
		"ASIAY34FZKBOKMUTVV7A",
		"Zx9Qm2Lr7Tv4Wk8Np3Hs6Jd1Fb5Gc0Ya_Ue-",
		NULL,
	};
	static const char *const plain[] = {
		"550e8400-e29b-41d4-a716-446655440000",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sk-imported-placeholder",
		"AKIA",
		"cus_4QFJqXQ9e8Bq2x",
		"a_very_long_snake_case_member_name_here",
		"eyJhbGciOiJIUzI1NiJ9",
		NULL,
	};
	struct hx_redact_stats st = { 0 };
	char *t;

	for (size_t i = 0; secret[i] != NULL; i++)
		CU_ASSERT_TRUE(hx_redact_is_secret_value(secret[i], strlen(secret[i])));
	for (size_t i = 0; plain[i] != NULL; i++)
		CU_ASSERT_FALSE(hx_redact_is_secret_value(plain[i], strlen(plain[i])));
	t = hx_redact_text("see https://x.example.test/k/AKIAIOSFODNN7EXAMPLE?id=7 and "
	                   "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl.",
	                   false, &st);
	CU_ASSERT_STRING_EQUAL(t, "see https://x.example.test/k/redacted?id=7 and redacted.");
	CU_ASSERT_EQUAL(st.shaped, 2);
	free(t);
}

/* A secret path segment becomes a stable placeholder, a ;jsessionid= value
 * "redacted"; ids and other parameters stay. */
static void redact__paths_lose_segment_and_matrix_secrets(void)
{
	struct hx_redact_stats st = { 0 };
	char *a = hx_redact_path("/v1/keys/sk_live_4eC39HqLyjWDarjtT1zdp7dc/x", &st);
	char *b = hx_redact_path("/v1/keys/sk_live_4eC39HqLyjWDarjtT1zdp7dc/x", NULL);
	char *c = hx_redact_path("/v1/keys/sk_live_9zzC39HqLyjWDarjtT1zdpQQ/x", NULL);
	char *m = hx_redact_path("/v1/cart;jsessionid=0AB1C2D3;color=red/42;v=AKIAIOSFODNN7EXAMPLE",
	                         &st);

	CU_ASSERT_EQUAL(strncmp(a, "/v1/keys/redacted-", 18), 0);
	CU_ASSERT_EQUAL(strlen(a), strlen("/v1/keys/redacted-12345678/x"));
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT_STRING_NOT_EQUAL(a, c);
	CU_ASSERT_STRING_EQUAL(m, "/v1/cart;jsessionid=redacted;color=red/42;v=redacted");
	CU_ASSERT_EQUAL(st.segments, 1);
	CU_ASSERT_EQUAL(st.matrix, 2);
	free(a);
	free(b);
	free(c);
	free(m);
}

void test_redact_register(void)
{
	CU_pSuite s = CU_add_suite("redact", NULL, NULL);

	CU_add_test(s, "redact__ordinary_names_are_kept", redact__ordinary_names_are_kept);
	CU_add_test(s, "redact__credential_words_are_found", redact__credential_words_are_found);
	CU_add_test(s, "redact__bodies_keep_ordinary_members_and_no_secret",
	            redact__bodies_keep_ordinary_members_and_no_secret);
	CU_add_test(s, "redact__queries_follow_the_words", redact__queries_follow_the_words);
	CU_add_test(s, "redact__values_shaped_like_credentials_are_found",
	            redact__values_shaped_like_credentials_are_found);
	CU_add_test(s, "redact__paths_lose_segment_and_matrix_secrets",
	            redact__paths_lose_segment_and_matrix_secrets);
}
