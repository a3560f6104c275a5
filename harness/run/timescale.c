/* timescale.c -- a run on a scaled clock: libfaketime for the clients, and the checks that they
 * follow it. */
#include "timescale.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "environment.h"
#include "stray.h"

/* How long a probe may take, real µs (an interpreter's start included). */
#define PROBE_TIMEOUT_US 15000000

/* libfaketime's shared state (faketime_common.h, 0.9.8 to 0.9.10): the
 * start time every process of the timeline computes from. The probe in
 * hx_timescale_start() catches a library whose layout differs. */
struct ft_start {
	struct timespec real, mon, mon_raw, boot;
};
struct ft_shared {
	uint64_t ticks;
	uint64_t file_idx;
	struct ft_start start;
};

static char sem_name[64], shm_name[64];
static bool published;
static char *env_entries[5];

static const char *const lib_globs[] = {
	"/usr/lib/*/faketime/libfaketimeMT.so.1",
	"/usr/lib/faketime/libfaketimeMT.so.1",
	"/usr/local/lib/faketime/libfaketimeMT.so.1",
};

/* The library's path (owned), or NULL. */
static char *find_lib(void)
{
	const char *own = getenv("FAKEAPI_LIBFAKETIME");
	char *found = NULL;
	glob_t g;

	if (own != NULL && own[0] != '\0')
		return access(own, R_OK) == 0 ? fa_xstrdup(own) : NULL;
	for (size_t i = 0; i < sizeof(lib_globs) / sizeof(lib_globs[0]) && !found; i++) {
		if (glob(lib_globs[i], 0, NULL, &g) == 0 && g.gl_pathc > 0)
			found = fa_xstrdup(g.gl_pathv[0]);
		globfree(&g);
	}
	return found;
}

/*
 * Remove what a harness killed by SIGKILL left in /dev/shm: a segment or
 * semaphore of ours whose process is gone (another live harness's stays).
 */
static void sweep_stale(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char name[NAME_MAX + 2];
		long pid = 0;
		int end = 0;
		bool sem = sscanf(e->d_name, "sem.fakeapi-faketime-sem-%ld%n", &pid, &end) == 1 &&
		           e->d_name[end] == '\0';
		bool shm = !sem &&
		           sscanf(e->d_name, "fakeapi-faketime-shm-%ld%n", &pid, &end) == 1 &&
		           e->d_name[end] == '\0';

		if ((!sem && !shm) || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(name, sizeof(name), "/%s", sem ? e->d_name + 4 : e->d_name);
		if (sem)
			sem_unlink(name);
		else
			shm_unlink(name);
	}
	closedir(d);
}

/* Publish the origin where libfaketime reads its shared start. */
static enum fa_rc publish(struct fa_err *err)
{
	const struct fa_clock_origin *o = fa_clock_origin();
	struct ft_shared *sh;
	sem_t *sem;
	int fd;

	sweep_stale();
	snprintf(sem_name, sizeof(sem_name), "/fakeapi-faketime-sem-%ld", (long)getpid());
	snprintf(shm_name, sizeof(shm_name), "/fakeapi-faketime-shm-%ld", (long)getpid());
	sem_unlink(sem_name);
	shm_unlink(shm_name);
	sem = sem_open(sem_name, O_CREAT | O_EXCL, 0600, 1);
	if (sem == SEM_FAILED) {
		fa_err_set(err, "--time-scale: sem_open %s: %s", sem_name, strerror(errno));
		return FA_EIO;
	}
	sem_close(sem);
	fd = shm_open(shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(*sh)) != 0) {
		fa_err_set(err, "--time-scale: shm_open %s: %s", shm_name, strerror(errno));
		if (fd >= 0)
			close(fd);
		sem_unlink(sem_name);
		return FA_EIO;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED) {
		fa_err_set(err, "--time-scale: mmap %s: %s", shm_name, strerror(errno));
		hx_timescale_stop();
		return FA_EIO;
	}
	memset(sh, 0, sizeof(*sh));
	sh->start.real = o->real;
	sh->start.mon = o->mono;
	sh->start.mon_raw = o->mono_raw;
	sh->start.boot = o->boot;
	munmap(sh, sizeof(*sh));
	published = true;
	return FA_OK;
}

