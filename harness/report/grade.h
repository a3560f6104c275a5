/* grade.h -- a whole run's level and exit code, from its scenarios' check verdicts; repeated runs
 * combined. */
#ifndef HX_GRADE_H
#define HX_GRADE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

/* Highest level a client can reach (L4). */
#define HX_MAX_LEVEL 4

/* Most runs --repeat asks for. */
#define HX_REPEAT_MAX 1000

/*
 * Fill @r->level and @r->exit_code from the scenario results
 * (docs/checks.md, "Levels" and "Exit codes"): a check's suite verdict is
 * fail if it failed in a scenario where it was required, pass if it
 * passed in one and failed in none, n/a otherwise. A check result counts
 * when its ->required is set or @r->strict is, and its scenario covers
 * the check (->uncovered unset): a result not covered counts for nothing.
 * Level Lk is reached when L(k-1) is, level k has a counted check, and
 * every counted check of level k has suite verdict pass: a check covered
 * nowhere is left out of its level, a covered n/a blocks it. Exit code: 2 when a scenario
 * could not run; 1 when a required check failed (one that
 * @r->known_failing lists does not count), a listed check's suite verdict
 * is pass (its entry must go), none passed, or the level is below
 * @r->min_level; else 0. A listed check that fails still blocks its level.
 */
void hx_grade_run(struct hx_run_result *r);

/* Result @cr of @r counts for the level and the exit code: required (or
 * @r->strict) where its scenario covers the check. */
bool hx_grade_counts(const struct hx_run_result *r, const struct hx_check_result *cr);

/*
 * Check @id's verdict over @r's scenarios that cover it: over those where
 * it counted as required (*@counted true then), else over all of them
 * (fail anywhere, else pass somewhere, else n/a). NULL @counted accepted.
 */
enum hx_verdict hx_grade_suite_verdict(const struct hx_run_result *r, const char *id,
                                       bool *counted);

/* One check's conformance profile over a suite (docs/checks.md,
 * "Profile"): its results per kind, and the suite's value. */
struct hx_profile_entry {
	size_t pass, fail, na;   /* covered results with each verdict, scenarios */
	size_t not_covered;      /* results of scenarios that do not cover it */
	bool covered;            /* some scenario covers it */
	bool counted;            /* some covered result counted as required */
	enum hx_verdict verdict; /* hx_grade_suite_verdict(); HX_NA when !covered */
};

/* Check @id's profile over @r into *@p. */
void hx_grade_profile(const struct hx_run_result *r, const char *id, struct hx_profile_entry *p);

/* Some scenario of @r covers check @id. */
bool hx_grade_covered(const struct hx_run_result *r, const char *id);

/* The profile's suite value: "pass", "fail", "n/a" or "not_covered". */
const char *hx_grade_profile_str(const struct hx_profile_entry *p);

/* Where a check stands against the --known-failing list. */
enum hx_known_state {
	HX_KNOWN_UNLISTED = 0, /* no list, or the list does not name it */
	HX_KNOWN_FAILING,      /* listed, counted, suite verdict fail: forgiven */
	HX_KNOWN_PASSES_NOW,   /* listed, counted, suite verdict pass: the entry must go */
	HX_KNOWN_NA,           /* listed, nothing counted showed it: fine */
};

/* Where check @id of @r stands against @r->known_failing. */
enum hx_known_state hx_grade_known_state(const struct hx_run_result *r, const char *id);

/*
 * Why @r exits with @r->exit_code, one line, as hx_grade_run() decided:
 * "a required check failed", "known-failing entry X passes now: remove it
 * from FILE", "level L1 is below the minimum L2", ... With a repeat of
 * more than one run, the worst run's reason after "run K of N (seed S): ".
 * A new string the caller frees.
 */
char *hx_grade_exit_reason(const struct hx_run_result *r);

/* One check's suite verdicts over the runs of a repeat. */
struct hx_repeat_tally {
	unsigned pass, fail, na; /* runs with each suite verdict */
	bool counted;            /* counted as required in at least one run */
};

/*
 * A --repeat run: only tallies of the runs already graded are kept (the
 * memory does not grow with the scenarios' results), the last run's whole
 * result is the caller's.
 */
struct hx_repeat {
	unsigned planned;              /* runs asked for, 1..HX_REPEAT_MAX */
	unsigned runs;                 /* runs added so far */
	uint64_t first_seed;           /* seed of the first run; run i had first_seed + i */
	struct hx_repeat_tally *tally; /* owned: one per hx_check_def_at(), definition order */
	size_t n_tally;
	int *levels;        /* owned: the level of each run, in order (planned) */
	int *exit_codes;    /* owned: the exit code of each run, in order */
	int level;          /* lowest level of the runs so far (0 before any) */
	int exit_code;      /* worst exit code so far (2 > 1 > 0) */
	unsigned worst_run; /* 0-based run that first got exit_code */
	char *worst_reason; /* owned: that run's hx_grade_exit_reason() */
};

/* Start a repeat of @planned runs (clamped to 1..HX_REPEAT_MAX) from
 * @first_seed. Release with hx_repeat_release. */
void hx_repeat_init(struct hx_repeat *rep, unsigned planned, uint64_t first_seed);

/* Tally run @r (graded by hx_grade_run, its ->repeat not yet set): each
 * check's suite verdict, the level and the exit code. Ignored past
 * ->planned runs. */
void hx_repeat_add(struct hx_repeat *rep, const struct hx_run_result *r);

/* Release what @rep owns and zero it. NULL accepted. */
void hx_repeat_release(struct hx_repeat *rep);

#endif
