/* draft.c -- what both importers share to draft a scenario from observed traffic: options,
 * warnings, path templates, route ids, times. */
#include "draft.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "redact.h"
#include "route.h"
#include "utf8.h"

void hx_draft_warn(struct hx_draft_warnings *w, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	w->msg = fa_xrealloc(w->msg, (w->n + 1) * sizeof(*w->msg));
	w->msg[w->n++] = fa_xstrdup(buf);
}

void hx_draft_warnings_release(struct hx_draft_warnings *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->msg[i]);
	free(w->msg);
	w->msg = NULL;
	w->n = 0;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fa_route_hexval((unsigned char)s[i]) < 0)
			return false;
	return true;
}

/* 8-4-4-4-12 hex digits. */
static bool is_uuid(const char *s, size_t n)
{
	return n == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' &&
	       is_hex(s, 8) && is_hex(s + 9, 4) && is_hex(s + 14, 4) && is_hex(s + 19, 4) &&
	       is_hex(s + 24, 12);
}

/* Whether segment @s (@n bytes, decoded) names an object rather than a
 * place: see hx_draft_template. */
static bool is_id(const char *s, size_t n)
{
	bool digit = false, word = true, all_digits = n > 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= '0' && c <= '9')
			digit = true;
		else
			all_digits = false;
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '_' || c == '-'))
			word = false;
	}
	return all_digits || is_uuid(s, n) || (n >= 16 && word && digit);
}

/* Whether a template can hold segment @s literally (schema.c's rules for
 * a route path, and no braces). */
static bool literal_ok(const char *s)
{
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= 0x20 || c == 0x7F || strchr("#?%{}/", c) != NULL)
			return false;
	}
	return fa_utf8_valid(s);
}

