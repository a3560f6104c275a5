/* state.c -- the saved operations in CLIENT_STATE_DIR: one file per write, replaced atomically. */
#include "state.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "digest.h"
#include "log.h"

/* The file format's version ("version" member). */
#define STATE_VERSION 1
/* Largest saved operation read back, bytes (a body of up to a few MiB). */
#define STATE_FILE_MAX (16L * 1024 * 1024)
/* Longest task id kept readable in a file name; longer ids are hashed. */
#define NAME_ID_MAX 160

/* Longest idempotency key accepted from a file, bytes (the provider's
 * limit too). */
#define KEY_MAX 255

/* An operation found at start, until its task takes it. */
struct saved {
	struct ref_op *op;  /* owned */
	char *name;         /* its file's name in the folder, owned */
	struct saved *next; /* next one found */
};

/* A growing list of owned strings. */
struct names {
	char **v;   /* owned strings */
	size_t n;   /* entries used */
	size_t cap; /* entries allocated */
};

struct ref_state {
	char *dir;              /* the folder, NULL = memory only */
	struct saved *head;     /* usable operations not taken yet */
	struct names bad_files; /* names of the op-*.json files skipped */
	struct names bad_tasks; /* tasks a skipped file named, or several files claim */
};

const char *ref_op_state_str(enum ref_op_state s)
{
	switch (s) {
	case REF_OP_AMBIGUOUS: return "ambiguous";
	case REF_OP_DONE: return "done";
	case REF_OP_PENDING: break;
	}
	return "pending";
}

struct ref_op *ref_op_new(const char *task, const char *method, const char *url, const char *body,
                          const char *client_reference)
{
	struct ref_op *op = fa_xcalloc(1, sizeof(*op));

	op->task = fa_xstrdup(task);
	op->method = fa_xstrdup(method);
	op->url = fa_xstrdup(url);
	op->body = body != NULL ? fa_xstrdup(body) : NULL;
	op->client_reference = client_reference != NULL ? fa_xstrdup(client_reference) : NULL;
	op->state = REF_OP_PENDING;
	return op;
}

void ref_op_free(struct ref_op *op)
{
	if (op == NULL)
		return;
	free(op->task);
	free(op->key);
	free(op->method);
	free(op->url);
	free(op->body);
	free(op->client_reference);
	free(op->provider_id);
	free(op);
}

enum fa_rc ref_op_new_key(char **out, struct fa_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[16];
	char text[4 + 2 * sizeof(raw) + 1] = "idk_";
	size_t got = 0;

	*out = NULL;
	/* getrandom() blocks only until the kernel's pool is first seeded,
	 * long before any test runs; EINTR just means "again". */
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fa_err_set(err, "getrandom: %s", n < 0 ? strerror(errno) : "no bytes");
			return FA_EIO;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		text[4 + 2 * i] = hex[raw[i] >> 4];
		text[4 + 2 * i + 1] = hex[raw[i] & 0xf];
	}
	text[sizeof(text) - 1] = '\0';
	*out = fa_xstrdup(text);
	return FA_OK;
}

/* ---- file names -------------------------------------------------------- */

/*
 * The file of task @task: "op-" + the id with every byte outside
 * [A-Za-z0-9._-] as %XX, + ".json"; an id longer than NAME_ID_MAX becomes
 * "op-~" + its SHA-256 (no escaped id contains '~', so the two forms never
 * meet). The file's own "task" member is what identifies it.
 */
static char *file_name(const char *task)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(task);
	char *name, *p;

	if (n > NAME_ID_MAX) {
		char sum[FA_SHA256_HEX];

		fa_digest_sha256_hex(task, n, sum);
		return fa_xasprintf("op-~%s.json", sum);
	}
	name = fa_xmalloc(3 + 3 * n + 5 + 1);
	p = name;
	memcpy(p, "op-", 3);
	p += 3;
	for (const unsigned char *c = (const unsigned char *)task; *c != '\0'; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-') {
			*p++ = (char)*c;
		} else {
			*p++ = '%';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 0xf];
		}
	}
	memcpy(p, ".json", 6);
	return name;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- reading ------------------------------------------------------------ */

static void names_add(struct names *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = fa_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = fa_xstrdup(s);
}

