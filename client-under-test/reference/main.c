/* main.c -- the reference retry client: hello, then one task thread per task line. */

/*
 * The reference retry client of fakeapi, in C on libcurl. It speaks the
 * stdio protocol of docs/client-protocol.md (version 1) and demonstrates
 * what the retry-safety guide asks of a client that retries:
 *
 *   - one layer owns retries (task.c); the HTTP layer (http.c) makes
 *     exactly one request per attempt and reports it;
 *   - retry rules are data: a class per kind of request with its attempt
 *     and waiting budgets and its retryable statuses (policy.c); 400, 401,
 *     403, 404, 409 and 422 are never retried;
 *   - a Retry-After (delta-seconds or any HTTP-date form) is a lower bound:
 *     it goes into a registry per scope (registry.c) before the retry is
 *     scheduled, every task of the scope reads the registry before every
 *     attempt, and the return is spread by full jitter so the tasks a pause
 *     held do not come back in one wave;
 *   - no usable Retry-After: exponential backoff with full jitter and a
 *     floor, never a tight loop;
 *   - budgets count attempts and waiting; a task's budget only tightens
 *     its class's; when the next wait cannot fit in what is left, or the
 *     attempts run out, the task does not wait: it hands an operator a
 *     sanitised escalation record (escalate.c, fingerprint.c) with the
 *     goal, the attempts and the safe next steps;
 *   - a shared scope has a budget too: at most two requests in flight
 *     and a bounded number waiting (slot.c); the same 4xx failure on one
 *     path three times opens a circuit that refuses the path (circuit.c);
 *   - a cancel drops the pending retry, aborts the attempt in flight and
 *     frees the slot: cancelled work never wakes up later;
 *   - a write carries one idempotency key on every attempt, saved with the
 *     operation in CLIENT_STATE_DIR before its first send (state.c); after
 *     an ambiguous outcome it reads the write's status before anything
 *     else (write.c, reconcile.c), resumes after a restart with the same
 *     key, and escalates when the provider offers no way to know;
 *   - a streamed chat completion is read as server-sent events as it
 *     arrives (stream.c); once its first token has come, a break is
 *     reported (stream_interrupted) and never retried silently (the LLM
 *     rate-limit guide); before it, the usual rules apply, an error frame's
 *     retryAfter being the pause (the platform's rate-limit contract);
 *   - a key's published RPM and TPM are kept by two token buckets per
 *     key (pace.c), taken from before every attempt (the LLM rate-limit guide).
 *
 * Built once per variant (the Makefile's -DDEFECT=<name>); each faulty
 * variant differs from this reference in one place marked "DEFECT"
 * (defect.h, docs/reference-client.md).
 *
 * Try it by hand: start build/fakeapi --scenario FILE --port 0, export
 * FAKEAPI_KEY_<ID> for the scenario's keys, and write task lines to
 * build/clients/reference.
 */
#include <cJSON.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "circuit.h"
#include "clock.h"
#include "defect.h"
#include "emit.h"
#include "http.h"
#include "log.h"
#include "pace.h"
#include "policy.h"
#include "registry.h"
#include "slot.h"
#include "state.h"
#include "stream.h"
#include "task.h"

#define CLIENT_VERSION "0.1.0"

/* Every task this process has received, finished ones included (so a
 * late cancel finds it and a reused id is caught). Only main() touches
 * the list. */
struct tasks {
	struct ref_task **v; /* owned */
	size_t n;            /* entries used */
	size_t cap;          /* entries allocated */
};

/* What reading one line asks main() to do next. */
enum next { GO_ON, STOP };

/* One line on stderr for an input line the client does not understand;
 * the line itself is never echoed (it may carry a body). */
static void bad_line(long lineno, const char *msg)
{
	FA_LOG(FA_LOG_ERROR, "client", "event=bad_line line=%ld error=\"%s\"", lineno, msg);
}

static struct ref_task *find_task(const struct tasks *ts, const char *id)
{
	for (size_t i = 0; i < ts->n; i++)
		if (strcmp(ref_task_id(ts->v[i]), id) == 0)
			return ts->v[i];
	return NULL;
}

static void on_task(struct tasks *ts, const struct ref_shared *sh, const cJSON *msg, long lineno)
{
	struct fa_err err = { "" };
	struct ref_task *t = NULL;

	if (ref_task_new(msg, sh, &t, &err) != FA_OK) {
		bad_line(lineno, err.msg);
		return;
	}
	if (find_task(ts, ref_task_id(t)) != NULL) {
		fa_err_set(&err, "$.id: task %.64s already received", ref_task_id(t));
		bad_line(lineno, err.msg);
		ref_task_free(t);
		return;
	}
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? 2 * ts->cap : 16;
		ts->v = fa_xrealloc(ts->v, ts->cap * sizeof(*ts->v));
	}
	ts->v[ts->n++] = t;
	if (ref_task_start(t, &err) != FA_OK)
		FA_LOG(FA_LOG_ERROR, "client", "event=start error=\"%s\"", err.msg);
}

