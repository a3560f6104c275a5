/* server.c -- glue between libmicrohttpd and the provider; the only file
 * that includes <microhttpd.h>. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <microhttpd.h>

#include "admin.h"
#include "alloc.h"
#include "clock.h"
#include "fault.h"
#include "log.h"
#include "sse.h"
#include "target.h"
#include "timer.h"

/* One TCP connection, for the journal's connection id and reuse count. */
struct conn {
	uint64_t id;       /* 1, 2, ... */
	unsigned requests; /* requests started on it so far */
};

/* Where a request is in its life. */
enum req_state {
	REQ_NEW = 0, /* request line read (uri_seen), headers not yet */
	REQ_READING, /* headers read, body may still be arriving */
	REQ_HELD,    /* decided, suspended until its hold or delay is over */
	REQ_READY,   /* decided, the answer (or its fault) may go out now */
	REQ_QUEUED,  /* the answer was handed to libmicrohttpd */
};

/* Per-request state; one owner and one release point: request_completed(). */
struct request {
	struct MHD_Connection *mhd;
	enum req_state state;
	uint64_t conn_id;
	unsigned conn_reuse;
	int64_t t_arrival_us;
	int64_t wall_us;
	char *method; /* owned copies of what libmicrohttpd handed us */
	char *path;
	char *raw_uri;         /* owned: the request target as sent, not decoded */
	const char *malformed; /* static: why framing or target is malformed, or NULL */
	struct fa_header *headers;
	size_t n_headers;
	struct fa_header *query;
	size_t n_query;
	char *body; /* up to FA_PROVIDER_MAX_BODY bytes */
	size_t body_len;
	bool too_large;
	bool decided;
	bool dropped; /* the connection was closed on purpose (a fault) */
	struct fa_resp resp;
	int64_t t_response_us; /* -1 until queued */
	size_t stream_sent;    /* a stream: body bytes handed to libmicrohttpd */
	bool stream_gone;      /* a stream: its client was found gone after a wait */
	bool stream_stopped;   /* a stream: the server's stop ended it before its end */
	/* While suspended (park): for a hold, which fa_server_release() can
	 * end early and which then waits out its delay too, for its delay
	 * alone, or for a stream's next frame. */
	struct fa_timer_entry wait;  /* on the server's timer, due at the end of the wait */
	bool wait_hold;              /* a "hold" (counted by fa_server_held), not a delay */
	bool wait_stream;            /* a stream waiting for its next frame (its content
	                                reader suspended it; the answer is already queued) */
	struct request *hold_prev;   /* the server's list of holds, while wait_hold: */
	struct request *hold_next;   /* the ones before and after this one */
	struct request *resume_next; /* the timer thread's batch to resume, once due */
};

struct fa_server {
	struct fa_provider *p; /* borrowed */
	struct MHD_Daemon *d;
	unsigned port;
	pthread_mutex_t lock;   /* guards everything below */
	uint64_t next_conn_id;  /* also the count of connections accepted */
	size_t n_conns;         /* open connections */
	size_t n_requests;      /* requests started and not yet journaled */
	uint64_t n_started;     /* requests started so far */
	struct fa_timer *waits; /* owned: the suspended requests by due time */
	struct request *holds;  /* the suspended requests on a hold, oldest first */
	struct request *holds_tail;
	bool stopping;
	pthread_cond_t wake; /* the timer thread's alarm */
	pthread_t timer;
	bool timer_started;
};

static void free_pairs(struct fa_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

static void request_free(struct request *r)
{
	free(r->method);
	free(r->path);
	free(r->raw_uri);
	free_pairs(r->headers, r->n_headers);
	free_pairs(r->query, r->n_query);
	free(r->body);
	fa_resp_release(&r->resp);
	free(r);
}

/* Collects header or query pairs into an array sized beforehand. */
struct pairs {
	struct fa_header *v;
	size_t n, cap;
};

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
	struct pairs *ps = cls;

	(void)kind;
	if (ps->n == ps->cap)
		return MHD_NO; /* cannot happen: counted first */
	ps->v[ps->n].name = fa_xstrdup(key);
	ps->v[ps->n].value = fa_xstrdup(value != NULL ? value : "");
	ps->n++;
	return MHD_YES;
}

