/* stdio_client.c -- a stdio client session: one process per scenario speaking JSON lines. */
#include "stdio_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "chat.h"
#include "messages.h"
#include "route.h"
#include "clock.h"
#include "exec.h"
#include "timescale.h"

/* How long a reaped client's stdout may stay open (held by a process that
 * left its group) before it is no longer waited for, µs. */
#define DRAIN_US 1000000

/* Reads per descriptor in one pump, so a flood cannot stall the loop. */
#define READS_PER_PUMP 16

struct hx_stdio {
	struct hx_exec_proc proc; /* the shell; reaped with hx_exec_poll() */
	int in_fd;                /* the client's stdin (write end); -1 once closed */
	int out_fd;               /* its stdout (read end); -1 at EOF */
	int err_fd;               /* its stderr (read end); -1 at EOF */
	char *pending;            /* owned: bytes not yet written to stdin */
	size_t pending_len;
	size_t pending_cap;
	bool closing;           /* shutdown sent: close stdin once pending is out */
	int64_t t_shutdown_us;  /* fa_clock_real_mono_us() of the shutdown (the grace
	                           is the client's own time, never scaled); 0 = none */
	int64_t grace_us;       /* shutdown to SIGKILL */
	bool killed;            /* the harness SIGKILLed the group */
	bool early;             /* ended before shutdown or a kill */
	int64_t t_reaped_us;    /* fa_clock_real_mono_us() of the reaping; 0 = not yet */
	int64_t t0_us;          /* origin of the stamps */
	int64_t t_fork_wall_us; /* fa_clock_wall_us() just before the fork: the
	                           earliest its clock could be read */
	char *line;             /* owned: the line being read, line_cap bytes */
	size_t line_len;
	size_t line_cap;
	bool line_cut;                   /* the line passed HX_CLIENT_LOG_MAX_LINE */
	char tail[HX_STDIO_STDERR_TAIL]; /* the last bytes of stderr */
	size_t tail_len;
	struct hx_stdio_capture *capture; /* borrowed: every byte read, or NULL */
	struct hx_client_log log;
};

/* ---- task lines ------------------------------------------------------ */

char *hx_stdio_key_env(const char *key_id)
{
	char *s = fa_xasprintf("FAKEAPI_KEY_%s", key_id ? key_id : "");

	for (char *p = s + strlen("FAKEAPI_KEY_"); *p != '\0'; p++) {
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
		else if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	}
	return s;
}

static void add_str_or_null(cJSON *obj, const char *name, const char *s)
{
	if (s != NULL)
		fa_xcheck(cJSON_AddStringToObject(obj, name, s), "task line");
	else
		fa_xcheck(cJSON_AddNullToObject(obj, name), "task line");
}

static void add_int_or_null(cJSON *obj, const char *name, bool given, double v)
{
	if (given)
		fa_xcheck(cJSON_AddNumberToObject(obj, name, v), "task line");
	else
		fa_xcheck(cJSON_AddNullToObject(obj, name), "task line");
}

/* Set member @name of @obj to @v (taken): in its place when it is there,
 * else last. */
static void put(cJSON *obj, const char *name, cJSON *v)
{
	fa_xcheck(v, "task line");
	if (cJSON_GetObjectItemCaseSensitive(obj, name) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, name, v);
	else
		cJSON_AddItemToObject(obj, name, v);
}

enum fa_route_kind hx_stdio_task_kind(const struct fa_scenario *sc, const struct fa_task_spec *t)
{
	const struct fa_route_spec *r =
	        fa_route_of_target(sc->routes, sc->n_routes, t->method, t->path);

	return r != NULL ? r->kind : FA_ROUTE_SCRIPTED;
}

