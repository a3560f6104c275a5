/* judge.c -- what a check's judge reads: its registry row, the prepared journal, its parameters. */
#include "judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

bool hx_check_attributed(const struct hx_check_input *in, const struct fa_attempt *a)
{
	return a->task != NULL && in->sc != NULL && fa_scenario_task(in->sc, a->task) != NULL;
}

bool hx_check_received(const struct fa_attempt *a)
{
	return a->status != 0 && a->t_response_us >= 0 && a->delivered == FA_DELIVERED_COMPLETE;
}

/* A programming error: a judge asked for what the check does not take. */
static void judge_error(const char *what, const char *name)
{
	fprintf(stderr, "fakeapi-harness: internal error: %s %s\n", what, name ? name : "(null)");
	abort();
}

const struct hx_param_value *hx_check_param(const struct hx_check_ctx *c, const char *name)
{
	if (c->def == NULL)
		judge_error("no check in focus for parameter", name);
	for (size_t k = 0; k < c->def->n_params; k++)
		if (strcmp(c->def->params[k].name, name) == 0)
			return &c->ex->v[k];
	if (strcmp(name, hx_param_required.name) == 0)
		return &c->ex->required;
	judge_error(c->def->id, name);
	return NULL;
}

void hx_check_na_empty(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	r->verdict = HX_NA;
	r->detail = fa_xasprintf("the journal has no attributed attempts (%zu unattributed: "
	                         "none names a task of the scenario by its fa_task parameter "
	                         "or X-Fakeapi-Task header)",
	                         c->n_un);
}