/* Every value of @kind, copied, in one allocation for the array. */
static struct pairs collect_all(struct MHD_Connection *mhd, enum MHD_ValueKind kind)
{
	int n = MHD_get_connection_values(mhd, kind, NULL, NULL);
	struct pairs ps = { NULL, 0, n > 0 ? (size_t)n : 0 };

	if (ps.cap > 0) {
		ps.v = fa_xmalloc(ps.cap * sizeof(*ps.v));
		MHD_get_connection_values(mhd, kind, collect, &ps);
	}
	return ps;
}

static void fill_req(const struct request *r, struct fa_req *q)
{
	*q = (struct fa_req){
		.method = r->method,
		.path = r->path,
		.query = r->query,
		.n_query = r->n_query,
		.headers = r->headers,
		.n_headers = r->n_headers,
		.body = r->body,
		.body_len = r->body_len,
		.body_too_large = r->too_large,
		.malformed = r->malformed,
		.conn_id = r->conn_id,
		.conn_reuse = r->conn_reuse,
		.t_arrival_us = r->t_arrival_us,
		.wall_us = r->wall_us,
	};
}

/*
 * libmicrohttpd's URI log callback: the request line is read, the headers
 * not yet. The request is counted from here, so one whose headers
 * libmicrohttpd refuses (431, or a query too large for the connection's
 * pool) is still journaled: request_completed() sees it undecided.
 */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *mhd)
{
	struct fa_server *s = cls;
	struct request *r = fa_xcalloc(1, sizeof(*r));
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(mhd, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = ci != NULL ? ci->socket_context : NULL;
	const char *path = fa_target_path(uri);

	r->mhd = mhd;
	r->state = REQ_NEW;
	r->t_arrival_us = fa_provider_now_us(s->p);
	r->wall_us = fa_clock_wall_us();
	r->t_response_us = -1;
	r->raw_uri = fa_xstrdup(uri);
	r->path = fa_xstrndup(path, strcspn(path, "?")); /* replaced by the decoded one */
	if (c != NULL) {
		r->conn_id = c->id;
		r->conn_reuse = c->requests++;
	}
	pthread_mutex_lock(&s->lock);
	s->n_requests++;
	s->n_started++;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* The headers are read: what the provider needs of the request. */
static void request_start(struct request *r, struct MHD_Connection *mhd, const char *url,
                          const char *method, const char *version)
{
	struct pairs hs, qs;

	r->state = REQ_READING;
	r->method = fa_xstrdup(method);
	free(r->path);
	r->path = fa_xstrdup(fa_target_path(url));
	hs = collect_all(mhd, MHD_HEADER_KIND);
	qs = collect_all(mhd, MHD_GET_ARGUMENT_KIND);
	r->headers = hs.v;
	r->n_headers = hs.n;
	r->query = qs.v;
	r->n_query = qs.n;
	r->malformed = fa_target_malformed(r->raw_uri != NULL ? r->raw_uri : url, r->path, version,
	                                   r->headers, r->n_headers, FA_ADMIN_PREFIX);
	/* a body announced past the limit is refused before it is read */
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, "Content-Length") == 0 &&
		    strtoull(r->headers[i].value, NULL, 10) > FA_PROVIDER_MAX_BODY)
			r->too_large = true;
}

static void take_body(struct request *r, const char *data, size_t len)
{
	if (r->too_large || r->body_len + len > FA_PROVIDER_MAX_BODY) {
		r->too_large = true; /* keep reading, keep nothing: 413 follows */
		return;
	}
	r->body = fa_xrealloc(r->body, r->body_len + len);
	memcpy(r->body + r->body_len, data, len);
	r->body_len += len;
}

static ssize_t view_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	ssize_t got = fa_journal_view_read(cls, pos, buf, max);

	if (got == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return got < 0 ? MHD_CONTENT_READER_END_WITH_ERROR : got;
}

static void view_free(void *cls)
{
	fa_journal_view_close(cls);
}

/* The body as libmicrohttpd sends it: a copy of the buffer, or the
 * journal view streamed in 16 KiB blocks (the view moves to the response). */
static struct MHD_Response *body_response(struct fa_resp *a)
{
	struct fa_journal_view *w = a->journal_view;

