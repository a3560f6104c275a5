/* test_follow.c -- the one-line text form of an attempt and the live journal sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "follow.h"
#include "journal.h"

/* An attempt with every member the line shows set. */
static void fill(struct fa_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->seq = 5;
	a->t_arrival_us = 1234567;
	a->t_response_us = 1240000;
	a->t_done_us = 1250000;
	a->method = fa_xstrdup("POST");
	a->path = fa_xstrdup("/v1/chat/completions");
	a->route = fa_xstrdup("chat");
	a->task = fa_xstrdup("t3");
	a->key = fa_xstrdup("ops-1");
	a->scope = fa_xstrdup("key:ops-1");
	a->status = 429;
	a->fault = fa_xstrdup("quota");
	a->quota = fa_xstrdup("limited per-key replica 1");
	a->retry_after = fa_xstrdup("2");
	a->pause_until_us = 3240000;
	a->delivered = FA_DELIVERED_COMPLETE;
	a->tokens = -1;
	a->stream_chunks = -1;
}

/* Nothing but the times: every string NULL, no status, no pause. */
static void fill_bare(struct fa_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->t_arrival_us = 999; /* under a ms: +0.000s */
	a->t_response_us = -1;
	a->t_done_us = -1;
	a->response_index = -1;
	a->pause_until_us = -1;
	a->tokens = -1;
	a->stream_chunks = -1;
}

static void line_has_every_field(void)
{
	struct fa_attempt a;
	char *line;

	fill(&a);
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(
	        line, "+1.234s  #5  t3  POST /v1/chat/completions  429  quota  "
	              "[limited per-key replica 1]  pause until +3.240s (scope key:ops-1)");
	free(line);
	fa_attempt_release(&a);
}

static void line_shows_missing_values_as_dashes(void)
{
	struct fa_attempt a;
	char *line;

	fill_bare(&a);
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(line, "+0.000s  #0  -  - -  ---  -");
	free(line);
	fa_attempt_release(&a);
}

static void line_shows_pause_in_force_without_scope(void)
{
	struct fa_attempt a;
	char *line;

	fill_bare(&a);
	a.seq = 12;
	a.t_arrival_us = 61000000;
	a.status = 429;
	a.fault = fa_xstrdup("respond");
	a.retry_after = fa_xstrdup("1");
	a.pause_until_us = 62001500;
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(line, "+61.000s  #12  -  - -  429  respond  pause until +62.001s");
	free(line);
	fa_attempt_release(&a);
}

static void line_tells_retry_after_without_instant(void)
{
	struct fa_attempt a;
	char *line;

	fill(&a);
	a.pause_until_us = -1;
	free(a.retry_after);
	a.retry_after = fa_xstrdup("soon");
	free(a.quota);
	a.quota = NULL;
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(line, "+1.234s  #5  t3  POST /v1/chat/completions  429  quota  "
	                             "retry-after soon (no pause)");
	free(line);
	fa_attempt_release(&a);
}

static void line_shows_past_pause_delivery_and_stream(void)
{
	struct fa_attempt a;
	char *line;

	fill(&a);
	free(a.quota);
	a.quota = NULL;
	a.pause_until_us = -2500000; /* a date before the provider started */
	a.delivered = FA_DELIVERED_CLIENT_GONE;
	a.stream_end = fa_xstrdup("cut");
	a.stream_chunks = 3;
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(
	        line, "+1.234s  #5  t3  POST /v1/chat/completions  429  quota  "
	              "pause until -2.500s (scope key:ops-1)  client gone  stream cut, 3 chunks");
	free(line);
	a.delivered = FA_DELIVERED_DROPPED;
	a.stream_chunks = 1;
	free(a.stream_end);
	a.stream_end = fa_xstrdup("done");
	a.pause_until_us = -1;
	free(a.retry_after);
	a.retry_after = NULL;
	a.status = 0;
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(line, "+1.234s  #5  t3  POST /v1/chat/completions  ---  quota  "
	                             "dropped  stream done, 1 chunk");
	free(line);
	fa_attempt_release(&a);
}

static void line_stays_one_line(void)
{
	struct fa_attempt a;
	char *line;

	fill_bare(&a);
	a.task = fa_xstrdup("t\n1");
	a.path = fa_xstrdup("/a\rb\x7f");
	line = fa_follow_line(&a);
	CU_ASSERT_STRING_EQUAL(line, "+0.000s  #0  t?1  - /a?b?  ---  -");
	free(line);
	fa_attempt_release(&a);
}

static void line_shows_bytes_not_utf8_as_question_marks(void)
{
	struct fa_attempt a;
	char *line;

	fill_bare(&a);
	a.task = fa_xstrdup("t\xff"
	                    "1");
	a.path = fa_xstrdup("/r\xc3\xa9\xc3/\xe2\x82");
	line = fa_follow_line(&a);
	/* valid UTF-8 (the é) stays, each broken byte becomes one '?' */
	CU_ASSERT_STRING_EQUAL(line, "+0.000s  #0  t?1  - /r\xc3\xa9?/??  ---  -");
	free(line);
	fa_attempt_release(&a);
}

/* The whole content of @fp, a new string. */
static char *slurp(FILE *fp)
{
	long n;
	char *s;

	CU_ASSERT_FATAL(fflush(fp) == 0);
	n = ftell(fp);
	CU_ASSERT_FATAL(n >= 0);
	rewind(fp);
	s = fa_xmalloc((size_t)n + 1);
	CU_ASSERT_FATAL(fread(s, 1, (size_t)n, fp) == (size_t)n);
	s[n] = '\0';
	return s;
}

