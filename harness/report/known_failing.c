/* known_failing.c -- the --known-failing list: checks a client is known to fail, each with its line
 * and reason. */
#include "known_failing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "utf8.h"

/* A list is a few dozen lines; anything this big is not one. */
#define MAX_FILE (1024 * 1024)

/* Bytes of a bad id or line quoted back in a message. */
#define QUOTE_MAX 64

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The check table's entry for the @len bytes at @id, or NULL. */
static const struct hx_check_def *def_of(const char *id, size_t len)
{
	for (size_t i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);

		if (strlen(d->id) == len && memcmp(d->id, id, len) == 0)
			return d;
	}
	return NULL;
}

/* @len bytes at @s as a message may quote them: printable, cut at
 * QUOTE_MAX bytes with "..." after. A new string. */
static char *quote(const char *s, size_t len)
{
	bool cut = len > QUOTE_MAX;
	char *plain = fa_utf8_printable(s, cut ? QUOTE_MAX : len);
	char *q = fa_xasprintf("%s%s", plain, cut ? "..." : "");

	free(plain);
	return q;
}

static void add_entry(struct hx_known_failing *kf, const char *id, const char *reason,
                      size_t reason_len, unsigned line)
{
	struct hx_known_entry *e;

	kf->entries = fa_xrealloc(kf->entries, (kf->n_entries + 1) * sizeof(*e));
	e = &kf->entries[kf->n_entries++];
	e->id = id;
	e->reason = reason_len > 0 ? fa_xstrndup(reason, reason_len) : NULL;
	e->line = line;
}

/*
 * One line (@len bytes at @p, no newline) numbered @line into @kf. FA_EINVAL
 * with the message in @err when it is not a comment, a blank or an entry.
 */
static enum fa_rc parse_line(struct hx_known_failing *kf, const char *p, size_t len, unsigned line,
                             struct fa_err *err)
{
	const struct hx_check_def *d;
	const struct hx_known_entry *dup;
	const char *end = p + len, *id, *rest;
	size_t id_len;
	char *q = NULL;
	enum fa_rc rc = FA_EINVAL;

	if (len > HX_KNOWN_FAILING_MAX_LINE) {
		fa_err_set(err, "%s:%u: line longer than %d bytes", kf->file, line,
		           HX_KNOWN_FAILING_MAX_LINE);
		goto out;
	}
	if (memchr(p, '\0', len) != NULL) {
		fa_err_set(err, "%s:%u: NUL byte in the line", kf->file, line);
		goto out;
	}
	while (p < end && blank(*p))
		p++;
	while (end > p && blank(end[-1]))
		end--;
	if (p == end || *p == '#') {
		rc = FA_OK;
		goto out;
	}
	id = p;
	while (p < end && !blank(*p) && *p != '#')
		p++;
	id_len = (size_t)(p - id);
	for (rest = p; rest < end && blank(*rest); rest++)
		;
	if (rest < end && *rest != '#') {
		q = quote(id, (size_t)(end - id));
		fa_err_set(err,
		           "%s:%u: expected a check id and an optional \"# reason\", "
		           "got \"%s\"",
		           kf->file, line, q);
		goto out;
	}
	d = def_of(id, id_len);
	if (d == NULL) {
		char *word = fa_xstrndup(id, id_len);
		const char *near = hx_check_suggest(word);

		free(word);
		q = quote(id, id_len);
		fa_err_set(err, "%s:%u: unknown check \"%s\"%s%s%s", kf->file, line, q,
		           near ? ", did you mean \"" : "", near ? near : "", near ? "\"?" : "");
		goto out;
	}
	dup = hx_known_failing_find(kf, d->id);
	if (dup != NULL) {
		fa_err_set(err, "%s:%u: duplicate check \"%s\" (first on line %u)", kf->file, line,
		           d->id, dup->line);
		goto out;
	}
	if (rest < end) /* the reason: after '#', trimmed */
		for (rest++; rest < end && blank(*rest); rest++)
			;
	add_entry(kf, d->id, rest, (size_t)(end - rest), line);
	rc = FA_OK;
out:
	free(q);
	return rc;
}

enum fa_rc hx_known_failing_parse(const char *file, const char *text, size_t len,
                                  struct hx_known_failing **out, struct fa_err *err)
{
	struct hx_known_failing *kf = fa_xcalloc(1, sizeof(*kf));
	const char *p = text, *end = text + len;
	unsigned line = 0;
	enum fa_rc rc = FA_OK;

	*out = NULL;
	kf->file = fa_xstrdup(file ? file : "-");
	/* an editor's UTF-8 byte order mark is not part of the first id */
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end && rc == FA_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		rc = parse_line(kf, p, n, ++line, err);
		p += n + (nl ? 1 : 0);
	}
	if (rc != FA_OK)
		goto out;
	*out = kf;
	kf = NULL;
out:
	hx_known_failing_free(kf);
	return rc;
}

enum fa_rc hx_known_failing_load(const char *path, struct hx_known_failing **out,
                                 struct fa_err *err)
{
	FILE *f = NULL;
	char *buf = NULL;
	size_t len = 0, n;
	struct stat st;
	enum fa_rc rc = FA_EIO;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(EISDIR));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fa_err_set(err, "%s: not a regular file", path);
		rc = FA_EINVAL;
		goto out;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "rb");
	if (f == NULL) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	fd = -1; /* the stream owns it now */
	buf = fa_xmalloc(MAX_FILE + 1);
	while ((n = fread(buf + len, 1, MAX_FILE + 1 - len, f)) > 0 && len + n <= MAX_FILE)
		len += n;
	if (ferror(f)) {
		fa_err_set(err, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	if (n > 0) {
		fa_err_set(err, "%s: cannot read: larger than %d bytes", path, MAX_FILE);
		goto out;
	}
	rc = hx_known_failing_parse(path, buf, len, out, err);
out:
	if (f != NULL)
		fclose(f);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

const struct hx_known_entry *hx_known_failing_find(const struct hx_known_failing *kf,
                                                   const char *id)
{
	for (size_t i = 0; kf != NULL && id != NULL && i < kf->n_entries; i++)
		if (strcmp(kf->entries[i].id, id) == 0)
			return &kf->entries[i];
	return NULL;
}

void hx_known_failing_free(struct hx_known_failing *kf)
{
	if (kf == NULL)
		return;
	for (size_t i = 0; i < kf->n_entries; i++)
		free(kf->entries[i].reason);
	free(kf->entries);
	free(kf->file);
	free(kf);
}
