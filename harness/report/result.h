/* result.h -- what a harness run found: per task, per check, per scenario. */
#ifndef HX_RESULT_H
#define HX_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "journal.h"
#include "scenario.h"

/* A check's verdict. n/a is never counted as pass. */
enum hx_verdict { HX_PASS = 0, HX_FAIL, HX_NA };

/* "pass", "fail", "n/a". */
const char *hx_verdict_str(enum hx_verdict v);

/* How the harness drives the client. */
enum hx_mode { HX_MODE_EXEC = 0, HX_MODE_STDIO };

/* What happened to one task's client process (exec mode) or session. */
struct hx_task_run {
	const struct fa_task_spec *spec; /* borrowed from the scenario */
	bool sent;                       /* an event started it */
	int64_t t_sent_us;        /* when it was started (server clock, µs since start); -1 */
	int64_t t_exit_us;        /* when the client process ended (stdio mode: when
	                             its result line was read); -1 */
	int exit_code;            /* exit status (stdio mode: from the outcome);
	                             -1 when killed, not run or no result */
	int term_signal;          /* exec mode: the signal that killed the client
	                             (exit_code is then -1); 0 = none */
	bool timed_out;           /* killed by the per-task or per-scenario timeout;
	                             stdio mode: no result before its deadline */
	int timeout_s;            /* its per-task timeout when it was started, s
	                             (its own, else max_wait_s + 15, else the
	                             scenario's); 0 = not started */
	char *error;              /* owned: client could not start, ...; NULL */
	char *stderr_tail;        /* owned: exec mode, the last lines of the task's
	                             stderr (hx_exec_tail, <= 2 KiB), scrubbed;
	                             NULL when it printed none */
	char *outcome;            /* owned: stdio mode, the result line's outcome
	                             ("succeeded", "failed", "escalated",
	                             "cancelled"; exit_code is 0 for succeeded,
	                             1 for the others); NULL without one */
	char *client_reference;   /* owned: a write task's unique client reference,
	                             which the harness put into its body (write.h);
	                             NULL for any other task */
	int64_t t_cancel_us;      /* when a cancel event cancelled it (stdio mode: the
	                             cancel line was written; exec mode: its process
	                             group got SIGTERM), server clock µs; -1 = never */
	int64_t t_quiet_until_us; /* end of its cancel.quiet window (cancel.h), the
	                             scenario was kept running at least that long;
	                             -1 = not cancelled */
};

/* One protocol line a stdio client printed (docs/client-protocol.md). */
struct hx_client_msg {
	int64_t t_us;     /* when the harness read it, provider clock, µs since start */
	char *type;       /* owned: "action_sent", "action_result", "result", ... */
	char *task;       /* owned: the "task" member, or NULL */
	cJSON *json;      /* owned: the whole line */
	unsigned session; /* which client process printed it: 0 the first, 1 the one
	                     a restart event started, ... */
};

/* Release what @m owns. NULL accepted. */
void hx_client_msg_release(struct hx_client_msg *m);

/* Which planted canary (canary.h). */
enum hx_canary_kind { HX_CANARY_KEY = 0, HX_CANARY_BODY };

/* One place a planted canary was found (escalation.sanitised). */
struct hx_canary_hit {
	enum hx_canary_kind kind;
	char *where; /* owned: "stderr", "stdout line 12", "escalation record of task t1",
	                "state dir file w1.json" (relative to CLIENT_STATE_DIR),
	                "stdout of task t1" (exec mode) */
	char *task;  /* owned: the task the place belongs to, or NULL */
};

/* What one "kill" event did ($.harness.events[i].kill; docs/scenario-format.md). */
struct hx_restart {
	int64_t t_kill_us;    /* provider µs when the client was killed (and reaped) */
	int64_t t_restart_us; /* provider µs when it ran again (stdio mode: its hello was
	                         read); -1 = the event did not restart it, or it failed */
	size_t released;      /* held answers let go once the client was dead */
	char **tasks;         /* owned: stdio mode, the tasks re-sent to the new client;
	                         exec mode, the tasks whose client was killed (and re-run
	                         when restarted) */
	size_t n_tasks;
};

/* Release what @r owns. NULL accepted. */
void hx_restart_release(struct hx_restart *r);

/* The verdict of one check on one scenario. Strings are owned. */
struct hx_check_result {
	const char *id; /* static: "wait.retry_after" */
	int level;      /* 1..4 (L1..L4) */
	bool required;  /* counts for the exit code and the level */
	enum hx_verdict verdict;
	char *detail;       /* one line a person reads: why pass, fail or n/a */
	uint64_t *evidence; /* journal seqs behind the verdict, ascending */
	size_t n_evidence;
	bool uncovered; /* not covered: the scenario or the mode poses nothing
	                   this check judges (coverage.h); the verdict is then
	                   n/a and counts for no level. Zero = covered */
};