/* Append three attempts to a journal with a file and a sink of @f. */
static char *run_sink(struct fa_follow *f, char **file_text)
{
	const char *base = getenv("TMPDIR");
	char path[300];
	struct fa_journal *j = NULL;
	struct fa_err err = { "" };
	struct fa_attempt a;
	FILE *in, *live;
	char *out;
	int fd;

	snprintf(path, sizeof(path), "%s/fakeapi-follow-XXXXXX",
	         base != NULL && base[0] != '\0' ? base : P_tmpdir);
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	live = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(live);
	f->feed = fa_livefeed_new(fileno(live), 0, 0, "unit-tests", "test");
	CU_ASSERT_FATAL(fa_journal_new(path, &j, &err) == FA_OK);
	fa_journal_set_sink(j, fa_follow_sink, f);
	for (int i = 0; i < 3; i++) {
		fill(&a);
		a.pause_until_us = i == 1 ? 3240000 : -1;
		fa_journal_append(j, &a);
	}
	fa_journal_set_sink(j, NULL, NULL);
	fill(&a);
	fa_journal_append(j, &a); /* no sink: the file only */
	fa_journal_free(j);
	in = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	fseek(in, 0, SEEK_END);
	*file_text = slurp(in);
	fclose(in);
	unlink(path);
	/* the feed's writer has written everything once it is closed */
	CU_ASSERT_EQUAL(fa_livefeed_close(f->feed, 5000), 0);
	fa_livefeed_free(f->feed);
	f->feed = NULL;
	out = slurp(live);
	fclose(live);
	return out;
}

static void sink_jsonl_is_the_journal_line(void)
{
	struct fa_follow f = { .text = false, .scenario = NULL };
	char *file = NULL, *out = run_sink(&f, &file);
	char *fourth = file;

	/* the sink saw the first three lines, byte for byte as the file */
	for (int i = 0; i < 3 && fourth != NULL; i++) {
		fourth = strchr(fourth, '\n');
		if (fourth != NULL)
			fourth++;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(fourth);
	CU_ASSERT_EQUAL(strlen(out), (size_t)(fourth - file));
	CU_ASSERT(strncmp(out, file, (size_t)(fourth - file)) == 0);
	free(out);
	free(file);
}

static void sink_jsonl_puts_scenario_first(void)
{
	struct fa_follow f = { .text = false, .scenario = "fixed-\"retry\"" };
	char *file = NULL, *out = run_sink(&f, &file);
	const char *pre = "{\"scenario\":\"fixed-\\\"retry\\\"\",";
	char *o = out, *fl = file;

	for (int i = 0; i < 3; i++) {
		char *onl = strchr(o, '\n'), *fnl = strchr(fl, '\n');

		CU_ASSERT_PTR_NOT_NULL_FATAL(onl);
		CU_ASSERT_PTR_NOT_NULL_FATAL(fnl);
		CU_ASSERT_FATAL(strncmp(o, pre, strlen(pre)) == 0);
		/* without the scenario member it is the file's line */
		CU_ASSERT_EQUAL((size_t)(onl - o) - strlen(pre), (size_t)(fnl - fl) - 1);
		CU_ASSERT(strncmp(o + strlen(pre), fl + 1, (size_t)(fnl - fl) - 1) == 0);
		o = onl + 1;
		fl = fnl + 1;
	}
	CU_ASSERT_STRING_EQUAL(o, "");
	free(out);
	free(file);
}

static void sink_text_has_scenario_prefix_in_seq_order(void)
{
	struct fa_follow f = { .text = true, .scenario = "waves" };
	char *file = NULL, *out = run_sink(&f, &file);

	CU_ASSERT_STRING_EQUAL(
	        out, "[waves] +1.234s  #1  t3  POST /v1/chat/completions  429  quota  "
	             "[limited per-key replica 1]  retry-after 2 (no pause)\n"
	             "[waves] +1.234s  #2  t3  POST /v1/chat/completions  429  quota  "
	             "[limited per-key replica 1]  pause until +3.240s (scope key:ops-1)\n"
	             "[waves] +1.234s  #3  t3  POST /v1/chat/completions  429  quota  "
	             "[limited per-key replica 1]  retry-after 2 (no pause)\n");
	free(out);
	free(file);
}

void test_follow_register(void)
{
	CU_pSuite s = CU_add_suite("follow", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "follow__line_has_every_field", line_has_every_field);
	CU_add_test(s, "follow__line_shows_missing_values_as_dashes",
	            line_shows_missing_values_as_dashes);
	CU_add_test(s, "follow__line_shows_pause_in_force_without_scope",
	            line_shows_pause_in_force_without_scope);
	CU_add_test(s, "follow__line_tells_retry_after_without_instant",
	            line_tells_retry_after_without_instant);
	CU_add_test(s, "follow__line_shows_past_pause_delivery_and_stream",
	            line_shows_past_pause_delivery_and_stream);
	CU_add_test(s, "follow__line_stays_one_line", line_stays_one_line);
	CU_add_test(s, "follow__line_shows_bytes_not_utf8_as_question_marks",
	            line_shows_bytes_not_utf8_as_question_marks);
	CU_add_test(s, "follow__sink_jsonl_is_the_journal_line", sink_jsonl_is_the_journal_line);
	CU_add_test(s, "follow__sink_jsonl_puts_scenario_first", sink_jsonl_puts_scenario_first);
	CU_add_test(s, "follow__sink_text_has_scenario_prefix_in_seq_order",
	            sink_text_has_scenario_prefix_in_seq_order);
}
