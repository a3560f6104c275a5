/* schema.c -- table-driven checks of JSON values, with located messages. */
#include "schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "suggest.h"

void fa_schema_init(struct fa_schema *s, const char *file, struct fa_err *err)
{
	s->file = file;
	s->err = err;
	snprintf(s->path, sizeof(s->path), "$");
	s->len = 1;
}

/* Append to the path, cutting it short rather than overflowing. */
static void path_add(struct fa_schema *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void path_add(struct fa_schema *s, const char *fmt, ...)
{
	size_t room = sizeof(s->path) - s->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s->path + s->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	s->len += (size_t)n < room ? (size_t)n : room - 1;
}

/* JSON-escape up to @max_chars characters of @str into @buf; returns true
 * when all of it fit. */
static bool escape(const char *str, size_t max_chars, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)str;
	size_t o = 0, chars = 0;

	for (; *p != '\0'; p++) {
		char tmp[8];
		size_t n;

		if ((*p & 0xC0) != 0x80 && chars++ == max_chars)
			break;
		if (*p == '"' || *p == '\\')
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\%c", *p);
		else if (*p == '\n')
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\n");
		else if (*p == '\r')
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\r");
		else if (*p == '\t')
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\t");
		else if (*p < 0x20 || *p == 0x7F)
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
		else
			n = (size_t)snprintf(tmp, sizeof(tmp), "%c", *p);
		if (o + n >= len)
			break;
		memcpy(buf + o, tmp, n);
		o += n;
	}
	buf[o] = '\0';
	return *p == '\0';
}

static bool is_identifier(const char *key)
{
	if (!((*key >= 'A' && *key <= 'Z') || (*key >= 'a' && *key <= 'z') || *key == '_'))
		return false;
	return fa_schema_charset_ok(key, "_", strlen(key));
}

size_t fa_schema_enter(struct fa_schema *s, const char *key)
{
	size_t mark = s->len;
	char buf[sizeof(s->path)];

	if (is_identifier(key)) {
		path_add(s, ".%s", key);
	} else {
		escape(key, sizeof(buf), buf, sizeof(buf));
		path_add(s, "[\"%s\"]", buf);
	}
	return mark;
}

size_t fa_schema_enter_index(struct fa_schema *s, size_t i)
{
	size_t mark = s->len;

	path_add(s, "[%zu]", i);
	return mark;
}

void fa_schema_leave(struct fa_schema *s, size_t mark)
{
	s->len = mark;
	s->path[mark] = '\0';
}

enum fa_rc fa_schema_fail(struct fa_schema *s, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fa_err_set(s->err, "%s: %s: %s", s->file, s->path, msg);
	return FA_EINVAL;
}

enum fa_rc fa_schema_fail_got(struct fa_schema *s, const cJSON *got, const char *what_fmt, ...)
{
	char what[512], desc[300];
	va_list ap;

	va_start(ap, what_fmt);
	vsnprintf(what, sizeof(what), what_fmt, ap);
	va_end(ap);
	fa_schema_describe(got, desc, sizeof(desc));
	return fa_schema_fail(s, "expected %s, got %s", what, desc);
}

struct fa_quoted fa_schema_quote(const char *str)
{
	struct fa_quoted q;
	char buf[sizeof(q.s) - 8];
	bool whole;

	if (str == NULL) {
		snprintf(q.s, sizeof(q.s), "null");
		return q;
	}
	whole = escape(str, FA_SCHEMA_QUOTE_CHARS, buf, sizeof(buf));
	snprintf(q.s, sizeof(q.s), "\"%s%s\"", buf, whole ? "" : "...");
	return q;
}

bool fa_schema_is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
	       v->valuedouble == floor(v->valuedouble);
}

/* Shortest of %.15g and %.17g that reads back as @d: "10.5", not
 * "10.500000000000000". */
static void describe_fraction(double d, char *buf, size_t len)
{
	char num[40];

	snprintf(num, sizeof(num), "%.15g", d);
	if (strtod(num, NULL) != d)
		snprintf(num, sizeof(num), "%.17g", d);
	snprintf(buf, len, "number %s", num);
}

void fa_schema_describe(const cJSON *v, char *buf, size_t len)
{
	double d;

	if (cJSON_IsString(v)) {
		snprintf(buf, len, "string %s", fa_schema_quote(v->valuestring).s);
	} else if (cJSON_IsNumber(v)) {
		d = v->valuedouble;
		if (!isfinite(d))
			snprintf(buf, len, "number too large");
		else if (fa_schema_is_integer(v) && fabs(d) < 1e21)
			snprintf(buf, len, "integer %.0f", d);
		else
			describe_fraction(d, buf, len);
	} else if (cJSON_IsTrue(v)) {
		snprintf(buf, len, "true");
	} else if (cJSON_IsFalse(v)) {
		snprintf(buf, len, "false");
	} else if (cJSON_IsNull(v)) {
		snprintf(buf, len, "null");
	} else if (cJSON_IsObject(v)) {
		snprintf(buf, len, "%s", v->child ? "object" : "empty object");
	} else if (cJSON_IsArray(v)) {
		snprintf(buf, len, "%s", v->child ? "array" : "empty array");
	} else {
		snprintf(buf, len, "nothing");
	}
}