void hx_stdio_task_body(cJSON *line, const cJSON *body, enum fa_route_kind kind)
{
	const cJSON *stream = cJSON_GetObjectItemCaseSensitive(body, "stream");
	struct fa_chat_req req = { 0 };
	char msg[128];
	char *text = body != NULL ? fa_xcheck(cJSON_PrintUnformatted(body), "task body") : NULL;

	put(line, "body", text != NULL ? cJSON_CreateString(text) : cJSON_CreateNull());
	put(line, "stream", cJSON_CreateBool(cJSON_IsObject(body) && cJSON_IsTrue(stream)));
	/* the LLM rate-limit guide's cost, as the provider journals it: a
	 * Messages request counts its system text too */
	if (text != NULL &&
	    (kind == FA_ROUTE_MESSAGES
	             ? fa_messages_parse(text, strlen(text), &req, msg, sizeof(msg))
	             : fa_chat_parse(text, strlen(text), &req, msg, sizeof(msg))) == FA_OK)
		put(line, "tokens", cJSON_CreateNumber((double)req.prompt_tokens + req.max_tokens));
	else
		put(line, "tokens", cJSON_CreateNull());
	fa_chat_req_release(&req);
	free(text);
}

cJSON *hx_stdio_task_json(const struct fa_scenario *sc, const struct fa_task_spec *t,
                          const char *url, int64_t deadline_ms)
{
	const struct fa_key *key = fa_scenario_key_by_id(sc, t->key);
	cJSON *o = fa_xcheck(cJSON_CreateObject(), "task line");
	cJSON *headers, *budget;
	char *body = t->body ? cJSON_PrintUnformatted(t->body) : NULL;
	char *key_env = hx_stdio_key_env(t->key);
	char *scope = NULL;

	if (key != NULL)
		scope = sc->scope == FA_SCOPE_KEY ? fa_xasprintf("key:%s", key->id)
		                                  : fa_xasprintf("user:%s", key->user);
	add_str_or_null(o, "type", "task");
	add_str_or_null(o, "id", t->id);
	add_str_or_null(o, "class", t->klass);
	add_str_or_null(o, "method", t->method);
	add_str_or_null(o, "url", url);
	headers = fa_xcheck(cJSON_AddObjectToObject(o, "headers"), "task line");
	for (size_t i = 0; i < t->n_headers; i++)
		add_str_or_null(headers, t->headers[i].name, t->headers[i].value);
	if (t->body != NULL)
		fa_xcheck(body, "task body");
	add_str_or_null(o, "body", body);
	add_str_or_null(o, "goal", t->goal);
	add_str_or_null(o, "key", t->key);
	add_str_or_null(o, "key_env", key_env);
	add_str_or_null(o, "scope", scope);
	budget = fa_xcheck(cJSON_AddObjectToObject(o, "budget"), "task line");
	add_int_or_null(budget, "max_attempts", t->budget.max_attempts > 0, t->budget.max_attempts);
	add_int_or_null(budget, "max_wait_s", t->budget.max_wait_s >= 0, t->budget.max_wait_s);
	fa_xcheck(cJSON_AddNumberToObject(o, "deadline_ms", (double)deadline_ms), "task line");
	hx_stdio_task_body(o, t->body, hx_stdio_task_kind(sc, t));
	if (sc->harness.pacing.given) {
		const struct fa_pacing_spec *p = &sc->harness.pacing;
		cJSON *pc = fa_xcheck(cJSON_AddObjectToObject(o, "pacing"), "task line");

		add_int_or_null(pc, "rpm", p->rpm > 0, p->rpm);
		add_int_or_null(pc, "tpm", p->tpm > 0, p->tpm);
		add_int_or_null(pc, "period_s", true, p->period_s);
	} else {
		fa_xcheck(cJSON_AddNullToObject(o, "pacing"), "task line");
	}
	free(body);
	free(key_env);
	free(scope);
	return o;
}

/* ---- the process ----------------------------------------------------- */

/* The child's side, its pipe ends in @fds (stdin, stdout, stderr): never
 * returns. Only async-signal-safe calls: other threads may hold locks we
 * would need. */
