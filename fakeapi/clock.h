/* clock.h -- the two clocks every timestamp comes from. */
#ifndef FA_CLOCK_H
#define FA_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in µs (arbitrary origin; subtract a start instant). */
int64_t fa_clock_mono_us(void);

/* CLOCK_REALTIME in µs since the Unix epoch. */
int64_t fa_clock_wall_us(void);

/* Format wall time @wall_us as RFC 3339 UTC with µs
 * ("2026-11-30T08:55:09.123456Z") into @buf (at least 32 bytes). */
void fa_clock_rfc3339(int64_t wall_us, char *buf, unsigned len);

/* The same rounded up to a whole second, without a fraction
 * ("2026-11-30T08:55:10Z", as the reset instants of the rate-limit
 * headers and bodies say it), into @buf (at least 21 bytes). */
void fa_clock_rfc3339_s(int64_t wall_us, char *buf, unsigned len);

#endif
