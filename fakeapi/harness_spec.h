/* harness_spec.h -- a scenario's $.harness block: tasks, events, pacing; expect kept for the
 * harness. */
#ifndef FA_HARNESS_SPEC_H
#define FA_HARNESS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "key.h"
#include "quota.h"
#include "rc.h"
#include "schema.h"
#include "task_spec.h"

/* What fires an event. */
enum fa_event_on {
	FA_ON_SERVER_SENT = 0, /* the provider answered (journal) */
	FA_ON_CLIENT_SAW,      /* the client reported the result (stdio mode) */
};

/* One entry of $.harness.events. */
struct fa_event_spec {
	int64_t at_ms;    /* >= 0: fire this long after the scenario starts; -1: "after" trigger */
	char *after_task; /* "after": the task whose attempt triggers it */
	int after_status; /* "after": the status that attempt got, 100..599; 0 with after_held */
	bool after_held;  /* "after": {"task", "held": true}: fires when the provider holds
	                     an answer to that task (a response with "hold") */
	enum fa_event_on on; /* "after": which side must have seen it */
	int plus_ms;         /* delay after the trigger, 0..600000 ms */
	char **send;         /* owned task ids to start, n_send >= 0 (>= 1 unless kill
	                        or cancel) */
	size_t n_send;
	char **cancel; /* owned task ids to cancel ("cancel"), n_cancel >= 0; none of
	                  them sent by this event, each cancelled by one event only */
	size_t n_cancel;
	bool kill;    /* "kill": true: SIGKILL the client's process group and reap it */
	bool restart; /* "restart": true (needs kill): then release the held answers
	                 (their faults go ahead) and start the client again with the
	                 same CLIENT_STATE_DIR; stdio mode re-sends every task that has
	                 no result yet */
};

/*
 * $.harness.pacing: the rate limits the client is told (stdio task lines
 * carry them) and graded on (wait.pacing): per key, RPM requests and TPM
 * tokens (the LLM rate-limit guide's cost: estimated prompt tokens plus max_tokens) per
 * period_s, each a token bucket of that capacity refilling continuously
 * over the period, full at the start.
 */
struct fa_pacing_spec {
	bool given;   /* $.harness.pacing present */
	int rpm;      /* requests per period per key, 1..1000000; 0 = no request limit */
	int tpm;      /* tokens per period per key, 1..100000000; 0 = no token limit
	                 (at least one of rpm and tpm is set) */
	int period_s; /* 1..86400 s, default $.provider.quota.period_s, else 60 */
};

/* The $.harness block. */
struct fa_harness_spec {
	struct fa_task_spec *tasks; /* owned */
	size_t n_tasks;
	struct fa_event_spec *events; /* owned */
	size_t n_events;
	cJSON *expect;                /* owned object: check id -> parameters; NULL = none */
	int timeout_s;                /* whole scenario, 1..3600, default 60 */
	struct fa_pacing_spec pacing; /* $.harness.pacing */
};

/*
 * Read the $.harness object @obj (at the current path of @s) into @h:
 * tasks, events (each task sent by exactly one event, no cycle of
 * "after" triggers; an "after" trigger is a status or "held": true;
 * "send" may be left out with "kill": true or a "cancel" list, and
 * "restart" needs "kill"; each task cancelled by one event at most,
 * never by the event that sends it), the tasks' optional "goal" (1..500
 * characters), expect (an object, copied as it is: the harness validates
 * each check's parameters), timeout_s (default 60) and pacing (rpm
 * 1..1000000 and/or tpm 1..100000000, period_s 1..86400, default
 * @quota's period_s, or 60 when @quota is NULL). Each task's key must be
 * one of the @n_keys @keys. Errors are recorded through @s as
 * fa_scenario_parse() describes; on FA_EINVAL whatever was read stays in
 * @h for fa_harness_spec_release().
 */
enum fa_rc fa_harness_spec_read(struct fa_schema *s, const cJSON *obj, const struct fa_key *keys,
                                size_t n_keys, const struct fa_quota_spec *quota,
                                struct fa_harness_spec *h);

/* The task of @h whose id is @id, or NULL (also for @id NULL). The
 * pointer is into h->tasks. */
const struct fa_task_spec *fa_harness_spec_task(const struct fa_harness_spec *h, const char *id);

/* Release what @h owns and zero it (the struct itself is embedded). */
void fa_harness_spec_release(struct fa_harness_spec *h);

#endif
