/* test_report.c -- text, JSON and JUnit reports of a hand-built run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "client_log.h"
#include "digest.h"
#include "report.h"
#include "report_facts.h"
#include "result.h"

#define MS 1000 /* µs */

/* A suite of two scenarios: s1 ran (t1 got a 429 and retried early, t2
 * obeyed the scope pause), s2 could not run. */
struct fixture {
	struct fa_suite suite;
	struct fa_scenario sc[2];
	struct fa_scenario *scp[2];
	struct fa_task_spec tasks[2];
	struct hx_run_result run;
};

static void add(struct hx_scenario_result *s, const char *task, int64_t arr_ms, int64_t resp_ms,
                int status, const char *ra, int64_t pause_ms)
{
	struct fa_attempt *a;

	s->attempts = fa_xrealloc(s->attempts, (s->n_attempts + 1) * sizeof(*a));
	a = &s->attempts[s->n_attempts++];
	memset(a, 0, sizeof(*a));
	a->seq = s->n_attempts;
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = resp_ms * MS;
	a->t_done_us = resp_ms * MS;
	a->method = fa_xstrdup("GET");
	a->path = fa_xstrdup("/v1/records/42");
	a->task = fa_xstrdup(task);
	a->scope = fa_xstrdup("user:ops-team");
	a->status = status;
	a->retry_after = fa_xstrdup(ra);
	a->pause_until_us = pause_ms == -1 ? -1 : pause_ms * MS;
	a->fault = fa_xstrdup("respond");
	a->response_index = -1;
}

static void fixture_init(struct fixture *f)
{
	struct hx_scenario_result *s;
	struct hx_check_input in;
	size_t i;

	memset(f, 0, sizeof(*f));
	f->tasks[0].id = "t1";
	f->tasks[1].id = "t2";
	f->tasks[0].budget.max_attempts = 4;
	f->sc[0].id = "s1";
	f->sc[0].file = "scenarios/five-step/2-scope.json";
	f->sc[0].title = "pause & \"scope\" <shared>";
	memset(f->sc[0].sha256, 'a', 64);
	f->sc[0].has_harness = true;
	f->sc[0].harness.tasks = f->tasks;
	f->sc[0].harness.n_tasks = 2;
	f->sc[1].id = "s2";
	f->sc[1].file = "scenarios/five-step/3-broken.json";
	memset(f->sc[1].sha256, 'b', 64);
	f->scp[0] = &f->sc[0];
	f->scp[1] = &f->sc[1];
	f->suite.id = "five-step";
	f->suite.version = "1";
	f->suite.scenarios = f->scp;
	f->suite.n_scenarios = 2;

	f->run.suite = &f->suite;
	f->run.harness_version = "0.1.0";
	f->run.seed = 18446744073709551615ULL;
	f->run.mode = HX_MODE_EXEC;
	f->run.client = "curl -sS --retry 4 {url}";
	f->run.n_scenarios = 2;
	f->run.scenarios = fa_xcalloc(2, sizeof(*f->run.scenarios));

	s = &f->run.scenarios[0];
	s->sc = &f->sc[0];
	s->duration_us = 10500 * MS;
	s->n_tasks = 2;
	s->tasks = fa_xcalloc(2, sizeof(*s->tasks));
	for (i = 0; i < 2; i++) {
		s->tasks[i].spec = &f->tasks[i];
		s->tasks[i].sent = true;
		s->tasks[i].t_sent_us = 0;
		s->tasks[i].t_exit_us = 10400 * MS;
		s->tasks[i].exit_code = 0;
		s->tasks[i].t_cancel_us = -1;
		s->tasks[i].t_quiet_until_us = -1;
	}
	s->tasks[1].exit_code = -1;
	s->tasks[1].timed_out = true;
	s->tasks[1].t_sent_us = 100 * MS; /* handed over inside t1's pause */
	add(s, "t1", 0, 5, 429, "10", 10005);
	add(s, "t1", 120, 121, 200, NULL, -1);
	add(s, "t2", 10030, 10031, 200, NULL, -1);
	add(s, NULL, 50, 51, 200, NULL, -1);
	/* A client-sent path that is not UTF-8 and carries a control byte. */
	free(s->attempts[1].path);
	s->attempts[1].path = fa_xstrdup("/v1/\xff\x01<x>");
	memset(s->journal_head, 'c', 64);
	in = (struct hx_check_input){ .sc = s->sc,
		                      .attempts = s->attempts,
		                      .n_attempts = s->n_attempts,
		                      .tasks = s->tasks,
		                      .n_tasks = s->n_tasks };
	hx_check_run_all(&in, &s->checks, &s->n_checks);

	s = &f->run.scenarios[1];
	s->sc = &f->sc[1];
	s->error = fa_xstrdup("cannot start client: sh: \"x\" & <y> not found\x02");

	f->run.min_level = 1;
	hx_grade_run(&f->run);
}

