/* jsontext.c -- JSON text to a cJSON tree, with LINE:COL on a syntax error. */
#include "jsontext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

/*
 * cJSON reports only where it gave up, and is lenient (leading zeros, raw
 * control characters in strings, any byte below 0x21 as whitespace). So a
 * strict scanner runs first and says what is wrong and where; cJSON then
 * builds the tree from text already known to be good.
 */
struct scan {
	const unsigned char *p;   /* next byte */
	const unsigned char *end; /* one past the last byte */
	const unsigned char *at;  /* where the error is; NULL = end of input */
	int depth;                /* arrays and objects open */
	char msg[192];            /* the error, "" = none */
};

static const unsigned char bom[] = { 0xEF, 0xBB, 0xBF };

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && is_ws(*s->p))
		s->p++;
}

/* Length of the well-formed UTF-8 sequence at @p (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF) and its code point, or 0. */
static int utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xBF;
	int n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		*cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		*cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		*cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (end - p < n)
		return 0;
	for (int i = 1; i < n; i++) {
		unsigned char b = p[i];

		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
			return 0;
		*cp = (*cp << 6) | (b & 0x3F);
	}
	return n;
}

/* What the byte(s) at @p look like, for "expected X, got Y". */
static void describe(const unsigned char *p, const unsigned char *end, char *buf, size_t len)
{
	uint32_t cp;
	int n;

	if (is_word(*p)) {
		size_t w = 0;

		while (p + w < end && w < 24 && is_word(p[w]))
			w++;
		snprintf(buf, len, "'%.*s'%s", (int)w, (const char *)p,
		         p + w < end && is_word(p[w]) ? "..." : "");
		return;
	}
	if (*p == '\'') {
		snprintf(buf, len, "\"'\"");
		return;
	}
	if (*p > 0x20 && *p < 0x7F) {
		snprintf(buf, len, "'%c'", *p);
		return;
	}
	n = utf8_decode(p, end, &cp);
	if (n == 0)
		snprintf(buf, len, "byte 0x%02X (not UTF-8)", *p);
	else if (n == 1)
		snprintf(buf, len, "control character U+%04X", (unsigned)cp);
	else
		snprintf(buf, len, "'%.*s' (U+%04X)", n, (const char *)p, (unsigned)cp);
}

