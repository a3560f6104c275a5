/* http.c -- one attempt on the wire with libcurl, and nothing more. */
#include "http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"

/* Longest wait for the TCP connection itself, ms: over loopback a connect
 * either works at once or is refused. */
#define CONNECT_TIMEOUT_MS 10000L

struct ref_http {
	CURL *curl;                     /* this attempt's own easy handle */
	struct curl_slist *headers;     /* request headers, the key included */
	const struct ref_http_req *req; /* what to send (borrowed) */
	char errbuf[CURL_ERROR_SIZE];   /* libcurl's detailed error text */
	char *retry_after;              /* Retry-After of the last response, owned */
	char *body;                     /* the last response's body so far, owned */
	size_t body_len;                /* bytes in body */
	size_t body_cap;                /* bytes allocated for body */
	int64_t seen_wall_us;           /* when that response's status line came */
	int64_t seen_mono_us;           /* the same moment, monotonic */
	long head_status;               /* the last status line's code, 0 = none yet */
	int64_t last_byte_mono_us;      /* monotonic: the attempt started or a byte came */
	bool stalled;                   /* a stream was silent for idle_s: aborted */
	struct ref_stream sse;          /* a stream's reader (req->stream), for the
	                                   last response with a 2xx status line */
	size_t n_rl;                    /* entries used in rl */
	/* that response's rate-limit fields */
	struct ref_http_hdr rl[REF_HTTP_RL_MAX];
};

enum fa_rc ref_http_global_init(struct fa_err *err)
{
	/* CURL_GLOBAL_DEFAULT sets up the TLS and socket libraries; it is
	 * not thread-safe itself, so main() calls it before any thread. */
	CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);

	if (cc != CURLE_OK) {
		fa_err_set(err, "curl_global_init: %s", curl_easy_strerror(cc));
		return FA_EIO;
	}
	return FA_OK;
}

void ref_http_global_cleanup(void)
{
	curl_global_cleanup();
}

static void free_rl(struct ref_http_hdr *rl, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free(rl[i].name);
		free(rl[i].value);
	}
	memset(rl, 0, *n * sizeof(*rl));
	*n = 0;
}

/* Is @name (@len bytes) one of the rate-limit fields an escalation
 * record shows (the retry-safety guide: the quota state the provider announced)? The
 * IETF draft's RateLimit and RateLimit-Policy, the older
 * RateLimit-Limit/-Remaining/-Reset, and every X-RateLimit-*. */
static bool ratelimit_field(const char *name, size_t len)
{
	static const char *const exact[] = { "ratelimit", "ratelimit-policy", "ratelimit-limit",
		                             "ratelimit-remaining", "ratelimit-reset" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (len == strlen(exact[i]) && strncasecmp(name, exact[i], len) == 0)
			return true;
	return len > 12 && strncasecmp(name, "x-ratelimit-", 12) == 0;
}

/* Keep header line @buf (@len bytes, "Name: value\r\n") when it is a
 * rate-limit field not seen yet in this response. */
static void keep_ratelimit(struct ref_http *h, const char *buf, size_t len)
{
	const char *colon = memchr(buf, ':', len);
	const char *v, *end = buf + len;
	size_t nlen;

	if (colon == NULL || h->n_rl == REF_HTTP_RL_MAX)
		return;
	nlen = (size_t)(colon - buf);
	if (nlen == 0 || !ratelimit_field(buf, nlen))
		return;
	for (size_t i = 0; i < h->n_rl; i++)
		if (strlen(h->rl[i].name) == nlen && strncasecmp(h->rl[i].name, buf, nlen) == 0)
			return;
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end - v > REF_HTTP_RL_VAL_MAX)
		end = v + REF_HTTP_RL_VAL_MAX;
	h->rl[h->n_rl].name = fa_xstrndup(buf, nlen);
	h->rl[h->n_rl].value = fa_xstrndup(v, (size_t)(end - v));
	h->n_rl++;
}

/*
 * Header callback: libcurl hands over one header line at a time, CRLF
 * included, for every response it reads (an interim 1xx too), so a status
 * line starts the record afresh and only the final response's Retry-After
 * and rate-limit fields survive.
 */