static void fixture_release(struct fixture *f)
{
	hx_run_result_release(&f->run);
}

/* The file at @path, NUL-terminated; the caller frees it. */
static char *slurp(const char *path)
{
	FILE *in = fopen(path, "rb");
	char *buf = NULL;
	long len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_FATAL(fseek(in, 0, SEEK_END) == 0);
	len = ftell(in);
	CU_ASSERT_FATAL(len >= 0);
	rewind(in);
	buf = fa_xmalloc((size_t)len + 1);
	CU_ASSERT_FATAL(fread(buf, 1, (size_t)len, in) == (size_t)len);
	buf[len] = '\0';
	fclose(in);
	return buf;
}

/* A fresh temporary file name (the file exists, empty). */
static void temp_path(char *buf, size_t len)
{
	int fd;

	snprintf(buf, len, "%s/hx-report-XXXXXX", P_tmpdir);
	fd = mkstemp(buf);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
}

static void report__grades_the_fixture_as_expected(void)
{
	struct fixture f;

	fixture_init(&f);
	CU_ASSERT_EQUAL(f.run.exit_code, 2);
	CU_ASSERT_EQUAL(f.run.level, 0);
	CU_ASSERT_EQUAL(f.run.scenarios[0].checks[1].verdict, HX_FAIL);
	CU_ASSERT_EQUAL(f.run.scenarios[0].checks[4].verdict, HX_PASS);
	fixture_release(&f);
}

static void report__text_shows_verdicts_evidence_and_exit(void)
{
	struct fixture f;
	char want[64];
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	fixture_init(&f);
	out = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &f.run, true);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "fakeapi-harness 0.1.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "suite: five-step version 1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "seed: 18446744073709551615"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "mode: exec"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "scenario s1 (scenarios/five-step/2-scope.json)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "attempts seen: 4 (1 unattributed"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "task t1: exit 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "task t2: timed out"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "FAIL  wait.retry_after       (L1)  task t1 retried"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "PASS  wait.scope_pause       (L2)  other tasks"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "N/A   classify.no_retry_4xx  (L1)  no task received"));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, "seq 1  +0.0 ms  task t1  GET /v1/records/42  -> 429  retry-after: 10 "
	                     "(until +10005.0 ms)  scope user:ops-team\n"));
	/* The raw bytes never reach the terminal. */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "seq 2  +120.0 ms  task t1  GET /v1/?"
	                                    "?<x>  -> 200"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "ERROR: could not run: cannot start client"));
	snprintf(want, sizeof(want), "summary: 1 pass, 2 fail, %zu n/a", hx_check_count() - 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "level reached: L0 (minimum L1)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "exit code 2: 1 scenario could not run"));
	CU_ASSERT_PTR_NULL(strchr(text, '\x1b'));
	CU_ASSERT_PTR_NULL(strchr(text, '\x01'));
	free(text);
	fixture_release(&f);
}

/* An evidence line quotes retry-after-ms beside Retry-After when it was
 * sent: the exact pause an SDK may have gone by. */
