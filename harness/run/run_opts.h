/* run_opts.h -- how a suite run goes (the options every scenario of it reads) and the request to
 * stop it. */
#ifndef HX_RUN_OPTS_H
#define HX_RUN_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct fa_livefeed;
struct fa_scenario;
struct hx_known_failing;

/* Pause after the last client exits before the provider stops, so that
 * late attempts still reach the journal, µs. */
#define HX_RUN_SETTLE_US 300000

/* How to run a suite. Pointers borrowed for the call. Exactly one of
 * exec_template and client_cmd is set. */
struct hx_run_opts {
	const char *exec_template; /* exec mode: the --exec TEMPLATE */
	const char *client_cmd;    /* stdio mode: the --client COMMAND (sh -c) */
	const char *journal_dir;   /* write DIR/<scenario id>.jsonl; NULL = memory only */
	uint64_t seed;             /* the providers' seed */
	const char *clock_check;   /* under --time-scale: what hx_timescale_check_exec()
	                              found, or how stdio clients are checked; NULL at
	                              scale 1 */
	unsigned jobs;             /* scenarios run at once, >= 1 */
	int min_level;             /* --min-level, 0..4 */
	FILE *progress;            /* a line per scenario start and finish; NULL = quiet */
	/* a scenario running long says what it waits for (waiting.h), @what
	   borrowed for the call, from the scenario's thread; NULL = not asked */
	void (*waiting)(void *ctx, const struct fa_scenario *sc, const char *what);
	void *waiting_ctx;
	int64_t waiting_every_us; /* real time between two such lines, µs */
	struct fa_livefeed *live; /* run --journal - / --follow: every scenario's attempts
	                             as they complete, one line each (follow.h), marked
	                             with the scenario id, queued on this feed (stdout's;
	                             livefeed.h), which never makes a scenario wait;
	                             borrowed; NULL = none */
	bool live_text;           /* --follow: text lines ("[ID] +1.234s  #5 ...");
	                             false: JSONL ({"scenario": ID, ...journal line}) */
	bool strict;              /* --strict: recommended checks count as required */
	const struct hx_known_failing *known_failing; /* --known-failing list (known_failing.h),
	                              kept in the result, so it must outlive it; NULL = none */
};

/*
 * Ask a running hx_run_suite() to stop soon: running clients are stopped,
 * scenarios not started are not run, each affected scenario gets the
 * error "FILE: interrupted" (or "FILE: interrupted before it ran") and is
 * not graded (every check n/a: "not run to the end: interrupted"; no task
 * counts as timed out by the stop), and the result's ->interrupted is
 * set: the exit code is 2. Async-signal-safe: meant for a SIGINT/SIGTERM
 * handler.
 */
void hx_run_interrupt(void);

/* hx_run_interrupt() was called. Thread-safe. */
bool hx_run_interrupted(void);

#endif
