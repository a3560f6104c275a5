/* scenario_state.h -- one scenario while it runs, private to scenario_run.c and restart.c. */

/* What the two share carries the folder-private prefix hx__ (libuv's uv__):
 * nothing outside run/ includes this header. */
#ifndef HX_SCENARIO_STATE_H
#define HX_SCENARIO_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "event.h"
#include "exec.h"
#include "journal.h"
#include "provider.h"
#include "rc.h"
#include "result.h"
#include "run_opts.h"
#include "scenario.h"
#include "server.h"
#include "stdio_client.h"

/* How often the scenario loop looks at the journal and the clients, ns. */
#define HX_SCENARIO_TICK_NS (10 * 1000 * 1000)

/* One task during a scenario. */
struct hx__task_state {
	struct hx_exec_proc proc; /* exec mode: its client process */
	char *body_file;          /* owned: what {body_file} names (exec mode) */
	char *headers_file;       /* owned: what {headers_file} names (exec mode) */
	cJSON *body;              /* owned: the body sent: a copy of the task's, a write's
	                             with its client reference (write.h), the body
	                             canary planted (canary.h); NULL = no body */
	bool killed;              /* exec mode: a kill event killed its client */
	int64_t deadline_us;      /* stdio mode: provider µs its result is due by */
	bool has_result;          /* stdio mode: its result line was read */
	bool stopped;             /* its client was stopped by an interruption */
};

/* One scenario while it runs. hx_scenario_run() owns it. */
struct hx__scenario {
	const struct fa_scenario *sc;   /* borrowed: the scenario */
	const struct hx_run_opts *opts; /* borrowed: the client and the run's options */
	struct hx_scenario_result *out; /* borrowed: what the run fills */
	const char *dir;                /* this scenario's temporary folder */
	char *state_dir;                /* owned: CLIENT_STATE_DIR */
	char *base_url;                 /* owned: "http://127.0.0.1:PORT" */
	struct fa_journal *journal;     /* owned: the provider's journal */
	struct fa_provider *prov;       /* owned: the in-process provider */
	struct fa_server *srv;          /* owned: its HTTP server; NULL once stopped */
	int64_t t0_us;                  /* monotonic origin of the provider's clock */
	uint64_t since;                 /* last journal seq looked at */
	struct fa_attempt *seen;        /* owned: the journal entries read so far (n_seen), for
	                                   the quiet windows of cancelled tasks */
	size_t n_seen;
	struct hx__task_state *ts;       /* owned, one per task */
	enum hx_task_phase *phase;       /* owned, one per task */
	struct hx_event_set ev;          /* the harness events and their triggers */
	bool timed_out;                  /* the scenario's own timeout struck */
	bool interrupted;                /* the run was interrupted while it ran */
	bool stdio;                      /* stdio mode: one client session for the scenario */
	struct hx_stdio *client;         /* owned: that session, or NULL */
	size_t msgs_seen;                /* stdio mode: client messages already acted on */
	unsigned session;                /* stdio mode: the client's process, 0 = the first;
	                                    each restart event starts the next */
	bool killed;                     /* stdio mode: a kill event without restart ended it */
	bool restart_failed;             /* stdio mode: the client did not start again */
	struct hx_stdio_capture capture; /* stdio mode: every byte the sessions printed,
	                                    searched for the canaries at the end */
	int64_t waiting_said_us;         /* monotonic µs of the last "waiting for" line
	                                    (waiting.h); 0 before the first tick */
};

/* Sleep @ms, 0..999999. */
void hx__scenario_sleep_ms(int ms);

/* Exec mode: start task @i's client, the task now running (sent at the
 * provider's now). A client that cannot start is recorded in the task
 * and in the scenario's error, never fatal to the loop. */
void hx__scenario_start_exec_task(struct hx__scenario *s, size_t i);

/* Stdio mode: send the task line of task @i, due within @deadline_ms, with
 * the body it is sent with, to the scenario's client. */
void hx__scenario_send_task_line(struct hx__scenario *s, size_t i, int64_t deadline_ms);

/* Stdio mode: act on the client's messages not yet acted on. An
 * action_result pulls the client_saw triggers it names; a result
 * finishes its task. */
void hx__scenario_read_msgs(struct hx__scenario *s);

/* Stdio mode: move what the client said into the result, marked with its
 * process's session. */
void hx__scenario_take_session(struct hx__scenario *s);

/*
 * Stdio mode: start the scenario's client (again, after a kill, when
 * @restart) and wait for its hello. On failure (FA_EIO, FA_EINVAL) the
 * reason is the scenario's error, and the client is killed; at the first
 * start what it said is kept for the report at once, after a restart the
 * end of the scenario keeps it.
 */
enum fa_rc hx__scenario_start_client(struct hx__scenario *s, bool restart);

#endif
