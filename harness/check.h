/* check.h -- the check registry: one row per conformance check, and the engine that judges a journal with them. */
#ifndef HX_CHECK_H
#define HX_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "expect.h"
#include "result.h"

struct hx_check_ctx;

/* A judge: fills @r's verdict, detail and evidence (its id, level and
 * required are the engine's) from the prepared context @c. */
typedef void hx_check_judge_fn(const struct hx_check_ctx *c, struct hx_check_result *r);

/* A coverage predicate: whether the scenario and the mode, as they are
 * before the run (c->in->sc, c->in->mode; c focused on the check), pose
 * anything the check judges. False with *@why set to a static phrase
 * ("an exec client reports no attempt count") when they do not. */
typedef bool hx_check_covers_fn(const struct hx_check_ctx *c, const char **why);

/*
 * A check as docs/checks.md defines it: one row of the registry. Adding a
 * check is a row in check.c (with its parameter table) plus its judge;
 * the docs' tables are compared with the rows by a unit test.
 */
struct hx_check_def {
	const char *id;                      /* "wait.retry_after" */
	int level;                           /* 1..4 */
	bool required;                       /* required (true) or recommended by default */
	const char *source;                  /* where its rule comes from, named as
	                                        docs/references.md names it */
	const char *title;                   /* one line */
	const struct hx_check_param *params; /* its own parameters, `required` aside */
	size_t n_params;
	hx_check_judge_fn *judge;
	bool always;                         /* judged even without an attributed attempt
	                                        (else n/a there) */
};

/*
 * A scenario's journal as every judge sees it, built once per scenario;
 * the engine points it at one check at a time (def, ex).
 */
struct hx_check_ctx {
	const struct hx_check_input *in;   /* what the run saw (borrowed) */
	const struct fa_attempt **all;     /* owned: every attempt, arrival order then seq */
	size_t n_all;
	const struct fa_attempt **att;     /* owned: the attributed ones, same order */
	size_t n;
	const struct fa_attempt **un;      /* owned: the unattributed ones, journal order */
	size_t n_un;
	struct hx_expect_check *expect;    /* owned: each check's parameters, registry order */
	const struct hx_check_def *def;    /* the check being judged, or NULL */
	const struct hx_expect_check *ex;  /* its parameters */
};

/* Number of checks the harness knows, and the i-th (0 <= i < count; else
 * NULL). Registry order is report order. */
size_t hx_check_count(void);
const struct hx_check_def *hx_check_def_at(size_t i);

/* The check with this id, or NULL (NULL accepted). */
const struct hx_check_def *hx_check_find(const char *id);

/*
 * @a is attributed: it names a task of the scenario (docs/checks.md,
 * "unattributed"). An unknown task id is no attribution, so the checks
 * never count it as another task of a scope.
 */
bool hx_check_attributed(const struct hx_check_input *in, const struct fa_attempt *a);

/* The client got @a's answer: a status went out and was written whole
 * (docs/checks.md, "received"). */
bool hx_check_received(const struct fa_attempt *a);

/* Build @c over @in (borrowed, kept until hx_check_ctx_release), focused
 * on no check. */
void hx_check_ctx_init(struct hx_check_ctx *c, const struct hx_check_input *in);

/* Point @c at check @def (a row of the registry) and its parameters. */
void hx_check_ctx_focus(struct hx_check_ctx *c, const struct hx_check_def *def);

/* Release what @c owns and zero it. NULL accepted. */
void hx_check_ctx_release(struct hx_check_ctx *c);

/* Parameter @name (a row of c->def's table, or "required") as the
 * scenario sets it. Aborts when the check has no such parameter: a
 * programming error. */
const struct hx_param_value *hx_check_param(const struct hx_check_ctx *c, const char *name);

/* Whether c->def (in focus) is covered by c->in's scenario and mode:
 * the predicate coverage.c keeps for its id (a table beside the rows, so
 * that a row stays as it is), true without one. *@why as
 * hx_check_covers_fn says. */
bool hx_check_covered(const struct hx_check_ctx *c, const char **why);

/* @r is n/a: the journal has no attributed attempt. */
void hx_check_na_empty(const struct hx_check_ctx *c, struct hx_check_result *r);

/*
 * Run every check on one scenario's journal. *@out gets an owned array of
 * hx_check_count() results in definition order (release each with
 * hx_check_result_release, then free the array). A check that cannot be
 * evaluated is HX_NA with the reason in its detail, never HX_PASS. A check
 * the scenario or mode does not cover (hx_check_covered) is not judged:
 * HX_NA, ->uncovered set, detail "not judged here: WHY".
 */
void hx_check_run_all(const struct hx_check_input *in,
		      struct hx_check_result **out, size_t *n);

#endif