bool fa_schema_charset_ok(const char *str, const char *charset, size_t max)
{
	size_t n = 0;

	for (const char *p = str; *p != '\0'; p++, n++) {
		bool alnum = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		             (*p >= '0' && *p <= '9');

		if (!alnum && strchr(charset, *p) == NULL)
			return false;
	}
	return n >= 1 && n <= max;
}

enum fa_rc fa_schema_unique(struct fa_schema *s, const cJSON *obj)
{
	for (const cJSON *a = obj->child; a != NULL; a = a->next) {
		for (const cJSON *b = obj->child; b != a; b = b->next) {
			if (strcmp(a->string, b->string) == 0)
				return fa_schema_fail(s, "duplicate key %s",
				                      fa_schema_quote(a->string).s);
		}
	}
	return FA_OK;
}

/* "integer 1..1000", "one of GET|HEAD", "string matching [A-Za-z0-9._-]{1,64}" */
static void expected_text(const struct fa_field *f, char *buf, size_t len)
{
	bool nonempty = (f->flags & FA_FIELD_NONEMPTY) != 0;
	size_t o;

	switch (f->type) {
	case FA_SCHEMA_STRING:
		if (f->one_of != NULL) {
			o = (size_t)snprintf(buf, len, "one of ");
			for (size_t i = 0; f->one_of[i] != NULL && o < len; i++)
				o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "|" : "",
				                      f->one_of[i]);
		} else if (f->charset != NULL) {
			snprintf(buf, len, "string matching [A-Za-z0-9%s]{1,%lld}", f->charset,
			         (long long)f->max);
		} else {
			snprintf(buf, len, "%sstring", nonempty ? "non-empty " : "");
		}
		return;
	case FA_SCHEMA_INT:
		snprintf(buf, len, "integer %lld..%lld", (long long)f->min, (long long)f->max);
		return;
	case FA_SCHEMA_BOOL: snprintf(buf, len, "true or false"); return;
	case FA_SCHEMA_OBJECT: snprintf(buf, len, "%sobject", nonempty ? "non-empty " : ""); return;
	case FA_SCHEMA_ARRAY: snprintf(buf, len, "%sarray", nonempty ? "non-empty " : ""); return;
	case FA_SCHEMA_ANY: break;
	}
	snprintf(buf, len, "any value");
}

/* Index of @str in the NULL-terminated @one_of, or -1. */
static int one_of_index(const char *const *one_of, const char *str)
{
	for (int i = 0; one_of[i] != NULL; i++) {
		if (strcmp(one_of[i], str) == 0)
			return i;
	}
	return -1;
}

static bool value_ok(const cJSON *v, const struct fa_field *f)
{
	bool nonempty = (f->flags & FA_FIELD_NONEMPTY) != 0;
	double d;

	switch (f->type) {
	case FA_SCHEMA_ANY: return true;
	case FA_SCHEMA_STRING:
		if (!cJSON_IsString(v))
			return false;
		if (f->one_of != NULL)
			return one_of_index(f->one_of, v->valuestring) >= 0;
		if (f->charset != NULL)
			return fa_schema_charset_ok(v->valuestring, f->charset, (size_t)f->max);
		return !nonempty || v->valuestring[0] != '\0';
	case FA_SCHEMA_INT:
		if (!fa_schema_is_integer(v))
			return false;
		d = v->valuedouble;
		return d >= (double)f->min && d <= (double)f->max;
	case FA_SCHEMA_BOOL: return cJSON_IsBool(v);
	case FA_SCHEMA_OBJECT: return cJSON_IsObject(v) && (!nonempty || v->child != NULL);
	case FA_SCHEMA_ARRAY: return cJSON_IsArray(v) && (!nonempty || v->child != NULL);
	}
	return false;
}

/* Write the checked @v into @dst as f->store says. */
static void store(const cJSON *v, const struct fa_field *f, void *dst)
{
	char *at = (char *)dst + f->off;
	int i;
	int64_t l;
	bool b;
	char *str;
	cJSON *copy;

	/* memcpy, not a cast: the member may be an enum or packed oddly */
	switch (f->store) {
	case FA_STORE_NONE: return;
	case FA_STORE_STR:
		memcpy(&str, at, sizeof(str));
		free(str);
		str = fa_xstrdup(v->valuestring);
		memcpy(at, &str, sizeof(str));
		return;
	case FA_STORE_INT:
		i = (int)v->valuedouble;
		memcpy(at, &i, sizeof(i));
		return;
	case FA_STORE_I64:
		l = (int64_t)v->valuedouble;
		memcpy(at, &l, sizeof(l));
		return;
	case FA_STORE_BOOL:
		b = cJSON_IsTrue(v);
		memcpy(at, &b, sizeof(b));
		return;
	case FA_STORE_INDEX:
		i = one_of_index(f->one_of, v->valuestring);
		memcpy(at, &i, sizeof(i));
		return;
	case FA_STORE_JSON:
		memcpy(&copy, at, sizeof(copy));
		cJSON_Delete(copy);
		copy = fa_xcheck(cJSON_Duplicate(v, 1), "cJSON_Duplicate");
		memcpy(at, &copy, sizeof(copy));
		return;
	}
}

