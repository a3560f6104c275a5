/* param.c -- a check's parameters ($.harness.expect["CHECK"]): the table rows, and one scenario's
 * values read by them. */
#include "param.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "schema.h"

const struct hx_check_param hx_param_required = {
	.name = "required",
	.kind = HX_PARAM_BOOL,
	.dflt = HX_PARAM_NO_DEFAULT,
	.doc = "`false` makes the check *recommended* in this scenario, `true` *required* "
	       "(see above); `--strict` overrides both",
};

/* budget.escalates "tasks"[k]: a non-empty string */
static const struct fa_field task_id_field = FA_F_CHECK(NULL, FA_SCHEMA_STRING, FA_FIELD_NONEMPTY);

/* The schema row that checks @p's JSON type and range. */
static struct fa_field field_of(const struct hx_check_param *p)
{
	switch (p->kind) {
	case HX_PARAM_INT: return (struct fa_field)FA_F_RANGE(p->name, 0, p->min, p->max);
	case HX_PARAM_BOOL: return (struct fa_field)FA_F_CHECK(p->name, FA_SCHEMA_BOOL, 0);
	case HX_PARAM_TASKS: break;
	}
	return (struct fa_field)FA_F_CHECK(p->name, FA_SCHEMA_ARRAY, FA_FIELD_NONEMPTY);
}

/* A task list (already a non-empty array): ids of @sc's tasks, each once. */
static enum fa_rc read_tasks(struct fa_schema *s, const cJSON *arr, const struct fa_scenario *sc,
                             struct hx_param_value *v)
{
	enum fa_rc rc = FA_OK;
	size_t k = 0, mark;

	v->tasks = fa_xcalloc(fa_schema_count(arr), sizeof(*v->tasks));
	for (const cJSON *c = arr->child; rc == FA_OK && c != NULL; c = c->next, k++) {
		size_t j = 0;

		mark = fa_schema_enter_index(s, k);
		rc = fa_schema_value(s, c, &task_id_field, NULL);
		if (rc == FA_OK) {
			v->tasks[k] = sc != NULL ? fa_scenario_task(sc, c->valuestring) : NULL;
			if (v->tasks[k] == NULL)
				rc = fa_schema_fail(s, "no task %s in $.harness.tasks",
				                    fa_schema_quote(c->valuestring).s);
		}
		for (const cJSON *d = arr->child; rc == FA_OK && d != c; d = d->next, j++)
			if (strcmp(d->valuestring, c->valuestring) == 0)
				rc = fa_schema_fail(s, "task %s is listed twice (first at [%zu])",
				                    fa_schema_quote(c->valuestring).s, j);
		fa_schema_leave(s, mark);
		v->n_tasks = rc == FA_OK ? k + 1 : k;
	}
	return rc;
}

/* @got (checked by its schema row, or NULL) as @p's value. */
static enum fa_rc read_value(struct fa_schema *s, const cJSON *got, const struct hx_check_param *p,
                             const struct fa_scenario *sc, struct hx_param_value *v)
{
	enum fa_rc rc;
	size_t mark;

	v->i = p->dflt;
	if (got == NULL)
		return FA_OK;
	v->given = true;
	if (p->kind == HX_PARAM_INT)
		v->i = (int64_t)got->valuedouble;
	if (p->kind == HX_PARAM_BOOL)
		v->i = cJSON_IsTrue(got);
	if (p->kind != HX_PARAM_TASKS)
		return FA_OK;
	mark = fa_schema_enter(s, p->name);
	rc = read_tasks(s, got, sc, v);
	fa_schema_leave(s, mark);
	return rc;
}

enum fa_rc hx_param_read_object(struct fa_schema *s, const cJSON *obj,
                                const struct hx_check_param *params, size_t n,
                                const struct fa_scenario *sc, struct hx_param_set *out)
{
	struct fa_field *fields = fa_xcalloc(n + 1, sizeof(*fields));
	const cJSON **got = fa_xcalloc(n + 1, sizeof(*got));
	enum fa_rc rc;

	out->v = fa_xcalloc(n + 1, sizeof(*out->v));
	out->n = n;
	for (size_t k = 0; k < n; k++)
		fields[k] = field_of(&params[k]);
	fields[n] = field_of(&hx_param_required);
	rc = obj != NULL ? fa_schema_object(s, obj, fields, n + 1, NULL, got) : FA_OK;
	for (size_t k = 0; rc == FA_OK && k < n; k++)
		rc = read_value(s, got[k], &params[k], sc, &out->v[k]);
	if (rc == FA_OK)
		rc = read_value(s, got[n], &hx_param_required, sc, &out->required);
	free(fields);
	free(got);
	return rc;
}

void hx_param_read(const struct fa_scenario *sc, const char *id,
                   const struct hx_check_param *params, size_t n, struct hx_param_set *out)
{
	const cJSON *obj = sc != NULL && sc->harness.expect != NULL
	                           ? cJSON_GetObjectItemCaseSensitive(sc->harness.expect, id)
	                           : NULL;
	struct fa_err err = { { 0 } };
	struct fa_schema s;

	memset(out, 0, sizeof(*out));
	fa_schema_init(&s, sc != NULL && sc->file != NULL ? sc->file : "scenario", &err);
	if (hx_param_read_object(&s, obj, params, n, sc, out) == FA_OK)
		return;
	hx_param_set_release(out);
	hx_param_read_object(&s, NULL, params, n, sc, out); /* every default: cannot fail */
}

void hx_param_set_release(struct hx_param_set *e)
{
	if (e == NULL)
		return;
	for (size_t k = 0; e->v != NULL && k < e->n; k++)
		free(e->v[k].tasks);
	free(e->required.tasks);
	free(e->v);
	memset(e, 0, sizeof(*e));
}
