/* suggest.h -- the known word nearest to a misspelt one, for "did you mean" hints. */
#ifndef FA_SUGGEST_H
#define FA_SUGGEST_H

#include <stddef.h>

/* Longest word (bytes) compared; a longer word or candidate gets no hint. */
#define FA_SUGGEST_MAX_LEN 64

/*
 * The one of @candidates (@n strings; NULL entries are skipped) nearest to
 * @word, or NULL when none is near enough to be a likely slip. Nearness is
 * the optimal string alignment distance (insertions, deletions,
 * substitutions and swaps of two neighbours, one each) with ASCII letters
 * compared case-insensitively, so "Status" is 0 from "status" and
 * "stauts" 1; a candidate is near at a distance of at most 2 and at most a
 * third of @word's length (1 for a word shorter than 6). Ties go to the
 * candidate listed first. Returns a pointer into @candidates (borrowed), never a copy.
 */
const char *fa_suggest(const char *word, const char *const *candidates, size_t n);

#endif
