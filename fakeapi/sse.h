/* sse.h -- text/event-stream answers: frames, the cut, pacing, rendering outside the lock. */
#ifndef FA_SSE_H
#define FA_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

struct fa_chat_req;
struct fa_resp;
struct fa_response_spec;

/*
 * What the two streaming endpoints share (chat.h: OpenAI's chunks and
 * [DONE]; messages.h: Anthropic's named events): a body of frames, each
 * ending in a blank line; which of them carry a piece of the reply (the
 * journal's stream_chunks); where a stop_after_chunks cut falls; the
 * status, headers and pacing members a stream answer gets; and a body
 * rendered after the provider's lock is released (a 64 KiB reply is some
 * 32,000 frames, 5 MB). docs/scenario-format.md, "Chat completions" and
 * "Messages", say what the client sees.
 */

/* A rendered SSE body. */
struct fa_sse_stream {
	char *body; /* owned, NUL-terminated, len bytes */
	size_t len;
	size_t cap;       /* bytes allocated at body (> len) */
	size_t *ends;     /* owned: where each frame fa_sse_frame appended ends, n_chunks */
	size_t ends_cap;  /* entries allocated at ends */
	size_t n_chunks;  /* frames appended with fa_sse_frame (a tail never counts) */
	size_t lead;      /* the first frames, which carry no piece of the reply and
	                     always go, cut or not (0 for chat; 3 for messages) */
	size_t n_content; /* the frames right after the lead ones carrying a piece */
	size_t cut;       /* after fa_sse_finish: bytes a cut stream sends, else len */
};

/* Append "event: @event\n" (none when @event is NULL), then "data: " and
 * the compact JSON of @data, then "\n\n", to @s; the frame counts
 * (n_chunks). The body grows geometrically: a whole stream renders in
 * linear time. */
void fa_sse_frame(struct fa_sse_stream *s, const char *event, const cJSON *data);

/*
 * The stream is complete: set ->cut for @stop_after, then append @tail
 * (NULL for none; "data: [DONE]\n\n" for chat), which is no frame of its
 * own and never part of a cut. @stop_after >= 0 cuts after the lead
 * frames and the first min(@stop_after, n_chunks - lead) frames after
 * them; -1 leaves cut = len.
 */
void fa_sse_finish(struct fa_sse_stream *s, int stop_after, const char *tail);

/* Free what @s owns and zero it. NULL accepted. */
void fa_sse_stream_release(struct fa_sse_stream *s);

/*
 * Where the frame of SSE @body (@len bytes) that starts at byte @pos
 * ends: just past its "\n\n" (@len when none follows). A "data:
 * [DONE]\n\n" right after it belongs to it, so a paced stream sends
 * [DONE] with the frame before it. @pos >= @len gives @len.
 */
size_t fa_sse_frame_end(const char *body, size_t len, size_t pos);

/*
 * Content chunks among the first @bytes of SSE @body (@len bytes) whose
 * @n_content frames after its first @lead carry a piece of the reply:
 * how many of those end at or before @bytes (a frame cut short does not
 * count).
 */
int fa_sse_chunks_sent(const char *body, size_t len, int lead, int n_content, size_t bytes);

/*
 * @resp becomes a 200 text/event-stream answer (Content-Type replaced,
 * Cache-Control: no-cache) that ends as @end says ("done", "error_frame",
 * "cut", "stall"; static) when every byte goes out, paced by @spec's
 * chunk_delay_ms and, with stall_after_chunks, silent for its stall_ms
 * before the frame after the content ones, whose pause is
 * @stall_retry_after_s (0: the frame names none). Its body comes from
 * fa_sse_render().
 */
void fa_sse_answer(struct fa_resp *resp, const struct fa_response_spec *spec, const char *end,
                   int stall_retry_after_s);

struct fa_sse_pending;

/* Render the stream @pending describes for request @creq into @out
 * (zeroed; finished with fa_sse_finish). */
typedef void fa_sse_render_fn(const struct fa_chat_req *creq, const struct fa_sse_pending *pending,
                              struct fa_sse_stream *out);

/* A stream body still to render, decided under the provider's lock. */
struct fa_sse_pending {
	fa_sse_render_fn *render; /* the endpoint's renderer; NULL: nothing pending */
	const char *reply;        /* borrowed from the route (the scenario outlives it) */
	cJSON *last;              /* owned: the frame that ends the stream in place of its
	                             normal end (an error's, a stall's), or NULL */
	int last_after;           /* the pieces of the reply sent before @last */
	int stop_after;           /* fa_sse_finish's @stop_after, -1 = not cut */
	uint64_t seq;             /* the answer's number ("chatcmpl-<seq>", "msg_<seq>") */
	int64_t created_s;        /* its "created", wall clock, s (chat) */
};

/*
 * Render what @pending holds for @creq into @resp: the body,
 * stream_lead, stream_content and, for a cut stream, fault_bytes. Pure:
 * needs no lock. Releases @pending in any case; with nothing pending it
 * leaves @resp as it is.
 */
void fa_sse_render(const struct fa_chat_req *creq, struct fa_sse_pending *pending,
                   struct fa_resp *resp);

/* Free what @pending owns and zero it. NULL accepted. */
void fa_sse_pending_release(struct fa_sse_pending *pending);

#endif
