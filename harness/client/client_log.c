/* client_log.c -- what a client printed: parsed and judged, searched for canaries, scrubbed. */
#include "client_log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "canary.h"
#include "utf8.h"

/* Bytes of a line quoted in its protocol error. */
#define EXCERPT 60

static const char *const msg_types[] = {
	"action_sent",        "action_result", "retry_scheduled", "reconciliation_required",
	"stream_interrupted", "escalation",    "result",          NULL,
};

static const char *const outcomes[] = {
	"succeeded", "failed", "escalated", "cancelled", NULL,
};

static const char *const break_reasons[] = {
	"error_frame", "cut", "stall", "transport", NULL,
};

void hx_client_log_init(struct hx_client_log *l)
{
	memset(l, 0, sizeof(*l));
}

static void free_hits(struct hx_canary_hit *hits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(hits[i].where);
		free(hits[i].task);
	}
	free(hits);
}

void hx_client_log_release(struct hx_client_log *l)
{
	size_t i;

	if (l == NULL)
		return;
	cJSON_Delete(l->hello);
	for (i = 0; i < l->n_msgs; i++)
		hx_client_msg_release(&l->msgs[i]);
	free(l->msgs);
	for (i = 0; i < l->n_errors; i++)
		free(l->errors[i]);
	free(l->errors);
	for (i = 0; i < l->n_tasks; i++)
		free(l->tasks[i]);
	free(l->tasks);
	free(l->has_result);
	free_hits(l->hits, l->n_hits);
	memset(l, 0, sizeof(*l));
}

/* Room for one more of @size bytes in *@arr, holding @n of @*cap. */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? 2 * *cap : 16;
	return fa_xrealloc(arr, *cap * size);
}

/* Record @msg (taken): a line's error only under the cap, past it only
 * counted; an error of the session (how the process ended) always. */
static void add_error(struct hx_client_log *l, char *msg, bool of_line)
{
	if (of_line && l->n_line_errors >= HX_CLIENT_LOG_MAX_ERRORS) {
		if (l->n_dropped++ == 0)
			l->dropped_at = l->n_errors;
		free(msg);
		return;
	}
	l->errors = grow(l->errors, l->n_errors, &l->cap_errors, sizeof(*l->errors));
	l->errors[l->n_errors++] = msg;
	l->n_line_errors += of_line;
}

void hx_client_log_error(struct hx_client_log *l, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	add_error(l, fa_xcheck(msg, "protocol error"), false);
}

void hx_client_log_canaries(struct hx_client_log *l, const char *key_canary,
                            const char *body_canary)
{
	snprintf(l->key_canary, sizeof(l->key_canary), "%s", key_canary ? key_canary : "");
	snprintf(l->body_canary, sizeof(l->body_canary), "%s", body_canary ? body_canary : "");
}

void hx_client_log_task(struct hx_client_log *l, const char *id)
{
	for (size_t i = 0; i < l->n_tasks; i++)
		if (strcmp(l->tasks[i], id) == 0)
			return;
	if (l->n_tasks == l->cap_tasks) {
		size_t cap = l->cap_tasks;

		l->tasks = grow(l->tasks, l->n_tasks, &cap, sizeof(*l->tasks));
		l->has_result = fa_xrealloc(l->has_result, cap * sizeof(*l->has_result));
		l->cap_tasks = cap;
	}
	l->has_result[l->n_tasks] = false;
	l->tasks[l->n_tasks++] = fa_xstrdup(id);
}

char *hx_client_log_plain(const char *s, size_t len)
{
	return fa_utf8_printable(s, len);
}

/* The first EXCERPT bytes of a line, "..." when there is more. */
static char *excerpt(const char *s, size_t len)
{
	if (len == 0)
		return fa_xstrdup("empty line");
	if (len <= EXCERPT)
		return fa_xstrndup(s, len);
	return fa_xasprintf("%.*s...", EXCERPT, s);
}

