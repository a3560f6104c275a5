/* report_facts.h -- what every report format says about a run (private to harness/report*.c). */
#ifndef HX_REPORT_FACTS_H
#define HX_REPORT_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

#include "rc.h"
#include "result.h"

/* What the exit code says, worked out as hx_grade_run() does. */
struct hx_report_counts {
	size_t pass, fail, na; /* every (scenario, check) result */
	size_t not_covered;    /* of the n/a, those not covered (coverage.h) */
	size_t broken;         /* scenarios that could not run */
	bool required_failed;  /* a required check failed somewhere */
	bool required_passed;  /* a required check passed somewhere */
};

/* Count @r's results into @t. */
void hx_report_count(const struct hx_run_result *r, struct hx_report_counts *t);

/* A check's verdict over the suite as docs/checks.md defines it (fail
 * anywhere, else pass somewhere, else n/a), over the scenarios that
 * required it; over all of them when none did. *@required tells which. */
enum hx_verdict hx_report_suite_verdict(const struct hx_run_result *r, const char *id,
                                        bool *required);

/* "stdio" or "exec"; static. */
const char *hx_report_mode_str(enum hx_mode m);

/* "L0".."L4", "L?" out of range; static. */
const char *hx_report_level_str(int level);

/* One line on why the run exits as it does; a new string the caller frees. */
char *hx_report_exit_reason(const struct hx_run_result *r);

/* The attempt of @s's journal copy with seq @seq (borrowed), or NULL. */
const struct fa_attempt *hx_report_attempt(const struct hx_scenario_result *s, uint64_t seq);

/* Scenarios that could not run for one cause: the cause (their error
 * without the leading "FILE: ", borrowed from the first of them), the
 * index of the first and how many. */
struct hx_error_group {
	const char *cause;
	size_t first;
	size_t n;
};

/* Group the scenarios of @r that could not run by cause, in order of first
 * appearance, into @out (room for r->n_scenarios groups); returns how many
 * groups. One cause (a client command that does not exist) is one group,
 * so it is said once. */
size_t hx_report_error_groups(const struct hx_run_result *r, struct hx_error_group *out);

/* Task @t was sent and did not end well: an error, a timeout, a signal, a
 * non-zero exit (exec mode) or an outcome other than "succeeded" (stdio
 * mode). */
bool hx_report_task_failed(const struct hx_task_run *t);

/* The evidence of check result @c (scenario @s) has an attempt of @task
 * (NULL: none). */
bool hx_report_check_names_task(const struct hx_scenario_result *s, const struct hx_check_result *c,
                                const char *task);

/* Exec mode: the reports show task @t's stderr tail (the JSON report
 * always keeps it): it printed some, and it failed or a failed check's
 * evidence names it. */
bool hx_report_task_stderr_shown(const struct hx_scenario_result *s, const struct hx_task_run *t);

/* Stdio mode: the reports show the client's stderr tail: it printed
 * some, and the scenario could not run, the client broke the protocol, a
 * task failed or a check failed. */
bool hx_report_client_stderr_shown(const struct hx_scenario_result *s);

/* Attempts naming no task of the scenario, as the checks count them
 * (docs/checks.md, "unattributed"). */
size_t hx_report_unattributed(const struct hx_scenario_result *s);

/* The compact journal line of @a ("seq 4  +10.0 ms  task t1  GET /x  ->
 * 429 ..."), the client's bytes as they are; a new string the caller
 * frees. */
char *hx_report_attempt_line(const struct fa_attempt *a);

/* What became of task @t of @s in @mode, as the text report words it
 * after "task ID: " ("exit 0", "timed out (killed)", "result succeeded
 * (cancelled at +12.0 ms)"): the client's bytes as they are; a new string
 * the caller frees. */
char *hx_report_task_outcome(const struct hx_scenario_result *s, enum hx_mode mode,
                             const struct hx_task_run *t);

/* The scenario's journal head; 64 zeros when it has none (did not run).
 * Borrowed from @s, or static. */
const char *hx_report_head(const struct hx_scenario_result *s);

/* The scenario's id and the suite's, "?" without one; borrowed. */
const char *hx_report_scenario_id(const struct hx_scenario_result *s);
const char *hx_report_suite_id(const struct hx_run_result *r);

/* A copy of @text with @s's key canary replaced by "[key canary]" and its
 * body canary by "[body canary]" (canary.h: a report never shows them);
 * NULL for NULL. A new string the caller frees. */
char *hx_report_scrub(const struct hx_scenario_result *s, const char *text);

/* "key" or "body"; static. */
const char *hx_report_canary_kind_str(enum hx_canary_kind k);

/* The "record" of the last escalation line the client printed for task
 * @task in @s (stdio mode), borrowed; NULL when there is none. */
const cJSON *hx_report_escalation(const struct hx_scenario_result *s, const char *task);

/* The scenario whose hello @r->hello is (to scrub it with that scenario's
 * canaries), or NULL. Borrowed. */
const struct hx_scenario_result *hx_report_hello_scenario(const struct hx_run_result *r);

/* A report being written: the stream, and the temporary file it goes to. */
struct hx_report_out {
	FILE *f;   /* write the report here */
	char *tmp; /* owned: "DIR/.NAME.XXXXXX" beside the report; NULL for stdout */
};

/*
 * Open @path ("-" = stdout) for writing a report into *@out. The report
 * goes to a new temporary file in @path's folder (created with O_EXCL, so
 * never through a symlink someone planted) that hx_report_close() renames
 * over @path: a reader, or a client left running, sees the old file or
 * the whole new one, never a part. FA_EINVAL with "report: no path given"
 * for NULL, FA_EIO with "PATH: cannot write: reason" in @err when it
 * cannot be created; out->f NULL then.
 */
enum fa_rc hx_report_open(const char *path, struct hx_report_out *out, struct fa_err *err);

/* Flush and close what hx_report_open() gave (stdout is only flushed),
 * then rename the temporary file over @path; on any error the temporary
 * file is removed and @path left as it was. FA_EIO with "PATH: cannot
 * write: reason" in @err on an error at any point of the writing. */
enum fa_rc hx_report_close(struct hx_report_out *out, const char *path, struct fa_err *err);

#endif
