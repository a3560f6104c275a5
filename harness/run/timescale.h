/* timescale.h -- a run on a scaled clock: libfaketime for the clients, and the checks that they
 * follow it. */
#ifndef HX_TIMESCALE_H
#define HX_TIMESCALE_H

#include <stdint.h>

#include "rc.h"

/* Slack of a clock reading against the harness's window, µs: the
 * wait.retry_after tolerance, the most a client clock may run ahead
 * before an HTTP-date retry could come early (docs/time-scale.md). */
#define HX_TIMESCALE_SLACK_US 50000

/* Real time a client's attempt may take, at the tail under load, from
 * "it is on its way" (a retry sent as the pausing answer went out, an
 * attempt crossing a cancel) to the provider's arrival stamp, µs. A scale
 * multiplies it. Twice the typical measured tail (make bench, the wake-up
 * line: p99.9 1.0-2.4 ms, 7.7 ms in a bad run), and no more: the window it
 * excuses at 20 must stay under the 200 ms a scenario leaves before the
 * next task starts (docs/time-scale.md). */
#define HX_TIMESCALE_LATE_US 5000

/* Real spread of returns that a client means to send at one instant
 * (threads or processes woken together, their requests' own work), at
 * the tail under load, µs: what a scale can spread a wave by. Five times
 * the measured spread (8 threads 3.0 ms, curl's 8 processes 3.9 ms). */
#define HX_TIMESCALE_SPREAD_US 20000

/* Real time a client may need past its task timeout to end on its own
 * under load, µs: its process's start and exit, a restart's, libfaketime's
 * timers waking late. A scale multiplies it, so under --time-scale the
 * harness stops a task that long (scaled) after the timeout it told the
 * client (which is unchanged): a loaded machine must not turn a client's
 * own timely stop into "hung" (docs/time-scale.md). */
#define HX_TIMESCALE_EXIT_US 500000

/* What a time scale @scale adds, in virtual µs, to a tolerance for @real_us
 * of real delay: (scale − 1) × @real_us, 0 at scale 1, so a check keeps its
 * documented rule unscaled and the real delay a scale multiplies never
 * turns into a verdict. */
int64_t hx_timescale_margin_us(double scale, int64_t real_us);

/* The virtual pause between the hello and the clock probe, µs. */
#define HX_TIMESCALE_PROBE_US 2000000

/*
 * Put the run on virtual time at @scale (1 < @scale <= FA_CLOCK_SCALE_MAX):
 * set the provider's clock (fa_clock_set_scale), find libfaketime
 * (FAKEAPI_LIBFAKETIME, else Debian's libfaketimeMT.so.1), publish the
 * timeline's origin as libfaketime's shared start time so that every
 * client process, and everything it starts, reads
 * v = T0 + scale × (t − T0) as the provider does, and check that on a
 * probe (`sh -c 'date; sleep 1; date'`). Call once, before any thread and
 * any client starts. FA_EIO with the reason in @err when libfaketime is
 * missing or does not follow.
 */
enum fa_rc hx_timescale_start(double scale, struct fa_err *err);

/* Remove the shared start (at exit; a no-op without a scale). */
void hx_timescale_stop(void);

/* The environment entries ("NAME=value", NULL-terminated) every client
 * process gets on top of the harness's own: LD_PRELOAD, FAKETIME,
 * FAKETIME_SHARED, and ASAN_OPTIONS with verify_asan_link_order=0 (a
 * sanitized client accepts the preloaded library). NULL without a scale.
 * Borrowed; valid until hx_timescale_stop(). */
const char *const *hx_timescale_env(void);

/*
 * Whether @client_ms (a client's wall clock, ms since the epoch) is a
 * reading of the virtual clock taken between the virtual wall instants
 * @from_us and @to_us (fa_clock_wall_us()), within HX_TIMESCALE_SLACK_US.
 * FA_EINVAL when it is not, @err naming @who and both clocks.
 */
enum fa_rc hx_timescale_check_reading(const char *who, double client_ms, int64_t from_us,
                                      int64_t to_us, struct fa_err *err);

/*
 * Exec mode: whether the program @template runs (its first word, through
 * `#!` interpreters and `env`) can follow the virtual clock: a dynamically
 * linked ELF that is not a Go program; an interpreter the harness knows
 * (sh, bash, dash, python3, node, php, perl) is also probed, reading its
 * clock around a 1 s sleep. Sets *@what (owned) to what was checked, for
 * the report. FA_EINVAL with the reason in @err when it cannot follow or
 * cannot be told.
 */
enum fa_rc hx_timescale_check_exec(const char *template, char **what, struct fa_err *err);

#endif
