/* utf8.c -- make bytes from the wire safe to put in a JSON string or on a terminal. */
#include "utf8.h"

#include <string.h>

#include "alloc.h"

size_t fa_utf8_seq(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t c;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		/* no overlong form, no surrogate */
		len = 3;
		c = p[0] & 0x0f;
		lo = p[0] == 0xe0 ? 0xa0 : 0x80;
		hi = p[0] == 0xed ? 0x9f : 0xbf;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		/* no overlong form, nothing above U+10FFFF */
		len = 4;
		c = p[0] & 0x07;
		lo = p[0] == 0xf0 ? 0x90 : 0x80;
		hi = p[0] == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	if (len > n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	*cp = c;
	return len;
}

bool fa_utf8_valid(const char *s)
{
	size_t left = s != NULL ? strlen(s) : 0;
	uint32_t cp;

	while (left > 0) {
		size_t n = fa_utf8_seq(s, left, &cp);

		if (n == 0)
			return false;
		s += n;
		left -= n;
	}
	return true;
}

char *fa_utf8_clean(const char *s)
{
	size_t left;
	uint32_t cp;
	char *out, *o;

	if (s == NULL)
		return NULL;
	if (fa_utf8_valid(s))
		return fa_xstrdup(s);
	left = strlen(s);
	out = o = fa_xmalloc(left * 3 + 1); /* one byte becomes at most 3 */
	while (left > 0) {
		size_t n = fa_utf8_seq(s, left, &cp);

		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
			left--;
			continue;
		}
		memcpy(o, s, n);
		o += n;
		s += n;
		left -= n;
	}
	*o = '\0';
	return out;
}

char *fa_utf8_printable(const char *s, size_t len)
{
	char *out = fa_xmalloc(len + 1), *o = out;
	uint32_t cp = 0;

	while (len > 0) {
		size_t n = fa_utf8_seq(s, len, &cp);

		if (n == 0 || cp < 0x20 || cp == 0x7f) {
			*o++ = '?';
			n = n ? n : 1;
		} else {
			memcpy(o, s, n);
			o += n;
		}
		s += n;
		len -= n;
	}
	*o = '\0';
	return out;
}
