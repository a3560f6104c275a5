/* exec.c -- one client process per task: command line, process group, timeout, reaping. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "environment.h"
#include "timescale.h"
#include "utf8.h"

/* A growing string; every append keeps it NUL-terminated. */
struct buf {
	char *s;
	size_t len;
	size_t cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	fa_xappend(&b->s, &b->len, &b->cap, s, n, 64);
}

static void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

char *hx_exec_quote(const char *s)
{
	struct buf b = { 0 };

	buf_adds(&b, "'");
	for (const char *p = s ? s : ""; *p != '\0'; p++) {
		if (*p == '\'')
			buf_adds(&b, "'\\''");
		else
			buf_add(&b, p, 1);
	}
	buf_adds(&b, "'");
	return b.s;
}

/* Every member of struct hx_exec_vars: its placeholder (NULL: none) and
 * its environment variable (NULL: none). */
static const struct {
	const char *placeholder;
	const char *env;
	size_t off;
} facts[] = {
#define V(ph, env, m)                                                                              \
	{                                                                                          \
		ph, env, offsetof(struct hx_exec_vars, m)                                          \
	}
	V("{url}", NULL, url),
	V("{method}", "FAKEAPI_METHOD", method),
	V("{body_file}", "FAKEAPI_BODY_FILE", body_file),
	V("{task}", "FAKEAPI_TASK", task),
	V("{max_attempts}", "FAKEAPI_MAX_ATTEMPTS", max_attempts),
	V("{max_retries}", "FAKEAPI_MAX_RETRIES", max_retries),
	V("{max_wait_s}", "FAKEAPI_MAX_WAIT_S", max_wait_s),
	V("{timeout_s}", "FAKEAPI_TIMEOUT_S", timeout_s),
	V("{rpm}", "FAKEAPI_RPM", rpm),
	V("{tpm}", "FAKEAPI_TPM", tpm),
	V("{period_s}", "FAKEAPI_PERIOD_S", period_s),
	V("{headers_file}", "FAKEAPI_HEADERS_FILE", headers_file),
	V(NULL, "FAKEAPI_HEADERS", headers_json),
#undef V
};
#define N_FACTS (sizeof(facts) / sizeof(facts[0]))

static const char *fact_value(const struct hx_exec_vars *v, size_t i)
{
	return *(const char *const *)((const char *)v + facts[i].off);
}

char *hx_exec_expand(const char *tmpl, const struct hx_exec_vars *v)
{
	struct buf b = { 0 };
	const char *p = tmpl;

	buf_adds(&b, "");
	while (*p != '\0') {
		size_t i;

		for (i = 0; *p == '{' && i < N_FACTS; i++)
			if (facts[i].placeholder != NULL &&
			    strncmp(p, facts[i].placeholder, strlen(facts[i].placeholder)) == 0)
				break;
		if (*p != '{' || i == N_FACTS) {
			buf_add(&b, p, 1);
			p++;
			continue;
		}
		char *q = hx_exec_quote(fact_value(v, i));

		buf_adds(&b, q);
		free(q);
		p += strlen(facts[i].placeholder);
	}
	return b.s;
}

char **hx_exec_vars_env(const struct hx_exec_vars *v)
{
	char **env = fa_xcalloc(N_FACTS + 1, sizeof(*env));
	size_t k = 0;

	for (size_t i = 0; i < N_FACTS; i++) {
		if (facts[i].env == NULL)
			continue;
		if (fact_value(v, i) != NULL)
			env[k++] = fa_xasprintf("%s=%s", facts[i].env, fact_value(v, i));
		else
			env[k++] = fa_xstrdup(facts[i].env); /* unset, even if inherited */
	}
	return env;
}

enum fa_rc hx_exec_write_headers(const char *path, const struct fa_header *h, size_t n,
                                 struct fa_err *err)
{
	FILE *f = fopen(path, "w");
	enum fa_rc rc = FA_EIO;

	if (f == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s: %s\n", h[i].name, h[i].value);
	if (fclose(f) != 0)
		goto out;
	rc = FA_OK;
out:
	if (rc != FA_OK)
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
	return rc;
}

enum fa_rc hx_exec_write_body(const char *path, const cJSON *body, struct fa_err *err)
{
	char *text = body ? cJSON_PrintUnformatted(body) : NULL;
	FILE *f = fopen(path, "w");
	enum fa_rc rc = FA_EIO;

