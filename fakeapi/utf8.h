/* utf8.h -- make bytes from the wire safe to put in a JSON string or on a terminal. */
#ifndef FA_UTF8_H
#define FA_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed UTF-8 sequence (RFC 3629: no overlong form, no
 * surrogate, nothing above U+10FFFF) that starts at @s, reading at most
 * @n bytes, with its code point in *@cp; 0 when the bytes there are not
 * one (or @n is 0), *@cp untouched. A NUL byte is a sequence of its own.
 */
size_t fa_utf8_seq(const char *s, size_t n, uint32_t *cp);

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

/*
 * A copy of the @len bytes at @s (need not be NUL-terminated; a NUL among
 * them counts as a control character) safe to print on a terminal: each
 * control character (below 0x20, and 0x7f: ESC and its escape sequences
 * among them) and each byte that does not start a well-formed sequence
 * becomes '?'. Returns a new string the caller frees.
 */
char *fa_utf8_printable(const char *s, size_t len);

#endif