static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	static const char name[] = "retry-after:";
	const size_t nlen = sizeof(name) - 1;
	struct ref_http *h = arg;
	size_t len = size * n;
	const char *v, *end;

	h->last_byte_mono_us = fa_clock_mono_us();
	if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
		const char *sp = memchr(buf, ' ', len);

		h->head_status = sp != NULL && sp + 4 <= buf + len ? strtol(sp + 1, NULL, 10) : 0;
		ref_stream_reset(&h->sse);
		free(h->retry_after);
		h->retry_after = NULL;
		free_rl(h->rl, &h->n_rl);
		h->body_len = 0;
		h->seen_wall_us = fa_clock_wall_us();
		h->seen_mono_us = fa_clock_mono_us();
		return len;
	}
	keep_ratelimit(h, buf, len);
	if (len <= nlen || strncasecmp(buf, name, nlen) != 0 || h->retry_after != NULL)
		return len;
	v = buf + nlen;
	end = buf + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	h->retry_after = fa_xstrndup(v, (size_t)(end - v));
	return len;
}

/* Body callback: the body is read to the end (the provider sees a
 * complete delivery); the first REF_HTTP_BODY_MAX bytes are kept, since a
 * write's answer names the record it created and a reconciliation read's
 * answer is the record itself. */
static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct ref_http *h = arg;
	size_t len = size * n;
	size_t keep = REF_HTTP_BODY_MAX - h->body_len;

	h->last_byte_mono_us = fa_clock_mono_us();
	if (h->req->stream && h->head_status >= 200 && h->head_status <= 299)
		ref_stream_feed(&h->sse, buf, len);
	if (keep > len)
		keep = len;
	if (keep == 0)
		return len;
	if (h->body_len + keep + 1 > h->body_cap) {
		size_t cap = h->body_cap ? h->body_cap : 1024;

		while (cap < h->body_len + keep + 1)
			cap *= 2;
		h->body = fa_xrealloc(h->body, cap);
		h->body_cap = cap;
	}
	memcpy(h->body + h->body_len, buf, keep);
	h->body_len += keep;
	h->body[h->body_len] = '\0';
	return len;
}

/* A stream's idle timeout, µs. */
static int64_t idle_us(const struct ref_http *h)
{
	return (int64_t)(h->req->idle_s > 0 ? h->req->idle_s : REF_STREAM_IDLE_S) * 1000000;
}

/* Progress callback: libcurl calls it often during a transfer and at
 * least about once a second while idle; a non-zero return aborts the
 * transfer with CURLE_ABORTED_BY_CALLBACK. That is how a cancel stops an
 * attempt in flight. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	struct ref_http *h = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (h->req->cancel != NULL && atomic_load(h->req->cancel))
		return 1;
	/* The LLM rate-limit guide: a stream that goes silent is given up after its idle
	 * timeout, not after the attempt's whole time. libcurl's own
	 * low-speed limit judges an average over several seconds, so a
	 * burst of chunks followed by silence would be noticed late. */
	if (h->req->stream && fa_clock_mono_us() - h->last_byte_mono_us >= idle_us(h)) {
		h->stalled = true;
		return 1;
	}
	return 0;
}

/* Append @line to @h's header list; false when libcurl is out of memory. */
static bool add_header(struct ref_http *h, const char *line)
{
	struct curl_slist *l = curl_slist_append(h->headers, line);

	if (l == NULL)
		return false;
	h->headers = l;
	return true;
}

/* Does the task give a header called @name (case-insensitive)? */
static bool has_header(const struct ref_http_req *req, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < req->nheaders; i++)
		if (strncasecmp(req->headers[i], name, n) == 0 && req->headers[i][n] == ':')
			return true;
	return false;
}

/* Every curl_easy_setopt() returns a CURLcode: CURLE_UNKNOWN_OPTION or
 * CURLE_NOT_BUILT_IN when this libcurl lacks the option, CURLE_OUT_OF_MEMORY
 * when it cannot copy a string. Any of them means the attempt cannot be
 * made as meant, so it is not made at all. */
