/* retry_after.c -- the one parser and formatter of Retry-After (RFC 9110 §10.2.3). */
#include "retry_after.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#define US_PER_S 1000000LL

/* Range of instants a date form can name with four year digits:
 * 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59Z. */
#define MIN_DATE_S (-62167219200LL)
#define MAX_DATE_S 253402300799LL

/* Our own C-locale names, so output never depends on setlocale(). */
static const char *const wday_short[7] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};
static const char *const wday_long[7] = {
	"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
};
static const char *const month_name[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};
static const char *const form_name[] = {
	[FA_RA_DELTA] = "delta-seconds",
	[FA_RA_IMF_FIXDATE] = "imf-fixdate",
	[FA_RA_RFC850] = "rfc850",
	[FA_RA_ASCTIME] = "asctime",
};
#define NFORMS (sizeof(form_name) / sizeof(form_name[0]))

/* A cursor over the trimmed value; it is not NUL-terminated at end. */
struct cur {
	const char *p;   /* next unread character */
	const char *end; /* one past the last character of the value */
};

/* A broken-down UTC instant as the grammar spells it (month 0..11). */
struct ymd {
	int year, mon, day, hour, min, sec;
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Consume the literal @s if the cursor starts with it. */
static int lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* Consume exactly @n digits and return their value, or -1. */
static int num(struct cur *c, int n)
{
	int v = 0;

	if (c->end - c->p < n)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!is_digit(c->p[i]))
			return -1;
		v = v * 10 + (c->p[i] - '0');
	}
	c->p += n;
	return v;
}

/* Consume one name of @tab (case-sensitive) and return its index, or -1.
 * No name in one table is a prefix of another in it. */
static int match_name(struct cur *c, const char *const *tab, int n)
{
	for (int i = 0; i < n; i++)
		if (lit(c, tab[i]))
			return i;
	return -1;
}

/* @v (a field just read, or -1) if the literal @sep follows it, else -1.
 * Once a field fails the rest are read in vain, which is harmless. */
static int then(struct cur *c, int v, const char *sep)
{
	return v >= 0 && lit(c, sep) ? v : -1;
}

/* "HH:MM:SS"; second 60 is a leap second (RFC 9110 §5.6.7). */
static int hms(struct cur *c, struct ymd *d)
{
	d->hour = num(c, 2);
	if (d->hour < 0 || d->hour > 23 || !lit(c, ":"))
		return 0;
	d->min = num(c, 2);
	if (d->min < 0 || d->min > 59 || !lit(c, ":"))
		return 0;
	d->sec = num(c, 2);
	return d->sec >= 0 && d->sec <= 60;
}

static int days_in_month(int year, int mon)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return mon == 1 ? 28 + leap : mdays[mon];
}

/* Seconds since the epoch; timegm() carries a leap second into the next
 * minute, which is the instant a recipient can act on anyway. */
static int64_t epoch_of(const struct ymd *d)
{
	struct tm tm = { 0 };

	tm.tm_year = d->year - 1900;
	tm.tm_mon = d->mon;
	tm.tm_mday = d->day;
	tm.tm_hour = d->hour;
	tm.tm_min = d->min;
	tm.tm_sec = d->sec;
	return (int64_t)timegm(&tm);
}

/* RFC 9110 §5.6.7: a two-digit year that would put the date more than 50
 * years after now belongs to the previous century. Of the candidates
 * (next, this, previous century) take the latest one not past that limit. */
static int rfc850_year(int yy, const struct ymd *d)
{
	time_t now = (time_t)(fa_clock_wall_us() / US_PER_S);
	struct tm tm;
	struct ymd cand = *d;
	int64_t limit;
	int base;

	gmtime_r(&now, &tm);
	base = tm.tm_year + 1900 - (tm.tm_year + 1900) % 100 + yy;
	tm.tm_year += 50;
	limit = (int64_t)timegm(&tm);
	for (cand.year = base + 100; cand.year > base - 100; cand.year -= 100)
		if (epoch_of(&cand) <= limit)
			break;
	return cand.year;
}

/* An HTTP-date in any of the three forms, told apart by the day name and
 * the character after it. */
static enum fa_rc parse_date(struct cur *c, struct fa_retry_after *ra)
{
	struct ymd d = { 0 };
	struct cur probe = *c; /* "Sun" begins "Sunday": try the long name first */
	int yy;

