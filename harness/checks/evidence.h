/* evidence.h -- what a check holds up: the journal in arrival order, the seqs behind its verdict.
 */
#ifndef HX_EVIDENCE_H
#define HX_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "journal.h"
#include "result.h"

/* A growing list of journal seqs a check gathers for its verdict. Zero it
 * to start ({ 0 }); release with hx_evidence_release() unless given. */
struct hx_evidence {
	uint64_t *v; /* owned: the seqs, in the order added, repeats allowed */
	size_t n;
	size_t cap;
};

/* Append @seq to @e. */
void hx_evidence_add(struct hx_evidence *e, uint64_t seq);

/*
 * Hand @e to @r as its evidence, ascending and without repeats (what @r
 * held before is freed; an empty @e leaves @r without evidence). @e is
 * emptied and may be reused.
 */
void hx_evidence_give(struct hx_evidence *e, struct hx_check_result *r);

/* Free what @e holds and empty it. NULL accepted. */
void hx_evidence_release(struct hx_evidence *e);

/*
 * Sort @n attempts (pointers borrowed from a journal) into arrival order:
 * by t_arrival_us, then seq (docs/checks.md, "arrival order"; the journal
 * itself is in completion order).
 */
void hx_evidence_sort_arrival(const struct fa_attempt **att, size_t n);

#endif
