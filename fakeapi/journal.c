/* journal.c -- every inbound attempt, appended once, hash-chained. */
#include "journal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "digest.h"
#include "log.h"

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
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

/* An entry kept twice: as a struct for snapshots, as its line for the JSON
 * view, so neither poller has to re-serialize or re-parse. */
struct entry {
	struct fa_attempt a; /* owned */
	char *line;          /* the line as written, without newline; owned */
	size_t len;          /* strlen(line) */
};

struct fa_journal {
	pthread_mutex_t mu;       /* guards everything below */
	FILE *fp;                 /* NULL = memory only */
	char *path;               /* for log messages; NULL in memory only */
	uint64_t last_seq;        /* highest seq assigned; survives reset */
	uint64_t bytes;           /* bytes of the lines appended, newlines included */
	char head[FA_SHA256_HEX]; /* hash of the last line; survives reset */
	struct entry *v;          /* seq order, consecutive seqs */
	size_t n, cap;
	fa_journal_sink_fn sink; /* each entry as appended; NULL = none */
	void *sink_ctx;          /* borrowed, for sink */
};

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

static const char *type_name(const cJSON *v)
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

			if (hv == NULL || !get_str(hv, &a->attempt_headers[h])) {
				fa_err_set(err, "$.%s.%s: expected string or null, got %s", f->name,
				           header_names[h], type_name(hv));
				return false;
			}
		}
		break;
	}
	if (want != NULL) {
		fa_err_set(err, "$.%s: expected %s, got %s", f->name, want, type_name(v));
		return false;
	}
	return true;
}

