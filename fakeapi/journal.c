/* journal.c -- every inbound attempt, appended once, hash-chained. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "digest.h"
#include "log.h"

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
#define MAX_SEQ   9007199254740992.0 /* 2^53: what a JSON number holds exactly */

/*
 * Memory per attempt is one uint64_t (its offset in the stream of lines);
 * the lines themselves live in a file and are read back on demand. Lines
 * are numbered by "virtual" offsets: the bytes of every line before them,
 * newlines included, as if every write had succeeded. A run is a stretch
 * of lines stored contiguously: in the file from @foff on (>= 0), or one
 * line kept in memory, mem[-1 - foff], when it could not be written.
 */
struct run {
	uint64_t vstart; /* virtual offset of the run's first line */
	int64_t foff;    /* file offset of that line in fd, or -1 - index into mem */
	int fd;          /* the file it is in (the journal's file or a spill file) */
};

struct fa_journal {
	pthread_mutex_t mu;  /* guards everything below */
	int fd;              /* where lines are stored and read back; -1 = none */
	int out_fd;          /* the --journal file when it cannot be read back
	                        (not a regular file): written too; else -1 */
	int file_fd;         /* the --journal file when it is read back too; else -1 */
	bool file_failed;    /* a write to the --journal file failed: nothing more
	                        goes there, so it stays a prefix that verifies */
	int file_errno;      /* why it failed */
	uint64_t file_lines; /* entries the file holds (its last seq) */
	char *path;          /* the journal's file for log messages; NULL = none */
	uint64_t last_seq;   /* highest seq assigned; survives reset */
	uint64_t first_kept; /* seq of the first entry kept; reset moves it on */
	uint64_t bytes;      /* virtual offset of the next line */
	uint64_t stored;     /* lines below this virtual offset are stored */
	uint64_t foff;       /* file offset of the next batch in fd */
	char *pend;          /* lines appended but not yet written, from stored */
	size_t pend_n, pend_cap;
	char *spare; /* the other batch buffer, written outside the lock */
	size_t spare_cap;
	bool writing;             /* an appender is writing batches (always, while
	                             pend_n > 0) */
	pthread_cond_t stored_cv; /* stored moved on */
	char head[FA_SHA256_HEX]; /* hash of the last line; survives reset */
	uint64_t *voff;           /* voff[seq - 1]: virtual offset of each line */
	size_t cap;               /* entries voff can hold */
	struct run *runs;         /* in vstart order */
	size_t n_runs, cap_runs;
	char **mem; /* lines that could not be stored in fd, owned */
	size_t n_mem, cap_mem;
	fa_journal_sink_fn sink; /* each entry as appended; NULL = none */
	void *sink_ctx;          /* borrowed, for sink */
};

/* An unnamed file in $TMPDIR (or /tmp) that vanishes with the process. */
static int spill_file(void)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	int fd;

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (snprintf(tmpl, sizeof(tmpl), "%s/fakeapi-journal-XXXXXX", dir) >= (int)sizeof(tmpl))
		return -1;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

/* Open @path for the journal: read back from it when it is a regular
 * file we may read, else written only and read back from a spill file. */
static enum fa_rc open_file(struct fa_journal *j, const char *path, struct fa_err *err)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		j->fd = j->file_fd = fd;
		return FA_OK;
	}
	if (fd < 0) {
		fa_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		return FA_EIO;
	}
	j->out_fd = fd;
	j->fd = spill_file();
	return FA_OK;
}

enum fa_rc fa_journal_new(const char *path, struct fa_journal **out, struct fa_err *err)
{
	struct fa_journal *j = fa_xcalloc(1, sizeof(*j));
	enum fa_rc rc = FA_OK;

	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->stored_cv, NULL);
	memcpy(j->head, ZERO_HASH, sizeof(j->head));
	j->fd = j->out_fd = j->file_fd = -1;
	j->first_kept = 1;
	if (path != NULL)
		rc = open_file(j, path, err);
	else
		j->fd = spill_file(); /* -1: every line stays in memory */
	if (rc != FA_OK) {
		fa_journal_free(j);
		j = NULL;
	} else {
		j->path = fa_xstrdup(path);
	}
	*out = j;
	return rc;
}

