/* test_retry_after.c -- Retry-After parsing and formatting, form by form. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "clock.h"
#include "retry_after.h"

/* RFC 9110 §5.6.7's example instant: Sun, 06 Nov 1994 08:49:37 GMT. */
#define RFC_EXAMPLE_S 784111777LL
#define US            1000000LL

static int current_year(void)
{
	time_t now = (time_t)(fa_clock_wall_us() / US);
	struct tm tm;

	gmtime_r(&now, &tm);
	return tm.tm_year + 1900;
}

static void form_names_round_trip(void)
{
	static const char *const names[] = {
		"delta-seconds",
		"imf-fixdate",
		"rfc850",
		"asctime",
	};
	enum fa_ra_form f;

	for (int i = FA_RA_DELTA; i <= FA_RA_ASCTIME; i++) {
		CU_ASSERT_STRING_EQUAL(fa_retry_after_form_str((enum fa_ra_form)i), names[i]);
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_form_parse(names[i], &f), FA_OK);
		CU_ASSERT_EQUAL(f, i);
	}
	CU_ASSERT_EQUAL(fa_retry_after_form_parse("IMF-fixdate", &f), FA_EINVAL);
	CU_ASSERT_EQUAL(fa_retry_after_form_parse("", &f), FA_EINVAL);
	CU_ASSERT_EQUAL(fa_retry_after_form_parse(NULL, &f), FA_EINVAL);
}

static void parses_delta_seconds(void)
{
	static const struct {
		const char *in;
		long long want;
	} cases[] = {
		{ "0", 0 },
		{ "120", 120 },
		{ "007", 7 },
		{ "000", 0 },
		{ "0000000000000000000000001", 1 },
		{ "2147483648", FA_RA_MAX_DELTA_S },
	};
	struct fa_retry_after ra;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(cases[i].in, &ra), FA_OK);
		CU_ASSERT_EQUAL(ra.form, FA_RA_DELTA);
		CU_ASSERT_EQUAL(ra.delta_s, cases[i].want);
	}
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, 5 * US + 1),
	                (5 + FA_RA_MAX_DELTA_S) * US + 1);
}

/* RFC 9111 §1.2.2: a delta-seconds too large to represent is taken as
 * 2^31, whatever its length; 2^31 itself is no saturation. */
static void saturates_huge_delta_at_2_31(void)
{
	static const char *const cases[] = {
		"2147483649",
		"9999999999",
		"10000000000",
		"99999999999",
		"99999999999999999999",
		"184467440737095516160000000000000000000000000000000",
		"000000000000000000002147483649",
	};
	struct fa_retry_after ra;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&ra, 0, sizeof(ra));
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(cases[i], &ra), FA_OK);
		CU_ASSERT_EQUAL(ra.form, FA_RA_DELTA);
		CU_ASSERT_EQUAL(ra.delta_s, FA_RA_MAX_DELTA_S);
		CU_ASSERT_TRUE(ra.saturated);
		CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, 7 * US),
		                (7 + FA_RA_MAX_DELTA_S) * US);
	}
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("2147483648", &ra), FA_OK);
	CU_ASSERT_FALSE(ra.saturated);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("120", &ra), FA_OK);
	CU_ASSERT_FALSE(ra.saturated);
	/* a digit string with garbage after it is still no number at all */
	CU_ASSERT_EQUAL(fa_retry_after_parse("99999999999x", &ra), FA_EINVAL);
}

/* retry-after-ms is 1*DIGIT ms like delta-seconds, saturating at 2^31 s. */
static void parses_retry_after_ms(void)
{
	static const struct {
		const char *in;
		long long want;
	} ok[] = {
		{ "0", 0 },
		{ "1500", 1500 },
		{ " 2424\t", 2424 },
		{ "007", 7 },
		{ "2147483648000", FA_RA_MAX_MS },
		{ "2147483648001", FA_RA_MAX_MS },
		{ "99999999999999999999999999", FA_RA_MAX_MS },
	};
	static const char *const bad[] = {
		"", " ", "1.5", "-1", "+1", "1e3", "soon", "12 ms", "0x10",
	};
	int64_t ms = -42;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_ms_parse(ok[i].in, &ms), FA_OK);
		CU_ASSERT_EQUAL(ms, ok[i].want);
	}
	ms = -42;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(fa_retry_after_ms_parse(bad[i], &ms), FA_EINVAL);
	CU_ASSERT_EQUAL(ms, -42); /* untouched on failure */
	CU_ASSERT_EQUAL(fa_retry_after_ms_parse(NULL, &ms), FA_EINVAL);
	CU_ASSERT_EQUAL(fa_retry_after_ms_parse("1", NULL), FA_EINVAL);
}

