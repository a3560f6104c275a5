/* test_canary.c -- canaries: derivation, planting, searches, scrubbing, the provider key check. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "canary.h"
#include "client_log.h"
#include "clock.h"
#include "provider.h"

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void free_hits(struct hx_canary_hit *hits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(hits[i].where);
		free(hits[i].task);
	}
	free(hits);
}

static void canary__make_is_repeatable_and_differs_by_seed_and_scenario(void)
{
	char k1[33], b1[64], k2[33], b2[64];

	hx_canary_make(7, "s1", k1, b1);
	CU_ASSERT_EQUAL(strlen(k1), 26);
	CU_ASSERT_EQUAL(strncmp(k1, "kc", 2), 0);
	CU_ASSERT_TRUE(all_hex(k1 + 2, 24));
	CU_ASSERT_EQUAL(strlen(b1), strlen("canary.") + 16 + strlen("@example.invalid"));
	CU_ASSERT_EQUAL(strncmp(b1, "canary.", 7), 0);
	CU_ASSERT_TRUE(all_hex(b1 + 7, 16));
	CU_ASSERT_STRING_EQUAL(b1 + 23, "@example.invalid");
	/* the key canary is not part of the body canary, nor the reverse */
	CU_ASSERT_PTR_NULL(strstr(b1, k1 + 2));

	hx_canary_make(7, "s1", k2, b2);
	CU_ASSERT_STRING_EQUAL(k1, k2);
	CU_ASSERT_STRING_EQUAL(b1, b2);
	hx_canary_make(8, "s1", k2, b2);
	CU_ASSERT_STRING_NOT_EQUAL(k1, k2);
	CU_ASSERT_STRING_NOT_EQUAL(b1, b2);
	hx_canary_make(7, "s2", k2, b2);
	CU_ASSERT_STRING_NOT_EQUAL(k1, k2);
	CU_ASSERT_STRING_NOT_EQUAL(b1, b2);
}

static void canary__secret_ends_in_a_dot_and_the_key_canary(void)
{
	char *s = hx_canary_secret("sk-1", "kc0123");

	CU_ASSERT_STRING_EQUAL(s, "sk-1.kc0123");
	free(s);
}

static void canary__plant_replaces_every_token_in_string_values_only(void)
{
	const char *canary = "canary.0011223344556677@example.invalid";
	cJSON *body = cJSON_Parse("{\"mail\": \"a {body_canary} b {body_canary}\","
	                          " \"{body_canary}\": 1,"
	                          " \"list\": [\"{body_canary}\", 5, {\"note\": \"none\"}],"
	                          " \"near\": \"{body_canary\"}");
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	CU_ASSERT_EQUAL(hx_canary_plant_body(body, canary), 2);
	text = cJSON_PrintUnformatted(body);
	CU_ASSERT_STRING_EQUAL(text, "{\"mail\":\"a canary.0011223344556677@example.invalid b "
	                             "canary.0011223344556677@example.invalid\","
	                             "\"{body_canary}\":1,"
	                             "\"list\":[\"canary.0011223344556677@example.invalid\",5,"
	                             "{\"note\":\"none\"}],"
	                             "\"near\":\"{body_canary\"}");
	CU_ASSERT_EQUAL(hx_canary_plant_body(body, canary), 0); /* nothing left */
	CU_ASSERT_EQUAL(hx_canary_plant_body(NULL, canary), 0);
	free(text);
	cJSON_Delete(body);
}

