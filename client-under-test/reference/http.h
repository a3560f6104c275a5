/* http.h -- one attempt on the wire with libcurl, and nothing more. */
#ifndef REF_HTTP_H
#define REF_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rc.h"
#include "stream.h"

/*
 * This layer never retries: the task (task.c) is the one layer that owns
 * retries (the retry-safety guide), so every request on the wire is one attempt the
 * client reports. To keep libcurl from retrying underneath, each attempt
 * gets a fresh easy handle and a fresh connection (libcurl silently
 * resends a request once when a *reused* connection turns out dead), and
 * redirects are not followed.
 */

/* What to send. Everything is borrowed for the duration of the call. */
struct ref_http_req {
	const char *method;          /* "GET", "POST", ... */
	const char *url;             /* used as given */
	const char *const *headers;  /* "Name: value" lines, never the key */
	size_t nheaders;             /* entries in headers */
	const char *secret;          /* sent as Authorization: Bearer; NULL = none */
	const char *idempotency_key; /* sent as Idempotency-Key; NULL = none */
	const char *body;            /* request body, or NULL for none */
	size_t body_len;             /* bytes of body */
	long timeout_ms;             /* whole attempt, connect included, > 0 */
	const atomic_bool *cancel;   /* true aborts the attempt in flight */
	bool stream;                 /* the answer is read as server-sent events
	                                (stream.h) as it arrives */
	int idle_s;                  /* with stream: give up after this many seconds
	                                without a byte (a stall), >= 1; before the
	                                status line that is a transport error */
};

/* Most response body bytes an attempt keeps, bytes: enough for any
 * record or error the provider sends; the rest is read and dropped. */
#define REF_HTTP_BODY_MAX (1024 * 1024)

/* Most rate-limit header fields an attempt keeps (the rest are dropped),
 * and the longest value kept, bytes (a longer one is cut). */
#define REF_HTTP_RL_MAX     16
#define REF_HTTP_RL_VAL_MAX 512

/* One response header field, as received. */
struct ref_http_hdr {
	char *name;  /* the field name as the provider spelled it, owned */
	char *value; /* its raw value, trimmed, owned */
};

/* What came back. Released with ref_http_res_release(). */
struct ref_http_res {
	long status;          /* HTTP status; 0 = transport error or cancelled */
	char *retry_after;    /* raw Retry-After value (trimmed), owned; NULL = none */
	char *body;           /* the final response's body, NUL-terminated, at most
	                         REF_HTTP_BODY_MAX bytes, owned; NULL = none (or a
	                         transport error) */
	size_t body_len;      /* bytes of body (the NUL not counted) */
	int64_t seen_wall_us; /* wall clock when the response's headers arrived */
	int64_t seen_mono_us; /* monotonic clock at the same moment */
	int64_t sent_wall_us; /* wall clock when the attempt was started */
	size_t n_ratelimit;   /* entries used in ratelimit */
	bool maybe_sent;      /* some request bytes may have reached the provider */
	bool cancelled;       /* aborted because *cancel became true */
	char error[320];      /* transport error text; "" when status != 0, except
	                         for a stream that broke after its 2xx status line */
	/* A stream's end (req.stream and a 2xx status line came; else
	 * REF_STREAM_NONE). Then status is that 2xx status even when the
	 * connection broke afterwards (error says how), and an error frame's
	 * retryAfter is retry_after (unless a Retry-After header came), with
	 * seen_wall_us and seen_mono_us the moment the frame was read: the
	 * pause counts from there. */
	enum ref_stream_end stream_end;
	int stream_chunks; /* content chunks received before the end or the
	                      error frame */
	char *stream_code; /* the error frame's error.code, owned; NULL = none */
	/* the final response's rate-limit fields (RateLimit, RateLimit-Policy,
	 * RateLimit-Limit/-Remaining/-Reset, X-RateLimit-*), in arrival order,
	 * the first of each name, owned */
	struct ref_http_hdr ratelimit[REF_HTTP_RL_MAX];
};

/* Call once from main() before any thread starts (curl_global_init). On
 * failure returns FA_EIO with the reason in @err. */
enum fa_rc ref_http_global_init(struct fa_err *err);

/* Call once at exit, after every thread has ended. */
void ref_http_global_cleanup(void);

/* One attempt, prepared but not sent: the handle is built before the
 * client announces action_sent, so a setup failure never counts as an
 * attempt. */
struct ref_http;

/*
 * Build the attempt for @req (which must stay valid until
 * ref_http_free()). On failure (out of handles, an option libcurl
 * refuses) returns FA_EIO with the CURLcode's text in @err and *@out NULL;
 * nothing was sent.
 */
enum fa_rc ref_http_new(const struct ref_http_req *req, struct ref_http **out, struct fa_err *err);

/*
 * Send the attempt and wait for its outcome; fills @res (which must be
 * zeroed or released). A response of any status is a success of this
 * layer; a transport error leaves status 0 and says why in res->error.
 * Call at most once per handle.
 */
void ref_http_perform(struct ref_http *h, struct ref_http_res *res);

/* Free @h (wiping the key from memory); NULL is accepted. */
void ref_http_free(struct ref_http *h);

/* Free what @res owns and zero it, so it can be reused. */
void ref_http_res_release(struct ref_http_res *res);

#endif