/* A date more than 2^31 s away counts as 2^31 s away, in either
 * direction, as a delta-seconds that large would; nearer ones are exact. */
static void far_dates_count_as_2_31_seconds_away(void)
{
	const int64_t now = RFC_EXAMPLE_S * US + 250000;
	const int64_t cap = FA_RA_MAX_DELTA_S * US;
	struct fa_retry_after ra;

	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Fri, 31 Dec 9999 23:59:59 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.date_s, 253402300799LL); /* parsed exactly */
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, now), now + cap);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Fri Dec 31 23:59:59 9999", &ra), FA_OK);
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, now), now + cap);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Mon, 01 Jan 0001 00:00:00 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, now), now - cap);
	/* 2^31 s after the RFC example, and one second more */
	ra.form = FA_RA_IMF_FIXDATE;
	ra.date_s = RFC_EXAMPLE_S + FA_RA_MAX_DELTA_S;
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, RFC_EXAMPLE_S * US), ra.date_s * US);
	ra.date_s++;
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, RFC_EXAMPLE_S * US),
	                RFC_EXAMPLE_S * US + cap);
}

static void parses_imf_fixdate_rfc_example(void)
{
	struct fa_retry_after ra;

	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.form, FA_RA_IMF_FIXDATE);
	CU_ASSERT_EQUAL(ra.date_s, RFC_EXAMPLE_S);
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, 123), RFC_EXAMPLE_S * US);
}

static void parses_rfc850_rfc_example(void)
{
	struct fa_retry_after ra;

	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Sunday, 06-Nov-94 08:49:37 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.form, FA_RA_RFC850);
	/* "94" is 1994 until 2094 comes within 50 years (in 2044). */
	if (current_year() < 2044)
		CU_ASSERT_EQUAL(ra.date_s, RFC_EXAMPLE_S);
}

/* RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the past. */
static void rfc850_two_digit_year_window(void)
{
	static const int offsets[][2] = {
		/* years from now: written, meant */
		{ 0, 0 },    { -10, -10 }, { 10, 10 },   { 49, 49 },
		{ 51, -49 }, { 60, -40 },  { -49, -49 }, { 90, -10 },
	};
	int cur = current_year();
	struct fa_retry_after ra;

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		char v[64];
		time_t t;
		struct tm tm;

		snprintf(v, sizeof(v), "Monday, 01-Jan-%02d 00:00:00 GMT",
		         (cur + offsets[i][0]) % 100);
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(v, &ra), FA_OK);
		t = (time_t)ra.date_s;
		gmtime_r(&t, &tm);
		CU_ASSERT_EQUAL(tm.tm_year + 1900, cur + offsets[i][1]);
	}
}

static void parses_asctime_both_day_paddings(void)
{
	static const char *const ok[] = {
		"Sun Nov  6 08:49:37 1994",
		"Sun Nov 06 08:49:37 1994",
	};
	struct fa_retry_after ra;

	for (size_t i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(ok[i], &ra), FA_OK);
		CU_ASSERT_EQUAL(ra.form, FA_RA_ASCTIME);
		CU_ASSERT_EQUAL(ra.date_s, RFC_EXAMPLE_S);
	}
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Wed Nov 16 08:49:37 1994", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.date_s, RFC_EXAMPLE_S + 10 * 86400);
}

static void accepts_wrong_weekday_leap_second_and_leap_day(void)
{
	struct fa_retry_after ra;

	/* RFC 9110 §5.6.7: recipients should not reject a wrong weekday. */
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Fri, 06 Nov 1994 08:49:37 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.date_s, RFC_EXAMPLE_S);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Sat, 31 Dec 2016 23:59:60 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.date_s, 1483228800LL); /* 2017-01-01T00:00:00Z */
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse("Tue, 29 Feb 2000 12:00:00 GMT", &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.date_s, 951825600LL);
	CU_ASSERT_EQUAL(fa_retry_after_parse("Tue Feb 29 12:00:00 2000", &ra), FA_OK);
}

