/* scenario_run.h -- one scenario's run: its provider, the client's tasks, the events, the journal,
 * the checks. */
#ifndef HX_SCENARIO_RUN_H
#define HX_SCENARIO_RUN_H

#include <stdbool.h>

#include "rc.h"
#include "result.h"
#include "run_opts.h"
#include "scenario.h"

/* The detail of every check of a scenario an interruption cut short. */
#define HX_SCENARIO_INTERRUPTED "not run to the end: interrupted"

/*
 * Run scenario @sc (borrowed) as hx_run_suite() says for each scenario,
 * driving the client @opts names (borrowed), with its temporary files in
 * @dir (a new folder: created here, removed at the end). @out must be
 * zeroed with ->sc set; it gets the task runs, the journal copy and head,
 * the provider's store, the client's messages, the kills and restarts,
 * the checks and the duration, and the reason in ->error when the
 * scenario could not run.
 *
 * The provider answers no admin endpoint: a client's /_fakeapi/ request is
 * an attempt like any other, journaled, and cannot empty the journal it
 * is graded on.
 *
 * When hx_run_interrupted() turns true while it runs, the clients are
 * stopped, ->error is "FILE: interrupted", no task counts as timed out by
 * that stop, and the scenario is not graded: every check is n/a with the
 * detail HX_SCENARIO_INTERRUPTED.
 *
 * *@cut (NULL accepted) tells whether an interruption cut it short.
 * Returns FA_OK, or FA_EIO when a stdio client failed to start (at first
 * or when a restart event started it again): then the run should start
 * no further scenario.
 */
enum fa_rc hx_scenario_run(const struct fa_scenario *sc, const struct hx_run_opts *opts,
                           const char *dir, struct hx_scenario_result *out, bool *cut);

#endif