void fa_journal_free(struct fa_journal *j)
{
	if (j == NULL)
		return;
	if (j->out_fd >= 0)
		close(j->out_fd);
	if (j->file_fd >= 0 && j->file_fd != j->fd)
		close(j->file_fd); /* the spill took over after a failed write */
	if (j->fd >= 0 && close(j->fd) != 0)
		FA_LOG(FA_LOG_ERROR, "journal", "event=close_failed path=%s err=\"%s\"",
		       j->path != NULL ? j->path : "(spill)", strerror(errno));
	for (size_t i = 0; i < j->n_mem; i++)
		free(j->mem[i]);
	free(j->mem);
	free(j->runs);
	free(j->voff);
	free(j->pend);
	free(j->spare);
	free(j->path);
	pthread_cond_destroy(&j->stored_cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

/* Write all @len bytes at @off (or at the end, @off < 0); false on error. */
static bool write_all(int fd, const char *p, size_t len, int64_t off)
{
	while (len > 0) {
		ssize_t w = off >= 0 ? pwrite(fd, p, len, off) : write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return false;
		}
		p += w;
		len -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return true;
}

static void add_run(struct fa_journal *j, uint64_t vstart, int64_t foff, int fd)
{
	if (j->n_runs == j->cap_runs) {
		j->cap_runs = j->cap_runs ? 2 * j->cap_runs : 4;
		j->runs = fa_xrealloc(j->runs, j->cap_runs * sizeof(*j->runs));
	}
	j->runs[j->n_runs++] = (struct run){ vstart, foff, fd };
}

static size_t count_lines(const char *p, size_t len)
{
	size_t n = 0;

	for (const char *e = p + len; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
		n++;
	return n;
}

/*
 * The first failed write to the --journal file: nothing more goes there,
 * a partial batch is cut off again so the file ends with a whole line
 * and verifies, and the lines go on in a spill file (opened here; -1 if
 * none can be). Lock not held (only the writer calls it).
 */
static void file_broke(struct fa_journal *j, int err)
{
	if (j->out_fd >= 0) {
		close(j->out_fd);
		j->out_fd = -1;
	} else if (j->file_fd >= 0) {
		if (ftruncate(j->file_fd, (off_t)j->foff) != 0)
			FA_LOG(FA_LOG_ERROR, "journal", "event=truncate_failed path=%s err=\"%s\"",
			       j->path, strerror(errno));
		j->fd = spill_file(); /* file_fd stays open for the lines it holds */
		j->foff = 0;
	}
	FA_LOG(FA_LOG_ERROR, "journal",
	       "event=file_failed path=%s err=\"%s\" note=\"the file ends at seq %llu; "
	       "new attempts are refused with 503\"",
	       j->path, strerror(err), (unsigned long long)j->file_lines);
}

/*
 * Store a batch of @len bytes of whole lines at virtual offset @v, with
 * the lock released: in fd when it can, else in memory. Returns with the
 * lock held and the batch's run recorded. Only the one writer calls it
 * (it alone changes fd, out_fd and foff, so it reads them unlocked).
 */
static void store_batch(struct fa_journal *j, const char *batch, size_t len, uint64_t v)
{
	size_t lines = count_lines(batch, len);
	bool stored = false, broke = false;
	struct run *last;
	int err = 0;

	if (j->out_fd >= 0 && !write_all(j->out_fd, batch, len, -1)) {
		err = errno;
		broke = true;
	}
	if (j->fd >= 0) {
		stored = write_all(j->fd, batch, len, (int64_t)j->foff);
		if (!stored && !broke) {
			err = errno;
			broke = j->fd == j->file_fd;
		}
	}
	pthread_mutex_lock(&j->mu);
	if (broke) {
		j->file_failed = true;
		j->file_errno = err;
	}
	if (!stored && j->fd >= 0 && !broke)
		FA_LOG(FA_LOG_ERROR, "journal",
		       "event=write_failed path=(spill) bytes=%zu err=\"%s\" kept=memory", len,
		       strerror(err));
	if (!j->file_failed && j->path != NULL)
		j->file_lines += lines;
	pthread_mutex_unlock(&j->mu);
	if (broke) {
		file_broke(j, err);
		if (!stored && j->fd >= 0)
			stored = write_all(j->fd, batch, len, (int64_t)j->foff);
	}
	pthread_mutex_lock(&j->mu);
	last = j->n_runs > 0 ? &j->runs[j->n_runs - 1] : NULL;
	if (stored) {
		if (last == NULL || last->foff < 0 || last->fd != j->fd ||
		    (uint64_t)last->foff + (v - last->vstart) != j->foff)
			add_run(j, v, (int64_t)j->foff, j->fd);
		j->foff += len;
		return;
	}
	/* a partial batch in a spill file is overwritten by the next one: foff stays */
	if (j->n_mem == j->cap_mem) {
		j->cap_mem = j->cap_mem ? 2 * j->cap_mem : 16;
		j->mem = fa_xrealloc(j->mem, j->cap_mem * sizeof(*j->mem));
	}
	j->mem[j->n_mem] = fa_xstrndup(batch, len);
	add_run(j, v, -1 - (int64_t)j->n_mem, -1);
	j->n_mem++;
}

/*
 * Group commit: the appender that finds no writer writes every batch
 * pending, one write(2) each, while the others only add their lines;
 * a batch holds whatever arrived during the write before it. Caller
 * holds the lock; it is held again on return.
 */
static void write_pending(struct fa_journal *j)
{
	if (j->writing)
		return;
	j->writing = true;
	while (j->pend_n > 0) {
		char *batch = j->pend;
		size_t len = j->pend_n, cap = j->pend_cap;
		uint64_t v = j->stored;

		j->pend = j->spare;
		j->pend_cap = j->spare_cap;
		j->pend_n = 0;
		j->spare = NULL; /* ours again after the write */
		pthread_mutex_unlock(&j->mu);
		store_batch(j, batch, len, v);
		j->spare = batch;
		j->spare_cap = cap;
		j->stored = v + len;
		pthread_cond_broadcast(&j->stored_cv);
	}
	j->writing = false;
}

/* Wait until every line below virtual offset @v is stored. Caller holds
 * the lock. A writer is at work whenever lines are pending. */
static void wait_stored(struct fa_journal *j, uint64_t v)
{
	while (j->stored < v)
		pthread_cond_wait(&j->stored_cv, &j->mu);
}

/* Digits of @v into @out (at least 21 bytes), no NUL; returns the count. */
static size_t put_u64(char *out, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

uint64_t fa_journal_append(struct fa_journal *j, struct fa_attempt *a)
{
	/* Render outside the lock; only seq and prev depend on the order. */
	static const char prev_key[] = ",\"prev\":\"";
	size_t ulen, len;
	char *unseq = fa_attempt_render_unseq(a, &ulen);
	struct fa_attempt kept = *a;
	uint64_t seq;
	char *line;

	memset(a, 0, sizeof(*a)); /* the journal owns it now */
	pthread_mutex_lock(&j->mu);
	seq = kept.seq = ++j->last_seq;
	/* {"seq":N, + members + ,"prev":"HASH"} + newline, onto the batch */
	if (j->pend_n + ulen + 128 > j->pend_cap) {
		j->pend_cap = 2 * (j->pend_n + ulen + 128);
		j->pend = fa_xrealloc(j->pend, j->pend_cap);
	}
	line = j->pend + j->pend_n;
	memcpy(line, "{\"seq\":", 7);
	len = 7 + put_u64(line + 7, seq);
	if (ulen > 2) /* members after seq */
		line[len++] = ',';
	memcpy(line + len, unseq + 1, ulen - 2);
	len += ulen - 2;
	memcpy(line + len, prev_key, sizeof(prev_key) - 1);
	len += sizeof(prev_key) - 1;
	memcpy(line + len, j->head, FA_SHA256_HEX - 1);
	len += FA_SHA256_HEX - 1;
	line[len++] = '"';
	line[len++] = '}';
	fa_digest_sha256_hex(line, len, j->head);
	if (seq > j->cap) {
		j->cap = j->cap ? 2 * j->cap : 1024;
		j->voff = fa_xrealloc(j->voff, j->cap * sizeof(*j->voff));
	}
	j->voff[seq - 1] = j->bytes;
	/* under the lock: a live reader sees the entries in seq order */
	if (j->sink != NULL) {
		line[len] = '\0';
		j->sink(j->sink_ctx, &kept, line, len);
	}
	line[len] = '\n';
	j->pend_n += len + 1;
	j->bytes += len + 1;
	write_pending(j);
	pthread_mutex_unlock(&j->mu);
	free(unseq);
	fa_attempt_release(&kept);
	return seq;
}

void fa_journal_set_sink(struct fa_journal *j, fa_journal_sink_fn fn, void *ctx)
{
	pthread_mutex_lock(&j->mu);
	j->sink = fn;
	j->sink_ctx = ctx;
	pthread_mutex_unlock(&j->mu);
}

size_t fa_journal_count(struct fa_journal *j)
{
	size_t n;

	pthread_mutex_lock(&j->mu);
	n = (size_t)(j->last_seq + 1 - j->first_kept);
	pthread_mutex_unlock(&j->mu);
	return n;
}

uint64_t fa_journal_bytes(struct fa_journal *j)
{
	uint64_t b;

	pthread_mutex_lock(&j->mu);
	b = j->bytes;
	pthread_mutex_unlock(&j->mu);
	return b;
}

bool fa_journal_file_failed(struct fa_journal *j, uint64_t *missing, uint64_t *in_file, int *err)
{
	bool failed;

	pthread_mutex_lock(&j->mu);
	failed = j->file_failed;
	if (missing != NULL)
		*missing = failed ? j->last_seq - j->file_lines : 0;
	if (in_file != NULL)
		*in_file = j->file_lines;
	if (err != NULL)
		*err = j->file_errno;
	pthread_mutex_unlock(&j->mu);
	return failed;
}

void fa_journal_head(struct fa_journal *j, char out[65])
{
	pthread_mutex_lock(&j->mu);
	memcpy(out, j->head, FA_SHA256_HEX);
	pthread_mutex_unlock(&j->mu);
}

/*
 * Copy the stored bytes at virtual offsets [@v, @v + @max) into @buf, as
 * far as one run goes; returns the count (0 when @v is at the end), -1
 * when the file could not be read. Lines below j->bytes are complete and
 * never change, so only finding the run needs the lock.
 */
static ssize_t read_stored(struct fa_journal *j, uint64_t v, char *buf, size_t max)
{
	size_t lo = 0, hi;
	uint64_t run_end;
	struct run r;
	const char *m = NULL;
	int fd;
	ssize_t got;

	pthread_mutex_lock(&j->mu);
	hi = j->n_runs;
	if (v >= j->stored || hi == 0) {
		pthread_mutex_unlock(&j->mu);
		return 0;
	}
	while (hi - lo > 1) { /* the last run with vstart <= v */
		size_t mid = lo + (hi - lo) / 2;

		if (j->runs[mid].vstart <= v)
			lo = mid;
		else
			hi = mid;
	}
	r = j->runs[lo];
	run_end = lo + 1 < j->n_runs ? j->runs[lo + 1].vstart : j->stored;
	if (r.foff < 0)
		m = j->mem[-1 - r.foff];
	fd = r.fd;
	pthread_mutex_unlock(&j->mu);
	if (max > run_end - v)
		max = (size_t)(run_end - v);
	if (m != NULL) {
		memcpy(buf, m + (v - r.vstart), max);
		return (ssize_t)max;
	}
	do
		got = pread(fd, buf, max, r.foff + (int64_t)(v - r.vstart));
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		FA_LOG(FA_LOG_ERROR, "journal", "event=read_failed offset=%llu err=\"%s\"",
		       (unsigned long long)v, got == 0 ? "file cut short" : strerror(errno));
		return -1;
	}
	return got;
}

/* What the journal held at one instant, read together under the lock. */
struct mark {
	uint64_t last_seq;
	char head[FA_SHA256_HEX];
};

/*
 * Virtual offsets [*@v0, *@v1) of the entries kept with seq > @since, as
 * they are now (*@m: the seq and head that go with them), once they are
 * stored. Caller holds the lock; the wait releases it, and what is
 * appended meanwhile is not in the range. Returns their count.
 */
static size_t range_after(struct fa_journal *j, uint64_t since, uint64_t *v0, uint64_t *v1,
                          struct mark *m)
{
	uint64_t first = since + 1 > j->first_kept ? since + 1 : j->first_kept;
	size_t n = first > j->last_seq ? 0 : (size_t)(j->last_seq - first + 1);

	m->last_seq = j->last_seq;
	memcpy(m->head, j->head, sizeof(m->head));
	*v1 = j->bytes;
	*v0 = n == 0 ? *v1 : j->voff[first - 1];
	wait_stored(j, *v1);
	return n;
}

struct fa_journal_view {
	struct fa_journal *j; /* borrowed */
	char prefix[192];     /* {"head":...,"entries":[ */
	size_t prefix_len;
	uint64_t v0, v1; /* the entries' virtual range */
	uint64_t size;   /* bytes of the whole document */
};

struct fa_journal_view *fa_journal_view_open(struct fa_journal *j, uint64_t since)
{
	struct fa_journal_view *w = fa_xcalloc(1, sizeof(*w));
	struct mark m;
	size_t n;
	int len;

	w->j = j;
	pthread_mutex_lock(&j->mu);
	n = range_after(j, since, &w->v0, &w->v1, &m);
	pthread_mutex_unlock(&j->mu);
	len = snprintf(w->prefix, sizeof(w->prefix),
	               "{\"head\":\"%s\",\"count\":%zu,\"last_seq\":%llu,\"entries\":[", m.head, n,
	               (unsigned long long)m.last_seq);
	w->prefix_len = (size_t)len;
	/* each newline becomes a comma, the last one the "]"; then "}" */
	w->size = w->prefix_len + (w->v1 - w->v0) + (n == 0 ? 2 : 1);
	return w;
}

uint64_t fa_journal_view_size(const struct fa_journal_view *w)
{
	return w->size;
}

ssize_t fa_journal_view_read(struct fa_journal_view *w, uint64_t pos, char *buf, size_t max)
{
	size_t done = 0;

	while (done < max && pos < w->size) {
		uint64_t body_end = w->prefix_len + (w->v1 - w->v0);
		ssize_t got;

		if (pos < w->prefix_len) {
			size_t k = w->prefix_len - (size_t)pos;

			k = k < max - done ? k : max - done;
			memcpy(buf + done, w->prefix + pos, k);
			got = (ssize_t)k;
		} else if (pos < body_end) {
			size_t k = max - done;

			if (k > body_end - pos)
				k = (size_t)(body_end - pos);
			got = read_stored(w->j, w->v0 + (pos - w->prefix_len), buf + done, k);
			if (got <= 0)
				return -1;
			for (ssize_t i = 0; i < got; i++) {
				if (buf[done + (size_t)i] == '\n')
					buf[done + (size_t)i] =
					        pos + (uint64_t)i + 1 == body_end ? ']' : ',';
			}
		} else {
			/* after the entries: "]}" when there are none, else "}" */
			const char *end = w->v1 == w->v0 ? "]}" : "}";

			buf[done] = end[pos - body_end];
			got = 1;
		}
		done += (size_t)got;
		pos += (uint64_t)got;
	}
	return (ssize_t)done;
}

void fa_journal_view_close(struct fa_journal_view *w)
{
	free(w); /* NULL is fine */
}

char *fa_journal_json(struct fa_journal *j, uint64_t since)
{
	struct fa_journal_view *w = fa_journal_view_open(j, since);
	size_t size = (size_t)w->size;
	char *buf = fa_xmalloc(size + 1);
	ssize_t got = fa_journal_view_read(w, 0, buf, size);

	fa_journal_view_close(w);
	if (got != (ssize_t)size) {
		/* a stored line could not be read back: an empty view, said so */
		free(buf);
		return fa_xstrdup("{\"error\":\"the journal could not be read back\"}");
	}
	buf[size] = '\0';
	return buf;
}

void fa_journal_snapshot(struct fa_journal *j, uint64_t since, struct fa_attempt **out, size_t *n)
{
	uint64_t v0, v1, v;
	struct mark m;
	size_t want, size;
	char *buf, *p;
	ssize_t got = 0;

	pthread_mutex_lock(&j->mu);
	want = range_after(j, since, &v0, &v1, &m);
	pthread_mutex_unlock(&j->mu);
	*out = fa_xcalloc(want > 0 ? want : 1, sizeof(**out));
	*n = 0;
	size = (size_t)(v1 - v0);
	buf = fa_xmalloc(size + 1);
	for (v = v0; v < v1; v += (uint64_t)got) {
		got = read_stored(j, v, buf + (v - v0), (size_t)(v1 - v));
		if (got <= 0)
			break;
	}
	buf[v - v0] = '\0';
	for (p = buf; *n < want && p < buf + (v - v0);) {
		char *nl = memchr(p, '\n', (size_t)(buf + (v - v0) - p));
		cJSON *obj;
		struct fa_err err = { "" };

		if (nl == NULL)
			break;
		obj = cJSON_ParseWithLength(p, (size_t)(nl - p));
		if (fa_attempt_from_json(obj, &(*out)[*n], &err) == FA_OK)
			(*n)++;
		else
			FA_LOG(FA_LOG_ERROR, "journal", "event=read_back_failed err=\"%s\"",
			       err.msg);
		cJSON_Delete(obj);
		p = nl + 1;
	}
	free(buf);
}

void fa_journal_reset(struct fa_journal *j)
{
	pthread_mutex_lock(&j->mu);
	j->first_kept = j->last_seq + 1;
	pthread_mutex_unlock(&j->mu);
}

/*
 * Read @path line by line, parsing each into an object for @fn. Returns
 * FA_EIO when unreadable, FA_EINVAL for a line that is not one JSON object
 * (both located in @err), or whatever @fn returns first.
 */
typedef enum fa_rc (*line_fn)(void *ctx, const char *path, size_t lineno, const char *line,
                              size_t len, const cJSON *obj, struct fa_err *err);

static enum fa_rc each_line(const char *path, line_fn fn, void *ctx, struct fa_journal_tail *tail,
                            struct fa_err *err)
{
	FILE *fp = fopen(path, "r");
	enum fa_rc rc = FA_EIO;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	cJSON *obj = NULL;
	ssize_t got;

	if (fp == NULL) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	errno = 0;
	while ((got = getline(&line, &cap, fp)) != -1) {
		size_t len = (size_t)got;
		const char *end = NULL;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			len--; /* the last line may lack it */
		obj = cJSON_ParseWithLengthOpts(line, len, &end, 0);
		while (obj != NULL && end < line + len &&
		       (*end == ' ' || *end == '\t' || *end == '\r'))
			end++;
		if ((obj == NULL || end != line + len || !cJSON_IsObject(obj)) && tail != NULL &&
		    len == (size_t)got && len > 0) {
			/* no newline: the last line, cut by a stop mid-write */
			tail->line = lineno;
			tail->bytes = len;
			break;
		}
		if (obj == NULL || end != line + len || !cJSON_IsObject(obj)) {
			fa_err_set(err, "%s:%zu: not valid JSON", path, lineno);
			rc = FA_EINVAL;
			goto out;
		}
		rc = fn(ctx, path, lineno, line, len, obj, err);
		if (rc != FA_OK)
			goto out;
		cJSON_Delete(obj);
		obj = NULL;
		errno = 0;
	}
	if (ferror(fp)) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
		rc = FA_EIO;
		goto out;
	}
	rc = FA_OK;
out:
	cJSON_Delete(obj);
	free(line);
	if (fp != NULL)
		fclose(fp);
	return rc;
}

struct verify_ctx {
	char prev[FA_SHA256_HEX]; /* hash of the line before; zeros at the start */
	uint64_t seq;             /* its seq; 0 at the start */
	size_t lines;
};

static enum fa_rc verify_line(void *ctx, const char *path, size_t lineno, const char *line,
                              size_t len, const cJSON *obj, struct fa_err *err)
{
	struct verify_ctx *vc = ctx;
	const cJSON *prev = cJSON_GetObjectItemCaseSensitive(obj, "prev");
	const cJSON *seq = cJSON_GetObjectItemCaseSensitive(obj, "seq");
	int64_t s = 0;

	if (!cJSON_IsString(prev) || strcmp(prev->valuestring, vc->prev) != 0) {
		fa_err_set(err,
		           "%s:%zu: prev does not match the line before "
		           "(a line was removed, added or changed)",
		           path, lineno);
		return FA_ECHAIN;
	}
	if (!cJSON_IsNumber(seq) || !(seq->valuedouble >= 0 && seq->valuedouble <= MAX_SEQ) ||
	    floor(seq->valuedouble) != seq->valuedouble) {
		fa_err_set(err, "%s:%zu: $.seq: expected integer >= 0, got %s", path, lineno,
		           fa_attempt_json_type(seq));
		return FA_ECHAIN;
	}
	s = (int64_t)seq->valuedouble;
	if ((uint64_t)s != vc->seq + 1) {
		fa_err_set(err, "%s:%zu: seq %lld does not follow %llu", path, lineno, (long long)s,
		           (unsigned long long)vc->seq);
		return FA_ECHAIN;
	}
	vc->seq = (uint64_t)s;
	fa_digest_sha256_hex(line, len, vc->prev);
	vc->lines++;
	return FA_OK;
}

enum fa_rc fa_journal_verify(const char *path, size_t *n_lines, char *head_out,
                             struct fa_journal_tail *tail, struct fa_err *err)
{
	struct verify_ctx vc = { .prev = ZERO_HASH };
	enum fa_rc rc;

	if (tail != NULL)
		*tail = (struct fa_journal_tail){ 0, 0 };
	rc = each_line(path, verify_line, &vc, tail, err);

	if (rc == FA_EINVAL)
		rc = FA_ECHAIN; /* an unparseable line breaks the chain too */
	if (rc != FA_OK)
		return rc;
	if (n_lines != NULL)
		*n_lines = vc.lines;
	if (head_out != NULL)
		memcpy(head_out, vc.prev, FA_SHA256_HEX);
	return FA_OK;
}

struct read_ctx {
	struct fa_attempt *v; /* owned until handed out */
	size_t n, cap;
};

static enum fa_rc read_line(void *ctx, const char *path, size_t lineno, const char *line,
                            size_t len, const cJSON *obj, struct fa_err *err)
{
	struct read_ctx *rc = ctx;
	struct fa_err local = { "" };

	(void)line;
	(void)len;
	if (rc->n == rc->cap) {
		rc->cap = rc->cap ? 2 * rc->cap : 64;
		rc->v = fa_xrealloc(rc->v, rc->cap * sizeof(*rc->v));
	}
	if (fa_attempt_from_json(obj, &rc->v[rc->n], &local) != FA_OK) {
		fa_err_set(err, "%s:%zu: %s", path, lineno, local.msg);
		return FA_EINVAL;
	}
	rc->n++;
	return FA_OK;
}

enum fa_rc fa_journal_read(const char *path, struct fa_attempt **out, size_t *n,
                           struct fa_journal_tail *tail, struct fa_err *err)
{
	struct read_ctx ctx = { NULL, 0, 0 };
	enum fa_rc rc;

	if (tail != NULL)
		*tail = (struct fa_journal_tail){ 0, 0 };
	rc = each_line(path, read_line, &ctx, tail, err);

	if (rc != FA_OK) {
		for (size_t i = 0; i < ctx.n; i++)
			fa_attempt_release(&ctx.v[i]);
		free(ctx.v);
		ctx.v = NULL;
		ctx.n = 0;
	}
	*out = ctx.v;
	*n = ctx.n;
	return rc;
}