static void child_exec(const int fds[3], const char *cmd, char *const envp[], const char *cgroup)
{
	int high[3];

	hx_exec_child_setup(cgroup);
	/* first lift every end above 2 (a harness started with a standard
	 * descriptor closed gets a pipe end there), then put each in place:
	 * no dup2 overwrites an end still to be moved, and each clears
	 * O_CLOEXEC on its target */
	for (int k = 0; k < 3; k++) {
		high[k] = fcntl(fds[k], F_DUPFD, 3);
		if (high[k] < 0)
			_exit(127);
	}
	for (int k = 0; k < 3; k++)
		if (dup2(high[k], k) < 0)
			_exit(127);
	hx_exec_child_exec(cmd, envp);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

enum fa_rc hx_stdio_start(const struct hx_stdio_spec *spec, struct hx_stdio **out,
                          struct fa_err *err)
{
	struct hx_exec_client_env env;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	struct hx_stdio *c = NULL;
	enum fa_rc rc = FA_EIO;
	pid_t pid;
	int64_t t_fork_wall;

	*out = NULL;
	hx_exec_client_env_init(&env, spec->env);
	/* O_CLOEXEC: another thread's client must not inherit our ends */
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(outp, O_CLOEXEC) != 0 ||
	    pipe2(errp, O_CLOEXEC) != 0) {
		fa_err_set(err, "cannot start client: pipe: %s", strerror(errno));
		goto out;
	}
	t_fork_wall = fa_clock_wall_us();
	pid = fork();
	if (pid < 0) {
		fa_err_set(err, "cannot start client: fork: %s", strerror(errno));
		if (env.cgroup[0] != '\0')
			rmdir(env.cgroup);
		goto out;
	}
	if (pid == 0) {
		int fds[3] = { in[0], outp[1], errp[1] };

		child_exec(fds, spec->cmd, env.envp, env.cgroup);
	}
	/* as exec.c: a kill(-pid) right after we return must reach it */
	setpgid(pid, pid);
	c = fa_xcalloc(1, sizeof(*c));
	hx_exec_proc_init(&c->proc, pid, env.marker, env.cgroup);
	c->t_fork_wall_us = t_fork_wall;
	c->in_fd = in[1];
	c->out_fd = outp[0];
	c->err_fd = errp[0];
	in[1] = outp[0] = errp[0] = -1;
	fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
	c->grace_us = spec->grace_us > 0 ? spec->grace_us : HX_STDIO_GRACE_US;
	c->t0_us = spec->t0_us;
	c->capture = spec->capture;
	hx_client_log_init(&c->log);
	hx_client_log_canaries(&c->log, spec->key_canary, spec->body_canary);
	*out = c;
	rc = FA_OK;
out:
	for (int k = 0; k < 2; k++) {
		close_fd(&in[k]);
		close_fd(&outp[k]);
		close_fd(&errp[k]);
	}
	hx_exec_client_env_release(&env);
	return rc;
}

/*
 * write() that cannot raise SIGPIPE in the harness: the signal is blocked
 * in this thread for the call and, when the write raised it, consumed.
 */
static ssize_t write_quiet(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	const struct timespec zero = { 0, 0 };
	bool was_pending;
	ssize_t n;
	int saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	n = write(fd, buf, len);
	saved = errno;
	if (n < 0 && saved == EPIPE && !was_pending)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

/* Write what is pending without blocking; close stdin when shutting down
 * and done, or when the client no longer reads it. */
static void flush(struct hx_stdio *c)
{
	while (c->in_fd >= 0 && c->pending_len > 0) {
		ssize_t n = write_quiet(c->in_fd, c->pending, c->pending_len);

		if (n > 0) {
			memmove(c->pending, c->pending + n, c->pending_len - (size_t)n);
			c->pending_len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			break;
		} else {
			/* EPIPE: nobody reads any more; drop what is left */
			c->pending_len = 0;
			close_fd(&c->in_fd);
		}
	}
	if (c->closing && c->pending_len == 0)
		close_fd(&c->in_fd);
}

/* Queue @json as one line. */
static void queue(struct hx_stdio *c, const cJSON *json)
{
	char *text;
	size_t len;

	if (c->in_fd < 0 || c->closing)
		return;
	text = fa_xcheck(cJSON_PrintUnformatted(json), "protocol line");
	len = strlen(text);
	c->pending = fa_xgrow(c->pending, &c->pending_cap, c->pending_len + len + 1, 4096);
	memcpy(c->pending + c->pending_len, text, len);
	c->pending[c->pending_len + len] = '\n';
	c->pending_len += len + 1;
	free(text);
	flush(c);
}

void hx_stdio_send_task(struct hx_stdio *c, const cJSON *task)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(task, "id");
	const char *id = cJSON_IsString(v) ? v->valuestring : NULL;

	if (id != NULL)
		hx_client_log_task(&c->log, id);
	queue(c, task);
}