#define SETOPT(opt, val)                                                                           \
	do {                                                                                       \
		cc = curl_easy_setopt(h->curl, opt, val);                                          \
		if (cc != CURLE_OK) {                                                              \
			fa_err_set(err, "curl_easy_setopt(%s): %s", #opt, curl_easy_strerror(cc)); \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

enum fa_rc ref_http_new(const struct ref_http_req *req, struct ref_http **out, struct fa_err *err)
{
	enum fa_rc rc = FA_EIO;
	struct ref_http *h = fa_xcalloc(1, sizeof(*h));
	char *auth = NULL;
	bool is_post = strcmp(req->method, "POST") == 0;
	CURLcode cc;

	*out = NULL;
	h->req = req;
	h->curl = curl_easy_init();
	if (h->curl == NULL) {
		fa_err_set(err, "curl_easy_init: no handle (out of memory)");
		goto out;
	}

	for (size_t i = 0; i < req->nheaders; i++)
		if (!add_header(h, req->headers[i]))
			goto nomem;
	if (req->secret != NULL) {
		auth = fa_xasprintf("Authorization: Bearer %s", req->secret);
		if (!add_header(h, auth))
			goto nomem;
	}
	if (req->idempotency_key != NULL) {
		char *line = fa_xasprintf("Idempotency-Key: %s", req->idempotency_key);
		bool ok = add_header(h, line);

		free(line);
		if (!ok)
			goto nomem;
	}
	/* libcurl labels a POSTFIELDS body as a form; this client's bodies
	 * are JSON unless the task says otherwise. */
	if (req->body != NULL && !has_header(req, "Content-Type") &&
	    !add_header(h, "Content-Type: application/json"))
		goto nomem;
	/* No "Expect: 100-continue" round trip before a large body. */
	if (!add_header(h, "Expect:"))
		goto nomem;

	SETOPT(CURLOPT_URL, req->url);
	/* Only HTTP: a task's url with another scheme (file://, ftp://) is
	 * refused before it is announced (task.c), and libcurl would refuse
	 * it too. CURLOPT_PROTOCOLS_STR is libcurl 7.85's; the bitmask it
	 * replaced is deprecated there. */
#if LIBCURL_VERSION_NUM >= 0x075500
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SETOPT(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	SETOPT(CURLOPT_HTTPHEADER, h->headers);
	SETOPT(CURLOPT_USERAGENT, "fakeapi-reference/0.1.0");
	/* Threads: no signals for DNS timeouts. */
	SETOPT(CURLOPT_NOSIGNAL, 1L);
	/* A new connection, closed after the attempt: libcurl only ever
	 * resends on its own over a reused connection. */
	SETOPT(CURLOPT_FRESH_CONNECT, 1L);
	SETOPT(CURLOPT_FORBID_REUSE, 1L);
	/* A redirect would be a second request nobody reported. */
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_TIMEOUT_MS, req->timeout_ms);
	SETOPT(CURLOPT_CONNECTTIMEOUT_MS,
	       req->timeout_ms < CONNECT_TIMEOUT_MS ? req->timeout_ms : CONNECT_TIMEOUT_MS);
	SETOPT(CURLOPT_ERRORBUFFER, h->errbuf);
	SETOPT(CURLOPT_HEADERFUNCTION, on_header);
	SETOPT(CURLOPT_HEADERDATA, h);
	SETOPT(CURLOPT_WRITEFUNCTION, on_body);
	SETOPT(CURLOPT_WRITEDATA, h);
	SETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
	SETOPT(CURLOPT_XFERINFODATA, h);
	SETOPT(CURLOPT_NOPROGRESS, 0L);

	if (req->body != NULL || is_post) {
		/* POSTFIELDS does not copy: the body outlives the attempt. */
		SETOPT(CURLOPT_POSTFIELDSIZE_LARGE,
		       (curl_off_t)(req->body != NULL ? req->body_len : 0));
		SETOPT(CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "");
		if (!is_post)
			SETOPT(CURLOPT_CUSTOMREQUEST, req->method);
	} else if (strcmp(req->method, "GET") == 0) {
		SETOPT(CURLOPT_HTTPGET, 1L);
	} else if (strcmp(req->method, "HEAD") == 0) {
		SETOPT(CURLOPT_NOBODY, 1L);
	} else {
		SETOPT(CURLOPT_CUSTOMREQUEST, req->method);
	}

	*out = h;
	h = NULL;
	rc = FA_OK;
	goto out;
nomem:
	fa_err_set(err, "curl_slist_append: out of memory");
out:
	if (auth != NULL) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	ref_http_free(h);
	return rc;
}

/*
 * The CURLcodes a finished attempt can end with, and what each means for
 * the question the task must answer afterwards: did the provider get the
 * request? (The retry-safety guide: a dropped connection after the bytes were written
 * does not prove that nothing happened.)
 */
static void transport_error(struct ref_http *h, CURLcode cc, struct ref_http_res *res)
{
	long sent_bytes = 0;
	CURLcode gc;

	/* Our progress callback said stop: a cancel, or a stream silent
	 * before its status line for its whole idle timeout. */
	res->cancelled = cc == CURLE_ABORTED_BY_CALLBACK && !h->stalled;
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:  /* no address for the host name */
	case CURLE_COULDNT_RESOLVE_PROXY: /* no address for the proxy */
	case CURLE_COULDNT_CONNECT:       /* refused or unreachable */
	case CURLE_URL_MALFORMAT:         /* the task's URL is not a URL */
	case CURLE_UNSUPPORTED_PROTOCOL:  /* not http or https */
		/* Nothing left this machine: the provider never saw it. */
		res->maybe_sent = false;
		break;
	case CURLE_ABORTED_BY_CALLBACK: /* cancelled in flight */
	case CURLE_OPERATION_TIMEDOUT:  /* the attempt's time ran out */
	case CURLE_SEND_ERROR:          /* the connection broke while sending */
	case CURLE_RECV_ERROR:          /* ... or while reading (a reset) */
	case CURLE_GOT_NOTHING:         /* closed without a single byte back */
	case CURLE_PARTIAL_FILE:        /* the body was cut short */
	default:
		/* Ambiguous: once request bytes were written, the provider may
		 * have acted on them. CURLINFO_REQUEST_SIZE counts what went
		 * out; if even that fails, assume the worst. */
		gc = curl_easy_getinfo(h->curl, CURLINFO_REQUEST_SIZE, &sent_bytes);
		res->maybe_sent = gc != CURLE_OK || sent_bytes > 0;
		break;
	}
	/* The error buffer holds the detailed text ("Failed to connect to
	 * 127.0.0.1 port 1 ..."); the CURLcode's own text is the fallback. */
	if (h->stalled)
		snprintf(res->error, sizeof(res->error),
		         "no byte for %d s (the stream's idle timeout)",
		         (int)(idle_us(h) / 1000000));
	else
		snprintf(res->error, sizeof(res->error), "%s",
		         h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(cc));
}

/* The status of the response libcurl just read; 0 (with @res->error
 * set) when libcurl cannot say. */
static long response_code(struct ref_http *h, struct ref_http_res *res)
{
	long status = 0;
	CURLcode cc = curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);

	if (cc != CURLE_OK) {
		snprintf(res->error, sizeof(res->error),
		         "curl_easy_getinfo(CURLINFO_RESPONSE_CODE): %s", curl_easy_strerror(cc));
		res->maybe_sent = true;
		return 0;
	}
	return status;
}

/*
 * How a stream that got a 2xx status line ended (the LLM rate-limit guide), for the task:
 * [DONE] makes it whole whatever came after; an error frame is the
 * provider's word (the platform's rate-limit contract: its retryAfter is the pause, counted from
 * when the frame came); otherwise a clean end or a body cut short is a
 * cut, silence past the idle timeout (the progress callback aborts
 * the transfer) a stall, and anything else a transport error. Returns
 * false when the attempt is not such a stream.
 */
static bool settle_stream(struct ref_http *h, CURLcode cc, struct ref_http_res *res)
{
	struct ref_stream *sse = &h->sse;

	if (!h->req->stream || h->head_status < 200 || h->head_status > 299 ||
	    (cc == CURLE_ABORTED_BY_CALLBACK && !h->stalled))
		return false;
	res->stream_chunks = sse->chunks;
	if (sse->done && !sse->error_frame) {
		res->stream_end = REF_STREAM_DONE;
	} else if (sse->error_frame) {
		res->stream_end = REF_STREAM_ERROR_FRAME;
		res->stream_code = sse->error_code;
		sse->error_code = NULL;
		if (res->retry_after == NULL && sse->retry_after != NULL) {
			res->retry_after = sse->retry_after;
			sse->retry_after = NULL;
			res->seen_wall_us = sse->error_wall_us;
			res->seen_mono_us = sse->error_mono_us;
		}
	} else if (cc == CURLE_OK || cc == CURLE_PARTIAL_FILE) {
		res->stream_end = REF_STREAM_CUT;
	} else if (h->stalled) {
		res->stream_end = REF_STREAM_STALL;
	} else {
		res->stream_end = REF_STREAM_TRANSPORT;
	}
	if (cc == CURLE_OK && res->stream_end == REF_STREAM_CUT)
		snprintf(res->error, sizeof(res->error),
		         "the stream ended after %d chunks without [DONE]", sse->chunks);
	else if (res->stream_end == REF_STREAM_STALL)
		snprintf(res->error, sizeof(res->error),
		         "the stream was silent for %d s (its idle timeout) after %d chunks",
		         (int)(idle_us(h) / 1000000), sse->chunks);
	else if (cc != CURLE_OK && res->stream_end != REF_STREAM_DONE)
		snprintf(res->error, sizeof(res->error), "%s",
		         h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(cc));
	res->status = h->head_status;
	res->maybe_sent = true;
	return true;
}

void ref_http_perform(struct ref_http *h, struct ref_http_res *res)
{
	CURLcode cc;
	long status = 0;

	memset(res, 0, sizeof(*res));
	res->sent_wall_us = fa_clock_wall_us();
	h->last_byte_mono_us = fa_clock_mono_us();
	/* CURLE_OK: a whole response arrived, whatever its status. Anything
	 * else is a transport error, explained by transport_error(). */
	cc = curl_easy_perform(h->curl);
	if (cc == CURLE_OK)
		status = response_code(h, res);

	/* DEFECT hidden: a 503 without Retry-After is sent again at once,
	 * inside this one attempt, and the task never hears of the first
	 * one: two requests on the wire, one attempt reported. */
	if (defect_is("hidden") && cc == CURLE_OK && status == 503 && h->retry_after == NULL) {
		h->errbuf[0] = '\0';
		cc = curl_easy_perform(h->curl);
		status = cc == CURLE_OK ? response_code(h, res) : 0;
	}

	res->retry_after = h->retry_after;
	h->retry_after = NULL;
	res->seen_wall_us = h->seen_wall_us;
	res->seen_mono_us = h->seen_mono_us;
	memcpy(res->ratelimit, h->rl, sizeof(h->rl));
	res->n_ratelimit = h->n_rl;
	memset(h->rl, 0, sizeof(h->rl));
	h->n_rl = 0;
	if (settle_stream(h, cc, res)) {
		res->body = h->body;
		res->body_len = h->body_len;
		h->body = NULL;
		h->body_len = h->body_cap = 0;
		return;
	}
	if (cc != CURLE_OK) {
		/* A cut-short body is no answer: the task must not act on it. */
		transport_error(h, cc, res);
		return;
	}
	res->status = status;
	res->maybe_sent = true;
	if (h->body != NULL && h->body_len > 0) {
		res->body = h->body;
		res->body_len = h->body_len;
		h->body = NULL;
		h->body_len = h->body_cap = 0;
	}
}

void ref_http_free(struct ref_http *h)
{
	if (h == NULL)
		return;
	/* The Authorization line holds the key: wipe libcurl's copy too. */
	for (struct curl_slist *l = h->headers; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(h->headers);
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	free(h->retry_after);
	free_rl(h->rl, &h->n_rl);
	ref_stream_release(&h->sse);
	free(h->body);
	free(h);
}

void ref_http_res_release(struct ref_http_res *res)
{
	free(res->retry_after);
	free_rl(res->ratelimit, &res->n_ratelimit);
	free(res->body);
	free(res->stream_code);
	memset(res, 0, sizeof(*res));
}