enum fa_rc fa_attempt_from_json(const cJSON *obj, struct fa_attempt *out, struct fa_err *err)
{
	enum fa_rc rc = FA_EINVAL;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj)) {
		fa_err_set(err, "$: expected object, got %s", type_name(obj));
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

enum fa_rc fa_journal_new(const char *path, struct fa_journal **out, struct fa_err *err)
{
	struct fa_journal *j = fa_xcalloc(1, sizeof(*j));
	enum fa_rc rc = FA_EIO;

	pthread_mutex_init(&j->mu, NULL);
	memcpy(j->head, ZERO_HASH, sizeof(j->head));
	if (path != NULL) {
		j->fp = fopen(path, "w");
		if (j->fp == NULL) {
			fa_err_set(err, "%s: cannot open: %s", path, strerror(errno));
			goto out;
		}
	}
	j->path = fa_xstrdup(path);
	rc = FA_OK;
out:
	if (rc != FA_OK) {
		fa_journal_free(j);
		j = NULL;
	}
	*out = j;
	return rc;
}

void fa_journal_free(struct fa_journal *j)
{
	if (j == NULL)
		return;
	if (j->fp != NULL && fclose(j->fp) != 0)
		FA_LOG(FA_LOG_ERROR, "journal", "event=close_failed path=%s err=\"%s\"", j->path,
		       strerror(errno));
	fa_journal_reset(j);
	free(j->v);
	free(j->path);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

uint64_t fa_journal_append(struct fa_journal *j, struct fa_attempt *a)
{
	/* Build the object outside the lock; only seq and prev depend on order. */
	cJSON *obj = fa_attempt_to_json(a);
	struct entry *e;
	uint64_t seq;
	char *text;

	pthread_mutex_lock(&j->mu);
	if (j->n == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 256;
		j->v = fa_xrealloc(j->v, j->cap * sizeof(*j->v));
	}
	e = &j->v[j->n++];
	e->a = *a;
	memset(a, 0, sizeof(*a)); /* the journal owns it now */
	seq = e->a.seq = ++j->last_seq;
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(obj, "seq"), (double)seq);
	cJSON_AddStringToObject(obj, "prev", j->head);
	text = cJSON_PrintUnformatted(obj);
	if (text == NULL) {
		fprintf(stderr, "fakeapi: out of memory in cJSON_PrintUnformatted\n");
		abort();
	}
	e->len = strlen(text);
	e->line = fa_xstrndup(text, e->len); /* ours to free(), not cJSON_free() */
	cJSON_free(text);
	fa_digest_sha256_hex(e->line, e->len, j->head);
	j->bytes += e->len + 1;
	if (j->fp != NULL && (fwrite(e->line, 1, e->len, j->fp) != e->len ||
	                      fputc('\n', j->fp) == EOF || fflush(j->fp) != 0))
		FA_LOG(FA_LOG_ERROR, "journal", "event=write_failed path=%s seq=%llu err=\"%s\"",
		       j->path, (unsigned long long)seq, strerror(errno));
	/* under the lock: a live reader sees the entries in seq order */
	if (j->sink != NULL)
		j->sink(j->sink_ctx, &e->a, e->line, e->len);
	pthread_mutex_unlock(&j->mu);
	cJSON_Delete(obj);
	return seq;
}

void fa_journal_set_sink(struct fa_journal *j, fa_journal_sink_fn fn, void *ctx)
{
	pthread_mutex_lock(&j->mu);
	j->sink = fn;
	j->sink_ctx = ctx;
	pthread_mutex_unlock(&j->mu);
}

size_t fa_journal_count(struct fa_journal *j)
{
	size_t n;

	pthread_mutex_lock(&j->mu);
	n = j->n;
	pthread_mutex_unlock(&j->mu);
	return n;
}

uint64_t fa_journal_bytes(struct fa_journal *j)
{
	uint64_t b;

	pthread_mutex_lock(&j->mu);
	b = j->bytes;
	pthread_mutex_unlock(&j->mu);
	return b;
}

void fa_journal_head(struct fa_journal *j, char out[65])
{
	pthread_mutex_lock(&j->mu);
	memcpy(out, j->head, FA_SHA256_HEX);
	pthread_mutex_unlock(&j->mu);
}

/* Index of the first entry with seq > @since; seqs in memory are
 * consecutive, so it is a subtraction. Caller holds the lock. */
static size_t first_after(const struct fa_journal *j, uint64_t since)
{
	uint64_t first;

	if (j->n == 0)
		return 0;
	first = j->v[0].a.seq;
	if (since < first)
		return 0;
	return since - first + 1 < j->n ? (size_t)(since - first + 1) : j->n;
}

char *fa_journal_json(struct fa_journal *j, uint64_t since)
{
	char *buf, *p;
	size_t i0, size;
	int hl;

	pthread_mutex_lock(&j->mu);
	i0 = first_after(j, since);
	size = 128;
	for (size_t i = i0; i < j->n; i++)
		size += j->v[i].len + 1;
	buf = fa_xmalloc(size);
	/* The lines are already compact JSON objects: splice them in as they are. */
	hl = snprintf(buf, size, "{\"head\":\"%s\",\"count\":%zu,\"last_seq\":%llu,\"entries\":[",
	              j->head, j->n - i0, (unsigned long long)j->last_seq);
	p = buf + hl;
	for (size_t i = i0; i < j->n; i++) {
		if (i > i0)
			*p++ = ',';
		memcpy(p, j->v[i].line, j->v[i].len);
		p += j->v[i].len;
	}
	pthread_mutex_unlock(&j->mu);
	memcpy(p, "]}", 3);
	return buf;
}

static void copy_attempt(struct fa_attempt *dst, const struct fa_attempt *src)
{
	*dst = *src;
	for (size_t i = 0; i < N_FIELDS; i++) {
		if (fields[i].kind == K_STR) {
			char **s = (char **)((char *)dst + fields[i].off);
			*s = fa_xstrdup(*s);
		}
	}
	for (int h = 0; h < FA_AH_COUNT; h++)
		dst->attempt_headers[h] = fa_xstrdup(src->attempt_headers[h]);
}

void fa_journal_snapshot(struct fa_journal *j, uint64_t since, struct fa_attempt **out, size_t *n)
{
	size_t i0;

	pthread_mutex_lock(&j->mu);
	i0 = first_after(j, since);
	*n = j->n - i0;
	*out = fa_xcalloc(*n, sizeof(**out));
	for (size_t i = i0; i < j->n; i++)
		copy_attempt(&(*out)[i - i0], &j->v[i].a);
	pthread_mutex_unlock(&j->mu);
}

void fa_journal_reset(struct fa_journal *j)
{
	pthread_mutex_lock(&j->mu);
	for (size_t i = 0; i < j->n; i++) {
		fa_attempt_release(&j->v[i].a);
		free(j->v[i].line);
	}
	j->n = 0;
	pthread_mutex_unlock(&j->mu);
}

/*
 * Read @path line by line, parsing each into an object for @fn. Returns
 * FA_EIO when unreadable, FA_EINVAL for a line that is not one JSON object
 * (both located in @err), or whatever @fn returns first.
 */
typedef enum fa_rc (*line_fn)(void *ctx, const char *path, size_t lineno, const char *line,
                              size_t len, const cJSON *obj, struct fa_err *err);

static enum fa_rc each_line(const char *path, line_fn fn, void *ctx, struct fa_err *err)
{
	FILE *fp = fopen(path, "r");
	enum fa_rc rc = FA_EIO;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	cJSON *obj = NULL;
	ssize_t got;

	if (fp == NULL) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	errno = 0;
	while ((got = getline(&line, &cap, fp)) != -1) {
		size_t len = (size_t)got;
		const char *end = NULL;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			len--; /* the last line may lack it */
		obj = cJSON_ParseWithLengthOpts(line, len, &end, 0);
		while (obj != NULL && end < line + len &&
		       (*end == ' ' || *end == '\t' || *end == '\r'))
			end++;
		if (obj == NULL || end != line + len || !cJSON_IsObject(obj)) {
			fa_err_set(err, "%s:%zu: not valid JSON", path, lineno);
			rc = FA_EINVAL;
			goto out;
		}
		rc = fn(ctx, path, lineno, line, len, obj, err);
		if (rc != FA_OK)
			goto out;
		cJSON_Delete(obj);
		obj = NULL;
		errno = 0;
	}
	if (ferror(fp)) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
		rc = FA_EIO;
		goto out;
	}
	rc = FA_OK;
out:
	cJSON_Delete(obj);
	free(line);
	if (fp != NULL)
		fclose(fp);
	return rc;
}

