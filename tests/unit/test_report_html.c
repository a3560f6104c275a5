/* test_report_html.c -- the HTML report and its timeline, on a hand-built hostile run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "html.h"
#include "report.h"
#include "result.h"

#define MS 1000 /* µs */

#define N_ATTEMPTS 1000 /* as many as a storm: every one must get its mark */

#define KC "kc0123456789abcdef01234567"
#define BC "canary.0011223344556677@example.invalid"

/* A title, a path and a detail that try to break out of the page: markup,
 * a C0 and a C1 control, a noncharacter, bytes that are not UTF-8. */
#define HOSTILE "<script>alert(\"x\")</script> & 'q'\x01\xc2\x85\xef\xbf\xbe\xff"
#define ESCAPED "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;????"

/* A suite of two scenarios: s1 ran (two tasks, a storm of attempts, some
 * naming no task), s2 could not run. */
struct fixture {
	struct fa_suite suite;
	struct fa_scenario sc[2];
	struct fa_scenario *scp[2];
	struct fa_task_spec tasks[2];
	struct hx_run_result run;
};

static struct fa_attempt *add(struct hx_scenario_result *s, const char *task, int64_t arr_ms,
                              int status)
{
	struct fa_attempt *a;

	s->attempts = fa_xrealloc(s->attempts, (s->n_attempts + 1) * sizeof(*a));
	a = &s->attempts[s->n_attempts++];
	memset(a, 0, sizeof(*a));
	a->seq = s->n_attempts;
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = (arr_ms + 1) * MS;
	a->t_done_us = a->t_response_us;
	a->method = fa_xstrdup("GET");
	a->path = fa_xstrdup("/v1/records/42");
	a->task = fa_xstrdup(task);
	a->scope = fa_xstrdup("user:ops-team");
	a->status = status;
	a->pause_until_us = -1;
	a->fault = fa_xstrdup("respond");
	a->response_index = -1;
	return a;
}

static void fixture_init(struct fixture *f)
{
	static const int statuses[] = { 200, 429, 503, 404, 0 };
	struct hx_scenario_result *s;
	struct hx_check_input in;
	struct fa_attempt *a;

	memset(f, 0, sizeof(*f));
	f->tasks[0].id = "t1";
	f->tasks[1].id = "t2";
	f->tasks[0].budget.max_attempts = 4;
	f->sc[0].id = "s1";
	f->sc[0].file = "scenarios/x/1-storm.json";
	f->sc[0].title = HOSTILE;
	memset(f->sc[0].sha256, 'a', 64);
	f->sc[0].has_harness = true;
	f->sc[0].harness.tasks = f->tasks;
	f->sc[0].harness.n_tasks = 2;
	f->sc[1].id = "s2";
	f->sc[1].file = "scenarios/x/2-broken.json";
	memset(f->sc[1].sha256, 'b', 64);
	f->scp[0] = &f->sc[0];
	f->scp[1] = &f->sc[1];
	f->suite.id = "storm";
	f->suite.version = "1";
	f->suite.scenarios = f->scp;
	f->suite.n_scenarios = 2;

	f->run.suite = &f->suite;
	f->run.harness_version = "0.1.0";
	f->run.seed = 7;
	f->run.mode = HX_MODE_EXEC;
	f->run.client = "curl {url} <&>";
	f->run.n_scenarios = 2;
	f->run.scenarios = fa_xcalloc(2, sizeof(*f->run.scenarios));

	s = &f->run.scenarios[0];
	s->sc = &f->sc[0];
	s->duration_us = 2000 * MS;
	s->n_tasks = 2;
	s->tasks = fa_xcalloc(2, sizeof(*s->tasks));
	for (size_t i = 0; i < 2; i++) {
		s->tasks[i].spec = &f->tasks[i];
		s->tasks[i].sent = true;
		s->tasks[i].t_sent_us = 0;
		s->tasks[i].t_exit_us = 1900 * MS;
		s->tasks[i].t_cancel_us = -1;
		s->tasks[i].t_quiet_until_us = -1;
	}
	memcpy(s->key_canary, KC, sizeof(KC));
	memcpy(s->body_canary, BC, sizeof(BC));
	s->client_stderr = fa_xstrdup("auth: Bearer sk-x." KC "\n" HOSTILE "\n");
	s->protocol_errors = fa_xcalloc(1, sizeof(*s->protocol_errors));
	s->protocol_errors[0] = fa_xstrdup("line 3: body " BC);
	s->n_protocol_errors = 1;
	s->n_protocol_errors_seen = 1;
	for (int i = 0; i < N_ATTEMPTS; i++) {
		/* most to t1 and t2, some naming no task, one a task the
		 * scenario does not have */
		const char *task = i % 10 == 9 ? NULL : i == 500 ? "t9" : i % 2 ? "t2" : "t1";

		a = add(s, task, i * 2, statuses[i % 5]);
		if (a->status == 429) {
			a->retry_after = fa_xstrdup("1");
			a->pause_until_us = a->t_response_us + 1000 * MS;
		}
		if (a->status == 0) {
			free(a->fault);
			a->fault = fa_xstrdup("drop_after_commit");
			a->t_response_us = -1;
		}
	}
	/* the client's bytes in a journal line: markup and the body canary */
	free(s->attempts[1].path);
	s->attempts[1].path = fa_xstrdup("/v1/" HOSTILE "/" BC);
	memset(s->journal_head, 'c', 64);
	in = (struct hx_check_input){ .sc = s->sc,
		                      .attempts = s->attempts,
		                      .n_attempts = s->n_attempts,
		                      .tasks = s->tasks,
		                      .n_tasks = s->n_tasks };
	hx_check_run_all(&in, &s->checks, &s->n_checks);
	free(s->checks[0].detail);
	s->checks[0].detail = fa_xstrdup("saw " KC " in " HOSTILE);

	s = &f->run.scenarios[1];
	s->sc = &f->sc[1];
	memcpy(s->key_canary, KC, sizeof(KC)); /* the same secrets there */
	s->error = fa_xstrdup("cannot start client: <y> " KC);
	hx_grade_run(&f->run);
}