static void canary__scan_reports_each_canary_found_once(void)
{
	const char buf[] = "x kcAA y kcAA z body@x";
	struct hx_canary_hit *hits = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL(
	        hx_canary_scan(buf, sizeof(buf) - 1, "kcAA", "body@x", "stderr", "t1", &hits, &n),
	        sizeof(buf) - 1);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(hits[0].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(hits[0].where, "stderr");
	CU_ASSERT_STRING_EQUAL(hits[0].task, "t1");
	CU_ASSERT_EQUAL(hits[1].kind, HX_CANARY_BODY);
	/* no body canary asked for: the key alone; a canary cut short is no hit */
	CU_ASSERT_EQUAL(
	        hx_canary_scan(buf, sizeof(buf) - 1, "kcAA", NULL, "stdout", NULL, &hits, &n),
	        sizeof(buf) - 1);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_PTR_NULL(hits[2].task);
	CU_ASSERT_EQUAL(hx_canary_scan(buf, 3, "kcAA", "body@x", "stdout", NULL, &hits, &n), 3);
	CU_ASSERT_EQUAL(n, 3);
	free_hits(hits, n);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void put(const char *dir, const char *name, const char *text)
{
	char *path = fa_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void canary__scan_dir_searches_files_for_the_key_never_through_symlinks(void)
{
	char tmpl[] = "/tmp/fa-canary-XXXXXX";
	char *dir = mkdtemp(tmpl), *state, *sub, *path;
	struct hx_canary_hit *hits = NULL;
	size_t n = 0, bytes;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	state = fa_xasprintf("%s/state", dir);
	sub = fa_xasprintf("%s/state/sub", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(state, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
	put(dir, "outside.txt", "key=sk.kcKEY\n");               /* 13 bytes, not searched */
	put(state, "w1.json", "{\"auth\":\"Bearer sk.kcKEY\"}"); /* 26 bytes */
	put(sub, "body.json", "{\"mail\":\"body@x\"}");          /* 17 bytes: body only */
	put(sub, "clean", "nothing\n");                          /* 8 bytes */
	path = fa_xasprintf("%s/link", state);
	CU_ASSERT_EQUAL(symlink("../outside.txt", path), 0);
	free(path);
	path = fa_xasprintf("%s/fifo", state);
	CU_ASSERT_EQUAL(mkfifo(path, 0600), 0); /* skipped, never waited on */
	free(path);

	bytes = hx_canary_scan_dir(state, "kcKEY", &hits, &n, NULL);
	CU_ASSERT_EQUAL(bytes, 26 + 17 + 8);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(hits[0].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(hits[0].where, "state dir file w1.json");
	CU_ASSERT_PTR_NULL(hits[0].task);

	put(sub, "deep.log", "again kcKEY");
	CU_ASSERT_EQUAL(hx_canary_scan_dir(state, "kcKEY", &hits, &n, NULL), 26 + 17 + 8 + 11);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_TRUE(strcmp(hits[1].where, "state dir file sub/deep.log") == 0 ||
	               strcmp(hits[2].where, "state dir file sub/deep.log") == 0);
	CU_ASSERT_EQUAL(hx_canary_scan_dir("/nonexistent/fa-canary", "kcKEY", &hits, &n, NULL), 0);
	free_hits(hits, n);

	CU_ASSERT_EQUAL(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
	free(state);
	free(sub);
}

/* A result holding two escalation lines and a plain message, with the
 * canaries "kcKEY" and "body@x". */
static void result_with_msgs(struct hx_scenario_result *out)
{
	static const char *const lines[] = {
		/* one element in two pieces: the parentheses say so */
		("{\"type\":\"escalation\",\"task\":\"t1\",\"record\":{\"reason\":\"x\","
		 "\"note\":\"Bearer sk-secret-1.kcKEY\"}}"),
		"{\"type\":\"action_sent\",\"task\":\"t1\",\"note\":\"kcKEY\"}",
		"{\"type\":\"escalation\",\"task\":\"t2\",\"record\":{\"mail\":\"body@x\"}}",
	};

	memset(out, 0, sizeof(*out));
	snprintf(out->key_canary, sizeof(out->key_canary), "kcKEY");
	snprintf(out->body_canary, sizeof(out->body_canary), "body@x");
	out->n_msgs = 3;
	out->msgs = fa_xcalloc(3, sizeof(*out->msgs));
	for (size_t i = 0; i < 3; i++) {
		out->msgs[i].json = cJSON_Parse(lines[i]);
		out->msgs[i].type =
		        fa_xstrdup(cJSON_GetObjectItem(out->msgs[i].json, "type")->valuestring);
		out->msgs[i].task =
		        fa_xstrdup(cJSON_GetObjectItem(out->msgs[i].json, "task")->valuestring);
	}
}

static void canary__search_covers_texts_files_and_escalation_records(void)
{
	struct hx_scenario_result out;
	char path[] = "/tmp/fa-canary-out-XXXXXX";
	int fd = mkstemp(path);
	struct hx_client_text texts[3] = {
		{ .buf = "no canary here", .len = 14, .where = "stdout" },
		{ .buf = "log: body@x", .len = 11, .where = "stderr" },
		{ .path = path, .where = "stdout of task t3", .task = "t3" },
	};

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "abc kcKEY", 9), 9);
	close(fd);
	result_with_msgs(&out);
	hx_client_log_search(&out, texts, 3, 1 << 20);
	CU_ASSERT_EQUAL_FATAL(out.n_canary_hits, 4);
	CU_ASSERT_EQUAL(out.canary_hits[0].kind, HX_CANARY_BODY);
	CU_ASSERT_STRING_EQUAL(out.canary_hits[0].where, "stderr");
	CU_ASSERT_EQUAL(out.canary_hits[1].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(out.canary_hits[1].where, "stdout of task t3");
	CU_ASSERT_STRING_EQUAL(out.canary_hits[1].task, "t3");
	/* the records, not the other lines (those are in stdout anyway) */
	CU_ASSERT_STRING_EQUAL(out.canary_hits[2].where, "escalation record of task t1");
	CU_ASSERT_EQUAL(out.canary_hits[2].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(out.canary_hits[3].where, "escalation record of task t2");
	CU_ASSERT_EQUAL(out.canary_hits[3].kind, HX_CANARY_BODY);
	CU_ASSERT(out.canary_bytes_searched > 14 + 11 + 9);
	hx_scenario_result_release(&out);

	/* two texts of one place (a stream and its tail): named once */
	result_with_msgs(&out);
	texts[0] = (struct hx_client_text){ .buf = "a body@x", .len = 8, .where = "stderr" };
	hx_client_log_search(&out, texts, 2, 1 << 20);
	CU_ASSERT_EQUAL_FATAL(out.n_canary_hits, 3);
	CU_ASSERT_STRING_EQUAL(out.canary_hits[0].where, "stderr");
	CU_ASSERT_STRING_EQUAL(out.canary_hits[1].where, "escalation record of task t1");
	hx_scenario_result_release(&out);
	texts[0] = (struct hx_client_text){ .buf = "no canary here", .len = 14, .where = "stdout" };

	/* the files' bound: only their first 4 bytes are read */
	result_with_msgs(&out);
	hx_client_log_search(&out, &texts[2], 1, 4);
	CU_ASSERT_EQUAL(out.n_canary_hits, 2); /* the records' only */
	hx_scenario_result_release(&out);
	/* no canaries made: no search */
	memset(&out, 0, sizeof(out));
	hx_client_log_search(&out, texts, 3, 1 << 20);
	CU_ASSERT_EQUAL(out.canary_bytes_searched, 0);
	unlink(path);
}

static void canary__scrub_leaves_no_canary_or_secret_in_client_text(void)
{
	struct fa_key keys[2] = { { .id = "k1", .secret = "sk-secret-1", .user = "u" },
		                  { .id = "k2", .secret = "sk-2", .user = "u" } };
	struct fa_scenario sc = { .keys = keys, .n_keys = 2 };
	struct hx_task_run task = { .error = fa_xstrdup("client said sk-secret-1 and sk-2") };
	struct hx_scenario_result out;
	char *line;

	result_with_msgs(&out);
	out.client_stderr = fa_xstrdup("auth sk-secret-1.kcKEY, alone kcKEY, mail body@x\n");
	out.error = fa_xstrdup("x.json: client exited: sk-2.kcKEY");
	out.protocol_errors = fa_xcalloc(1, sizeof(char *));
	out.protocol_errors[0] = fa_xstrdup("line 3: not a JSON object: kcKEY");
	out.n_protocol_errors = 1;
	out.tasks = &task;
	out.n_tasks = 1;
	out.hello = cJSON_Parse("{\"type\":\"hello\",\"client\":{\"kcKEY\":\"body@x\"}}");
	hx_client_log_scrub(&out, &sc);

	CU_ASSERT_STRING_EQUAL(out.client_stderr, "auth [key secret].[key canary], alone "
	                                          "[key canary], mail [body canary]\n");
	CU_ASSERT_STRING_EQUAL(out.error, "x.json: client exited: [key secret].[key canary]");
	CU_ASSERT_STRING_EQUAL(out.protocol_errors[0], "line 3: not a JSON object: [key canary]");
	/* a secret of 8 characters or more goes; a short one could be any word */
	CU_ASSERT_STRING_EQUAL(task.error, "client said [key secret] and sk-2");
	line = cJSON_PrintUnformatted(out.msgs[0].json);
	CU_ASSERT_STRING_EQUAL(line,
	                       "{\"type\":\"escalation\",\"task\":\"t1\",\"record\":"
	                       "{\"reason\":\"x\",\"note\":\"Bearer [key secret].[key canary]\"}}");
	free(line);
	line = cJSON_PrintUnformatted(out.hello);
	CU_ASSERT_STRING_EQUAL(line, "{\"type\":\"hello\",\"client\":"
	                             "{\"[key canary]\":\"[body canary]\"}}");
	free(line);
	hx_task_run_release(&task);
	out.tasks = NULL;
	out.n_tasks = 0;
	hx_scenario_result_release(&out);
}

/* ---- cut secrets, NUL escapes, escaped canaries, cut searches ---------- */

#define SECRET "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef" /* 40 characters */
#define KEYC   "kc0123456789abcdef01234567"               /* 26 */
#define BODYC  "canary.0011223344556677@example.invalid"

static void canary__redact_hides_pieces_of_eight_or_more_longest_first(void)
{
	const struct hx_canary_mask masks[] = {
		{ HX_MASK_CANARIED, SECRET "." KEYC, 40 },
		{ HX_MASK_SECRET, SECRET, 0 },
		{ HX_MASK_BODY_CANARY, BODYC, 0 },
		{ HX_MASK_KEY_CANARY, KEYC, 0 },
	};
	static const struct {
		const char *in, *out;
	} cases[] = {
		/* whole */
		{ "a " SECRET "." KEYC " b", "a [key secret].[key canary] b" },
		{ SECRET, "[key secret]" },
		{ "<" KEYC ">", "<[key canary]>" },
		/* an excerpt cut at its end: a prefix */
		{ "x sk-live-ABCDEFGHIJKLMNOPQRSTU...", "x [key secret]..." },
		{ "x " SECRET ".kc01234...", "x [key secret].[key canary]..." },
		{ "x " SECRET ".", "x [key secret]." },
		{ "mail canary.00112233", "mail [body canary]" },
		/* a tail cut at its start: a suffix */
		{ "STUVWXYZabcdef." KEYC "\nnext", "[key secret].[key canary]\nnext" },
		{ ".kc0123456789abcdef01234567 then", ".[key canary] then" },
		{ "89abcdef01234567 z", "[key canary] z" },
		{ "44556677@example.invalid!", "[body canary]!" },
		/* eight characters go, seven stay */
		{ "[sk-live-]", "[[key secret]]" },
		{ "[sk-live]", "[sk-live]" },
		{ "[Zabcdef]", "[Zabcdef]" },
		{ "[YZabcdef]", "[[key secret]]" },
		{ "kc01234 and 4567", "kc01234 and 4567" },
		/* anywhere, more than once */
		{ "sk-live-ABCD|sk-live-ABCD", "[key secret]|[key secret]" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = hx_canary_redact(cases[i].in, masks, 4);
		const char *want = strcmp(cases[i].in, cases[i].out) == 0 ? NULL : cases[i].out;

		if (want == NULL ? got != NULL : got == NULL || strcmp(got, want) != 0)
			fprintf(stderr, "\ncase %zu: %s\n  expected %s\n  got      %s\n", i,
			        cases[i].in, want ? want : "(nothing hidden)",
			        got ? got : "(null)");
		CU_ASSERT(want == NULL ? got == NULL : got != NULL && strcmp(got, want) == 0);
		free(got);
	}
	CU_ASSERT_PTR_NULL(hx_canary_redact(NULL, masks, 4));
	CU_ASSERT_PTR_NULL(hx_canary_redact("nothing here", masks, 4));
}

static void canary__redact_overlaps_go_to_the_longest_and_leave_no_long_rest(void)
{
	/* "AAAAAAAABBBB" at 0 and "BBBBBBBBCCCCCCCC" at 8 share 4 bytes */
	const struct hx_canary_mask masks[] = {
		{ HX_MASK_SECRET, "AAAAAAAABBBB", 0 },
		{ HX_MASK_KEY_CANARY, "BBBBBBBBCCCCCCCC", 0 },
	};
	const struct hx_canary_mask ties[] = {
		{ HX_MASK_SECRET, "AAAAAAAABBBB", 0 },
		{ HX_MASK_KEY_CANARY, "AAAABBBBBBBB", 0 },
		{ HX_MASK_BODY_CANARY, "AAAAAAAABBBB", 0 },
	};
	char *got;

	/* the longer wins the shared bytes; the other's first 8 still go */
	got = hx_canary_redact("AAAAAAAABBBBBBBBCCCCCCCC", masks, 2);
	CU_ASSERT_STRING_EQUAL(got, "[key secret][key canary]");
	free(got);
	/* what is left of the secret's suffix "AAAAAAABBBB" is its middle,
	 * neither a prefix nor a suffix: it stays */
	got = hx_canary_redact("AAAAAAABBBBBBBBBCCCCCCCC", masks, 2);
	CU_ASSERT_STRING_EQUAL(got, "AAAAAAAB[key canary]");
	free(got);
	/* as long as each other: the further left wins, then the earlier mask;
	 * the 4 bytes left of the other are too few */
	got = hx_canary_redact("AAAAAAAABBBBBBBB", ties, 3);
	CU_ASSERT_STRING_EQUAL(got, "[key secret]BBBB");
	free(got);
	got = hx_canary_redact("AAAAAAAABBBBBBBB", ties + 1, 2);
	CU_ASSERT_STRING_EQUAL(got, "[body canary]BBBB");
	free(got);
}

static void canary__scrub_hides_secrets_cut_before_it_ran(void)
{
	struct fa_key keys[1] = { { .id = "k1", .secret = SECRET, .user = "u" } };
	struct fa_scenario sc = { .keys = keys, .n_keys = 1 };
	struct hx_check_result check = {
		.id = "budget.escalates",
		.detail = fa_xstrdup(
		        "task t1's escalation record breaks the schema: "
		        "$.record.attempts[0].ratelimit[\"sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZab"
		        "cdef...\"]: expected string, got integer 5"),
	};
	struct hx_task_run task = { .error = fa_xstrdup("client could not start: exit 127, no "
		                                        "attempt made: key is " SECRET
		                                        ".kc0123456") };
	struct hx_scenario_result out = { 0 };
	char *line;

	snprintf(out.key_canary, sizeof(out.key_canary), KEYC);
	snprintf(out.body_canary, sizeof(out.body_canary), BODYC);
	/* the 4 KiB tail began inside the secret */
	out.client_stderr = fa_xstrdup("MNOPQRSTUVWXYZabcdef." KEYC "EEEE\n");
	out.protocol_errors = fa_xcalloc(2, sizeof(char *));
	out.protocol_errors[0] = fa_xstrdup("line 4: not a JSON object: xxxxxxxxxxxxxxxxxxxxxx"
	                                    "xxxxxxxx sk-live-ABCDEFGHIJKLMNOPQRSTU...");
	out.protocol_errors[1] = fa_xstrdup("line 5: unknown type \"" SECRET ".kc0123456...\"");
	out.n_protocol_errors = 2;
	out.checks = &check;
	out.n_checks = 1;
	out.tasks = &task;
	out.n_tasks = 1;
	out.hello = cJSON_Parse("{\"type\":\"hello\",\"client\":{\"sk-live-ABCDEFGH\":"
	                        "\"0011223344556677@example.invalid\"}}");
	hx_client_log_scrub(&out, &sc);

	CU_ASSERT_STRING_EQUAL(check.detail,
	                       "task t1's escalation record breaks the schema: "
	                       "$.record.attempts[0].ratelimit[\"[key secret]...\"]: expected "
	                       "string, got integer 5");
	CU_ASSERT_STRING_EQUAL(out.client_stderr, "[key secret].[key canary]EEEE\n");
	CU_ASSERT_STRING_EQUAL(out.protocol_errors[0], "line 4: not a JSON object: xxxxxxxxxxxxx"
	                                               "xxxxxxxxxxxxxxxxx [key secret]...");
	CU_ASSERT_STRING_EQUAL(out.protocol_errors[1],
	                       "line 5: unknown type \"[key secret].[key canary]...\"");
	CU_ASSERT_STRING_EQUAL(task.error, "client could not start: exit 127, no attempt made: "
	                                   "key is [key secret].[key canary]");
	line = cJSON_PrintUnformatted(out.hello);
	CU_ASSERT_STRING_EQUAL(line, "{\"type\":\"hello\",\"client\":"
	                             "{\"[key secret]\":\"[body canary]\"}}");
	free(line);
	hx_check_result_release(&check);
	hx_task_run_release(&task);
	out.checks = NULL;
	out.n_checks = 0;
	out.tasks = NULL;
	out.n_tasks = 0;
	hx_scenario_result_release(&out);
}

/* @s with every character \u-escaped, as a JSON string's inside. */
static char *escaped(const char *s)
{
	char *out = fa_xmalloc(6 * strlen(s) + 1);

	for (size_t i = 0; s[i] != '\0'; i++)
		snprintf(out + 6 * i, 7, "\\u%04x", (unsigned char)s[i]);
	return out;
}

static enum hx_client_line feed(struct hx_client_log *l, const char *line)
{
	return hx_client_log_line(l, line, strlen(line), false, 0);
}

static void canary__a_line_holding_a_nul_escape_is_refused_and_still_searched(void)
{
	struct hx_client_log l;
	struct hx_scenario_result out = { 0 };
	char *key = escaped(SECRET "." KEYC), *line;

	hx_client_log_init(&l);
	hx_client_log_canaries(&l, KEYC, BODYC);
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"hello\",\"protocol\":1}"), HX_CLIENT_LINE_HELLO);
	hx_client_log_task(&l, "t1");
	/* the record's action hides the key behind a NUL */
	line = fa_xasprintf("{\"type\":\"escalation\",\"task\":\"t1\",\"record\":{\"action\":"
	                    "\"stopped\\u0000 key=%s\"}}",
	                    key);
	CU_ASSERT_EQUAL(feed(&l, line), HX_CLIENT_LINE_ERROR);
	free(line);
	CU_ASSERT_EQUAL(l.n_msgs, 0);
	CU_ASSERT_EQUAL_FATAL(l.n_errors, 1);
	CU_ASSERT_STRING_EQUAL(l.errors[0], "line 2: a string holds \\u0000 (NUL), which the "
	                                    "protocol does not allow");
	CU_ASSERT_EQUAL_FATAL(l.n_hits, 1);
	CU_ASSERT_EQUAL(l.hits[0].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(l.hits[0].where, "stdout line 2");
	CU_ASSERT_STRING_EQUAL(l.hits[0].task, "t1");
	/* in a member name too, and before the hello is nothing special */
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\",\"a\\u0000b\":1}"),
	                HX_CLIENT_LINE_ERROR);
	/* an escaped backslash followed by u0000 is six plain characters */
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\",\"n\":\"\\\\u0000\"}"),
	                HX_CLIENT_LINE_MSG);
	CU_ASSERT_EQUAL(
	        feed(&l, "{\"type\":\"action_sent\",\"task\":\"t1\",\"n\":\"\\\\\\u0000\"}"),
	        HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL(l.n_errors, 3);
	CU_ASSERT_EQUAL(l.n_msgs, 1);
	hx_client_log_move(&l, &out);
	CU_ASSERT_EQUAL(out.n_canary_hits, 1);
	CU_ASSERT_EQUAL(l.n_hits, 0);
	CU_ASSERT(out.canary_bytes_searched > strlen(SECRET KEYC));
	hx_client_log_release(&l);
	hx_scenario_result_release(&out);
	free(key);
}

static void canary__parsed_lines_are_searched_with_their_escapes_decoded(void)
{
	struct hx_client_log l;
	struct hx_scenario_result out = { 0 };
	char *key = escaped(KEYC), *body = escaped(BODYC), *line;

	hx_client_log_init(&l);
	hx_client_log_canaries(&l, KEYC, BODYC);
	line = fa_xasprintf("{\"type\":\"hello\",\"protocol\":1,\"note\":\"%s\"}", body);
	CU_ASSERT_EQUAL(feed(&l, line), HX_CLIENT_LINE_HELLO);
	free(line);
	hx_client_log_task(&l, "t1");
	line = fa_xasprintf("{\"type\":\"result\",\"task\":\"t1\",\"outcome\":\"failed\","
	                    "\"note\":\"%s\"}",
	                    key);
	CU_ASSERT_EQUAL(feed(&l, line), HX_CLIENT_LINE_MSG);
	free(line);
	/* as printed: the search of stdout names it, not this one */
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"x\",\"task\":\"t1\",\"k\":\"" KEYC "\"}"),
	                HX_CLIENT_LINE_ERROR);
	/* a refused line that parses is searched: an unknown task is none */
	line = fa_xasprintf("{\"type\":\"action_sent\",\"task\":\"t9\",\"k\":\"%s\"}", key);
	CU_ASSERT_EQUAL(feed(&l, line), HX_CLIENT_LINE_ERROR);
	free(line);
	CU_ASSERT_EQUAL_FATAL(l.n_hits, 3);
	CU_ASSERT_EQUAL(l.hits[0].kind, HX_CANARY_BODY);
	CU_ASSERT_STRING_EQUAL(l.hits[0].where, "stdout line 1");
	CU_ASSERT_PTR_NULL(l.hits[0].task);
	CU_ASSERT_EQUAL(l.hits[1].kind, HX_CANARY_KEY);
	CU_ASSERT_STRING_EQUAL(l.hits[1].where, "stdout line 2");
	CU_ASSERT_STRING_EQUAL(l.hits[1].task, "t1");
	CU_ASSERT_STRING_EQUAL(l.hits[2].where, "stdout line 4");
	CU_ASSERT_PTR_NULL(l.hits[2].task);
	/* past the capture's bound, a line's own bytes are searched nowhere else */
	l.raw_cut = true;
	CU_ASSERT_EQUAL(feed(&l, "{\"type\":\"x\",\"task\":\"t1\",\"k\":\"" KEYC "\"}"),
	                HX_CLIENT_LINE_ERROR);
	CU_ASSERT_EQUAL_FATAL(l.n_hits, 4);
	CU_ASSERT_STRING_EQUAL(l.hits[3].where, "stdout line 5");
	hx_client_log_move(&l, &out);
	CU_ASSERT_EQUAL(out.n_canary_hits, 4);
	CU_ASSERT(out.canary_bytes_searched > 0);
	hx_client_log_release(&l);
	hx_scenario_result_release(&out);

	/* no canaries given: no search */
	hx_client_log_init(&l);
	line = fa_xasprintf("{\"type\":\"hello\",\"protocol\":1,\"note\":\"%s\"}", key);
	CU_ASSERT_EQUAL(feed(&l, line), HX_CLIENT_LINE_HELLO);
	CU_ASSERT_EQUAL(l.n_hits, 0);
	CU_ASSERT_EQUAL(l.searched, 0);
	free(line);
	hx_client_log_release(&l);
	free(key);
	free(body);
}

static void canary__an_escalation_line_without_an_object_record_holds_no_record(void)
{
	static const char *const lines[] = {
		"{\"type\":\"escalation\",\"task\":\"t1\",\"record\":\"kcKEY\"}",
		"{\"type\":\"escalation\",\"task\":\"t1\",\"note\":\"kcKEY\"}",
		"{\"type\":\"escalation\",\"task\":\"t1\",\"record\":[\"kcKEY\"]}",
		"{\"type\":\"escalation\",\"task\":\"t2\",\"record\":{\"n\":\"kcKEY\"}}",
	};
	struct hx_scenario_result out = { 0 };

	snprintf(out.key_canary, sizeof(out.key_canary), "kcKEY");
	out.n_msgs = 4;
	out.msgs = fa_xcalloc(4, sizeof(*out.msgs));
	for (size_t i = 0; i < 4; i++) {
		out.msgs[i].json = cJSON_Parse(lines[i]);
		out.msgs[i].type = fa_xstrdup("escalation");
		out.msgs[i].task = fa_xstrdup(i < 3 ? "t1" : "t2");
	}
	hx_client_log_search(&out, NULL, 0, 0);
	CU_ASSERT_EQUAL_FATAL(out.n_canary_hits, 1);
	CU_ASSERT_STRING_EQUAL(out.canary_hits[0].where, "escalation record of task t2");
	CU_ASSERT_EQUAL(out.canary_bytes_searched, strlen("{\"n\":\"kcKEY\"}"));
	CU_ASSERT_FALSE(out.canary_search_incomplete);
	hx_scenario_result_release(&out);
}

static void canary__searches_say_when_they_were_cut(void)
{
	char tmpl[] = "/tmp/fa-canary-cut-XXXXXX";
	char *dir = mkdtemp(tmpl), *path, *deep;
	struct hx_client_text text = { .where = "stdout of task t1", .task = "t1" };
	struct hx_canary_hit *hits = NULL;
	size_t n = 0;
	struct hx_scenario_result out = { 0 };
	bool cut = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	put(dir, "out", "0123456789 kcKEY"); /* 16 bytes */
	text.path = path = fa_xasprintf("%s/out", dir);
	snprintf(out.key_canary, sizeof(out.key_canary), "kcKEY");
	hx_client_log_search(&out, &text, 1, 16); /* all of it */
	CU_ASSERT_EQUAL(out.n_canary_hits, 1);
	CU_ASSERT_FALSE(out.canary_search_incomplete);
	hx_client_log_search(&out, &text, 1, 15); /* one byte short */
	CU_ASSERT_EQUAL(out.n_canary_hits, 1);
	CU_ASSERT_TRUE(out.canary_search_incomplete);
	out.canary_search_incomplete = false;
	free(path);
	/* a task never started has no file: nothing was missed */
	text.path = path = fa_xasprintf("%s/none", dir);
	hx_client_log_search(&out, &text, 1, 100);
	CU_ASSERT_FALSE(out.canary_search_incomplete);
	free(path);
	hx_scenario_result_release(&out);

	/* the state dir: whole, then with a folder past the 32 searched */
	CU_ASSERT_EQUAL(hx_canary_scan_dir(dir, "kcKEY", &hits, &n, &cut), 16);
	CU_ASSERT_FALSE(cut);
	deep = fa_xstrdup(dir);
	for (int depth = 0; depth <= 33; depth++) {
		char *sub = fa_xasprintf("%s/d", deep);

		CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
		free(deep);
		deep = sub;
	}
	put(deep, "key", "kcKEY");
	CU_ASSERT_EQUAL(hx_canary_scan_dir(dir, "kcKEY", &hits, &n, &cut), 16);
	CU_ASSERT_TRUE(cut);
	cut = false;
	CU_ASSERT_EQUAL(hx_canary_scan_dir("/nonexistent/fa-canary", "kcKEY", &hits, &n, &cut), 0);
	CU_ASSERT_FALSE(cut);
	/* a state dir swapped for a symlink is not followed, and that is said */
	path = fa_xasprintf("%s/link", dir);
	CU_ASSERT_EQUAL_FATAL(symlink(dir, path), 0);
	CU_ASSERT_EQUAL(hx_canary_scan_dir(path, "kcKEY", &hits, &n, &cut), 0);
	CU_ASSERT_TRUE(cut);
	free(path);
	free(deep);
	free_hits(hits, n);
	CU_ASSERT_EQUAL(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

/* The status the provider gives a request presenting @secret. */
static int status_for(struct fa_provider *p, const char *secret)
{
	struct fa_header h = { .name = "Authorization", .value = NULL };
	struct fa_req q = { .method = "GET",
		            .path = "/v1/records/1",
		            .conn_id = 1,
		            .t_arrival_us = fa_provider_now_us(p),
		            .wall_us = fa_clock_wall_us(),
		            .headers = &h,
		            .n_headers = 1 };
	struct fa_resp r = { 0 };
	char *auth = fa_xasprintf("Bearer %s", secret);
	int status;

	h.value = auth;
	fa_provider_decide(p, &q, &r);
	status = r.status;
	fa_provider_finish(p, &r, fa_provider_now_us(p), fa_provider_now_us(p),
	                   FA_DELIVERED_COMPLETE);
	fa_resp_release(&r);
	free(auth);
	return status;
}

static void canary__provider_accepts_the_canaried_secret_only(void)
{
	static const char text[] =
	        "{\"id\": \"unit\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
	        " \"routes\": [{\"id\": \"r\", \"method\": \"GET\", \"path\": \"/v1/records/{id}\","
	        "   \"responses\": [{\"status\": 200}]}]}";
	struct fa_scenario *sc = NULL;
	struct fa_journal *j = NULL;
	struct fa_provider *p;
	struct fa_err err = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(fa_scenario_parse(text, strlen(text), "u.json", &sc, &err), FA_OK);
	CU_ASSERT_EQUAL_FATAL(fa_journal_new(NULL, &j, &err), FA_OK);
	p = fa_provider_new(sc, j, 1, fa_clock_mono_us());
	CU_ASSERT_EQUAL(status_for(p, "s1"), 200);
	fa_provider_set_key_suffix(p, "kcAB");
	CU_ASSERT_EQUAL(status_for(p, "s1.kcAB"), 200);
	CU_ASSERT_EQUAL(status_for(p, "s1"), 401);
	CU_ASSERT_EQUAL(status_for(p, "s1kcAB"), 401);
	CU_ASSERT_EQUAL(status_for(p, "s1.kcAC"), 401);
	CU_ASSERT_EQUAL(status_for(p, "s1.kcAB.kcAB"), 401);
	CU_ASSERT_EQUAL(status_for(p, ".kcAB"), 401);
	CU_ASSERT_EQUAL(status_for(p, "kcAB"), 401);
	fa_provider_set_key_suffix(p, NULL);
	CU_ASSERT_EQUAL(status_for(p, "s1"), 200);
	CU_ASSERT_EQUAL(status_for(p, "s1.kcAB"), 401);
	fa_provider_free(p);
	fa_journal_free(j);
	fa_scenario_free(sc);
}

void test_canary_register(void)
{
	CU_pSuite s = CU_add_suite("canary", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "canary__make_is_repeatable_and_differs_by_seed_and_scenario",
	            canary__make_is_repeatable_and_differs_by_seed_and_scenario);
	CU_add_test(s, "canary__secret_ends_in_a_dot_and_the_key_canary",
	            canary__secret_ends_in_a_dot_and_the_key_canary);
	CU_add_test(s, "canary__plant_replaces_every_token_in_string_values_only",
	            canary__plant_replaces_every_token_in_string_values_only);
	CU_add_test(s, "canary__scan_reports_each_canary_found_once",
	            canary__scan_reports_each_canary_found_once);
	CU_add_test(s, "canary__scan_dir_searches_files_for_the_key_never_through_symlinks",
	            canary__scan_dir_searches_files_for_the_key_never_through_symlinks);
	CU_add_test(s, "canary__search_covers_texts_files_and_escalation_records",
	            canary__search_covers_texts_files_and_escalation_records);
	CU_add_test(s, "canary__scrub_leaves_no_canary_or_secret_in_client_text",
	            canary__scrub_leaves_no_canary_or_secret_in_client_text);
	CU_add_test(s, "canary__redact_hides_pieces_of_eight_or_more_longest_first",
	            canary__redact_hides_pieces_of_eight_or_more_longest_first);
	CU_add_test(s, "canary__redact_overlaps_go_to_the_longest_and_leave_no_long_rest",
	            canary__redact_overlaps_go_to_the_longest_and_leave_no_long_rest);
	CU_add_test(s, "canary__scrub_hides_secrets_cut_before_it_ran",
	            canary__scrub_hides_secrets_cut_before_it_ran);
	CU_add_test(s, "canary__a_line_holding_a_nul_escape_is_refused_and_still_searched",
	            canary__a_line_holding_a_nul_escape_is_refused_and_still_searched);
	CU_add_test(s, "canary__parsed_lines_are_searched_with_their_escapes_decoded",
	            canary__parsed_lines_are_searched_with_their_escapes_decoded);
	CU_add_test(s, "canary__an_escalation_line_without_an_object_record_holds_no_record",
	            canary__an_escalation_line_without_an_object_record_holds_no_record);
	CU_add_test(s, "canary__searches_say_when_they_were_cut",
	            canary__searches_say_when_they_were_cut);
	CU_add_test(s, "canary__provider_accepts_the_canaried_secret_only",
	            canary__provider_accepts_the_canaried_secret_only);
}
