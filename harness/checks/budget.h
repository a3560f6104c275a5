/* budget.h -- budget.escalates: a task the provider keeps refusing stops inside its budget and
 * escalates. */
#ifndef HX_BUDGET_H
#define HX_BUDGET_H

#include "judge.h"

/* Slack after first arrival + max_wait_s before an attempt counts as past
 * the budget, ms (requests take time too); the parameter "tolerance_ms"
 * overrides. */
#define HX_BUDGET_TOLERANCE_MS 500

/*
 * budget.escalates (L4; the retry-safety guide: budgets end in an
 * explicit outcome with context; five-step test, step 5). Judges the
 * tasks its parameter "tasks" lists (n/a when none is listed or
 * none was sent). Fails when such a task made more attempts than its
 * max_attempts, or an attempt arrived later than its first attempt's
 * arrival + max_wait_s + tolerance; in stdio mode also when the client
 * printed no `escalation` line for it, the record breaks
 * docs/escalation.schema.json (hx_escalation_invalid names the path), or
 * its result's outcome is not "escalated". In exec mode a task within its
 * budget is n/a (no record can be read), never pass; so is one of a stdio
 * client whose hello lists no "escalation" feature, unless it reported
 * the task succeeded without a 2xx answer (a failure).
 */
void hx_budget_check(const struct hx_check_ctx *c, struct hx_check_result *r);

/*
 * Does the client hand tasks over with escalation records? Exec mode
 * never; stdio mode unless its hello lists features without
 * "escalation" (a hand-made input without a hello: yes). A client that
 * cannot escalate ends an exhausted task failed, which stands for it.
 */
bool hx_budget_client_escalates(const struct hx_check_input *in);

#endif
