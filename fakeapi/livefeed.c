/* livefeed.c -- live lines on a stream that no reader, however slow, can stall. */
#include "livefeed.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"

/* Lines handed to one writev(). */
#define BATCH 64

/* One queued line, its newline included. */
struct node {
	struct node *next; /* the next line; NULL at the tail */
	size_t len;        /* bytes in s */
	char s[];          /* the line and '\n' */
};

struct fa_livefeed {
	pthread_mutex_t mu;       /* guards everything below but th, fd and the bounds */
	pthread_cond_t wake;      /* the writer: a line queued, or closing */
	pthread_cond_t ended;     /* the closer: the writer is done */
	pthread_t th;             /* the writer */
	int fd;                   /* written to; borrowed */
	const char *prog;         /* for messages; borrowed */
	const char *complete;     /* what still holds every line; borrowed */
	size_t max_lines;         /* queue bound, lines */
	size_t max_bytes;         /* queue bound, bytes */
	struct node *head, *tail; /* the queue; head is being written */
	size_t off;               /* bytes of head already written */
	size_t n_lines, n_bytes;  /* in the queue, head included until written whole */
	uint64_t dropped;         /* lines that found the queue full */
	uint64_t lost;            /* lines lost to a write error or left at close */
	bool warned;              /* the slow-reader warning was printed */
	bool failed;              /* a write failed: write no more */
	bool closing;             /* fa_livefeed_close() began: drain, then end */
	bool done;                /* the writer ended */
	bool closed;              /* fa_livefeed_close() finished */
	bool abandoned;           /* closed while the writer still waited on the
	                             reader: it ends when its write returns */
	int refs;                 /* holders of this struct: the caller until
	                             fa_livefeed_free, the writer while it runs */
};

static size_t default_lines(void)
{
	const char *s = getenv(FA_LIVEFEED_ENV_LINES);
	char *end;
	unsigned long long n;

	if (s == NULL || *s < '0' || *s > '9')
		return FA_LIVEFEED_LINES;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > FA_LIVEFEED_LINES)
		return FA_LIVEFEED_LINES;
	return (size_t)n;
}

/* writev() the batch; -1 with errno on a real error. */
static ssize_t write_batch(int fd, const struct iovec *iov, int n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t w;

	for (;;) {
		w = writev(fd, iov, n);
		if (w >= 0 || errno == EINTR)
			return w >= 0 ? w : 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		/* someone made the stream non-blocking: wait as writev would */
		poll(&pfd, 1, -1);
	}
}

/* Free the whole head line. Lock held. */
static void pop(struct fa_livefeed *f)
{
	struct node *nd = f->head;

	f->head = nd->next;
	if (f->head == NULL)
		f->tail = NULL;
	f->n_lines--;
	f->n_bytes -= nd->len;
	f->off = 0;
	free(nd);
}

/* Forget @w bytes written from the head on. Lock held. */
static void consume(struct fa_livefeed *f, size_t w)
{
	while (w > 0 && f->head != NULL) {
		size_t left = f->head->len - f->off;

		if (w < left) {
			f->off += w;
			return;
		}
		w -= left;
		pop(f);
	}
}

/* Free the queue and @f. */
static void destroy(struct fa_livefeed *f)
{
	while (f->head != NULL)
		pop(f);
	pthread_cond_destroy(&f->ended);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Let go of @f: the last holder frees it. Lock held; released here. */
static void unref(struct fa_livefeed *f)
{
	bool last = --f->refs == 0;

	pthread_mutex_unlock(&f->mu);
	if (last)
		destroy(f);
}

static void *writer(void *arg)
{
	struct fa_livefeed *f = arg;
	struct iovec iov[BATCH];
	ssize_t w;
	int n;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (f->head == NULL && !f->closing)
			pthread_cond_wait(&f->wake, &f->mu);
		if (f->head == NULL || f->abandoned)
			break;
		if (f->failed) {
			while (f->head != NULL) {
				f->lost++;
				pop(f);
			}
			continue;
		}
		/* only this thread takes lines off, so the batch stays put
		 * while the lock is let go; put() only links at the tail */
		n = 0;
		for (struct node *nd = f->head; nd != NULL && n < BATCH; nd = nd->next, n++) {
			size_t skip = n == 0 ? f->off : 0;

			iov[n].iov_base = nd->s + skip;
			iov[n].iov_len = nd->len - skip;
		}
		pthread_mutex_unlock(&f->mu);
		w = write_batch(f->fd, iov, n);
		if (w < 0)
			FA_LOG(FA_LOG_ERROR, "livefeed",
			       "event=write_failed err=\"%s\" "
			       "note=\"no more live lines\"",
			       strerror(errno));
		pthread_mutex_lock(&f->mu);
		if (w < 0)
			f->failed = true;
		else
			consume(f, (size_t)w);
	}
	f->done = true;
	pthread_cond_broadcast(&f->ended);
	unref(f);
	return NULL;
}

