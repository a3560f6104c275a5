/* test_check.c -- the checks on hand-made journals, and the grading. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "result.h"

#define MS 1000 /* µs */

/* A hand-made journal: at most 32 attempts, seq = position + 1. */
struct jb {
	struct fa_attempt a[32];
	size_t n;
};

/* A hand-built scenario: tasks t1..t4 (scope is whatever each attempt
 * says), budgets and expect as the test sets them. */
struct sc {
	struct fa_scenario s;
	struct fa_task_spec tasks[4];
};

static void sc_init(struct sc *sc, const char *expect_json)
{
	static const char *ids[] = { "t1", "t2", "t3", "t4" };
	size_t i;

	memset(sc, 0, sizeof(*sc));
	sc->s.id = "s1";
	sc->s.file = "s1.json";
	sc->s.has_harness = true;
	for (i = 0; i < 4; i++) {
		sc->tasks[i].id = (char *)ids[i];
		sc->tasks[i].method = "GET";
		sc->tasks[i].path = "/v1/records/42";
		sc->tasks[i].budget.max_wait_s = -1;
	}
	sc->s.harness.tasks = sc->tasks;
	sc->s.harness.n_tasks = 4;
	sc->s.harness.expect = expect_json ? cJSON_Parse(expect_json) : NULL;
}

static void sc_release(struct sc *sc)
{
	cJSON_Delete(sc->s.harness.expect);
	sc->s.harness.expect = NULL;
}

/* Append an attempt of @task in @scope that arrived at @arr_ms and was
 * answered at @resp_ms (-1 = never) with @status; @ra is the Retry-After
 * sent (NULL = none) and @pause_ms the instant it named (-1 = none or
 * unparseable). Returns its seq. */
static uint64_t add(struct jb *j, const char *task, const char *scope, int64_t arr_ms,
                    int64_t resp_ms, int status, const char *ra, int64_t pause_ms)
{
	struct fa_attempt *a;

	CU_ASSERT_FATAL(j->n < sizeof(j->a) / sizeof(j->a[0]));
	a = &j->a[j->n];
	memset(a, 0, sizeof(*a));
	a->seq = ++j->n;
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = resp_ms < 0 ? -1 : resp_ms * MS;
	a->t_done_us = a->t_response_us;
	a->method = fa_xstrdup("GET");
	a->path = fa_xstrdup("/v1/records/42");
	a->task = fa_xstrdup(task);
	a->scope = fa_xstrdup(scope);
	a->status = status;
	a->retry_after = fa_xstrdup(ra);
	a->pause_until_us = pause_ms == -1 ? -1 : pause_ms * MS;
	a->delivered = FA_DELIVERED_COMPLETE;
	a->fault = fa_xstrdup("respond");
	a->response_index = -1;
	return a->seq;
}

static void jb_release(struct jb *j)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		fa_attempt_release(&j->a[i]);
	j->n = 0;
}

/* Every check on @j under @sc; results in *@out (count asserted). */
static struct hx_check_result *run(const struct sc *sc, const struct jb *j)
{
	struct hx_check_input in = {
		.sc = &sc->s, .attempts = j->a, .n_attempts = j->n, .mode = HX_MODE_EXEC
	};
	struct hx_check_result *res = NULL;
	size_t n = 0, i;

	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_FATAL(res != NULL);
	CU_ASSERT_FATAL(n == hx_check_count());
	for (i = 0; i < n; i++)
		CU_ASSERT_PTR_NOT_NULL(res[i].detail);
	return res;
}

/* Every check on @j under @sc in stdio mode, the harness having handed
 * task i to the client at @sent_ms[i] ms (-1: never); results as run(). */
static struct hx_check_result *run_sent(const struct sc *sc, const struct jb *j,
                                        const int64_t sent_ms[4])
{
	struct hx_task_run runs[4];
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	size_t n = 0, i;

	memset(runs, 0, sizeof(runs));
	for (i = 0; i < 4; i++) {
		runs[i].spec = &sc->tasks[i];
		runs[i].sent = sent_ms[i] >= 0;
		runs[i].t_sent_us = sent_ms[i] < 0 ? -1 : sent_ms[i] * MS;
		runs[i].t_cancel_us = -1;
		runs[i].t_quiet_until_us = -1;
		runs[i].t_exit_us = -1;
	}
	in = (struct hx_check_input){ .sc = &sc->s,
		                      .attempts = j->a,
		                      .n_attempts = j->n,
		                      .tasks = runs,
		                      .n_tasks = 4,
		                      .mode = HX_MODE_STDIO };
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_FATAL(res != NULL);
	CU_ASSERT_FATAL(n == hx_check_count());
	return res;
}

static const struct hx_check_result *get(const struct hx_check_result *res, const char *id)
{
	size_t i;

	for (i = 0; i < hx_check_count(); i++)
		if (strcmp(res[i].id, id) == 0)
			return &res[i];
	CU_FAIL_FATAL("check not in the results");
	return NULL;
}

static void free_results(struct hx_check_result *res)
{
	size_t i;

	for (i = 0; i < hx_check_count(); i++)
		hx_check_result_release(&res[i]);
	free(res);
}

/* @r's evidence is exactly the @n seqs given, ascending. */
static bool evidence_is(const struct hx_check_result *r, size_t n, ...)
{
	va_list ap;
	size_t i;
	bool ok = r->n_evidence == n;

	va_start(ap, n);
	for (i = 0; i < n && ok; i++)
		ok = r->evidence[i] == (uint64_t)va_arg(ap, int);
	va_end(ap);
	return ok;
}

static bool detail_has(const struct hx_check_result *r, const char *s)
{
	return r->detail != NULL && strstr(r->detail, s) != NULL;
}

/* ---- definitions ---- */

static void check__defines_every_check_in_order(void)
{
	static const struct {
		const char *id;
		int level;
		bool required;
	} want[] = {
		{ "attempts.bounded", 1, true },
		{ "wait.retry_after", 1, true },
		{ "classify.no_retry_4xx", 1, true },
		{ "outcome.expected", 1, true },
		{ "wait.scope_pause", 2, true },
		{ "wait.jitter", 2, true },
		{ "attempts.hidden", 2, true },
		{ "write.key_stable", 3, true },
		{ "write.body_stable", 3, true },
		{ "write.no_duplicate", 3, true },
		{ "write.reconcile_first", 3, true },
		{ "ambiguity.preserved", 3, true },
		{ "wait.concurrency", 2, false },
		{ "wait.pacing", 2, false },
		{ "budget.escalates", 4, true },
		{ "escalation.sanitised", 4, true },
		{ "cancel.quiet", 4, true },
		{ "classify.circuit", 4, false },
		{ "stream.no_silent_retry", 4, false },
	};
	const size_t n = sizeof(want) / sizeof(want[0]);

	CU_ASSERT_EQUAL_FATAL(hx_check_count(), n);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_STRING_EQUAL(hx_check_def_at(i)->id, want[i].id);
		CU_ASSERT_EQUAL(hx_check_def_at(i)->level, want[i].level);
		CU_ASSERT_EQUAL(hx_check_def_at(i)->required, want[i].required);
		CU_ASSERT_PTR_NOT_NULL(hx_check_def_at(i)->source);
		CU_ASSERT_PTR_NOT_NULL(hx_check_def_at(i)->title);
		CU_ASSERT_PTR_EQUAL(hx_check_find(want[i].id), hx_check_def_at(i));
	}
	CU_ASSERT_PTR_NULL(hx_check_def_at(n));
	CU_ASSERT_PTR_NULL(hx_check_find("stream.no_silent_retrys"));
	CU_ASSERT_PTR_NULL(hx_check_find(NULL));
}

