/*
 * bench-delayload -- many keep-alive connections, one request on each, all
 * waiting at once (docs/bench.md, section 5).
 *
 * usage: bench-delayload --port P --connections N --request FILE
 *                        [--connect-batch B] [--spread-ms W] [--timeout-s T]
 *
 * Opens N TCP connections to 127.0.0.1:P (at most B connects in flight at
 * a time, default 256, so that the listen queue never overflows into SYN
 * retries), and only once all of them are open writes the bytes of FILE,
 * one HTTP/1.1 request, on each: the i-th i x W / N ms after the first
 * (W default 0: back to back). It reads every answer (Content-Length or
 * chunked) on one epoll loop, leaving each connection open (keep-alive)
 * until the last answer is in or T seconds (default 60) have passed since
 * the last write was due.
 * Every socket is closed with SO_LINGER 0 at the end, so that no loopback
 * port stays in TIME_WAIT for the next run. Output, one JSON object on
 * stdout:
 *   "connected", "completed", "failed", "pending": connection counts
 *   (completed: a whole answer was read; failed: a connect or a write
 *   failed, or the answer was cut);
 *   "status": {"200": n, ...}, per status code of the completed answers;
 *   "write_ms": ms from the first write to the last;
 *   "latency_us": per completed answer, µs from its request's write to the
 *   answer's last byte.
 * Exit status: 0 done (whatever the counts), 1 a system call failed
 * before the run, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 100000
#define HEAD_MAX  2048

enum phase {
	WAITING = 0, /* not connected yet */
	CONNECTING,  /* connect() in flight */
	OPEN,        /* connected, nothing written */
	WRITING,     /* the request is partly written */
	READING,     /* the request went out, the answer is being read */
	DONE,        /* the whole answer was read */
	FAILED,      /* a connect, a write or the answer failed */
};

/* How far into a chunked body. */
enum chunk {
	CH_SIZE = 0, /* reading a chunk-size line */
	CH_DATA,     /* inside a chunk's data */
	CH_DATA_END, /* the CRLF after a chunk's data */
	CH_TRAILER,  /* after the last chunk: trailer lines up to an empty one */
};

struct conn {
	int fd;
	enum phase phase;
	size_t sent;          /* request bytes written */
	char head[HEAD_MAX];  /* status line and headers, up to the empty line */
	size_t head_len;      /* bytes in head */
	bool in_body;         /* the head is complete */
	int status;           /* the answer's status code */
	bool chunked;         /* Transfer-Encoding: chunked */
	int64_t left;         /* body bytes left (Content-Length), or of the chunk */
	enum chunk ch;        /* where in a chunked body */
	char line[64];        /* the chunk-size or trailer line being read */
	size_t line_len;      /* bytes in line */
	int64_t t_written_us; /* when the request's last byte was written */
	int64_t latency_us;   /* from t_written_us to the answer's last byte */
};