	if (match_name(&probe, wday_long, 7) >= 0 && lit(&probe, ", ")) {
		/* Sunday, 06-Nov-94 08:49:37 GMT */
		*c = probe;
		ra->form = FA_RA_RFC850;
		d.day = then(c, num(c, 2), "-");
		d.mon = then(c, match_name(c, month_name, 12), "-");
		yy = then(c, num(c, 2), " ");
		if (d.day < 0 || d.mon < 0 || yy < 0 || !hms(c, &d) || !lit(c, " GMT"))
			return FA_EINVAL;
		d.year = rfc850_year(yy, &d);
	} else if (match_name(c, wday_short, 7) < 0) {
		return FA_EINVAL;
	} else if (lit(c, ", ")) {
		/* Sun, 06 Nov 1994 08:49:37 GMT */
		ra->form = FA_RA_IMF_FIXDATE;
		d.day = then(c, num(c, 2), " ");
		d.mon = then(c, match_name(c, month_name, 12), " ");
		d.year = then(c, num(c, 4), " ");
		if (d.day < 0 || d.mon < 0 || d.year < 0 || !hms(c, &d) || !lit(c, " GMT"))
			return FA_EINVAL;
	} else if (lit(c, " ")) {
		/* Sun Nov  6 08:49:37 1994: the day is 2DIGIT or SP DIGIT */
		ra->form = FA_RA_ASCTIME;
		d.mon = then(c, match_name(c, month_name, 12), " ");
		d.day = then(c, lit(c, " ") ? num(c, 1) : num(c, 2), " ");
		if (d.mon < 0 || d.day < 0 || !hms(c, &d) || !lit(c, " "))
			return FA_EINVAL;
		d.year = num(c, 4);
	} else {
		return FA_EINVAL;
	}
	if (c->p != c->end || d.year < 0 || d.day < 1 || d.day > days_in_month(d.year, d.mon))
		return FA_EINVAL;
	ra->delta_s = 0;
	ra->date_s = epoch_of(&d);
	return FA_OK;
}

/* 1*DIGIT into *@v, saturated at @cap (*@over says so); every character
 * is checked first, so "99...9x" is a syntax error. Reading stops at the
 * first digit that takes the value past the cap, so no digit count
 * overflows. */
static enum fa_rc parse_digits(const struct cur *c, int64_t cap, int64_t *v, bool *over)
{
	int64_t n = 0;
	bool past = false;

	for (const char *q = c->p; q < c->end; q++)
		if (!is_digit(*q))
			return FA_EINVAL;
	for (const char *p = c->p; p < c->end && !past; p++) {
		n = n * 10 + (*p - '0');
		past = n > cap;
	}
	*v = past ? cap : n;
	*over = past;
	return FA_OK;
}

static enum fa_rc parse_delta(const struct cur *c, struct fa_retry_after *ra)
{
	enum fa_rc rc = parse_digits(c, FA_RA_MAX_DELTA_S, &ra->delta_s, &ra->saturated);

	ra->form = FA_RA_DELTA;
	ra->date_s = 0;
	return rc;
}

/* @value without the optional whitespace around it (spaces and tabs);
 * false when nothing is left. */
static bool trim(const char *value, struct cur *c)
{
	c->p = value;
	c->end = value + strlen(value);
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	while (c->end > c->p && (c->end[-1] == ' ' || c->end[-1] == '\t'))
		c->end--;
	return c->p < c->end;
}

const char *fa_retry_after_form_str(enum fa_ra_form form)
{
	if ((unsigned)form >= NFORMS)
		return "unknown";
	return form_name[form];
}

enum fa_rc fa_retry_after_form_parse(const char *name, enum fa_ra_form *out)
{
	if (name == NULL || out == NULL)
		return FA_EINVAL;
	for (size_t i = 0; i < NFORMS; i++) {
		if (strcmp(name, form_name[i]) == 0) {
			*out = (enum fa_ra_form)i;
			return FA_OK;
		}
	}
	return FA_EINVAL;
}

enum fa_rc fa_retry_after_parse(const char *value, struct fa_retry_after *out)
{
	struct fa_retry_after ra = { 0 };
	struct cur c;
	enum fa_rc rc = FA_EINVAL;