	if (w == NULL)
		return MHD_create_response_from_buffer(a->body_len, a->body, MHD_RESPMEM_MUST_COPY);
	a->journal_view = NULL;
	return MHD_create_response_from_callback(fa_journal_view_size(w), 16 * 1024, view_read, w,
	                                         view_free);
}

static enum MHD_Result queue_answer(struct fa_server *s, struct request *r)
{
	struct fa_resp *a = &r->resp;
	struct MHD_Response *resp;
	enum MHD_Result ok;

	resp = body_response(a);
	if (resp == NULL)
		return MHD_NO;
	for (size_t i = 0; i < a->n_headers; i++)
		MHD_add_response_header(resp, a->headers[i].name, a->headers[i].value);
	r->state = REQ_QUEUED;
	r->t_response_us = fa_provider_now_us(s->p);
	ok = MHD_queue_response(r->mhd, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	return ok;
}

/* One read of a partial body: the first bytes, then an error, on which
 * libmicrohttpd closes the connection with the rest of the body unsent. */
struct partial {
	char *bytes; /* owned, n bytes */
	size_t n;
};

static ssize_t partial_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct partial *pb = cls;
	size_t n;

	if (pos >= pb->n)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	n = pb->n - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, pb->bytes + pos, n);
	return (ssize_t)n;
}

static void partial_free(void *cls)
{
	struct partial *pb = cls;

	free(pb->bytes);
	free(pb);
}

/*
 * partial_body: the status line and headers with the Content-Length of the
 * whole body, then only its first bytes, then a clean close. A content
 * reader does this inside libmicrohttpd's own send loop (non-blocking, so a
 * slow reader never stalls a pool thread, and the headers are the ones a
 * complete answer has); writing raw bytes to the socket ourselves would
 * have to block on a full send buffer.
 */
static enum MHD_Result queue_partial(struct fa_server *s, struct request *r)
{
	const struct fa_resp *a = &r->resp;
	struct partial *pb = fa_xcalloc(1, sizeof(*pb));
	struct MHD_Response *resp;
	enum MHD_Result ok;