char *hx_draft_template(const char *path, bool decode)
{
	/* the provider decodes the whole path, then splits it: a %2F splits */
	char *dec = decode ? fa_route_pct_decode(path, strlen(path)) : NULL;
	size_t cap = strlen(path) * 2 + 16, len = 0;
	char *out = fa_xmalloc(cap);
	const char *p = dec != NULL ? dec : path;
	int params = 0;

	if (*p == '/')
		p++;
	out[0] = '\0';
	for (;;) {
		size_t n = strcspn(p, "/");
		char *seg = fa_xstrndup(p, n);

		out = fa_xgrow(out, &cap, len + strlen(seg) + 16, 64);
		out[len++] = '/';
		if (n > 0 && (is_id(seg, strlen(seg)) || !literal_ok(seg))) {
			if (++params > FA_ROUTE_MAX_PARAMS) {
				free(seg);
				free(out);
				free(dec);
				return NULL;
			}
			len += (size_t)(params == 1
			                        ? snprintf(out + len, cap - len, "{id}")
			                        : snprintf(out + len, cap - len, "{id%d}", params));
		} else {
			memcpy(out + len, seg, strlen(seg));
			len += strlen(seg);
		}
		out[len] = '\0';
		free(seg);
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	free(dec);
	return out;
}

char *hx_draft_remove_dots(const char *path)
{
	size_t n = strlen(path), o = 0;
	char *out = fa_xmalloc(n + 2);
	const char *p = path;

	/* segment by segment: "." goes, ".." takes the one before with it; a
	 * last "." or ".." leaves the trailing "/" (RFC 3986 §5.2.4) */
	if (*p == '/')
		p++;
	for (;;) {
		size_t sl = strcspn(p, "/");
		bool last = p[sl] == '\0';

		if (sl == 1 && p[0] == '.') {
			if (last)
				out[o++] = '/';
		} else if (sl == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
			if (last)
				out[o++] = '/';
		} else {
			out[o++] = '/';
			memcpy(out + o, p, sl);
			o += sl;
		}
		if (last)
			break;
		p += sl + 1;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

const char *hx_draft_path_unfit(const char *path)
{
	char *dec;
	const char *why = NULL;

	for (const char *p = path; *p != '\0'; p++)
		if (p[0] == '%' && p[1] == '0' && p[2] == '0')
			return "a %00, at which the provider's path ends";
	dec = fa_route_pct_decode(path, strlen(path));
	for (const char *p = dec; *p != '\0' && why == NULL; p = p + strcspn(p, "/")) {
		size_t sl;

		p += *p == '/';
		sl = strcspn(p, "/");
		if ((sl == 1 && p[0] == '.') || (sl == 2 && p[0] == '.' && p[1] == '.'))
			why = "a \".\" or \"..\" segment once decoded (%2E, %2F), which clients "
			      "resolve in different ways";
		if (sl == 0 && *p == '\0')
			break;
	}
	free(dec);
	return why;
}

bool hx_draft_authority_ok(const char *auth, size_t len, char *msg, size_t size)
{
	const char *port = NULL, *end = auth + len;

	if (len == 0) {
		snprintf(msg, size, "no host");
		return false;
	}
	if (auth[0] == '[') {
		const char *close = memchr(auth, ']', len);

		if (close == NULL) {
			snprintf(msg, size, "a host \"%.*s\" without its closing \"]\"", (int)len,
			         auth);
			return false;
		}
		if (close + 1 < end && close[1] != ':') {
			snprintf(msg, size, "\"%.*s\" after the host \"%.*s\"",
			         (int)(end - close - 1), close + 1, (int)(close + 1 - auth), auth);
			return false;
		}
		port = close + 1 < end ? close + 2 : NULL;
	} else {
		for (const char *p = auth; p < end && port == NULL; p++) {
			if (*p == '[' || *p == ']') {
				snprintf(msg, size, "a host \"%.*s\" with a bracket", (int)len,
				         auth);
				return false;
			}
			if (*p == ':')
				port = p + 1;
		}
		if (port == auth + 1) {
			snprintf(msg, size, "no host before the port");
			return false;
		}
	}
	if (port != NULL && port < end) {
		long v = 0;
		size_t pl = (size_t)(end - port);

		for (size_t i = 0; i < pl && v <= 65535; i++)
			v = port[i] >= '0' && port[i] <= '9' ? v * 10 + (port[i] - '0') : 65536;
		if (v < 1 || v > 65535) {
			snprintf(msg, size, "port \"%.*s\", expected 1..65535", (int)pl, port);
			return false;
		}
	}
	return true;
}

/* Encode the bytes a task path may not hold (blanks, controls, "#",
 * non-ASCII, a "%" that starts no escape) as %XX. A new string. */
static char *encode_bad(const char *s)
{
	char *out = fa_xmalloc(strlen(s) * 3 + 1);
	size_t o = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool bad_pct = c == '%' && !(fa_route_hexval((unsigned char)s[1]) >= 0 &&
		                             fa_route_hexval((unsigned char)s[2]) >= 0);

		if (c <= 0x20 || c >= 0x7F || c == '#' || bad_pct) {
			out[o++] = '%';
			out[o++] = "0123456789ABCDEF"[c >> 4];
			out[o++] = "0123456789ABCDEF"[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* The query @q (after "?", may be NULL) without fa_task parameters, or
 * NULL when none is left. A new string. */
static char *strip_fa_task(const char *q)
{
	char *out, *tok, *rest, *copy;
	size_t o = 0;

	if (q == NULL || *q == '\0')
		return NULL;
	copy = fa_xstrdup(q);
	out = fa_xmalloc(strlen(q) + 1);
	for (tok = copy; tok != NULL; tok = rest) {
		rest = strchr(tok, '&');
		if (rest != NULL)
			*rest++ = '\0';
		if (*tok == '\0' || strcmp(tok, "fa_task") == 0 || strncmp(tok, "fa_task=", 8) == 0)
			continue;
		if (o > 0)
			out[o++] = '&';
		memcpy(out + o, tok, strlen(tok));
		o += strlen(tok);
	}
	out[o] = '\0';
	free(copy);
	if (o == 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *hx_draft_task_path(const char *path, const char *query, struct hx_redact_stats *st)
{
	char *q = strip_fa_task(query), *red = NULL, *raw, *out;

	if (q != NULL)
		red = hx_redact_text(q, true, st);
	raw = red != NULL ? fa_xasprintf("%s?%s", path, red) : fa_xstrdup(path);
	out = encode_bad(raw);
	free(raw);
	free(red);
	free(q);
	return out;
}

char *hx_draft_encode_path(const char *path)
{
	static const char keep[] = "-._~!$&'()*+,;=:@/";
	size_t n = strlen(path), o = 0;
	char *out = fa_xmalloc(n * 3 + 1);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c != '\0' && strchr(keep, c) != NULL)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = "0123456789ABCDEF"[c >> 4];
			out[o++] = "0123456789ABCDEF"[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

const char *hx_draft_basename(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash != NULL ? slash + 1 : file;
}

char *hx_draft_id_from_file(const char *file)
{
	const char *base = hx_draft_basename(file);
	const char *dot = strrchr(base, '.');
	size_t n = dot != NULL && dot != base ? (size_t)(dot - base) : strlen(base);
	char *id;

	if (n > 64)
		n = 64;
	id = fa_xstrndup(base, n);
	for (char *p = id; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || *p == '.' || *p == '_' || *p == '-'))
			*p = '-';
	if (id[0] == '\0') {
		free(id);
		id = fa_xstrdup("imported");
	}
	return id;
}

char *hx_draft_route_id(const char *method, const char *tmpl, char *const *taken, size_t n)
{
	size_t cap = strlen(method) + strlen(tmpl) + 2, len = 0;
	char *base = fa_xmalloc(cap), *id;
	bool dash = false;

	for (const char *p = method; *p != '\0'; p++)
		base[len++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	for (const char *p = tmpl; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    c == '_' || c == '.') {
			if (dash)
				base[len++] = '-';
			base[len++] = (char)c;
			dash = false;
		} else {
			dash = true;
		}
	}
	base[len] = '\0';
	id = fa_xstrdup(base);
	for (int k = 2;; k++) {
		bool clash = false;

		for (size_t i = 0; i < n && !clash; i++)
			clash = strcmp(taken[i], id) == 0;
		if (!clash)
			break;
		free(id);
		id = fa_xasprintf("%s-%d", base, k);
	}
	free(base);
	return id;
}

const char *hx_draft_class(const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	    strcmp(method, "OPTIONS") == 0)
		return "read";
	return "write";
}

cJSON *hx_draft_times(cJSON *r, int times)
{
	cJSON *o;

	if (times <= 1)
		return r;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "times", times);
	while (r->child != NULL) {
		cJSON *c = r->child;
		char *name = fa_xstrdup(c->string);

		cJSON_AddItemToObject(o, name, cJSON_DetachItemViaPointer(r, c));
		free(name);
	}
	cJSON_Delete(r);
	return o;
}

bool hx_draft_value_ok(const char *value)
{
	for (const char *p = value; *p != '\0'; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7F)
			return false;
	return true;
}

int hx_draft_timeout_s(int64_t last_at_ms)
{
	int64_t s = (last_at_ms + 999) / 1000 + 60;

	return s < 60 ? 60 : s > 3600 ? 3600 : (int)s;
}
