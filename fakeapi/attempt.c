/* attempt.c -- one journal entry: an inbound attempt, and its JSON form. */
#include "attempt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "utf8.h"

/*
 * Numbers travel as cJSON doubles. Reading accepts integers up to 2^53;
 * writing is exact below 2^52 (4.5e15) only, because cJSON 1.7.15 keeps a
 * 15-significant-digit form whenever it reads back within DBL_EPSILON
 * (relative), which an integer that size misses by 1 or more. Times are
 * µs since server start and counters are small; the farthest pause
 * (retry_after.h: 2^31 s, 2.1e15 µs) leaves room for 74 years of uptime;
 * wall time goes out as a string.
 */
#define MAX_SAFE_INT 9007199254740992.0

/* How a member is stored; drives both directions so they cannot drift. */
enum kind {
	K_U64,
	K_I64,
	K_INT,
	K_UINT,
	K_STR,
	K_WALL,
	K_SHA,
	K_HEADERS,
	K_BOOL,
	K_DELIVERY,
	K_PAUSE,
	K_OPT_INT,
	K_SCALE
};

struct field {
	const char *name; /* JSON member */
	enum kind kind;
	size_t off; /* offsetof(struct fa_attempt, ...) */
};

#define F(name, kind, member)                                                                      \
	{                                                                                          \
		name, kind, offsetof(struct fa_attempt, member)                                    \
	}
/* The member order of fa_attempt_to_json(), as journal.h lists it. */
static const struct field fields[] = {
	F("seq", K_U64, seq),
	F("t_arrival_us", K_I64, t_arrival_us),
	F("t_response_us", K_I64, t_response_us),
	F("t_done_us", K_I64, t_done_us),
	F("wall", K_WALL, wall_us),
	F("method", K_STR, method),
	F("path", K_STR, path),
	F("route", K_STR, route),
	F("response_index", K_INT, response_index),
	F("task", K_STR, task),
	F("key", K_STR, key),
	F("user", K_STR, user),
	F("scope", K_STR, scope),
	F("idempotency_key", K_STR, idempotency_key),
	F("client_reference", K_STR, client_reference),
	F("body_sha256", K_SHA, body_sha256),
	F("attempt_headers", K_HEADERS, attempt_headers),
	F("status", K_INT, status),
	F("fault", K_STR, fault),
	F("committed", K_BOOL, committed),
	F("delivered", K_DELIVERY, delivered),
	F("conn_id", K_U64, conn_id),
	F("conn_reuse", K_UINT, conn_reuse),
	F("retry_after", K_STR, retry_after),
	F("retry_after_ms", K_STR, retry_after_ms),
	F("pause_until_us", K_PAUSE, pause_until_us),
	F("pause_from", K_STR, pause_from),
	F("quota", K_STR, quota),
	F("in_flight", K_INT, in_flight),
	F("tokens", K_OPT_INT, tokens),
	F("stream_chunks", K_OPT_INT, stream_chunks), /* null unless stream_end */
	F("stream_end", K_STR, stream_end),
	F("time_scale", K_SCALE, time_scale), /* left out at scale 1 */
};
#undef F
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *header_names[FA_AH_COUNT] = {
	"x-stainless-retry-count",
	"amz-sdk-request",
	"grpc-previous-rpc-attempts",
};

static const char *delivery_names[] = { "complete", "client_gone", "dropped" };

void fa_attempt_pause_from(struct fa_attempt *a, const char *from)
{
	free(a->pause_from);
	a->pause_from = from != NULL ? fa_xstrdup(from) : NULL;
}

void fa_attempt_release(struct fa_attempt *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < N_FIELDS; i++) {
		if (fields[i].kind == K_STR)
			free(*(char **)((char *)a + fields[i].off));
	}
	for (int h = 0; h < FA_AH_COUNT; h++)
		free(a->attempt_headers[h]);
	memset(a, 0, sizeof(*a));
}

const char *fa_delivery_str(enum fa_delivery d)
{
	if ((unsigned)d < sizeof(delivery_names) / sizeof(delivery_names[0]))
		return delivery_names[d];
	return "unknown";
}

static void add_str(cJSON *obj, const char *name, const char *s)
{
	if (s == NULL)
		cJSON_AddNullToObject(obj, name);
	else
		cJSON_AddStringToObject(obj, name, s);
}

