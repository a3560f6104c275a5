/* suite.h -- scenario and suite files as the harness loads them: the provider's loader, then
 * $.harness.expect against the check registry. */
#ifndef HX_SUITE_H
#define HX_SUITE_H

#include <stddef.h>

#include "rc.h"
#include "scenario.h"

/*
 * fa_suite_load() (a folder stands for its suite.json; one without it is
 * FA_EINVAL, "DIR: a folder without suite.json: ..."), then hx_expect_validate() on each scenario
 * in suite order: the provider keeps $.harness.expect as opaque JSON, the harness knows the checks.
 * Every harness command that runs scenarios loads them here. Errors as fa_suite_load() (FA_EIO,
 * FA_EINVAL), or the first scenario's expect error ("FILE: $.harness.expect...: ..."); *@out is
 * then NULL. Free with fa_suite_free().
 */
enum fa_rc hx_suite_load(const char *path, struct fa_suite **out, struct fa_err *err);

/* fa_scenario_parse() of @text (@len bytes, named @name in messages),
 * then hx_expect_validate(). Errors as those; *@out NULL on failure. Free
 * with fa_scenario_free(). */
enum fa_rc hx_suite_scenario_parse(const char *text, size_t len, const char *name,
                                   struct fa_scenario **out, struct fa_err *err);

#endif
