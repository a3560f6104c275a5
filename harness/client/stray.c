/* stray.c -- client processes that left their process group: marked, found in /proc, killed. */
#include "stray.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"

/* Pause between two scans of /proc, ns. */
#define ROUND_NS (2 * 1000 * 1000)

/* One process found: it carried the marker, or was in the group. */
struct found {
	pid_t pid;
	int fd;    /* its pidfd, or -1 where the kernel has none */
	bool done; /* reaped, or gone, or someone else's zombie */
};

/* What one sweep found, each process once. */
struct found_set {
	struct found *v;
	size_t n;
	size_t cap;
};

void hx_stray_nonce(char out[HX_STRAY_NONCE_LEN + 1])
{
	static atomic_uint_fast64_t counter;
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[HX_STRAY_NONCE_LEN / 2];
	ssize_t got = getrandom(raw, sizeof(raw), GRND_NONBLOCK);

	if (got != (ssize_t)sizeof(raw)) {
		/* unique, if not secret: the marker only has to tell clients apart */
		uint64_t a = (uint64_t)fa_clock_wall_us() ^ ((uint64_t)getpid() << 32);
		uint64_t b = (uint64_t)fa_clock_mono_us() ^ atomic_fetch_add(&counter, 1);

		memcpy(raw, &a, sizeof(a));
		memcpy(raw + sizeof(a), &b, sizeof(b));
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[HX_STRAY_NONCE_LEN] = '\0';
}

enum fa_rc hx_stray_subreaper(struct fa_err *err)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
		fa_err_set(err, "prctl: %s", strerror(errno));
		return FA_EIO;
	}
	return FA_OK;
}

/* The whole file at @path (a /proc file: its size is not known ahead);
 * NULL when it cannot be read. *@len gets its length. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = fa_xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			cap *= 2;
			buf = fa_xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

/* @env (NUL-separated entries, @len bytes) holds exactly @entry. */
static bool has_entry(const char *env, size_t len, const char *entry)
{
	size_t elen = strlen(entry);

	for (size_t at = 0; at < len;) {
		const char *end = memchr(env + at, '\0', len - at);
		size_t n = end ? (size_t)(end - (env + at)) : len - at;

		if (n == elen && memcmp(env + at, entry, elen) == 0)
			return true;
		at += n + 1;
	}
	return false;
}

/* State, parent and group of @pid from /proc; false when it is gone. */
static bool proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp)
{
	char path[64], buf[512];
	const char *rp;
	long pp = 0, pg = 0;
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		rp = strrchr(buf, ')');
		ok = rp != NULL && sscanf(rp + 1, " %c %ld %ld", state, &pp, &pg) == 3;
	}
	fclose(f);
	*ppid = (pid_t)pp;
	*pgrp = (pid_t)pg;
	return ok;
}

static bool in_set(const struct found_set *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return true;
	return false;
}

static void add(struct found_set *s, pid_t pid, int fd)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->v = fa_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = (struct found){ .pid = pid, .fd = fd, .done = false };
}

/* What a sweep looks for. */
struct target {
	const char *entry; /* "NAME=nonce", or NULL */
	pid_t pgid;        /* a group whose members go too; 0 = none */
	uid_t uid;         /* only this user's environments are read */
};

/* @pid runs as @uid: only such processes' environments are read. */
static bool ours(pid_t pid, uid_t uid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	return stat(path, &st) == 0 && st.st_uid == uid;
}

/* @pid's environment holds @entry. */
static bool marked(pid_t pid, const char *entry)
{
	char path[64];
	char *env;
	size_t len = 0;
	bool hit;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	env = slurp(path, &len);
	hit = env != NULL && has_entry(env, len, entry);
	free(env);
	return hit;
}

/* Look at process @pid: when it is a target, SIGKILL it and keep it in
 * @s. Returns whether it is a target still alive. */
static bool visit(struct found_set *s, pid_t pid, const struct target *t)
{
	char state;
	pid_t ppid, pgrp;
	bool member, hit;
	int fd;

	if (!proc_stat(pid, &state, &ppid, &pgrp))
		return false;
	member = t->pgid > 0 && pgrp == t->pgid && pid != t->pgid;
	/* a zombie shows no environment */
	if (!member && (t->entry == NULL || state == 'Z' || !ours(pid, t->uid)))
		return false;
	/* the pidfd first: what we then read and signal is that process,
	 * even should its pid be reused meanwhile */
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* gone before the pidfd, that pid may name another process now */
	if (member && fd >= 0 && (!proc_stat(pid, &state, &ppid, &pgrp) || pgrp != t->pgid))
		member = false;
	hit = member || (t->entry != NULL && marked(pid, t->entry));
	if (!hit) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (fd >= 0)
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	else
		kill(pid, SIGKILL);
	if (in_set(s, pid)) {
		if (fd >= 0)
			close(fd);
	} else {
		add(s, pid, fd);
	}
	return state != 'Z' && state != 'X';
}

/* One pass over /proc; returns how many targets were alive. */
static size_t scan(struct found_set *s, const struct target *t)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	size_t alive = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *end = NULL;
		long pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid == self)
			continue;
		if (visit(s, (pid_t)pid, t))
			alive++;
	}
	closedir(d);
	return alive;
}

/* Reap what can be reaped; true when nothing is left to wait for. */
static bool reap(struct found_set *s)
{
	bool all = true;

	for (size_t i = 0; i < s->n; i++) {
		struct found *f = &s->v[i];
		siginfo_t si;
		int r = -1;
		char state;
		pid_t ppid, pgrp;

		if (f->done)
			continue;
		memset(&si, 0, sizeof(si));
		if (f->fd >= 0)
			r = waitid((idtype_t)P_PIDFD, (id_t)f->fd, &si, WEXITED | WNOHANG);
		if (f->fd < 0 || (r < 0 && errno == EINVAL))
			r = waitid(P_PID, (id_t)f->pid, &si, WEXITED | WNOHANG);
		if (r == 0 && si.si_pid != 0) {
			f->done = true; /* reaped */
		} else if (r < 0 && errno == ECHILD) {
			/* not our child (yet): gone, or a zombie whose parent is
			 * no process we killed, is nothing more for us to wait for */
			if (!proc_stat(f->pid, &state, &ppid, &pgrp) ||
			    ((state == 'Z' || state == 'X') && !in_set(s, ppid)))
				f->done = true;
		}
		if (!f->done)
			all = false;
	}
	return all;
}

size_t hx_stray_kill(const char *nonce, pid_t pgid)
{
	const struct timespec pause = { 0, ROUND_NS };
	struct found_set s = { 0 };
	struct target t = { .pgid = pgid, .uid = geteuid() };
	char *entry = nonce ? fa_xasprintf("%s=%s", HX_STRAY_ENV, nonce) : NULL;
	int64_t deadline = fa_clock_real_mono_us() + HX_STRAY_SWEEP_US;
	size_t n;

	t.entry = entry;
	for (;;) {
		size_t alive = scan(&s, &t);
		bool reaped = reap(&s);

		if ((alive == 0 && reaped) || fa_clock_real_mono_us() >= deadline)
			break;
		nanosleep(&pause, NULL);
	}
	n = s.n;
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].fd >= 0)
			close(s.v[i].fd);
	free(s.v);
	free(entry);
	return n;
}
