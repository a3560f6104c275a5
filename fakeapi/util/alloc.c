/* alloc.c -- allocation that never returns NULL. */
#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, size_t size)
{
	fprintf(stderr, "fakeapi: out of memory in %s (%zu bytes)\n", what, size);
	abort();
}

void *fa_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		die("malloc", size);
	return p;
}

void *fa_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		die("calloc", n * size);
	return p;
}

void *fa_xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
		die("realloc", size);
	return p;
}

void *fa_xgrow(void *p, size_t *cap, size_t need, size_t first)
{
	size_t c = *cap;

	if (need <= c)
		return p;
	if (c == 0)
		c = first ? first : 1;
	while (c < need)
		c *= 2;
	*cap = c;
	return fa_xrealloc(p, c);
}

void fa_xappend(char **s, size_t *len, size_t *cap, const char *text, size_t n, size_t first)
{
	*s = fa_xgrow(*s, cap, *len + n + 1, first);
	memcpy(*s + *len, text, n);
	*len += n;
	(*s)[*len] = '\0';
}

char *fa_xstrdup(const char *s)
{
	return s == NULL ? NULL : fa_xstrndup(s, strlen(s));
}

char *fa_xstrndup(const char *s, size_t n)
{
	char *p = fa_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *fa_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("vasprintf", 0);
	return p;
}

void *fa_xcheck(void *p, const char *what)
{
	if (p == NULL)
		die(what, 0);
	return p;
}
