/* test_escalation.c -- escalation records against their schema, and escalation.sanitised. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check_fixture.h"
#include "escalation.h"

#define SCHEMA "docs/escalation.schema.json"
/* 16 and 15 characters of a word */
#define B16   "bbbbbbbbbbbbbbbb"
#define B15   "bbbbbbbbbbbbbbb"
#define HEX63 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
#define HEX64 HEX63 "f"
#define FP    "sha256:" HEX64

/* A record every rule accepts. */
static const char valid[] =
        "{\"reason\": \"wait_exceeds_budget\", \"goal\": \"fetch report 7\","
        " \"action\": \"retry 2 of GET /v1/reports/{id} not sent: Retry-After 120 s "
        "exceeds the 30 s left\", \"provider\": \"http://127.0.0.1:4000\","
        " \"endpoint\": \"/v1/reports/{id}\", \"method\": \"GET\","
        " \"scope\": \"user:ops-team\", \"fingerprint\": \"" FP "\","
        " \"attempts\": [{\"attempt\": 1, \"at\": \"2025-01-01T10:00:00.000Z\","
        "   \"status\": 429, \"retry_after\": \"120\","
        "   \"ratelimit\": {\"RateLimit-Remaining\": \"0\"}},"
        "  {\"attempt\": 2, \"at\": \"2025-01-01T10:00:01.000Z\", \"status\": 0,"
        "   \"retry_after\": null, \"ratelimit\": null}],"
        " \"budget\": {\"max_attempts\": 2, \"max_wait_s\": 30, \"attempts_used\": 2,"
        "   \"waited_ms\": 1000},"
        " \"idempotency_key\": null, \"provider_operation_id\": null,"
        " \"client_reference\": null, \"sent\": \"yes\", \"wait_requested_s\": 120,"
        " \"options\": [\"wait\", \"raise_quota\", \"cancel\"]}";

