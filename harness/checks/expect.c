/* expect.c -- a scenario's $.harness.expect, validated by the check registry's parameter tables. */
#include "expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "check.h"
#include "param.h"
#include "schema.h"

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
		struct hx_param_set e = { 0 };
		size_t mark;

		if (def == NULL) {
			const char *near = hx_check_suggest(c->string);

			check_ids(allowed, sizeof(allowed));
			return fa_schema_fail(
			        &s, "unknown check %s%s%s%s (allowed: %s)",
			        fa_schema_quote(c->string).s, near ? ", did you mean " : "",
			        near ? fa_schema_quote(near).s : "", near ? "?" : "", allowed);
		}
		mark = fa_schema_enter(&s, c->string);
		rc = hx_param_read_object(&s, c, def->params, def->n_params, sc, &e);
		fa_schema_leave(&s, mark);
		hx_param_set_release(&e);
	}
	return rc;
}

int64_t hx_expect_int(const struct fa_scenario *sc, const char *check, const char *name)
{
	const struct hx_check_def *def = hx_check_find(check);
	struct hx_param_set e;
	int64_t v;

	for (size_t k = 0; def != NULL && k < def->n_params; k++) {
		if (strcmp(def->params[k].name, name) != 0 || def->params[k].kind != HX_PARAM_INT)
			continue;
		hx_param_read(sc, def->id, def->params, def->n_params, &e);
		v = e.v[k].i;
		hx_param_set_release(&e);
		return v;
	}
	fprintf(stderr,
	        "fakeapi-harness: internal error: check %s has no integer "
	        "parameter %s\n",
	        check, name);
	abort();
}