/* The report of @f as a string; the caller frees it. */
static char *html_of(const struct fixture *f)
{
	char path[256], *buf;
	struct fa_err err = { "" };
	FILE *in;
	long len;
	int fd;

	snprintf(path, sizeof(path), "%s/hx-html-XXXXXX", P_tmpdir);
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(hx_report_html(path, &f->run, &err), FA_OK);
	in = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	rewind(in);
	buf = fa_xmalloc((size_t)len + 1);
	CU_ASSERT_FATAL(fread(buf, 1, (size_t)len, in) == (size_t)len);
	buf[len] = '\0';
	fclose(in);
	unlink(path);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void report_html__escapes_markup_controls_and_broken_utf8(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	hx_html_put(f, HOSTILE);
	fputc('|', f);
	hx_html_put(f, NULL);
	fputc('|', f);
	hx_html_put(f, "caf\xc3\xa9 \xe2\x86\x92 ok");
	fclose(f);
	CU_ASSERT_STRING_EQUAL(text, ESCAPED "|-|caf\xc3\xa9 \xe2\x86\x92 ok");
	free(text);
}

static void report_html__page_escapes_every_hostile_text(void)
{
	struct fixture f;
	char *html;

	fixture_init(&f);
	html = html_of(&f);
	CU_ASSERT_EQUAL(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 32), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<meta charset=\"utf-8\">"));
	/* the title, the client's path in the marks and the evidence, a detail */
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<h2>scenario s1 &mdash; " ESCAPED "</h2>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "GET /v1/" ESCAPED "/[body canary]  -&gt; 429"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "saw [key canary] in " ESCAPED));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<code>curl {url} &lt;&amp;&gt;</code>"));
	CU_ASSERT_PTR_NULL(strstr(html, "<script"));
	CU_ASSERT_PTR_NULL(strchr(html, '\x01'));
	CU_ASSERT_PTR_NULL(strchr(html, '\xff'));
	CU_ASSERT_PTR_NULL(strstr(html, "\xc2\x85"));
	CU_ASSERT_PTR_NULL(strstr(html, "\xef\xbf\xbe"));
	CU_ASSERT_EQUAL(strcmp(html + strlen(html) - 8, "</html>\n"), 0);
	free(html);
	hx_run_result_release(&f.run);
}

