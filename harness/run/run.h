/* run.h -- run a suite: its scenarios on worker threads, their results graded together. */
#ifndef HX_RUN_H
#define HX_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rc.h"
#include "result.h"
#include "run_opts.h"
#include "scenario.h"

/* The harness's version, as reports and --version print it. */
#define HX_VERSION "0.1.0"

/*
 * Run every scenario of @suite (borrowed; it must outlive @out) against
 * the client, opts->jobs at a time (each as hx_scenario_run() says). For
 * each: a provider and its server on an ephemeral 127.0.0.1 port (no
 * admin endpoints: the client cannot reset the journal), a fresh state
 * folder, the harness events firing the tasks (a scenario with no events
 * sends every task at its start; a task no fired event names is recorded
 * as not sent), the wait until nothing more is on its way to the journal
 * (settle.h, bounded by HX_RUN_SETTLE_US and HX_RUN_DRAIN_US), then the
 * journal copied and every check run on it.
 *
 * Exec mode: one client process per task (exec.h); the scenario ends when
 * every started client has exited, no event can fire any more and the
 * provider has no connection left, or at its timeout. Stdio mode
 * (docs/client-protocol.md): one client session per scenario
 * (stdio_client.h), started and greeted before the first event counts;
 * tasks go out as task lines, due within the per-task timeout; client_saw
 * events fire on the client's action_result; a task is finished by its
 * result line (->outcome; exit_code 0 for succeeded, 1 otherwise) and
 * timed out past its deadline; the scenario ends when every sent task is
 * finished, no event can fire and the provider has no request in flight
 * (or at its timeout, or when the client ends), then the client gets
 * shutdown and its grace, and the provider's connections close.
 * A task a client that ended on its own never reported on fails with
 * "client exited with status N before reporting". The client's messages,
 * protocol errors, hello and stderr tail go into the scenario's result,
 * and the first hello into @out->hello. A client that fails to start
 * (no hello) is the scenario's error, and no further scenario starts.
 *
 * Whatever a client leaves behind is killed when it ends, its process
 * group and the processes carrying its marker alike (exec.h, stray.h).
 *
 * A write task (write.h) gets a unique client reference in its body (in
 * ->client_reference of its run). "after": {"task", "held": true} events
 * fire when the server holds an answer to the task (fa_server_held,
 * polled with the journal). A "kill" event SIGKILLs the client (stdio
 * mode: the session's process group; exec mode: the after task's
 * process, or every running one for an at_ms event) and reaps it, then
 * releases every held answer (fa_server_release) and waits for them in
 * the journal; with "restart" the client starts again with the same
 * environment and CLIENT_STATE_DIR: stdio mode says hello again and gets
 * the task line of every task still running, exec mode reruns the killed
 * tasks. Each kill is recorded in ->restarts; the messages of each client
 * process carry its session. The provider's store (fa_store_json) is
 * kept in ->store for the checks.
 *
 * A scenario that cannot run gets its reason in ->error and the run goes
 * on. Finally hx_grade_run() fills the level and the exit code (with
 * ->strict and ->known_failing copied from @opts), and
 * ->interrupted tells whether hx_run_interrupt() cut a scenario short.
 *
 * @out is filled (release with hx_run_result_release) and FA_OK returned;
 * FA_EIO/FA_EINVAL with the reason in @err only when nothing could run at
 * all (no client or two given, no temporary folder, journal folder
 * unusable), and then @out holds nothing to release.
 */
enum fa_rc hx_run_suite(const struct fa_suite *suite, const struct hx_run_opts *opts,
                        struct hx_run_result *out, struct fa_err *err);

#endif
