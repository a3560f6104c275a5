/* test_livefeed.c -- the live lines' queue: order, drops, drain and a stuck reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "livefeed.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fill the pipe whose write end is @w until a write would block; returns
 * the bytes put in. */
static size_t fill_pipe(int w)
{
	static const char junk[4096];
	size_t total = 0;
	ssize_t n;
	int fl = fcntl(w, F_GETFL);

	fcntl(w, F_SETFL, fl | O_NONBLOCK);
	while ((n = write(w, junk, sizeof(junk))) > 0)
		total += (size_t)n;
	CU_ASSERT(n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
	fcntl(w, F_SETFL, fl);
	return total;
}

/* Read exactly @n bytes from @r into a new string. */
static char *read_n(int r, size_t n)
{
	char *s = fa_xmalloc(n + 1);
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(r, s + got, n - got);

		CU_ASSERT_FATAL(k > 0);
		got += (size_t)k;
	}
	s[n] = '\0';
	return s;
}

static void livefeed__keeps_order_and_whole_lines(void)
{
	FILE *tmp = tmpfile();
	struct fa_livefeed *f;
	char line[32], *got, *want = NULL;
	size_t want_len = 0, want_cap = 0;
	long n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	f = fa_livefeed_new(fileno(tmp), 0, 0, "unit-tests", "test");
	for (int i = 0; i < 5000; i++) {
		int k = snprintf(line, sizeof(line), "line %d", i);

		fa_livefeed_put(f, line, (size_t)k);
		want = fa_xgrow(want, &want_cap, want_len + (size_t)k + 2, 1024);
		memcpy(want + want_len, line, (size_t)k);
		want_len += (size_t)k;
		want[want_len++] = '\n';
		want[want_len] = '\0';
	}
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 5000), 0);
	CU_ASSERT_EQUAL(fa_livefeed_not_shown(f), 0);
	fa_livefeed_put(f, "late", 4); /* after close: ignored */
	fa_livefeed_free(f);
	n = lseek(fileno(tmp), 0, SEEK_END);
	CU_ASSERT_EQUAL_FATAL(n, (long)want_len);
	lseek(fileno(tmp), 0, SEEK_SET);
	got = read_n(fileno(tmp), (size_t)n);
	CU_ASSERT_STRING_EQUAL(got, want);
	free(got);
	free(want);
	fclose(tmp);
}

static void livefeed__drops_past_the_bound_and_stuck_close_returns(void)
{
	int p[2];
	struct fa_livefeed *f;
	long long t0;

	CU_ASSERT_FATAL(pipe(p) == 0);
	fill_pipe(p[1]); /* nobody reads: the writer's first writev waits */
	f = fa_livefeed_new(p[1], 4, 0, "unit-tests", "test");
	/* each put returns at once, the queue full or not */
	t0 = now_ms();
	for (int i = 0; i < 10; i++)
		fa_livefeed_put(f, "0123456789", 10);
	CU_ASSERT(now_ms() - t0 < 1000);
	/* 4 queued (the first being written), 6 found the queue full */
	CU_ASSERT_EQUAL(fa_livefeed_not_shown(f), 6);
	/* a reader that never reads: the close gives up at its deadline */
	t0 = now_ms();
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 200), 10);
	CU_ASSERT(now_ms() - t0 >= 150);
	CU_ASSERT(now_ms() - t0 < 2000);
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 200), 10); /* again: at once, same */
	fa_livefeed_free(f);
	close(p[0]);
	close(p[1]);
}

static void livefeed__bytes_bound_drops_too(void)
{
	int p[2];
	struct fa_livefeed *f;

	CU_ASSERT_FATAL(pipe(p) == 0);
	fill_pipe(p[1]);
	/* 25 bytes: two 11-byte lines fit, the third does not */
	f = fa_livefeed_new(p[1], 0, 25, "unit-tests", "test");
	for (int i = 0; i < 3; i++)
		fa_livefeed_put(f, "0123456789", 10);
	CU_ASSERT_EQUAL(fa_livefeed_not_shown(f), 1);
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 100), 3);
	fa_livefeed_free(f);
	close(p[0]);
	close(p[1]);
}

static void livefeed__close_drains_what_is_queued(void)
{
	int p[2];
	struct fa_livefeed *f;
	size_t junk;
	char *got;

	CU_ASSERT_FATAL(pipe(p) == 0);
	junk = fill_pipe(p[1]);
	f = fa_livefeed_new(p[1], 0, 0, "unit-tests", "test");
	fa_livefeed_put(f, "one", 3);
	fa_livefeed_put(f, "two", 3);
	fa_livefeed_put(f, "three", 5);
	/* the reader comes back: the writer goes on where it waited */
	free(read_n(p[0], junk));
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 5000), 0);
	fa_livefeed_free(f);
	got = read_n(p[0], 14);
	CU_ASSERT_STRING_EQUAL(got, "one\ntwo\nthree\n");
	free(got);
	close(p[0]);
	close(p[1]);
}

static void livefeed__reader_gone_counts_lines_and_survives(void)
{
	int p[2];
	struct fa_livefeed *f;

	CU_ASSERT_FATAL(pipe(p) == 0);
	close(p[0]); /* EPIPE; SIGPIPE is blocked in the writer */
	f = fa_livefeed_new(p[1], 0, 0, "unit-tests", "test");
	for (int i = 0; i < 3; i++)
		fa_livefeed_put(f, "x", 1);
	CU_ASSERT_EQUAL(fa_livefeed_close(f, 5000), 3);
	fa_livefeed_free(f);
	close(p[1]);
}

void test_livefeed_register(void)
{
	CU_pSuite s = CU_add_suite("livefeed", NULL, NULL);

	CU_add_test(s, "livefeed__keeps_order_and_whole_lines",
	            livefeed__keeps_order_and_whole_lines);
	CU_add_test(s, "livefeed__drops_past_the_bound_and_stuck_close_returns",
	            livefeed__drops_past_the_bound_and_stuck_close_returns);
	CU_add_test(s, "livefeed__bytes_bound_drops_too", livefeed__bytes_bound_drops_too);
	CU_add_test(s, "livefeed__close_drains_what_is_queued",
	            livefeed__close_drains_what_is_queued);
	CU_add_test(s, "livefeed__reader_gone_counts_lines_and_survives",
	            livefeed__reader_gone_counts_lines_and_survives);
}
