/* test_known_failing.c -- parsing the --known-failing list: entries, comments, reasons and each
 * fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "known_failing.h"

/* Parse @text as the file "kf.txt"; *@err gets the message. */
static enum fa_rc parse(const char *text, struct hx_known_failing **kf, struct fa_err *err)
{
	fa_err_clear(err);
	return hx_known_failing_parse("kf.txt", text, strlen(text), kf, err);
}

static void known_failing__reads_ids_comments_and_reasons(void)
{
	static const char text[] = "# checks this client is known to fail\n"
	                           "\n"
	                           "wait.jitter\n"
	                           "   attempts.hidden   #  counts only its own retries  \r\n"
	                           "\t# an indented comment\n"
	                           "classify.no_retry_4xx#no blank before the hash\n"
	                           "wait.scope_pause #\n"
	                           "write.key_stable"; /* no newline at the end */
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };

	CU_ASSERT_EQUAL_FATAL(parse(text, &kf, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(err.msg, "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(kf);
	CU_ASSERT_STRING_EQUAL(kf->file, "kf.txt");
	CU_ASSERT_EQUAL_FATAL(kf->n_entries, 5);
	CU_ASSERT_STRING_EQUAL(kf->entries[0].id, "wait.jitter");
	CU_ASSERT_EQUAL(kf->entries[0].line, 3);
	CU_ASSERT_PTR_NULL(kf->entries[0].reason);
	CU_ASSERT_STRING_EQUAL(kf->entries[1].id, "attempts.hidden");
	CU_ASSERT_EQUAL(kf->entries[1].line, 4);
	CU_ASSERT_STRING_EQUAL(kf->entries[1].reason, "counts only its own retries");
	CU_ASSERT_STRING_EQUAL(kf->entries[2].id, "classify.no_retry_4xx");
	CU_ASSERT_STRING_EQUAL(kf->entries[2].reason, "no blank before the hash");
	CU_ASSERT_STRING_EQUAL(kf->entries[3].id, "wait.scope_pause");
	CU_ASSERT_PTR_NULL(kf->entries[3].reason); /* an empty reason is none */
	CU_ASSERT_STRING_EQUAL(kf->entries[4].id, "write.key_stable");
	CU_ASSERT_EQUAL(kf->entries[4].line, 8);

	CU_ASSERT_PTR_EQUAL(hx_known_failing_find(kf, "attempts.hidden"), &kf->entries[1]);
	CU_ASSERT_PTR_NULL(hx_known_failing_find(kf, "wait.retry_after"));
	CU_ASSERT_PTR_NULL(hx_known_failing_find(NULL, "wait.jitter"));
	hx_known_failing_free(kf);
}

static void known_failing__empty_and_comment_only_lists_are_empty(void)
{
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };

	CU_ASSERT_EQUAL_FATAL(parse("", &kf, &err), FA_OK);
	CU_ASSERT_EQUAL(kf->n_entries, 0);
	hx_known_failing_free(kf);
	CU_ASSERT_EQUAL_FATAL(parse("# nothing yet\n\n   \n", &kf, &err), FA_OK);
	CU_ASSERT_EQUAL(kf->n_entries, 0);
	hx_known_failing_free(kf);
	hx_known_failing_free(NULL);
}

static void known_failing__faults_name_file_line_and_what(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "wait.jitter\nwait.jiter\n",
		  "kf.txt:2: unknown check \"wait.jiter\", did you mean \"wait.jitter\"?" },
		{ "# x\nWAIT.JITTER\n",
		  "kf.txt:2: unknown check \"WAIT.JITTER\", did you mean \"wait.jitter\"?" },
		{ "stream.no_silent_retrys\n",
		  "kf.txt:1: unknown check \"stream.no_silent_retrys\", did you mean "
		  "\"stream.no_silent_retry\"?" },
		{ "wait.cap\n", "kf.txt:1: unknown check \"wait.cap\"" },
		{ "wait.jitter\n\nwait.jitter # again\n",
		  "kf.txt:3: duplicate check \"wait.jitter\" (first on line 1)" },
		{ "wait.jitter attempts.hidden\n",
		  "kf.txt:1: expected a check id and an optional \"# reason\", got "
		  "\"wait.jitter attempts.hidden\"" },
		{ "bad\x1b[31m\n", "kf.txt:1: unknown check \"bad?[31m\"" },
		{ "\xff\xfe\n", "kf.txt:1: unknown check \"??\"" },
	};
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kf = (struct hx_known_failing *)&err; /* must come back NULL */
		CU_ASSERT_EQUAL(parse(cases[i].text, &kf, &err), FA_EINVAL);
		CU_ASSERT_PTR_NULL(kf);
		if (strcmp(err.msg, cases[i].msg) != 0)
			fprintf(stderr, "\ncase %zu:\n  expected: %s\n  got:      %s\n", i,
			        cases[i].msg, err.msg);
		CU_ASSERT_STRING_EQUAL(err.msg, cases[i].msg);
	}
}

