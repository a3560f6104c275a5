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
#define SCAN_DIR_MAX   (64u * 1024 * 1024)
#define SCAN_DIR_DEPTH 32

/* Hex digits of each canary taken from its digest. */
#define KEY_HEX  24
#define BODY_HEX 16

/* The SHA-256 (hex) of "SEED|SCENARIO|WHAT": one per canary, so neither
 * tells the other, and a seed or scenario change gives new ones. */
static void derive(uint64_t seed, const char *scenario_id, const char *what,
                   char hex[FA_SHA256_HEX])
{
	char *in = fa_xasprintf("%" PRIu64 "|%s|%s", seed, scenario_id ? scenario_id : "", what);

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

size_t hx_canary_scan(const char *buf, size_t len, const char *key_canary, const char *body_canary,
                      const char *where, const char *task, struct hx_canary_hit **hits, size_t *n)
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
	bool cut;        /* something was left unsearched */
};

/* Search the regular file @fd (taken: closed here) named @rel. */
static void scan_file(struct walk *w, int fd, const char *rel)
{
	size_t room = SCAN_DIR_MAX - w->searched, len = 0, cap = 0;
	char *buf = NULL, *where, more;
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
		if (got < 0)
			w->cut = true;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	/* the room is used up: is there more than it held? */
	if (len == room && read(fd, &more, 1) != 0)
		w->cut = true;
	close(fd);
	where = fa_xasprintf("state dir file %s", rel);
	w->searched += hx_canary_scan(buf, len, w->key_canary, NULL, where, NULL, w->hits, w->n);
	free(where);
	free(buf);
}

/* An entry could not be looked at: gone meanwhile is fine, anything else
 * (no permission, say) leaves it unsearched. */
static void unreadable(struct walk *w)
{
	if (errno != ENOENT)
		w->cut = true;
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
		w->cut = true;
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		char *sub;
		int fd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (w->searched >= SCAN_DIR_MAX) {
			w->cut = true; /* an entry the bound leaves unsearched */
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			unreadable(w);
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth >= SCAN_DIR_DEPTH) {
			w->cut = true;
			continue;
		}
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue; /* symlinks, FIFOs, sockets, devices */
		/* O_NONBLOCK: a FIFO put there meanwhile must not hang us */
		fd = openat(dirfd(d), de->d_name,
		            O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		                    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0) {
			/* ELOOP: swapped for a symlink, which is never followed */
			if (errno != ELOOP)
				unreadable(w);
			continue;
		}
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

size_t hx_canary_scan_dir(const char *dir, const char *key_canary, struct hx_canary_hit **hits,
                          size_t *n, bool *cut)
{
	struct walk w = { .key_canary = key_canary, .hits = hits, .n = n };
	int fd;

	if (dir == NULL || key_canary == NULL || key_canary[0] == '\0')
		return 0;
	/* O_NOFOLLOW: a state dir the client swapped for a symlink is not
	 * searched (and says so), as no symlink below it is followed */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		scan_tree(&w, fd, "", 0);
	else
		unreadable(&w); /* gone: nothing left to search */
	if (w.cut && cut != NULL)
		*cut = true;
	return w.searched;
}

/* ---- redaction ---------------------------------------------------------- */

/* A piece of the text hx_canary_redact() may hide: bytes [at, at + len)
 * of the text, bytes [from, from + len) of mask k's. */
struct piece {
	size_t at, len, from, k;
};

struct pieces {
	struct piece *v;
	size_t n, cap;
};

static void add_piece(struct pieces *p, size_t at, size_t len, size_t from, size_t k)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->v = fa_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = (struct piece){ .at = at, .len = len, .from = from, .k = k };
}

/* Every place @s (@slen bytes) holds mask @k's text @t (@tlen bytes)
 * whole, or, when @tlen reaches HX_CANARY_FRAGMENT_MIN, a prefix or a
 * suffix of it that long or longer: each prefix found starts with the
 * text's first HX_CANARY_FRAGMENT_MIN bytes, each suffix ends with its
 * last ones, and is taken as long as it goes on matching. */
