/* redact.c -- the one rule for what names a credential in an imported capture, and its removal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "redact.h"

#define REDACTED "redacted"

/* Words that make any name holding them a credential's. "token" is
 * checked apart: "tokens" counts, it does not authenticate. */
static const char *const words[] = {
	"apikey", "api-key", "api_key", "secret", "password", "passwd", "auth", "session",
	"credential", "bearer", "cookie", "signature", "access_key", "access-key", "accesskey",
	"private_key", "private-key", "privatekey", NULL,
};

/* Names that are a credential's only when they are the whole name. */
static const char *const whole[] = { "key", "pwd", "sig", NULL };

static bool has_word(const char *name, size_t len, const char *w)
{
	size_t wl = strlen(w);

	for (size_t i = 0; i + wl <= len; i++)
		if (strncasecmp(name + i, w, wl) == 0)
			return true;
	return false;
}

bool hx_redact_name(const char *name, size_t len, bool in_url)
{
	if (len >= 15 && strncasecmp(name, "access-control-", 15) == 0)
		return false;
	for (size_t i = 0; words[i] != NULL; i++)
		if (has_word(name, len, words[i]))
			return true;
	for (size_t i = 0; i + 5 <= len; i++)
		if (strncasecmp(name + i, "token", 5) == 0 &&
		    !(i + 5 < len && (name[i + 5] == 's' || name[i + 5] == 'S')))
			return true;
	for (size_t i = 0; whole[i] != NULL; i++)
		if (len == strlen(whole[i]) && strncasecmp(name, whole[i], len) == 0)
			return true;
	return in_url && len == 4 && strncasecmp(name, "code", 4) == 0;
}

static void note(struct hx_redact_stats *st, const char *name, size_t len)
{
	size_t used;

	if (st == NULL)
		return;
	st->n++;
	used = strlen(st->names);
	if (used + len + 3 < sizeof(st->names))
		snprintf(st->names + used, sizeof(st->names) - used, "%s%.*s",
			 used > 0 ? ", " : "", (int)len, name);
}

int hx_redact_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Whether the parameter name @s (@n bytes, still percent-encoded) is a
 * credential's: "api%5Fkey" is api_key. */
static bool param_secret(const char *s, size_t n)
{
	char buf[256];
	size_t o = 0;

	for (size_t i = 0; i < n && o < sizeof(buf); i++) {
		if (s[i] == '%' && i + 2 < n && hx_redact_hexval((unsigned char)s[i + 1]) >= 0 &&
		    hx_redact_hexval((unsigned char)s[i + 2]) >= 0) {
			buf[o++] = (char)(hx_redact_hexval((unsigned char)s[i + 1]) * 16 +
					  hx_redact_hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			buf[o++] = s[i];
		}
	}
	return hx_redact_name(buf, o, true);
}

/* Where a parameter's name or value ends in free text. */
static bool ends_value(char c)
{
	return c == '\0' || c == '&' || c == '#' || c == ' ' || c == '\t' || c == '\r' ||
	       c == '\n' || c == '<' || c == '>' || c == '"' || c == '\'';
}

char *hx_redact_text(const char *text, bool is_query, struct hx_redact_stats *st)
{
	size_t len = strlen(text), o = 0;
	/* a shortest redacted parameter, "key=", grows from 4 bytes to 12 */
	char *out = fa_xmalloc(len * 3 + 16);
	const char *p = text;
	bool param = is_query; /* a parameter's name starts at p */

	while (*p != '\0') {
		if (strncmp(p, "://", 3) == 0) {
			/* scheme://user:password@host: the userinfo never leaves */
			size_t auth = strcspn(p + 3, "/?#<>\"' \t\r\n");
			const char *at = memchr(p + 3, '@', auth);

			memcpy(out + o, "://", 3);
			o += 3;
			p += 3;
			if (at != NULL) {
				p = at + 1;
				if (st != NULL)
					st->userinfo++;
			}
			continue;
		}
		if (param) {
			size_t n = 0;

			while (!ends_value(p[n]) && p[n] != '=' && p[n] != '?')
				n++;
			param = false;
			if (p[n] == '=' && n > 0 && param_secret(p, n)) {
				size_t v = n + 1;

				memcpy(out + o, p, n + 1);
				o += n + 1;
				note(st, p, n);
				while (!ends_value(p[v]))
					v++;
				memcpy(out + o, REDACTED, strlen(REDACTED));
				o += strlen(REDACTED);
				p += v;
				continue;
			}
		}
		if (*p == '?' || *p == '#' || *p == '&')
			param = true;
		out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

void hx_redact_json(cJSON *v, struct hx_redact_stats *st)
{
	for (cJSON *c = v != NULL ? v->child : NULL; c != NULL; c = c->next) {
		if (cJSON_IsObject(v) && c->string != NULL &&
		    hx_redact_name(c->string, strlen(c->string), false)) {
			/* the whole value, whatever its type: an object of
			 * credentials, a list of keys, a numeric PIN */
			cJSON *r = cJSON_CreateString(REDACTED);

			if (cJSON_IsString(c) && strcmp(c->valuestring, REDACTED) == 0) {
				cJSON_Delete(r);
				continue;
			}
			if (st != NULL)
				st->members++;
			r->string = fa_xstrdup(c->string); /* ViaPointer keeps no name */
			cJSON_ReplaceItemViaPointer(v, c, r);
			c = r;
		} else if (cJSON_IsString(c) && strpbrk(c->valuestring, "?#:") != NULL) {
			char *s = hx_redact_text(c->valuestring, false, st);

			if (strcmp(s, c->valuestring) != 0)
				cJSON_SetValuestring(c, s);
			free(s);
		} else {
			hx_redact_json(c, st);
		}
	}
}