static void report__attempt_line_quotes_retry_after_ms(void)
{
	struct fa_attempt a = { .seq = 3,
		                .t_arrival_us = 961500,
		                .status = 429,
		                .t_response_us = 961700,
		                .pause_until_us = 3208700 };
	char *line;

	a.method = fa_xstrdup("POST");
	a.path = fa_xstrdup("/v1/chat/completions");
	a.task = fa_xstrdup("t2");
	a.retry_after = fa_xstrdup("3");
	a.retry_after_ms = fa_xstrdup("2247");
	line = hx_report_attempt_line(&a);
	CU_ASSERT_STRING_EQUAL(line,
	                       "seq 3  +961.5 ms  task t2  POST /v1/chat/completions  "
	                       "-> 429  retry-after: 3  retry-after-ms: 2247 (until +3208.7 ms)");
	free(line);
	fa_attempt_release(&a);
}

/* Without -v the N/A lines are counted, not listed, and the report ends
 * with why: each failed check once, then the profile, the level and the
 * exit code. */
static void report__text_ends_with_why_and_hides_na(void)
{
	struct fixture f;
	char *text = NULL, *why, *profile, *level, *code;
	size_t len = 0;
	FILE *out;

	fixture_init(&f);
	out = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &f.run, false);
	fclose(out);
	CU_ASSERT_PTR_NULL(strstr(text, "N/A   classify.no_retry_4xx  (L1)  no task"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " had nothing to judge here, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " of them not covered (-v lists each with why)\n"));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, " had nothing to judge in any scenario (-v lists them)\n"));
	/* counted and n/a at the level not reached: part of why */
	CU_ASSERT_PTR_NOT_NULL(strstr(text,
	                              "\n  N/A   classify.no_retry_4xx  (L1) not judged where "
	                              "it counts, so L1 is not reached  s1: no task"));
	why = strstr(text, "\nwhy (each failed check once, in the first scenario it failed):\n"
	                   "  FAIL  attempts.bounded       (L1)  s1: 1 attempt named no task");
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  FAIL  wait.retry_after       (L1)  s1: task t1 "
	                                    "retried 9885.0 ms early"));
	profile = strstr(text, "profile (P pass");
	level = strstr(text, "level reached: L0");
	code = strstr(text, "exit code 2: ");
	CU_ASSERT_PTR_NOT_NULL(why);
	CU_ASSERT_TRUE(why != NULL && profile > why && level > profile && code > level);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  ERROR  could not run s2: cannot start client"));
	free(text);
	fixture_release(&f);
}

static void report__text_marks_recommended_checks(void)
{
	struct fixture f;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	fixture_init(&f);
	f.run.scenarios[0].checks[2].required = false;
	out = open_memstream(&text, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &f.run, true);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, "N/A   classify.no_retry_4xx  (L1) recommended  no task"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "N/A   classify.no_retry_4xx  (L1) not counted\n"));
	free(text);
	fixture_release(&f);
}

