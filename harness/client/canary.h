/* canary.h -- canaries the harness plants in keys and bodies, and the search for them. */
#ifndef HX_CANARY_H
#define HX_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "result.h"

/* What a scenario writes inside a task body's strings for the harness to
 * replace with the body canary (docs/scenario-format.md). */
#define HX_CANARY_BODY_TOKEN "{body_canary}"

/*
 * The run's canaries for one scenario, derived from @seed and
 * @scenario_id (so a run can be repeated): @key gets "kc" and 24 lower-case
 * hex digits (NUL-terminated, 27 bytes), planted at the end of every key's
 * secret; @body gets "canary." 16 hex digits "@example.invalid", a
 * personal-data marker. Two scenarios or seeds give different canaries.
 */
void hx_canary_make(uint64_t seed, const char *scenario_id, char key[33], char body[64]);

/* The secret a client gets for a key whose scenario secret is @secret:
 * "<secret>.<key canary>". Owned by the caller. */
char *hx_canary_secret(const char *secret, const char *key_canary);

/* @src with every @from replaced by @to, as a new string the caller
 * frees; NULL when @src holds no @from (or @from is ""). */
char *hx_canary_replace_all(const char *src, const char *from, const char *to);

/* Replace every HX_CANARY_BODY_TOKEN in the string values of @body (in
 * place, recursively; member names untouched) with @body_canary. Returns
 * how many strings changed. NULL @body: 0. */
size_t hx_canary_plant_body(cJSON *body, const char *body_canary);

/*
 * Search @len bytes at @buf for the key canary and (when not NULL) the
 * body canary; append one hit per canary found to *@hits / *@n (owned,
 * grown with realloc), naming @where and @task (copied; @task may be
 * NULL). Returns @len, for the caller's count of bytes searched.
 */
size_t hx_canary_scan(const char *buf, size_t len, const char *key_canary, const char *body_canary,
                      const char *where, const char *task, struct hx_canary_hit **hits, size_t *n);

/*
 * Search every regular file under @dir (recursively, symlinks not
 * followed, at most 64 MiB in all, 32 folders deep) for the key canary
 * only: the client must keep a write's body in its state dir to replay
 * it. Only the files' bytes are searched: not their names, not where a
 * symlink points, nor FIFOs, sockets or devices. A hit's where is "state
 * dir file REL". *@cut (when not NULL) is set true when the walk could
 * not search everything it should: the 64 MiB were used up with more to
 * read, a folder was deeper than 32, or a file or folder (@dir itself
 * included, when it is a symlink) could not be opened or read, gone
 * meanwhile aside (left alone otherwise). Returns the bytes searched.
 */
size_t hx_canary_scan_dir(const char *dir, const char *key_canary, struct hx_canary_hit **hits,
                          size_t *n, bool *cut);

/* Shortest fragment of a secret or canary hx_canary_redact() hides: a
 * shorter one could be part of an ordinary word. */
#define HX_CANARY_FRAGMENT_MIN 8

/* What a piece of text hidden by hx_canary_redact() is, and how it reads. */
enum hx_canary_mask_kind {
	HX_MASK_SECRET = 0,  /* a key's secret: "[key secret]" */
	HX_MASK_CANARIED,    /* "<secret>.<key canary>" (hx_canary_secret):
	                        "[key secret].[key canary]"; a fragment of one
	                        side only reads "[key secret]" or "[key canary]",
	                        with the "." kept when it holds it */
	HX_MASK_KEY_CANARY,  /* the key canary: "[key canary]" */
	HX_MASK_BODY_CANARY, /* the body canary: "[body canary]" */
};

/* One string hx_canary_redact() hides. */
struct hx_canary_mask {
	enum hx_canary_mask_kind kind;
	const char *text; /* borrowed; "" is skipped */
	size_t dot;       /* HX_MASK_CANARIED: bytes of the secret, where the
	                     "." is; unused otherwise */
};

/*
 * @s with every piece of it that is one of the @n @masks' texts, whole,
 * or a prefix or a suffix of one at least HX_CANARY_FRAGMENT_MIN bytes
 * long (text cut short by an excerpt or a tail: "sk-live-ABCDEFGH...",
 * "...QRSTUV.kc0123"), replaced by what the mask's kind reads as; a text
 * shorter than that is only hidden whole. Where pieces overlap, the
 * longest goes first (a tie: the one further left, then the earlier
 * mask), and of a shorter one what is left at an end that is still a
 * prefix or a suffix that long. Returns a new string the caller frees,
 * or NULL when nothing was hidden (or @s is NULL).
 */
char *hx_canary_redact(const char *s, const struct hx_canary_mask *masks, size_t n);

#endif