struct verify_ctx {
	char prev[FA_SHA256_HEX]; /* hash of the line before; zeros at the start */
	uint64_t seq;             /* its seq; 0 at the start */
	size_t lines;
};

static enum fa_rc verify_line(void *ctx, const char *path, size_t lineno, const char *line,
                              size_t len, const cJSON *obj, struct fa_err *err)
{
	struct verify_ctx *vc = ctx;
	const cJSON *prev = cJSON_GetObjectItemCaseSensitive(obj, "prev");
	const cJSON *seq = cJSON_GetObjectItemCaseSensitive(obj, "seq");
	int64_t s = 0;

	if (!cJSON_IsString(prev) || strcmp(prev->valuestring, vc->prev) != 0) {
		fa_err_set(err,
		           "%s:%zu: prev does not match the line before "
		           "(a line was removed, added or changed)",
		           path, lineno);
		return FA_ECHAIN;
	}
	if (!get_int(seq, 0, MAX_SAFE_INT, &s)) {
		fa_err_set(err, "%s:%zu: $.seq: expected integer >= 0, got %s", path, lineno,
		           type_name(seq));
		return FA_ECHAIN;
	}
	if ((uint64_t)s != vc->seq + 1) {
		fa_err_set(err, "%s:%zu: seq %lld does not follow %llu", path, lineno, (long long)s,
		           (unsigned long long)vc->seq);
		return FA_ECHAIN;
	}
	vc->seq = (uint64_t)s;
	fa_digest_sha256_hex(line, len, vc->prev);
	vc->lines++;
	return FA_OK;
}

enum fa_rc fa_journal_verify(const char *path, size_t *n_lines, char *head_out, struct fa_err *err)
{
	struct verify_ctx vc = { .prev = ZERO_HASH };
	enum fa_rc rc = each_line(path, verify_line, &vc, err);

	if (rc == FA_EINVAL)
		rc = FA_ECHAIN; /* an unparseable line breaks the chain too */
	if (rc != FA_OK)
		return rc;
	if (n_lines != NULL)
		*n_lines = vc.lines;
	if (head_out != NULL)
		memcpy(head_out, vc.prev, FA_SHA256_HEX);
	return FA_OK;
}

struct read_ctx {
	struct fa_attempt *v; /* owned until handed out */
	size_t n, cap;
};

static enum fa_rc read_line(void *ctx, const char *path, size_t lineno, const char *line,
                            size_t len, const cJSON *obj, struct fa_err *err)
{
	struct read_ctx *rc = ctx;
	struct fa_err local = { "" };

	(void)line;
	(void)len;
	if (rc->n == rc->cap) {
		rc->cap = rc->cap ? 2 * rc->cap : 64;
		rc->v = fa_xrealloc(rc->v, rc->cap * sizeof(*rc->v));
	}
	if (fa_attempt_from_json(obj, &rc->v[rc->n], &local) != FA_OK) {
		fa_err_set(err, "%s:%zu: %s", path, lineno, local.msg);
		return FA_EINVAL;
	}
	rc->n++;
	return FA_OK;
}

enum fa_rc fa_journal_read(const char *path, struct fa_attempt **out, size_t *n, struct fa_err *err)
{
	struct read_ctx ctx = { NULL, 0, 0 };
	enum fa_rc rc = each_line(path, read_line, &ctx, err);

	if (rc != FA_OK) {
		for (size_t i = 0; i < ctx.n; i++)
			fa_attempt_release(&ctx.v[i]);
		free(ctx.v);
		ctx.v = NULL;
		ctx.n = 0;
	}
	*out = ctx.v;
	*n = ctx.n;
	return rc;
}
