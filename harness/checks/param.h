/* param.h -- a check's parameters ($.harness.expect["CHECK"]): the table rows, and one scenario's
 * values read by them. */
#ifndef HX_PARAM_H
#define HX_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"
#include "scenario.h"

struct fa_schema;

/* What a parameter holds. */
enum hx_param_kind {
	HX_PARAM_INT = 0, /* an integer min..max */
	HX_PARAM_BOOL,    /* true or false */
	HX_PARAM_TASKS,   /* a non-empty array of ids of the scenario's tasks, each once */
};

/* The dflt of a parameter without a default: the check is n/a without it. */
#define HX_PARAM_NO_DEFAULT INT64_MIN

/*
 * One parameter a check takes, $.harness.expect["CHECK"].NAME: a row of
 * the check's table in the registry (check.c). docs/checks.md's
 * Parameters table lists the same rows (a unit test compares them).
 */
struct hx_check_param {
	const char *name; /* "tolerance_ms" */
	enum hx_param_kind kind;
	int64_t min, max; /* INT: the range allowed */
	int64_t dflt;     /* INT: the value when absent, or HX_PARAM_NO_DEFAULT */
	const char *doc;  /* what it means, one line: docs/checks.md's "meaning" */
};

/* `required`, which every check takes after its own parameters: false
 * makes the check recommended in the scenario, true required. */
extern const struct hx_check_param hx_param_required;

/* A parameter as one scenario sets it. */
struct hx_param_value {
	bool given;                        /* the scenario set it */
	int64_t i;                         /* INT: the value, else dflt; BOOL: 0 or 1 */
	const struct fa_task_spec **tasks; /* TASKS: owned array of tasks borrowed from
	                                      the scenario, in the order listed; NULL */
	size_t n_tasks;
};

/* One check's parameters in one scenario. */
struct hx_param_set {
	struct hx_param_value *v;       /* owned: one per row of the check's params */
	size_t n;                       /* rows of v */
	struct hx_param_value required; /* "required" (i unset when not given) */
};

/*
 * $.harness.expect[@id] (@obj, NULL for none, at the current path of @s)
 * into @out: the @n rows of @params in table order, then "required";
 * errors located by @s ("...expect[\"cancel.quiet\"].margin_ms: expected
 * integer 0..60000, got 60001"); TASKS values must name tasks of @sc.
 * @out is filled as far as it was read either way: release it with
 * hx_param_set_release(). Returns FA_OK or FA_EINVAL.
 */
enum fa_rc hx_param_read_object(struct fa_schema *s, const cJSON *obj,
                                const struct hx_check_param *params, size_t n,
                                const struct fa_scenario *sc, struct hx_param_set *out);

/*
 * Read check @id's parameters (the @n rows of @params) from @sc (NULL
 * accepted: every default) into @out, which hx_param_set_release()
 * empties. A scenario the harness loaded was validated (expect.h); one
 * built by hand with an object that breaks the table gets the defaults.
 */
void hx_param_read(const struct fa_scenario *sc, const char *id,
                   const struct hx_check_param *params, size_t n, struct hx_param_set *out);

/* Release what @e owns and zero it. NULL accepted. */
void hx_param_set_release(struct hx_param_set *e);

#endif