static cJSON *record(void)
{
	cJSON *r = cJSON_Parse(valid);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

/* The member at @path ("budget.waited_ms", "attempts[1].status") of @root:
 * its parent in *@parent and its own name (or index) in @name / *@index. */
static void locate(cJSON *root, const char *path, cJSON **parent, char *name, int *index)
{
	char buf[128];
	char *tok, *save = NULL, *br;
	cJSON *cur = root;

	snprintf(buf, sizeof(buf), "%s", path);
	*parent = NULL;
	*index = -1;
	for (tok = strtok_r(buf, ".", &save); tok != NULL; tok = strtok_r(NULL, ".", &save)) {
		if (*parent != NULL)
			cur = *index >= 0 ? cJSON_GetArrayItem(*parent, *index)
			                  : cJSON_GetObjectItemCaseSensitive(*parent, name);
		br = strchr(tok, '[');
		*index = -1;
		if (br != NULL) {
			*br = '\0';
			cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
			*index = (int)strtol(br + 1, NULL, 10);
			snprintf(name, 64, "%s", "");
		} else {
			snprintf(name, 64, "%s", tok);
		}
		*parent = cur;
	}
}

/* A copy of the valid record with @path set to the JSON @value, or
 * removed when @value is NULL. */
static cJSON *broken(const char *path, const char *value)
{
	cJSON *r = record(), *parent, *v;
	char name[64];
	int index;
	bool ok;

	locate(r, path, &parent, name, &index);
	CU_ASSERT_PTR_NOT_NULL_FATAL(parent);
	if (value == NULL) {
		if (index >= 0)
			cJSON_DeleteItemFromArray(parent, index);
		else
			cJSON_DeleteItemFromObjectCaseSensitive(parent, name);
		return r;
	}
	v = cJSON_Parse(value);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	if (index >= 0)
		ok = cJSON_ReplaceItemInArray(parent, index, v);
	else if (cJSON_GetObjectItemCaseSensitive(parent, name) != NULL)
		ok = cJSON_ReplaceItemInObjectCaseSensitive(parent, name, v);
	else
		ok = cJSON_AddItemToObject(parent, name, v);
	CU_ASSERT_FATAL(ok);
	return r;
}

static void escalation__a_valid_record_conforms(void)
{
	cJSON *r = record();
	char *why = hx_escalation_invalid(r);

	CU_ASSERT_PTR_NULL(why);
	free(why);
	cJSON_Delete(r);
}

/* Each rule with a record that breaks it alone, and the exact message. */
static void escalation__each_rule_names_its_fault(void)
{
	static const struct {
		const char *path, *value, *msg;
	} cases[] = {
		{ "reason", NULL, "$.record: missing member \"reason\"" },
		{ "reason", "\"Wait\"",
		  "$.record.reason: expected a string matching "
		  "^[a-z][a-z0-9_]{0,63}$, got string \"Wait\"" },
		{ "reason", "\"9lives\"",
		  "$.record.reason: expected a string matching "
		  "^[a-z][a-z0-9_]{0,63}$, got string \"9lives\"" },
		{ "reason", "\"a-b\"",
		  "$.record.reason: expected a string matching "
		  "^[a-z][a-z0-9_]{0,63}$, got string \"a-b\"" },
		{ "reason", "\"a" B16 B16 B16 B16 "\"",
		  "$.record.reason: expected a string matching ^[a-z][a-z0-9_]{0,63}$, got "
		  "a string of 65 characters" },
		{ "reason", "7",
		  "$.record.reason: expected a string matching "
		  "^[a-z][a-z0-9_]{0,63}$, got integer 7" },
		{ "goal", NULL, "$.record: missing member \"goal\"" },
		{ "goal", "\"\"",
		  "$.record.goal: expected string of 1..500 characters, "
		  "got string \"\"" },
		{ "goal", "null", "$.record.goal: expected string of 1..500 characters, got null" },
		{ "action", NULL, "$.record: missing member \"action\"" },
		{ "action", "[]",
		  "$.record.action: expected string of 1..500 characters, "
		  "got empty array" },
		{ "provider", NULL, "$.record: missing member \"provider\"" },
		{ "provider", "\"\"",
		  "$.record.provider: expected string of at least 1 "
		  "characters, got string \"\"" },
		{ "endpoint", NULL, "$.record: missing member \"endpoint\"" },
		{ "endpoint", "\"v1/reports\"",
		  "$.record.endpoint: expected a string starting "
		  "with \"/\", got string \"v1/reports\"" },
		{ "method", NULL, "$.record: missing member \"method\"" },
		{ "method", "\"get\"",
		  "$.record.method: expected a string of upper-case letters, "
		  "got string \"get\"" },
		{ "method", "\"\"",
		  "$.record.method: expected a string of upper-case letters, "
		  "got string \"\"" },
		{ "scope", NULL, "$.record: missing member \"scope\"" },
		{ "scope", "false",
		  "$.record.scope: expected string of at least 1 characters, "
		  "got false" },
		{ "fingerprint", NULL, "$.record: missing member \"fingerprint\"" },
		{ "fingerprint", "\"sha256:abc\"",
		  "$.record.fingerprint: expected \"sha256:\" and "
		  "64 lower-case hex digits, got string \"sha256:abc\"" },
		{ "fingerprint",
		  "\"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"",
		  "$.record.fingerprint: expected \"sha256:\" and 64 lower-case hex digits, got "
		  "a string of 71 characters" },
		{ "fingerprint", "\"sha256:" HEX64 "0\"",
		  "$.record.fingerprint: expected "
		  "\"sha256:\" and 64 lower-case hex digits, got a string of 72 characters" },
		{ "fingerprint", "\"sha256:" HEX63 "\"",
		  "$.record.fingerprint: expected "
		  "\"sha256:\" and 64 lower-case hex digits, got a string of 70 characters" },
		{ "fingerprint",
		  "\"md5:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"",
		  "$.record.fingerprint: expected \"sha256:\" and 64 lower-case hex digits, got "
		  "a string of 68 characters" },
		{ "attempts", NULL, "$.record: missing member \"attempts\"" },
		{ "attempts", "{}", "$.record.attempts: expected array, got empty object" },
		{ "attempts[0]", "3", "$.record.attempts[0]: expected object, got integer 3" },
		{ "attempts[1].attempt", NULL, "$.record.attempts[1]: missing member \"attempt\"" },
		{ "attempts[1].attempt", "0",
		  "$.record.attempts[1].attempt: expected integer "
		  ">= 1, got integer 0" },
		{ "attempts[1].attempt", "1.5",
		  "$.record.attempts[1].attempt: expected integer "
		  ">= 1, got number 1.5" },
		{ "attempts[0].at", NULL, "$.record.attempts[0]: missing member \"at\"" },
		{ "attempts[0].at", "\"2025-01-01\"",
		  "$.record.attempts[0].at: expected string of "
		  "at least 20 characters, got string \"2025-01-01\"" },
		{ "attempts[1].status", NULL, "$.record.attempts[1]: missing member \"status\"" },
		{ "attempts[1].status", "\"429\"",
		  "$.record.attempts[1].status: expected integer "
		  "0..599, got string \"429\"" },
		{ "attempts[1].status", "600",
		  "$.record.attempts[1].status: expected integer "
		  "0..599, got integer 600" },
		{ "attempts[1].status", "-1",
		  "$.record.attempts[1].status: expected integer "
		  "0..599, got integer -1" },
		{ "attempts[0].retry_after", NULL,
		  "$.record.attempts[0]: missing member "
		  "\"retry_after\"" },
		{ "attempts[0].retry_after", "120",
		  "$.record.attempts[0].retry_after: expected "
		  "string or null, got integer 120" },
		{ "attempts[0].ratelimit", NULL,
		  "$.record.attempts[0]: missing member "
		  "\"ratelimit\"" },
		{ "attempts[0].ratelimit", "\"0\"",
		  "$.record.attempts[0].ratelimit: expected "
		  "object or null, got string \"0\"" },
		{ "attempts[0].ratelimit.RateLimit-Remaining", "0",
		  "$.record.attempts[0].ratelimit[\"RateLimit-Remaining\"]: expected string, got "
		  "integer 0" },
		{ "budget", NULL, "$.record: missing member \"budget\"" },
		{ "budget", "[]", "$.record.budget: expected object, got empty array" },
		{ "budget.max_attempts", NULL, "$.record.budget: missing member \"max_attempts\"" },
		{ "budget.max_attempts", "0",
		  "$.record.budget.max_attempts: expected integer >= 1 "
		  "or null, got integer 0" },
		{ "budget.max_wait_s", NULL, "$.record.budget: missing member \"max_wait_s\"" },
		{ "budget.max_wait_s", "-0.5",
		  "$.record.budget.max_wait_s: expected number >= 0 "
		  "or null, got number -0.5" },
		{ "budget.attempts_used", NULL,
		  "$.record.budget: missing member "
		  "\"attempts_used\"" },
		{ "budget.attempts_used", "null",
		  "$.record.budget.attempts_used: expected "
		  "integer >= 0, got null" },
		{ "budget.waited_ms", NULL, "$.record.budget: missing member \"waited_ms\"" },
		{ "budget.waited_ms", "12.5",
		  "$.record.budget.waited_ms: expected integer >= 0, "
		  "got number 12.5" },
		{ "idempotency_key", NULL, "$.record: missing member \"idempotency_key\"" },
		{ "idempotency_key", "42",
		  "$.record.idempotency_key: expected string or null, "
		  "got integer 42" },
		{ "provider_operation_id", NULL,
		  "$.record: missing member "
		  "\"provider_operation_id\"" },
		{ "provider_operation_id", "{}",
		  "$.record.provider_operation_id: expected string "
		  "or null, got empty object" },
		{ "sent", NULL, "$.record: missing member \"sent\"" },
		{ "sent", "\"maybe\"",
		  "$.record.sent: expected one of yes, no or unknown, got "
		  "string \"maybe\"" },
		{ "sent", "true", "$.record.sent: expected one of yes, no or unknown, got true" },
		{ "options", NULL, "$.record: missing member \"options\"" },
		{ "options", "[]",
		  "$.record.options: expected non-empty array of options, got "
		  "empty array" },
		{ "options", "\"wait\"",
		  "$.record.options: expected non-empty array of options, "
		  "got string \"wait\"" },
		{ "options", "[\"wait\", \"retry\"]",
		  "$.record.options[1]: expected one of wait, "
		  "query_status, retry_same_key, raise_quota, change_plan, cancel or submit_new, "
		  "got string \"retry\"" },
		{ "options", "[\"wait\", \"cancel\", \"wait\"]",
		  "$.record.options[2]: \"wait\" listed twice" },
		{ "client_reference", "1",
		  "$.record.client_reference: expected string or null, "
		  "got integer 1" },
		{ "wait_requested_s", "\"120\"",
		  "$.record.wait_requested_s: expected number >= 0 "
		  "or null, got string \"120\"" },
		{ "wait_requested_s", "-1",
		  "$.record.wait_requested_s: expected number >= 0 or "
		  "null, got integer -1" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *r = broken(cases[i].path, cases[i].value);
		char *why = hx_escalation_invalid(r);

		if (why == NULL || strcmp(why, cases[i].msg) != 0)
			fprintf(stderr, "\ncase %zu (%s = %s):\n  expected: %s\n  got:      %s\n",
			        i, cases[i].path, cases[i].value ? cases[i].value : "removed",
			        cases[i].msg, why ? why : "(valid)");
		CU_ASSERT_PTR_NOT_NULL(why);
		CU_ASSERT(why != NULL && strcmp(why, cases[i].msg) == 0);
		free(why);
		cJSON_Delete(r);
	}
}

static void escalation__accepts_what_the_schema_allows(void)
{
	static const struct {
		const char *path, *value;
	} cases[] = {
		{ "client_reference", NULL }, /* optional */
		{ "wait_requested_s", NULL }, /* optional */
		{ "wait_requested_s", "null" },
		{ "wait_requested_s", "0.5" },
		{ "client_reference", "\"s1.w1.0badcafe\"" },
		{ "idempotency_key", "\"idk_1\"" },
		{ "provider_operation_id", "\"op_9\"" },
		{ "budget.max_attempts", "null" },
		{ "budget.max_wait_s", "null" },
		{ "budget.max_wait_s", "0" },
		{ "budget.max_wait_s", "2.5" },
		{ "budget.max_attempts", "1.0" }, /* an integer, written with a point */
		{ "attempts", "[]" },
		{ "attempts[0].ratelimit", "{}" },
		{ "reason", "\"circuit_open\"" },
		{ "reason", "\"a" B16 B16 B16 B15 "\"" },
		{ "method", "\"PATCH\"" },
		{ "endpoint", "\"/\"" },
		{ "goal", "\"\\u00e9t\\u00e9\"" },
		{ "extra", "{\"any\": 1}" }, /* the schema allows more members */
		{ "options", "[\"query_status\", \"retry_same_key\", \"submit_new\"]" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *r = broken(cases[i].path, cases[i].value);
		char *why = hx_escalation_invalid(r);

		if (why != NULL)
			fprintf(stderr, "\ncase %zu (%s): %s\n", i, cases[i].path, why);
		CU_ASSERT_PTR_NULL(why);
		free(why);
		cJSON_Delete(r);
	}
}

static void escalation__counts_characters_not_bytes(void)
{
	/* 500 two-byte characters fit the 500-character goal, 501 do not */
	char *goal = fa_xmalloc(501 * 2 + 3);
	cJSON *r = record();
	char *why;
	size_t o = 0;

	goal[o++] = '"';
	for (int i = 0; i < 500; i++) {
		goal[o++] = (char)0xc3;
		goal[o++] = (char)0xa9;
	}
	goal[o++] = '"';
	goal[o] = '\0';
	cJSON_ReplaceItemInObjectCaseSensitive(r, "goal", cJSON_Parse(goal));
	why = hx_escalation_invalid(r);
	CU_ASSERT_PTR_NULL(why);
	free(why);
	o--;
	goal[o++] = (char)0xc3;
	goal[o++] = (char)0xa9;
	goal[o++] = '"';
	goal[o] = '\0';
	cJSON_ReplaceItemInObjectCaseSensitive(r, "goal", cJSON_Parse(goal));
	why = hx_escalation_invalid(r);
	CU_ASSERT_STRING_EQUAL(why, "$.record.goal: expected string of 1..500 characters, "
	                            "got a string of 501 characters");
	free(why);
	free(goal);
	cJSON_Delete(r);
}

static void escalation__no_record_or_no_object(void)
{
	cJSON *a = cJSON_Parse("[1]");
	char *why = hx_escalation_invalid(NULL);

	CU_ASSERT_STRING_EQUAL(why, "$.record: missing");
	free(why);
	why = hx_escalation_invalid(a);
	CU_ASSERT_STRING_EQUAL(why, "$.record: expected object, got array");
	free(why);
	cJSON_Delete(a);
}

/* ---- the validator and the schema file agree ---- */

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = fa_xmalloc((size_t)len + 1);
	CU_ASSERT_EQUAL_FATAL(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* @list (a schema "required" array) and the validator's names for @part
 * hold the same members. */
static void same_members(const cJSON *list, enum hx_escalation_part part, const char *where)
{
	const char *names[32];
	size_t n = hx_escalation_required(part, names, 32);
	const cJSON *v;

	CU_ASSERT_FATAL(cJSON_IsArray(list));
	if ((size_t)cJSON_GetArraySize(list) != n)
		fprintf(stderr, "\n%s: the schema requires %d members, the validator %zu\n", where,
		        cJSON_GetArraySize(list), n);
	CU_ASSERT_EQUAL((size_t)cJSON_GetArraySize(list), n);
	cJSON_ArrayForEach(v, list)
	{
		bool found = false;

		for (size_t i = 0; i < n && i < 32 && !found; i++)
			found = cJSON_IsString(v) && strcmp(v->valuestring, names[i]) == 0;
		if (!found)
			fprintf(stderr, "\n%s: the validator does not require \"%s\"\n", where,
			        cJSON_IsString(v) ? v->valuestring : "?");
		CU_ASSERT_TRUE(found);
	}
}

static void escalation__required_members_match_the_schema_file(void)
{
	char *text = read_all(SCHEMA);
	cJSON *s = cJSON_Parse(text);
	const cJSON *props, *budget, *items;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	items = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(props, "attempts"), "items");
	budget = cJSON_GetObjectItemCaseSensitive(props, "budget");
	same_members(cJSON_GetObjectItemCaseSensitive(s, "required"), HX_ESCALATION_RECORD, "$");
	same_members(cJSON_GetObjectItemCaseSensitive(items, "required"), HX_ESCALATION_ATTEMPT,
	             "$.attempts[]");
	same_members(cJSON_GetObjectItemCaseSensitive(budget, "required"), HX_ESCALATION_BUDGET,
	             "$.budget");
	/* the count alone, without room for the names */
	CU_ASSERT_EQUAL(hx_escalation_required(HX_ESCALATION_BUDGET, NULL, 0), 4);
	cJSON_Delete(s);
	free(text);
}

/* The enumerations and patterns the validator implements by hand are
 * the schema's. */
static void escalation__enums_and_patterns_match_the_schema_file(void)
{
	char *text = read_all(SCHEMA);
	cJSON *s = cJSON_Parse(text);
	const cJSON *props, *v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(
	                               cJSON_GetObjectItemCaseSensitive(props, "reason"), "pattern")
	                               ->valuestring,
	                       "^[a-z][a-z0-9_]{0,63}$");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(props, "fingerprint"), "pattern")
	                ->valuestring,
	        "^sha256:[0-9a-f]{64}$");
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(props, "endpoint"), "pattern")
	                ->valuestring,
	        "^/");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(
	                               cJSON_GetObjectItemCaseSensitive(props, "method"), "pattern")
	                               ->valuestring,
	                       "^[A-Z]+$");
	/* every option and every sent value of the schema is accepted, and
	 * the validator knows no more of them than the schema */
	cJSON_ArrayForEach(
	        v, cJSON_GetObjectItemCaseSensitive(
	                   cJSON_GetObjectItemCaseSensitive(
	                           cJSON_GetObjectItemCaseSensitive(props, "options"), "items"),
	                   "enum"))
	{
		char *val = fa_xasprintf("[\"%s\"]", v->valuestring);
		cJSON *r = broken("options", val);
		char *why = hx_escalation_invalid(r);

		CU_ASSERT_PTR_NULL(why);
		free(why);
		free(val);
		cJSON_Delete(r);
	}
	CU_ASSERT_EQUAL(
	        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(props, "options"), "items"),
	                "enum")),
	        7);
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(
	                              cJSON_GetObjectItemCaseSensitive(props, "sent"), "enum"))
	{
		char *val = fa_xasprintf("\"%s\"", v->valuestring);
		cJSON *r = broken("sent", val);
		char *why = hx_escalation_invalid(r);

		CU_ASSERT_PTR_NULL(why);
		free(why);
		free(val);
		cJSON_Delete(r);
	}
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(props, "sent"), "enum")),
	                3);
	cJSON_Delete(s);
	free(text);
}