static void find_pieces(struct pieces *p, const char *s, size_t slen, const char *t, size_t tlen,
                        size_t k)
{
	const size_t min = HX_CANARY_FRAGMENT_MIN;
	const char *hit;
	size_t at, m;

	if (tlen < min) {
		for (at = 0;
		     at + tlen <= slen && (hit = memmem(s + at, slen - at, t, tlen)) != NULL;
		     at = (size_t)(hit - s) + 1)
			add_piece(p, (size_t)(hit - s), tlen, 0, k);
		return;
	}
	for (at = 0; at + min <= slen && (hit = memmem(s + at, slen - at, t, min)) != NULL;
	     at = (size_t)(hit - s) + 1) {
		size_t i = (size_t)(hit - s);

		for (m = min; m < tlen && i + m < slen && s[i + m] == t[m]; m++)
			;
		add_piece(p, i, m, 0, k);
	}
	for (at = 0;
	     at + min <= slen && (hit = memmem(s + at, slen - at, t + tlen - min, min)) != NULL;
	     at = (size_t)(hit - s) + 1) {
		size_t end = (size_t)(hit - s) + min;

		for (m = min; m < tlen && m < end && s[end - m - 1] == t[tlen - m - 1]; m++)
			;
		if (m < tlen) /* a whole one is the prefix search's */
			add_piece(p, end - m, m, tlen - m, k);
	}
}

/* Longest first; then further left; then the earlier mask. */
static int piece_order(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static int piece_at(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* What piece @pc of mask @m reads as, into @out (at most 32 bytes). */
static void mark_of(const struct hx_canary_mask *m, const struct piece *pc, char out[32])
{
	size_t a = pc->from, b = pc->from + pc->len;

	switch (m->kind) {
	case HX_MASK_SECRET: snprintf(out, 32, "[key secret]"); break;
	case HX_MASK_KEY_CANARY: snprintf(out, 32, "[key canary]"); break;
	case HX_MASK_BODY_CANARY: snprintf(out, 32, "[body canary]"); break;
	case HX_MASK_CANARIED:
		if (a < m->dot && b > m->dot + 1)
			snprintf(out, 32, "[key secret].[key canary]");
		else if (a < m->dot)
			snprintf(out, 32, "[key secret]%s", b > m->dot ? "." : "");
		else
			snprintf(out, 32, "%s[key canary]", a == m->dot ? "." : "");
		break;
	}
}

/* Keep piece [at, at + len) of the text, bytes [from, from + len) of mask
 * @k's, in @acc, and mark its bytes taken. */
static void keep(struct pieces *acc, unsigned char *taken, size_t at, size_t len, size_t from,
                 size_t k)
{
	memset(taken + at, 1, len);
	add_piece(acc, at, len, from, k);
}

char *hx_canary_redact(const char *s, const struct hx_canary_mask *masks, size_t n)
{
	struct pieces p = { 0 }, acc = { 0 };
	size_t slen, kept = 0, o = 0, cap, at = 0;
	unsigned char *taken = NULL;
	char *out = NULL, mark[32];

	if (s == NULL)
		return NULL;
	slen = strlen(s);
	for (size_t k = 0; k < n; k++)
		if (masks[k].text != NULL && masks[k].text[0] != '\0')
			find_pieces(&p, s, slen, masks[k].text, strlen(masks[k].text), k);
	if (p.n == 0)
		goto out;
	/* the longest pieces first, each kept where no kept one lies */
	qsort(p.v, p.n, sizeof(*p.v), piece_order);
	taken = fa_xcalloc(slen, 1);
	for (size_t i = 0; i < p.n; i++) {
		const struct piece *pc = &p.v[i];
		const unsigned char *busy = memchr(taken + pc->at, 1, pc->len);
		size_t tlen = strlen(masks[pc->k].text), left, right = 0;

		if (busy == NULL) {
			keep(&acc, taken, pc->at, pc->len, pc->from, pc->k);
			continue;
		}
		/* a longer one took part of it: what is left at either end is
		 * still a prefix or a suffix of the text, and goes when it is
		 * long enough */
		left = (size_t)(busy - (taken + pc->at));
		while (right < pc->len && !taken[pc->at + pc->len - 1 - right])
			right++;
		if (pc->from == 0 && left >= HX_CANARY_FRAGMENT_MIN)
			keep(&acc, taken, pc->at, left, 0, pc->k);
		if (pc->from + pc->len == tlen && right >= HX_CANARY_FRAGMENT_MIN)
			keep(&acc, taken, pc->at + pc->len - right, right, tlen - right, pc->k);
	}
	kept = acc.n;
	qsort(acc.v, kept, sizeof(*acc.v), piece_at);
	cap = slen + kept * sizeof(mark) + 1;
	out = fa_xmalloc(cap);
	for (size_t i = 0; i < kept; i++) {
		const struct piece *pc = &acc.v[i];

		memcpy(out + o, s + at, pc->at - at);
		o += pc->at - at;
		mark_of(&masks[pc->k], pc, mark);
		memcpy(out + o, mark, strlen(mark));
		o += strlen(mark);
		at = pc->at + pc->len;
	}
	memcpy(out + o, s + at, slen - at + 1);
out:
	free(p.v);
	free(acc.v);
	free(taken);
	return out;
}