static bool fail(struct scan *s, const unsigned char *at, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static bool fail(struct scan *s, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;

	s->at = at;
	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* Does a // or a slash-star comment start at @p? Editors and other
 * formats allow them, so they are named as what they are. */
static bool at_comment(const struct scan *s, const unsigned char *p)
{
	return s->end - p >= 2 && p[0] == '/' && (p[1] == '/' || p[1] == '*');
}

/* @what was due at s->p: the input ended, or something else is there. */
static bool expected(struct scan *s, const char *what)
{
	char got[64];

	if (s->p >= s->end)
		return fail(s, NULL, "unexpected end of input");
	if (at_comment(s, s->p))
		return fail(s, s->p, "a comment (JSON has none)");
	describe(s->p, s->end, got, sizeof(got));
	return fail(s, s->p, "expected %s, got %s", what, got);
}

/* After the ',' at @comma, the @close of the object or array came: the
 * comma many languages (and JSON5) allow there. */
static bool trailing_comma(struct scan *s, const unsigned char *comma, char close)
{
	return fail(s, comma, "a trailing comma before '%c' (JSON allows none)", close);
}

static int hex4(const unsigned char *p, const unsigned char *end)
{
	int v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];

		v <<= 4;
		if (is_digit(c))
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A \uXXXX escape at s->p (the backslash), with its surrogate partner. */
static bool unicode_escape(struct scan *s)
{
	const unsigned char *bs = s->p;
	int cp = hex4(bs + 2, s->end);
	int lo;

	if (cp < 0)
		return fail(s, bs, "invalid \\u escape in string (expected 4 hex digits)");
	if (cp == 0)
		return fail(s, bs, "\\u0000 is not allowed in strings");
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return fail(s, bs, "unpaired surrogate \\u%04X in string", (unsigned)cp);
	if (cp < 0xD800 || cp > 0xDBFF) {
		s->p += 6;
		return true;
	}
	lo = s->end - bs >= 12 && bs[6] == '\\' && bs[7] == 'u' ? hex4(bs + 8, s->end) : -1;
	if (lo < 0xDC00 || lo > 0xDFFF)
		return fail(s, bs, "unpaired surrogate \\u%04X in string", (unsigned)cp);
	s->p += 12;
	return true;
}

static bool string(struct scan *s)
{
	const unsigned char *open = s->p++;
	uint32_t cp;
	int n;

	while (s->p < s->end) {
		unsigned char c = *s->p;

		if (c == '"') {
			s->p++;
			return true;
		}
		if (c == '\n')
			return fail(
			        s, open,
			        "unterminated string (a line break comes before the closing '\"')");
		if (c < 0x20)
			return fail(s, s->p, "unescaped control character U+%04X in string", c);
		if (c == '\\') {
			if (s->end - s->p < 2)
				break;
			switch (s->p[1]) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't': s->p += 2; continue;
			case 'u':
				if (!unicode_escape(s))
					return false;
				continue;
			default:
				if (s->p[1] > 0x20 && s->p[1] < 0x7F)
					return fail(s, s->p, "invalid escape '\\%c' in string",
					            s->p[1]);
				return fail(s, s->p, "invalid escape in string");
			}
		}
		n = utf8_decode(s->p, s->end, &cp);
		if (n == 0)
			return fail(s, s->p, "invalid UTF-8 in string");
		s->p += n;
	}
	return fail(s, open, "unterminated string");
}

static bool digits(struct scan *s, const unsigned char *start, const char *why)
{
	if (s->p >= s->end)
		return fail(s, NULL, "unexpected end of input");
	if (!is_digit(*s->p))
		return fail(s, start, "invalid number (%s)", why);
	while (s->p < s->end && is_digit(*s->p))
		s->p++;
	return true;
}

static bool number(struct scan *s)
{
	const unsigned char *start = s->p;

	if (*s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0') {
		s->p++;
		if (s->p < s->end && is_digit(*s->p))
			return fail(s, start, "invalid number (leading zero)");
	} else if (!digits(s, start, "expected a digit")) {
		return false;
	}
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (!digits(s, start, "expected a digit after '.'"))
			return false;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!digits(s, start, "expected a digit in the exponent"))
			return false;
	}
	return true;
}

static bool literal(struct scan *s)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t w = 0;

	while (s->p + w < s->end && is_word(s->p[w]))
		w++;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (w == strlen(words[i]) && memcmp(s->p, words[i], w) == 0) {
			s->p += w;
			return true;
		}
		/* "tru" at the very end: cut short, not misspelt */
		if (w > 0 && s->p + w == s->end && w < strlen(words[i]) &&
		    memcmp(s->p, words[i], w) == 0)
			return fail(s, NULL, "unexpected end of input");
	}
	return expected(s, "a value");
}

static bool value(struct scan *s);

static bool object(struct scan *s)
{
	bool first = true;

	s->p++;
	for (;;) {
		skip_ws(s);
		if (first && s->p < s->end && *s->p == '}')
			break;
		if (s->p >= s->end || *s->p != '"')
			return expected(s, first ? "a string key or '}'" : "a string key");
		first = false;
		if (!string(s))
			return false;
		skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return expected(s, "':' after the key");
		s->p++;
		if (!value(s))
			return false;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			const unsigned char *comma = s->p++;

			skip_ws(s);
			if (s->p < s->end && *s->p == '}')
				return trailing_comma(s, comma, '}');
			continue;
		}
		if (s->p < s->end && *s->p == '}')
			break;
		return expected(s, "',' or '}'");
	}
	s->p++;
	return true;
}

static bool array(struct scan *s)
{
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return true;
	}
	for (;;) {
		if (!value(s))
			return false;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			const unsigned char *comma = s->p++;

			skip_ws(s);
			if (s->p < s->end && *s->p == ']')
				return trailing_comma(s, comma, ']');
			continue;
		}
		if (s->p < s->end && *s->p == ']')
			break;
		return expected(s, "',' or ']'");
	}
	s->p++;
	return true;
}

