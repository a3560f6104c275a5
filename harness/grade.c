/* grade.c -- a whole run's level and exit code, from its scenarios' check verdicts. */
#include "grade.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"

static size_t def_index(const char *id, size_t n_defs)
{
	size_t i;

	for (i = 0; id != NULL && i < n_defs; i++)
		if (strcmp(hx_check_def_at(i)->id, id) == 0)
			return i;
	return n_defs;
}

void hx_grade_run(struct hx_run_result *r)
{
	const size_t n_defs = hx_check_count();
	enum hx_verdict *suite = fa_xcalloc(n_defs ? n_defs : 1, sizeof(*suite));
	bool *counted = fa_xcalloc(n_defs ? n_defs : 1, sizeof(*counted));
	bool broken = false, failed = false, passed = false;
	size_t i, j, d;
	int k;

	for (d = 0; d < n_defs; d++)
		suite[d] = HX_NA;
	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		if (s->error != NULL)
			broken = true;
		for (j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *cr = &s->checks[j];

			d = def_index(cr->id, n_defs);
			if (d == n_defs || !cr->required)
				continue;
			counted[d] = true;
			if (cr->verdict == HX_FAIL) {
				suite[d] = HX_FAIL;
				failed = true;
			} else if (cr->verdict == HX_PASS) {
				if (suite[d] != HX_FAIL)
					suite[d] = HX_PASS;
				passed = true;
			}
		}
	}

	/* A level with no counted check is not reached: nothing showed it. */
	r->level = 0;
	for (k = 1; k <= HX_MAX_LEVEL; k++) {
		size_t n_at = 0;
		bool all_pass = true;

		for (d = 0; d < n_defs; d++) {
			if (hx_check_def_at(d)->level != k || !counted[d])
				continue;
			n_at++;
			if (suite[d] != HX_PASS)
				all_pass = false;
		}
		if (n_at == 0 || !all_pass)
			break;
		r->level = k;
	}

	free(suite);
	free(counted);
	if (broken)
		r->exit_code = 2;
	else if (failed || !passed || r->level < r->min_level)
		r->exit_code = 1;
	else
		r->exit_code = 0;
}
