/* emit.h -- the client's protocol messages on stdout, one whole line each. */
#ifndef REF_EMIT_H
#define REF_EMIT_H

#include <stdint.h>

#include "policy.h"

struct cJSON;

/*
 * Every function writes one JSON object as one `\n`-terminated line and
 * flushes it (docs/client-protocol.md, version 1). Task threads call them
 * concurrently; a lock keeps lines whole and in the order they were
 * decided. Strings are borrowed. Out of memory aborts (fa_xcheck).
 */

/* {"type":"hello","protocol":1,"client":{"name":@name,"version":...},
 *  "features":["cancel","reconciliation","escalation"],"wall_ms":...}, with
 * the wall clock read just before the line is written. */
void ref_emit_hello(const char *name, const char *version);

/* The answer to the harness's clock probe: {"type":"clock","wall_ms":...},
 * the wall clock read now (docs/client-protocol.md, the clock probe). */
void ref_emit_clock(void);

/* Just before attempt @attempt (1, 2, ... in this process) goes on the
 * wire: its @kind ("read", "write" or "reconcile") and the
 * @idempotency_key it carries (NULL: null). */
void ref_emit_action_sent(const char *task, int attempt, const char *kind,
                          const char *idempotency_key);

/* The outcome of attempt @attempt of @kind: @status (0 for a transport
 * error), the raw @retry_after value or NULL, the transport @error text or
 * NULL. */
void ref_emit_action_result(const char *task, int attempt, const char *kind, long status,
                            const char *retry_after, const char *error);

/* A write's outcome is unknown: the client reads its status before doing
 * anything else. @attempt is the attempt that ended ambiguously (0 when
 * the ambiguity comes from a saved operation, after a restart), @reason
 * "transport_error", "in_flight" or "restart", @idempotency_key the
 * write's key (NULL: null). */
void ref_emit_reconciliation_required(const char *task, int attempt, const char *reason,
                                      const char *idempotency_key);

/* A streamed answer broke after its first token reached the client (the LLM
 * rate-limit guide): @attempt, the content @chunks received before the break (>= 1),
 * @reason ("error_frame", "cut", "stall", "transport") and the error
 * frame's @error_code (NULL: null). Before anything else for that task. */
void ref_emit_stream_interrupted(const char *task, int attempt, int chunks, const char *reason,
                                 const char *error_code);

/* The task goes to a person: {"type":"escalation","task":@task,"record":
 * @record}. Takes @record, built by escalate.c (docs/escalation.schema.json),
 * which never carries the request body or the key's secret. */
void ref_emit_escalation(const char *task, struct cJSON *record);

/* The client will wait @due_in_ms before attempt @attempt, for @reason. */
void ref_emit_retry_scheduled(const char *task, int attempt, int64_t due_in_ms,
                              enum ref_reason reason);

/* The task's last message: @outcome ("succeeded", "failed", "escalated",
 * "cancelled"), @attempts this process put on the wire, @waited_ms between
 * them, @sent ("yes", "no", "unknown"), the last @status (0 when none),
 * the record's @provider_id (NULL: null). */
void ref_emit_result(const char *task, const char *outcome, int attempts, int64_t waited_ms,
                     const char *sent, long status, const char *provider_id);

#endif