cJSON *fa_attempt_to_json(const struct fa_attempt *a)
{
	cJSON *obj = cJSON_CreateObject();
	char wall[40];

	for (size_t i = 0; i < N_FIELDS; i++) {
		const char *name = fields[i].name;
		const void *p = (const char *)a + fields[i].off;
		cJSON *hdr;

		switch (fields[i].kind) {
		case K_U64: cJSON_AddNumberToObject(obj, name, (double)*(const uint64_t *)p); break;
		case K_I64: cJSON_AddNumberToObject(obj, name, (double)*(const int64_t *)p); break;
		case K_INT: cJSON_AddNumberToObject(obj, name, *(const int *)p); break;
		case K_UINT: cJSON_AddNumberToObject(obj, name, *(const unsigned *)p); break;
		case K_STR: add_str(obj, name, *(char *const *)p); break;
		case K_SHA: cJSON_AddStringToObject(obj, name, (const char *)p); break;
		case K_BOOL: cJSON_AddBoolToObject(obj, name, *(const bool *)p); break;
		case K_WALL:
			fa_clock_rfc3339(*(const int64_t *)p, wall, sizeof(wall));
			cJSON_AddStringToObject(obj, name, wall);
			break;
		case K_HEADERS:
			hdr = cJSON_AddObjectToObject(obj, name);
			for (int h = 0; h < FA_AH_COUNT; h++)
				add_str(hdr, header_names[h], a->attempt_headers[h]);
			break;
		case K_DELIVERY:
			cJSON_AddStringToObject(obj, name,
			                        fa_delivery_str(*(const enum fa_delivery *)p));
			break;
		case K_OPT_INT:
			if (*(const int *)p == -1 ||
			    (p == &a->stream_chunks && a->stream_end == NULL))
				cJSON_AddNullToObject(obj, name);
			else
				cJSON_AddNumberToObject(obj, name, *(const int *)p);
			break;
		case K_SCALE:
			if (*(const double *)p > 1.0)
				cJSON_AddNumberToObject(obj, name, *(const double *)p);
			break;
		case K_PAUSE:
			if (*(const int64_t *)p == -1)
				cJSON_AddNullToObject(obj, name);
			else
				cJSON_AddNumberToObject(obj, name, (double)*(const int64_t *)p);
			break;
		}
	}
	return obj;
}

/* A growing text; every put keeps room for the next few bytes. */
struct text {
	char *p;
	size_t n, cap;
};

static void reserve(struct text *t, size_t more)
{
	if (t->n + more <= t->cap)
		return;
	while (t->n + more > t->cap)
		t->cap = t->cap ? 2 * t->cap : 1024;
	t->p = fa_xrealloc(t->p, t->cap);
}

static void put(struct text *t, const char *s, size_t len)
{
	reserve(t, len);
	memcpy(t->p + t->n, s, len);
	t->n += len;
}

/* A JSON string (or null for NULL) escaped exactly as cJSON 1.7 prints
 * one: \" \\ \b \f \n \r \t, other bytes below 0x20 as \u00xx, every
 * other byte as it is. */
static void put_str(struct text *t, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	if (s == NULL) {
		put(t, "null", 4);
		return;
	}
	reserve(t, strlen(s) * 6 + 2);
	t->p[t->n++] = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
		char *o = t->p + t->n;

		if (*c >= 0x20 && *c != '"' && *c != '\\') {
			*o = (char)*c;
			t->n++;
			continue;
		}
		o[0] = '\\';
		t->n += 2;
		switch (*c) {
		case '"': o[1] = '"'; break;
		case '\\': o[1] = '\\'; break;
		case '\b': o[1] = 'b'; break;
		case '\f': o[1] = 'f'; break;
		case '\n': o[1] = 'n'; break;
		case '\r': o[1] = 'r'; break;
		case '\t': o[1] = 't'; break;
		default:
			o[1] = 'u';
			o[2] = '0';
			o[3] = '0';
			o[4] = hex[*c >> 4];
			o[5] = hex[*c & 15];
			t->n += 4;
		}
	}
	t->p[t->n++] = '"';
}

/* An integer in the digits cJSON prints for one below 2^52. */
static void put_int(struct text *t, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[sizeof(tmp) - 1 - n++] = '-';
	put(t, tmp + sizeof(tmp) - n, n);
}

static void put_key(struct text *t, const char *name)
{
	reserve(t, strlen(name) + 4);
	if (t->p[t->n - 1] != '{')
		t->p[t->n++] = ',';
	put_str(t, name);
	t->p[t->n++] = ':';
}

/* A number as cJSON prints a double (time_scale only: rare). */
static void put_double(struct text *t, double d)
{
	cJSON *n = cJSON_CreateNumber(d);
	char *s = cJSON_PrintUnformatted(n);

	put(t, s, strlen(s));
	cJSON_free(s);
	cJSON_Delete(n);
}

