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

/* @p, or abort naming @what when it is NULL: for libraries (cJSON) that
 * return NULL only when allocation fails. */
void *fa_xcheck(void *p, const char *what);

#endif
