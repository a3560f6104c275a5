/* utf8.c -- make bytes from the wire safe to put in a JSON string. */
#include "utf8.h"

#include <string.h>

#include "alloc.h"

/* Length of the well-formed sequence at @s, or 0 when it is not one. */
static size_t seq_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

bool fa_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p != NULL && *p != '\0') {
		size_t n = seq_len(p);

		if (n == 0)
			return false;
		p += n;
	}
	return true;
}

char *fa_utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (s == NULL)
		return NULL;
	if (fa_utf8_valid(s))
		return fa_xstrdup(s);
	out = o = fa_xmalloc(strlen(s) * 3 + 1); /* one byte becomes at most 3 */
	while (*p != '\0') {
		size_t n = seq_len(p);

		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}
