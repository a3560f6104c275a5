/* stream.h -- a streamed chat completion read as server-sent events, and how it ended. */
#ifndef REF_STREAM_H
#define REF_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A task with "stream": true asks for an OpenAI-compatible chat completion
 * as server-sent events (docs/scenario-format.md, Chat completions): frames
 * `data: {...}` separated by a blank line, the content in
 * choices[0].delta.content, an error as `data: {"error": {...}}` (the platform's rate-limit
 * contract: in streaming mode the 200 has gone out before the platform knows it is
 * overloaded, so the error comes as the stream's last frame, with its pause
 * in `retryAfter`), and `data: [DONE]` at the end. The reader is fed the
 * body as it arrives (the HTTP layer's write callback) and counts the
 * content chunks: the LLM rate-limit guide makes the first one the point after which no
 * silent retry is possible.
 */

/* Longest frame kept, bytes: a longer one is read and dropped (counted as
 * nothing). The provider's frames are a few hundred bytes. */
#define REF_STREAM_FRAME_MAX (256 * 1024)

/* Default idle timeout of a stream, s: a stream that brings no byte at
 * all for this long, before or after its status line, is given up (the
 * HTTP layer's progress callback, which libcurl calls about once a second
 * while idle: noticed within about a second after). FAKEAPI_STREAM_IDLE_S
 * overrides it (main.c). */
#define REF_STREAM_IDLE_S 5

/* The reader's state and what it has seen. Zero it, or ref_stream_reset(). */
struct ref_stream {
	char *line;            /* the line being read (no terminator yet), owned */
	size_t line_len;       /* bytes in line */
	size_t line_cap;       /* bytes allocated for line */
	bool line_over;        /* the line passed REF_STREAM_FRAME_MAX: dropped */
	bool after_cr;         /* the last byte was a CR (a CRLF's LF is not a
	                          second line end) */
	char *data;            /* the frame's data lines, joined by \n, owned */
	size_t data_len;       /* bytes in data */
	size_t data_cap;       /* bytes allocated for data */
	bool has_data;         /* the frame has a data line */
	bool data_over;        /* the frame passed REF_STREAM_FRAME_MAX: dropped */
	int chunks;            /* content chunks (a non-empty string in
	                          choices[0].delta.content) before the end or
	                          the error frame, >= 0 */
	bool done;             /* `data: [DONE]` came */
	bool error_frame;      /* an error frame came (its chunks are counted) */
	char *error_code;      /* the error frame's error.code, owned; NULL = none */
	char *retry_after;     /* the error frame's retryAfter as delta-seconds (a
	                          fraction rounded up, a string taken as it is),
	                          owned; NULL = none */
	int64_t error_wall_us; /* wall clock when the error frame was read */
	int64_t error_mono_us; /* the same moment, monotonic */
};

/* Forget everything @s holds and saw (a new response starts). */
void ref_stream_reset(struct ref_stream *s);

/* Free what @s owns and zero it. */
void ref_stream_release(struct ref_stream *s);

/*
 * Feed @len bytes of the response body, as they arrived. Lines end in LF,
 * CRLF or CR; a blank line ends a frame; only `data` fields are read (one
 * space after the colon dropped, several data lines joined by LF);
 * comments and other fields are ignored. A frame is read as JSON once
 * whole: a content chunk counts, an error frame is recorded (the first
 * only), `[DONE]` ends the stream; anything after [DONE] or the error
 * frame is ignored, and so is a frame that is not JSON. A frame cut off by
 * the end of the body is never read (the SSE rule).
 */
void ref_stream_feed(struct ref_stream *s, const char *buf, size_t len);

/* How a streamed attempt ended, for the task (the LLM rate-limit guide). */
enum ref_stream_end {
	REF_STREAM_NONE = 0,    /* not a stream, or not a 2xx answer: judged as usual */
	REF_STREAM_DONE,        /* [DONE] after no error frame: the answer is whole */
	REF_STREAM_ERROR_FRAME, /* an error frame came */
	REF_STREAM_CUT,         /* the connection closed (or the body ended) before [DONE] */
	REF_STREAM_STALL,       /* silent past the idle timeout */
	REF_STREAM_TRANSPORT,   /* another transport error (a reset, the attempt's
	                           own timeout) */
};

/* The end's name as stream_interrupted spells its `reason` ("error_frame",
 * "cut", "stall", "transport"; "done", "none"). Static. */
const char *ref_stream_end_str(enum ref_stream_end e);

#endif