static bool value(struct scan *s)
{
	bool ok;

	skip_ws(s);
	if (s->p >= s->end)
		return fail(s, NULL, "unexpected end of input");
	switch (*s->p) {
	case '{':
	case '[':
		if (s->depth >= FA_JSONTEXT_MAX_DEPTH)
			return fail(s, s->p, "nesting deeper than %d levels",
			            FA_JSONTEXT_MAX_DEPTH);
		s->depth++;
		ok = *s->p == '{' ? object(s) : array(s);
		s->depth--;
		return ok;
	case '"': return string(s);
	case '-':
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9': return number(s);
	default: return literal(s);
	}
}

void fa_jsontext_position(const char *text, size_t off, unsigned *line, unsigned *col)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t i = 0;

	*line = 1;
	*col = 1;
	/* the byte order mark is invisible in an editor: it takes no column */
	if (off >= sizeof(bom) && memcmp(t, bom, sizeof(bom)) == 0)
		i = sizeof(bom);
	for (; i < off; i++) {
		if (t[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if ((t[i] & 0xC0) != 0x80) {
			(*col)++;
		}
	}
}

enum fa_rc fa_jsontext_parse(const char *text, size_t len, const char *name, cJSON **out,
                             struct fa_err *err)
{
	const unsigned char *t = (const unsigned char *)text;
	struct scan s = { 0 };
	const char *end = NULL;
	size_t skip = 0, off;
	unsigned line, col;
	cJSON *root = NULL;

	*out = NULL;
	if (len >= sizeof(bom) && memcmp(t, bom, sizeof(bom)) == 0)
		skip = sizeof(bom);
	s.p = t + skip;
	s.end = t + len;
	if (!value(&s))
		goto syntax;
	skip_ws(&s);
	if (s.p < s.end) {
		fail(&s, s.p,
		     at_comment(&s, s.p) ? "a comment (JSON has none)"
		                         : "trailing characters after the JSON value");
		goto syntax;
	}

	root = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, 0);
	if (root == NULL) {
		/* the scanner passed it: only an allocation failure gets here */
		fail(&s, (const unsigned char *)end, "invalid JSON");
		goto syntax;
	}
	/* what cJSON's require_null_terminated would insist on, kept even
	 * though the scanner already did */
	for (s.p = (const unsigned char *)end; s.p < s.end && is_ws(*s.p); s.p++)
		;
	if (s.p < s.end) {
		cJSON_Delete(root);
		fail(&s, s.p, "trailing characters after the JSON value");
		goto syntax;
	}
	*out = root;
	return FA_OK;

syntax:
	if (s.at == NULL) {
		/* cut short: point just past the last thing written */
		s.at = s.end;
		while (s.at > t + skip && is_ws(s.at[-1]))
			s.at--;
	}
	off = (size_t)(s.at - t);
	fa_jsontext_position(text, off, &line, &col);
	fa_err_set(err, "%s:%u:%u: %s", name, line, col, s.msg);
	return FA_EINVAL;
}

/* A FIFO or a device would block the open or the read for ever: only a
 * regular file has an end a read reaches. Records why @st (of @path) is
 * no file to read and returns its status, or FA_OK. */
static enum fa_rc check_kind(const char *path, const struct stat *st, struct fa_err *err)
{
	if (S_ISREG(st->st_mode))
		return FA_OK;
	if (S_ISDIR(st->st_mode)) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(EISDIR));
		return FA_EIO;
	}
	fa_err_set(err, "%s: not a regular file", path);
	return FA_EINVAL;
}

enum fa_rc fa_jsontext_read(const char *path, char **text, size_t *len, struct fa_err *err)
{
	enum fa_rc rc = FA_EIO;
	struct stat st;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int fd = -1;

	*text = NULL;
	*len = 0;
	/* refused before the open, and again by the descriptor (O_NONBLOCK
	 * opens a FIFO at once) in case the path changed in between */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		rc = check_kind(path, &st, err);
		goto out;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	rc = check_kind(path, &st, err);
	if (rc != FA_OK)
		goto out;
	rc = FA_EIO;
	for (;;) {
		ssize_t got;

		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 16384;
			buf = fa_xrealloc(buf, cap + 1);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
			goto out;
		}
		n += (size_t)got;
		if (n > FA_JSONTEXT_MAX_FILE) {
			fa_err_set(err, "%s: cannot read: file larger than %u MiB", path,
			           FA_JSONTEXT_MAX_FILE >> 20);
			rc = FA_EINVAL;
			goto out;
		}
		if (got == 0)
			break;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
	rc = FA_OK;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