struct fa_livefeed *fa_livefeed_new(int fd, size_t max_lines, size_t max_bytes, const char *prog,
                                    const char *complete)
{
	struct fa_livefeed *f = fa_xcalloc(1, sizeof(*f));
	pthread_condattr_t ca;
	sigset_t all, old;
	int e;

	f->fd = fd;
	f->prog = prog;
	f->complete = complete;
	f->max_lines = max_lines != 0 ? max_lines : default_lines();
	f->max_bytes = max_bytes != 0 ? max_bytes : FA_LIVEFEED_BYTES;
	f->refs = 2; /* the caller's and the writer's */
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->wake, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* close's deadline */
	pthread_cond_init(&f->ended, &ca);
	pthread_condattr_destroy(&ca);
	/* the writer inherits a mask with every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&f->th, NULL, writer, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		fprintf(stderr, "%s: cannot start the live journal's writer: %s\n", prog,
		        strerror(e));
		abort();
	}
	return f;
}

void fa_livefeed_put(struct fa_livefeed *f, const char *line, size_t len)
{
	struct node *nd = fa_xmalloc(sizeof(*nd) + len + 1);
	uint64_t dropped = 0;
	bool warn = false;

	nd->next = NULL;
	nd->len = len + 1;
	memcpy(nd->s, line, len);
	nd->s[len] = '\n';
	pthread_mutex_lock(&f->mu);
	if (f->closing) {
		/* too late: the caller closes after its last line */
	} else if (f->failed) {
		f->lost++;
	} else if (f->n_lines + 1 > f->max_lines || f->n_bytes + nd->len > f->max_bytes) {
		dropped = ++f->dropped;
		warn = !f->warned;
		f->warned = true;
	} else {
		if (f->tail != NULL)
			f->tail->next = nd;
		else
			f->head = nd;
		f->tail = nd;
		f->n_lines++;
		f->n_bytes += nd->len;
		nd = NULL; /* the queue owns it now */
		pthread_cond_signal(&f->wake);
	}
	pthread_mutex_unlock(&f->mu);
	free(nd);
	if (warn)
		fprintf(stderr,
		        "%s: live journal: the reader of stdout is too slow; "
		        "%llu line%s not shown; %s\n",
		        f->prog, (unsigned long long)dropped, dropped == 1 ? "" : "s", f->complete);
}

uint64_t fa_livefeed_not_shown(struct fa_livefeed *f)
{
	uint64_t n;

	pthread_mutex_lock(&f->mu);
	n = f->dropped + f->lost;
	pthread_mutex_unlock(&f->mu);
	return n;
}

uint64_t fa_livefeed_close(struct fa_livefeed *f, unsigned drain_ms)
{
	struct timespec dl;
	bool stuck;
	uint64_t n;

	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mu);
	if (f->closed) {
		n = f->dropped + f->lost;
		pthread_mutex_unlock(&f->mu);
		return n;
	}
	f->closing = true;
	pthread_cond_signal(&f->wake);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += drain_ms / 1000;
	dl.tv_nsec += (long)(drain_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	while (!f->done && pthread_cond_timedwait(&f->ended, &f->mu, &dl) != ETIMEDOUT)
		;
	stuck = !f->done;
	if (stuck) {
		/* A reader that takes nothing keeps writev() waiting, maybe
		 * for good: leave the writer there, detached, to end (and
		 * free what it holds) when its write returns, or with the
		 * process. Cancelling it mid-write would be the other way,
		 * but the sanitizers do not survive a cancelled thread. */
		f->abandoned = true;
		f->lost += f->n_lines;
		pthread_detach(f->th);
	}
	f->closed = true;
	n = f->dropped + f->lost;
	pthread_mutex_unlock(&f->mu);
	if (!stuck)
		pthread_join(f->th, NULL);
	if (n > 0)
		fprintf(stderr,
		        "%s: live journal: %llu line%s not shown (the reader of "
		        "stdout was too slow or gone); %s\n",
		        f->prog, (unsigned long long)n, n == 1 ? "" : "s", f->complete);
	return n;
}

void fa_livefeed_free(struct fa_livefeed *f)
{
	if (f == NULL)
		return;
	fa_livefeed_close(f, FA_LIVEFEED_DRAIN_MS);
	pthread_mutex_lock(&f->mu);
	unref(f);
}

bool fa_livefeed_std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* the lower ones are open, so this lands on fd */
		n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n != fd) {
			if (n >= 0)
				close(n);
			return false;
		}
	}
	return true;
}