static void build_env(const char *lib, double scale)
{
	const char *pre = getenv("LD_PRELOAD"), *asan = getenv("ASAN_OPTIONS");

	env_entries[0] = pre != NULL && pre[0] != '\0' ? fa_xasprintf("LD_PRELOAD=%s:%s", lib, pre)
	                                               : fa_xasprintf("LD_PRELOAD=%s", lib);
	env_entries[1] = fa_xasprintf("FAKETIME=+0 x%.10g", scale);
	env_entries[2] = fa_xasprintf("FAKETIME_SHARED=%s %s", sem_name, shm_name);
	env_entries[3] = asan != NULL && asan[0] != '\0'
	                         ? fa_xasprintf("ASAN_OPTIONS=%s:verify_asan_link_order=0", asan)
	                         : fa_xstrdup("ASAN_OPTIONS=verify_asan_link_order=0");
	env_entries[4] = NULL;
}

const char *const *hx_timescale_env(void)
{
	return env_entries[0] != NULL ? (const char *const *)env_entries : NULL;
}

void hx_timescale_stop(void)
{
	if (published) {
		sem_unlink(sem_name);
		shm_unlink(shm_name);
		published = false;
	}
	for (size_t i = 0; env_entries[i] != NULL; i++) {
		free(env_entries[i]);
		env_entries[i] = NULL;
	}
}

/* Run @argv on the timeline, its stdout into @out (NUL-terminated, at
 * most @cap - 1 bytes, stderr dropped), for at most PROBE_TIMEOUT_US real
 * µs. False with the reason in @err when it cannot start or time runs out. */