static bool one_of(const char *s, const char *const *set)
{
	for (size_t i = 0; set[i] != NULL; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

/* A JSON number that is a whole number within ±2^53. */
static bool is_int(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
	       fabs(v->valuedouble) <= 9007199254740992.0;
}

static const char *str_member(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Member @name of @obj is an integer >= 1. */
static bool is_count(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return is_int(v) && v->valuedouble >= 1;
}

/* Why a stream_interrupted line cannot count as a report, or NULL: the
 * members docs/client-protocol.md gives it (the LLM rate-limit guide: the break is shown,
 * so what is shown must say what broke). */
static char *interruption_fault(const cJSON *json)
{
	const cJSON *v;
	const char *s;

	if (!is_count(json, "attempt"))
		return fa_xstrdup("stream_interrupted: \"attempt\" must be an integer >= 1");
	if (!is_count(json, "chunks"))
		return fa_xstrdup("stream_interrupted: \"chunks\" must be an integer >= 1");
	s = str_member(json, "reason");
	if (s == NULL || !one_of(s, break_reasons))
		return fa_xstrdup("stream_interrupted: \"reason\" must be error_frame, cut, "
		                  "stall or transport");
	v = cJSON_GetObjectItemCaseSensitive(json, "error_code");
	if (!cJSON_IsString(v) && !cJSON_IsNull(v))
		return fa_xstrdup("stream_interrupted: \"error_code\" must be a string or "
		                  "null");
	return NULL;
}

/* Why a message of a known type and task cannot count, or NULL. */
static char *msg_fault(const char *type, const cJSON *json)
{
	const cJSON *v;
	const char *s;

	if (strcmp(type, "stream_interrupted") == 0) {
		return interruption_fault(json);
	} else if (strcmp(type, "action_result") == 0) {
		v = cJSON_GetObjectItemCaseSensitive(json, "status");
		if (!is_int(v) || v->valuedouble < 0 || v->valuedouble > 999)
			return fa_xstrdup("action_result: \"status\" must be an integer 0..999");
	} else if (strcmp(type, "result") == 0) {
		s = str_member(json, "outcome");
		if (s == NULL || !one_of(s, outcomes))
			return fa_xstrdup("result: \"outcome\" must be succeeded, failed, "
			                  "escalated or cancelled");
	}
	return NULL;
}

/* The line's JSON object, or NULL with the reason in *@why. */
static cJSON *parse_object(const char *line, size_t len, char **why)
{
	char *text = NULL, *ex;
	const char *end = NULL;
	cJSON *json = NULL;

	*why = NULL;
	if (len > 0 && memchr(line, '\0', len) == NULL) {
		text = fa_xstrndup(line, len);
		/* length with the NUL: cJSON 1.7.15 needs it to see the end */
		json = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	}
	if (json != NULL && !cJSON_IsObject(json)) {
		cJSON_Delete(json);
		json = NULL;
	}
	if (json == NULL) {
		ex = excerpt(line, len);
		*why = fa_xasprintf("not a JSON object: %s", ex);
		free(ex);
	}
	free(text);
	return json;
}

/* The hello, or NULL with the reason in *@why; takes @json. */
static cJSON *take_hello(cJSON *json, const char *type, char **why)
{
	char *t;

	if (strcmp(type, "hello") != 0) {
		t = excerpt(type, strlen(type));
		*why = fa_xasprintf("expected hello, got type \"%s\"", t);
		free(t);
		cJSON_Delete(json);
		return NULL;
	}
	if (!is_int(cJSON_GetObjectItemCaseSensitive(json, "protocol"))) {
		*why = fa_xstrdup("hello: \"protocol\" must be an integer");
		cJSON_Delete(json);
		return NULL;
	}
	return json;
}

/* Where the @len bytes at @s hold the JSON escape \u0000 (its backslash
 * not itself escaped), or NULL. */
static const char *nul_escape(const char *s, size_t len)
{
	size_t run = 0; /* backslashes just before */

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			run = 0;
			continue;
		}
		if (run++ % 2 == 0 && len - i >= 6 && memcmp(s + i + 1, "u0000", 5) == 0)
			return s + i;
	}
	return NULL;
}

/* The index of task @task in l->tasks, or l->n_tasks. */
static size_t task_index(const struct hx_client_log *l, const char *task)
{
	size_t i = 0;

	while (task != NULL && i < l->n_tasks && strcmp(l->tasks[i], task) != 0)
		i++;
	return task != NULL ? i : l->n_tasks;
}

/* Search line @n (@len bytes at @line), parsed into @json, printed again:
 * a canary the client \u-escaped shows there, one it printed as is is
 * the search of stdout's. */
static void search_line(struct hx_client_log *l, size_t n, const cJSON *json, const char *line,
                        size_t len)
{
	struct hx_canary_hit *hits = NULL;
	size_t n_hits = 0, k;
	const char *task = str_member(json, "task");
	char *text, *where;

	if (l->key_canary[0] == '\0')
		return;
	text = fa_xcheck(cJSON_PrintUnformatted(json), "canary search");
	where = fa_xasprintf("stdout line %zu", n);
	k = task_index(l, task);
	l->searched += hx_canary_scan(text, strlen(text), l->key_canary,
	                              l->body_canary[0] ? l->body_canary : NULL, where,
	                              k < l->n_tasks ? l->tasks[k] : NULL, &hits, &n_hits);
	for (k = 0; k < n_hits; k++) {
		const char *c = hits[k].kind == HX_CANARY_KEY ? l->key_canary : l->body_canary;

		if (!l->raw_cut && memmem(line, len, c, strlen(c)) != NULL) {
			free(hits[k].where);
			free(hits[k].task);
			continue;
		}
		l->hits = fa_xrealloc(l->hits, (l->n_hits + 1) * sizeof(*l->hits));
		l->hits[l->n_hits++] = hits[k];
	}
	free(hits);
	free(where);
	free(text);
}

/* Search line @n, refused for its \u0000, with each such escape read as
 * U+FFFD: what it hid behind the NUL may be a canary. */
static void search_nul_line(struct hx_client_log *l, size_t n, const char *line, size_t len)
{
	char *copy, *why = NULL;
	const char *p;
	size_t at = 0;
	cJSON *json;

	if (l->key_canary[0] == '\0')
		return;
	copy = fa_xmalloc(len + 1);
	memcpy(copy, line, len);
	copy[len] = '\0';
	while ((p = nul_escape(copy + at, len - at)) != NULL) {
		at = (size_t)(p - copy);
		memcpy(copy + at + 2, "fffd", 4);
		at += 6;
	}
	json = parse_object(copy, len, &why);
	if (json != NULL)
		search_line(l, n, json, line, len);
	cJSON_Delete(json);
	free(why);
	free(copy);
}

enum hx_client_line hx_client_log_line(struct hx_client_log *l, const char *line, size_t len,
                                       bool cut, int64_t t_us)
{
	size_t n = ++l->n_lines, i;
	char *why = NULL, *t;
	cJSON *json = NULL;
	const char *type, *task;
	struct hx_client_msg *m;

	if (cut) {
		why = fa_xasprintf("longer than %d bytes, cut", HX_CLIENT_LOG_MAX_LINE);
		goto bad;
	}
	/* cJSON ends a string at its NUL: what follows would be hidden from
	 * every check and search */
	if (nul_escape(line, len) != NULL) {
		search_nul_line(l, n, line, len);
		why = fa_xstrdup("a string holds \\u0000 (NUL), which the protocol "
		                 "does not allow");
		goto bad;
	}
	json = parse_object(line, len, &why);
	if (json == NULL)
		goto bad;
	search_line(l, n, json, line, len);
	type = str_member(json, "type");
	if (type == NULL) {
		why = fa_xstrdup("no \"type\"");
		goto bad;
	}
	if (!l->greeted) {
		l->hello = take_hello(json, type, &why);
		json = NULL;
		if (l->hello == NULL)
			goto bad;
		l->greeted = true;
		l->hello_line = n;
		return HX_CLIENT_LINE_HELLO;
	}
	if (strcmp(type, "hello") == 0) {
		why = fa_xstrdup("a second hello");
		goto bad;
	}
	if (strcmp(type, "clock") == 0) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(json, "wall_ms");

		if (!l->clock_asked || l->clock_read) {
			why = fa_xstrdup("a clock line the harness did not ask for");
			goto bad;
		}
		if (!cJSON_IsNumber(w)) {
			why = fa_xstrdup("clock: \"wall_ms\" must be a number");
			goto bad;
		}
		l->clock_wall_ms = w->valuedouble;
		l->clock_read = true;
		cJSON_Delete(json);
		return HX_CLIENT_LINE_CLOCK;
	}
	if (!one_of(type, msg_types)) {
		t = excerpt(type, strlen(type));
		why = fa_xasprintf("unknown type \"%s\"", t);
		free(t);
		goto bad;
	}
	task = str_member(json, "task");
	if (task == NULL) {
		why = fa_xstrdup("no \"task\"");
		goto bad;
	}
	i = task_index(l, task);
	if (i == l->n_tasks || l->has_result[i]) {
		t = excerpt(task, strlen(task));
		why = i == l->n_tasks ? fa_xasprintf("unknown task \"%s\"", t)
		                      : fa_xasprintf("task \"%s\" already reported its result", t);
		free(t);
		goto bad;
	}
	why = msg_fault(type, json);
	if (why != NULL)
		goto bad;
	/* a result is kept whatever the cap: it ends its task, and a task
	 * has one, so they cannot flood */
	if (l->n_msgs >= HX_CLIENT_LOG_MAX_MSGS && strcmp(type, "result") != 0) {
		why = fa_xasprintf("more than %d messages, ignored", HX_CLIENT_LOG_MAX_MSGS);
		goto bad;
	}
	l->msgs = grow(l->msgs, l->n_msgs, &l->cap_msgs, sizeof(*l->msgs));
	m = &l->msgs[l->n_msgs++];
	m->t_us = t_us;
	m->type = fa_xstrdup(type);
	m->task = fa_xstrdup(task);
	m->json = json;
	if (strcmp(type, "result") == 0)
		l->has_result[i] = true;
	return HX_CLIENT_LINE_MSG;
bad:
	cJSON_Delete(json);
	add_error(l, fa_xasprintf("line %zu: %s", n, why), true);
	free(why);
	return HX_CLIENT_LINE_ERROR;
}