char *fa_attempt_render_unseq(const struct fa_attempt *a, size_t *len)
{
	struct text t = { NULL, 0, 0 };
	char wall[40];

	put(&t, "{", 1);
	for (size_t i = 0; i < N_FIELDS; i++) {
		const char *name = fields[i].name;
		const void *p = (const char *)a + fields[i].off;

		if (p == &a->seq || (fields[i].kind == K_SCALE && !(*(const double *)p > 1.0)))
			continue;
		put_key(&t, name);
		switch (fields[i].kind) {
		case K_U64: put_int(&t, (int64_t) * (const uint64_t *)p); break;
		case K_I64: put_int(&t, *(const int64_t *)p); break;
		case K_INT: put_int(&t, *(const int *)p); break;
		case K_UINT: put_int(&t, *(const unsigned *)p); break;
		case K_STR: put_str(&t, *(char *const *)p); break;
		case K_SHA: put_str(&t, (const char *)p); break;
		case K_BOOL:
			if (*(const bool *)p)
				put(&t, "true", 4);
			else
				put(&t, "false", 5);
			break;
		case K_WALL:
			fa_clock_rfc3339(*(const int64_t *)p, wall, sizeof(wall));
			put_str(&t, wall);
			break;
		case K_HEADERS:
			put(&t, "{", 1);
			for (int h = 0; h < FA_AH_COUNT; h++) {
				put_key(&t, header_names[h]);
				put_str(&t, a->attempt_headers[h]);
			}
			put(&t, "}", 1);
			break;
		case K_DELIVERY: put_str(&t, fa_delivery_str(*(const enum fa_delivery *)p)); break;
		case K_OPT_INT:
			if (*(const int *)p == -1 ||
			    (p == &a->stream_chunks && a->stream_end == NULL))
				put(&t, "null", 4);
			else
				put_int(&t, *(const int *)p);
			break;
		case K_SCALE: put_double(&t, *(const double *)p); break;
		case K_PAUSE:
			if (*(const int64_t *)p == -1)
				put(&t, "null", 4);
			else
				put_int(&t, *(const int64_t *)p);
			break;
		}
	}
	put(&t, "}", 1);
	reserve(&t, 1);
	t.p[t.n] = '\0';
	*len = t.n;
	return t.p;
}

const char *fa_attempt_json_type(const cJSON *v)
{
	if (v == NULL)
		return "nothing";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "invalid";
}

/* An integral number in [lo, hi] (both within ±2^53) into *@out. */
static bool get_int(const cJSON *v, double lo, double hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!isfinite(d) || floor(d) != d || d < lo || d > hi)
		return false;
	*out = (int64_t)d;
	return true;
}

