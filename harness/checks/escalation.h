/* escalation.h -- escalation records: their required fields, and escalation.sanitised. */
#ifndef HX_ESCALATION_H
#define HX_ESCALATION_H

#include <stddef.h>

#include <cJSON.h>

#include "judge.h"

/*
 * Check @record (the `record` member of a client's escalation line)
 * against docs/escalation.schema.json: every required member, its type,
 * range and enumeration. Returns NULL when it conforms, else an owned
 * message naming the first fault by JSON path, e.g. "$.record.attempts[1]
 * .status: expected integer 0..599, got string \"429\"" or "$.record:
 * missing member \"fingerprint\"". NULL @record: "$.record: missing".
 */
char *hx_escalation_invalid(const cJSON *record);

/* The parts of a record that have a "required" list in the schema. */
enum hx_escalation_part {
	HX_ESCALATION_RECORD = 0, /* the record itself */
	HX_ESCALATION_ATTEMPT,    /* an item of its "attempts" */
	HX_ESCALATION_BUDGET,     /* its "budget" */
};

/*
 * The members hx_escalation_invalid() requires of @part, in the
 * validator's order: the first min(count, @cap) names (static strings)
 * go into @names. Returns the count. The unit tests compare them with the
 * schema's "required" lists, so the two cannot drift.
 */
size_t hx_escalation_required(enum hx_escalation_part part, const char **names, size_t cap);

/* The last `escalation` line the client printed for task @task (borrowed
 * from @in->msgs), or NULL. */
const struct hx_client_msg *hx_escalation_line_of(const struct hx_check_input *in,
                                                  const char *task);

/* The record of the last `escalation` line the client printed for task
 * @task (borrowed from @in->msgs), or NULL. */
const cJSON *hx_escalation_of(const struct hx_check_input *in, const char *task);

/*
 * escalation.sanitised (L4; the retry-safety guide: never put secrets or
 * the raw body in an approval card). Fails when c->in->canary_hits is not
 * empty (detail and evidence name each place). Passes when the client
 * printed at least one escalation record and the search
 * (c->in->canary_bytes_searched > 0) found nothing; n/a otherwise (exec mode has no records; a
 * scenario without escalation shows nothing to judge).
 */
void hx_escalation_sanitised_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