static void report__json_parses_back_with_every_field(void)
{
	struct fixture f;
	struct fa_err err = { "" };
	char path[256], *text, heads[2 * 65 + 1], want[FA_SHA256_HEX];
	const cJSON *sc, *c, *ev, *t;
	cJSON *root;

	fixture_init(&f);
	temp_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(hx_report_json(path, &f.run, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	text = slurp(path);
	unlink(path);
	root = cJSON_Parse(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"seed\":\t18446744073709551615"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\xef\xbf\xbd")); /* U+FFFD for 0xff */

	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "harness_version")->valuestring, "0.1.0");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "suite")->valuestring, "five-step");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "suite_version")->valuestring, "1");
	t = cJSON_GetObjectItem(root, "scenario_sha256");
	CU_ASSERT_EQUAL(strlen(cJSON_GetObjectItem(t, "s1")->valuestring), 64);
	CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(t, "s2"));
	CU_ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItem(root, "seed")));
	t = cJSON_GetObjectItem(root, "client");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "command")->valuestring,
	                       "curl -sS --retry 4 {url}");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "hello")));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "mode")->valuestring, "exec");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "level")->valuestring, "L0");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "min_level")->valuestring, "L1");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "exit_code")->valueint, 2);

	/* The run's head commits to each scenario's head, in suite order. */
	memset(heads, 'c', 64);
	heads[64] = '\n';
	memset(heads + 65, '0', 64);
	heads[129] = '\n';
	fa_digest_sha256_hex(heads, 130, want);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "journal_head")->valuestring, want);

	t = cJSON_GetObjectItem(root, "summary");
	/* t2 timed out: attempts.bounded fails besides wait.retry_after */
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "pass")->valueint, 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "fail")->valueint, 2);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "n/a")->valueint, (int)hx_check_count() - 3);
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "checks")),
	                      (int)hx_check_count());
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "checks"), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "id")->valuestring, "wait.retry_after");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "verdict")->valuestring, "fail");
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(t, "required")));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "exit_reason")->valuestring,
	                       "1 scenario could not run");

	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "scenarios")), 2);
	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sc, "id")->valuestring, "s1");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sc, "file")->valuestring,
	                       "scenarios/five-step/2-scope.json");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(sc, "error")));
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "duration_ms")->valueint, 10500);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "attempts")->valueint, 4);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "unattributed_attempts")->valueint, 1);
	CU_ASSERT_EQUAL(strlen(cJSON_GetObjectItem(sc, "journal_head")->valuestring), 64);
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "tasks"), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "id")->valuestring, "t2");
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(t, "sent")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "exit_code")));
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(t, "timed_out")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "error")));

	c = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "checks"), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "id")->valuestring, "wait.retry_after");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(c, "level")->valueint, 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "verdict")->valuestring, "fail");
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(c, "required")));
	CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(c, "detail")->valuestring, "early"));
	ev = cJSON_GetObjectItem(c, "evidence");
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ev), 2);
	t = cJSON_GetArrayItem(ev, 0);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "seq")->valueint, 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "status")->valueint, 429);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "retry_after")->valuestring, "10");
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "pause_until_us")->valuedouble, 10005.0 * MS);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "task")->valuestring, "t1");
	t = cJSON_GetArrayItem(ev, 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(t, "seq")->valueint, 2);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "retry_after")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "pause_until_us")));

	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 1);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(cJSON_GetObjectItem(sc, "error")->valuestring, "cannot start client"));
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "checks")), 0);
	cJSON_Delete(root);
	free(text);
	fixture_release(&f);
}

static void report__unwritable_path_is_eio_naming_it(void)
{
	struct fixture f;
	struct fa_err err = { "" };
	const char *bad = "no-such-dir-for-hx-report/r.json";

	fixture_init(&f);
	CU_ASSERT_EQUAL(hx_report_json(bad, &f.run, &err), FA_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot write: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, strerror(ENOENT)));
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(hx_report_junit(bad, &f.run, &err), FA_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot write: "));
	fixture_release(&f);
}