	if (f == NULL) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	if (text != NULL)
		fputs(text, f);
	if (fclose(f) != 0) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	rc = FA_OK;
out:
	free(text);
	return rc;
}

char *hx_exec_last_line(const char *path)
{
	char buf[HX_EXEC_STDERR_TAIL + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t end;
	ssize_t n = 0;
	char *line, *nl;

	if (fd >= 0) {
		end = lseek(fd, 0, SEEK_END);
		if (end > HX_EXEC_STDERR_TAIL)
			lseek(fd, end - HX_EXEC_STDERR_TAIL, SEEK_SET);
		else
			lseek(fd, 0, SEEK_SET);
		n = read(fd, buf, HX_EXEC_STDERR_TAIL);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	nl = memrchr(buf, '\n', (size_t)n);
	line = nl ? nl + 1 : buf;
	return fa_utf8_printable(line, strnlen(line, 200));
}

char *hx_exec_tail(const char *path)
{
	char buf[HX_EXEC_STDERR_TAIL + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t end;
	ssize_t n;
	char *start = buf, *nl;

	if (fd < 0)
		return NULL;
	end = lseek(fd, 0, SEEK_END);
	lseek(fd, end > HX_EXEC_STDERR_TAIL ? end - HX_EXEC_STDERR_TAIL : 0, SEEK_SET);
	n = read(fd, buf, HX_EXEC_STDERR_TAIL);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	/* a cut first line is no line: start at the next whole one */
	if (end > HX_EXEC_STDERR_TAIL && (nl = memchr(buf, '\n', (size_t)n)) != NULL)
		start = nl + 1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	while (*start == '\n' || *start == '\r')
		start++;
	return start < buf + n ? fa_xstrndup(start, (size_t)(buf + n - start)) : NULL;
}

char *hx_exec_task_url(const char *base, const char *path, const char *task_id)
{
	return fa_xasprintf("%s%s%cfa_task=%s", base, path, strchr(path, '?') ? '&' : '?', task_id);
}

char **hx_exec_env(const char *const *extra, const char *mark)
{
	const char *const *ts = hx_timescale_env();
	size_t n_extra = 0, n_ts = 0;
	const char **add;
	char **env;

	while (extra != NULL && extra[n_extra] != NULL)
		n_extra++;
	while (ts != NULL && ts[n_ts] != NULL)
		n_ts++;
	/* the clock's entries after the others: a later entry wins */
	add = fa_xcalloc(n_extra + n_ts + 2, sizeof(*add));
	for (size_t j = 0; j < n_extra; j++)
		add[j] = extra[j];
	for (size_t j = 0; j < n_ts; j++)
		add[n_extra + j] = ts[j];
	add[n_extra + n_ts] = mark;
	env = hx_environment_merge(add);
	free(add);
	return env;
}

/* Point @fd at @path (or /dev/null), or die the way a shell that cannot
 * start does. Only async-signal-safe calls: we are between fork and exec. */
static void redirect(int fd, const char *path, int flags)
{
	static const char msg[] = "fakeapi-harness: cannot open the client's stdio file\n";
	int nfd = open(path ? path : "/dev/null", flags, 0600);

	if (nfd < 0) {
		if (write(2, msg, sizeof(msg) - 1) < 0) {
			/* nothing more we can say */
		}
		_exit(127);
	}
	if (nfd != fd) {
		dup2(nfd, fd);
		close(nfd);
	}
}

void hx_exec_client_env_init(struct hx_exec_client_env *e, const char *const *extra)
{
	hx_stray_nonce(e->marker);
	hx_stray_cgroup_new(e->cgroup);
	snprintf(e->mark, sizeof(e->mark), "%s=%s", HX_STRAY_ENV, e->marker);
	e->envp = hx_exec_env(extra, e->mark);
}

void hx_exec_client_env_release(struct hx_exec_client_env *e)
{
	if (e == NULL)
		return;
	free(e->envp);
	e->envp = NULL;
}

void hx_exec_child_setup(const char *cgroup)
{
	struct sigaction dfl;
	sigset_t none;

	hx_stray_cgroup_join(cgroup); /* first: whatever it forks stays in it */
	setpgid(0, 0);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void hx_exec_child_exec(const char *cmd, char *const envp[])
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };

	if (close_range(3, ~0U, 0) != 0)
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	execve("/bin/sh", argv, envp);
	_exit(127);
}

enum fa_rc hx_exec_start(struct hx_exec_proc *p, const struct hx_exec_spec *spec,
                         struct fa_err *err)
{
	struct hx_exec_client_env env;
	enum fa_rc rc = FA_EIO;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->exit_code = -1;
	p->pidfd = -1;
	hx_exec_client_env_init(&env, spec->env);
	pid = fork();
	if (pid < 0) {
		fa_err_set(err, "cannot start client: fork: %s", strerror(errno));
		if (env.cgroup[0] != '\0')
			rmdir(env.cgroup);
		goto out;
	}
	if (pid == 0) {
		int mode = O_WRONLY | O_CREAT | (spec->append ? O_APPEND : O_TRUNC);

		hx_exec_child_setup(env.cgroup);
		redirect(0, NULL, O_RDONLY);
		redirect(1, spec->stdout_path, mode);
		redirect(2, spec->stderr_path, mode);
		hx_exec_child_exec(spec->cmd, env.envp);
	}
	/* set it from this side too: a kill(-pid) right after we return must
	 * not miss a child that has not run yet; EACCES once it has exec'd is
	 * harmless, the child did it first */
	setpgid(pid, pid);
	hx_exec_proc_init(p, pid, env.marker, env.cgroup);
	if (spec->timeout_us > 0)
		p->deadline_us = p->t_start_us + spec->timeout_us;
	rc = FA_OK;
out:
	hx_exec_client_env_release(&env);
	return rc;
}

void hx_exec_proc_init(struct hx_exec_proc *p, pid_t pid, const char *marker, const char *cgroup)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->running = true;
	p->t_start_us = fa_clock_mono_us();
	p->exit_code = -1;
	if (marker != NULL)
		snprintf(p->marker, sizeof(p->marker), "%s", marker);
	if (cgroup != NULL)
		snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgroup);
	hx_stray_own(pid); /* not an orphan for another client's sweep */
	/* our unreaped child: the pid cannot name another process yet */
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
}

static void close_pidfd(struct hx_exec_proc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

/* Reap the exited leader, after killing what is left of its group and
 * what left the group but carries the client's marker (hx_stray_kill;
 * the group's orphans, adopted by a subreaper harness, are reaped there).
 * The leader is still a zombie until the end, so its pid, which names the
 * group, cannot have been reused meanwhile. */
static void reap(struct hx_exec_proc *p)
{
	int status = 0;
	pid_t got;

	kill(-p->pid, SIGKILL);
	hx_stray_kill(p->marker[0] != '\0' ? p->marker : NULL, p->pid, p->cgroup);
	do
		got = waitpid(p->pid, &status, 0);
	while (got < 0 && errno == EINTR);
	hx_stray_forget(p->pid);
	p->running = false;
	p->t_exit_us = fa_clock_mono_us();
	close_pidfd(p);
	if (got == p->pid && WIFEXITED(status)) {
		p->exit_code = WEXITSTATUS(status);
	} else {
		p->exit_code = -1;
		if (got == p->pid && WIFSIGNALED(status))
			p->term_signal = WTERMSIG(status);
	}
}

bool hx_exec_poll(struct hx_exec_proc *p, int64_t now_us)
{
	siginfo_t si;

	if (!p->running)
		return true;
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: look without reaping, so the group can be killed first */
	if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
		if (si.si_pid == p->pid) {
			reap(p);
			return true;
		}
	} else if (errno == ECHILD) {
		/* not ours any more; nothing to wait for but what it left */
		p->running = false;
		p->t_exit_us = fa_clock_mono_us();
		close_pidfd(p);
		hx_stray_forget(p->pid);
		if (p->marker[0] != '\0' ||
		    p->cgroup[0] != '\0') /* its pid may name another group now */
			hx_stray_kill(p->marker[0] != '\0' ? p->marker : NULL, 0, p->cgroup);
		return true;
	}
	if (p->deadline_us > 0 && now_us >= p->deadline_us && p->t_term_us == 0)
		hx_exec_stop(p, now_us);
	else if (p->t_term_us > 0 &&
	         fa_clock_real_mono_us() >= p->t_term_real_us + HX_EXEC_KILL_GRACE_US)
		kill(-p->pid, SIGKILL);
	return false;
}

void hx_exec_stop(struct hx_exec_proc *p, int64_t now_us)
{
	if (!p->running || p->t_term_us > 0)
		return;
	p->timed_out = true;
	p->t_term_us = now_us;
	p->t_term_real_us = fa_clock_real_mono_us();
	kill(-p->pid, SIGTERM);
}

void hx_exec_terminate(struct hx_exec_proc *p, int64_t now_us)
{
	if (!p->running || p->t_term_us > 0)
		return;
	p->t_term_us = now_us;
	p->t_term_real_us = fa_clock_real_mono_us();
	kill(-p->pid, SIGTERM);
}

void hx_exec_kill(struct hx_exec_proc *p)
{
	/* the leader is unreaped (running), so its pid still names the group */
	if (!p->running)
		return;
	kill(-p->pid, SIGKILL);
}

void hx_exec_wait_fds(struct pollfd *pf, size_t n, int timeout_ms)
{
	if (n > 0) {
		poll(pf, (nfds_t)n, timeout_ms);
	} else if (timeout_ms > 0) {
		struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
}

void hx_exec_wait_any(struct hx_exec_proc *const *p, size_t n, int timeout_ms)
{
	struct pollfd *pf = fa_xcalloc(n + 1, sizeof(*pf));
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (p[i]->running && p[i]->pidfd >= 0)
			pf[k++] = (struct pollfd){ .fd = p[i]->pidfd, .events = POLLIN };
	hx_exec_wait_fds(pf, k, timeout_ms);
	free(pf);
}

void hx_exec_wait(struct hx_exec_proc *p)
{
	while (!hx_exec_poll(p, fa_clock_mono_us()))
		hx_exec_wait_any(&p, 1, 10);
}
