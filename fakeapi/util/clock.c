/* clock.c -- the clocks every timestamp comes from, on one virtual timeline. */
#include "clock.h"

#include <stdio.h>

/* Set once before the threads start, read-only after. */
static double scale = 1.0;
static struct fa_clock_origin origin;
static int64_t t0_mono_us, t0_wall_us; /* origin in µs */

static int64_t us_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

static int64_t read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return us_of(&ts);
}

void fa_clock_set_scale(double s)
{
	scale = s;
	clock_gettime(CLOCK_REALTIME, &origin.real);
	clock_gettime(CLOCK_MONOTONIC, &origin.mono);
	clock_gettime(CLOCK_MONOTONIC_RAW, &origin.mono_raw);
	clock_gettime(CLOCK_BOOTTIME, &origin.boot);
	t0_mono_us = us_of(&origin.mono);
	t0_wall_us = us_of(&origin.real);
}

double fa_clock_scale(void)
{
	return scale;
}

bool fa_clock_scaled(void)
{
	return scale != 1.0;
}

const struct fa_clock_origin *fa_clock_origin(void)
{
	return &origin;
}

/* v = T0 + S × (t − T0); the product in double is exact to well under a
 * µs for a run of years. */
static int64_t virtual_of(int64_t t, int64_t t0)
{
	return scale == 1.0 ? t : t0 + (int64_t)((double)(t - t0) * scale);
}

int64_t fa_clock_mono_us(void)
{
	return virtual_of(read_clock(CLOCK_MONOTONIC), t0_mono_us);
}

int64_t fa_clock_wall_us(void)
{
	return virtual_of(read_clock(CLOCK_REALTIME), t0_wall_us);
}

int64_t fa_clock_real_mono_us(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t fa_clock_real_us(int64_t virtual_us)
{
	double r;

	if (scale == 1.0 || virtual_us <= 0)
		return virtual_us;
	r = (double)virtual_us / scale;
	return (int64_t)r + ((double)(int64_t)r < r);
}

struct timespec fa_clock_real_deadline(int64_t due_us)
{
	int64_t real = read_clock(CLOCK_MONOTONIC);
	int64_t left = due_us - virtual_of(real, t0_mono_us);
	struct timespec ts;

	real += fa_clock_real_us(left > 0 ? left : 0);
	ts.tv_sec = real / 1000000;
	ts.tv_nsec = (long)(real % 1000000) * 1000;
	return ts;
}

void fa_clock_rfc3339(int64_t wall_us, char *buf, unsigned len)
{
	time_t s = (time_t)(wall_us / 1000000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(wall_us % 1000000));
}

void fa_clock_rfc3339_s(int64_t wall_us, char *buf, unsigned len)
{
	time_t t = (time_t)((wall_us + 999999) / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