static void known_failing__nul_and_long_lines_are_faults(void)
{
	static const char nul[] = "wait.jitter\nwait\0.x\n";
	char *long_line = malloc(HX_KNOWN_FAILING_MAX_LINE + 3);
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };

	CU_ASSERT_EQUAL(hx_known_failing_parse("kf.txt", nul, sizeof(nul) - 1, &kf, &err),
	                FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "kf.txt:2: NUL byte in the line");
	CU_ASSERT_PTR_NOT_NULL_FATAL(long_line);
	memset(long_line, '#', HX_KNOWN_FAILING_MAX_LINE + 1);
	memcpy(long_line + HX_KNOWN_FAILING_MAX_LINE + 1, "\n", 2);
	CU_ASSERT_EQUAL(parse(long_line, &kf, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "kf.txt:1: line longer than 4096 bytes");
	/* one byte less is a comment like any other */
	long_line[HX_KNOWN_FAILING_MAX_LINE] = '\n';
	long_line[HX_KNOWN_FAILING_MAX_LINE + 1] = '\0';
	CU_ASSERT_EQUAL(parse(long_line, &kf, &err), FA_OK);
	hx_known_failing_free(kf);
	free(long_line);
}

static void known_failing__load_reads_the_file_or_names_why_not(void)
{
	char path[256];
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/hx-kf-XXXXXX", P_tmpdir);
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("wait.jitter # spreads too little\nattempts.bogus\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(hx_known_failing_load(path, &kf, &err), FA_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":2: unknown check \"attempts.bogus\""));
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("wait.jitter # spreads too little\n", f);
	fclose(f);
	fa_err_clear(&err);
	CU_ASSERT_EQUAL_FATAL(hx_known_failing_load(path, &kf, &err), FA_OK);
	CU_ASSERT_STRING_EQUAL(kf->file, path);
	CU_ASSERT_EQUAL(kf->n_entries, 1);
	hx_known_failing_free(kf);
	unlink(path);

	fa_err_clear(&err);
	CU_ASSERT_EQUAL(hx_known_failing_load(path, &kf, &err), FA_EIO);
	CU_ASSERT_PTR_NULL(kf);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot read: No such file or directory"));
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(hx_known_failing_load(P_tmpdir, &kf, &err), FA_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot read: Is a directory"));
}

static void known_failing__a_byte_order_mark_at_the_start_is_skipped(void)
{
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };

	CU_ASSERT_EQUAL_FATAL(parse("\xef\xbb\xbfwait.jitter # spreads too little\n", &kf, &err),
	                      FA_OK);
	CU_ASSERT_EQUAL_FATAL(kf->n_entries, 1);
	CU_ASSERT_STRING_EQUAL(kf->entries[0].id, "wait.jitter");
	hx_known_failing_free(kf);
	CU_ASSERT_EQUAL_FATAL(parse("\xef\xbb\xbf# only a comment\n", &kf, &err), FA_OK);
	CU_ASSERT_EQUAL(kf->n_entries, 0);
	hx_known_failing_free(kf);
	/* anywhere else it is part of an id, which no check has */
	CU_ASSERT_EQUAL(parse("wait.jitter\n\xef\xbb\xbf"
	                      "attempts.hidden\n",
	                      &kf, &err),
	                FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "kf.txt:2: unknown check \"\xef\xbb\xbf"
	                                "attempts.hidden\"");
}

static void known_failing__a_fifo_is_refused_at_once(void)
{
	char dir[] = "/tmp/hx-kf-fifo-XXXXXX";
	struct hx_known_failing *kf = NULL;
	struct fa_err err = { "" };
	char *path, *want;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	path = fa_xasprintf("%s/kf.txt", dir);
	want = fa_xasprintf("%s: not a regular file", path);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	alarm(20); /* waiting for a writer would hang the run: end it instead */
	CU_ASSERT_EQUAL(hx_known_failing_load(path, &kf, &err), FA_EINVAL);
	alarm(0);
	CU_ASSERT_PTR_NULL(kf);
	CU_ASSERT_STRING_EQUAL(err.msg, want);
	fa_err_clear(&err);
	CU_ASSERT_EQUAL(hx_known_failing_load("/dev/null", &kf, &err), FA_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "/dev/null: not a regular file");
	unlink(path);
	rmdir(dir);
	free(path);
	free(want);
}

void test_known_failing_register(void)
{
	CU_pSuite s = CU_add_suite("known_failing", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "known_failing__reads_ids_comments_and_reasons",
	            known_failing__reads_ids_comments_and_reasons);
	CU_add_test(s, "known_failing__empty_and_comment_only_lists_are_empty",
	            known_failing__empty_and_comment_only_lists_are_empty);
	CU_add_test(s, "known_failing__faults_name_file_line_and_what",
	            known_failing__faults_name_file_line_and_what);
	CU_add_test(s, "known_failing__nul_and_long_lines_are_faults",
	            known_failing__nul_and_long_lines_are_faults);
	CU_add_test(s, "known_failing__load_reads_the_file_or_names_why_not",
	            known_failing__load_reads_the_file_or_names_why_not);
	CU_add_test(s, "known_failing__a_byte_order_mark_at_the_start_is_skipped",
	            known_failing__a_byte_order_mark_at_the_start_is_skipped);
	CU_add_test(s, "known_failing__a_fifo_is_refused_at_once",
	            known_failing__a_fifo_is_refused_at_once);
}