static void report__junit_has_failure_skipped_error_and_escapes(void)
{
	struct fixture f;
	struct fa_err err = { "" };
	char path[256], want[160], *xml;
	size_t n = hx_check_count();

	fixture_init(&f);
	/* Markup and a control character inside a detail. */
	free(f.run.scenarios[0].checks[4].detail);
	f.run.scenarios[0].checks[4].detail = fa_xstrdup("a & b < c > d \"e\" 'f'\x01");
	temp_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(hx_report_junit(path, &f.run, &err), FA_OK);
	xml = slurp(path);
	unlink(path);
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
	snprintf(want, sizeof(want),
	         "<testsuites name=\"five-step\" tests=\"5\" failures=\"2\" "
	         "errors=\"1\" skipped=\"0\">");
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, want));
	/* the grade: already red through the error above, so not counted twice */
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testsuite name=\"grade\" tests=\"1\" failures=\"0\" "
	                                   "errors=\"0\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml,
	                              "<system-out>level reached: L0 (minimum L1); exit code 2: "
	                              "1 scenario could not run</system-out>"));
	/* the n/a checks are no testcase, only named */
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testsuite name=\"s1\" tests=\"3\" failures=\"2\""));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(xml, "<property name=\"not_judged\" value=\"classify.no_retry_4xx "));
	CU_ASSERT_PTR_NULL(strstr(xml, "name=\"classify.no_retry_4xx\""));
	CU_ASSERT_PTR_NULL(strstr(xml, "<skipped"));
	CU_ASSERT_EQUAL(n > 3, 1);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(xml, "<testcase classname=\"five-step.s1\" name=\"wait.retry_after\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<failure message=\"task t1 retried"));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(xml, "seq 1  +0.0 ms  task t1  GET /v1/records/42  -&gt; 429"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "/v1/\\xFF\\x01&lt;x&gt;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
	        xml,
	        "<system-out>a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;\\x01</system-out>"));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(xml, "<testcase classname=\"five-step.s2\" name=\"scenario\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(
	        xml,
	        "<error message=\"cannot start client: sh: &quot;x&quot; &amp; &lt;y&gt; not found\\x02\""));
	CU_ASSERT_PTR_NULL(strchr(xml, '\x01'));
	CU_ASSERT_PTR_NULL(strchr(xml, '\x02'));
	CU_ASSERT_PTR_NULL(strchr(xml, '\xff'));
	free(xml);
	fixture_release(&f);
}

/* Red exactly when the exit code is not 0: a failed recommended check is
 * skipped, and a level below the minimum with nothing failed is the grade
 * testcase's failure. */
static void report__junit_is_red_exactly_when_the_exit_code_is_not_0(void)
{
	struct fixture f;
	struct fa_err err = { "" };
	char path[256], *xml;
	struct hx_scenario_result *s;

	fixture_init(&f);
	/* s2 ran after all; t1's early retry was only recommended */
	s = &f.run.scenarios[1];
	free(s->error);
	s->error = NULL;
	f.run.scenarios[0].checks[1].required = false;  /* wait.retry_after */
	f.run.scenarios[0].checks[0].verdict = HX_PASS; /* attempts.bounded */
	f.run.min_level = 4;
	hx_grade_run(&f.run);
	CU_ASSERT_EQUAL(f.run.exit_code, 1);
	temp_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(hx_report_junit(path, &f.run, &err), FA_OK);
	xml = slurp(path);
	unlink(path);
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<skipped message=\"recommended, not counted: task t1 "
	                                   "retried"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml,
	                              "<testcase classname=\"five-step.grade\" name=\"level\" "
	                              "time=\"0\">\n      <failure message=\"level reached: L"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, " (minimum L4); exit code 1: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<testsuites name=\"five-step\" tests=\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "\" failures=\"1\" errors=\"0\" skipped=\"1\">"));
	free(xml);

	/* everything counted passes and L1 is enough: green */
	f.run.min_level = 0;
	hx_grade_run(&f.run);
	CU_ASSERT_EQUAL(f.run.exit_code, 0);
	CU_ASSERT_EQUAL_FATAL(hx_report_junit(path, &f.run, &err), FA_OK);
	xml = slurp(path);
	unlink(path);
	CU_ASSERT_PTR_NULL(strstr(xml, "<failure"));
	CU_ASSERT_PTR_NOT_NULL(strstr(xml, "<system-out>level reached: "));
	free(xml);
	fixture_release(&f);
}

/* The text report of @f's run; the caller frees it. */
static char *text_of(const struct fixture *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	hx_report_text(out, &f->run, true);
	fclose(out);
	return text;
}

