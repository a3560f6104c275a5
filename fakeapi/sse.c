/* sse.c -- text/event-stream answers: frames, the cut, pacing, rendering outside the lock. */
#include "sse.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "exchange.h"
#include "response_spec.h"

static void append(struct fa_sse_stream *s, const char *text, size_t n)
{
	fa_xappend(&s->body, &s->len, &s->cap, text, n, 4096);
}

void fa_sse_frame(struct fa_sse_stream *s, const char *event, const cJSON *data)
{
	char *json = fa_xcheck(cJSON_PrintUnformatted(data), "cJSON_PrintUnformatted");

	if (event != NULL) {
		append(s, "event: ", 7);
		append(s, event, strlen(event));
		append(s, "\n", 1);
	}
	append(s, "data: ", 6);
	append(s, json, strlen(json));
	append(s, "\n\n", 2);
	free(json);
	if (s->n_chunks == s->ends_cap) {
		s->ends_cap = s->ends_cap == 0 ? 64 : s->ends_cap * 2;
		s->ends = fa_xrealloc(s->ends, s->ends_cap * sizeof(*s->ends));
	}
	s->ends[s->n_chunks++] = s->len;
}

void fa_sse_finish(struct fa_sse_stream *s, int stop_after, const char *tail)
{
	size_t after = s->n_chunks > s->lead ? s->n_chunks - s->lead : 0;
	size_t n;

	append(s, "", 0); /* a body even when nothing was appended */
	s->cut = s->len;
	if (stop_after >= 0) {
		n = s->lead + ((size_t)stop_after < after ? (size_t)stop_after : after);
		if (n > s->n_chunks)
			n = s->n_chunks;
		s->cut = n == 0 ? 0 : s->ends[n - 1];
	}
	if (tail == NULL)
		return;
	append(s, tail, strlen(tail));
	if (stop_after < 0)
		s->cut = s->len;
}

void fa_sse_stream_release(struct fa_sse_stream *s)
{
	if (s == NULL)
		return;
	free(s->body);
	free(s->ends);
	memset(s, 0, sizeof(*s));
}

#define DONE_FRAME "data: [DONE]\n\n"

size_t fa_sse_frame_end(const char *body, size_t len, size_t pos)
{
	size_t done = sizeof(DONE_FRAME) - 1;

	for (size_t i = pos; i + 1 < len; i++) {
		if (body[i] != '\n' || body[i + 1] != '\n')
			continue;
		i += 2;
		if (len - i >= done && memcmp(body + i, DONE_FRAME, done) == 0)
			i += done; /* [DONE] goes with the frame before it */
		return i;
	}
	return len;
}

int fa_sse_chunks_sent(const char *body, size_t len, int lead, int n_content, size_t bytes)
{
	size_t pos = 0;
	int n = 0;

	/* content frames never carry [DONE] after them: a stop chunk, an
	 * error frame or a closing event always follows the last one */
	for (int i = 0; i < lead && pos < len; i++)
		pos = fa_sse_frame_end(body, len, pos);
	while (n < n_content && pos < len) {
		pos = fa_sse_frame_end(body, len, pos);
		if (pos > bytes)
			break;
		n++;
	}
	return n;
}

void fa_sse_answer(struct fa_resp *resp, const struct fa_response_spec *spec, const char *end,
                   int stall_retry_after_s)
{
	resp->stream_end = end;
	resp->chunk_delay_ms = spec->chunk_delay_ms;
	if (spec->stall_after_chunks >= 0) {
		resp->stall_ms = spec->stall_ms;
		resp->stall_retry_after_s = stall_retry_after_s;
	}
	fa_resp_drop_header(resp, "Content-Type");
	resp->status = 200;
	resp->attempt.status = 200;
	fa_resp_add_header(resp, "Content-Type", "text/event-stream");
	fa_resp_add_header(resp, "Cache-Control", "no-cache");
}

void fa_sse_render(const struct fa_chat_req *creq, struct fa_sse_pending *pending,
                   struct fa_resp *resp)
{
	struct fa_sse_stream sse = { 0 };

	if (pending->render == NULL)
		goto out;
	pending->render(creq, pending, &sse);
	if (pending->stop_after >= 0)
		resp->fault_bytes = (int)sse.cut;
	resp->stream_lead = (int)sse.lead;
	resp->stream_content = (int)sse.n_content;
	free(resp->body);
	resp->body = sse.body; /* the answer owns it now */
	resp->body_len = sse.len;
	sse.body = NULL;
	fa_sse_stream_release(&sse);
out:
	fa_sse_pending_release(pending);
}

void fa_sse_pending_release(struct fa_sse_pending *pending)
{
	if (pending == NULL)
		return;
	cJSON_Delete(pending->last);
	memset(pending, 0, sizeof(*pending));
}