void hx_stdio_send(struct hx_stdio *c, const cJSON *msg)
{
	queue(c, msg);
}

void hx_stdio_capture_release(struct hx_stdio_capture *c)
{
	if (c == NULL)
		return;
	free(c->out);
	free(c->err);
	memset(c, 0, sizeof(*c));
}

/* Keep @n bytes of one stream (*@buf holding *@len of *@cap) in the
 * capture, as far as its bound lets. */
static void capture(struct hx_stdio_capture *cap, char **buf, size_t *len, size_t *bcap,
                    const char *p, size_t n)
{
	size_t room = HX_STDIO_CAPTURE_MAX - (cap->out_len + cap->err_len);
	size_t keep = n < room ? n : room;

	cap->dropped += n - keep;
	if (keep == 0)
		return;
	if (*len + keep > *bcap) {
		size_t want = *bcap ? *bcap : 65536;

		while (want < *len + keep)
			want *= 2;
		*buf = fa_xrealloc(*buf, want);
		*bcap = want;
	}
	memcpy(*buf + *len, p, keep);
	*len += keep;
}

/* One complete line read at @t_us. */
static void end_line(struct hx_stdio *c, int64_t t_us)
{
	hx_client_log_line(&c->log, c->line ? c->line : "", c->line_len, c->line_cut, t_us);
	c->line_len = 0;
	c->line_cut = false;
}

static void add_to_line(struct hx_stdio *c, const char *p, size_t n)
{
	if (c->line_cut || n == 0)
		return;
	if (c->line_len + n > HX_CLIENT_LOG_MAX_LINE) {
		c->line_cut = true;
		n = HX_CLIENT_LOG_MAX_LINE - c->line_len;
	}
	c->line = fa_xgrow(c->line, &c->line_cap, c->line_len + n, 4096);
	memcpy(c->line + c->line_len, p, n);
	c->line_len += n;
}

/* Split @n bytes read at @t_us into lines. */
static void feed(struct hx_stdio *c, const char *buf, size_t n, int64_t t_us)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t part = nl ? (size_t)(nl - buf) : n;

		add_to_line(c, buf, part);
		if (nl == NULL)
			break;
		end_line(c, t_us);
		buf += part + 1;
		n -= part + 1;
	}
}

static void read_stdout(struct hx_stdio *c)
{
	char buf[65536];

	for (int round = 0; c->out_fd >= 0 && round < READS_PER_PUMP; round++) {
		ssize_t n = read(c->out_fd, buf, sizeof(buf));
		int64_t t_us = fa_clock_mono_us() - c->t0_us;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			/* a last line without its newline still counts */
			if (c->line_len > 0 || c->line_cut)
				end_line(c, t_us);
			close_fd(&c->out_fd);
			break;
		}
		if (c->capture != NULL)
			capture(c->capture, &c->capture->out, &c->capture->out_len,
			        &c->capture->out_cap, buf, (size_t)n);
		/* lines the capture no longer holds: the line search reports all */
		c->log.raw_cut = c->capture == NULL || c->capture->dropped > 0;
		feed(c, buf, (size_t)n, t_us);
	}
}

static void keep_tail(struct hx_stdio *c, const char *p, size_t n)
{
	if (n >= sizeof(c->tail)) {
		memcpy(c->tail, p + n - sizeof(c->tail), sizeof(c->tail));
		c->tail_len = sizeof(c->tail);
		return;
	}
	if (c->tail_len + n > sizeof(c->tail)) {
		size_t drop = c->tail_len + n - sizeof(c->tail);

		memmove(c->tail, c->tail + drop, c->tail_len - drop);
		c->tail_len -= drop;
	}
	memcpy(c->tail + c->tail_len, p, n);
	c->tail_len += n;
}