static void report__text_counts_every_protocol_error_past_the_cap(void)
{
	static const char hello[] = "{\"type\":\"hello\",\"protocol\":1}";
	struct fixture f;
	struct hx_client_log l;
	char *text;

	fixture_init(&f);
	f.run.mode = HX_MODE_STDIO;
	hx_client_log_init(&l);
	hx_client_log_line(&l, hello, strlen(hello), false, 0);
	for (int i = 0; i < 2 * HX_CLIENT_LOG_MAX_ERRORS; i++)
		hx_client_log_line(&l, "x", 1, false, 1);
	hx_client_log_error(&l, "client exited with status %d before shutdown", 4);
	hx_client_log_move(&l, &f.run.scenarios[0]);
	hx_client_log_release(&l);
	CU_ASSERT_EQUAL(f.run.scenarios[0].n_protocol_errors, HX_CLIENT_LOG_MAX_ERRORS + 2);
	text = text_of(&f);
	/* every error the client made, not the lines listed */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  protocol errors: 201\n"
	                                    "    line 2: not a JSON object: x\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "    line 101: not a JSON object: x\n"
	                                    "    100 more protocol errors not listed\n"
	                                    "    client exited with status 4 before shutdown\n"));
	free(text);
	/* a result built by hand, without the count, shows what it lists */
	f.run.scenarios[0].n_protocol_errors_seen = 0;
	text = text_of(&f);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  protocol errors: 102\n"));
	free(text);
	fixture_release(&f);
}

static void report__text_hello_names_what_is_missing(void)
{
	struct fixture f;
	cJSON *hello;
	char *text;

	fixture_init(&f);
	f.run.mode = HX_MODE_STDIO;
	hello = cJSON_Parse("{\"type\":\"hello\",\"protocol\":1,\"client\":{\"name\":7},"
	                    "\"features\":[\"a\",3,\"b\"]}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hello);
	f.run.hello = hello;
	text = text_of(&f);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "client hello: (no name) (no version), protocol 1, "
	                                    "features: a b\n"));
	free(text);
	cJSON_Delete(hello);
	hello = cJSON_Parse("{\"type\":\"hello\",\"protocol\":1,\"client\":{\"name\":\"\","
	                    "\"version\":\"2.0\"}}");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hello);
	f.run.hello = hello;
	text = text_of(&f);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "client hello: (no name) 2.0, protocol 1, "
	                                    "features: none\n"));
	free(text);
	cJSON_Delete(hello);
	f.run.hello = NULL;
	fixture_release(&f);
}

/* The JSON report of @f's run, parsed; the caller deletes it. */
static cJSON *json_of(const struct fixture *f)
{
	struct fa_err err = { "" };
	char path[256], *text;
	cJSON *root;

	temp_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(hx_report_json(path, &f->run, &err), FA_OK);
	text = slurp(path);
	unlink(path);
	root = cJSON_Parse(text);
	free(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	return root;
}

/* The JUnit report of @f's run; the caller frees it. */
static char *junit_of(const struct fixture *f)
{
	struct fa_err err = { "" };
	char path[256], *xml;

	temp_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(hx_report_junit(path, &f->run, &err), FA_OK);
	xml = slurp(path);
	unlink(path);
	return xml;
}

/* The top-level "checks" row of check @id. */
static const cJSON *suite_row(const cJSON *root, const char *id)
{
	const cJSON *row;

	cJSON_ArrayForEach(
	        row,
	        cJSON_GetObjectItem(
	                root, "checks")) if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring,
	                                            id) == 0) return row;
	CU_FAIL_FATAL("no such row");
	return NULL;
}

static void report__strict_run_says_so_and_counts_recommended_rows(void)
{
	struct fixture f;
	const cJSON *sc, *c;
	cJSON *root;
	char *text;

	fixture_init(&f);
	f.run.scenarios[0].checks[4].required = false; /* wait.scope_pause, by expect */
	f.run.strict = true;
	text = text_of(&f);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, "strict: yes (recommended checks count as required)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "PASS  wait.scope_pause       (L2)  other tasks"));
	free(text);
	root = json_of(&f);
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(root, "strict")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(root, "known_failing")));
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(root, "repeat")));
	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 0);
	c = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "checks"), 3);
	CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(c, "required")));
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "default")->valuestring, "required");
	cJSON_Delete(root);
	fixture_release(&f);
}