enum fa_rc fa_schema_value(struct fa_schema *s, const cJSON *v, const struct fa_field *f, void *dst)
{
	char what[256], desc[300];

	if (!value_ok(v, f)) {
		const char *near = NULL;
		size_t n = 0;

		expected_text(f, what, sizeof(what));
		if (f->type == FA_SCHEMA_STRING && f->one_of != NULL && cJSON_IsString(v)) {
			while (f->one_of[n] != NULL)
				n++;
			near = fa_suggest(v->valuestring, f->one_of, n);
		}
		if (near == NULL)
			return fa_schema_fail_got(s, v, "%s", what);
		fa_schema_describe(v, desc, sizeof(desc));
		return fa_schema_fail(s, "expected %s, got %s, did you mean %s?", what, desc,
		                      fa_schema_quote(near).s);
	}
	if (dst != NULL)
		store(v, f, dst);
	return FA_OK;
}

/* "times, status, headers" -- the names a table allows, in its order,
 * FA_FIELD_UNLISTED ones left out. */
static void allowed_list(const struct fa_field *fields, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	snprintf(buf, len, "none");
	for (size_t i = 0; i < n && o < len; i++) {
		if (fields[i].flags & FA_FIELD_UNLISTED)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", fields[i].name);
	}
}

/* The listed name of @fields nearest to the unknown @key, or NULL. */
static const char *near_name(const struct fa_field *fields, size_t n, const char *key)
{
	const char **names = fa_xcalloc(n + 1, sizeof(*names));
	const char *best;

	for (size_t i = 0; i < n; i++)
		if (!(fields[i].flags & FA_FIELD_UNLISTED))
			names[i] = fields[i].name;
	best = fa_suggest(key, names, n);
	free(names);
	return best;
}

enum fa_rc fa_schema_object(struct fa_schema *s, const cJSON *obj, const struct fa_field *fields,
                            size_t n, void *dst, const cJSON **got)
{
	char allowed[512];
	enum fa_rc rc;

	if (!cJSON_IsObject(obj))
		return fa_schema_fail_got(s, obj, "object");
	rc = fa_schema_unique(s, obj);
	if (rc != FA_OK)
		return rc;
	for (const cJSON *c = obj->child; c != NULL; c = c->next) {
		size_t i = 0;

		while (i < n && strcmp(fields[i].name, c->string) != 0)
			i++;
		if (i == n) {
			const char *near = near_name(fields, n, c->string);

			allowed_list(fields, n, allowed, sizeof(allowed));
			return fa_schema_fail(
			        s, "unknown key %s%s%s%s (allowed: %s)",
			        fa_schema_quote(c->string).s, near ? ", did you mean " : "",
			        near ? fa_schema_quote(near).s : "", near ? "?" : "", allowed);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fields[i].name);
		size_t mark;

		if (got != NULL)
			got[i] = v;
		if (v == NULL) {
			if (fields[i].flags & FA_FIELD_REQUIRED)
				return fa_schema_fail(s, "missing required key %s",
				                      fa_schema_quote(fields[i].name).s);
			continue;
		}
		mark = fa_schema_enter(s, fields[i].name);
		rc = fa_schema_value(s, v, &fields[i], dst);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	return FA_OK;
}

size_t fa_schema_count(const cJSON *v)
{
	size_t n = 0;

	for (const cJSON *c = v->child; c != NULL; c = c->next)
		n++;
	return n;
}

enum fa_rc fa_schema_http_path(struct fa_schema *s, const cJSON *v, bool query_ok)
{
	const char *path = v->valuestring;

	if (path[0] != '/')
		return fa_schema_fail_got(s, v, "string starting with \"/\"");
	if (strcmp(path, "/_fakeapi") == 0 || strncmp(path, "/_fakeapi/", 10) == 0)
		return fa_schema_fail_got(s, v, "a path outside the reserved /_fakeapi/ prefix");
	for (const char *p = path; *p != '\0'; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7F || *p == '#')
			return fa_schema_fail_got(
			        s, v, "a path without spaces, control characters or \"#\"");
		if (*p == '?' && !query_ok)
			return fa_schema_fail_got(s, v, "a path without a query (\"?\")");
		/* the server matches routes on the decoded path: a template
		 * with an escape could never match what it seems to say */
		if (*p == '%' && !query_ok)
			return fa_schema_fail_got(
			        s, v,
			        "a path without percent-escapes (routes match the decoded path)");
	}
	const char *q = strchr(path, '?');
	/* the harness adds fa_task itself; a second one would misattribute */
	for (; q != NULL; q = strchr(q + 1, '&'))
		if (strncmp(q + 1, "fa_task=", 8) == 0 || strcmp(q + 1, "fa_task") == 0 ||
		    strncmp(q + 1, "fa_task&", 8) == 0)
			return fa_schema_fail_got(
			        s, v, "a path without an fa_task parameter (the harness adds it)");
	return FA_OK;
}