static bool run_probe(char *const argv[], char *out, size_t cap, struct fa_err *err)
{
	char **envp = hx_environment_merge(hx_timescale_env());
	int64_t until = fa_clock_real_mono_us() + PROBE_TIMEOUT_US;
	size_t len = 0;
	int fds[2], status;
	bool ok = false;
	pid_t pid;

	if (pipe(fds) != 0) {
		fa_err_set(err, "pipe: %s", strerror(errno));
		free(envp);
		return false;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(null, 2);
		close(fds[0]);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	free(envp);
	close(fds[1]);
	if (pid < 0) {
		fa_err_set(err, "fork: %s", strerror(errno));
		close(fds[0]);
		return false;
	}
	setpgid(pid, pid);
	hx_stray_own(pid); /* not an orphan for another client's sweep */
	for (;;) {
		struct pollfd pf = { .fd = fds[0], .events = POLLIN };
		int64_t left = until - fa_clock_real_mono_us();
		ssize_t n;

		if (left <= 0) {
			fa_err_set(err, "%s did not finish within %d s", argv[0],
			           PROBE_TIMEOUT_US / 1000000);
			break;
		}
		if (poll(&pf, 1, (int)(left / 1000) + 1) <= 0)
			continue;
		n = read(fds[0], out + len, cap - 1 - len);
		if (n <= 0 || (len += (size_t)n) >= cap - 1) {
			ok = true;
			break;
		}
	}
	out[len] = '\0';
	close(fds[0]);
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	hx_stray_forget(pid);
	if (ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fa_err_set(err, "%s failed (status %d)", argv[0],
		           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		ok = false;
	}
	return ok;
}

int64_t hx_timescale_margin_us(double scale, int64_t real_us)
{
	return scale > 1.0 ? (int64_t)((scale - 1.0) * (double)real_us) : 0;
}

enum fa_rc hx_timescale_check_reading(const char *who, double client_ms, int64_t from_us,
                                      int64_t to_us, struct fa_err *err)
{
	double c_us = client_ms * 1000.0;

	if (c_us >= (double)(from_us - HX_TIMESCALE_SLACK_US) &&
	    c_us <= (double)(to_us + HX_TIMESCALE_SLACK_US))
		return FA_OK;
	fa_err_set(err,
	           "%s's clock does not follow --time-scale %g: it read %+.3f s "
	           "from the harness's virtual clock at the moment it could first have read "
	           "it, outside 0 to %+.3f s (within %d ms); a Go program, a statically "
	           "linked one, or a runtime that reads time without the C library does "
	           "not scale (docs/time-scale.md)",
	           who, fa_clock_scale(), (c_us - (double)from_us) / 1e6,
	           (double)(to_us - from_us) / 1e6, HX_TIMESCALE_SLACK_US / 1000);
	return FA_EINVAL;
}

/* Two readings @out ("ms\nms\n") around a 1 s sleep, taken within
 * [@from_us, @to_us]: on the timeline, and the sleep scaled. */
static enum fa_rc check_pair(const char *who, const char *out, int64_t from_us, int64_t to_us,
                             struct fa_err *err)
{
	double a, b, most = 1000.0 * (1.0 + (fa_clock_scale() - 1.0) / 2.0);

	if (sscanf(out, "%lf %lf", &a, &b) != 2) {
		fa_err_set(err, "%s: the clock probe printed no two readings", who);
		return FA_EIO;
	}
	if (hx_timescale_check_reading(who, a, from_us, to_us, err) != FA_OK ||
	    hx_timescale_check_reading(who, b, from_us, to_us, err) != FA_OK)
		return FA_EINVAL;
	if (b - a < 1000.0 - HX_TIMESCALE_SLACK_US / 1000.0 || b - a > most) {
		fa_err_set(err,
		           "%s's sleep does not follow --time-scale %g: a 1 s sleep "
		           "took %.3f s of virtual time",
		           who, fa_clock_scale(), (b - a) / 1e3);
		return FA_EINVAL;
	}
	return FA_OK;
}

/*
 * Run the probe @argv and check its pair of readings as @who. The
 * readings alone cannot catch a clock that does not scale at all: just
 * after T0 real and virtual time are still close. The real time the
 * probe took can: an unscaled 1 s sleep takes at least 1 s of it, a
 * scaled one 1 / S s, which leaves (1 − 1 / S) s, at least 0.5 s at
 * FA_CLOCK_SCALE_MIN, for the process starts around it.
 */
static enum fa_rc probe(const char *who, char *const argv[], struct fa_err *err)
{
	char out[256];
	int64_t from = fa_clock_wall_us(), real0 = fa_clock_real_mono_us(), real_us;
	enum fa_rc rc;

	if (!run_probe(argv, out, sizeof(out), err))
		return FA_EIO;
	real_us = fa_clock_real_mono_us() - real0;
	rc = check_pair(who, out, from, fa_clock_wall_us(), err);
	if (rc == FA_OK && real_us >= 1000000) {
		fa_err_set(err,
		           "%s's sleep does not follow --time-scale %g: a 1 s sleep "
		           "took %.3f s of real time, where the scale makes it %.3f s",
		           who, fa_clock_scale(), (double)real_us / 1e6, 1.0 / fa_clock_scale());
		rc = FA_EINVAL;
	}
	return rc;
}

static char sh_probe[] = "date +%s%3N; sleep 1; date +%s%3N";

enum fa_rc hx_timescale_start(double scale, struct fa_err *err)
{
	char *argv[] = { "/bin/sh", "-c", sh_probe, NULL };
	char *lib = find_lib();
	struct fa_err why = { { 0 } };

	if (lib == NULL) {
		fa_err_set(err,
		           "--time-scale: libfaketime not found (%s): install Debian's "
		           "faketime package (ci/install-deps does) or set FAKEAPI_LIBFAKETIME",
		           getenv("FAKEAPI_LIBFAKETIME") ? getenv("FAKEAPI_LIBFAKETIME")
		                                         : lib_globs[0]);
		return FA_EIO;
	}
	fa_clock_set_scale(scale);
	if (publish(err) != FA_OK) {
		free(lib);
		return FA_EIO;
	}
	build_env(lib, scale);
	if (probe("libfaketime", argv, &why) != FA_OK) {
		fa_err_set(
		        err, "--time-scale: %s, under %s%s: %s",
		        "the probe `sh -c 'date; sleep 1; "
		        "date'` does not run on the virtual clock",
		        lib,
		        getenv("FAKEAPI_LIBFAKETIME") && *getenv("FAKEAPI_LIBFAKETIME")
		                ? " (FAKEAPI_LIBFAKETIME names it: point it at libfaketimeMT.so.1 "
		                  "or unset it)"
		                : "",
		        why.msg);
		free(lib);
		hx_timescale_stop();
		return FA_EIO;
	}
	free(lib);
	return FA_OK;
}

/* ---- exec mode: which program, and can it follow ------------------ */

/* The next shell word of *@p (quotes removed), owned, or NULL at the
 * end; *@p moves past it. */
static char *next_word(const char **p)
{
	const char *s = *p;
	size_t cap = strlen(s) + 1, n = 0;
	char *w = fa_xmalloc(cap), q = 0;

	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (*s == '\0') {
		free(w);
		*p = s;
		return NULL;
	}
	for (; *s != '\0' && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
		if (q == 0 && (*s == '\'' || *s == '"'))
			q = *s;
		else if (q != 0 && *s == q)
			q = 0;
		else if (*s == '\\' && q != '\'' && s[1] != '\0')
			w[n++] = *++s;
		else
			w[n++] = *s;
	}
	w[n] = '\0';
	*p = s;
	return w;
}

static bool is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	if (eq == NULL || eq == w || !(w[0] == '_' || (w[0] >= 'A' && w[0] <= 'z')))
		return false;
	for (const char *c = w; c < eq; c++)
		if (!(*c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= 'a' && *c <= 'z')))
			return false;
	return true;
}