static void rejects_garbage(void)
{
	static const char *const bad[] = {
		"",
		" ",
		"\t \t",
		"-1",
		"+5",
		"1.5",
		"10s",
		"1 0",
		"0x10",
		"abc",
		"１２",
		"12\n",
		"120,",
		"\r120",
		"Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 06 Nov 1994 08:49:37 gmt",
		"sun, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 nov 1994 08:49:37 GMT",
		"Sun, 06 November 1994 08:49:37 GMT",
		"Sunday, 06 Nov 1994 08:49:37 GMT",
		"Sun, 6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 94 08:49:37 GMT",
		"Sun,  06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMT x",
		"Sun, 06 Nov 1994 08:49:37",
		"Sun, 06 Nov 1994 8:49:37 GMT",
		"Sun, 06 Nov 1994 08:49 GMT",
		"Sun, 31 Feb 1994 08:49:37 GMT",
		"Sun, 29 Feb 1900 08:49:37 GMT",
		"Sun, 29 Feb 2001 08:49:37 GMT",
		"Sun, 00 Nov 1994 08:49:37 GMT",
		"Sun, 31 Nov 1994 08:49:37 GMT",
		"Sun, 32 Dec 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT",
		"Sun, 06 Nov 1994 08:60:37 GMT",
		"Sun, 06 Nov 1994 08:49:61 GMT",
		"Xyz, 06 Nov 1994 08:49:37 GMT",
		"Sun 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-1994 08:49:37 GMT",
		"Sunday, 06-nov-94 08:49:37 GMT",
		"Sun, 06-Nov-94 08:49:37 GMT",
		"Sunday, 6-Nov-94 08:49:37 GMT",
		"Sunday, 31-Apr-94 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 UTC",
		"Sun Nov 6 08:49:37 1994",
		"Sun Nov   6 08:49:37 1994",
		"Sun Nov  6 08:49:37 94",
		"Sun Nov  6 08:49:37 1994 GMT",
		"Sun Nov  0 08:49:37 1994",
		"Sun Feb 30 08:49:37 1994",
		"Sunday Nov  6 08:49:37 1994",
	};
	struct fa_retry_after ra = { .form = FA_RA_ASCTIME, .date_s = 99 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum fa_rc rc = fa_retry_after_parse(bad[i], &ra);

		if (rc != FA_EINVAL)
			fprintf(stderr, "\naccepted or misjudged: \"%s\" (%s)\n", bad[i],
			        fa_rc_str(rc));
		CU_ASSERT_EQUAL(rc, FA_EINVAL);
	}
	CU_ASSERT_EQUAL(ra.form, FA_RA_ASCTIME);
	CU_ASSERT_EQUAL(ra.date_s, 99);
	CU_ASSERT_EQUAL(fa_retry_after_parse(NULL, &ra), FA_EINVAL);
}

static void ignores_surrounding_whitespace(void)
{
	static const char *const ok[] = {
		" \t120\t ",
		"120 ",
		"\t120",
		"  Sun, 06 Nov 1994 08:49:37 GMT\t",
		"\tSunday, 06-Nov-94 08:49:37 GMT ",
		" Sun Nov  6 08:49:37 1994 ",
	};
	struct fa_retry_after ra;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CU_ASSERT_EQUAL(fa_retry_after_parse(ok[i], &ra), FA_OK);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(ok[0], &ra), FA_OK);
	CU_ASSERT_EQUAL(ra.delta_s, 120);
}

static void formats_each_form_exactly(void)
{
	static const char *const want[] = {
		"0",
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
	};
	char buf[FA_RA_BUFSZ];
	int64_t until = 0;

	for (int f = FA_RA_DELTA; f <= FA_RA_ASCTIME; f++) {
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_format((enum fa_ra_form)f, 0,
		                                            RFC_EXAMPLE_S * US, buf, sizeof(buf),
		                                            &until),
		                      FA_OK);
		CU_ASSERT_STRING_EQUAL(buf, want[f]);
		CU_ASSERT_EQUAL(until, RFC_EXAMPLE_S * US);
	}
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_format(FA_RA_DELTA, 120, 7, buf, sizeof(buf), &until),
	                      FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "120");
	CU_ASSERT_EQUAL(until, 120 * US + 7);
	CU_ASSERT_EQUAL_FATAL(
	        fa_retry_after_format(FA_RA_DELTA, FA_RA_MAX_DELTA_S, 0, buf, sizeof(buf), NULL),
	        FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "2147483648");
}

