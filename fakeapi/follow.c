/* follow.c -- an attempt as one line a person can follow live (--follow, --journal -). */
#include "follow.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "utf8.h"

/* A growing string. */
struct buf {
	char *s;
	size_t len, cap;
};

static void add(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	b->s = fa_xgrow(b->s, &b->cap, b->len + (size_t)n + 1, 128);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* "+S.mmm" (or "-S.mmm") for a time in µs since the provider started. */
static void add_time(struct buf *b, int64_t us)
{
	int64_t ms = (us < 0 ? -us : us) / 1000;

	add(b, "%c%lld.%03llds", us < 0 ? '-' : '+', (long long)(ms / 1000),
	    (long long)(ms % 1000));
}

char *fa_follow_line(const struct fa_attempt *a)
{
	struct buf b = { NULL, 0, 0 };
	char *line;

	add_time(&b, a->t_arrival_us);
	add(&b, "  #%llu  %s  %s %s  ", (unsigned long long)a->seq, a->task != NULL ? a->task : "-",
	    a->method != NULL ? a->method : "-", a->path != NULL ? a->path : "-");
	if (a->status != 0)
		add(&b, "%d", a->status);
	else
		add(&b, "---");
	add(&b, "  %s", a->fault != NULL ? a->fault : "-");
	if (a->quota != NULL)
		add(&b, "  [%s]", a->quota);
	if (a->pause_until_us != -1) {
		add(&b, "  pause until ");
		add_time(&b, a->pause_until_us);
		if (a->scope != NULL)
			add(&b, " (scope %s)", a->scope);
	} else if (a->retry_after != NULL) {
		add(&b, "  retry-after %s (no pause)", a->retry_after);
	}
	if (a->delivered == FA_DELIVERED_CLIENT_GONE)
		add(&b, "  client gone");
	else if (a->delivered == FA_DELIVERED_DROPPED)
		add(&b, "  dropped");
	if (a->stream_end != NULL)
		add(&b, "  stream %s, %d chunk%s", a->stream_end, a->stream_chunks,
		    a->stream_chunks == 1 ? "" : "s");
	/* one attempt, one line, whatever a client put in its path */
	line = fa_utf8_printable(b.s, b.len);
	free(b.s);
	return line;
}

/* `{"scenario":ID,` + the rest of the journal's line: a new string. */
static char *with_scenario(const char *id, const char *line, size_t len, size_t *out_len)
{
	cJSON *s = fa_xcheck(cJSON_CreateString(id), "cJSON_CreateString");
	char *quoted = fa_xcheck(cJSON_PrintUnformatted(s), "cJSON_PrintUnformatted");
	char *out;

	/* the journal's line is a compact object: "{" then its members */
	if (len >= 2 && line[0] == '{' && line[1] != '}')
		out = fa_xasprintf("{\"scenario\":%s,%.*s", quoted, (int)(len - 1), line + 1);
	else
		out = fa_xasprintf("{\"scenario\":%s}", quoted);
	cJSON_free(quoted);
	cJSON_Delete(s);
	*out_len = strlen(out);
	return out;
}

void fa_follow_sink(void *ctx, const struct fa_attempt *a, const char *line, size_t len)
{
	const struct fa_follow *f = ctx;
	char *text = NULL, *prefixed = NULL;
	const char *out = line;
	size_t n = len;

	if (f->text) {
		text = fa_follow_line(a);
		if (f->scenario != NULL) {
			prefixed = fa_xasprintf("[%s] %s", f->scenario, text);
			out = prefixed;
		} else {
			out = text;
		}
		n = strlen(out);
	} else if (f->scenario != NULL) {
		prefixed = with_scenario(f->scenario, line, len, &n);
		out = prefixed;
	}
	fa_livefeed_put(f->feed, out, n);
	free(prefixed);
	free(text);
}
