/* utf8.h -- make bytes from the wire safe to put in a JSON string. */
#ifndef FA_UTF8_H
#define FA_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Is @s (NUL-terminated) well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF)? NULL is valid. */
bool fa_utf8_valid(const char *s);

/*
 * A copy of @s in which every byte that does not start a well-formed UTF-8
 * sequence is replaced by U+FFFD, so JSON that carries it (the journal,
 * rendered bodies) stays parseable. Returns NULL for @s NULL; otherwise a
 * new string the caller frees.
 */
char *fa_utf8_clean(const char *s);

#endif
