/* expect.c -- a scenario's $.harness.expect: each check's parameters, read and validated by the registry's tables. */
#include "expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "schema.h"

const struct hx_check_param hx_expect_required = {
	.name = "required", .kind = HX_PARAM_BOOL, .dflt = HX_PARAM_NO_DEFAULT,
	.doc = "`false` makes the check *recommended* in this scenario, `true` *required* "
	       "(see above); `--strict` overrides both",
};

/* budget.escalates "tasks"[k]: a non-empty string */
static const struct fa_field task_id_field =
	FA_F_CHECK(NULL, FA_SCHEMA_STRING, FA_FIELD_NONEMPTY);

/* The schema row that checks @p's JSON type and range. */
static struct fa_field field_of(const struct hx_check_param *p)
{
	switch (p->kind) {
	case HX_PARAM_INT:
		return (struct fa_field)FA_F_RANGE(p->name, 0, p->min, p->max);
	case HX_PARAM_BOOL:
		return (struct fa_field)FA_F_CHECK(p->name, FA_SCHEMA_BOOL, 0);
	case HX_PARAM_TASKS:
		break;
	}
	return (struct fa_field)FA_F_CHECK(p->name, FA_SCHEMA_ARRAY, FA_FIELD_NONEMPTY);
}

/* A task list (already a non-empty array): ids of @sc's tasks, each once. */
static enum fa_rc read_tasks(struct fa_schema *s, const cJSON *arr,
			     const struct fa_scenario *sc, struct hx_param_value *v)
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
static enum fa_rc read_value(struct fa_schema *s, const cJSON *got,
			     const struct hx_check_param *p, const struct fa_scenario *sc,
			     struct hx_param_value *v)
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

/* $.harness.expect[def->id] (@obj, at the current path of @s) into @out:
 * the check's parameters in table order, then "required". */
static enum fa_rc read_check(struct fa_schema *s, const cJSON *obj,
			     const struct hx_check_def *def, const struct fa_scenario *sc,
			     struct hx_expect_check *out)
{
	size_t n = def->n_params;
	struct fa_field *fields = fa_xcalloc(n + 1, sizeof(*fields));
	const cJSON **got = fa_xcalloc(n + 1, sizeof(*got));
	enum fa_rc rc;

	out->v = fa_xcalloc(n + 1, sizeof(*out->v));
	out->n = n;
	for (size_t k = 0; k < n; k++)
		fields[k] = field_of(&def->params[k]);
	fields[n] = field_of(&hx_expect_required);
	rc = obj != NULL ? fa_schema_object(s, obj, fields, n + 1, NULL, got) : FA_OK;
	for (size_t k = 0; rc == FA_OK && k < n; k++)
		rc = read_value(s, got[k], &def->params[k], sc, &out->v[k]);
	if (rc == FA_OK)
		rc = read_value(s, got[n], &hx_expect_required, sc, &out->required);
	free(fields);
	free(got);
	return rc;
}

/* "attempts.bounded, wait.retry_after, ...": every check id, registry order. */
static void check_ids(char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < hx_check_count() && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
				      hx_check_def_at(i)->id);
}

enum fa_rc hx_expect_validate(const struct fa_scenario *sc, struct fa_err *err)
{
	const cJSON *expect = sc != NULL ? sc->harness.expect : NULL;
	struct fa_schema s;
	char allowed[512];
	enum fa_rc rc;

	if (expect == NULL)
		return FA_OK;
	fa_schema_init(&s, sc->file, err);
	fa_schema_enter(&s, "harness");
	fa_schema_enter(&s, "expect");
	if (!cJSON_IsObject(expect))
		return fa_schema_fail_got(&s, expect, "object");
	rc = fa_schema_unique(&s, expect);
	for (const cJSON *c = expect->child; rc == FA_OK && c != NULL; c = c->next) {
		const struct hx_check_def *def = hx_check_find(c->string);
		struct hx_expect_check e = { 0 };
		size_t mark;

		if (def == NULL) {
			check_ids(allowed, sizeof(allowed));
			return fa_schema_fail(&s, "unknown check %s (allowed: %s)",
					      fa_schema_quote(c->string).s, allowed);
		}
		mark = fa_schema_enter(&s, c->string);
		rc = read_check(&s, c, def, sc, &e);
		fa_schema_leave(&s, mark);
		hx_expect_check_release(&e);
	}
	return rc;
}

void hx_expect_read(const struct fa_scenario *sc, const struct hx_check_def *def,
		    struct hx_expect_check *out)
{
	const cJSON *obj = sc != NULL && sc->harness.expect != NULL
		? cJSON_GetObjectItemCaseSensitive(sc->harness.expect, def->id) : NULL;
	struct fa_err err = { { 0 } };
	struct fa_schema s;

	memset(out, 0, sizeof(*out));
	fa_schema_init(&s, sc != NULL && sc->file != NULL ? sc->file : "scenario", &err);
	if (read_check(&s, obj, def, sc, out) == FA_OK)
		return;
	hx_expect_check_release(out);
	read_check(&s, NULL, def, sc, out); /* every default: cannot fail */
}

void hx_expect_check_release(struct hx_expect_check *e)
{
	if (e == NULL)
		return;
	for (size_t k = 0; e->v != NULL && k < e->n; k++)
		free(e->v[k].tasks);
	free(e->required.tasks);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

int64_t hx_expect_int(const struct fa_scenario *sc, const char *check, const char *name)
{
	const struct hx_check_def *def = hx_check_find(check);
	struct hx_expect_check e;
	int64_t v;

	for (size_t k = 0; def != NULL && k < def->n_params; k++) {
		if (strcmp(def->params[k].name, name) != 0 ||
		    def->params[k].kind != HX_PARAM_INT)
			continue;
		hx_expect_read(sc, def, &e);
		v = e.v[k].i;
		hx_expect_check_release(&e);
		return v;
	}
	fprintf(stderr, "fakeapi-harness: internal error: check %s has no integer "
		"parameter %s\n", check, name);
	abort();
}
