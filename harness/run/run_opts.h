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

/*
 * A scenario's run ends once nothing more is on its way to the journal
 * (settle.h): every task done and, in stdio mode, no request in flight
 * before the client is told to shut down; once the client is gone, no
 * connection left open. These bound the waits, real µs. HX_RUN_SETTLE_US:
 * for answers parked on the provider's timer (a hold, a delay, a paced
 * stream), which may still end by themselves (and then trigger an event)
 * and which the provider's stop journals anyway; and for what a running
 * stdio client still has in flight once its tasks are done.
 * HX_RUN_DRAIN_US: once the client is gone, for a connection still open
 * and not parked: a process that escaped the client's group and marker
 * may still send an attempt on it.
 */
#define HX_RUN_SETTLE_US 300000
#define HX_RUN_DRAIN_US  1000000

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