/* @name on PATH (or as a path when it holds a '/'), owned, or NULL. */
static char *resolve(const char *name)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL, *found = NULL;

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 ? fa_xstrdup(name) : NULL;
	dirs = fa_xstrdup(path != NULL ? path : "/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d != NULL && found == NULL;
	     d = strtok_r(NULL, ":", &save)) {
		char *c = fa_xasprintf("%s/%s", d[0] ? d : ".", name);

		if (access(c, X_OK) == 0)
			found = c;
		else
			free(c);
	}
	free(dirs);
	return found;
}

/* What the file at @path is: its bytes mapped into *@map (*@len). */
static bool map_file(const char *path, unsigned char **map, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 4) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	*len = (size_t)st.st_size;
	*map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return *map != MAP_FAILED;
}

/* A 64-bit ELF @m (@len bytes): does it ask for a program interpreter
 * (dynamic linking, so LD_PRELOAD reaches it)? */
static bool elf_dynamic(const unsigned char *m, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;

	if (len < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return false;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		size_t off = eh->e_phoff + (size_t)i * eh->e_phentsize;
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + off);

		if (off + sizeof(*ph) > len)
			return false;
		if (ph->p_type == PT_INTERP)
			return true;
	}
	return false;
}

/* The interpreters the harness can probe, and how each reads its clock
 * around a 1 s sleep (ms, one reading per line). */
static const struct {
	const char *name; /* basename, or its prefix when it ends in '*' */
	const char *flag;
	const char *code;
} probes[] = {
	{ "sh", "-c", "date +%s%3N; sleep 1; date +%s%3N" },
	{ "dash", "-c", "date +%s%3N; sleep 1; date +%s%3N" },
	{ "bash", "-c", "date +%s%3N; sleep 1; date +%s%3N" },
	{ "python3*", "-c",
	  "import time; print(time.time() * 1000); time.sleep(1); "
	  "print(time.time() * 1000)" },
	{ "node", "-e",
	  "console.log(Date.now()); setTimeout(() => console.log(Date.now()), 1000)" },
	{ "nodejs", "-e",
	  "console.log(Date.now()); setTimeout(() => console.log(Date.now()), 1000)" },
	{ "php*", "-r",
	  "echo microtime(true) * 1000, \"\\n\"; usleep(1000000); "
	  "echo microtime(true) * 1000, \"\\n\";" },
	{ "perl", "-e",
	  "use Time::HiRes qw(time sleep); print time() * 1000, \"\\n\"; "
	  "sleep 1; print time() * 1000, \"\\n\"" },
};

static int probe_of(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		size_t n = strlen(probes[i].name);

		if (probes[i].name[n - 1] == '*' ? strncmp(base, probes[i].name, n - 1) == 0
		                                 : strcmp(base, probes[i].name) == 0)
			return (int)i;
	}
	return -1;
}

/* The program @word names, through `#!` lines: its path (owned) into
 * *@prog, the script chain into *@chain (owned). */
static enum fa_rc follow(const char *word, char **prog, char **chain, struct fa_err *err)
{
	char *path = resolve(word), *text;

	if (path == NULL) {
		fa_err_set(err, "'%s': no such program%s", word,
		           strchr(word, '/') ? "" : " on PATH");
		return FA_EINVAL;
	}
	text = fa_xstrdup("");

