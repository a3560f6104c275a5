/* stream.c -- a streamed chat completion read as server-sent events, and how it ended. */
#include "stream.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"

void ref_stream_release(struct ref_stream *s)
{
	free(s->line);
	free(s->data);
	free(s->error_code);
	free(s->retry_after);
	memset(s, 0, sizeof(*s));
}

void ref_stream_reset(struct ref_stream *s)
{
	ref_stream_release(s);
}

/* Append @len bytes to the growing buffer *@buf; false (nothing kept)
 * when it would pass REF_STREAM_FRAME_MAX. */
static bool append(char **buf, size_t *used, size_t *cap, const char *p, size_t len)
{
	if (*used + len + 1 > REF_STREAM_FRAME_MAX)
		return false;
	if (*used + len + 1 > *cap) {
		size_t c = *cap ? *cap : 256;

		while (c < *used + len + 1)
			c *= 2;
		*buf = fa_xrealloc(*buf, c);
		*cap = c;
	}
	memcpy(*buf + *used, p, len);
	*used += len;
	(*buf)[*used] = '\0';
	return true;
}

/* The error frame's retryAfter as delta-seconds: a number rounded up to
 * whole seconds (a pause never comes out shorter than asked), a string
 * as it is (the Retry-After parser judges it); NULL for anything else. */
static char *retry_after_text(const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		double d = ceil(v->valuedouble);

		if (!(d >= 0 && d <= 2147483647.0))
			return NULL;
		return fa_xasprintf("%.0f", d);
	}
	if (cJSON_IsString(v))
		return fa_xstrdup(v->valuestring);
	return NULL;
}

/* Is @frame a chunk with a piece of the answer: a non-empty string in
 * choices[0].delta.content? */
static bool content_chunk(const cJSON *frame)
{
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(frame, "choices");
	const cJSON *delta, *content;

	if (!cJSON_IsArray(choices))
		return false;
	delta = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(choices, 0), "delta");
	content = cJSON_GetObjectItemCaseSensitive(delta, "content");
	return cJSON_IsString(content) && content->valuestring[0] != '\0';
}

/* A whole frame's data arrived: read it. */
static void on_frame(struct ref_stream *s)
{
	const char *end = NULL;
	const cJSON *err, *code;
	cJSON *frame;

	if (s->done || s->error_frame)
		return;
	if (strcmp(s->data, "[DONE]") == 0) {
		s->done = true;
		return;
	}
	frame = cJSON_ParseWithLengthOpts(s->data, s->data_len, &end, 0);
	if (frame == NULL)
		return;
	err = cJSON_GetObjectItemCaseSensitive(frame, "error");
	if (cJSON_IsObject(err)) {
		s->error_frame = true;
		s->error_wall_us = fa_clock_wall_us();
		s->error_mono_us = fa_clock_mono_us();
		code = cJSON_GetObjectItemCaseSensitive(err, "code");
		if (cJSON_IsString(code))
			s->error_code = fa_xstrdup(code->valuestring);
		/* the platform's rate-limit contract: in a stream the pause is the
		 * frame's retryAfter */
		s->retry_after =
		        retry_after_text(cJSON_GetObjectItemCaseSensitive(err, "retryAfter"));
	} else if (content_chunk(frame)) {
		s->chunks++;
	}
	cJSON_Delete(frame);
}

/* One whole line (s->line, without its terminator). */
static void on_line(struct ref_stream *s)
{
	const char *v;
	size_t vlen;

	if (s->line_over) {
		/* a line too long to keep spoils its frame */
		s->data_over = s->data_over || strncmp(s->line ? s->line : "", "data", 4) == 0;
		return;
	}
	if (s->line_len == 0) {
		if (s->has_data && !s->data_over)
			on_frame(s);
		s->data_len = 0;
		if (s->data != NULL)
			s->data[0] = '\0';
		s->has_data = false;
		s->data_over = false;
		return;
	}
	if (strncmp(s->line, "data", 4) != 0 || (s->line[4] != ':' && s->line[4] != '\0'))
		return; /* a comment (":"), or a field this reader has no use for */
	v = s->line[4] == ':' ? s->line + 5 : s->line + 4;
	if (*v == ' ')
		v++;
	vlen = s->line_len - (size_t)(v - s->line);
	if (s->has_data && !append(&s->data, &s->data_len, &s->data_cap, "\n", 1))
		s->data_over = true;
	if (!append(&s->data, &s->data_len, &s->data_cap, v, vlen))
		s->data_over = true;
	s->has_data = true;
}

/* Bytes of @buf (@len) before its first CR or LF (@len when none). */
static size_t line_part(const char *buf, size_t len)
{
	size_t n = 0;

	while (n < len && buf[n] != '\r' && buf[n] != '\n')
		n++;
	return n;
}

void ref_stream_feed(struct ref_stream *s, const char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = line_part(buf + i, len - i);

		if (n > 0) {
			if (!s->line_over &&
			    !append(&s->line, &s->line_len, &s->line_cap, buf + i, n))
				s->line_over = true;
			s->after_cr = false;
			i += n;
			continue;
		}
		/* buf[i] is CR or LF */
		if (!(buf[i] == '\n' && s->after_cr)) {
			if (s->line == NULL)
				append(&s->line, &s->line_len, &s->line_cap, "", 0);
			on_line(s);
			s->line_len = 0;
			s->line[0] = '\0';
			s->line_over = false;
		}
		s->after_cr = buf[i] == '\r';
		i++;
	}
}

const char *ref_stream_end_str(enum ref_stream_end e)
{
	switch (e) {
	case REF_STREAM_NONE: return "none";
	case REF_STREAM_DONE: return "done";
	case REF_STREAM_ERROR_FRAME: return "error_frame";
	case REF_STREAM_CUT: return "cut";
	case REF_STREAM_STALL: return "stall";
	case REF_STREAM_TRANSPORT: return "transport";
	}
	return "none";
}