	pb->n = fa_fault_partial_len(a->fault_bytes, a->body_len);
	pb->bytes = fa_xmalloc(pb->n + 1);
	memcpy(pb->bytes, a->body, pb->n);
	resp = MHD_create_response_from_callback(a->body_len, 16 * 1024, partial_read, pb,
	                                         partial_free);
	if (resp == NULL) {
		partial_free(pb);
		return MHD_NO;
	}
	for (size_t i = 0; i < a->n_headers; i++)
		MHD_add_response_header(resp, a->headers[i].name, a->headers[i].value);
	r->state = REQ_QUEUED;
	r->dropped = true;
	r->t_response_us = fa_provider_now_us(s->p);
	ok = MHD_queue_response(r->mhd, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	return ok;
}

/*
 * A text/event-stream answer (resp.stream_end set; sse.h), read out by
 * libmicrohttpd through stream_read(). At once, it is one body with a
 * Content-Length. Paced (chunk_delay_ms) or stalling (stall_ms), it goes
 * chunked, a frame at a time: at each frame boundary whose time has not
 * come the reader suspends the connection and returns 0; the timer thread
 * resumes it when due, so no pool thread ever waits. A cut stream (fault
 * partial_body) ends with an error after its first fault_bytes bytes.
 */
struct stream {
	struct fa_server *s;
	struct request *r; /* borrowed: libmicrohttpd reads no more once the request
	                      completed (request_completed frees it) */
	char *body;        /* owned copy, len bytes */
	size_t len;
	size_t limit;     /* bytes to hand out: len, or the cut */
	bool cut;         /* end with an error at limit (no [DONE]) */
	bool paced;       /* a frame at a time */
	int frame;        /* frames started so far */
	size_t frame_end; /* end of the frame being handed out */
	int64_t last_us;  /* when the last frame started (or the headers went) */
	bool waited;      /* the reader suspended the connection at frame_end */
};

static bool park(struct fa_server *s, struct request *r, int64_t due, bool hold, bool stream);

/* The client closed its end (a read finds EOF or an error); a suspended
 * connection does not notice it by itself. */
static bool peer_gone(struct request *r)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(r->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
	char c;
	ssize_t n;

	if (ci == NULL)
		return false;
	n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* The wait before frame @st->frame: stall_ms before the one after the
 * content frames when the stream stalls, chunk_delay_ms between frames;
 * the lead frames and the first content frame go at once. */
static int64_t frame_wait_us(const struct stream *st)
{
	const struct fa_resp *a = &st->r->resp;

	if (a->stall_ms > 0 && st->frame == a->stream_lead + a->stream_content)
		return (int64_t)a->stall_ms * 1000;
	return st->frame <= a->stream_lead ? 0 : (int64_t)a->chunk_delay_ms * 1000;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct request *r = st->r;
	size_t end = st->limit, n;

	if (pos >= st->limit) {
		r->stream_sent = st->limit;
		return st->cut ? MHD_CONTENT_READER_END_WITH_ERROR
		               : MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (st->paced && pos >= st->frame_end) {
		int64_t now = fa_provider_now_us(st->s->p);
		int64_t due = st->last_us + frame_wait_us(st);

		if (st->waited) {
			st->waited = false;
			if (peer_gone(r)) {
				r->stream_gone = true;
				return MHD_CONTENT_READER_END_WITH_ERROR;
			}
		}
		if (now < due) {
			if (park(st->s, r, due, false, true)) {
				st->waited = true;
				return 0;
			}
			/* stopping, nothing may wait: the provider cuts it */
			r->stream_stopped = true;
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (r->resp.stall_ms > 0 && r->resp.stall_retry_after_s > 0 &&
		    st->frame == r->resp.stream_lead + r->resp.stream_content) {
			r->resp.attempt.pause_until_us =
			        now + (int64_t)r->resp.stall_retry_after_s * 1000000;
			fa_attempt_pause_from(&r->resp.attempt, "error-frame");
		}
		st->frame_end = fa_sse_frame_end(st->body, st->len, (size_t)pos);
		st->frame++;
		st->last_us = now;
	}
	if (st->paced && st->frame_end < end)
		end = st->frame_end;
	n = end - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, st->body + pos, n);
	r->stream_sent = (size_t)pos + n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	free(st->body);
	free(st);
}

static enum MHD_Result queue_stream(struct fa_server *s, struct request *r)
{
	const struct fa_resp *a = &r->resp;
	struct stream *st = fa_xcalloc(1, sizeof(*st));
	struct MHD_Response *resp;
	enum MHD_Result ok;

	st->s = s;
	st->r = r;
	st->len = a->body_len;
	st->body = fa_xmalloc(a->body_len + 1);
	memcpy(st->body, a->body, a->body_len);
	st->cut = a->fault == FA_RESP_PARTIAL_BODY;
	st->limit = st->cut ? fa_fault_partial_len(a->fault_bytes, a->body_len) : a->body_len;
	st->paced = a->chunk_delay_ms > 0 || a->stall_ms > 0;
	st->last_us = fa_provider_now_us(s->p);
	/* paced: chunked (no length); else the length of the whole body, a
	 * cut one included, as for any partial body */
	resp = MHD_create_response_from_callback(st->paced ? MHD_SIZE_UNKNOWN : a->body_len,
	                                         16 * 1024, stream_read, st, stream_free);
	if (resp == NULL) {
		stream_free(st);
		return MHD_NO;
	}
	for (size_t i = 0; i < a->n_headers; i++)
		MHD_add_response_header(resp, a->headers[i].name, a->headers[i].value);
	r->state = REQ_QUEUED;
	r->dropped = st->cut;
	r->t_response_us = fa_provider_now_us(s->p);
	ok = MHD_queue_response(r->mhd, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	return ok;
}

/* Did the server's stop end @r, a stream whose headers went out? The
 * provider's doing: journaled delivered "dropped", stream_end "cut". */
static bool stream_stopped(const struct request *r, enum MHD_RequestTerminationCode toe)
{
	if (r->resp.stream_end == NULL || r->t_response_us < 0 || r->stream_gone)
		return false;
	return r->stream_stopped || toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN;
}

/* The journal's stream_chunks and stream_end for a stream whose headers
 * went out, from what its reader handed out and how the request ended. */
static void stream_journal(struct request *r, enum MHD_RequestTerminationCode toe)
{
	struct fa_attempt *at = &r->resp.attempt;
	const struct fa_resp *a = &r->resp;
	bool cut = a->fault == FA_RESP_PARTIAL_BODY;
	bool stopped = stream_stopped(r, toe);
	size_t limit = cut ? fa_fault_partial_len(a->fault_bytes, a->body_len) : a->body_len;
	bool whole = !r->stream_gone && r->stream_sent >= limit &&
	             (cut || toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);

	if (a->stream_end == NULL || r->t_response_us < 0)
		return;
	at->stream_chunks = fa_sse_chunks_sent(a->body, a->body_len, a->stream_lead,
	                                       a->stream_content, r->stream_sent);
	free(at->stream_end);
	at->stream_end = fa_xstrdup(stopped  ? "cut"
	                            : !whole ? "client_gone"
	                            : cut    ? "cut"
	                                     : a->stream_end);
}

/*
 * A connection fault instead of the answer. Returning MHD_NO from the
 * access handler makes libmicrohttpd shut the write side and close: the
 * client reads a clean EOF. A reset needs more: SO_LINGER 0 is not enough
 * because the write side is shut first (a FIN goes out), but connect() with
 * AF_UNSPEC disconnects the socket at once, which sends a RST from any
 * synchronized state; libmicrohttpd's close then finds it disconnected.
 */
static enum MHD_Result drop(struct request *r)
{
	const union MHD_ConnectionInfo *ci;
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	if (r->resp.fault == FA_RESP_RESET) {
		ci = MHD_get_connection_info(r->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci == NULL || connect(ci->connect_fd, &unspec, sizeof(unspec)) != 0)
			FA_LOG(FA_LOG_WARN, "server", "event=reset_failed errno=%d", errno);
	}
	r->state = REQ_QUEUED;
	r->dropped = true;
	return MHD_NO;
}

/* Send the decided answer, or apply its fault. */
static enum MHD_Result answer(struct fa_server *s, struct request *r)
{
	switch (r->resp.fault) {
	case FA_RESP_RESPOND: break;
	case FA_RESP_PARTIAL_BODY:
		if (r->resp.stream_end != NULL)
			return queue_stream(s, r);
		return queue_partial(s, r);
	case FA_RESP_DROP_BEFORE_COMMIT:
	case FA_RESP_DROP_AFTER_COMMIT:
	case FA_RESP_RESET:
	case FA_RESP_CLOSE_IDLE: return drop(r);
	}
	if (r->resp.stream_end != NULL)
		return queue_stream(s, r);
	return queue_answer(s, r);
}

/* Add @r at the end of the list of holds; caller holds s->lock. */
static void hold_link(struct fa_server *s, struct request *r)
{
	r->wait_hold = true;
	r->hold_next = NULL;
	r->hold_prev = s->holds_tail;
	if (s->holds_tail != NULL)
		s->holds_tail->hold_next = r;
	else
		s->holds = r;
	s->holds_tail = r;
}

/* Take @r off the list of holds, if it is on it; caller holds s->lock. */
static void hold_unlink(struct fa_server *s, struct request *r)
{
	if (!r->wait_hold)
		return;
	if (r->hold_prev != NULL)
		r->hold_prev->hold_next = r->hold_next;
	else
		s->holds = r->hold_next;
	if (r->hold_next != NULL)
		r->hold_next->hold_prev = r->hold_prev;
	else
		s->holds_tail = r->hold_prev;
	r->hold_prev = r->hold_next = NULL;
	r->wait_hold = false;
}

/* Suspend @r until @due (µs since start) on the timer: for its hold
 * (@hold; hold_ms at most, fa_server_release() may end it early), its
 * delay, or (@stream, from its content reader) its next frame. The timer
 * thread resumes it. False when the server is stopping: nothing may stay
 * suspended then, so the answer (or the rest of the stream) goes at once. */
static bool park(struct fa_server *s, struct request *r, int64_t due, bool hold, bool stream)
{
	bool ok = false;

	pthread_mutex_lock(&s->lock);
	if (s->stopping)
		goto out;
	if (!stream)
		r->state = REQ_HELD;
	MHD_suspend_connection(r->mhd);
	r->wait_stream = stream;
	if (hold)
		hold_link(s, r);
	fa_timer_add(s->waits, &r->wait, due);
	/* the timer thread sleeps until the earliest due time: only a new
	 * earliest one shortens its sleep */
	if (fa_timer_first(s->waits) == &r->wait)
		pthread_cond_signal(&s->wake);
	ok = true;
out:
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* Suspend @r for its hold or else its delay (park). */
static bool suspend(struct fa_server *s, struct request *r)
{
	bool hold = r->resp.hold;
	int ms = hold ? r->resp.hold_ms : r->resp.delay_ms;

	return park(s, r, fa_provider_now_us(s->p) + (int64_t)ms * 1000, hold, false);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *mhd, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
	struct fa_server *s = cls;
	struct request *r = *con_cls;
	struct fa_req q;

	if (r == NULL) /* no URI callback ran: cannot happen, but stay whole */
		*con_cls = r = uri_seen(s, url, mhd);
	if (r->state == REQ_NEW) {
		request_start(r, mhd, url, method, version);
		if (r->malformed == NULL && !r->too_large)
			return MHD_YES;
		/* answered at once, the body unread: libmicrohttpd then closes
		 * the connection, whose framing cannot be trusted */
		*upload_data_size = 0;
	}
	if (*upload_data_size > 0) {
		take_body(r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->state == REQ_READING) {
		fill_req(r, &q);
		if (r->malformed == NULL && fa_provider_admin_on(s->p) &&
		    fa_admin_is_admin_path(q.path))
			fa_admin_handle(s->p, &q, &r->resp);
		else
			fa_provider_decide(s->p, &q, &r->resp);
		r->decided = true;
		if ((r->resp.hold || r->resp.delay_ms > 0) && suspend(s, r))
			return MHD_YES;
		r->state = REQ_READY;
	}
	if (r->state == REQ_READY)
		return answer(s, r);
	return MHD_YES;
}

static void request_completed(void *cls, struct MHD_Connection *mhd, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
	struct fa_server *s = cls;
	struct request *r = *con_cls;
	enum fa_delivery how;
	struct fa_req q;

	(void)mhd;
	if (r == NULL)
		return;
	*con_cls = NULL;
	if (!r->decided) {
		fill_req(r, &q);
		/* an admin request that never finished is no attempt */
		if (!fa_provider_admin_on(s->p) || !fa_admin_is_admin_path(q.path))
			fa_provider_abandon(s->p, &q, &r->resp);
	}
	/* a connection fault closes on purpose, even when the server's stop
	 * closed the connection before the fault could */
	if (r->dropped || stream_stopped(r, toe) ||
	    (r->decided && r->resp.fault != FA_RESP_RESPOND &&
	     toe != MHD_REQUEST_TERMINATED_COMPLETED_OK))
		how = FA_DELIVERED_DROPPED;
	else if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		how = FA_DELIVERED_COMPLETE;
	else
		how = FA_DELIVERED_CLIENT_GONE;
	stream_journal(r, toe);
	fa_provider_finish(s->p, &r->resp, r->t_response_us, fa_provider_now_us(s->p), how);
	request_free(r);
	/* only now: a count of 0 says the journal holds every attempt */
	pthread_mutex_lock(&s->lock);
	s->n_requests--;
	pthread_mutex_unlock(&s->lock);
}

static void connection_notify(void *cls, struct MHD_Connection *mhd, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
	struct fa_server *s = cls;
	struct conn *c;

	(void)mhd;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		c = fa_xcalloc(1, sizeof(*c));
		pthread_mutex_lock(&s->lock);
		c->id = ++s->next_conn_id;
		s->n_conns++;
		pthread_mutex_unlock(&s->lock);
		*socket_context = c;
	} else {
		free(*socket_context);
		*socket_context = NULL;
		pthread_mutex_lock(&s->lock);
		s->n_conns--;
		pthread_mutex_unlock(&s->lock);
	}
}

/* The request whose wait @e is. */
static struct request *waiting(struct fa_timer_entry *e)
{
	return (struct request *)(void *)((char *)e - offsetof(struct request, wait));
}

/* Take @r off the timer and the holds, its wait over; caller holds
 * s->lock and then resumes it, once. Taking it off first is what keeps a
 * connection from being resumed twice. */
static void unpark(struct fa_server *s, struct request *r)
{
	fa_timer_remove(s->waits, &r->wait);
	hold_unlink(s, r);
	if (!r->wait_stream)
		r->state = REQ_READY; /* a stream's answer is queued already */
}

/* @r's wait is over at @now (its entry may have been taken off the timer
 * already): a hold goes on to its delay, if it has one, due then, and
 * false; anything else is unparked, and true: the caller resumes it.
 * Caller holds s->lock. */
static bool wake(struct fa_server *s, struct request *r, int64_t now)
{
	int64_t due;

	if (r->wait_hold && r->resp.delay_ms > 0) {
		hold_unlink(s, r);
		due = now + (int64_t)r->resp.delay_ms * 1000;
		if (fa_timer_queued(&r->wait))
			fa_timer_move(s->waits, &r->wait, due);
		else
			fa_timer_add(s->waits, &r->wait, due);
		return false;
	}
	unpark(s, r);
	return true;
}

static bool task_is(const struct request *r, const char *task)
{
	const char *t = r->resp.attempt.task;

	return task == NULL || (t != NULL && strcmp(t, task) == 0);
}

size_t fa_server_held(struct fa_server *s, const char *task)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (const struct request *r = s->holds; r != NULL; r = r->hold_next)
		if (task_is(r, task))
			n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t fa_server_release(struct fa_server *s, const char *task)
{
	int64_t now = fa_provider_now_us(s->p);
	struct request *r, *next;
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (r = s->holds; r != NULL; r = next) {
		next = r->hold_next; /* wake() takes r off the list */
		if (task_is(r, task)) {
			n++;
			if (wake(s, r, now))
				MHD_resume_connection(r->mhd);
		}
	}
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Resume the requests of @batch (linked by resume_next), each
 * unparked already; without s->lock, so that no pool thread waits on it
 * to park meanwhile. A resumed request is its pool thread's again at
 * once (it may park again, or complete and be freed): the next one is
 * read before. */
static void resume_batch(struct request *batch)
{
	while (batch != NULL) {
		struct request *r = batch;

		batch = r->resume_next;
		MHD_resume_connection(r->mhd);
	}
}

/* Wake what is due, then sleep until the next due time (or a park that
 * brings it forward): each wake costs O(log n) per entry due, whatever
 * else waits. fa_server_stop() joins this thread before it stops the
 * daemon, so a batch it is resuming is resumed before that. */
static void *timer_main(void *arg)
{
	struct fa_server *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		int64_t now = fa_provider_now_us(s->p);
		struct request *batch = NULL, **tail = &batch;
		struct fa_timer_entry *e;
		struct timespec ts;

		for (;;) {
			struct request *r;

			e = fa_timer_pop_due(s->waits, now);
			if (e == NULL)
				break;
			r = waiting(e);
			if (wake(s, r, now)) {
				*tail = r; /* in due order */
				tail = &r->resume_next;
			}
		}
		*tail = NULL;
		if (batch != NULL) {
			pthread_mutex_unlock(&s->lock);
			resume_batch(batch);
			pthread_mutex_lock(&s->lock);
			continue; /* more may have come due meanwhile */
		}
		e = fa_timer_first(s->waits);
		if (e == NULL) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		/* due instants are virtual: a scaled clock waits 1/S as long */
		ts = fa_clock_real_deadline(fa_clock_mono_us() + (e->due_us - now));
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Let the process hold as many sockets as the hard limit allows. */
static unsigned raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur > 1000000 ? 1000000 : (unsigned)rl.rlim_cur;
}

enum fa_rc fa_server_start(struct fa_provider *p, const struct fa_server_opts *opts,
                           struct fa_server **out, struct fa_err *err)
{
	struct fa_server *s = fa_xcalloc(1, sizeof(*s));
	const char *bind = opts->bind != NULL ? opts->bind : "127.0.0.1";
	unsigned threads = opts->threads >= 2 ? opts->threads : 4;
	unsigned nofile = raise_nofile();
	unsigned limit = nofile > 256 ? nofile - 128 : 128;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr *sa = (struct sockaddr *)&sin;
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
	pthread_condattr_t ca;
	const union MHD_DaemonInfo *di;
	enum fa_rc rc = FA_EIO;

	*out = NULL;
	if (strcmp(bind, "localhost") == 0)
		bind = "127.0.0.1"; /* the loopback name needs no resolver */
	if (inet_pton(AF_INET, bind, &sin.sin_addr) == 1) {
		sin.sin_port = htons((uint16_t)opts->port);
	} else if (inet_pton(AF_INET6, bind, &sin6.sin6_addr) == 1) {
		sin6.sin6_port = htons((uint16_t)opts->port);
		sa = (struct sockaddr *)&sin6;
		flags |= MHD_USE_IPv6;
	} else {
		fa_err_set(err, "cannot listen on %s: not an IPv4 or IPv6 address", bind);
		rc = FA_EINVAL;
		goto out;
	}
	if (opts->port > 65535) {
		fa_err_set(err, "cannot listen on port %u: expected 0..65535", opts->port);
		rc = FA_EINVAL;
		goto out;
	}
	s->p = p;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->waits = fa_timer_new();
	/* Thread pool + poll: docs/internals.md records why the epoll and select
	 * modes are not used; the load test guards this choice. */
	s->d = MHD_start_daemon(
	        flags, (uint16_t)opts->port, NULL, NULL, access_handler, s, MHD_OPTION_SOCK_ADDR,
	        sa, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_LIMIT, limit,
	        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
	        /* the 32 KiB default pool cannot hold a long query
	         * or many headers, and a request that overflows it
	         * gets no answer at all */
	        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)FA_SERVER_CONN_MEMORY,
	        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096, MHD_OPTION_NOTIFY_COMPLETED,
	        request_completed, s, MHD_OPTION_URI_LOG_CALLBACK, uri_seen, s,
	        MHD_OPTION_NOTIFY_CONNECTION, connection_notify, s, MHD_OPTION_END);
	if (s->d == NULL) {
		fa_err_set(err, "cannot listen on %s:%u: %s", bind, opts->port,
		           errno != 0 ? strerror(errno) : "libmicrohttpd refused to start");
		fa_timer_free(s->waits);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		goto out;
	}
	di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di != NULL ? di->port : opts->port;
	if (pthread_create(&s->timer, NULL, timer_main, s) != 0) {
		fa_err_set(err, "cannot start the timer thread");
		fa_server_stop(s);
		s = NULL;
		goto out;
	}
	s->timer_started = true;
	/* named, so that a profile or /proc/PID/task finds it (docs/bench.md) */
	pthread_setname_np(s->timer, "fakeapi-timer");
	*out = s;
	s = NULL;
	rc = FA_OK;
	FA_LOG(FA_LOG_INFO, "server", "event=listen bind=%s port=%u threads=%u limit=%u", bind,
	       (*out)->port, threads, limit);
out:
	free(s);
	return rc;
}

unsigned fa_server_port(const struct fa_server *s)
{
	return s->port;
}

void fa_server_load(struct fa_server *s, struct fa_server_load *out)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_LISTEN_FD);
	struct pollfd pfd = { .fd = di != NULL ? di->listen_fd : -1, .events = POLLIN };

	memset(out, 0, sizeof(*out));
	/* first the queue: a connection taken from it meanwhile is counted below */
	out->queued = pfd.fd >= 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
	pthread_mutex_lock(&s->lock);
	out->connections = s->n_conns;
	out->requests = s->n_requests;
	out->parked = fa_timer_count(s->waits);
	out->opened = s->next_conn_id;
	out->started = s->n_started;
	pthread_mutex_unlock(&s->lock);
}

void fa_server_stop(struct fa_server *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	/* every suspended connection must be resumed before the daemon stops */
	while (fa_timer_count(s->waits) > 0) {
		struct request *r = waiting(fa_timer_first(s->waits));

		unpark(s, r);
		MHD_resume_connection(r->mhd);
	}
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->timer_started)
		pthread_join(s->timer, NULL);
	MHD_stop_daemon(s->d);
	fa_timer_free(s->waits);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