/* ---- the client's records and escalation.sanitised ---- */

/* Tasks t1 and t2; attempts 1 and 2 of t1, 3 of t2, at +0, +1 and +2 ms. */
static void setup(struct fx *f)
{
	fx_init(f, NULL, "t", 2);
	for (size_t i = 0; i < 3; i++)
		fx_add(f, i < 2 ? "t1" : "t2", (int64_t)i, 0);
}

static struct hx_check_result sanitised(struct fx *f, enum hx_mode mode, size_t searched)
{
	f->searched = searched;
	return fx_judge(f, hx_escalation_sanitised_check, "escalation.sanitised", mode);
}

static void escalation__of_returns_the_last_record_of_the_task(void)
{
	struct fx f;
	struct hx_check_input in;

	setup(&f);
	fx_escalation(&f, 0, "t1", "{\"reason\": \"first\"}");
	fx_escalation(&f, 0, "t2", "{\"reason\": \"other\"}");
	fx_escalation(&f, 0, "t1", "{\"reason\": \"last\"}");
	fx_escalation(&f, 0, "t2", NULL);
	in = fx_input(&f, HX_MODE_STDIO);
	CU_ASSERT_STRING_EQUAL(
	        cJSON_GetObjectItem(hx_escalation_of(&in, "t1"), "reason")->valuestring, "last");
	CU_ASSERT_PTR_EQUAL(hx_escalation_line_of(&in, "t1"), &f.m[2]);
	/* a line without a record is a line, but no record */
	CU_ASSERT_PTR_EQUAL(hx_escalation_line_of(&in, "t2"), &f.m[3]);
	CU_ASSERT_PTR_NULL(hx_escalation_of(&in, "t2"));
	CU_ASSERT_PTR_NULL(hx_escalation_of(&in, "t3"));
	CU_ASSERT_PTR_NULL(hx_escalation_line_of(&in, "t3"));
	fx_release(&f);
}