static void on_cancel(struct tasks *ts, const cJSON *msg, long lineno)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	struct ref_task *t;

	if (!cJSON_IsString(id)) {
		bad_line(lineno, "cancel: $.id: expected string");
		return;
	}
	t = find_task(ts, id->valuestring);
	if (t == NULL) {
		bad_line(lineno, "cancel: unknown task");
		return;
	}
	ref_task_cancel(t);
}

/* Act on one input line. */
static enum next on_line(struct tasks *ts, const struct ref_shared *sh, const char *line,
                         size_t len, long lineno)
{
	const char *end = NULL;
	cJSON *msg;
	const cJSON *type;
	enum next next = GO_ON;

	if (strspn(line, " \t\r\n") == len)
		return GO_ON;
	/* cJSON_Parse keeps its error position in a global; the WithLengthOpts
	 * form hands it back instead (docs/internals.md, Errors). */
	msg = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (msg == NULL) {
		char m[64];

		snprintf(m, sizeof(m), "not JSON (column %ld)",
		         end != NULL ? (long)(end - line) + 1 : 0L);
		bad_line(lineno, m);
		return GO_ON;
	}
	type = cJSON_GetObjectItemCaseSensitive(msg, "type");
	if (!cJSON_IsObject(msg) || !cJSON_IsString(type))
		bad_line(lineno, "expected an object with a string type");
	else if (strcmp(type->valuestring, "task") == 0)
		on_task(ts, sh, msg, lineno);
	else if (strcmp(type->valuestring, "cancel") == 0)
		on_cancel(ts, msg, lineno);
	else if (strcmp(type->valuestring, "shutdown") == 0)
		next = STOP;
	else if (strcmp(type->valuestring, "clock") == 0)
		ref_emit_clock(); /* at once, from the reading thread */
	else
		bad_line(lineno, "unknown type");
	cJSON_Delete(msg);
	return next;
}

/* FAKEAPI_STREAM_IDLE_S: a stream's idle timeout, 1..600 s; otherwise
 * REF_STREAM_IDLE_S. */
static int idle_from_env(void)
{
	const char *v = getenv("FAKEAPI_STREAM_IDLE_S");
	char *end = NULL;
	long s;

	if (v == NULL || v[0] == '\0')
		return REF_STREAM_IDLE_S;
	s = strtol(v, &end, 10);
	if (*end == '\0' && s >= 1 && s <= 600)
		return (int)s;
	FA_LOG(FA_LOG_WARN, "client",
	       "event=bad_idle FAKEAPI_STREAM_IDLE_S is not an integer 1..600, ignored");
	return REF_STREAM_IDLE_S;
}

/* FAKEAPI_SEED makes the jitter reproducible; otherwise time and pid. */
static uint64_t seed_from_env(void)
{
	const char *v = getenv("FAKEAPI_SEED");
	char *end = NULL;
	unsigned long long s;

	if (v != NULL && v[0] != '\0') {
		s = strtoull(v, &end, 0);
		if (*end == '\0')
			return (uint64_t)s;
		FA_LOG(FA_LOG_WARN, "client",
		       "event=bad_seed FAKEAPI_SEED is not a number, ignored");
	}
	return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)fa_clock_mono_us();
}

int main(void)
{
	struct fa_err err = { "" };
	struct ref_shared sh = { NULL, NULL, NULL, NULL, NULL, REF_STREAM_IDLE_S };
	struct tasks ts = { NULL, 0, 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;

	fa_log_init();
	/* A harness that stops reading must not kill us mid-line. */
	signal(SIGPIPE, SIG_IGN);
	if (ref_http_global_init(&err) != FA_OK) {
		fprintf(stderr, "reference: %s\n", err.msg);
		return 2;
	}
	ref_policy_seed(seed_from_env());
	sh.reg = ref_registry_new();
	sh.slots = ref_slots_new(ref_policy_scope());
	sh.circuit = ref_circuit_new(REF_CIRCUIT_MAX_IDENTICAL);
	sh.pace = ref_pace_new();
	sh.stream_idle_s = idle_from_env();
	/* Before the first task: a restarted client resumes what the
	 * process before it saved. */
	sh.st = ref_state_open(getenv("CLIENT_STATE_DIR"));

	ref_emit_hello(defect_is("none") ? "reference" : "reference-" REF_DEFECT_NAME,
	               CLIENT_VERSION);

	for (;;) {
		len = getline(&line, &cap, stdin);
		if (len < 0)
			break; /* end of input means shutdown */
		lineno++;
		if (on_line(&ts, &sh, line, (size_t)len, lineno) == STOP)
			break;
	}

	/* Shutdown: wake and stop whatever is still waiting or in flight;
	 * each task reports its own result before its thread ends. */
	for (size_t i = 0; i < ts.n; i++)
		ref_task_cancel(ts.v[i]);
	for (size_t i = 0; i < ts.n; i++)
		ref_task_free(ts.v[i]);
	free(ts.v);
	free(line);
	ref_registry_free(sh.reg);
	ref_slots_free(sh.slots);
	ref_circuit_free(sh.circuit);
	ref_pace_free(sh.pace);
	ref_state_free(sh.st);
	ref_http_global_cleanup();
	return 0;
}