/* The date is ceil(now) + N so the pause a recipient computes never shrinks. */
static void dates_start_from_ceil_of_now(void)
{
	char buf[FA_RA_BUFSZ];
	int64_t until = 0;
	struct fa_retry_after ra;

	CU_ASSERT_EQUAL_FATAL(fa_retry_after_format(FA_RA_IMF_FIXDATE, 10,
	                                            (RFC_EXAMPLE_S - 1) * US + 500000, buf,
	                                            sizeof(buf), &until),
	                      FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "Sun, 06 Nov 1994 08:49:47 GMT");
	CU_ASSERT_EQUAL(until, (RFC_EXAMPLE_S + 10) * US);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_format(FA_RA_IMF_FIXDATE, 10,
	                                            (RFC_EXAMPLE_S - 1) * US + 1, buf, sizeof(buf),
	                                            &until),
	                      FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "Sun, 06 Nov 1994 08:49:47 GMT");
	/* On a whole second nothing is added. */
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_format(FA_RA_ASCTIME, 10, RFC_EXAMPLE_S * US, buf,
	                                            sizeof(buf), &until),
	                      FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "Sun Nov  6 08:49:47 1994");
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(buf, &ra), FA_OK);
	CU_ASSERT(fa_retry_after_until_wall_us(&ra, RFC_EXAMPLE_S * US) >=
	          RFC_EXAMPLE_S * US + 10 * US);
}

static void formats_past_dates(void)
{
	char buf[FA_RA_BUFSZ];
	int64_t now = fa_clock_wall_us(), until = 0;
	struct fa_retry_after ra;

	CU_ASSERT_EQUAL_FATAL(
	        fa_retry_after_format(FA_RA_IMF_FIXDATE, -3600, now, buf, sizeof(buf), &until),
	        FA_OK);
	CU_ASSERT(until < now);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(buf, &ra), FA_OK);
	CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, now), until);
	CU_ASSERT_EQUAL_FATAL(fa_retry_after_format(FA_RA_ASCTIME, -1, RFC_EXAMPLE_S * US, buf,
	                                            sizeof(buf), NULL),
	                      FA_OK);
	CU_ASSERT_STRING_EQUAL(buf, "Sun Nov  6 08:49:36 1994");
}

static void round_trips_every_form(void)
{
	static const int64_t secs[] = { 0, 1, 59, 3600, 86400 * 30, 86400LL * 365 * 10 };
	int64_t now = fa_clock_wall_us();
	char buf[FA_RA_BUFSZ];

	for (int f = FA_RA_DELTA; f <= FA_RA_ASCTIME; f++) {
		for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
			for (int sign = 1; sign >= -1; sign -= 2) {
				struct fa_retry_after ra;
				int64_t until = 0;

				if (f == FA_RA_DELTA && sign < 0)
					continue;
				CU_ASSERT_EQUAL_FATAL(
				        fa_retry_after_format((enum fa_ra_form)f, sign * secs[i],
				                              now, buf, sizeof(buf), &until),
				        FA_OK);
				CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(buf, &ra), FA_OK);
				CU_ASSERT_EQUAL(ra.form, f);
				CU_ASSERT_EQUAL(fa_retry_after_until_wall_us(&ra, now), until);
			}
		}
	}
}

/* Our own name tables agree with strftime() in the C locale, day by day. */
static void imf_names_match_c_locale_over_years(void)
{
	char buf[FA_RA_BUFSZ], ref[FA_RA_BUFSZ];
	struct fa_retry_after ra;

	for (int64_t t = 0; t < 86400LL * 366 * 4; t += 86400 + 3607) {
		time_t tt = (time_t)t;
		struct tm tm;

		gmtime_r(&tt, &tm);
		strftime(ref, sizeof(ref), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		CU_ASSERT_EQUAL_FATAL(
		        fa_retry_after_format(FA_RA_IMF_FIXDATE, t, 0, buf, sizeof(buf), NULL),
		        FA_OK);
		CU_ASSERT_STRING_EQUAL(buf, ref);
		CU_ASSERT_EQUAL_FATAL(fa_retry_after_parse(buf, &ra), FA_OK);
		CU_ASSERT_EQUAL(ra.date_s, t);
	}
}

static void format_rejects_bad_arguments(void)
{
	char buf[FA_RA_BUFSZ], big[256];
	int64_t until = 77;

	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_DELTA, 5, 0, buf, FA_RA_BUFSZ - 1, &until),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_IMF_FIXDATE, 5, 0, buf, 0, &until), FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_DELTA, -1, 0, buf, sizeof(buf), &until),
	                FA_ERANGE);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_DELTA, FA_RA_MAX_DELTA_S + 1, 0, buf,
	                                      sizeof(buf), &until),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_RFC850, INT64_MAX, 0, big, sizeof(big), &until),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_ASCTIME, INT64_MIN, fa_clock_wall_us(), big,
	                                      sizeof(big), &until),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_IMF_FIXDATE, 86400LL * 366 * 9000, 0, big,
	                                      sizeof(big), &until),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format((enum fa_ra_form)9, 5, 0, buf, sizeof(buf), &until),
	                FA_EINVAL);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_DELTA, 5, 0, NULL, sizeof(buf), &until),
	                FA_EINVAL);
	CU_ASSERT_EQUAL(until, 77); /* untouched on failure */
	CU_ASSERT_STRING_EQUAL(fa_retry_after_form_str((enum fa_ra_form)9), "unknown");
}