static struct conn *conns;
static int n_conns;
static char *request;
static size_t request_len;
static struct sockaddr_in peer;
static int epfd;
static int active; /* requests written (or being written) whose answer is not in */

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void fail(struct conn *c)
{
	if (c->phase == WRITING || c->phase == READING)
		active--;
	c->phase = FAILED;
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

static void done(struct conn *c)
{
	active--;
	c->phase = DONE;
	c->latency_us = now_us() - c->t_written_us;
	/* keep the connection open (keep-alive) but stop watching it */
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

static int watch(struct conn *c, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(epfd, op, c->fd, &ev);
}

/* The head is complete: read the status and how the body is framed. */
static bool parse_head(struct conn *c)
{
	char *p, *end = c->head + c->head_len;

	c->head[c->head_len < HEAD_MAX ? c->head_len : HEAD_MAX - 1] = '\0';
	if (sscanf(c->head, "HTTP/1.%*d %d", &c->status) != 1)
		return false;
	c->left = 0;
	for (p = strstr(c->head, "\r\n"); p != NULL && p + 2 < end; p = strstr(p + 2, "\r\n")) {
		const char *h = p + 2;

		if (strncasecmp(h, "Content-Length:", 15) == 0)
			c->left = strtoll(h + 15, NULL, 10);
		else if (strncasecmp(h, "Transfer-Encoding:", 18) == 0 &&
		         strstr(h, "chunked") != NULL)
			c->chunked = true;
	}
	return true;
}

/* A chunk-size line or a trailer line is complete in c->line. */
static void chunk_line(struct conn *c)
{
	c->line[c->line_len] = '\0';
	if (c->ch == CH_SIZE) {
		c->left = strtoll(c->line, NULL, 16);
		c->ch = c->left > 0 ? CH_DATA : CH_TRAILER;
	} else if (c->line_len == 0) {
		done(c); /* the empty line after the last chunk */
	}
	c->line_len = 0;
}

/* Feed @n body bytes of a chunked answer. */
static void chunked_body(struct conn *c, const char *b, size_t n)
{
	for (size_t i = 0; i < n && c->phase == READING; i++) {
		switch (c->ch) {
		case CH_DATA: {
			size_t take = n - i < (size_t)c->left ? n - i : (size_t)c->left;

			c->left -= (int64_t)take;
			i += take - 1;
			if (c->left == 0)
				c->ch = CH_DATA_END;
			break;
		}
		case CH_DATA_END:
			if (b[i] == '\n')
				c->ch = CH_SIZE;
			break;
		case CH_SIZE:
		case CH_TRAILER:
			if (b[i] == '\n') {
				chunk_line(c);
			} else if (b[i] != '\r') {
				if (c->line_len + 1 >= sizeof(c->line)) {
					fail(c);
					return;
				}
				c->line[c->line_len++] = b[i];
			}
			break;
		}
	}
}

/* Feed @n bytes read from the connection. */
static void feed(struct conn *c, const char *b, size_t n)
{
	size_t i = 0;

	while (!c->in_body && i < n) {
		if (c->head_len + 1 >= HEAD_MAX) {
			fail(c);
			return;
		}
		c->head[c->head_len++] = b[i++];
		if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
			c->in_body = true;
			if (!parse_head(c)) {
				fail(c);
				return;
			}
			if (!c->chunked && c->left == 0) {
				done(c);
				return;
			}
		}
	}
	if (!c->in_body || i == n)
		return;
	if (c->chunked) {
		chunked_body(c, b + i, n - i);
		return;
	}
	c->left -= (int64_t)(n - i);
	if (c->left <= 0)
		done(c);
}

static void on_readable(struct conn *c)
{
	char buf[65536];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n > 0) {
			feed(c, buf, (size_t)n);
			if (c->phase != READING)
				return;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		fail(c); /* EOF or an error before the answer's end */
		return;
	}
}

static void write_request(struct conn *c)
{
	if (c->phase == OPEN) {
		active++;
		c->phase = WRITING;
	}
	while (c->sent < request_len) {
		ssize_t n = send(c->fd, request + c->sent, request_len - c->sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			watch(c, EPOLL_CTL_MOD, EPOLLIN | EPOLLOUT);
			return;
		}
		if (n < 0) {
			fail(c);
			return;
		}
		c->sent += (size_t)n;
	}
	c->t_written_us = now_us();
	c->phase = READING;
	watch(c, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP);
}

static void start_connect(struct conn *c)
{
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		c->phase = FAILED;
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->phase = CONNECTING;
	if (connect(c->fd, (struct sockaddr *)&peer, sizeof(peer)) == 0) {
		c->phase = OPEN;
		watch(c, EPOLL_CTL_ADD, 0);
		return;
	}
	if (errno != EINPROGRESS) {
		c->phase = FAILED;
		return;
	}
	watch(c, EPOLL_CTL_ADD, EPOLLOUT);
}

static void on_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
		fail(c);
		return;
	}
	c->phase = OPEN;
	watch(c, EPOLL_CTL_MOD, 0);
}

/* Connect all, at most @batch in flight; returns how many are open. */
static int connect_all(int batch, int64_t deadline)
{
	struct epoll_event ev[256];
	int next = 0, in_flight = 0, open = 0, finished = 0;

	while (finished < n_conns && now_us() < deadline) {
		while (next < n_conns && in_flight < batch) {
			start_connect(&conns[next]);
			if (conns[next].phase == CONNECTING) {
				in_flight++;
			} else {
				finished++;
				open += conns[next].phase == OPEN;
			}
			next++;
		}
		int n = epoll_wait(epfd, ev, 256, 100);

		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;

			if (c->phase != CONNECTING)
				continue;
			on_connected(c);
			in_flight--;
			finished++;
			open += c->phase == OPEN;
		}
	}
	return open;
}

