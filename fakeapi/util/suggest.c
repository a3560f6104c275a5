/* suggest.c -- the known word nearest to a misspelt one, for "did you mean" hints. */
#include "suggest.h"

#include <string.h>

/* A slip is a letter or two: past this, a hint is more often wrong than right. */
#define MAX_DISTANCE 2

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Optimal string alignment distance of @a (@n bytes) and @b (@m bytes),
 * both at most FA_SUGGEST_MAX_LEN: three rows of the usual table. */
static size_t distance(const unsigned char *a, size_t n, const unsigned char *b, size_t m)
{
	size_t rows[3][FA_SUGGEST_MAX_LEN + 1];
	size_t *two = rows[0], *prev = rows[1], *cur = rows[2], *t;

	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && two[j - 2] + 1 < cur[j])
				cur[j] = two[j - 2] + 1;
		}
		t = two;
		two = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

const char *fa_suggest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = word != NULL ? strlen(word) : 0;
	size_t limit = len / 3, best_d = MAX_DISTANCE + 1;
	const char *best = NULL;

	if (len == 0 || len > FA_SUGGEST_MAX_LEN)
		return NULL;
	if (limit < 1)
		limit = 1;
	if (limit > MAX_DISTANCE)
		limit = MAX_DISTANCE;
	for (size_t i = 0; i < n; i++) {
		size_t m = candidates[i] != NULL ? strlen(candidates[i]) : 0, d;

		if (m == 0 || m > FA_SUGGEST_MAX_LEN)
			continue;
		/* the lengths alone already put it too far */
		if ((m > len ? m - len : len - m) > limit)
			continue;
		d = distance((const unsigned char *)word, len, (const unsigned char *)candidates[i],
		             m);
		if (d <= limit && d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	return best;
}
