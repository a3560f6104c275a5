/* task_spec.h -- what a scenario's tasks must be once everything is read. */
#ifndef FA_TASK_SPEC_H
#define FA_TASK_SPEC_H

#include <stddef.h>

#include <cJSON.h>

#include "header.h"
#include "rc.h"
#include "route.h"
#include "schema.h"
#include "store.h"

/* A budget a task is graded against ($.harness.tasks[i].budget). */
struct fa_budget {
	int max_attempts; /* 1..1000; 0 = not given */
	int max_wait_s;   /* 0..86400; -1 = not given */
};

/* One logical request the harness asks the client to make. */
struct fa_task_spec {
	char *id;                  /* unique; [A-Za-z0-9_-]{1,64} (it goes into a URL) */
	char *key;                 /* id of a key in provider.keys */
	char *klass;               /* request class or NULL */
	char *method;              /* upper case */
	char *path;                /* concrete path, may carry a query ("/v1/records/42") */
	struct fa_header *headers; /* owned, extra request headers for the client */
	size_t n_headers;
	cJSON *body; /* owned; NULL = no body */
	struct fa_budget budget;
	int timeout_s;    /* per-task client timeout, 1..3600; 0 = derived by the harness */
	char *goal;       /* what the task is for, 1..500 characters (stdio task line,
	                     escalation records); NULL = not given */
	unsigned outcome; /* how a correct client ends it within its budget: a set of
	                     FA_OUTCOME_* bits (task_spec.h); 0 = not given */
};

/*
 * Check the @n_tasks @tasks of a scenario read whole, against its
 * @n_routes @routes and its reconciliation reads (@store), at $.harness
 * (the current path of @s): none has a header the provider
 * reads a key from ("Authorization", "X-Api-Key": the client sends
 * FAKEAPI_KEY itself), and each reaches an answer of the scenario's own,
 * as the provider routes it: a route (fa_route_find on the task's
 * percent-decoded path, the query ignored) or a reconciliation read kept
 * on (fa_reconcile_is_read_of). The first task at fault fails with
 * "$.harness.tasks[i]: GET /p matches no route (routes: ...)" (as many
 * routes as fit) or "$.harness.tasks[i].headers: header "Authorization"
 * cannot go in a task (...)"; FA_OK when all are fine.
 */
enum fa_rc fa_task_spec_check(struct fa_schema *s, const struct fa_task_spec *tasks, size_t n_tasks,
                              const struct fa_route_spec *routes, size_t n_routes,
                              const struct fa_store_spec *store);

/* How a task ends, as a stdio client's `result` line names it
 * (docs/client-protocol.md): one bit each in fa_task_spec.outcome.
 * "unknown" is a write left open: outcome failed with `sent: "unknown"`,
 * which ambiguity.preserved also accepts (docs/checks.md). */
#define FA_OUTCOME_SUCCEEDED (1u << 0)
#define FA_OUTCOME_FAILED    (1u << 1)
#define FA_OUTCOME_ESCALATED (1u << 2)
#define FA_OUTCOME_CANCELLED (1u << 3)
#define FA_OUTCOME_UNKNOWN   (1u << 4)
#define FA_OUTCOME_COUNT     5

/* "succeeded", "failed", "escalated", "cancelled", "unknown" for bit 1 << @i
 * (0 <= i < FA_OUTCOME_COUNT); else NULL. */
const char *fa_task_outcome_name(unsigned i);

/* The bit of outcome @name, or 0 when it names none. NULL accepted. */
unsigned fa_task_outcome_bit(const char *name);

/*
 * Read a task's "outcome" (@v, at the current path of @s): one outcome
 * name or a non-empty array of distinct ones, into *@out as FA_OUTCOME_*
 * bits. A bad value fails with the path and what was found, e.g.
 * "$.harness.tasks[2].outcome[1]: expected one of succeeded, failed,
 * escalated, cancelled, unknown, got string "ok"".
 */
enum fa_rc fa_task_spec_read_outcome(struct fa_schema *s, const cJSON *v, unsigned *out);

#endif