static void report__rows_carry_the_check_default(void)
{
	struct fixture f;
	const cJSON *sc, *c;
	cJSON *root;
	size_t i;

	fixture_init(&f);
	root = json_of(&f);
	for (i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		const char *want = d->required ? "required" : "recommended";

		c = suite_row(root, d->id);
		CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "default")->valuestring, want);
		sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 0);
		c = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "checks"), (int)i);
		CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c, "default")->valuestring, want);
	}
	cJSON_Delete(root);
	fixture_release(&f);
}

#define KC "kc0123456789abcdef01234567"
#define BC "canary.0011223344556677@example.invalid"

/* Give @f's first scenario canaries, found in three places; task t1 an
 * escalation record, task t2 a cancel. */
static void with_canaries(struct fixture *f)
{
	struct hx_scenario_result *s = &f->run.scenarios[0];
	static const char line[] =
	        "{\"type\":\"escalation\",\"task\":\"t1\",\"record\":{\"reason\":"
	        "\"wait_exceeds_budget\",\"goal\":\"mail " BC "\",\"attempts\":[]}}";

	f->run.mode = HX_MODE_STDIO;
	memcpy(s->key_canary, KC, sizeof(KC));
	memcpy(s->body_canary, BC, sizeof(BC));
	s->client_stderr = fa_xstrdup("auth: Bearer sk-e2e." KC "\n");
	s->protocol_errors = fa_xcalloc(1, sizeof(*s->protocol_errors));
	s->protocol_errors[0] = fa_xstrdup("line 3: unknown type \"" KC "\"");
	s->n_protocol_errors = 1;
	s->canary_hits = fa_xcalloc(2, sizeof(*s->canary_hits));
	s->canary_hits[0].kind = HX_CANARY_KEY;
	s->canary_hits[0].where = fa_xstrdup("stderr");
	s->canary_hits[1].kind = HX_CANARY_BODY;
	s->canary_hits[1].where = fa_xstrdup("escalation record of task t1");
	s->canary_hits[1].task = fa_xstrdup("t1");
	s->n_canary_hits = 2;
	s->canary_bytes_searched = 4096;
	s->msgs = fa_xcalloc(1, sizeof(*s->msgs));
	s->msgs[0].type = fa_xstrdup("escalation");
	s->msgs[0].task = fa_xstrdup("t1");
	s->msgs[0].json = cJSON_Parse(line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->msgs[0].json);
	s->n_msgs = 1;
	s->tasks[0].t_cancel_us = -1;
	s->tasks[1].t_cancel_us = 1234500;
	free(s->checks[2].detail);
	s->checks[2].detail = fa_xstrdup("saw " KC " and " BC);
}

static void report__canary_hits_escalations_and_cancels_never_show_canaries(void)
{
	struct fixture f;
	const cJSON *sc, *t, *h;
	cJSON *root;
	char *text, *xml, *json;

	fixture_init(&f);
	with_canaries(&f);
	text = text_of(&f);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  canary hits: 2: key canary in stderr; body canary "
	                                    "in escalation record of task t1\n"));
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(text, "  task t1: no result (escalation: wait_exceeds_budget)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  task t2: timed out"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " (cancelled at +1234.5 ms)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "    | auth: Bearer sk-e2e.[key canary]\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "line 3: unknown type \"[key canary]\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "saw [key canary] and [body canary]"));
	CU_ASSERT_PTR_NULL(strstr(text, KC));
	CU_ASSERT_PTR_NULL(strstr(text, BC));
	free(text);

	root = json_of(&f);
	json = cJSON_Print(root);
	CU_ASSERT_PTR_NULL(strstr(json, KC));
	CU_ASSERT_PTR_NULL(strstr(json, BC));
	free(json);
	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 0);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "canary_bytes_searched")->valueint, 4096);
	CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "canary_hits")), 2);
	h = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "canary_hits"), 0);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "kind")->valuestring, "key");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "where")->valuestring, "stderr");
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(h, "task")));
	h = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "canary_hits"), 1);
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "kind")->valuestring, "body");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "task")->valuestring, "t1");
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "tasks"), 0);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "cancelled_at_ms")));
	h = cJSON_GetObjectItem(t, "escalation");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "reason")->valuestring,
	                       "wait_exceeds_budget");
	CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(h, "goal")->valuestring, "mail [body canary]");
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "tasks"), 1);
	CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(t, "cancelled_at_ms")->valuedouble, 1234.5,
	                       1e-9);
	CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(t, "escalation")));
	/* the scenario that did not run searched nothing */
	sc = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scenarios"), 1);
	CU_ASSERT_EQUAL(cJSON_GetObjectItem(sc, "canary_bytes_searched")->valueint, 0);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "canary_hits")), 0);
	cJSON_Delete(root);

	xml = junit_of(&f);
	CU_ASSERT_PTR_NULL(strstr(xml, KC));
	CU_ASSERT_PTR_NULL(strstr(xml, BC));
	free(xml);
	fixture_release(&f);
}