/* "YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z" as fa_clock_rfc3339 writes it. */
static bool parse_rfc3339(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int64_t frac = 0;
	int ndig = 0, used = 0;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6 ||
	    used != 19)
		return false;
	s += used;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9' && ndig < 6; s++, ndig++)
			frac = frac * 10 + (*s - '0');
		if (ndig == 0)
			return false;
		for (int i = ndig; i < 6; i++)
			frac *= 10;
	}
	if (strcmp(s, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	*out = (int64_t)t * 1000000 + frac;
	return true;
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

/* A string member or null into *@out (fresh copy or NULL). */
static bool get_str(const cJSON *v, char **out)
{
	if (cJSON_IsNull(v)) {
		*out = NULL;
		return true;
	}
	if (!cJSON_IsString(v))
		return false;
	*out = fa_xstrdup(v->valuestring);
	return true;
}

/* cJSON takes any bytes in a string; the provider journals only UTF-8
 * (utf8.h), and what reads a journal back (import-journal's scenario, a
 * report) needs it to be. True, with @err set for member @name (and @sub,
 * or NULL), when @v is a string that is not UTF-8. */
static bool not_utf8(const cJSON *v, const char *name, const char *sub, struct fa_err *err)
{
	if (!cJSON_IsString(v) || fa_utf8_valid(v->valuestring))
		return false;
	fa_err_set(err, "$.%s%s%s: expected UTF-8 text, got a string that is not UTF-8", name,
	           sub != NULL ? "." : "", sub != NULL ? sub : "");
	return true;
}

/* What each integer kind accepts (both bounds within ±2^53). */
static const struct {
	double lo, hi;
	const char *want;
} int_range[] = {
	[K_U64] = { 0, MAX_SAFE_INT, "integer >= 0" },
	[K_I64] = { -MAX_SAFE_INT, MAX_SAFE_INT, "integer" },
	[K_INT] = { -2147483648.0, 2147483647.0, "integer" },
	[K_UINT] = { 0, 4294967295.0, "integer >= 0" },
	[K_PAUSE] = { -MAX_SAFE_INT, MAX_SAFE_INT, "integer or null" },
	[K_OPT_INT] = { 0, 2147483647.0, "integer >= 0 or null" },
};

/* Members added after the first journals were written: missing is null. */
static bool optional_member(const struct field *f)
{
	return f->kind == K_OPT_INT || f->kind == K_SCALE || strcmp(f->name, "stream_end") == 0 ||
	       strcmp(f->name, "retry_after_ms") == 0 || strcmp(f->name, "pause_from") == 0;
}

/* One member into @a; on a type error sets @err and returns false. */
static bool get_field(const cJSON *obj, const struct field *f, struct fa_attempt *a,
                      struct fa_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, f->name);
	void *p = (char *)a + f->off;
	const char *want = NULL;
	int64_t i = 0;

	if (v == NULL && optional_member(f)) {
		if (f->kind == K_OPT_INT)
			*(int *)p = -1;
		if (f->kind == K_SCALE)
			*(double *)p = 1.0;
		return true;
	}
	if (v == NULL) {
		fa_err_set(err, "$.%s: missing", f->name);
		return false;
	}
	switch (f->kind) {
	case K_U64:
	case K_I64:
	case K_INT:
	case K_UINT:
	case K_PAUSE:
	case K_OPT_INT:
		if ((f->kind == K_PAUSE || f->kind == K_OPT_INT) && cJSON_IsNull(v))
			i = -1;
		else if (!get_int(v, int_range[f->kind].lo, int_range[f->kind].hi, &i))
			want = int_range[f->kind].want;
		if (f->kind == K_U64)
			*(uint64_t *)p = (uint64_t)i;
		else if (f->kind == K_INT || f->kind == K_OPT_INT)
			*(int *)p = (int)i;
		else if (f->kind == K_UINT)
			*(unsigned *)p = (unsigned)i;
		else
			*(int64_t *)p = i;
		break;
	case K_SCALE:
		if (cJSON_IsNumber(v) && v->valuedouble >= 1.0 && v->valuedouble <= 1e6)
			*(double *)p = v->valuedouble;
		else
			want = "number >= 1";
		break;
	case K_STR:
		if (not_utf8(v, f->name, NULL, err))
			return false;
		if (!get_str(v, (char **)p))
			want = "string or null";
		break;
	case K_WALL:
		if (!cJSON_IsString(v) || !parse_rfc3339(v->valuestring, (int64_t *)p))
			want = "RFC 3339 UTC time";
		break;
	case K_SHA:
		if (cJSON_IsString(v) && (v->valuestring[0] == '\0' || is_hex64(v->valuestring)))
			memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
		else
			want = "64 lowercase hex digits or \"\"";
		break;
	case K_BOOL:
		if (cJSON_IsBool(v))
			*(bool *)p = cJSON_IsTrue(v);
		else
			want = "boolean";
		break;
	case K_DELIVERY:
		want = "\"complete\", \"client_gone\" or \"dropped\"";
		for (int d = 0; cJSON_IsString(v) && d < 3; d++) {
			if (strcmp(v->valuestring, delivery_names[d]) == 0) {
				*(enum fa_delivery *)p = (enum fa_delivery)d;
				want = NULL;
			}
		}
		break;
	case K_HEADERS:
		if (!cJSON_IsObject(v)) {
			want = "object";
			break;
		}
		for (int h = 0; h < FA_AH_COUNT; h++) {
			const cJSON *hv = cJSON_GetObjectItemCaseSensitive(v, header_names[h]);

			if (not_utf8(hv, f->name, header_names[h], err))
				return false;
			if (hv == NULL || !get_str(hv, &a->attempt_headers[h])) {
				fa_err_set(err, "$.%s.%s: expected string or null, got %s", f->name,
				           header_names[h], fa_attempt_json_type(hv));
				return false;
			}
		}
		break;
	}
	if (want != NULL) {
		fa_err_set(err, "$.%s: expected %s, got %s", f->name, want,
		           fa_attempt_json_type(v));
		return false;
	}
	return true;
}

enum fa_rc fa_attempt_from_json(const cJSON *obj, struct fa_attempt *out, struct fa_err *err)
{
	enum fa_rc rc = FA_EINVAL;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj)) {
		fa_err_set(err, "$: expected object, got %s", fa_attempt_json_type(obj));
		goto out;
	}
	for (size_t i = 0; i < N_FIELDS; i++)
		if (!get_field(obj, &fields[i], out, err))
			goto out;
	rc = FA_OK;
out:
	if (rc != FA_OK)
		fa_attempt_release(out);
	return rc;
}