/* Each row's source names its sources as docs/references.md does (the
 * text before ':' and every RFC it cites are there), never a "seed";
 * each row has a judge. */
static void check__sources_name_the_references(void)
{
	FILE *f = fopen("docs/references.md", "r");
	char refs[32768];
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(refs, 1, sizeof(refs) - 1, f);
	refs[n] = '\0';
	fclose(f);
	for (size_t i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		const char *colon = strchr(d->source, ':'), *rfc;
		char name[128];

		CU_ASSERT_PTR_NOT_NULL(d->judge);
		CU_ASSERT_PTR_NULL(strstr(d->source, "seed"));
		CU_ASSERT_PTR_NOT_NULL_FATAL(colon);
		/* "the retry-safety guide" is "The retry-safety guide" in a heading */
		snprintf(name, sizeof(name), "%.*s", (int)(colon - d->source) - 1, d->source + 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(refs, name));
		for (rfc = strstr(d->source, "RFC "); rfc != NULL; rfc = strstr(rfc + 1, "RFC ")) {
			snprintf(name, sizeof(name), "%.8s", rfc);
			CU_ASSERT_PTR_NOT_NULL(strstr(refs, name));
		}
	}
}

static void check__unattributed_attempts_fail_bounded_and_nothing_else(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	size_t i;

	sc_init(&sc, NULL);
	sc.tasks[0].budget.max_attempts = 3;
	add(&j, NULL, "user:a", 0, 1, 200, NULL, -1);
	add(&j, "t9", "user:a", 5, 6, 200, NULL, -1); /* no such task */
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "attempts.bounded")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "attempts.bounded"), "2 attempts named no task"));
	CU_ASSERT_TRUE(evidence_is(get(res, "attempts.bounded"), 2, 1, 2));
	for (i = 1; i < hx_check_count(); i++) {
		CU_ASSERT_EQUAL(res[i].verdict, HX_NA);
		/* escalation.sanitised judges without attempts (no search ran),
		 * outcome.expected too (no task here says its outcome); exec
		 * mode does not cover attempts.hidden */
		if (res[i].uncovered) {
			CU_ASSERT_TRUE(detail_has(&res[i], "not judged here: "));
		} else if (strcmp(res[i].id, "escalation.sanitised") != 0 &&
		           strcmp(res[i].id, "outcome.expected") != 0) {
			CU_ASSERT_TRUE(detail_has(&res[i], "2 unattributed"));
		}
		CU_ASSERT_EQUAL(res[i].uncovered, strcmp(res[i].id, "attempts.hidden") == 0);
		CU_ASSERT_EQUAL(res[i].level, hx_check_def_at(i)->level);
		CU_ASSERT_EQUAL(res[i].required, hx_check_def_at(i)->required);
	}
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void check__expect_overrides_required(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, "{\"wait.scope_pause\": {\"required\": false}}");
	add(&j, "t1", "user:a", 0, 1, 200, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_FALSE(get(res, "wait.scope_pause")->required);
	CU_ASSERT_TRUE(get(res, "wait.retry_after")->required);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* The @n cells of a Markdown table row "| a | b |" into @cell (trimmed,
 * in place); false when the row has another number of cells. */
static bool table_cells(char *line, char **cell, size_t n)
{
	size_t k = 0;
	char *p = strchr(line, '|');

	while (p != NULL && k <= n) {
		char *next = strchr(p + 1, '|'), *end;

		if (next == NULL)
			break;
		*next = '\0';
		for (p++; *p == ' '; p++)
			;
		for (end = p + strlen(p); end > p && end[-1] == ' '; end--)
			;
		*end = '\0';
		if (k < n)
			cell[k] = p;
		k++;
		p = next;
	}
	return k == n;
}

/* The registry's parameter @name of check @d ("required": every check's). */
static const struct hx_check_param *param_of(const struct hx_check_def *d, const char *name)
{
	for (size_t k = 0; k < d->n_params; k++)
		if (strcmp(d->params[k].name, name) == 0)
			return &d->params[k];
	return strcmp(name, hx_param_required.name) == 0 ? &hx_param_required : NULL;
}

/* One row of docs/checks.md's Parameters table ("| `tolerance_ms` |
 * `wait.retry_after`, ... | integer | 0..60000 | 50 | meaning |") against
 * the registry; each (check, parameter) it names is counted in @seen. */
static void param_row_matches(char *line, bool seen[][9], size_t *pairs)
{
	static const char *const kinds[] = { "integer", "true or false", "task ids" };
	char *cell[6], name[64], want[64], *ids;
	const struct hx_check_param *p;

	if (!table_cells(line, cell, 6) || sscanf(cell[0], "`%63[^`]`", name) != 1)
		return;
	for (size_t i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		char quoted[72];

		snprintf(quoted, sizeof(quoted), "`%s`", d->id);
		ids = strcmp(cell[1], "all") == 0 ? cell[1] : strstr(cell[1], quoted);
		if (ids == NULL)
			continue;
		p = param_of(d, name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_STRING_EQUAL(cell[2], kinds[p->kind]);
		if (p->kind == HX_PARAM_INT)
			snprintf(want, sizeof(want), "%lld..%lld", (long long)p->min,
			         (long long)p->max);
		else
			snprintf(want, sizeof(want), "%s",
			         p->kind == HX_PARAM_TASKS ? "non-empty" : "");
		CU_ASSERT_STRING_EQUAL(cell[3], want);
		if (p == &hx_param_required)
			snprintf(want, sizeof(want), "the check's");
		else if (p->dflt == HX_PARAM_NO_DEFAULT)
			snprintf(want, sizeof(want), "none: n/a without it");
		else
			snprintf(want, sizeof(want), "%lld", (long long)p->dflt);
		CU_ASSERT_STRING_EQUAL(cell[4], want);
		CU_ASSERT_STRING_EQUAL(cell[5], p->doc);
		size_t k = p == &hx_param_required ? d->n_params : (size_t)(p - d->params);
		CU_ASSERT_FALSE(seen[i][k]);
		seen[i][k] = true;
		(*pairs)++;
	}
}

/* docs/checks.md's tables and sections say what the registry says: each
 * check's row and section, and every parameter with its bounds. */
static void check__docs_table_matches_the_definitions(void)
{
	FILE *f = fopen("docs/checks.md", "r");
	char line[1024];
	size_t rows = 0, sections = 0, reserved = 0, pairs = 0, want_pairs = 0;
	bool in_params = false, seen[32][9] = { { false } };

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_FATAL(hx_check_count() <= 32);
	while (fgets(line, sizeof(line), f) != NULL) {
		char id[64], level[8], dflt[16], head[128];
		const struct hx_check_def *d;

		if (strncmp(line, "### ", 4) == 0 || strncmp(line, "---", 3) == 0)
			in_params = strcmp(line, "### Parameters\n") == 0;
		if (in_params && strncmp(line, "| `", 3) == 0) {
			param_row_matches(line, seen, &pairs);
			continue;
		}
		if (sscanf(line, "| `%63[^`]` | %7s | %15s |", id, level, dflt) == 3 &&
		    strchr(id, '.') != NULL && level[0] == 'L') {
			d = hx_check_find(id);
			if (strstr(line, "| not yet implemented |") != NULL) {
				CU_ASSERT_PTR_NULL(d);
				reserved++;
				continue;
			}
			CU_ASSERT_PTR_NOT_NULL_FATAL(d);
			CU_ASSERT_TRUE(strstr(line, "| implemented |") != NULL);
			CU_ASSERT_EQUAL(level[1] - '0', d->level);
			CU_ASSERT_STRING_EQUAL(dflt, d->required ? "required" : "recommended");
			rows++;
		}
		if (sscanf(line, "### `%63[^`]` (%7[^,], %15[^)])", id, level, dflt) == 3) {
			d = hx_check_find(id);
			CU_ASSERT_PTR_NOT_NULL_FATAL(d);
			snprintf(head, sizeof(head), "L%d", d->level);
			CU_ASSERT_STRING_EQUAL(level, head);
			CU_ASSERT_STRING_EQUAL(dflt, d->required ? "required" : "recommended");
			sections++;
		}
	}
	fclose(f);
	CU_ASSERT_EQUAL(rows, hx_check_count());
	CU_ASSERT_EQUAL(sections, hx_check_count());
	CU_ASSERT_EQUAL(reserved, 0);
	for (size_t i = 0; i < hx_check_count(); i++) {
		CU_ASSERT_FATAL(hx_check_def_at(i)->n_params < 9);
		want_pairs += hx_check_def_at(i)->n_params + 1; /* and "required" */
	}
	CU_ASSERT_EQUAL(pairs, want_pairs);
}

static void check__strict_makes_every_check_required(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	size_t n = 0, i;

	sc_init(&sc, "{\"wait.scope_pause\": {\"required\": false}, "
	             "\"classify.circuit\": {\"required\": true}}");
	add(&j, "t1", "user:a", 0, 1, 200, NULL, -1);
	in = (struct hx_check_input){
		.sc = &sc.s, .attempts = j.a, .n_attempts = j.n, .mode = HX_MODE_EXEC
	};
	/* without --strict: the defaults, and the scenario's word */
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_FALSE(get(res, "wait.concurrency")->required);
	CU_ASSERT_TRUE(get(res, "classify.circuit")->required);
	CU_ASSERT_FALSE(get(res, "wait.scope_pause")->required);
	CU_ASSERT_TRUE(get(res, "budget.escalates")->required);
	free_results(res);
	/* --strict: every one */
	in.strict = true;
	hx_check_run_all(&in, &res, &n);
	for (i = 0; i < n; i++)
		CU_ASSERT_TRUE(res[i].required);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* Each step-5 check is wired to its module (details its own, not the
 * table's), and escalation.sanitised judges a journal without attempts. */
static void check__step_5_checks_reach_their_modules(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_task_run runs[4] = { 0 };
	struct hx_canary_hit hit = { .kind = HX_CANARY_KEY, .where = "stderr" };
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	size_t n = 0, i;

	sc_init(&sc, "{\"wait.concurrency\": {\"max_concurrent_requests\": 1}, "
	             "\"classify.circuit\": {\"max_identical\": 1}, "
	             "\"budget.escalates\": {\"tasks\": [\"t1\"]}}");
	sc.tasks[0].budget.max_attempts = 1;
	for (i = 0; i < 4; i++) {
		runs[i].spec = &sc.tasks[i];
		runs[i].sent = true;
		runs[i].t_cancel_us = i == 1 ? 50 * MS : -1;
		runs[i].t_quiet_until_us = -1;
		runs[i].t_exit_us = -1;
	}
	add(&j, "t1", "user:a", 0, 100, 422, NULL, -1);
	add(&j, "t2", "user:a", 10, 20, 200, NULL, -1);
	add(&j, "t1", "user:a", 200, 300, 422, NULL, -1);
	add(&j, "t2", "user:a", 400, 401, 200, NULL, -1);
	in = (struct hx_check_input){ .sc = &sc.s,
		                      .attempts = j.a,
		                      .n_attempts = j.n,
		                      .tasks = runs,
		                      .n_tasks = 4,
		                      .mode = HX_MODE_STDIO,
		                      .canary_hits = &hit,
		                      .n_canary_hits = 1,
		                      .canary_bytes_searched = 10 };
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_EQUAL(get(res, "wait.concurrency")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "wait.concurrency"), "2 attempts in flight"));
	CU_ASSERT_EQUAL(get(res, "classify.circuit")->verdict, HX_FAIL);
	CU_ASSERT_EQUAL(get(res, "budget.escalates")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "budget.escalates"), "task t1 made 2 attempts"));
	CU_ASSERT_EQUAL(get(res, "cancel.quiet")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "cancel.quiet"), "task t2 was cancelled"));
	CU_ASSERT_EQUAL(get(res, "escalation.sanitised")->verdict, HX_FAIL);
	free_results(res);
	/* no attempt at all: the journal checks are n/a, the leak still fails */
	in.n_attempts = 0;
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_EQUAL(get(res, "escalation.sanitised")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(get(res, "escalation.sanitised"), "the key canary in stderr"));
	CU_ASSERT_EQUAL(get(res, "cancel.quiet")->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(get(res, "cancel.quiet"), "no attributed attempts"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- attempts.bounded ---- */

static void bounded__fails_a_client_killed_by_its_timeout(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_task_run runs[4] = { 0 };
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	const struct hx_check_result *r;
	size_t n = 0, i;

	sc_init(&sc, NULL);
	for (i = 0; i < 4; i++) {
		runs[i].spec = &sc.tasks[i];
		runs[i].exit_code = 0;
	}
	runs[0].timed_out = true;
	runs[0].exit_code = -1;
	runs[0].timeout_s = 17;
	add(&j, "t1", "user:a", 0, 1, 429, "Sun, 06 Nov 1994 08:49:37 GMT", 0);
	in = (struct hx_check_input){ .sc = &sc.s,
		                      .attempts = j.a,
		                      .n_attempts = j.n,
		                      .tasks = runs,
		                      .n_tasks = 4,
		                      .mode = HX_MODE_EXEC };
	hx_check_run_all(&in, &res, &n);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(r, "task t1 hung: its client was killed by its 17 s timeout, "
	                             "after 1 attempt (the last at +"));
	CU_ASSERT_TRUE(detail_has(r, "still retrying, or waiting to, when the timeout passed"));
	CU_ASSERT_TRUE(evidence_is(r, 1, 1));
	free_results(res);
	/* stdio mode kills no client at a deadline: the detail says what
	 * happened there */
	in.mode = HX_MODE_STDIO;
	hx_check_run_all(&in, &res, &n);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(r, "task t1 hung: no result within its 17 s timeout, after 1 "
	                             "attempt"));
	CU_ASSERT_FALSE(detail_has(r, "killed"));
	free_results(res);
	in.mode = HX_MODE_EXEC;
	/* the same journal without the hang passes */
	runs[0].timed_out = false;
	runs[0].exit_code = 0;
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_EQUAL(get(res, "attempts.bounded")->verdict, HX_PASS);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__passes_within_budget(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	sc.tasks[0].budget.max_attempts = 4;
	add(&j, "t1", "user:a", 0, 1, 503, NULL, -1);
	add(&j, "t1", "user:a", 500, 501, 503, NULL, -1);
	add(&j, "t1", "user:a", 1500, 1501, 200, NULL, -1);
	add(&j, "t2", "user:a", 10, 11, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(r, 3, 1, 2, 3));
	CU_ASSERT_TRUE(detail_has(r, "t1 made 3 of max_attempts 4"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__fails_over_budget_with_the_excess_as_evidence(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	sc.tasks[1].budget.max_attempts = 2;
	/* Completion order differs from arrival order: seq 1 arrived last. */
	add(&j, "t2", "user:a", 900, 901, 200, NULL, -1);
	add(&j, "t2", "user:a", 0, 1, 503, NULL, -1);
	add(&j, "t2", "user:a", 400, 401, 503, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(r, 1, 1));
	CU_ASSERT_TRUE(detail_has(r, "task t2 made 3 attempts, budget max_attempts 2"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__fails_a_tight_loop_after_a_past_retry_after(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	/* A past date: the instant named lies before the response. */
	add(&j, "t1", "user:a", 0, 10, 429, "Sun, 06 Nov 1994 08:49:37 GMT", -5000);
	add(&j, "t1", "user:a", 20, 21, 429, NULL, -1);
	add(&j, "t1", "user:a", 40, 41, 429, NULL, -1);
	add(&j, "t1", "user:a", 60, 61, 200, NULL, -1);
	add(&j, "t1", "user:a", 200, 201, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(r, 2, 1, 4));
	CU_ASSERT_TRUE(detail_has(r, "task t1 sent 3 attempts within 100 ms"));
	CU_ASSERT_TRUE(detail_has(r, "1994"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__fails_a_tight_loop_after_an_invalid_retry_after(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 10, 503, "soon", -1);
	add(&j, "t1", "user:a", 11, 12, 503, NULL, -1);
	add(&j, "t1", "user:a", 13, 14, 503, NULL, -1);
	add(&j, "t1", "user:a", 15, 16, 503, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "attempts.bounded")->verdict, HX_FAIL);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__passes_a_small_delay_after_a_past_retry_after(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 10, 429, "0", 10);
	add(&j, "t1", "user:a", 60, 61, 429, "0", 61);
	add(&j, "t1", "user:a", 300, 301, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "attempts.bounded");
	CU_ASSERT_EQUAL(r->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(r, 2, 1, 2));
	CU_ASSERT_TRUE(detail_has(r, "after 2 Retry-After naming no future instant"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void bounded__is_na_without_budget_or_bad_retry_after(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	sc.tasks[3].budget.max_attempts = 2; /* t4 never ran */
	add(&j, "t1", "user:a", 0, 1, 429, "10", 10001);
	add(&j, "t1", "user:a", 10100, 10101, 200, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "attempts.bounded")->verdict, HX_NA);
	CU_ASSERT_EQUAL(get(res, "attempts.bounded")->n_evidence, 0);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- wait.retry_after ---- */

static void retry_after__passes_a_retry_after_the_pause(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t1", "user:a", 10010, 10011, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "wait.retry_after");
	CU_ASSERT_EQUAL(r->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(r, 2, 1, 2));
	CU_ASSERT_TRUE(detail_has(r, "task t1 waited"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void retry_after__passes_inside_the_default_tolerance(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t1", "user:a", 9960, 9961, 200, NULL, -1); /* 45 ms early */
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_PASS);
	CU_ASSERT_TRUE(detail_has(get(res, "wait.retry_after"), "tolerance 50 ms"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void retry_after__fails_an_early_retry_with_how_early(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t1", "user:a", 120, 121, 429, "10", 10121);
	add(&j, "t1", "user:a", 10200, 10201, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "wait.retry_after");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(r, 2, 1, 2));
	CU_ASSERT_TRUE(detail_has(r, "task t1 retried 9885.0 ms early"));
	CU_ASSERT_TRUE(detail_has(r, "seq 2 arrived at +120.0 ms"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* wait.retry_after on @j has @v and exactly @detail; @j is emptied. */
static void retry_after_says(const struct sc *sc, struct jb *j, enum hx_verdict v,
                             const char *detail)
{
	struct hx_check_result *res = run(sc, j);
	const struct hx_check_result *r = get(res, "wait.retry_after");

	CU_ASSERT_EQUAL(r->verdict, v);
	CU_ASSERT_STRING_EQUAL(r->detail, detail);
	free_results(res);
	jb_release(j);
}

/* A pause a stream's error frame announced (the platform's rate-limit contract: its retryAfter;
 * no Retry-After header) is named as the frame's, never as an empty
 * header; a header is quoted as sent, and retry-after-ms (the exact
 * pause) first, beside the whole seconds. */
static void retry_after__names_an_error_frame_pause_as_the_frames(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 200, NULL, 1005);
	j.a[0].stream_end = fa_xstrdup("error_frame");
	j.a[0].stream_chunks = 2;
	add(&j, "t1", "user:a", 1234, 1235, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_PASS,
	                 "task t1 waited: seq 2 arrived at +1234.0 ms, the "
	                 "error frame's retryAfter of seq 1 named +1005.0 ms (tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 200, NULL, 1005);
	j.a[0].stream_end = fa_xstrdup("error_frame");
	j.a[0].stream_chunks = 2;
	add(&j, "t1", "user:a", 100, 101, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_FAIL,
	                 "task t1 retried 905.0 ms early: seq 2 arrived at "
	                 "+100.0 ms, the error frame's retryAfter of seq 1 named +1005.0 ms "
	                 "(tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 429, "1", 1005);
	add(&j, "t1", "user:a", 100, 101, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_FAIL,
	                 "task t1 retried 905.0 ms early: seq 2 arrived at "
	                 "+100.0 ms, the Retry-After \"1\" of seq 1 named +1005.0 ms "
	                 "(tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 429, "3", 2255);
	j.a[0].retry_after_ms = fa_xstrdup("2250");
	add(&j, "t1", "user:a", 2300, 2301, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_PASS,
	                 "task t1 waited: seq 2 arrived at +2300.0 ms, the "
	                 "retry-after-ms \"2250\" (Retry-After \"3\") of seq 1 named "
	                 "+2255.0 ms (tolerance 50 ms)");
	sc_release(&sc);
}

/* The journal's pause_from says which header's instant pause_until is:
 * the detail names that one, and the form of a Retry-After. */
static void retry_after__names_the_header_the_journal_took_the_pause_from(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };

	sc_init(&sc, NULL);
	/* both headers name +3005 ms: the Retry-After's, ms beside it */
	add(&j, "t1", "user:a", 0, 5, 429, "3", 3005);
	j.a[0].retry_after_ms = fa_xstrdup("3000");
	j.a[0].pause_from = fa_xstrdup("retry-after");
	add(&j, "t1", "user:a", 100, 101, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_FAIL,
	                 "task t1 retried 2905.0 ms early: seq 2 arrived at "
	                 "+100.0 ms, the Retry-After \"3\" (delta-seconds; retry-after-ms "
	                 "\"3000\") of seq 1 named +3005.0 ms (tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 429, "Sun, 06 Nov 1994 08:49:37 GMT", 2005);
	j.a[0].pause_from = fa_xstrdup("retry-after-date");
	add(&j, "t1", "user:a", 2100, 2101, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_PASS,
	                 "task t1 waited: seq 2 arrived at +2100.0 ms, the "
	                 "Retry-After \"Sun, 06 Nov 1994 08:49:37 GMT\" (HTTP-date) of seq 1 "
	                 "named +2005.0 ms (tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 429, "3", 2255);
	j.a[0].retry_after_ms = fa_xstrdup("2250");
	j.a[0].pause_from = fa_xstrdup("retry-after-ms");
	add(&j, "t1", "user:a", 2300, 2301, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_PASS,
	                 "task t1 waited: seq 2 arrived at +2300.0 ms, the "
	                 "retry-after-ms \"2250\" (Retry-After \"3\") of seq 1 named "
	                 "+2255.0 ms (tolerance 50 ms)");

	add(&j, "t1", "user:a", 0, 5, 200, NULL, 1005);
	j.a[0].pause_from = fa_xstrdup("error-frame");
	add(&j, "t1", "user:a", 1100, 1101, 200, NULL, -1);
	retry_after_says(&sc, &j, HX_PASS,
	                 "task t1 waited: seq 2 arrived at +1100.0 ms, the "
	                 "error frame's retryAfter of seq 1 named +1005.0 ms (tolerance 50 ms)");
	sc_release(&sc);
}

static void retry_after__takes_the_tolerance_from_expect(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, "{\"wait.retry_after\": {\"tolerance_ms\": 200}}");
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t1", "user:a", 9850, 9851, 200, NULL, -1); /* 155 ms early */
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_PASS);
	free_results(res);
	sc_release(&sc);

	sc_init(&sc, NULL);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_FAIL);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void retry_after__ignores_attempts_sent_before_the_answer(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	/* seq 1 was in flight when seq 2's 429 went out: not a retry of it. */
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t1", "user:a", 2, 30, 200, NULL, -1);
	add(&j, "t1", "user:a", 10100, 10101, 200, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(get(res, "wait.retry_after"), 2, 1, 3));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void retry_after__is_na_without_a_pause_or_a_retry(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "wait.retry_after");
	CU_ASSERT_EQUAL(r->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(r, "no response announced a future pause"));
	free_results(res);

	add(&j, "t2", "user:a", 10, 15, 429, "10", 10015);
	res = run(&sc, &j);
	r = get(res, "wait.retry_after");
	CU_ASSERT_EQUAL(r->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(r, "seq 2 to task t2"));
	CU_ASSERT_TRUE(detail_has(r, "made no later attempt"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void retry_after__ignores_a_pause_the_client_never_got(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	j.a[0].delivered = FA_DELIVERED_CLIENT_GONE;
	add(&j, "t1", "user:a", 100, 101, 200, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_NA);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- classify.no_retry_4xx ---- */

static void no_retry_4xx__passes_when_the_task_stops(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 404, NULL, -1);
	add(&j, "t2", "user:a", 50, 55, 200, NULL, -1); /* another task: fine */
	res = run(&sc, &j);
	r = get(res, "classify.no_retry_4xx");
	CU_ASSERT_EQUAL(r->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(r, 1, 1));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void no_retry_4xx__fails_a_retry_of_each_status(void)
{
	static const int statuses[] = { 400, 401, 403, 404, 422 };
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;
	size_t i;

	sc_init(&sc, NULL);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		add(&j, "t1", "user:a", 0, 5, statuses[i], NULL, -1);
		add(&j, "t1", "user:a", 900, 905, 200, NULL, -1);
		res = run(&sc, &j);
		r = get(res, "classify.no_retry_4xx");
		CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
		CU_ASSERT_TRUE(evidence_is(r, 2, 1, 2));
		CU_ASSERT_TRUE(detail_has(r, "and sent 1 more attempt"));
		free_results(res);
		jb_release(&j);
	}
	sc_release(&sc);
}

static void no_retry_4xx__is_na_without_such_a_status(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 409, NULL, -1);
	add(&j, "t1", "user:a", 100, 105, 429, NULL, -1);
	add(&j, "t1", "user:a", 200, 205, 200, NULL, -1);
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "classify.no_retry_4xx")->verdict, HX_NA);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void no_retry_4xx__asking_something_else_after_a_404_is_no_retry(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	/* a write's status read by key finds no such endpoint (404), then
	 * the client asks by client reference: another request, no retry */
	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 404, NULL, -1);
	free(j.a[0].path);
	j.a[0].path = fa_xstrdup("/v1/operations/idk_1");
	add(&j, "t1", "user:a", 10, 15, 200, NULL, -1);
	free(j.a[1].path);
	j.a[1].path = fa_xstrdup("/v1/records");
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "classify.no_retry_4xx")->verdict, HX_PASS);
	free_results(res);
	/* the same request again is a retry, whatever its query */
	add(&j, "t1", "user:a", 20, 25, 404, NULL, -1);
	free(j.a[2].path);
	j.a[2].path = fa_xstrdup("/v1/operations/idk_1");
	res = run(&sc, &j);
	CU_ASSERT_EQUAL(get(res, "classify.no_retry_4xx")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(get(res, "classify.no_retry_4xx"), 2, 1, 3));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- attempts.hidden across a restart ---- */

static void hidden__sums_what_each_client_process_reported(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_client_msg m[3];
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	size_t n = 0;

	/* the killed process announced one attempt and died; the restarted
	 * one made one more and reported attempts 1: two in all */
	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, -1, 0, NULL, -1);
	add(&j, "t1", "user:a", 100, 101, 200, NULL, -1);
	memset(m, 0, sizeof(m));
	m[0].type = "action_sent";
	m[0].task = "t1";
	m[1].type = "action_sent";
	m[1].task = "t1";
	m[1].session = 1;
	m[2].type = "result";
	m[2].task = "t1";
	m[2].session = 1;
	m[2].json = cJSON_Parse("{\"attempts\": 1}");
	in = (struct hx_check_input){ .sc = &sc.s,
		                      .attempts = j.a,
		                      .n_attempts = j.n,
		                      .mode = HX_MODE_STDIO,
		                      .msgs = m,
		                      .n_msgs = 3 };
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_EQUAL(get(res, "attempts.hidden")->verdict, HX_PASS);
	free_results(res);
	/* counted in one process only, the first one's attempt is missing */
	m[0].session = 1;
	hx_check_run_all(&in, &res, &n);
	CU_ASSERT_EQUAL(get(res, "attempts.hidden")->verdict, HX_FAIL);
	CU_ASSERT_TRUE(
	        detail_has(get(res, "attempts.hidden"), "reported 1 attempt, the provider saw 2"));
	free_results(res);
	cJSON_Delete(m[2].json);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- wait.scope_pause ---- */

static void scope_pause__passes_when_the_scope_waits(void)
{
	static const int64_t sent[4] = { 0, 0, 300, 0 };
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:a", 2, 4, 200, NULL, -1);     /* before the pause */
	add(&j, "t4", "user:b", 300, 301, 200, NULL, -1); /* other scope */
	add(&j, "t2", "user:a", 10030, 10031, 200, NULL, -1);
	add(&j, "t3", "user:a", 10100, 10101, 200, NULL, -1);
	add(&j, NULL, "user:a", 400, 401, 200, NULL, -1); /* unattributed */
	res = run_sent(&sc, &j, sent);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_PASS);
	CU_ASSERT_TRUE(evidence_is(r, 2, 1, 5));
	/* t2 was handed over before the pause: t3 is the one that shows it */
	CU_ASSERT_TRUE(detail_has(r, "the earliest handed over while it ran, task t3 seq 5 "
	                             "(its first attempt; the task was handed over to the "
	                             "client 295.0 ms after the pausing answer), arrived at "
	                             "+10100.0 ms"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* The attempt named is t2's first, sent 495 ms after the 429 went out:
 * the detail says so, so it does not read as a retry. */
static void scope_pause__fails_another_task_inside_the_pause(void)
{
	static const int64_t sent[4] = { 0, 500, 8000, -1 };
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:a", 505, 506, 200, NULL, -1);
	add(&j, "t3", "user:a", 9000, 9001, 200, NULL, -1);
	add(&j, "t1", "user:a", 10010, 10011, 200, NULL, -1);
	res = run_sent(&sc, &j, sent);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(evidence_is(r, 3, 1, 2, 3));
	CU_ASSERT_TRUE(detail_has(r, "first: task t2 arrived 9500.0 ms inside"));
	CU_ASSERT_TRUE(detail_has(r, "scope user:a"));
	CU_ASSERT_TRUE(detail_has(r, "seq 2 at +505.0 ms (its first attempt; the task was "
	                             "handed over to the client 495.0 ms after the pausing "
	                             "answer), the pause told to task t1 at seq 1 at +5.0 ms "
	                             "lasts until +10005.0 ms"));
	/* The told task itself waited. */
	CU_ASSERT_EQUAL(get(res, "wait.retry_after")->verdict, HX_PASS);
	free_results(res);
	jb_release(&j);

	/* a retry inside the pause is named as one */
	add(&j, "t2", "user:a", 0, 1, 503, NULL, -1);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:a", 700, 701, 200, NULL, -1);
	res = run_sent(&sc, &j, sent);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_FAIL);
	CU_ASSERT_TRUE(detail_has(r, "seq 3 at +700.0 ms (its attempt 2, a retry)"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* Every other task of the scope was handed over before the pausing answer
 * or after the pause (a late start, or an adapter whose hook runs late):
 * no attempt was one the client could have sent inside it, so a pass
 * would be empty. */
static void scope_pause__is_na_when_no_task_was_handed_over_inside_the_pause(void)
{
	static const int64_t sent[4] = { 0, 0, 1200, -1 };
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 100, 120, 429, "1", 1120);
	add(&j, "t2", "user:a", 10, 11, 200, NULL, -1);
	add(&j, "t2", "user:a", 1130, 1131, 200, NULL, -1);
	add(&j, "t3", "user:a", 1210, 1211, 200, NULL, -1);
	add(&j, "t1", "user:a", 1300, 1301, 200, NULL, -1);
	res = run_sent(&sc, &j, sent);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(r, "no other task of scope user:a was handed over to the "
	                             "client while its pause ran (the pause told to task t1 "
	                             "at seq 1: +120.0 ms to +1120.0 ms; tasks handed over at "
	                             "t2 +0.0 ms, t3 +1200.0 ms)"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void scope_pause__spares_a_request_already_on_its_way(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_task_run runs[4] = { 0 };
	struct hx_check_input in;
	struct hx_check_result *res = NULL;
	size_t n = 0, i;
	int round;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:a", 30, 31, 200, NULL, -1);
	add(&j, "t2", "user:a", 10030, 10031, 200, NULL, -1);
	add(&j, "t3", "user:a", 10040, 10041, 200, NULL, -1);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 4; i++) {
			runs[i].spec = &sc.tasks[i];
			runs[i].sent = i < 3;
			runs[i].t_sent_us = i < 2 ? 0 : i == 2 ? 100 * MS : -1;
			runs[i].t_cancel_us = -1;
			runs[i].t_quiet_until_us = -1;
			runs[i].t_exit_us = -1;
		}
		if (round == 1)
			runs[1].t_sent_us = 10 * MS; /* after the 429 went out */
		in = (struct hx_check_input){ .sc = &sc.s,
			                      .attempts = j.a,
			                      .n_attempts = j.n,
			                      .tasks = runs,
			                      .n_tasks = 4,
			                      .mode = HX_MODE_STDIO };
		hx_check_run_all(&in, &res, &n);
		CU_ASSERT_EQUAL(get(res, "wait.scope_pause")->verdict,
		                round == 0 ? HX_PASS : HX_FAIL);
		free_results(res);
	}
	jb_release(&j);
	sc_release(&sc);
}

/* t2 retries 25 ms after t1's 429 went out: a retry that crossed the
 * answer is spared; 75 ms after it (past the 50 ms tolerance), it counts. */
static void scope_pause__spares_a_retry_that_crossed_the_answer(void)
{
	int64_t late;

	for (late = 30; late <= 80; late += 50) {
		struct sc sc;
		struct jb j = { .n = 0 };
		struct hx_check_result *res;
		const struct hx_check_result *r;

		sc_init(&sc, NULL);
		add(&j, "t2", "user:a", 0, 1, 200, NULL, -1);
		add(&j, "t1", "user:a", 2, 5, 429, "10", 10005);
		add(&j, "t2", "user:a", late, late + 1, 200, NULL, -1);
		add(&j, "t1", "user:a", 10010, 10011, 200, NULL, -1);
		add(&j, "t3", "user:a", 10020, 10021, 200, NULL, -1);
		res = run(&sc, &j);
		r = get(res, "wait.scope_pause");
		/* t3 came only after the pause: at 30 ms nothing is judged */
		CU_ASSERT_EQUAL(r->verdict, late == 30 ? HX_NA : HX_FAIL);
		if (late == 30)
			CU_ASSERT_TRUE(detail_has(r, "no other task of scope user:a was "
			                             "handed over"));
		if (late != 30)
			CU_ASSERT_TRUE(detail_has(r, "task t2 arrived 9925.0 ms inside"));
		free_results(res);
		jb_release(&j);
		sc_release(&sc);
	}
}

static void scope_pause__takes_the_tolerance_from_expect(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;

	sc_init(&sc, "{\"wait.scope_pause\": {\"tolerance_ms\": 1000}}");
	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:a", 9500, 9501, 200, NULL, -1);
	res = run_sent(&sc, &j, (const int64_t[4]){ 0, 100, -1, -1 });
	CU_ASSERT_EQUAL(get(res, "wait.scope_pause")->verdict, HX_PASS);
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

static void scope_pause__is_na_without_a_pause_or_another_task(void)
{
	struct sc sc;
	struct jb j = { .n = 0 };
	struct hx_check_result *res;
	const struct hx_check_result *r;

	sc_init(&sc, NULL);
	add(&j, "t1", "user:a", 0, 5, 200, NULL, -1);
	add(&j, "t2", "user:a", 0, 5, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(r, "no response announced a future pause"));
	free_results(res);
	jb_release(&j);

	add(&j, "t1", "user:a", 0, 5, 429, "10", 10005);
	add(&j, "t2", "user:b", 100, 105, 200, NULL, -1);
	add(&j, "t1", "user:a", 10100, 10105, 200, NULL, -1);
	res = run(&sc, &j);
	r = get(res, "wait.scope_pause");
	CU_ASSERT_EQUAL(r->verdict, HX_NA);
	CU_ASSERT_TRUE(detail_has(r, "no other task of the scope"));
	free_results(res);
	jb_release(&j);
	sc_release(&sc);
}

/* ---- grading ---- */

/* A scenario result holding one verdict per check (definition order):
 * the first five, outcome.expected (the fourth) passing unless all the
 * others are n/a. */
#define GS_N  5
#define GS_SP 4 /* wait.scope_pause's index */
struct gs {
	struct hx_check_result c[GS_N];
};

static void gs_set(struct gs *g, enum hx_verdict b, enum hx_verdict ra, enum hx_verdict c4,
                   enum hx_verdict sp)
{
	bool none = b == HX_NA && ra == HX_NA && c4 == HX_NA && sp == HX_NA;
	enum hx_verdict v[GS_N] = { b, ra, c4, none ? HX_NA : HX_PASS, sp };
	size_t i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < GS_N; i++) {
		g->c[i].id = hx_check_def_at(i)->id;
		g->c[i].level = hx_check_def_at(i)->level;
		g->c[i].required = true;
		g->c[i].verdict = v[i];
	}
}

static void grade(struct hx_run_result *r, struct hx_scenario_result *s, struct gs *g, size_t n,
                  int min_level)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].checks = g[i].c;
		s[i].n_checks = GS_N;
	}
	r->scenarios = s;
	r->n_scenarios = n;
	r->min_level = min_level;
	r->level = -1;
	r->exit_code = -1;
	hx_grade_run(r);
}

static void grade__all_pass_reaches_l2_and_exits_0(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[1];
	struct gs g[1];

	gs_set(&g[0], HX_PASS, HX_PASS, HX_PASS, HX_PASS);
	grade(&r, s, g, 1, 0);
	CU_ASSERT_EQUAL(r.level, 2);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	grade(&r, s, g, 1, 2);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	/* No L3 check was counted: asking for it cannot be met. */
	grade(&r, s, g, 1, 3);
	CU_ASSERT_EQUAL(r.level, 2);
	CU_ASSERT_EQUAL(r.exit_code, 1);
}

static void grade__write_checks_reach_l3(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s;
	struct hx_check_result c[10];
	size_t i;

	memset(c, 0, sizeof(c));
	for (i = 0; i < 10; i++) {
		c[i].id = hx_check_def_at(i)->id;
		c[i].level = hx_check_def_at(i)->level;
		c[i].required = true;
		c[i].verdict = HX_PASS;
	}
	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	s.checks = c;
	s.n_checks = 10;
	r.scenarios = &s;
	r.n_scenarios = 1;
	r.min_level = 3;
	hx_grade_run(&r);
	CU_ASSERT_EQUAL(r.level, 3);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	/* one write check n/a (exec mode, say): L3 is not reached */
	c[8].verdict = HX_NA;
	hx_grade_run(&r);
	CU_ASSERT_EQUAL(r.level, 2);
	CU_ASSERT_EQUAL(r.exit_code, 1);
}

static void grade__checks_combine_across_scenarios(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[2];
	struct gs g[2];

	/* n/a in one scenario, pass in another: pass over the suite. */
	gs_set(&g[0], HX_PASS, HX_PASS, HX_NA, HX_NA);
	gs_set(&g[1], HX_NA, HX_PASS, HX_PASS, HX_PASS);
	grade(&r, s, g, 2, 0);
	CU_ASSERT_EQUAL(r.level, 2);
	CU_ASSERT_EQUAL(r.exit_code, 0);

	/* A fail anywhere wins over a pass elsewhere. */
	gs_set(&g[1], HX_NA, HX_FAIL, HX_PASS, HX_PASS);
	grade(&r, s, g, 2, 0);
	CU_ASSERT_EQUAL(r.level, 0);
	CU_ASSERT_EQUAL(r.exit_code, 1);
}

static void grade__na_blocks_a_level_but_not_the_exit_code(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[1];
	struct gs g[1];

	gs_set(&g[0], HX_PASS, HX_PASS, HX_PASS, HX_NA);
	grade(&r, s, g, 1, 0);
	CU_ASSERT_EQUAL(r.level, 1);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	grade(&r, s, g, 1, 2);
	CU_ASSERT_EQUAL(r.level, 1);
	CU_ASSERT_EQUAL(r.exit_code, 1);

	/* L2 passing does not lift a level whose L1 is incomplete. */
	gs_set(&g[0], HX_PASS, HX_NA, HX_PASS, HX_PASS);
	grade(&r, s, g, 1, 0);
	CU_ASSERT_EQUAL(r.level, 0);
	CU_ASSERT_EQUAL(r.exit_code, 0);
}

static void grade__nothing_passed_exits_1(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[1];
	struct gs g[1];

	gs_set(&g[0], HX_NA, HX_NA, HX_NA, HX_NA);
	grade(&r, s, g, 1, 0);
	CU_ASSERT_EQUAL(r.level, 0);
	CU_ASSERT_EQUAL(r.exit_code, 1);
	grade(&r, s, g, 0, 0);
	CU_ASSERT_EQUAL(r.level, 0);
	CU_ASSERT_EQUAL(r.exit_code, 1);
}

static void grade__recommended_failure_does_not_count(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[1];
	struct gs g[1];

	gs_set(&g[0], HX_PASS, HX_PASS, HX_PASS, HX_FAIL);
	g[0].c[GS_SP].required = false;
	grade(&r, s, g, 1, 0);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	/* The only L2 check is not counted: L2 has nothing to show. */
	CU_ASSERT_EQUAL(r.level, 1);
}

static void grade__scenario_error_exits_2(void)
{
	struct hx_run_result r;
	struct hx_scenario_result s[2];
	struct gs g[2];

	gs_set(&g[0], HX_PASS, HX_PASS, HX_PASS, HX_PASS);
	gs_set(&g[1], HX_PASS, HX_PASS, HX_PASS, HX_PASS);
	grade(&r, s, g, 2, 0);
	CU_ASSERT_EQUAL(r.exit_code, 0);
	s[1].error = "client could not start";
	s[1].n_checks = 0;
	hx_grade_run(&r);
	CU_ASSERT_EQUAL(r.exit_code, 2);
	CU_ASSERT_EQUAL(r.level, 2);
	s[1].error = NULL;
}

void test_check_register(void)
{
	CU_pSuite s = CU_add_suite("check", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "check__defines_every_check_in_order", check__defines_every_check_in_order);
	CU_add_test(s, "check__sources_name_the_references", check__sources_name_the_references);
	CU_add_test(s, "check__docs_table_matches_the_definitions",
	            check__docs_table_matches_the_definitions);
	CU_add_test(s, "check__strict_makes_every_check_required",
	            check__strict_makes_every_check_required);
	CU_add_test(s, "check__step_5_checks_reach_their_modules",
	            check__step_5_checks_reach_their_modules);
	CU_add_test(s, "check__unattributed_attempts_fail_bounded_and_nothing_else",
	            check__unattributed_attempts_fail_bounded_and_nothing_else);
	CU_add_test(s, "check__expect_overrides_required", check__expect_overrides_required);
	CU_add_test(s, "bounded__passes_within_budget", bounded__passes_within_budget);
	CU_add_test(s, "bounded__fails_a_client_killed_by_its_timeout",
	            bounded__fails_a_client_killed_by_its_timeout);
	CU_add_test(s, "bounded__fails_over_budget_with_the_excess_as_evidence",
	            bounded__fails_over_budget_with_the_excess_as_evidence);
	CU_add_test(s, "bounded__fails_a_tight_loop_after_a_past_retry_after",
	            bounded__fails_a_tight_loop_after_a_past_retry_after);
	CU_add_test(s, "bounded__fails_a_tight_loop_after_an_invalid_retry_after",
	            bounded__fails_a_tight_loop_after_an_invalid_retry_after);
	CU_add_test(s, "bounded__passes_a_small_delay_after_a_past_retry_after",
	            bounded__passes_a_small_delay_after_a_past_retry_after);
	CU_add_test(s, "bounded__is_na_without_budget_or_bad_retry_after",
	            bounded__is_na_without_budget_or_bad_retry_after);
	CU_add_test(s, "retry_after__passes_a_retry_after_the_pause",
	            retry_after__passes_a_retry_after_the_pause);
	CU_add_test(s, "retry_after__passes_inside_the_default_tolerance",
	            retry_after__passes_inside_the_default_tolerance);
	CU_add_test(s, "retry_after__fails_an_early_retry_with_how_early",
	            retry_after__fails_an_early_retry_with_how_early);
	CU_add_test(s, "retry_after__takes_the_tolerance_from_expect",
	            retry_after__takes_the_tolerance_from_expect);
	CU_add_test(s, "retry_after__ignores_attempts_sent_before_the_answer",
	            retry_after__ignores_attempts_sent_before_the_answer);
	CU_add_test(s, "retry_after__is_na_without_a_pause_or_a_retry",
	            retry_after__is_na_without_a_pause_or_a_retry);
	CU_add_test(s, "retry_after__names_the_header_the_journal_took_the_pause_from",
	            retry_after__names_the_header_the_journal_took_the_pause_from);
	CU_add_test(s, "retry_after__names_an_error_frame_pause_as_the_frames",
	            retry_after__names_an_error_frame_pause_as_the_frames);
	CU_add_test(s, "retry_after__ignores_a_pause_the_client_never_got",
	            retry_after__ignores_a_pause_the_client_never_got);
	CU_add_test(s, "no_retry_4xx__passes_when_the_task_stops",
	            no_retry_4xx__passes_when_the_task_stops);
	CU_add_test(s, "no_retry_4xx__fails_a_retry_of_each_status",
	            no_retry_4xx__fails_a_retry_of_each_status);
	CU_add_test(s, "no_retry_4xx__is_na_without_such_a_status",
	            no_retry_4xx__is_na_without_such_a_status);
	CU_add_test(s, "no_retry_4xx__asking_something_else_after_a_404_is_no_retry",
	            no_retry_4xx__asking_something_else_after_a_404_is_no_retry);
	CU_add_test(s, "hidden__sums_what_each_client_process_reported",
	            hidden__sums_what_each_client_process_reported);
	CU_add_test(s, "scope_pause__spares_a_request_already_on_its_way",
	            scope_pause__spares_a_request_already_on_its_way);
	CU_add_test(s, "scope_pause__spares_a_retry_that_crossed_the_answer",
	            scope_pause__spares_a_retry_that_crossed_the_answer);
	CU_add_test(s, "scope_pause__passes_when_the_scope_waits",
	            scope_pause__passes_when_the_scope_waits);
	CU_add_test(s, "scope_pause__fails_another_task_inside_the_pause",
	            scope_pause__fails_another_task_inside_the_pause);
	CU_add_test(s, "scope_pause__is_na_when_no_task_was_handed_over_inside_the_pause",
	            scope_pause__is_na_when_no_task_was_handed_over_inside_the_pause);
	CU_add_test(s, "scope_pause__takes_the_tolerance_from_expect",
	            scope_pause__takes_the_tolerance_from_expect);
	CU_add_test(s, "scope_pause__is_na_without_a_pause_or_another_task",
	            scope_pause__is_na_without_a_pause_or_another_task);
	CU_add_test(s, "grade__all_pass_reaches_l2_and_exits_0",
	            grade__all_pass_reaches_l2_and_exits_0);
	CU_add_test(s, "grade__write_checks_reach_l3", grade__write_checks_reach_l3);
	CU_add_test(s, "grade__checks_combine_across_scenarios",
	            grade__checks_combine_across_scenarios);
	CU_add_test(s, "grade__na_blocks_a_level_but_not_the_exit_code",
	            grade__na_blocks_a_level_but_not_the_exit_code);
	CU_add_test(s, "grade__nothing_passed_exits_1", grade__nothing_passed_exits_1);
	CU_add_test(s, "grade__recommended_failure_does_not_count",
	            grade__recommended_failure_does_not_count);
	CU_add_test(s, "grade__scenario_error_exits_2", grade__scenario_error_exits_2);
}
