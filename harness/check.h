/* check.h -- the conformance checks, computed from the provider's journal. */
#ifndef HX_CHECK_H
#define HX_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "result.h"

/* A check as docs/checks.md defines it. */
struct hx_check_def {
	const char *id;     /* "wait.retry_after" */
	int level;          /* 1..4 */
	bool required;      /* required (true) or recommended */
	const char *seed;   /* source, e.g. "seed 000: honour Retry-After" */
	const char *title;  /* one line */
};

/* Number of checks the harness knows, and the i-th (0 <= i < count). */
size_t hx_check_count(void);
const struct hx_check_def *hx_check_def_at(size_t i);

/* The check with this id, or NULL. */
const struct hx_check_def *hx_check_find(const char *id);

/*
 * Run every check on one scenario's journal. *@out gets an owned array of
 * hx_check_count() results in definition order (release each with
 * hx_check_result_release, then free the array). A check that cannot be
 * evaluated is HX_NA with the reason in its detail, never HX_PASS.
 */
void hx_check_run_all(const struct hx_check_input *in,
		      struct hx_check_result **out, size_t *n);

#endif
