/* judge.h -- what a check's judge reads: its registry row, the prepared journal, its parameters. */
#ifndef HX_JUDGE_H
#define HX_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "param.h"
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
	bool always; /* judged even without an attributed attempt
	                (else n/a there) */
};

/*
 * A scenario's journal as every judge sees it, built once per scenario;
 * the engine points it at one check at a time (def, ex).
 */
struct hx_check_ctx {
	const struct hx_check_input *in; /* what the run saw (borrowed) */
	const struct fa_attempt **all;   /* owned: every attempt, arrival order then seq */
	size_t n_all;
	const struct fa_attempt **att; /* owned: the attributed ones, same order */
	size_t n;
	const struct fa_attempt **un; /* owned: the unattributed ones, journal order */
	size_t n_un;
	struct hx_param_set *expect;    /* owned: each check's parameters, registry order */
	const struct hx_check_def *def; /* the check being judged, or NULL */
	const struct hx_param_set *ex;  /* its parameters */
};

/*
 * @a is attributed: it names a task of the scenario (docs/checks.md,
 * "unattributed"). An unknown task id is no attribution, so the checks
 * never count it as another task of a scope.
 */
bool hx_check_attributed(const struct hx_check_input *in, const struct fa_attempt *a);

/* The client got @a's answer: a status went out and was written whole
 * (docs/checks.md, "received"). */
bool hx_check_received(const struct fa_attempt *a);

/* Parameter @name (a row of c->def's table, or "required") as the
 * scenario sets it. Aborts when the check has no such parameter: a
 * programming error. */
const struct hx_param_value *hx_check_param(const struct hx_check_ctx *c, const char *name);

/* @r is n/a: the journal has no attributed attempt. */
void hx_check_na_empty(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
