/* expect.h -- a scenario's $.harness.expect, validated by the check registry's parameter tables. */
#ifndef HX_EXPECT_H
#define HX_EXPECT_H

#include <stdint.h>

#include "rc.h"
#include "scenario.h"

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

/* Parameter @name of check @check in @sc (NULL accepted): its value, else
 * its default. Aborts when the registry has no such INT parameter: a
 * programming error. */
int64_t hx_expect_int(const struct fa_scenario *sc, const char *check, const char *name);

#endif