static void report__verdict_names_are_stable(void)
{
	CU_ASSERT_STRING_EQUAL(hx_verdict_str(HX_PASS), "pass");
	CU_ASSERT_STRING_EQUAL(hx_verdict_str(HX_FAIL), "fail");
	CU_ASSERT_STRING_EQUAL(hx_verdict_str(HX_NA), "n/a");
}

static void report__release_accepts_null_and_empty(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s;

	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	hx_run_result_release(NULL);
	hx_scenario_result_release(NULL);
	hx_check_result_release(NULL);
	hx_task_run_release(NULL);
	hx_run_result_release(&r);
	hx_scenario_result_release(&s);
	CU_PASS("released");
}

void test_report_register(void)
{
	CU_pSuite s = CU_add_suite("report", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "report__grades_the_fixture_as_expected",
	            report__grades_the_fixture_as_expected);
	CU_add_test(s, "report__text_shows_verdicts_evidence_and_exit",
	            report__text_shows_verdicts_evidence_and_exit);
	CU_add_test(s, "report__attempt_line_quotes_retry_after_ms",
	            report__attempt_line_quotes_retry_after_ms);
	CU_add_test(s, "report__text_ends_with_why_and_hides_na",
	            report__text_ends_with_why_and_hides_na);
	CU_add_test(s, "report__text_marks_recommended_checks",
	            report__text_marks_recommended_checks);
	CU_add_test(s, "report__json_parses_back_with_every_field",
	            report__json_parses_back_with_every_field);
	CU_add_test(s, "report__unwritable_path_is_eio_naming_it",
	            report__unwritable_path_is_eio_naming_it);
	CU_add_test(s, "report__junit_is_red_exactly_when_the_exit_code_is_not_0",
	            report__junit_is_red_exactly_when_the_exit_code_is_not_0);
	CU_add_test(s, "report__junit_has_failure_skipped_error_and_escapes",
	            report__junit_has_failure_skipped_error_and_escapes);
	CU_add_test(s, "report__text_counts_every_protocol_error_past_the_cap",
	            report__text_counts_every_protocol_error_past_the_cap);
	CU_add_test(s, "report__text_hello_names_what_is_missing",
	            report__text_hello_names_what_is_missing);
	CU_add_test(s, "report__strict_run_says_so_and_counts_recommended_rows",
	            report__strict_run_says_so_and_counts_recommended_rows);
	CU_add_test(s, "report__rows_carry_the_check_default",
	            report__rows_carry_the_check_default);
	CU_add_test(s, "report__canary_hits_escalations_and_cancels_never_show_canaries",
	            report__canary_hits_escalations_and_cancels_never_show_canaries);
	CU_add_test(s, "report__verdict_names_are_stable", report__verdict_names_are_stable);
	CU_add_test(s, "report__release_accepts_null_and_empty",
	            report__release_accepts_null_and_empty);
}