static void read_stderr(struct hx_stdio *c)
{
	char buf[16384];

	for (int round = 0; c->err_fd >= 0 && round < READS_PER_PUMP; round++) {
		ssize_t n = read(c->err_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close_fd(&c->err_fd);
			break;
		}
		if (c->capture != NULL)
			capture(c->capture, &c->capture->err, &c->capture->err_len,
			        &c->capture->err_cap, buf, (size_t)n);
		keep_tail(c, buf, (size_t)n);
	}
}

char *hx_stdio_end_str(const struct hx_stdio_end *e)
{
	if (e->exit_code < 0 && e->term_signal > 0 && sigabbrev_np(e->term_signal) != NULL)
		return fa_xasprintf("was killed by signal %d (SIG%s)", e->term_signal,
		                    sigabbrev_np(e->term_signal));
	if (e->exit_code < 0 && e->term_signal > 0)
		return fa_xasprintf("was killed by signal %d", e->term_signal);
	return fa_xasprintf("exited with status %d", e->exit_code);
}

/* The process was just reaped: say how it ended when that broke the
 * protocol. */
static void on_reaped(struct hx_stdio *c, int64_t now)
{
	struct hx_stdio_end e;
	char *how;

	c->t_reaped_us = now;
	c->early = c->t_shutdown_us == 0 && !c->killed;
	hx_stdio_end(c, &e);
	how = hx_stdio_end_str(&e);
	if (c->early)
		hx_client_log_error(&c->log, "client %s before shutdown", how);
	else if (!c->killed && e.exit_code != 0)
		hx_client_log_error(&c->log,
		                    "client %s after shutdown (expected "
		                    "status 0)",
		                    how);
	free(how);
}

/* Reap, end the grace, give up on a stdout nobody will close. */
static void advance(struct hx_stdio *c)
{
	int64_t now = fa_clock_real_mono_us();

	if (c->proc.running) {
		if (c->t_shutdown_us > 0 && !c->killed && now >= c->t_shutdown_us + c->grace_us) {
			hx_client_log_error(&c->log,
			                    "client still running %g s after "
			                    "shutdown: killed",
			                    (double)c->grace_us / 1e6);
			hx_stdio_kill(c);
			close_fd(&c->in_fd);
		}
		if (hx_exec_poll(&c->proc, fa_clock_mono_us()))
			on_reaped(c, now);
	}
	if (!c->proc.running && now - c->t_reaped_us >= DRAIN_US) {
		read_stdout(c);
		if (c->out_fd >= 0 && c->line_len > 0)
			end_line(c, fa_clock_mono_us() - c->t0_us);
		close_fd(&c->out_fd);
		close_fd(&c->err_fd);
	}
	if (!c->proc.running)
		close_fd(&c->in_fd);
}

void hx_stdio_pump(struct hx_stdio *c, int timeout_ms)
{
	struct pollfd pf[4];
	size_t n = 0;

	flush(c);
	/* its end wakes us too, not only what it prints */
	if (c->proc.running && c->proc.pidfd >= 0)
		pf[n++] = (struct pollfd){ .fd = c->proc.pidfd, .events = POLLIN };
	if (c->out_fd >= 0)
		pf[n++] = (struct pollfd){ .fd = c->out_fd, .events = POLLIN };
	if (c->err_fd >= 0)
		pf[n++] = (struct pollfd){ .fd = c->err_fd, .events = POLLIN };
	if (c->in_fd >= 0 && c->pending_len > 0)
		pf[n++] = (struct pollfd){ .fd = c->in_fd, .events = POLLOUT };
	hx_exec_wait_fds(pf, n, timeout_ms);
	read_stdout(c);
	read_stderr(c);
	flush(c);
	advance(c);
}

