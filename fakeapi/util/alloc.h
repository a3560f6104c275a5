/* alloc.h -- allocation that never returns NULL. */
#ifndef FA_ALLOC_H
#define FA_ALLOC_H

#include <stddef.h>

/*
 * Each of these prints what failed on stderr and aborts when memory runs
 * out; nothing else in library code exits. Returned memory is the
 * caller's, released with free(). fa_xstrdup(NULL) returns NULL.
 */
void *fa_xmalloc(size_t size);
void *fa_xcalloc(size_t n, size_t size);
void *fa_xrealloc(void *ptr, size_t size);
char *fa_xstrdup(const char *s);
char *fa_xstrndup(const char *s, size_t n);
char *fa_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Make the buffer @p of *@cap bytes hold at least @need bytes: when it is
 * smaller, its capacity doubles (starting from @first bytes, > 0) until it
 * does, and the buffer is reallocated. Returns the buffer (the same or a
 * new one; the caller's, released with free()) and updates *@cap.
 */
void *fa_xgrow(void *p, size_t *cap, size_t need, size_t first);

/*
 * Append the @n bytes of @text to the growing string *@s of *@len bytes
 * and capacity *@cap (all three 0/NULL for an empty one), keeping it
 * NUL-terminated; it grows geometrically from @first bytes (fa_xgrow), so
 * a string built piece by piece costs linear time. *@s is the caller's,
 * released with free().
 */
void fa_xappend(char **s, size_t *len, size_t *cap, const char *text, size_t n, size_t first);

/* @p, or abort naming @what when it is NULL: for libraries (cJSON) that
 * return NULL only when allocation fails. */
void *fa_xcheck(void *p, const char *what);

#endif