/* Append @n items of @size bytes at @src to *@dst holding *@dst_n. */
static void *append(void *dst, size_t dst_n, const void *src, size_t n, size_t size)
{
	if (n == 0)
		return dst;
	dst = fa_xrealloc(dst, (dst_n + n) * size);
	memcpy((char *)dst + dst_n * size, src, n * size);
	return dst;
}

void hx_client_log_move(struct hx_client_log *l, struct hx_scenario_result *out)
{
	out->n_protocol_errors_seen += l->n_errors + l->n_dropped;
	if (l->n_dropped > 0) {
		char *more = fa_xasprintf("%zu more protocol errors not listed", l->n_dropped);

		/* where the first went: the session's own errors after it */
		l->errors = grow(l->errors, l->n_errors, &l->cap_errors, sizeof(*l->errors));
		memmove(&l->errors[l->dropped_at + 1], &l->errors[l->dropped_at],
		        (l->n_errors - l->dropped_at) * sizeof(*l->errors));
		l->errors[l->dropped_at] = more;
		l->n_errors++;
	}
	if (out->hello == NULL)
		out->hello = l->hello;
	else
		cJSON_Delete(l->hello); /* a restarted client's: the first one stays */
	out->msgs = append(out->msgs, out->n_msgs, l->msgs, l->n_msgs, sizeof(*l->msgs));
	out->n_msgs += l->n_msgs;
	out->protocol_errors = append(out->protocol_errors, out->n_protocol_errors, l->errors,
	                              l->n_errors, sizeof(*l->errors));
	out->n_protocol_errors += l->n_errors;
	free(l->msgs);
	free(l->errors);
	l->hello = NULL;
	l->msgs = NULL;
	l->n_msgs = l->cap_msgs = 0;
	l->errors = NULL;
	l->n_errors = l->cap_errors = 0;
	l->n_line_errors = l->n_dropped = l->dropped_at = 0;
	out->canary_hits =
	        append(out->canary_hits, out->n_canary_hits, l->hits, l->n_hits, sizeof(*l->hits));
	out->n_canary_hits += l->n_hits;
	out->canary_bytes_searched += l->searched;
	free(l->hits);
	l->hits = NULL;
	l->n_hits = 0;
	l->searched = 0;
}

