/* check_fixture.h -- a hand-built scenario run for the tests of one check. */
#ifndef FX_CHECK_FIXTURE_H
#define FX_CHECK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "result.h"

/*
 * Times: the helpers take milliseconds since the scenario started and
 * store microseconds, as the journal and the harness do (x FX_MS). A test
 * that sets a field by hand writes `300 * FX_MS`.
 */
#define FX_MS 1000 /* µs per ms */

#define FX_TASKS     6  /* tasks, and their runs */
#define FX_ATTEMPTS  16 /* journal entries */
#define FX_MSGS      8  /* client lines */
#define FX_HITS      4  /* canary hits */
#define FX_ROUTES    2
#define FX_RESPONSES 5 /* across the routes; a test hands out its own slices */

/* A check's judge: budget.h, cancel.h, circuit.h, ... */
typedef hx_check_judge_fn fx_check_fn;

/*
 * One scenario run, all in place: the scenario (its tasks and, when a test
 * sets them, routes), what the harness saw of each task, the provider's
 * journal and the client's lines. Everything it owns goes in fx_release.
 * It points into itself (sc.harness.tasks, tasks[].id, runs[].spec): keep
 * it where fx_init put it, never copy it.
 */
struct fx {
	struct fa_scenario sc;               /* sc.harness.tasks = tasks; sc.harness.expect
	                                        owned; sc.routes NULL until a test sets it */
	struct fa_task_spec tasks[FX_TASKS]; /* ids point into ids[] */
	char ids[FX_TASKS][32];              /* "t1", "t2", ... */
	struct hx_task_run runs[FX_TASKS];   /* one per task, same order */
	size_t n_runs;
	struct fa_route_spec routes[FX_ROUTES]; /* for the test to fill and point sc.routes at */
	struct fa_response_spec responses[FX_RESPONSES]; /* bodies owned */
	struct fa_attempt a[FX_ATTEMPTS];                /* the journal, seq 1..n */
	size_t n;
	struct hx_client_msg m[FX_MSGS]; /* stdio lines, in order */
	size_t n_msgs;
	struct hx_canary_hit hits[FX_HITS]; /* strings borrowed (literals), not released */
	size_t n_hits;
	size_t searched; /* canary_bytes_searched of the input */
	bool incomplete; /* canary_search_incomplete of the input */
};

/*
 * Empty the fixture, then name @n_tasks tasks (1..FX_TASKS) @prefix1,
 * @prefix2, ... (@prefix: 1..5 characters, "t" gives t1, t2). Each task's
 * run is sent at +0 ms, never exited, never cancelled (t_exit_us,
 * t_cancel_us and t_quiet_until_us -1). @expect is the text of
 * $.harness.expect ("{\"budget.escalates\": {...}}"), parsed and owned by
 * the fixture; NULL for none. Fails the test (fatal) on bad arguments or
 * an @expect that does not parse.
 */
void fx_init(struct fx *f, const char *expect, const char *prefix, size_t n_tasks);

/* Release everything @f owns: attempts, client lines, response bodies and
 * $.harness.expect. The fixture may then be initialised again. */
void fx_release(struct fx *f);

/*
 * Append journal entry seq n+1: an attempt of @task (copied; NULL =
 * unattributed) arriving at @arr_ms ms, answered @status at @arr_ms + 1 ms
 * (t_response_us = t_done_us), delivered complete, no pause announced
 * (pause_until_us -1), no route (response_index -1). The test sets any
 * other field on the entry returned (owned by @f). Fatal past FX_ATTEMPTS.
 */
struct fa_attempt *fx_add(struct fx *f, const char *task, int64_t arr_ms, int status);

/*
 * Append a client line @line (JSON text with string members "type" and
 * "task") read at @t_ms ms. Fatal when it does not parse or past FX_MSGS.
 */
void fx_say(struct fx *f, int64_t t_ms, const char *line);

/* Append the line {"type": "result", "task": @task, "outcome": @outcome}
 * read at @t_ms ms (docs/client-protocol.md). */
void fx_result(struct fx *f, int64_t t_ms, const char *task, const char *outcome);

/* Append the line {"type": "escalation", "task": @task, "record": @record}
 * read at @t_ms ms; @record is JSON text, NULL leaves the member out. */
void fx_escalation(struct fx *f, int64_t t_ms, const char *task, const char *record);

/* Record that a canary of @kind was found at @where, a place of @task
 * (NULL: none). Both strings are borrowed and must outlive @f. Fatal past
 * FX_HITS. */
void fx_hit(struct fx *f, enum hx_canary_kind kind, const char *where, const char *task);

/* The check input over all of @f in @mode (borrows from @f). */
struct hx_check_input fx_input(const struct fx *f, enum hx_mode mode);

/*
 * Run @check (the judge of registry row @id, static) on a context over
 * fx_input(@f, @mode) focused on that row, and return its result,
 * asserting that it has a detail; the caller releases it with
 * hx_check_result_release.
 */
struct hx_check_result fx_judge(const struct fx *f, fx_check_fn *check, const char *id,
                                enum hx_mode mode);

/* @r has a detail that contains @s. */
bool fx_has(const struct hx_check_result *r, const char *s);

#endif