static bool names_has(const struct names *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

static void names_release(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* *@out = a copy of member @name of @o: a string, or NULL when null and
 * @nullable. False when it is missing or of another type. */
static bool get_text(const cJSON *o, const char *name, bool nullable, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	*out = NULL;
	if (nullable && cJSON_IsNull(v))
		return true;
	if (!cJSON_IsString(v))
		return false;
	*out = fa_xstrdup(v->valuestring);
	return true;
}

/* Could @key have come from ref_op_new_key()? It goes out as a header
 * line: a CR or LF would let a hand-made file inject headers, and the
 * provider takes 1 to 255 printable bytes. This client only ever writes
 * "idk_" and hex digits; anything outside [A-Za-z0-9_-] is refused. */
static bool key_ok(const char *key)
{
	size_t n;

	if (key == NULL)
		return false;
	n = strlen(key);
	return n >= 1 && n <= KEY_MAX &&
	       strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/*
 * The operation saved in @text, or NULL (with @why set) when it is not a
 * usable one. *@claimed is the "task" member (owned) whenever there is
 * one, usable or not: a file that names a task but cannot be used still
 * says that the task was under way.
 */
static struct ref_op *op_from_json(const char *text, size_t len, const char **why, char **claimed)
{
	cJSON *o = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
	struct ref_op *op = fa_xcalloc(1, sizeof(*op));
	const cJSON *v;
	char *state = NULL;
	bool ok = false;

	*claimed = NULL;
	*why = "not JSON";
	if (o == NULL || !cJSON_IsObject(o))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(o, "task");
	if (cJSON_IsString(v))
		*claimed = fa_xstrdup(v->valuestring);
	*why = "not a version 1 saved operation";
	v = cJSON_GetObjectItemCaseSensitive(o, "version");
	if (!cJSON_IsNumber(v) || v->valuedouble != STATE_VERSION)
		goto out;
	*why = "a member is missing or of the wrong type";
	if (!get_text(o, "task", false, &op->task) ||
	    !get_text(o, "idempotency_key", true, &op->key) ||
	    !get_text(o, "method", false, &op->method) || !get_text(o, "url", false, &op->url) ||
	    !get_text(o, "body", true, &op->body) ||
	    !get_text(o, "client_reference", true, &op->client_reference) ||
	    !get_text(o, "state", false, &state) ||
	    !get_text(o, "provider_id", true, &op->provider_id))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(o, "attempts");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e6)
		goto out;
	op->attempts = (int)v->valuedouble;
	*why = "the idempotency key is null, empty, too long or has a byte outside [A-Za-z0-9_-]";
	if (!key_ok(op->key))
		goto out;
	*why = "unknown state";
	if (strcmp(state, "pending") == 0)
		op->state = REF_OP_PENDING;
	else if (strcmp(state, "ambiguous") == 0)
		op->state = REF_OP_AMBIGUOUS;
	else if (strcmp(state, "done") == 0)
		op->state = REF_OP_DONE;
	else
		goto out;
	ok = true;
out:
	free(state);
	cJSON_Delete(o);
	if (!ok) {
		ref_op_free(op);
		return NULL;
	}
	return op;
}

/*
 * The contents of regular file @name in folder @dfd, NUL-terminated, in
 * *@out (owned); NULL on success, else why not. Anything but a regular
 * file is refused before it is opened (a FIFO would block the open or the
 * read, a device may act on an open), and again after the open, which
 * neither follows a symbolic link nor waits for a writer, in case the
 * name changed hands in between. Called at start, before any thread: the
 * reason may be strerror()'s text.
 */
static const char *read_regular(int dfd, const char *name, char **out, size_t *len)
{
	const char *why = NULL;
	struct stat sb;
	char *buf = NULL;
	size_t n = 0;
	int fd = -1;

	*out = NULL;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return strerror(errno);
	if (!S_ISREG(sb.st_mode))
		return S_ISLNK(sb.st_mode) ? "a symbolic link, not a regular file"
		                           : "not a regular file";
	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		why = errno == ELOOP ? "a symbolic link, not a regular file" : strerror(errno);
		goto out;
	}
	if (fstat(fd, &sb) != 0) {
		why = strerror(errno);
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		why = "not a regular file";
		goto out;
	}
	if (sb.st_size > STATE_FILE_MAX) {
		why = strerror(EFBIG);
		goto out;
	}
	/* The size may still change: read to the end, within the limit. */
	buf = fa_xmalloc((size_t)sb.st_size + 4096 + 1);
	for (size_t cap = (size_t)sb.st_size + 4096;;) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			why = strerror(errno);
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > (size_t)STATE_FILE_MAX) {
			why = strerror(EFBIG);
			goto out;
		}
		if (n == cap) {
			cap *= 2;
			buf = fa_xrealloc(buf, cap + 1);
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return why;
}

/* Report the skipped file @name of @st->dir. */
static void skipped(const struct ref_state *st, const char *name, const char *why)
{
	FA_LOG(FA_LOG_ERROR, "client", "event=state_skip file=\"%s/%s\" error=\"%s\"", st->dir,
	       name, why);
}

/* Is task @task's state unusable: one of its files skipped, or several
 * files claiming it? */
static bool task_bad(const struct ref_state *st, const char *task)
{
	char *name;
	bool bad;

	if (names_has(&st->bad_tasks, task))
		return true;
	name = file_name(task);
	bad = names_has(&st->bad_files, name);
	free(name);
	return bad;
}

/*
 * Never guess which of two files for one task wins: when several usable
 * files claim a task, or a skipped file is the task's, none of them is
 * used, however many there are, and the task's state is unusable.
 */
static size_t drop_conflicts(struct ref_state *st)
{
	size_t dropped = 0;

	for (struct saved *s = st->head; s != NULL; s = s->next) {
		if (names_has(&st->bad_tasks, s->op->task))
			continue;
		for (struct saved *o = s->next; o != NULL; o = o->next) {
			if (strcmp(o->op->task, s->op->task) == 0) {
				names_add(&st->bad_tasks, s->op->task);
				break;
			}
		}
	}
	for (struct saved **pp = &st->head; *pp != NULL;) {
		struct saved *s = *pp;

		if (!task_bad(st, s->op->task)) {
			pp = &s->next;
			continue;
		}
		skipped(st, s->name,
		        "another file for the same task exists or was skipped (all of them are "
		        "skipped)");
		*pp = s->next;
		ref_op_free(s->op);
		free(s->name);
		free(s);
		dropped++;
	}
	return dropped;
}

/* Read every "op-*.json" of @st->dir into @st->head. */
static void scan(struct ref_state *st)
{
	DIR *d = opendir(st->dir);
	struct dirent *e;
	size_t found = 0, skips;

	if (d == NULL) {
		FA_LOG(FA_LOG_ERROR, "client", "event=state_dir dir=\"%s\" error=\"%s\"", st->dir,
		       strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char *text = NULL, *claimed = NULL;
		const char *why;
		struct ref_op *op = NULL;
		size_t len = 0;

		if (strncmp(e->d_name, "op-", 3) != 0 || !has_suffix(e->d_name, ".json"))
			continue;
		why = read_regular(dirfd(d), e->d_name, &text, &len);
		if (why == NULL)
			op = op_from_json(text, len, &why, &claimed);
		free(text);
		if (op == NULL) {
			skipped(st, e->d_name, why);
			names_add(&st->bad_files, e->d_name);
			if (claimed != NULL)
				names_add(&st->bad_tasks, claimed);
			free(claimed);
			continue;
		}
		free(claimed);
		if (op->state == REF_OP_DONE && op->provider_id == NULL) {
			/* "Done" without the record's name proves nothing:
			 * ask the provider again, with the saved key. */
			FA_LOG(FA_LOG_WARN, "client",
			       "event=state_done_without_id file=\"%s/%s\" taken as ambiguous",
			       st->dir, e->d_name);
			op->state = REF_OP_AMBIGUOUS;
		}
		{
			struct saved *s = fa_xcalloc(1, sizeof(*s));

			s->op = op;
			s->name = fa_xstrdup(e->d_name);
			s->next = st->head;
			st->head = s;
		}
	}
	closedir(d);
	skips = st->bad_files.n + drop_conflicts(st);
	for (const struct saved *s = st->head; s != NULL; s = s->next)
		found++;
	FA_LOG(FA_LOG_INFO, "client", "event=state_open dir=\"%s\" operations=%zu skipped=%zu",
	       st->dir, found, skips);
}

struct ref_state *ref_state_open(const char *dir)
{
	struct ref_state *st = fa_xcalloc(1, sizeof(*st));

	if (dir == NULL || dir[0] == '\0')
		return st;
	st->dir = fa_xstrdup(dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		FA_LOG(FA_LOG_ERROR, "client", "event=state_dir dir=\"%s\" error=\"mkdir: %s\"",
		       dir, strerror(errno));
	scan(st);
	return st;
}

bool ref_state_persistent(const struct ref_state *st)
{
	return st->dir != NULL;
}

enum ref_saved ref_state_take(struct ref_state *st, const char *task, struct ref_op **out)
{
	*out = NULL;
	if (st->dir == NULL)
		return REF_SAVED_NONE;
	if (task_bad(st, task))
		return REF_SAVED_UNUSABLE;
	for (struct saved **pp = &st->head; *pp != NULL; pp = &(*pp)->next) {
		struct saved *s = *pp;

		if (strcmp(s->op->task, task) != 0)
			continue;
		*pp = s->next;
		*out = s->op;
		free(s->name);
		free(s);
		return REF_SAVED_OP;
	}
	return REF_SAVED_NONE;
}

void ref_state_free(struct ref_state *st)
{
	if (st == NULL)
		return;
	while (st->head != NULL) {
		struct saved *s = st->head;

		st->head = s->next;
		ref_op_free(s->op);
		free(s->name);
		free(s);
	}
	names_release(&st->bad_files);
	names_release(&st->bad_tasks);
	free(st->dir);
	free(st);
}

/* ---- writing ------------------------------------------------------------ */

static void add_text(cJSON *o, const char *name, const char *v)
{
	if (v == NULL)
		fa_xcheck(cJSON_AddNullToObject(o, name), "cJSON");
	else
		fa_xcheck(cJSON_AddStringToObject(o, name, v), "cJSON");
}

/* @op as the file's text (owned, cJSON_free()). */
static char *op_to_json(const struct ref_op *op)
{
	cJSON *o = fa_xcheck(cJSON_CreateObject(), "cJSON_CreateObject");
	char *text;

	fa_xcheck(cJSON_AddNumberToObject(o, "version", STATE_VERSION), "cJSON");
	add_text(o, "task", op->task);
	add_text(o, "idempotency_key", op->key);
	add_text(o, "method", op->method);
	add_text(o, "url", op->url);
	add_text(o, "body", op->body);
	add_text(o, "client_reference", op->client_reference);
	add_text(o, "state", ref_op_state_str(op->state));
	add_text(o, "provider_id", op->provider_id);
	fa_xcheck(cJSON_AddNumberToObject(o, "attempts", op->attempts), "cJSON");
	text = fa_xcheck(cJSON_PrintUnformatted(o), "cJSON_PrintUnformatted");
	cJSON_Delete(o);
	return text;
}

/* Write all @len bytes of @buf to @fd; false with errno set. */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = EIO;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Record what failed, on which file, and why (errno, read at once). */
#define FAIL(what_, file_)                                                                         \
	do {                                                                                       \
		e = errno;                                                                         \
		what = (what_);                                                                    \
		file = (file_);                                                                    \
		goto out;                                                                          \
	} while (0)

enum fa_rc ref_state_save(const struct ref_state *st, const struct ref_op *op, struct fa_err *err)
{
	enum fa_rc rc = FA_EIO;
	char *name = NULL, *path = NULL, *tmp = NULL, *text = NULL;
	const char *what = NULL, *file = NULL;
	int fd = -1, dfd = -1, e = 0;

	if (st->dir == NULL)
		return FA_OK;
	name = file_name(op->task);
	path = fa_xasprintf("%s/%s", st->dir, name);
	/* One writer per task (task ids are unique), so a fixed temporary
	 * name is enough; a kill may leave it behind, the next save
	 * replaces it, and scan() never reads it (not "*.json"). Whatever
	 * holds the name is removed and the file created afresh, so a FIFO
	 * or a symbolic link left there can neither block the save nor
	 * redirect it. */
	tmp = fa_xasprintf("%s.tmp", path);
	text = op_to_json(op);

	if (unlink(tmp) != 0 && errno != ENOENT)
		FAIL("unlink", tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		FAIL("open", tmp);
	if (!write_all(fd, text, strlen(text)) || !write_all(fd, "\n", 1))
		FAIL("write", tmp);
	if (fsync(fd) != 0)
		FAIL("fsync", tmp);
	if (close(fd) != 0) {
		fd = -1;
		FAIL("close", tmp);
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		FAIL("rename", tmp);
	/* The rename itself lives in the folder: make it durable too. */
	dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		FAIL("open", st->dir);
	if (fsync(dfd) != 0)
		FAIL("fsync", st->dir);
	rc = FA_OK;
out:
	if (rc != FA_OK)
		fa_err_set(err, "saving the operation of task %s: %s %s: %s", op->task, what, file,
		           strerror(e));
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (text != NULL)
		cJSON_free(text);
	free(name);
	free(path);
	free(tmp);
	return rc;
}
