/* expect.h -- a scenario's $.harness.expect: each check's parameters, read and validated by the registry's tables. */
#ifndef HX_EXPECT_H
#define HX_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rc.h"
#include "scenario.h"

struct hx_check_def;

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
	const char *name;        /* "tolerance_ms" */
	enum hx_param_kind kind;
	int64_t min, max;        /* INT: the range allowed */
	int64_t dflt;            /* INT: the value when absent, or HX_PARAM_NO_DEFAULT */
	const char *doc;         /* what it means, one line: docs/checks.md's "meaning" */
};

/* `required`, which every check takes after its own parameters: false
 * makes the check recommended in the scenario, true required. */
extern const struct hx_check_param hx_expect_required;

/* A parameter as one scenario sets it. */
struct hx_param_value {
	bool given;                        /* the scenario set it */
	int64_t i;                         /* INT: the value, else dflt; BOOL: 0 or 1 */
	const struct fa_task_spec **tasks; /* TASKS: owned array of tasks borrowed from
	                                      the scenario, in the order listed; NULL */
	size_t n_tasks;
};

/* One check's parameters in one scenario. */
struct hx_expect_check {
	struct hx_param_value *v;        /* owned: one per row of the check's params */
	size_t n;                        /* rows of v */
	struct hx_param_value required;  /* "required" (i unset when not given) */
};

/*
 * Validate sc->harness.expect against the registry (nothing to do
 * without one): an object of check ids, each an object of that check's
 * parameters and "required". Errors go to @err located as the loader's
 * ("FILE: $.harness.expect[\"cancel.quiet\"].margin_ms: expected integer
 * 0..60000, got integer 60001"); unknown check ids and unknown parameters
 * list the allowed ones in registry order; budget.escalates "tasks" must
 * name tasks of @sc. Returns FA_OK or FA_EINVAL.
 */
enum fa_rc hx_expect_validate(const struct fa_scenario *sc, struct fa_err *err);

/*
 * Read check @def's parameters from @sc (NULL accepted: every default)
 * into @out, which hx_expect_check_release() empties. A scenario the
 * harness loaded was validated; one built by hand with an object that
 * breaks the table gets the defaults.
 */
void hx_expect_read(const struct fa_scenario *sc, const struct hx_check_def *def,
		    struct hx_expect_check *out);

/* Release what @e owns and zero it. NULL accepted. */
void hx_expect_check_release(struct hx_expect_check *e);

/* Parameter @name of check @check in @sc (NULL accepted): its value, else
 * its default. Aborts when the registry has no such INT parameter: a
 * programming error. */
int64_t hx_expect_int(const struct fa_scenario *sc, const char *check, const char *name);

#endif
