/* task_spec.h -- what a scenario's tasks must be once everything is read. */
#ifndef FA_TASK_SPEC_H
#define FA_TASK_SPEC_H

#include "rc.h"
#include "scenario.h"
#include "schema.h"

/*
 * Check every task of @sc, read whole (routes, provider and $.harness),
 * at $.harness (the current path of @s): none has a header the provider
 * reads a key from ("Authorization", "X-Api-Key": the client sends
 * FAKEAPI_KEY itself), and each reaches an answer of the scenario's own,
 * as the provider routes it: a route (fa_route_find on the task's
 * percent-decoded path, the query ignored) or a reconciliation read kept
 * on (fa_reconcile_is_read_of). The first task at fault fails with
 * "$.harness.tasks[i]: GET /p matches no route (routes: ...)" (as many
 * routes as fit) or "$.harness.tasks[i].headers: header "Authorization"
 * cannot go in a task (...)"; FA_OK when all are fine.
 */
enum fa_rc fa_task_spec_check(struct fa_schema *s, const struct fa_scenario *sc);

#endif
