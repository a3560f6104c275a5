/* exec.h -- one client process per task: command line, process group, timeout, reaping. */
#ifndef HX_EXEC_H
#define HX_EXEC_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cJSON.h>

#include "rc.h"
#include "scenario.h"
#include "stray.h"

/* Grace between SIGTERM and SIGKILL when a client is stopped, µs. */
#define HX_EXEC_KILL_GRACE_US 1000000

/*
 * @s quoted for a POSIX shell as one word: wrapped in single quotes, each
 * single quote inside written as '\'' ("a'b" -> 'a'\''b'). NULL is taken as
 * "". Returns a new string the caller frees.
 */
char *hx_exec_quote(const char *s);

/* Write @body as compact JSON (nothing for NULL) to @path, created or
 * truncated: what {body_file} names. FA_EIO with "PATH: cannot write:
 * reason" in @err on failure. */
enum fa_rc hx_exec_write_body(const char *path, const cJSON *body, struct fa_err *err);

/* Bytes of a client's stderr file hx_exec_last_line() reads, its last. */
#define HX_EXEC_STDERR_TAIL 2048

/* The last non-empty line of the tail of @path (a client's stderr file),
 * at most 200 bytes, or "", its control characters and bad UTF-8 as '?':
 * it goes into the harness's own messages, to tell why a client could
 * not start. A new string the caller frees. */
char *hx_exec_last_line(const char *path);

/* The tail of @path (a client's stderr file): its last HX_EXEC_STDERR_TAIL
 * bytes, from the first whole line when the file was longer, trailing
 * newlines dropped; the client's bytes as they are (a report makes them
 * printable). NULL when the file is missing or holds only blank lines. A
 * new string the caller frees. */
char *hx_exec_tail(const char *path);

/*
 * What exec mode tells a task's client (docs/client-protocol.md, exec
 * mode): each member is a template placeholder, an environment variable,
 * or both. Borrowed strings; NULL = the task does not set it (a
 * placeholder becomes '', a variable is left unset).
 */
struct hx_exec_vars {
	const char *url;          /* {url}: the task's URL (hx_exec_task_url) */
	const char *method;       /* {method}, FAKEAPI_METHOD */
	const char *body_file;    /* {body_file}, FAKEAPI_BODY_FILE */
	const char *task;         /* {task}, FAKEAPI_TASK: the task's id */
	const char *max_attempts; /* {max_attempts}, FAKEAPI_MAX_ATTEMPTS: its budget's */
	const char *max_retries;  /* {max_retries}, FAKEAPI_MAX_RETRIES: max_attempts - 1 */
	const char *max_wait_s;   /* {max_wait_s}, FAKEAPI_MAX_WAIT_S: its budget's, s */
	const char *timeout_s;    /* {timeout_s}, FAKEAPI_TIMEOUT_S: the harness's per-task
	                             timeout, s */
	const char *rpm;          /* {rpm}, FAKEAPI_RPM: $.harness.pacing's */
	const char *tpm;          /* {tpm}, FAKEAPI_TPM: $.harness.pacing's */
	const char *period_s;     /* {period_s}, FAKEAPI_PERIOD_S: $.harness.pacing's, s */
	const char *headers_file; /* {headers_file}, FAKEAPI_HEADERS_FILE (hx_exec_write_headers) */
	const char *headers_json; /* FAKEAPI_HEADERS: the task's headers as one JSON object
	                             (no placeholder) */
};

/*
 * @tmpl with every placeholder of struct hx_exec_vars ({url}, {method},
 * {body_file}, {task}, {max_attempts}, {max_retries}, {max_wait_s},
 * {timeout_s}, {rpm}, {tpm}, {period_s}, {headers_file}) replaced by its
 * value quoted with hx_exec_quote(), '' when NULL; any other "{...}" (a
 * shell brace group, curl's %{http_code}, a misspelt placeholder) is left
 * as written. Returns a new string the caller frees.
 */
char *hx_exec_expand(const char *tmpl, const struct hx_exec_vars *v);

/*
 * The environment variables of @v (FAKEAPI_METHOD, FAKEAPI_BODY_FILE,
 * FAKEAPI_TASK, ..., FAKEAPI_HEADERS; {url} has none: FAKEAPI_URL is the
 * base URL) as entries for hx_exec_env(): "NAME=value" for a value set, a
 * bare "NAME" for one the task does not set, so that an inherited
 * variable of that name is dropped too. A new NULL-terminated array; the
 * caller frees the strings and the array (or hands the strings to
 * hx_client_env_new(), which takes them, and frees the array).
 */
char **hx_exec_vars_env(const struct hx_exec_vars *v);

