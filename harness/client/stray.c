/* stray.c -- client processes that left their process group: marked, found in /proc, killed. */
#include "stray.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
	const char *entry;  /* "NAME=nonce", or NULL */
	pid_t pgid;         /* a group whose members go too; 0 = none */
	uid_t uid;          /* only this user's environments are read */
	const char *cgroup; /* "0::PATH" line of a client's cgroup, or NULL */
	bool orphans;       /* the harness's children it did not start go too */
};

/* ---- cgroup v2 ----------------------------------------------------------- */

static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static char cg_base[HX_STRAY_CGROUP_MAX - 32]; /* the harness's folder; "" = none */
static size_t cg_mount_len;                    /* the hierarchy's mount point in cg_base */
static atomic_uint cg_next;

/* cgroup.kill (kernel 5.14 on): every process in @dir at once. */
static void cgroup_kill(const char *dir)
{
	char *path = fa_xasprintf("%s/cgroup.kill", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0) {
			/* an older kernel: the scan below signals each one */
		}
		close(fd);
	}
	free(path);
}

/* Empty and remove the cgroup folder @dir and its client folders "cN":
 * what is still in them is killed (cgroup.kill), then each is removed
 * once empty (a few ms at most). */
static void cg_remove_tree(const char *dir)
{
	const struct timespec pause = { 0, ROUND_NS };
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *sub;

		if (de->d_name[0] != 'c' || de->d_name[1] < '0' || de->d_name[1] > '9')
			continue;
		sub = fa_xasprintf("%s/%s", dir, de->d_name);
		cgroup_kill(sub);
		for (int i = 0; i < 50 && rmdir(sub) != 0 && errno == EBUSY; i++)
			nanosleep(&pause, NULL);
		free(sub);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

static void cg_remove_base(void)
{
	cg_remove_tree(cg_base);
}

/* The folders of harnesses that died without removing theirs (SIGKILL):
 * "fakeapi-harness-PID" in @parent whose PID is gone. */
static void cg_remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end = NULL, *dir;
		long pid;

		if (strncmp(de->d_name, "fakeapi-harness-", 16) != 0)
			continue;
		pid = strtol(de->d_name + 16, &end, 10);
		if (end == de->d_name + 16 || *end != '\0' || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		dir = fa_xasprintf("%s/%s", parent, de->d_name);
		cg_remove_tree(dir);
		free(dir);
	}
	if (d != NULL)
		closedir(d);
}

/* The cgroup2 mount point from /proc/self/mountinfo into @out. */
static bool cg_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char mnt[512];
		const char *dash = strstr(line, " - cgroup2 ");

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - cgroup2 SOURCE OPTS */
		if (dash != NULL && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1 &&
		    strlen(mnt) < len) {
			memcpy(out, mnt, strlen(mnt) + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void cg_init(void)
{
	char mnt[512], line[1024], path[sizeof(cg_base)];
	FILE *f;
	bool have = false;

	/* FAKEAPI_NO_CGROUP=1: the fallback sweep alone (a knob for tests) */
	if (getenv("FAKEAPI_NO_CGROUP") != NULL || !cg_mount(mnt, sizeof(mnt)) ||
	    (f = fopen("/proc/self/cgroup", "re")) == NULL)
		return;
	while (!have && fgets(line, sizeof(line), f) != NULL)
		have = strncmp(line, "0::", 3) == 0;
	fclose(f);
	if (!have)
		return;
	line[strcspn(line, "\n")] = '\0';
	if (snprintf(path, sizeof(path), "%s%s/fakeapi-harness-%ld", mnt,
	             strcmp(line + 3, "/") == 0 ? "" : line + 3,
	             (long)getpid()) >= (int)sizeof(path) ||
	    (mkdir(path, 0755) != 0 && errno != EEXIST))
		return;
	memcpy(cg_base, path, sizeof(path));
	cg_mount_len = strlen(mnt);
	atexit(cg_remove_base);
	*strrchr(path, '/') = '\0';
	cg_remove_stale(path);
}

bool hx_stray_cgroup_new(char out[HX_STRAY_CGROUP_MAX])
{
	out[0] = '\0';
	pthread_once(&cg_once, cg_init);
	if (cg_base[0] == '\0')
		return false;
	snprintf(out, HX_STRAY_CGROUP_MAX, "%s/c%u", cg_base, atomic_fetch_add(&cg_next, 1));
	if (mkdir(out, 0755) == 0)
		return true;
	out[0] = '\0';
	return false;
}

void hx_stray_cgroup_join(const char *dir)
{
	char path[HX_STRAY_CGROUP_MAX + 16], digits[24];
	size_t n = 0, len = strlen(dir);
	long pid = (long)getpid();
	int fd;

	if (len == 0 || len + sizeof("/cgroup.procs") > sizeof(path))
		return;
	memcpy(path, dir, len);
	memcpy(path + len, "/cgroup.procs", sizeof("/cgroup.procs"));
	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid > 0);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, digits + sizeof(digits) - n, n) < 0) {
		/* left where it was: the sweep falls back */
	}
	close(fd);
}