	if (value == NULL || out == NULL || !trim(value, &c))
		goto out;
	rc = is_digit(*c.p) ? parse_delta(&c, &ra) : parse_date(&c, &ra);
	if (rc == FA_OK)
		*out = ra;
out:
	return rc;
}

enum fa_rc fa_retry_after_ms_parse(const char *value, int64_t *ms)
{
	struct cur c;
	int64_t v;
	bool over;

	if (value == NULL || ms == NULL || !trim(value, &c) ||
	    parse_digits(&c, FA_RA_MAX_MS, &v, &over) != FA_OK)
		return FA_EINVAL;
	*ms = v;
	return FA_OK;
}

int64_t fa_retry_after_until_wall_us(const struct fa_retry_after *ra, int64_t now_wall_us)
{
	const int64_t cap = FA_RA_MAX_DELTA_S * US_PER_S;
	int64_t d;

	if (ra == NULL)
		return now_wall_us;
	if (ra->form == FA_RA_DELTA)
		return now_wall_us + ra->delta_s * US_PER_S;
	/* a four-digit year keeps date_s * 10^6 within ±2.6e17 */
	d = ra->date_s * US_PER_S - now_wall_us;
	if (d > cap)
		d = cap;
	else if (d < -cap)
		d = -cap;
	return now_wall_us + d;
}

enum fa_rc fa_retry_after_format(enum fa_ra_form form, int64_t seconds, int64_t now_wall_us,
                                 char *buf, size_t len, int64_t *until_wall_us)
{
	enum fa_rc rc = FA_EINVAL;
	int64_t ceil_s, date_s, until = 0;
	struct tm tm;
	time_t t;

	if (buf == NULL || (unsigned)form >= NFORMS)
		goto out;
	rc = FA_ERANGE;
	if (len < FA_RA_BUFSZ)
		goto out;
	if (form == FA_RA_DELTA) {
		if (seconds < 0 || seconds > FA_RA_MAX_DELTA_S)
			goto out;
		snprintf(buf, len, "%lld", (long long)seconds);
		until = now_wall_us + seconds * US_PER_S;
		rc = FA_OK;
		goto out;
	}
	/* Division truncates toward zero: that is already the ceiling for a
	 * negative now, and needs one more second for a positive fraction. */
	ceil_s = now_wall_us / US_PER_S + (now_wall_us % US_PER_S > 0);
	if (seconds < MIN_DATE_S - MAX_DATE_S || seconds > MAX_DATE_S - MIN_DATE_S)
		goto out;
	date_s = ceil_s + seconds;
	if (date_s < MIN_DATE_S || date_s > MAX_DATE_S)
		goto out;
	t = (time_t)date_s;
	if (gmtime_r(&t, &tm) == NULL)
		goto out;
	/* a two-digit year is read within 50 years of the reader's now (RFC
	 * 9110 §5.6.7): further away, the value would name another century */
	if (form == FA_RA_RFC850 &&
	    (seconds > FA_RA_RFC850_SPAN_S || seconds < -FA_RA_RFC850_SPAN_S))
		goto out;
	if (form == FA_RA_IMF_FIXDATE)
		snprintf(buf, len, "%s, %02d %s %04d %02d:%02d:%02d GMT", wday_short[tm.tm_wday],
		         tm.tm_mday, month_name[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
		         tm.tm_min, tm.tm_sec);
	else if (form == FA_RA_RFC850)
		snprintf(buf, len, "%s, %02d-%s-%02d %02d:%02d:%02d GMT", wday_long[tm.tm_wday],
		         tm.tm_mday, month_name[tm.tm_mon], (tm.tm_year + 1900) % 100, tm.tm_hour,
		         tm.tm_min, tm.tm_sec);
	else
		snprintf(buf, len, "%s %s %2d %02d:%02d:%02d %04d", wday_short[tm.tm_wday],
		         month_name[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		         tm.tm_year + 1900);
	until = date_s * US_PER_S;
	rc = FA_OK;
out:
	if (rc != FA_OK && buf != NULL && len > 0)
		buf[0] = '\0';
	if (rc == FA_OK && until_wall_us != NULL)
		*until_wall_us = until;
	return rc;
}