/*
 * Write @n headers @h to @path, created or truncated, one "Name: value"
 * line each in order, as `curl -H @FILE` reads them: what {headers_file}
 * names. Values hold no CR or LF (the scenario loader refuses them).
 * FA_EIO with "PATH: cannot write: reason" in @err on failure.
 */
enum fa_rc hx_exec_write_headers(const char *path, const struct fa_header *h, size_t n,
                                 struct fa_err *err);

/*
 * The URL a task's client is given: @base (no trailing slash, e.g.
 * "http://127.0.0.1:8080") + @path + '?' (or '&' when @path already has a
 * query) + "fa_task=" + @task_id. Task ids are [A-Za-z0-9_-], so nothing
 * needs escaping. Returns a new string the caller frees.
 */
char *hx_exec_task_url(const char *base, const char *path, const char *task_id);

/*
 * A client's environment: the harness's own, with the names of @extra's
 * "NAME=value" entries (NULL-terminated, or NULL), then the time scale's
 * (hx_timescale_env()), then @mark's (one entry, or NULL), replaced by
 * those entries; a later one wins, and a bare
 * "NAME" entry (no '=') removes the name instead. Returns a
 * NULL-terminated array the caller frees; its strings stay borrowed from
 * environ, @extra and @mark. Allocates: call it before fork().
 */
char **hx_exec_env(const char *const *extra, const char *mark);

/* What a client process is started with, made before the fork. Embedded;
 * @envp points into it, so it must not move once filled. */
struct hx_exec_client_env {
	char marker[HX_STRAY_NONCE_LEN + 1];                      /* its fresh HX_STRAY_ENV value */
	char mark[sizeof(HX_STRAY_ENV) + HX_STRAY_NONCE_LEN + 1]; /* "HX_STRAY_ENV=marker" */
	char **envp; /* owned array (hx_exec_env over the extra entries and @mark);
	                its strings borrowed */
	char cgroup[HX_STRAY_CGROUP_MAX]; /* its own cgroup folder (hx_stray_cgroup_new);
	                                     "" = none */
};

/*
 * Fill @e for one client: a fresh marker (hx_stray_nonce), a cgroup of
 * its own where there is one (hx_stray_cgroup_new) and the
 * environment hx_exec_env(@extra, "HX_STRAY_ENV=marker") gives. @extra
 * ("NAME=value" entries, NULL-terminated, or NULL) must outlive @e.
 * Allocates: call it before fork(). Release with
 * hx_exec_client_env_release().
 */
void hx_exec_client_env_init(struct hx_exec_client_env *e, const char *const *extra);

/* Free what @e owns. NULL accepted. */
void hx_exec_client_env_release(struct hx_exec_client_env *e);

/*
 * In a child just forked to become a client: move into the cgroup folder
 * @cgroup ("" = none; hx_stray_cgroup_join), lead a new process group
 * (the parent calls setpgid(pid, pid) too, so a signal sent right after
 * the fork reaches it), restore every signal's default disposition (an
 * ignored signal survives exec; the harness's handlers must not) and
 * unblock them all. Only async-signal-safe calls: another thread of the
 * harness may hold a lock.
 */
void hx_exec_child_setup(const char *cgroup);

/*
 * In that child, its descriptors 0..2 in place: close every descriptor
 * above 2 (other threads' sockets and journals, opened without
 * O_CLOEXEC, must not live on in the client) and exec /bin/sh -c @cmd
 * with @envp. Never returns: exits 127 when the exec fails.
 * Async-signal-safe.
 */
void hx_exec_child_exec(const char *cmd, char *const envp[]) __attribute__((noreturn));

/* How to start one client process. All pointers borrowed for the call. */
struct hx_exec_spec {
	const char *cmd;         /* run as /bin/sh -c CMD */
	const char *const *env;  /* "NAME=value" entries set on top of the harness's own
	                            environment (replacing the same names; a bare "NAME"
	                            removes it); NULL-terminated, or NULL for none */
	const char *stdout_path; /* file created (or truncated) for stdout; NULL = /dev/null */
	const char *stderr_path; /* same for stderr */
	bool append;             /* append to those files instead of truncating them (a
	                            task started again keeps what it printed before) */
	int64_t timeout_us;      /* stop the client this long after the start; 0 = never */
};

