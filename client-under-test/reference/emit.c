/* emit.c -- the client's protocol messages on stdout, one whole line each. */
#include "emit.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>

#include "alloc.h"
#include "clock.h"

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

/* A message of @type, naming @task unless it is NULL. */
static cJSON *msg_new(const char *type, const char *task)
{
	cJSON *m = fa_xcheck(cJSON_CreateObject(), "cJSON_CreateObject");

	fa_xcheck(cJSON_AddStringToObject(m, "type", type), "cJSON");
	if (task != NULL)
		fa_xcheck(cJSON_AddStringToObject(m, "task", task), "cJSON");
	return m;
}

static void add_num(cJSON *m, const char *name, double v)
{
	fa_xcheck(cJSON_AddNumberToObject(m, name, v), "cJSON");
}

/* @v as a string, or null. */
static void add_str(cJSON *m, const char *name, const char *v)
{
	if (v == NULL)
		fa_xcheck(cJSON_AddNullToObject(m, name), "cJSON");
	else
		fa_xcheck(cJSON_AddStringToObject(m, name, v), "cJSON");
}

/* "wall_ms": CLOCK_REALTIME in ms since the Unix epoch, µs kept as a
 * fraction. This process never sets a scale (clock.h), so this is the
 * C library's clock as is: libfaketime's virtual one under a time scale,
 * which is what the harness's probe wants to see. */
static void add_wall_ms(cJSON *m)
{
	add_num(m, "wall_ms", (double)fa_clock_wall_us() / 1000.0);
}

/* Print @m as one line, flush, and free it (takes @m). */
static void put(cJSON *m)
{
	char *s = fa_xcheck(cJSON_PrintUnformatted(m), "cJSON_PrintUnformatted");

	pthread_mutex_lock(&out_mu);
	fputs(s, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
	cJSON_free(s);
	cJSON_Delete(m);
}

void ref_emit_hello(const char *name, const char *version)
{
	cJSON *m = msg_new("hello", NULL);
	cJSON *client, *features;

	add_num(m, "protocol", 1);
	client = fa_xcheck(cJSON_AddObjectToObject(m, "client"), "cJSON");
	features = fa_xcheck(cJSON_AddArrayToObject(m, "features"), "cJSON");
	add_str(client, "name", name);
	add_str(client, "version", version);
	cJSON_AddItemToArray(features, fa_xcheck(cJSON_CreateString("cancel"), "cJSON"));
	cJSON_AddItemToArray(features, fa_xcheck(cJSON_CreateString("reconciliation"), "cJSON"));
	cJSON_AddItemToArray(features, fa_xcheck(cJSON_CreateString("escalation"), "cJSON"));
	add_wall_ms(m);
	put(m);
}

void ref_emit_clock(void)
{
	cJSON *m = msg_new("clock", NULL);

	add_wall_ms(m);
	put(m);
}

void ref_emit_action_sent(const char *task, int attempt, const char *kind,
                          const char *idempotency_key)
{
	cJSON *m = msg_new("action_sent", task);

	add_num(m, "attempt", attempt);
	add_str(m, "kind", kind);
	add_str(m, "idempotency_key", idempotency_key);
	put(m);
}

void ref_emit_action_result(const char *task, int attempt, const char *kind, long status,
                            const char *retry_after, const char *error)
{
	cJSON *m = msg_new("action_result", task);

	add_num(m, "attempt", attempt);
	add_str(m, "kind", kind);
	add_num(m, "status", (double)status);
	add_str(m, "retry_after", retry_after);
	add_str(m, "error", error);
	put(m);
}

void ref_emit_retry_scheduled(const char *task, int attempt, int64_t due_in_ms,
                              enum ref_reason reason)
{
	cJSON *m = msg_new("retry_scheduled", task);

	add_num(m, "attempt", attempt);
	add_num(m, "due_in_ms", (double)due_in_ms);
	add_str(m, "reason", ref_reason_str(reason));
	put(m);
}

void ref_emit_reconciliation_required(const char *task, int attempt, const char *reason,
                                      const char *idempotency_key)
{
	cJSON *m = msg_new("reconciliation_required", task);

	add_num(m, "attempt", attempt);
	add_str(m, "reason", reason);
	add_str(m, "idempotency_key", idempotency_key);
	put(m);
}

void ref_emit_stream_interrupted(const char *task, int attempt, int chunks, const char *reason,
                                 const char *error_code)
{
	cJSON *m = msg_new("stream_interrupted", task);

	add_num(m, "attempt", attempt);
	add_num(m, "chunks", chunks);
	add_str(m, "reason", reason);
	add_str(m, "error_code", error_code);
	put(m);
}

void ref_emit_escalation(const char *task, cJSON *record)
{
	cJSON *m = msg_new("escalation", task);

	cJSON_AddItemToObject(m, "record", record);
	put(m);
}

void ref_emit_result(const char *task, const char *outcome, int attempts, int64_t waited_ms,
                     const char *sent, long status, const char *provider_id)
{
	cJSON *m = msg_new("result", task);

	add_str(m, "outcome", outcome);
	add_num(m, "attempts", attempts);
	add_num(m, "waited_ms", (double)waited_ms);
	add_str(m, "sent", sent);
	add_num(m, "status", (double)status);
	add_str(m, "provider_id", provider_id);
	put(m);
}
