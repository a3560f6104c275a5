/* grade.c -- a whole run's level and exit code, from its scenarios' check verdicts; repeated runs
 * combined. */
#include "grade.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "known_failing.h"

/* What hx_grade_run() and its reason read off a run. */
struct grading {
	size_t n_defs;
	enum hx_verdict *suite; /* owned: per check def, over its counted results */
	bool *counted;          /* owned: per check def, required in some scenario */
	size_t broken;          /* scenarios that could not run */
	bool failed;            /* a counted check failed that the list does not forgive */
	bool passed;            /* a counted check passed somewhere */
	size_t n_known;         /* listed checks that failed, forgiven */
	size_t n_passes_now;    /* listed checks whose suite verdict is pass */
};

static size_t def_index(const char *id, size_t n_defs)
{
	size_t i;

	for (i = 0; id != NULL && i < n_defs; i++)
		if (strcmp(hx_check_def_at(i)->id, id) == 0)
			return i;
	return n_defs;
}

bool hx_grade_counts(const struct hx_run_result *r, const struct hx_check_result *cr)
{
	return (cr->required || r->strict) && !cr->uncovered;
}

static void grading_init(struct grading *g, const struct hx_run_result *r)
{
	size_t i, j, d;

	memset(g, 0, sizeof(*g));
	g->n_defs = hx_check_count();
	g->suite = fa_xcalloc(g->n_defs ? g->n_defs : 1, sizeof(*g->suite));
	g->counted = fa_xcalloc(g->n_defs ? g->n_defs : 1, sizeof(*g->counted));
	for (d = 0; d < g->n_defs; d++)
		g->suite[d] = HX_NA;
	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		if (s->error != NULL)
			g->broken++;
		for (j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *cr = &s->checks[j];

			d = def_index(cr->id, g->n_defs);
			if (d == g->n_defs || !hx_grade_counts(r, cr))
				continue;
			g->counted[d] = true;
			if (cr->verdict == HX_FAIL) {
				g->suite[d] = HX_FAIL;
			} else if (cr->verdict == HX_PASS) {
				if (g->suite[d] != HX_FAIL)
					g->suite[d] = HX_PASS;
				g->passed = true;
			}
		}
	}
	for (d = 0; d < g->n_defs; d++) {
		bool listed =
		        hx_known_failing_find(r->known_failing, hx_check_def_at(d)->id) != NULL;

		if (g->suite[d] == HX_FAIL && listed)
			g->n_known++;
		else if (g->suite[d] == HX_FAIL)
			g->failed = true;
		else if (g->suite[d] == HX_PASS && listed)
			g->n_passes_now++;
	}
}

static void grading_release(struct grading *g)
{
	free(g->suite);
	free(g->counted);
}

void hx_grade_run(struct hx_run_result *r)
{
	struct grading g;
	size_t d;
	int k;

	grading_init(&g, r);
	/* A level with no counted check is not reached: nothing showed it.
	 * A known failing check still fails: the level stays honest. */
	r->level = 0;
	for (k = 1; k <= HX_MAX_LEVEL; k++) {
		size_t n_at = 0;
		bool all_pass = true;

		for (d = 0; d < g.n_defs; d++) {
			if (hx_check_def_at(d)->level != k || !g.counted[d])
				continue;
			n_at++;
			if (g.suite[d] != HX_PASS)
				all_pass = false;
		}
		if (n_at == 0 || !all_pass)
			break;
		r->level = k;
	}
	if (g.broken > 0)
		r->exit_code = 2;
	else if (g.failed || g.n_passes_now > 0 || !g.passed || r->level < r->min_level)
		r->exit_code = 1;
	else
		r->exit_code = 0;
	grading_release(&g);
}

enum hx_verdict hx_grade_suite_verdict(const struct hx_run_result *r, const char *id, bool *counted)
{
	enum hx_verdict v[2] = { HX_NA, HX_NA }; /* [0] counted only, [1] all */
	bool any = false;
	size_t i, j, k;

	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		for (j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *c = &s->checks[j];

			if (c->id == NULL || id == NULL || strcmp(c->id, id) != 0 || c->uncovered)
				continue;
			if (hx_grade_counts(r, c))
				any = true;
			for (k = hx_grade_counts(r, c) ? 0 : 1; k < 2; k++) {
				if (c->verdict == HX_FAIL)
					v[k] = HX_FAIL;
				else if (c->verdict == HX_PASS && v[k] != HX_FAIL)
					v[k] = HX_PASS;
			}
		}
	}
	if (counted != NULL)
		*counted = any;
	return any ? v[0] : v[1];
}

void hx_grade_profile(const struct hx_run_result *r, const char *id, struct hx_profile_entry *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		for (size_t j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *c = &s->checks[j];

			if (c->id == NULL || id == NULL || strcmp(c->id, id) != 0)
				continue;
			if (c->uncovered)
				p->not_covered++;
			else if (c->verdict == HX_PASS)
				p->pass++;
			else if (c->verdict == HX_FAIL)
				p->fail++;
			else
				p->na++;
		}
	}
	p->covered = p->pass + p->fail + p->na > 0;
	p->verdict = hx_grade_suite_verdict(r, id, &p->counted);
}

bool hx_grade_covered(const struct hx_run_result *r, const char *id)
{
	struct hx_profile_entry p;

	hx_grade_profile(r, id, &p);
	return p.covered;
}

const char *hx_grade_profile_str(const struct hx_profile_entry *p)
{
	return p->covered ? hx_verdict_str(p->verdict) : "not_covered";
}