/* One client process and what became of it. Times are fa_clock_mono_us(). */
struct hx_exec_proc {
	pid_t pid;           /* the shell: leader of its own process group (pgid = pid); 0 = none */
	bool running;        /* started and not reaped yet */
	int64_t t_start_us;  /* when it was forked */
	int64_t deadline_us; /* when the timeout stops it; 0 = never */
	int64_t t_term_us;   /* when SIGTERM went to the group; 0 = not yet */
	int64_t t_term_real_us; /* the same on the real clock, for the kill's grace
	                           (fa_clock_real_mono_us(): the grace is the
	                           client's own time to end, never scaled) */
	int64_t t_exit_us;      /* when it was seen to have exited; 0 = not yet */
	int exit_code;          /* exit status 0..255; -1 when killed by a signal or not run */
	int term_signal;        /* the signal that killed it; 0 = none */
	bool timed_out;         /* stopped by the timeout or by hx_exec_stop() */
	char marker[HX_STRAY_NONCE_LEN + 1]; /* its HX_STRAY_ENV value; "" = none */
	char cgroup[HX_STRAY_CGROUP_MAX];    /* its cgroup folder; "" = none */
	int pidfd; /* owned while running: a pidfd on pid, readable once it has
	              exited (poll it to wait for the end); -1 = none */
};

/*
 * @p for @pid, a client's leader just forked with @marker (its
 * HX_STRAY_ENV value, or NULL) in the cgroup folder @cgroup (or NULL/""):
 * running, started now, its pidfd open (closed when it is reaped), known
 * to the sweeps as the harness's own (hx_stray_own); no deadline.
 */
void hx_exec_proc_init(struct hx_exec_proc *p, pid_t pid, const char *marker, const char *cgroup);

/*
 * Fork a client as @spec says: the child becomes the leader of a new
 * process group (set by both sides, so a signal sent right after the
 * return reaches it), gets stdin from /dev/null, stdout and stderr into
 * the files, the default signal dispositions and mask, no descriptor above
 * 2, HX_STRAY_ENV=<a fresh marker> (kept in @p->marker) in its environment,
 * and execs /bin/sh (a command that cannot run makes the shell exit
 * 127). Thread-safe: nothing allocates after the fork. On FA_OK @p is
 * running; on failure (FA_EIO with "cannot start client: fork: reason")
 * @p is zeroed with exit_code -1.
 */
enum fa_rc hx_exec_start(struct hx_exec_proc *p, const struct hx_exec_spec *spec,
                         struct fa_err *err);

/*
 * Advance @p without blocking, at @now_us (fa_clock_mono_us()): past the
 * deadline send SIGTERM to the group and mark it timed out, SIGKILL the
 * group HX_EXEC_KILL_GRACE_US later; when the leader has exited, SIGKILL
 * whatever is left of its group (a backgrounded child must not send
 * attempts into the next scenario), reap the leader by its pid, kill
 * every process that left the group but still carries @p->marker
 * (hx_stray_kill: setsid, double fork) and reap the group's members that
 * are the harness's children (a subreaper's orphans) by their group.
 * Returns true once the process is reaped (or was never started); the
 * call that reaps may block while strays die (HX_STRAY_SWEEP_US at most).
 */
bool hx_exec_poll(struct hx_exec_proc *p, int64_t now_us);

/* Stop @p now, as its timeout would (SIGTERM, then SIGKILL after the
 * grace); hx_exec_poll() does the rest. Marks it timed out. Nothing
 * happens when it is not running. */
void hx_exec_stop(struct hx_exec_proc *p, int64_t now_us);

/* Stop @p now without blaming it (a scenario's "cancel" event): SIGTERM
 * to its group, SIGKILL HX_EXEC_KILL_GRACE_US later if it is still
 * there (hx_exec_poll() does that and the reaping). Not marked timed
 * out. Nothing happens when it is not running or was already told to
 * stop. */
void hx_exec_terminate(struct hx_exec_proc *p, int64_t now_us);

/* SIGKILL @p's process group now (a scenario's "kill" event), without
 * marking it timed out; hx_exec_poll() reaps it. Nothing happens when it
 * is not running. */
void hx_exec_kill(struct hx_exec_proc *p);

/* Wait until @p is reaped, on its pidfd (every 10 ms without one); its
 * timeout still applies. */
void hx_exec_wait(struct hx_exec_proc *p);

/* poll(2) the @n descriptors @pf for up to @timeout_ms; sleep that long
 * when @n is 0. */
void hx_exec_wait_fds(struct pollfd *pf, size_t n, int timeout_ms);

/* Wait up to @timeout_ms for one of the @n processes @p to end (on their
 * pidfds; those not running are left out): returns at the first end, or
 * at once when one has ended unreaped. Sleeps the whole time when none has
 * a pidfd. */
void hx_exec_wait_any(struct hx_exec_proc *const *p, size_t n, int timeout_ms);

#endif