/* Everything the checks read about one scenario run. All borrowed. */
struct hx_check_input {
	const struct fa_scenario *sc;
	const struct fa_attempt *attempts; /* the provider's journal, seq order */
	size_t n_attempts;
	const struct hx_task_run *tasks; /* one per sc->harness.tasks, same order */
	size_t n_tasks;
	enum hx_mode mode;
	const struct hx_client_msg *msgs; /* stdio mode: the client's valid lines, in order */
	size_t n_msgs;
	const cJSON *store;                      /* the provider's store when the scenario ended
	                                            (fa_store_json: "records", ...), or NULL */
	bool strict;                             /* --strict: every check is required */
	const struct hx_canary_hit *canary_hits; /* where planted canaries were found */
	size_t n_canary_hits;
	size_t canary_bytes_searched;      /* client output, records and state files
	                                      searched for them; 0 = no search ran */
	bool canary_search_incomplete;     /* some of what the search should have read was
	                                      not: output past its bound, a state file
	                                      past 64 MiB or unreadable (canary.h) */
	const struct hx_restart *restarts; /* the kill events that fired, in order */
	size_t n_restarts;
	const cJSON *hello; /* stdio mode: the client's hello, or NULL */
};

/* One scenario's outcome. */
struct hx_scenario_result {
	const struct fa_scenario *sc; /* borrowed from the suite */
	char *error;                  /* owned: the scenario could not run (exit 2); NULL */
	struct hx_task_run *tasks;    /* owned array, n_tasks */
	size_t n_tasks;
	struct fa_attempt *attempts; /* owned copy of the journal */
	size_t n_attempts;
	char journal_head[65];          /* SHA-256 of the journal's last line */
	struct hx_check_result *checks; /* owned, n_checks */
	size_t n_checks;
	int64_t duration_us;
	struct hx_client_msg *msgs; /* owned: stdio mode, the client's valid lines */
	size_t n_msgs;
	char **protocol_errors; /* owned: "line N: message", malformed client lines,
	                           "client ..." (how it ended), and past the cap
	                           "N more protocol errors not listed" */
	size_t n_protocol_errors;
	size_t n_protocol_errors_seen; /* every protocol error, those only counted in a
	                                  "N more" entry included */
	cJSON *hello;                  /* owned: the client's hello (stdio mode), or NULL */
	char *client_stderr; /* owned: the tail of the client's stderr (<= 4 KiB), or NULL */
	struct hx_restart *restarts; /* owned: one per kill event that fired, in order */
	size_t n_restarts;
	cJSON *store;                      /* owned: the provider's store at the end
	                                      (fa_store_json), or NULL when it did not run */
	struct hx_canary_hit *canary_hits; /* owned: where the planted canaries were found */
	size_t n_canary_hits;
	size_t canary_bytes_searched;  /* bytes searched; 0 = no search ran */
	bool canary_search_incomplete; /* the search could not read all it should
	                                  have (hx_check_input's) */
	char key_canary[33];           /* the key canary planted in every key's secret
	                                  (canary.h), "" when none; never printed */
	char body_canary[64];          /* the body canary, "" when none; never printed */
};

struct hx_known_failing;
struct hx_repeat;

/* A whole run of a suite. */
struct hx_run_result {
	const struct fa_suite *suite; /* borrowed */
	const char *harness_version;  /* static */
	uint64_t seed;
	double time_scale;       /* --time-scale S; 1 = real time */
	const char *clock_check; /* under a scale: how the client's clock was
	                            found to follow it (static or borrowed);
	                            NULL at scale 1 */
	enum hx_mode mode;
	const char *client;                   /* the exec template or client command, borrowed */
	const cJSON *hello;                   /* borrowed: the first scenario's hello, or NULL */
	struct hx_scenario_result *scenarios; /* owned, one per suite scenario, suite order */
	size_t n_scenarios;
	int level;        /* 0..4 reached */
	int min_level;    /* --min-level, 0 = none */
	int exit_code;    /* 0, 1 or 2 as docs/checks.md says */
	bool interrupted; /* a signal cut the run short (hx_run_interrupt) */
	bool strict;      /* --strict: every check counted as required */
	const struct hx_known_failing *known_failing; /* borrowed: the --known-failing
	                                        list (known_failing.h), or NULL */
	const struct hx_repeat *repeat;               /* borrowed: the tallies of a --repeat run
	                                                 (grade.h), or NULL */
};

/* Release what @r owns. NULL accepted. */
void hx_check_result_release(struct hx_check_result *r);
void hx_task_run_release(struct hx_task_run *t);
void hx_scenario_result_release(struct hx_scenario_result *s);
void hx_run_result_release(struct hx_run_result *r);

#endif