void hx_stdio_shutdown(struct hx_stdio *c)
{
	cJSON *msg;

	if (c->t_shutdown_us > 0 || !c->proc.running)
		return;
	msg = fa_xcheck(cJSON_CreateObject(), "shutdown line");
	fa_xcheck(cJSON_AddStringToObject(msg, "type", "shutdown"), "shutdown line");
	queue(c, msg);
	cJSON_Delete(msg);
	c->closing = true;
	c->t_shutdown_us = fa_clock_real_mono_us();
	flush(c);
}

void hx_stdio_kill(struct hx_stdio *c)
{
	/* the leader is unreaped (running), so its pid still names the group */
	if (!c->proc.running)
		return;
	kill(-c->proc.pid, SIGKILL);
	c->killed = true;
}

bool hx_stdio_running(const struct hx_stdio *c)
{
	return c->proc.running;
}

bool hx_stdio_finished(const struct hx_stdio *c)
{
	return !c->proc.running && c->out_fd < 0;
}

const struct hx_client_log *hx_stdio_log(const struct hx_stdio *c)
{
	return &c->log;
}

void hx_stdio_end(const struct hx_stdio *c, struct hx_stdio_end *out)
{
	memset(out, 0, sizeof(*out));
	out->reaped = !c->proc.running;
	out->early = out->reaped && c->early;
	out->killed = c->killed;
	out->exit_code = out->reaped ? c->proc.exit_code : -1;
	out->term_signal = out->reaped ? c->proc.term_signal : 0;
}

/* The last non-empty line of the stderr tail, at most 200 bytes, or "";
 * its control characters as '?': it goes into the harness's own messages. */
static char *stderr_last_line(const struct hx_stdio *c)
{
	size_t end = c->tail_len, start;

	while (end > 0 && (c->tail[end - 1] == '\n' || c->tail[end - 1] == '\r'))
		end--;
	start = end;
	while (start > 0 && c->tail[start - 1] != '\n')
		start--;
	return hx_client_log_plain(c->tail + start, end - start < 200 ? end - start : 200);
}

/* The protocol error of line 1 in @l ("line 1: ..."): the one that
 * says why it was no hello. */
static const char *line1_error(const struct hx_client_log *l)
{
	for (size_t i = 0; i < l->n_errors; i++)
		if (strncmp(l->errors[i], "line 1: ", 8) == 0)
			return l->errors[i];
	return "line 1: malformed";
}

/* Under a time scale: the hello's wall_ms, then a clock line asked
 * HX_TIMESCALE_PROBE_US of virtual time later, each on the virtual
 * clock (docs/client-protocol.md, the clock probe). The answer is due
 * within @limit_us real µs. */
static enum fa_rc clock_probe(struct hx_stdio *c, int64_t limit_us, struct fa_err *err)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(c->log.hello, "wall_ms");
	int64_t now = fa_clock_wall_us(), asked, due;
	size_t errors;
	cJSON *msg;

	if (!cJSON_IsNumber(w)) {
		fa_err_set(err,
		           "client's hello %s: under --time-scale the client must report "
		           "its clock (docs/client-protocol.md, the clock probe)",
		           w == NULL ? "carries no wall_ms" : "has a wall_ms that is not a number");
		return FA_EINVAL;
	}
	if (hx_timescale_check_reading("client", w->valuedouble, c->t_fork_wall_us, now, err) !=
	    FA_OK)
		return FA_EINVAL;
	due = fa_clock_mono_us() + HX_TIMESCALE_PROBE_US;
	while (fa_clock_mono_us() < due && !hx_stdio_finished(c))
		hx_stdio_pump(c, 5);
	msg = fa_xcheck(cJSON_CreateObject(), "clock line");
	fa_xcheck(cJSON_AddStringToObject(msg, "type", "clock"), "clock line");
	c->log.clock_asked = true;
	asked = fa_clock_wall_us();
	queue(c, msg);
	cJSON_Delete(msg);
	due = fa_clock_real_mono_us() + limit_us;
	errors = c->log.n_errors;
	while (!c->log.clock_read && c->log.n_errors == errors && !hx_stdio_finished(c) &&
	       fa_clock_real_mono_us() < due)
		hx_stdio_pump(c, 5);
	now = fa_clock_wall_us();
	c->log.clock_asked = false;
	if (!c->log.clock_read && c->log.n_errors > errors) {
		/* the client's answer, a line the harness could not read */
		fa_err_set(err,
		           "client answered the clock probe with %s: under --time-scale "
		           "it must answer {\"type\": \"clock\"} with its wall_ms "
		           "(docs/client-protocol.md)",
		           c->log.errors[errors]);
		return FA_EINVAL;
	}
	if (!c->log.clock_read) {
		fa_err_set(err,
		           "client did not answer the clock probe within %g s: under "
		           "--time-scale it must answer {\"type\": \"clock\"} with its wall_ms "
		           "(docs/client-protocol.md)",
		           (double)limit_us / 1e6);
		return FA_EIO;
	}
	return hx_timescale_check_reading("client", c->log.clock_wall_ms, asked, now, err);
}