static void sanitised__fails_on_a_canary_hit_naming_each_place(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f);
	fx_escalation(&f, 0, "t1", "{}");
	fx_hit(&f, HX_CANARY_KEY, "escalation record of task t1", "t1");
	fx_hit(&f, HX_CANARY_BODY, "stderr", NULL);
	r = sanitised(&f, HX_MODE_STDIO, 4096);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail, "the key canary in escalation record of task t1; "
	                                 "the body canary in stderr");
	/* the attempts of the task whose record leaked */
	CU_ASSERT_EQUAL(r.n_evidence, 2);
	CU_ASSERT_EQUAL(r.evidence[0], 1);
	CU_ASSERT_EQUAL(r.evidence[1], 2);
	hx_check_result_release(&r);
	/* exec mode, no record, no attempt: a leak still fails */
	fx_release(&f);
	setup(&f);
	f.n = 0;
	for (size_t i = 0; i < 3; i++)
		fa_attempt_release(&f.a[i]);
	fx_hit(&f, HX_CANARY_KEY, "stdout of task t2", "t2");
	fx_hit(&f, HX_CANARY_KEY, "stderr", NULL);
	fx_hit(&f, HX_CANARY_BODY, "stdout of task t1", "t1");
	fx_hit(&f, HX_CANARY_KEY, "state dir file w1.json", NULL);
	r = sanitised(&f, HX_MODE_EXEC, 100);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_STRING_EQUAL(r.detail,
	                       "the key canary in stdout of task t2; the key canary "
	                       "in stderr; the body canary in stdout of task t1; and 1 more "
	                       "place");
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void sanitised__passes_a_clean_search_with_a_record(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f);
	fx_escalation(&f, 0, "t2", "{}");
	r = sanitised(&f, HX_MODE_STDIO, 5000);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_TRUE(fx_has(&r, "1 escalation record (first: task t2)"));
	CU_ASSERT_TRUE(fx_has(&r, "5000 bytes"));
	CU_ASSERT_EQUAL(r.n_evidence, 1);
	CU_ASSERT_EQUAL(r.evidence[0], 3);
	hx_check_result_release(&r);
	fx_release(&f);
}

