/* recap.c -- why a run ended where it did, worked out from the graded scenario results. */
#include "recap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "grade.h"

/* How results of one check are picked for a row. */
enum pick { PICK_FAIL_COUNTED, PICK_FAIL, PICK_NA_COUNTED };

static bool picked(const struct hx_run_result *r, const struct hx_check_result *c, enum pick p)
{
	switch (p) {
	case PICK_FAIL_COUNTED: return c->verdict == HX_FAIL && hx_grade_counts(r, c);
	case PICK_FAIL: return c->verdict == HX_FAIL;
	case PICK_NA_COUNTED: return c->verdict == HX_NA && hx_grade_counts(r, c);
	}
	return false;
}

/* Fill @row with the first result of check @id that @p picks; returns
 * how many results it picks over the run. */
static size_t pick_first(const struct hx_run_result *r, const char *id, enum pick p,
                         struct hx_recap_row *row)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		/* an n/a of a scenario that did not finish is its error's, said
		 * below the checks */
		if (p == PICK_NA_COUNTED && s->error != NULL)
			continue;
		for (size_t j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *c = &s->checks[j];

			if (c->id == NULL || strcmp(c->id, id) != 0 || !picked(r, c, p))
				continue;
			if (n++ == 0) {
				row->where = s;
				row->detail = c->detail;
				row->counted = hx_grade_counts(r, c);
			}
		}
	}
	return n;
}

static struct hx_recap_row *add_row(struct hx_recap *rc, enum hx_recap_kind kind)
{
	struct hx_recap_row *row;

	rc->rows = fa_xrealloc(rc->rows, (rc->n + 1) * sizeof(*rc->rows));
	row = &rc->rows[rc->n++];
	memset(row, 0, sizeof(*row));
	row->kind = kind;
	return row;
}

static void add_failures(const struct hx_run_result *r, struct hx_recap *rc)
{
	for (size_t d = 0; d < hx_check_count(); d++) {
		const struct hx_check_def *def = hx_check_def_at(d);
		struct hx_recap_row row = { .kind = HX_RECAP_FAIL, .def = def };
		size_t n_all = pick_first(r, def->id, PICK_FAIL, &row);

		if (n_all == 0)
			continue;
		/* the counted failure is the one behind the exit code */
		pick_first(r, def->id, PICK_FAIL_COUNTED, &row);
		row.more = n_all - 1;
		row.known = hx_grade_known_state(r, def->id) == HX_KNOWN_FAILING;
		*add_row(rc, HX_RECAP_FAIL) = row;
	}
}

/* Level r->level + 1 is not reached: name what held it, beyond failures. */
static void add_held_level(const struct hx_run_result *r, struct hx_recap *rc)
{
	int next = r->level + 1;
	size_t n_at = 0;

	if (r->level >= HX_MAX_LEVEL)
		return;
	for (size_t d = 0; d < hx_check_count(); d++) {
		const struct hx_check_def *def = hx_check_def_at(d);
		struct hx_recap_row row = { .kind = HX_RECAP_NA, .def = def, .level = next };
		bool counted;
		enum hx_verdict v;
		size_t n_na;

		if (def->level != next)
			continue;
		v = hx_grade_suite_verdict(r, def->id, &counted);
		if (!counted)
			continue;
		n_at++;
		if (v != HX_NA)
			continue;
		n_na = pick_first(r, def->id, PICK_NA_COUNTED, &row);
		if (n_na == 0)
			continue; /* n/a only where a scenario did not finish */
		row.more = n_na - 1;
		*add_row(rc, HX_RECAP_NA) = row;
	}
	/* a level left empty by scenarios that did not run is their error's */
	for (size_t i = 0; i < r->n_scenarios && n_at == 0; i++)
		if (r->scenarios[i].error != NULL)
			return;
	if (n_at == 0)
		add_row(rc, HX_RECAP_NO_CHECKS)->level = next;
}

void hx_recap_build(const struct hx_run_result *r, struct hx_recap *out)
{
	memset(out, 0, sizeof(*out));
	/* an entry that passes now fails the run by itself */
	for (size_t d = 0; d < hx_check_count(); d++)
		if (hx_grade_known_state(r, hx_check_def_at(d)->id) == HX_KNOWN_PASSES_NOW)
			add_row(out, HX_RECAP_PASSES_NOW)->def = hx_check_def_at(d);
	add_failures(r, out);
	add_held_level(r, out);
}

void hx_recap_release(struct hx_recap *rc)
{
	if (rc == NULL)
		return;
	free(rc->rows);
	memset(rc, 0, sizeof(*rc));
}

size_t hx_recap_uncounted_failures(const struct hx_run_result *r, const char *id)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_scenarios; i++)
		for (size_t j = 0; j < r->scenarios[i].n_checks; j++) {
			const struct hx_check_result *c = &r->scenarios[i].checks[j];

			if (c->id != NULL && strcmp(c->id, id) == 0 && c->verdict == HX_FAIL &&
			    !hx_grade_counts(r, c))
				n++;
		}
	return n;
}