static void report_html__never_shows_the_canaries(void)
{
	struct fixture f;
	char *html;

	fixture_init(&f);
	html = html_of(&f);
	CU_ASSERT_PTR_NULL(strstr(html, KC));
	CU_ASSERT_PTR_NULL(strstr(html, BC));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "auth: Bearer sk-x.[key canary]\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "line 3: body [body canary]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "cannot start client: &lt;y&gt; [key canary]"));
	free(html);
	hx_run_result_release(&f.run);
}

static void report_html__timeline_has_one_mark_per_attempt(void)
{
	struct fixture f;
	char *html, want[64];
	const char *s2;

	fixture_init(&f);
	html = html_of(&f);
	CU_ASSERT_EQUAL(count(html, "<svg class=\"timeline\""), 1);
	CU_ASSERT_EQUAL(count(html, "<circle class=\"attempt "), N_ATTEMPTS);
	CU_ASSERT_EQUAL(count(html, " data-seq=\""), N_ATTEMPTS);
	snprintf(want, sizeof(want), "data-seq=\"%d\" ", N_ATTEMPTS);
	CU_ASSERT_EQUAL(count(html, want), 1);
	CU_ASSERT_EQUAL(count(html, "data-seq=\"1\" "), 1);
	/* a lane per task, one for the attempts naming none (t9 among them) */
	CU_ASSERT_PTR_NOT_NULL(strstr(html, ">t1<title>task t1</title></text>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, ">t2<title>task t2</title></text>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, ">(no task)<title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "task t9  GET"));
	/* every 5th attempt was dropped: a fault, no response */
	CU_ASSERT_EQUAL(count(html, "<circle class=\"attempt snone fault\""), N_ATTEMPTS / 5);
	CU_ASSERT_EQUAL(count(html, "<path class=\"fault-ring\""), N_ATTEMPTS / 5 + 1);
	CU_ASSERT_EQUAL(count(html, "<circle class=\"attempt s429\""), N_ATTEMPTS / 5);
	/* the 429s' pauses overlap: one shaded stretch per lane of the scope,
	 * past the last event */
	CU_ASSERT_EQUAL(count(html, "<rect class=\"pause cut\" x="), 3);
	/* the scenario that did not run has no timeline */
	s2 = strstr(html, "data-scenario=\"s2\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
	CU_ASSERT_PTR_NULL(strstr(s2, "<svg"));
	free(html);
	hx_run_result_release(&f.run);
}

static void report_html__lists_every_check_with_its_verdict(void)
{
	struct fixture f;
	char *html;

	fixture_init(&f);
	html = html_of(&f);
	CU_ASSERT_EQUAL(count(html, "<tr class=\"check "), hx_check_count());
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<section id=\"why\">"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<section id=\"profile\">"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "exit code <span class=\"exit-code\">2</span>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<td>could not run</td><td>s2</td>"));
	free(html);
	hx_run_result_release(&f.run);
}

static void report_html__unwritable_path_is_eio_naming_it(void)
{
	struct fixture f;
	struct fa_err err = { "" };

	fixture_init(&f);
	CU_ASSERT_EQUAL(hx_report_html("/nonexistent-dir/r.html", &f.run, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg,
	                       "/nonexistent-dir/r.html: cannot write: No such file or directory");
	hx_run_result_release(&f.run);
}

void test_report_html_register(void)
{
	CU_pSuite s = CU_add_suite("report_html", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "report_html__escapes_markup_controls_and_broken_utf8",
	            report_html__escapes_markup_controls_and_broken_utf8);
	CU_add_test(s, "report_html__page_escapes_every_hostile_text",
	            report_html__page_escapes_every_hostile_text);
	CU_add_test(s, "report_html__never_shows_the_canaries",
	            report_html__never_shows_the_canaries);
	CU_add_test(s, "report_html__timeline_has_one_mark_per_attempt",
	            report_html__timeline_has_one_mark_per_attempt);
	CU_add_test(s, "report_html__lists_every_check_with_its_verdict",
	            report_html__lists_every_check_with_its_verdict);
	CU_add_test(s, "report_html__unwritable_path_is_eio_naming_it",
	            report_html__unwritable_path_is_eio_naming_it);
}
