/* recap.h -- why a run ended where it did: each failed check once, and the checks that were not
 * judged where they would have decided the level. */
#ifndef HX_RECAP_H
#define HX_RECAP_H

#include <stdbool.h>
#include <stddef.h>

#include "check.h"
#include "result.h"

enum hx_recap_kind {
	HX_RECAP_FAIL,       /* the check failed somewhere */
	HX_RECAP_NA,         /* counted at the next level, n/a everywhere it counted */
	HX_RECAP_NO_CHECKS,  /* the next level has no counted check at all */
	HX_RECAP_PASSES_NOW, /* listed as known failing, passes now: exit 1 */
};

/* One line of the recap. Everything borrowed from the run. */
struct hx_recap_row {
	enum hx_recap_kind kind;
	const struct hx_check_def *def;         /* NULL for HX_RECAP_NO_CHECKS */
	const struct hx_scenario_result *where; /* the first scenario it shows in */
	const char *detail;                     /* the result's detail there */
	size_t more;                            /* other scenarios with that verdict */
	bool counted; /* the result shown counts for the level and the exit code */
	bool known;   /* FAIL: the --known-failing list forgives it */
	int level;    /* the level the row keeps from being reached (NA, NO_CHECKS) */
};

/* The rows in order: the known-failing entries that pass now, the
 * failures (check definition order), then the n/a checks, then the empty
 * level. */
struct hx_recap {
	struct hx_recap_row *rows; /* owned */
	size_t n;
};

/*
 * Work out the recap of @r, graded (hx_grade_run). A failed check is shown
 * at its first counted failure (the one behind the exit code), else at its
 * first failure. When the level is below L4, the checks of the next level
 * that counted but were n/a wherever they counted are the ones that held
 * it (docs/checks.md, "Levels"), and a next level with no counted check is
 * said as such. Release with hx_recap_release.
 */
void hx_recap_build(const struct hx_run_result *r, struct hx_recap *out);

/* Release what @rc owns and zero it. NULL accepted. */
void hx_recap_release(struct hx_recap *rc);

/* Failed results of check @id in @r that did not count (recommended, or
 * not required, without --strict). */
size_t hx_recap_uncounted_failures(const struct hx_run_result *r, const char *id);

#endif
