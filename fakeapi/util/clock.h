/* clock.h -- the clocks every timestamp comes from, on one virtual timeline. */
#ifndef FA_CLOCK_H
#define FA_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* The largest time scale a run accepts. libfaketime ends a poll or
 * epoll_wait up to 1 ms of real time early (S ms virtual) against
 * wait.retry_after's 50 ms, and above 20 the wave check could rarely
 * judge a full-jitter client (docs/time-scale.md, "Why the scale stops
 * at 20"). */
#define FA_CLOCK_SCALE_MAX 20.0

/* The smallest time scale above 1 a run accepts: below it a 1 s sleep
 * on the scale takes too close to 1 s of real time for the clock check
 * to tell it from an unscaled one with a process start in between
 * (docs/time-scale.md). */
#define FA_CLOCK_SCALE_MIN 2.0

/* The real instants of the timeline's origin T0, on each clock the
 * clients' libfaketime scales (its shared start time). */
struct fa_clock_origin {
	struct timespec real;     /* CLOCK_REALTIME at T0 */
	struct timespec mono;     /* CLOCK_MONOTONIC at T0 */
	struct timespec mono_raw; /* CLOCK_MONOTONIC_RAW at T0 */
	struct timespec boot;     /* CLOCK_BOOTTIME at T0 */
};

/* Put every later reading of fa_clock_mono_us() and fa_clock_wall_us() on
 * virtual time v = T0 + @scale × (t − T0), T0 = now. @scale in
 * [1, FA_CLOCK_SCALE_MAX]; 1 (the default) is real time. Call once, before
 * any other thread reads the clock. */
void fa_clock_set_scale(double scale);

/* The scale fa_clock_set_scale() set; 1 without one. */
double fa_clock_scale(void);

/* True when the clock runs scaled (fa_clock_scale() != 1). */
bool fa_clock_scaled(void);

/* The origin fa_clock_set_scale() took; all zero without a scale. */
const struct fa_clock_origin *fa_clock_origin(void);

/* Virtual CLOCK_MONOTONIC in µs (arbitrary origin; subtract a start
 * instant). Real time when unscaled. */
int64_t fa_clock_mono_us(void);

/* Virtual CLOCK_REALTIME in µs since the Unix epoch. */
int64_t fa_clock_wall_us(void);

/* The real CLOCK_MONOTONIC in µs, for waits that are the harness's own
 * (a client's start, a kill's grace), never for what is graded. */
int64_t fa_clock_real_mono_us(void);

/* The real duration, µs (rounded up), that @virtual_us of virtual time
 * takes; @virtual_us itself when unscaled. */
int64_t fa_clock_real_us(int64_t virtual_us);

/* The CLOCK_MONOTONIC instant, for pthread_cond_timedwait() and
 * clock_nanosleep(TIMER_ABSTIME), at which virtual monotonic time reaches
 * @due_us (a fa_clock_mono_us() value); now when it has passed. */
struct timespec fa_clock_real_deadline(int64_t due_us);

/* Format wall time @wall_us as RFC 3339 UTC with µs
 * ("2026-11-30T08:55:09.123456Z") into @buf (at least 32 bytes). */
void fa_clock_rfc3339(int64_t wall_us, char *buf, unsigned len);

/* The same rounded up to a whole second, without a fraction
 * ("2026-11-30T08:55:10Z", as the reset instants of the rate-limit
 * headers and bodies say it), into @buf (at least 21 bytes). */
void fa_clock_rfc3339_s(int64_t wall_us, char *buf, unsigned len);

#endif
