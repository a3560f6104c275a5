/* grade.h -- a whole run's level and exit code, from its scenarios' check verdicts. */
#ifndef HX_GRADE_H
#define HX_GRADE_H

#include "result.h"

/* Highest level a client can reach (L4). */
#define HX_MAX_LEVEL 4

/*
 * Fill @r->level and @r->exit_code from the scenario results
 * (docs/checks.md, "Levels" and "Exit codes"): a check's suite verdict is
 * fail if it failed in a scenario where it was required, pass if it
 * passed in one and failed in none, n/a otherwise. Level Lk is reached
 * when L(k-1) is, level k has a counted check, and every counted check of
 * level k has suite verdict pass. Exit code: 2 when a scenario could not
 * run; 1 when a required check failed, none passed, or the level is below
 * @r->min_level; else 0.
 */
void hx_grade_run(struct hx_run_result *r);

#endif