/* Does @pid's cgroup v2 line read @line ("0::PATH")? */
static bool in_cgroup(pid_t pid, const char *line)
{
	char path[64], *text;
	size_t len = 0, want = strlen(line);
	bool hit = false;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	text = slurp(path, &len);
	for (size_t at = 0; text != NULL && at < len && !hit;) {
		const char *end = memchr(text + at, '\n', len - at);
		size_t n = end ? (size_t)(end - (text + at)) : len - at;

		hit = n == want && memcmp(text + at, line, want) == 0;
		at += n + 1;
	}
	free(text);
	return hit;
}

/* ---- the harness's own children ------------------------------------------ */

static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t *own_v;
static size_t own_n, own_cap;

void hx_stray_own(pid_t pid)
{
	pthread_mutex_lock(&own_mu);
	if (own_n == own_cap) {
		own_cap = own_cap ? 2 * own_cap : 16;
		own_v = fa_xrealloc(own_v, own_cap * sizeof(*own_v));
	}
	own_v[own_n++] = pid;
	pthread_mutex_unlock(&own_mu);
}

void hx_stray_forget(pid_t pid)
{
	pthread_mutex_lock(&own_mu);
	for (size_t i = 0; i < own_n; i++) {
		if (own_v[i] == pid) {
			own_v[i] = own_v[--own_n];
			break;
		}
	}
	pthread_mutex_unlock(&own_mu);
}

/* Did the harness start @pid itself, or is @pgrp the group of one? */
static bool owned(pid_t pid, pid_t pgrp)
{
	bool hit = false;

	pthread_mutex_lock(&own_mu);
	for (size_t i = 0; i < own_n && !hit; i++)
		hit = own_v[i] == pid || own_v[i] == pgrp;
	pthread_mutex_unlock(&own_mu);
	return hit;
}

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
	/* an orphan the subreaper adopted, or (live) a process in the cgroup */
	if (!member && t->orphans && ppid == getpid() && !owned(pid, pgrp))
		member = true;
	if (!member && t->cgroup != NULL && state != 'Z' && in_cgroup(pid, t->cgroup))
		member = true;
	/* a zombie shows no environment */
	if (!member && (t->entry == NULL || state == 'Z' || !ours(pid, t->uid)))
		return false;
	/* the pidfd first: what we then read and signal is that process,
	 * even should its pid be reused meanwhile */
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* gone before the pidfd, that pid may name another process now */
	if (member && fd >= 0 && !proc_stat(pid, &state, &ppid, &pgrp))
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

size_t hx_stray_kill(const char *nonce, pid_t pgid, const char *cgroup)
{
	const struct timespec pause = { 0, ROUND_NS };
	struct found_set s = { 0 };
	struct target t = { .pgid = pgid, .uid = geteuid() };
	char *entry = nonce ? fa_xasprintf("%s=%s", HX_STRAY_ENV, nonce) : NULL;
	char *line = NULL;
	int64_t deadline = fa_clock_real_mono_us() + HX_STRAY_SWEEP_US;
	size_t n;

	t.entry = entry;
	if (cgroup != NULL && cgroup[0] != '\0' && strlen(cgroup) > cg_mount_len) {
		line = fa_xasprintf("0::%s", cgroup + cg_mount_len);
		t.cgroup = line;
		cgroup_kill(cgroup);
	} else {
		t.orphans = true;
	}
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
	if (line != NULL)
		rmdir(cgroup); /* empty now, or kept by a process that outlived the sweep */
	free(line);
	return n;
}
