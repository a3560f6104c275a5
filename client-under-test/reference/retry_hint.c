/* retry_hint.c -- the reference client's own reading of a Retry-After value (RFC 9110 §10.2.3). */
#include "retry_hint.h"

#include <string.h>
#include <time.h>

#define US 1000000LL

static const char *const days[7] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const long_days[7] = { "Sunday",   "Monday", "Tuesday", "Wednesday",
	                                  "Thursday", "Friday", "Saturday" };
static const char *const months[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* What a date's fields came to. */
struct fields {
	int year, month, day, hour, minute, second; /* month 1..12 */
	int year_digits;                            /* 2 (RFC 850) or 4 */
};

/* The index of the word of @names that @s starts with (its length in
 * *@len), or -1. */
static int word(const char *s, const char *const *names, int n, size_t *len)
{
	for (int i = 0; i < n; i++) {
		size_t k = strlen(names[i]);

		if (strncmp(s, names[i], k) == 0) {
			*len = k;
			return i;
		}
	}
	return -1;
}

/*
 * Match @s (exactly @n bytes) against @pattern: 'a' a short day name, 'A'
 * a long one, 'b' a month name, '9' a digit, '_' a digit or a space (the
 * asctime day), 'Y' 'M' 'D' 'h' 'm' 's' 'y' the digits of those fields,
 * any other character itself. Fills @f; false on the first mismatch.
 */
static bool match(const char *s, size_t n, const char *pattern, struct fields *f)
{
	const char *end = s + n;

	memset(f, 0, sizeof(*f));
	for (const char *p = pattern; *p != '\0'; p++) {
		int *field = NULL;
		size_t len;

		if (s >= end)
			return false;
		switch (*p) {
		case 'a':
			if (word(s, days, 7, &len) < 0)
				return false;
			s += len;
			continue;
		case 'A':
			if (word(s, long_days, 7, &len) < 0)
				return false;
			s += len;
			continue;
		case 'b':
			f->month = word(s, months, 12, &len) + 1;
			if (f->month == 0)
				return false;
			s += len;
			continue;
		case 'Y':
			field = &f->year;
			f->year_digits = 4;
			break;
		case 'y':
			field = &f->year;
			f->year_digits = 2;
			break;
		case 'D': field = &f->day; break;
		case 'h': field = &f->hour; break;
		case 'm': field = &f->minute; break;
		case 's': field = &f->second; break;
		case '_':
			if (*s == ' ' && p[1] == 'D') {
				s++;
				continue;
			}
			field = &f->day;
			break;
		default:
			if (*s++ != *p)
				return false;
			continue;
		}
		if (*s < '0' || *s > '9')
			return false;
		*field = *field * 10 + (*s++ - '0');
	}
	return s == end;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* @f is a date that exists, in @year. */
static bool valid(const struct fields *f, int year)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return f->month >= 1 && f->day >= 1 &&
	       f->day <= mdays[f->month - 1] + (f->month == 2 && leap(year)) && f->hour <= 23 &&
	       f->minute <= 59 && f->second <= 60;
}

/* Seconds since the epoch of @f in @year (UTC); timegm() carries a leap
 * second, or a day past the month's end, into what follows. */
static int64_t epoch(const struct fields *f, int year)
{
	struct tm tm = { 0 };

	tm.tm_year = year - 1900;
	tm.tm_mon = f->month - 1;
	tm.tm_mday = f->day;
	tm.tm_hour = f->hour;
	tm.tm_min = f->minute;
	tm.tm_sec = f->second;
	return (int64_t)timegm(&tm);
}

/* An HTTP-date's instant, s since the epoch. */
static bool date_s(const char *s, size_t n, int64_t now_s, int64_t *out)
{
	struct fields f;
	time_t now = (time_t)now_s;
	struct tm tm;
	int64_t limit;
	int year;

	if (match(s, n, "a, DD b YYYY hh:mm:ss GMT", &f) ||
	    match(s, n, "a b _D hh:mm:ss YYYY", &f)) {
		*out = epoch(&f, f.year);
		return valid(&f, f.year);
	}
	if (!match(s, n, "A, DD-b-yy hh:mm:ss GMT", &f))
		return false;
	/* the latest century that does not put it more than 50 years ahead */
	gmtime_r(&now, &tm);
	tm.tm_year += 50;
	limit = (int64_t)timegm(&tm);
	year = (tm.tm_year + 1900 - 50) / 100 * 100 + 100 + f.year;
	while (epoch(&f, year) > limit)
		year -= 100;
	*out = epoch(&f, year);
	return valid(&f, year);
}

bool ref_retry_hint_pause_us(const char *value, int64_t now_wall_us, int64_t *out_us)
{
	const char *s = value, *e;
	int64_t n = 0, pause_us;
	bool digits = true;

	if (value == NULL)
		return false;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == s)
		return false;
	for (const char *p = s; p < e; p++)
		digits = digits && *p >= '0' && *p <= '9';
	if (digits) {
		for (const char *p = s; p < e && n <= REF_RETRY_HINT_MAX_S; p++)
			n = n * 10 + (*p - '0');
		*out_us = (n > REF_RETRY_HINT_MAX_S ? REF_RETRY_HINT_MAX_S : n) * US;
		return true;
	}
	/* a date: its distance from now, within the same bound */
	if (!date_s(s, (size_t)(e - s), now_wall_us / US, &n))
		return false;
	pause_us = n * US - now_wall_us;
	if (pause_us > REF_RETRY_HINT_MAX_S * US)
		pause_us = REF_RETRY_HINT_MAX_S * US;
	if (pause_us < -REF_RETRY_HINT_MAX_S * US)
		pause_us = -REF_RETRY_HINT_MAX_S * US;
	*out_us = pause_us;
	return true;
}
