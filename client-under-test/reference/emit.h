/* emit.h -- the client's protocol messages on stdout, one whole line each. */
#ifndef REF_EMIT_H
#define REF_EMIT_H

#include <stdint.h>

#include "policy.h"

/*
 * Every function writes one JSON object as one `\n`-terminated line and
 * flushes it (docs/client-protocol.md, version 1). Task threads call them
 * concurrently; a lock keeps lines whole and in the order they were
 * decided. Strings are borrowed. Out of memory aborts (fa_xcheck).
 */

/* {"type":"hello","protocol":1,"client":{"name":@name,"version":...},
 *  "features":["cancel"]} */
void ref_emit_hello(const char *name, const char *version);

/* Just before attempt @attempt (1, 2, ...) goes on the wire. The
 * reference sends no idempotency key yet, so it is null. */
void ref_emit_action_sent(const char *task, int attempt);

/* The outcome of attempt @attempt: @status (0 for a transport error), the
 * raw @retry_after value or NULL, the transport @error text or NULL. */
void ref_emit_action_result(const char *task, int attempt, long status, const char *retry_after,
                            const char *error);

/* The client will wait @due_in_ms before attempt @attempt, for @reason. */
void ref_emit_retry_scheduled(const char *task, int attempt, int64_t due_in_ms,
                              enum ref_reason reason);

/* The task's last message: @outcome ("succeeded", "failed", "cancelled"),
 * @attempts on the wire, @waited_ms between them, @sent ("yes", "no",
 * "unknown"), the last @status (0 when none). provider_id is null. */
void ref_emit_result(const char *task, const char *outcome, int attempts, int64_t waited_ms,
                     const char *sent, long status);

#endif