static void sanitised__is_na_without_record_search_or_stdio(void)
{
	struct fx f;
	struct hx_check_result r;

	setup(&f);
	r = sanitised(&f, HX_MODE_STDIO, 5000);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "no escalation record"));
	hx_check_result_release(&r);
	/* lines with no record, or a record that is no object, hand nothing over */
	fx_escalation(&f, 0, "t1", NULL);
	fx_escalation(&f, 0, "t2", "5");
	fx_escalation(&f, 0, "t2", "[]");
	r = sanitised(&f, HX_MODE_STDIO, 5000);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "no escalation record"));
	hx_check_result_release(&r);
	fx_escalation(&f, 0, "t1", "{}");
	r = sanitised(&f, HX_MODE_STDIO, 0);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "no search for the canaries ran"));
	hx_check_result_release(&r);
	/* a search cut short is no clean search */
	f.incomplete = true;
	r = sanitised(&f, HX_MODE_STDIO, 5000);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "the search was cut short"));
	hx_check_result_release(&r);
	f.incomplete = false;
	r = sanitised(&f, HX_MODE_EXEC, 5000);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_TRUE(fx_has(&r, "exec mode"));
	CU_ASSERT_EQUAL(r.n_evidence, 0);
	hx_check_result_release(&r);
	fx_release(&f);
}