static void retry_after__rfc850_refuses_dates_a_reader_would_put_in_another_century(void)
{
	char buf[FA_RA_BUFSZ];
	int64_t now = 1764493200LL * 1000000; /* 2025-11-30 */

	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_RFC850, FA_RA_RFC850_SPAN_S, now, buf,
	                                      sizeof(buf), NULL),
	                FA_OK);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_RFC850, -FA_RA_RFC850_SPAN_S, now, buf,
	                                      sizeof(buf), NULL),
	                FA_OK);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_RFC850, FA_RA_RFC850_SPAN_S + 1, now, buf,
	                                      sizeof(buf), NULL),
	                FA_ERANGE);
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_RFC850, -FA_RA_RFC850_SPAN_S - 1, now, buf,
	                                      sizeof(buf), NULL),
	                FA_ERANGE);
	/* the other date forms carry four digits and go on */
	CU_ASSERT_EQUAL(fa_retry_after_format(FA_RA_IMF_FIXDATE, FA_RA_RFC850_SPAN_S + 1, now, buf,
	                                      sizeof(buf), NULL),
	                FA_OK);
}

void test_retry_after_register(void)
{
	CU_pSuite s = CU_add_suite("retry_after", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "retry_after__rfc850_refuses_dates_a_reader_would_put_in_another_century",
	            retry_after__rfc850_refuses_dates_a_reader_would_put_in_another_century);
	CU_add_test(s, "retry_after__form_names_round_trip", form_names_round_trip);
	CU_add_test(s, "retry_after__parses_delta_seconds", parses_delta_seconds);
	CU_add_test(s, "retry_after__parses_retry_after_ms", parses_retry_after_ms);
	CU_add_test(s, "retry_after__far_dates_count_as_2_31_seconds_away",
	            far_dates_count_as_2_31_seconds_away);
	CU_add_test(s, "retry_after__saturates_huge_delta_at_2_31", saturates_huge_delta_at_2_31);
	CU_add_test(s, "retry_after__parses_imf_fixdate_rfc_example",
	            parses_imf_fixdate_rfc_example);
	CU_add_test(s, "retry_after__parses_rfc850_rfc_example", parses_rfc850_rfc_example);
	CU_add_test(s, "retry_after__rfc850_two_digit_year_window", rfc850_two_digit_year_window);
	CU_add_test(s, "retry_after__parses_asctime_both_day_paddings",
	            parses_asctime_both_day_paddings);
	CU_add_test(s, "retry_after__accepts_wrong_weekday_leap_second_and_leap_day",
	            accepts_wrong_weekday_leap_second_and_leap_day);
	CU_add_test(s, "retry_after__rejects_garbage", rejects_garbage);
	CU_add_test(s, "retry_after__ignores_surrounding_whitespace",
	            ignores_surrounding_whitespace);
	CU_add_test(s, "retry_after__formats_each_form_exactly", formats_each_form_exactly);
	CU_add_test(s, "retry_after__dates_start_from_ceil_of_now", dates_start_from_ceil_of_now);
	CU_add_test(s, "retry_after__formats_past_dates", formats_past_dates);
	CU_add_test(s, "retry_after__round_trips_every_form", round_trips_every_form);
	CU_add_test(s, "retry_after__imf_names_match_c_locale_over_years",
	            imf_names_match_c_locale_over_years);
	CU_add_test(s, "retry_after__format_rejects_bad_arguments", format_rejects_bad_arguments);
}
