/* stdio_client.h -- a stdio client session: one process per scenario speaking JSON lines. */
#ifndef HX_STDIO_CLIENT_H
#define HX_STDIO_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "client_log.h"
#include "rc.h"
#include "result.h"
#include "scenario.h"

/* The client protocol version this harness speaks (docs/client-protocol.md). */
#define HX_STDIO_PROTOCOL 1

/* How long a client has to print its hello, µs. */
#define HX_STDIO_HELLO_US 10000000

/* Grace between shutdown and SIGKILL of the client's process group, µs. */
#define HX_STDIO_GRACE_US 5000000

/* Bytes of the client's stderr kept: the last ones. */
#define HX_STDIO_STDERR_TAIL 4096

/* Most bytes of stdout and stderr a capture keeps, in all, over every
 * session of a scenario. */
#define HX_STDIO_CAPTURE_MAX (16u * 1024 * 1024)

/*
 * Every byte the client sessions of one scenario printed, kept for the
 * canary search (canary.h) whatever the stderr tail and the line parser
 * keep: the first HX_STDIO_CAPTURE_MAX bytes of stdout and stderr
 * together, each stream appended in the order read; what comes past that
 * is only counted. Embedded: zero it to start, hx_stdio_capture_release()
 * at the end.
 */
struct hx_stdio_capture {
	char *out; /* owned: stdout, out_len bytes (not NUL-terminated) */
	size_t out_len;
	size_t out_cap;
	char *err; /* owned: stderr, err_len bytes */
	size_t err_len;
	size_t err_cap;
	size_t dropped; /* bytes past HX_STDIO_CAPTURE_MAX, not kept */
};

/* Free what @c owns and zero it. NULL accepted. */
void hx_stdio_capture_release(struct hx_stdio_capture *c);

/*
 * "FAKEAPI_KEY_" + @key_id upper-cased with every character other than
 * A-Z and 0-9 replaced by '_' ("ops-1" -> "FAKEAPI_KEY_OPS_1"). Returns a
 * new string the caller frees.
 */
char *hx_stdio_key_env(const char *key_id);

/*
 * The "task" line for task @t of @sc (docs/client-protocol.md): id, class
 * (or null), method, @url (with fa_task), headers (an object), body (the
 * task's body as compact JSON text, or null), goal (or null), key,
 * key_env, scope
 * ("user:<user>" or "key:<id>" as the provider meters it), budget
 * (max_attempts and max_wait_s, null when not given), @deadline_ms,
 * stream and tokens (hx_stdio_task_body) and pacing ({"rpm", "tpm",
 * "period_s"} of $.harness.pacing, rpm or tpm null when not set; null
 * without it). Returns a new object the caller deletes.
 */
cJSON *hx_stdio_task_json(const struct fa_scenario *sc, const struct fa_task_spec *t,
                          const char *url, int64_t deadline_ms);

/*
 * Set the members of task line @line that follow from the body the task
 * is sent with (@body, borrowed; NULL for none): "body" (compact JSON
 * text, or null), "stream" (true when @body is an object whose "stream"
 * is true) and "tokens" (the LLM rate-limit guide's cost as the provider
 * journals it: prompt_tokens + max_tokens of fa_chat_parse(), or of
 * fa_messages_parse() on a route of @kind FA_ROUTE_MESSAGES, or null when
 * @body does not parse as such a request). A member already there keeps
 * its place.
 */
void hx_stdio_task_body(cJSON *line, const cJSON *body, enum fa_route_kind kind);

/* The kind of the route task @t reaches (fa_route_of_target), or
 * FA_ROUTE_SCRIPTED when it reaches none. */
enum fa_route_kind hx_stdio_task_kind(const struct fa_scenario *sc, const struct fa_task_spec *t);

/* How to start a client. Pointers borrowed for the call. */
struct hx_stdio_spec {
	const char *cmd;                  /* run as /bin/sh -c CMD */
	const char *const *env;           /* "NAME=value" entries on top of the harness's own
	                                     environment (replacing the same names);
	                                     NULL-terminated, or NULL for none */
	int64_t t0_us;                    /* fa_clock_mono_us() instant the stamps count from:
	                                     the provider's origin, so a stamp reads as
	                                     fa_provider_now_us() at the moment a line was read */
	int64_t grace_us;                 /* shutdown to SIGKILL; 0 = HX_STDIO_GRACE_US */
	struct hx_stdio_capture *capture; /* borrowed, kept by the session: every byte
	                             of stdout and stderr goes there too; NULL = none */
	const char *key_canary;           /* the canaries every line is searched for
	                                     (hx_client_log_canaries; copied); NULL = none */
	const char *body_canary;
};