void test_escalation_register(void)
{
	CU_pSuite s = CU_add_suite("escalation", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "escalation__a_valid_record_conforms", escalation__a_valid_record_conforms);
	CU_add_test(s, "escalation__each_rule_names_its_fault",
	            escalation__each_rule_names_its_fault);
	CU_add_test(s, "escalation__accepts_what_the_schema_allows",
	            escalation__accepts_what_the_schema_allows);
	CU_add_test(s, "escalation__counts_characters_not_bytes",
	            escalation__counts_characters_not_bytes);
	CU_add_test(s, "escalation__no_record_or_no_object", escalation__no_record_or_no_object);
	CU_add_test(s, "escalation__required_members_match_the_schema_file",
	            escalation__required_members_match_the_schema_file);
	CU_add_test(s, "escalation__enums_and_patterns_match_the_schema_file",
	            escalation__enums_and_patterns_match_the_schema_file);
	CU_add_test(s, "escalation__of_returns_the_last_record_of_the_task",
	            escalation__of_returns_the_last_record_of_the_task);
	CU_add_test(s, "sanitised__fails_on_a_canary_hit_naming_each_place",
	            sanitised__fails_on_a_canary_hit_naming_each_place);
	CU_add_test(s, "sanitised__passes_a_clean_search_with_a_record",
	            sanitised__passes_a_clean_search_with_a_record);
	CU_add_test(s, "sanitised__is_na_without_record_search_or_stdio",
	            sanitised__is_na_without_record_search_or_stdio);
}