	for (int depth = 0; path != NULL && depth < 4; depth++) {
		unsigned char *m;
		size_t len, n;
		const char *p;
		char *line, *w, *t;

		if (!map_file(path, &m, &len)) {
			fa_err_set(err, "%s: cannot read it", path);
			goto fail;
		}
		if (m[0] != '#' || m[1] != '!') {
			munmap(m, len);
			*prog = path;
			*chain = text;
			return FA_OK;
		}
		for (n = 2; n < len && n < 256 && m[n] != '\n'; n++)
			;
		line = fa_xstrndup((const char *)m + 2, n - 2);
		munmap(m, len);
		p = line;
		w = next_word(&p);
		t = fa_xasprintf("%s%s, a script for ", text, path);
		free(text);
		text = t;
		free(path);
		path = NULL;
		if (w != NULL && strcmp(strrchr(w, '/') ? strrchr(w, '/') + 1 : w, "env") == 0) {
			free(w);
			w = next_word(&p);
			while (w != NULL && (w[0] == '-' || is_assignment(w))) {
				free(w);
				w = next_word(&p);
			}
		}
		if (w != NULL)
			path = resolve(w);
		free(w);
		free(line);
	}
	fa_err_set(err, "%s%s: cannot find the program it runs", text, word);
fail:
	free(path);
	free(text);
	return FA_EINVAL;
}

enum fa_rc hx_timescale_check_exec(const char *template, char **what, struct fa_err *err)
{
	const char *p = template;
	char *word = next_word(&p), *prog = NULL, *chain = NULL;
	unsigned char *m = NULL;
	enum fa_rc rc = FA_EINVAL;
	struct fa_err why = { { 0 } };
	size_t len = 0;
	int k;

	while (word != NULL && (is_assignment(word) || strcmp(word, "exec") == 0 ||
	                        strcmp(word, "env") == 0 || strcmp(word, "command") == 0)) {
		free(word);
		word = next_word(&p);
	}
	*what = NULL;
	if (word == NULL || strpbrk(word, "$`{}()<>|;&*?[") != NULL) {
		fa_err_set(err,
		           "--time-scale: cannot tell which program the exec template "
		           "runs (its first word: '%s'), so not whether it follows the virtual "
		           "clock: start the template with the program or a script",
		           word != NULL ? word : "");
		goto out;
	}
	if (follow(word, &prog, &chain, &why) != FA_OK) {
		fa_err_set(err, "--time-scale: %s", why.msg);
		goto out;
	}
	if (!map_file(prog, &m, &len) || memcmp(m, ELFMAG, SELFMAG) != 0) {
		fa_err_set(err, "--time-scale: %s%s is no ELF program the harness can check", chain,
		           prog);
		goto out;
	}
	if (!elf_dynamic(m, len)) {
		fa_err_set(err,
		           "--time-scale: %s%s is statically linked: libfaketime cannot "
		           "reach its clock, so it would wait %g times too long",
		           chain, prog, fa_clock_scale());
		goto out;
	}
	if (memmem(m, len, "\xff Go buildinf:", 14) != NULL) {
		fa_err_set(err,
		           "--time-scale: %s%s is a Go program: Go reads its clock "
		           "without the C library, so libfaketime cannot scale it",
		           chain, prog);
		goto out;
	}
	k = probe_of(prog);
	if (k >= 0) {
		char *argv[] = { prog, (char *)probes[k].flag, (char *)probes[k].code, NULL };

		if (probe(prog, argv, &why) != FA_OK) {
			fa_err_set(err, "--time-scale: %s%s", chain, why.msg);
			goto out;
		}
	}
	*what = fa_xasprintf("%s%s: dynamically linked, not Go%s; only this first program "
	                     "is checked: a program it starts that does not follow the scale "
	                     "(statically linked, Go, or run without LD_PRELOAD) waits %g times "
	                     "too long and is graded as if it chose to",
	                     chain, prog,
	                     k >= 0 ? ", probed: its clock and sleep follow the scale"
	                            : " (not probed)",
	                     fa_clock_scale());
	rc = FA_OK;
out:
	if (m != NULL)
		munmap(m, len);
	free(word);
	free(prog);
	free(chain);
	return rc;
}
