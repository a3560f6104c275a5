/* clock.c -- the two clocks every timestamp comes from. */
#include "clock.h"

#include <stdio.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t fa_clock_mono_us(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t fa_clock_wall_us(void)
{
	return read_clock(CLOCK_REALTIME);
}

void fa_clock_rfc3339(int64_t wall_us, char *buf, unsigned len)
{
	time_t s = (time_t)(wall_us / 1000000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(wall_us % 1000000));
}

void fa_clock_rfc3339_s(int64_t wall_us, char *buf, unsigned len)
{
	time_t t = (time_t)((wall_us + 999999) / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