/* A running client session: its process, pipes and log. Opaque. */
struct hx_stdio;

/* How the client's process ended (hx_stdio_end). */
struct hx_stdio_end {
	bool reaped;     /* the process has ended and been reaped */
	bool early;      /* it ended on its own before shutdown or a kill */
	bool killed;     /* the harness killed it (grace over, or hx_stdio_kill) */
	int exit_code;   /* 0..255; -1 when a signal ended it */
	int term_signal; /* that signal; 0 = none */
};

/*
 * Start @spec->cmd as /bin/sh -c in a new process group (pgid = pid) with
 * pipes on its stdin and stdout and its stderr captured (the last
 * HX_STDIO_STDERR_TAIL bytes kept; both streams whole in @spec->capture,
 * which must outlive the session, when given), the default signal dispositions and
 * mask, no descriptor above 2, and HX_STRAY_ENV=<a fresh marker> in its
 * environment: when it ends, whatever still carries the marker is killed
 * with its group (hx_exec_poll). Does not wait for the hello. On FA_OK
 * *@out is a new session (free with hx_stdio_free); FA_EIO with "cannot
 * start client: reason" in @err otherwise, *@out NULL. Thread-safe.
 */
enum fa_rc hx_stdio_start(const struct hx_stdio_spec *spec, struct hx_stdio **out,
                          struct fa_err *err);

/*
 * Wait up to @timeout_us (0 = HX_STDIO_HELLO_US) for the client's hello.
 * FA_OK once a hello of protocol HX_STDIO_PROTOCOL was read as line 1
 * (a first line that is no hello fails it, whatever came after it, in
 * the same read or later). Otherwise
 * FA_EIO (FA_EINVAL for a wrong version) with the reason in @err: "client
 * did not say hello within 10 s", "client did not say hello: line 1:
 * ...", "client exited with status N before saying hello[: last stderr
 * line]", "client speaks protocol N, harness knows 1"; the process may
 * still run (hx_stdio_kill it).
 */
enum fa_rc hx_stdio_hello(struct hx_stdio *c, int64_t timeout_us, struct fa_err *err);

/*
 * Send @task (a "task" object, borrowed; see hx_stdio_task_json) as one
 * line, after telling the log that its "id" is the client's now. Lines go
 * out without blocking: what the pipe does not take now is kept and
 * written by later hx_stdio_pump() calls. Nothing is sent once stdin is
 * closed or the client is gone.
 */
void hx_stdio_send_task(struct hx_stdio *c, const cJSON *task);

/* Send any other message (@msg borrowed: "cancel", ...) as one line. */
void hx_stdio_send(struct hx_stdio *c, const cJSON *msg);

/*
 * Wait up to @timeout_ms for the client (a line, room in its stdin, its
 * exit: whichever comes first), then: write what is pending,
 * read and parse what it printed (stamped when read), keep its stderr's
 * tail, reap it once it has exited (killing what is left of its group),
 * and SIGKILL the group when the grace after shutdown is over.
 */
void hx_stdio_pump(struct hx_stdio *c, int timeout_ms);

/* Send "shutdown", close the client's stdin once what is pending went out,
 * and start the grace; hx_stdio_pump() kills the group when it is over.
 * Once only; nothing happens when the client is gone. */
void hx_stdio_shutdown(struct hx_stdio *c);

/* SIGKILL the client's process group now (hx_stdio_pump() reaps it). */
void hx_stdio_kill(struct hx_stdio *c);

/* The process has not been reaped yet. */
bool hx_stdio_running(const struct hx_stdio *c);

/* The process was reaped and its stdout read to the end (or given up on
 * one second after the reaping: an escaped descendant may hold it). */
bool hx_stdio_finished(const struct hx_stdio *c);

/* The session's log (borrowed; valid until the next call on @c). */
const struct hx_client_log *hx_stdio_log(const struct hx_stdio *c);

/* How the process ended, so far. */
void hx_stdio_end(const struct hx_stdio *c, struct hx_stdio_end *out);

/* "exited with status N" or "was killed by signal N (SIGNAME)" for @e; a
 * new string the caller frees. */
char *hx_stdio_end_str(const struct hx_stdio_end *e);

/*
 * Move the log into @out as hx_client_log_move() does (appending to what
 * an earlier session left there), and a copy of the stderr tail into
 * @out->client_stderr: after what is already there, the last
 * HX_STDIO_STDERR_TAIL bytes of the two kept (nothing added when the tail
 * is empty). The session goes on with an empty log.
 */
void hx_stdio_take(struct hx_stdio *c, struct hx_scenario_result *out);

/* Kill the group and reap the process if still running, close the pipes,
 * release everything. NULL accepted. */
void hx_stdio_free(struct hx_stdio *c);

#endif