static void print_result(int connected, int64_t write_us)
{
	int completed = 0, failed = 0, pending = 0;
	int codes[1000] = { 0 };
	bool first = true;

	for (int i = 0; i < n_conns; i++) {
		struct conn *c = &conns[i];

		if (c->phase == DONE) {
			completed++;
			if (c->status >= 0 && c->status < 1000)
				codes[c->status]++;
		} else if (c->phase == FAILED) {
			failed++;
		} else {
			pending++;
		}
	}
	printf("{\"connections\": %d, \"connected\": %d, \"completed\": %d, \"failed\": %d, "
	       "\"pending\": %d, \"write_ms\": %.3f, \"status\": {",
	       n_conns, connected, completed, failed, pending, (double)write_us / 1000.0);
	for (int s = 0; s < 1000; s++) {
		if (codes[s] == 0)
			continue;
		printf("%s\"%d\": %d", first ? "" : ", ", s, codes[s]);
		first = false;
	}
	printf("}, \"latency_us\": [");
	first = true;
	for (int i = 0; i < n_conns; i++) {
		if (conns[i].phase != DONE)
			continue;
		printf("%s%lld", first ? "" : ",", (long long)conns[i].latency_us);
		first = false;
	}
	printf("]}\n");
}

static int read_request(const char *path)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		if (f != NULL)
			fclose(f);
		return -1;
	}
	request = malloc((size_t)len);
	request_len = (size_t)len;
	if (request == NULL || fread(request, 1, request_len, f) != request_len) {
		perror(path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: bench-delayload --port P --connections 1..%d --request FILE "
	        "[--connect-batch 1..4096] [--spread-ms 0..600000] [--timeout-s 1..600]\n",
	        MAX_CONNS);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'c' },
		{ "request", required_argument, NULL, 'r' },
		{ "connect-batch", required_argument, NULL, 'b' },
		{ "spread-ms", required_argument, NULL, 's' },
		{ "timeout-s", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *request_path = NULL;
	int port = 0, batch = 256, timeout_s = 60, spread_ms = 0, opt, connected;
	struct rlimit rl;
	struct epoll_event ev[1024];
	int64_t deadline, t_first, t_last;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': port = (int)strtol(optarg, NULL, 10); break;
		case 'c': n_conns = (int)strtol(optarg, NULL, 10); break;
		case 'r': request_path = optarg; break;
		case 'b': batch = (int)strtol(optarg, NULL, 10); break;
		case 's': spread_ms = (int)strtol(optarg, NULL, 10); break;
		case 't': timeout_s = (int)strtol(optarg, NULL, 10); break;
		case 'h': usage(); return 0;
		default: return usage();
		}
	}
	if (optind < argc || port < 1 || port > 65535 || n_conns < 1 || n_conns > MAX_CONNS ||
	    request_path == NULL || batch < 1 || batch > 4096 || timeout_s < 1 || timeout_s > 600 ||
	    spread_ms < 0 || spread_ms > 600000)
		return usage();
	if (read_request(request_path) != 0)
		return 1;
	/* one descriptor per connection, and a few more */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < (rlim_t)n_conns + 16) {
		fprintf(stderr,
		        "bench-delayload: RLIMIT_NOFILE %llu is too low for %d connections\n",
		        (unsigned long long)rl.rlim_cur, n_conns);
		return 1;
	}
	conns = calloc((size_t)n_conns, sizeof(*conns));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (conns == NULL || epfd < 0) {
		perror("bench-delayload");
		return 1;
	}
	peer.sin_family = AF_INET;
	peer.sin_port = htons((uint16_t)port);
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	deadline = now_us() + (int64_t)timeout_s * 1000000;
	connected = connect_all(batch, deadline);

	/* every connection is open: now one request on each, request i at
	 * i x spread / N after the first */
	t_first = now_us();
	t_last = t_first;
	deadline = t_first + (int64_t)spread_ms * 1000 + (int64_t)timeout_s * 1000000;
	for (int next = 0;;) {
		int64_t now = now_us(), wait_ms = 100;

		while (next < n_conns &&
		       t_first + (int64_t)next * spread_ms * 1000 / n_conns <= now) {
			if (conns[next].phase == OPEN)
				write_request(&conns[next]);
			next++;
			t_last = now_us();
		}
		if ((next == n_conns && active == 0) || now >= deadline)
			break;
		if (next < n_conns) {
			int64_t at = t_first + (int64_t)next * spread_ms * 1000 / n_conns;

			wait_ms = (at - now + 999) / 1000;
		}
		int n = epoll_wait(epfd, ev, 1024, (int)wait_ms);

		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;

			if (c->phase == WRITING && (ev[i].events & EPOLLOUT))
				write_request(c);
			if (c->phase == READING &&
			    (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
				on_readable(c);
		}
	}
	print_result(connected, t_last - t_first);
	fflush(stdout);
	for (int i = 0; i < n_conns; i++) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		if (conns[i].phase == WAITING || conns[i].fd < 0)
			continue;
		setsockopt(conns[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(conns[i].fd);
	}
	close(epfd);
	free(conns);
	free(request);
	return 0;
}