enum fa_rc hx_stdio_hello(struct hx_stdio *c, int64_t timeout_us, struct fa_err *err)
{
	int64_t limit = timeout_us > 0 ? timeout_us : HX_STDIO_HELLO_US;
	int64_t deadline = fa_clock_real_mono_us() + limit; /* its start: real time */
	const cJSON *proto;
	struct hx_stdio_end e;
	char *how, *last;

	for (;;) {
		/* the first line decides, however many lines one read brought:
		 * a hello after a malformed first line comes too late */
		if (c->log.hello_line == 1)
			break;
		if (c->log.n_lines > 0) {
			fa_err_set(err, "client did not say hello: %s", line1_error(&c->log));
			/* a hello on a later line is no hello: the report shows none */
			cJSON_Delete(c->log.hello);
			c->log.hello = NULL;
			return FA_EIO;
		}
		if (hx_stdio_finished(c)) {
			hx_stdio_end(c, &e);
			how = hx_stdio_end_str(&e);
			last = stderr_last_line(c);
			fa_err_set(err, "client %s before saying hello%s%s", how,
			           last[0] ? ": " : "", last);
			free(how);
			free(last);
			return FA_EIO;
		}
		if (fa_clock_real_mono_us() >= deadline) {
			if (c->out_fd < 0)
				fa_err_set(err, "client closed its stdout before saying hello");
			else
				fa_err_set(err, "client did not say hello within %g s",
				           (double)limit / 1e6);
			return FA_EIO;
		}
		hx_stdio_pump(c, 20);
	}
	proto = cJSON_GetObjectItemCaseSensitive(c->log.hello, "protocol");
	if (proto->valuedouble != HX_STDIO_PROTOCOL) {
		fa_err_set(err, "client speaks protocol %.0f, harness knows %d", proto->valuedouble,
		           HX_STDIO_PROTOCOL);
		return FA_EINVAL;
	}
	return fa_clock_scaled() ? clock_probe(c, limit, err) : FA_OK;
}

void hx_stdio_take(struct hx_stdio *c, struct hx_scenario_result *out)
{
	char *both;
	size_t len;

	hx_client_log_move(&c->log, out);
	if (c->tail_len == 0)
		return;
	if (out->client_stderr == NULL) {
		out->client_stderr = fa_xstrndup(c->tail, c->tail_len);
		return;
	}
	/* an earlier session's tail: keep the last HX_STDIO_STDERR_TAIL bytes
	 * of the two */
	both = fa_xasprintf("%s%.*s", out->client_stderr, (int)c->tail_len, c->tail);
	len = strlen(both);
	free(out->client_stderr);
	out->client_stderr =
	        fa_xstrdup(len > HX_STDIO_STDERR_TAIL ? both + len - HX_STDIO_STDERR_TAIL : both);
	free(both);
}

void hx_stdio_free(struct hx_stdio *c)
{
	if (c == NULL)
		return;
	if (c->proc.running) {
		hx_stdio_kill(c);
		hx_exec_wait(&c->proc);
	}
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->err_fd);
	hx_client_log_release(&c->log);
	free(c->pending);
	free(c->line);
	free(c);
}