enum hx_known_state hx_grade_known_state(const struct hx_run_result *r, const char *id)
{
	bool counted;
	enum hx_verdict v;

	if (hx_known_failing_find(r->known_failing, id) == NULL)
		return HX_KNOWN_UNLISTED;
	v = hx_grade_suite_verdict(r, id, &counted);
	if (!counted || v == HX_NA)
		return HX_KNOWN_NA;
	return v == HX_FAIL ? HX_KNOWN_FAILING : HX_KNOWN_PASSES_NOW;
}

/* "known-failing entry X passes now: remove it from FILE", or with several
 * "known-failing entries X, Y pass now: remove them from FILE". */
static char *passes_now_reason(const struct hx_run_result *r, size_t n)
{
	const struct hx_known_failing *kf = r->known_failing;
	char *ids = fa_xstrdup(""), *next, *why;
	size_t i;

	for (i = 0; i < kf->n_entries; i++) {
		if (hx_grade_known_state(r, kf->entries[i].id) != HX_KNOWN_PASSES_NOW)
			continue;
		next = fa_xasprintf("%s%s%s", ids, ids[0] ? ", " : "", kf->entries[i].id);
		free(ids);
		ids = next;
	}
	why = fa_xasprintf("known-failing %s %s pass%s now: remove %s from %s",
	                   n == 1 ? "entry" : "entries", ids, n == 1 ? "es" : "",
	                   n == 1 ? "it" : "them", kf->file);
	free(ids);
	return why;
}

/* The reason of one run, ignoring ->repeat. */
static char *run_reason(const struct hx_run_result *r)
{
	struct grading g;
	char *why;

	grading_init(&g, r);
	if (r->exit_code == 0 && g.n_known > 0)
		why = fa_xasprintf("no required check failed but %zu known failing, and at "
		                   "least one passed",
		                   g.n_known);
	else if (r->exit_code == 0)
		why = fa_xstrdup("no required check failed and at least one passed");
	else if (r->exit_code == 2 && r->interrupted)
		why = fa_xstrdup("interrupted");
	else if (r->exit_code == 2)
		why = fa_xasprintf("%zu scenario%s could not run", g.broken,
		                   g.broken == 1 ? "" : "s");
	else if (g.failed)
		why = fa_xstrdup("a required check failed");
	else if (g.n_passes_now > 0)
		why = passes_now_reason(r, g.n_passes_now);
	else if (!g.passed)
		why = fa_xstrdup("no required check passed");
	else if (r->level < r->min_level)
		why = fa_xasprintf("level L%d is below the minimum L%d", r->level, r->min_level);
	else
		why = fa_xstrdup("the run did not meet its requirements");
	grading_release(&g);
	return why;
}

char *hx_grade_exit_reason(const struct hx_run_result *r)
{
	const struct hx_repeat *rep = r->repeat;

	if (r->exit_code == 2 && r->interrupted)
		return fa_xstrdup("interrupted");
	if (rep == NULL || rep->runs <= 1 || rep->worst_reason == NULL)
		return run_reason(r);
	if (rep->exit_code == 0)
		return fa_xasprintf("in each of %u runs: %s", rep->runs, rep->worst_reason);
	return fa_xasprintf("run %u of %u (seed %" PRIu64 "): %s", rep->worst_run + 1, rep->runs,
	                    rep->first_seed + rep->worst_run, rep->worst_reason);
}

void hx_repeat_init(struct hx_repeat *rep, unsigned planned, uint64_t first_seed)
{
	memset(rep, 0, sizeof(*rep));
	rep->planned = planned < 1 ? 1 : planned > HX_REPEAT_MAX ? HX_REPEAT_MAX : planned;
	rep->first_seed = first_seed;
	rep->n_tally = hx_check_count();
	rep->tally = fa_xcalloc(rep->n_tally ? rep->n_tally : 1, sizeof(*rep->tally));
	rep->levels = fa_xcalloc(rep->planned, sizeof(*rep->levels));
	rep->exit_codes = fa_xcalloc(rep->planned, sizeof(*rep->exit_codes));
}

void hx_repeat_add(struct hx_repeat *rep, const struct hx_run_result *r)
{
	int code = r->interrupted ? 2 : r->exit_code;
	size_t d;

	if (rep->runs >= rep->planned)
		return;
	for (d = 0; d < rep->n_tally; d++) {
		struct hx_repeat_tally *t = &rep->tally[d];
		bool counted;
		enum hx_verdict v = hx_grade_suite_verdict(r, hx_check_def_at(d)->id, &counted);

		if (v == HX_PASS)
			t->pass++;
		else if (v == HX_FAIL)
			t->fail++;
		else
			t->na++;
		t->counted = t->counted || counted;
	}
	rep->levels[rep->runs] = r->level;
	rep->exit_codes[rep->runs] = code;
	if (rep->runs == 0 || r->level < rep->level)
		rep->level = r->level;
	if (rep->runs == 0 || code > rep->exit_code) {
		rep->exit_code = code;
		rep->worst_run = rep->runs;
		free(rep->worst_reason);
		rep->worst_reason = run_reason(r);
	}
	rep->runs++;
}

void hx_repeat_release(struct hx_repeat *rep)
{
	if (rep == NULL)
		return;
	free(rep->tally);
	free(rep->levels);
	free(rep->exit_codes);
	free(rep->worst_reason);
	memset(rep, 0, sizeof(*rep));
}