/* The first @max bytes of file @path in a new buffer, its length in
 * *@len; NULL when it cannot be read. *@cut is set true when the file
 * held more, or exists but could not be read. */
static char *read_capped(const char *path, size_t max, size_t *len, bool *cut)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *buf = NULL, more;
	size_t cap = 0;
	ssize_t n;

	*len = 0;
	if (fd < 0) {
		if (errno != ENOENT) /* a task never started has none */
			*cut = true;
		return NULL;
	}
	while (*len < max) {
		if (*len == cap) {
			cap = cap ? 2 * cap : 65536;
			cap = cap < max ? cap : max;
			buf = fa_xrealloc(buf, cap);
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			*cut = true;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	if (*len == max && read(fd, &more, 1) != 0)
		*cut = true;
	close(fd);
	return buf;
}

void hx_client_log_search(struct hx_scenario_result *out, const struct hx_client_text *texts,
                          size_t n, size_t file_max)
{
	const char *kc = out->key_canary, *bc = out->body_canary[0] ? out->body_canary : NULL;
	struct hx_canary_hit *hits = NULL;
	size_t n_hits = 0;

	if (kc[0] == '\0')
		return;
	for (size_t i = 0; i < n; i++) {
		size_t len = texts[i].len;
		char *file = texts[i].buf == NULL && texts[i].path != NULL
		                     ? read_capped(texts[i].path, file_max, &len,
		                                   &out->canary_search_incomplete)
		                     : NULL;

		if (file != NULL)
			file_max -= len;
		out->canary_bytes_searched +=
		        hx_canary_scan(file ? file : texts[i].buf, file ? len : texts[i].len, kc,
		                       bc, texts[i].where, texts[i].task, &hits, &n_hits);
		free(file);
	}
	/* a place named once for a canary is enough (two texts may be two
	 * parts of one stream) */
	for (size_t i = 0; i < n_hits; i++) {
		bool seen = false;

		for (size_t k = 0; k < out->n_canary_hits && !seen; k++)
			seen = out->canary_hits[k].kind == hits[i].kind &&
			       strcmp(out->canary_hits[k].where, hits[i].where) == 0;
		if (seen) {
			free(hits[i].where);
			free(hits[i].task);
			continue;
		}
		out->canary_hits =
		        append(out->canary_hits, out->n_canary_hits, &hits[i], 1, sizeof(*hits));
		out->n_canary_hits++;
	}
	free(hits);
	for (size_t i = 0; i < out->n_msgs; i++) {
		const struct hx_client_msg *m = &out->msgs[i];
		const cJSON *rec;
		char *text, *where;

		if (strcmp(m->type, "escalation") != 0)
			continue;
		/* no object, no record: the line is stdout's like any other */
		rec = cJSON_GetObjectItemCaseSensitive(m->json, "record");
		if (!cJSON_IsObject(rec))
			continue;
		text = fa_xcheck(cJSON_PrintUnformatted(rec), "escalation record");
		where = fa_xasprintf("escalation record of task %s", m->task);
		out->canary_bytes_searched +=
		        hx_canary_scan(text, strlen(text), kc, bc, where, m->task,
		                       &out->canary_hits, &out->n_canary_hits);
		free(where);
		free(text);
	}
}

/* What hx_client_log_scrub() hides (hx_canary_redact). */
struct scrub {
	struct hx_canary_mask *masks; /* owned; their texts owned too */
	size_t n;
};

static void scrub_add(struct scrub *sb, enum hx_canary_mask_kind kind, char *text, size_t dot)
{
	sb->masks = fa_xrealloc(sb->masks, (sb->n + 1) * sizeof(*sb->masks));
	sb->masks[sb->n++] = (struct hx_canary_mask){ .kind = kind, .text = text, .dot = dot };
}

static char *scrubbed(const struct scrub *sb, const char *s)
{
	return hx_canary_redact(s, sb->masks, sb->n);
}

/* Scrub the owned string *@s in place. */
static void scrub_str(const struct scrub *sb, char **s)
{
	char *clean = scrubbed(sb, *s);

	if (clean == NULL)
		return;
	free(*s);
	*s = clean;
}

/* Scrub every member name and string of @j, in cJSON's own allocation. */
static void scrub_json(const struct scrub *sb, cJSON *j)
{
	for (; j != NULL; j = j->next) {
		char *clean;

		if (j->string != NULL && !(j->type & cJSON_StringIsConst)) {
			clean = scrubbed(sb, j->string);
			if (clean != NULL) {
				cJSON_free(j->string);
				j->string = fa_xcheck(cJSON_malloc(strlen(clean) + 1), "scrub");
				memcpy(j->string, clean, strlen(clean) + 1);
				free(clean);
			}
		}
		if (cJSON_IsString(j) && !(j->type & cJSON_IsReference)) {
			clean = scrubbed(sb, j->valuestring);
			if (clean != NULL) {
				fa_xcheck(cJSON_SetValuestring(j, clean), "scrub");
				free(clean);
			}
		}
		scrub_json(sb, j->child);
	}
}

void hx_client_log_scrub(struct hx_scenario_result *out, const struct fa_scenario *sc)
{
	struct scrub sb = { 0 };
	size_t i;

	if (out->key_canary[0] == '\0')
		return;
	/* the longest first: where two match the same piece, the first wins */
	for (i = 0; i < sc->n_keys; i++)
		scrub_add(&sb, HX_MASK_CANARIED,
		          hx_canary_secret(sc->keys[i].secret, out->key_canary),
		          strlen(sc->keys[i].secret));
	for (i = 0; i < sc->n_keys; i++)
		if (strlen(sc->keys[i].secret) >= HX_CANARY_FRAGMENT_MIN)
			scrub_add(&sb, HX_MASK_SECRET, fa_xstrdup(sc->keys[i].secret), 0);
	if (out->body_canary[0] != '\0')
		scrub_add(&sb, HX_MASK_BODY_CANARY, fa_xstrdup(out->body_canary), 0);
	scrub_add(&sb, HX_MASK_KEY_CANARY, fa_xstrdup(out->key_canary), 0);

	scrub_str(&sb, &out->error);
	scrub_str(&sb, &out->client_stderr);
	for (i = 0; i < out->n_protocol_errors; i++)
		scrub_str(&sb, &out->protocol_errors[i]);
	if (out->hello != NULL)
		scrub_json(&sb, out->hello->child);
	for (i = 0; i < out->n_msgs; i++)
		if (out->msgs[i].json != NULL)
			scrub_json(&sb, out->msgs[i].json->child);
	for (i = 0; i < out->n_tasks; i++) {
		scrub_str(&sb, &out->tasks[i].error);
		scrub_str(&sb, &out->tasks[i].stderr_tail);
	}
	for (i = 0; i < out->n_checks; i++)
		scrub_str(&sb, &out->checks[i].detail);
	for (i = 0; i < out->n_canary_hits; i++)
		scrub_str(&sb, &out->canary_hits[i].where);

	for (i = 0; i < sb.n; i++)
		free((char *)sb.masks[i].text);
	free(sb.masks);
}
