/* check.h -- the check registry: one row per conformance check, and the engine that judges a
 * journal with them (judge.h: what each judge reads). */
#ifndef HX_CHECK_H
#define HX_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "judge.h"

/* Number of checks the harness knows, and the i-th (0 <= i < count; else
 * NULL). Registry order is report order. */
size_t hx_check_count(void);
const struct hx_check_def *hx_check_def_at(size_t i);

/* The check with this id, or NULL (NULL accepted). */
const struct hx_check_def *hx_check_find(const char *id);

/* The id of the check nearest to the unknown @id, a likely slip
 * (fa_suggest: "wait.jiter" gives "wait.jitter"), or NULL. Static storage. */
const char *hx_check_suggest(const char *id);

/* Build @c over @in (borrowed, kept until hx_check_ctx_release), focused
 * on no check. */
void hx_check_ctx_init(struct hx_check_ctx *c, const struct hx_check_input *in);

/* Point @c at check @def (a row of the registry) and its parameters. */
void hx_check_ctx_focus(struct hx_check_ctx *c, const struct hx_check_def *def);

/* Release what @c owns and zero it. NULL accepted. */
void hx_check_ctx_release(struct hx_check_ctx *c);

/* Whether c->def (in focus) is covered by c->in's scenario and mode:
 * the predicate coverage.c keeps for its id (a table beside the rows, so
 * that a row stays as it is), true without one. *@why as
 * hx_check_covers_fn says. */
bool hx_check_covered(const struct hx_check_ctx *c, const char **why);

/*
 * Run every check on one scenario's journal. *@out gets an owned array of
 * hx_check_count() results in definition order (release each with
 * hx_check_result_release, then free the array). A check that cannot be
 * evaluated is HX_NA with the reason in its detail, never HX_PASS. A check
 * the scenario or mode does not cover (hx_check_covered) is not judged:
 * HX_NA, ->uncovered set, detail "not judged here: WHY".
 */
void hx_check_run_all(const struct hx_check_input *in, struct hx_check_result **out, size_t *n);

#endif
