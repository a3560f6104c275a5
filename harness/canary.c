/* canary.c -- canaries the harness plants in keys and bodies, and the search for them. */
#include "canary.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "digest.h"

/* Most bytes hx_canary_scan_dir() reads in all, and its deepest folder. */
#define SCAN_DIR_MAX (64u * 1024 * 1024)
#define SCAN_DIR_DEPTH 32

/* Hex digits of each canary taken from its digest. */
#define KEY_HEX 24
#define BODY_HEX 16

/* The SHA-256 (hex) of "SEED|SCENARIO|WHAT": one per canary, so neither
 * tells the other, and a seed or scenario change gives new ones. */
static void derive(uint64_t seed, const char *scenario_id, const char *what,
		   char hex[FA_SHA256_HEX])
{
	char *in = fa_xasprintf("%" PRIu64 "|%s|%s", seed, scenario_id ? scenario_id : "",
				what);

	fa_digest_sha256_hex(in, strlen(in), hex);
	free(in);
}

void hx_canary_make(uint64_t seed, const char *scenario_id, char key[33], char body[64])
{
	char hex[FA_SHA256_HEX];

	derive(seed, scenario_id, "key", hex);
	snprintf(key, 33, "kc%.*s", KEY_HEX, hex);
	derive(seed, scenario_id, "body", hex);
	snprintf(body, 64, "canary.%.*s@example.invalid", BODY_HEX, hex);
}

char *hx_canary_secret(const char *secret, const char *key_canary)
{
	return fa_xasprintf("%s.%s", secret ? secret : "", key_canary ? key_canary : "");
}

char *hx_canary_replace_all(const char *src, const char *from, const char *to)
{
	size_t flen = strlen(from), tlen = strlen(to), n = 0, o = 0;
	const char *p, *hit;
	char *out;

	if (flen == 0)
		return NULL;
	for (p = src; (hit = strstr(p, from)) != NULL; p = hit + flen)
		n++;
	if (n == 0)
		return NULL;
	out = fa_xmalloc(strlen(src) - n * flen + n * tlen + 1);
	for (p = src; (hit = strstr(p, from)) != NULL; p = hit + flen) {
		memcpy(out + o, p, (size_t)(hit - p));
		o += (size_t)(hit - p);
		memcpy(out + o, to, tlen);
		o += tlen;
	}
	memcpy(out + o, p, strlen(p) + 1);
	return out;
}

size_t hx_canary_plant_body(cJSON *body, const char *body_canary)
{
	size_t changed = 0;
	char *s;

	if (body == NULL || body_canary == NULL)
		return 0;
	if (cJSON_IsString(body) && body->valuestring != NULL) {
		s = hx_canary_replace_all(body->valuestring, HX_CANARY_BODY_TOKEN, body_canary);
		if (s == NULL)
			return 0;
		fa_xcheck(cJSON_SetValuestring(body, s), "body canary");
		free(s);
		return 1;
	}
	for (cJSON *c = body->child; c != NULL; c = c->next)
		changed += hx_canary_plant_body(c, body_canary);
	return changed;
}

static void add_hit(struct hx_canary_hit **hits, size_t *n, enum hx_canary_kind kind,
		    const char *where, const char *task)
{
	*hits = fa_xrealloc(*hits, (*n + 1) * sizeof(**hits));
	(*hits)[*n].kind = kind;
	(*hits)[*n].where = fa_xstrdup(where ? where : "");
	(*hits)[*n].task = task ? fa_xstrdup(task) : NULL;
	(*n)++;
}

static bool holds(const char *buf, size_t len, const char *needle)
{
	return needle != NULL && needle[0] != '\0' && len > 0 &&
	       memmem(buf, len, needle, strlen(needle)) != NULL;
}

size_t hx_canary_scan(const char *buf, size_t len, const char *key_canary,
		      const char *body_canary, const char *where, const char *task,
		      struct hx_canary_hit **hits, size_t *n)
{
	if (buf == NULL)
		return 0;
	if (holds(buf, len, key_canary))
		add_hit(hits, n, HX_CANARY_KEY, where, task);
	if (holds(buf, len, body_canary))
		add_hit(hits, n, HX_CANARY_BODY, where, task);
	return len;
}

/* What scan_tree() carries down the folders. */
struct walk {
	const char *key_canary;
	struct hx_canary_hit **hits;
	size_t *n;
	size_t searched; /* bytes read so far, <= SCAN_DIR_MAX */
};

/* Search the regular file @fd (taken: closed here) named @rel. */
static void scan_file(struct walk *w, int fd, const char *rel)
{
	size_t room = SCAN_DIR_MAX - w->searched, len = 0, cap = 0;
	char *buf = NULL, *where;
	ssize_t got;

	while (len < room) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > room)
				cap = room;
			buf = fa_xrealloc(buf, cap);
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	where = fa_xasprintf("state dir file %s", rel);
	w->searched += hx_canary_scan(buf, len, w->key_canary, NULL, where, NULL, w->hits, w->n);
	free(where);
	free(buf);
}

/* Search everything under the open folder @dfd (taken: closed here),
 * whose path relative to the state dir is @rel ("" at the top). Entries
 * are opened relative to their folder with O_NOFOLLOW, so a symlink is
 * never followed, and a file swapped for one meanwhile is refused. */
static void scan_tree(struct walk *w, int dfd, const char *rel, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL && w->searched < SCAN_DIR_MAX) {
		struct stat st;
		char *sub;
		int fd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISREG(st.st_mode) && !(S_ISDIR(st.st_mode) && depth < SCAN_DIR_DEPTH))
			continue; /* symlinks, FIFOs, sockets, devices */
		/* O_NONBLOCK: a FIFO put there meanwhile must not hang us */
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
				    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
			close(fd);
			continue;
		}
		sub = rel[0] ? fa_xasprintf("%s/%s", rel, de->d_name) : fa_xstrdup(de->d_name);
		if (S_ISDIR(st.st_mode))
			scan_tree(w, fd, sub, depth + 1);
		else
			scan_file(w, fd, sub);
		free(sub);
	}
	closedir(d);
}

size_t hx_canary_scan_dir(const char *dir, const char *key_canary,
			  struct hx_canary_hit **hits, size_t *n)
{
	struct walk w = { .key_canary = key_canary, .hits = hits, .n = n };
	int fd;

	if (dir == NULL || key_canary == NULL || key_canary[0] == '\0')
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	scan_tree(&w, fd, "", 0);
	return w.searched;
}
