/* check.c -- the check registry: one row per conformance check, and the engine that judges a
 * journal with them. */
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bounded.h"
#include "budget.h"
#include "cancel.h"
#include "circuit.h"
#include "classify.h"
#include "concurrency.h"
#include "coverage.h"
#include "escalation.h"
#include "evidence.h"
#include "interruption.h"
#include "outcome.h"
#include "pacing.h"
#include "pause.h"
#include "suggest.h"
#include "tally.h"
#include "wave.h"
#include "write.h"

/*
 * Parameter tables ($.harness.expect["CHECK"]), one per check that takes
 * parameters besides "required" (expect.h). docs/checks.md's Parameters
 * table has the same rows, with each doc as its meaning.
 */
#define TOLERANCE_MAX_MS 60000
#define EARLY_DOC        "how early an attempt may arrive before the announced instant and still pass, ms"

static const struct hx_check_param pause_params[] = {
	{ "tolerance_ms", HX_PARAM_INT, 0, TOLERANCE_MAX_MS, HX_PAUSE_TOLERANCE_MS, EARLY_DOC },
};
static const struct hx_check_param jitter_params[] = {
	{ "tolerance_ms", HX_PARAM_INT, 0, TOLERANCE_MAX_MS, HX_PAUSE_TOLERANCE_MS, EARLY_DOC },
	{ "min_tasks", HX_PARAM_INT, 2, 1000, HX_WAVE_MIN_TASKS,
	  "fewest held tasks that must come back before the spread is judged" },
	{ "w_min_ms", HX_PARAM_INT, 1, 3600000, HX_WAVE_W_MIN_MS,
	  "W_min, the least jitter window a client may use, ms" },
};
static const struct hx_check_param concurrency_params[] = {
	{ "max_concurrent_requests", HX_PARAM_INT, 1, 1000, HX_PARAM_NO_DEFAULT,
	  "most attempts of one scope in flight at once" },
};
static const struct hx_check_param pacing_params[] = {
	{ "tolerance_ms", HX_PARAM_INT, 0, TOLERANCE_MAX_MS, HX_PACING_TOLERANCE_MS,
	  "refill credited to the client's buckets at each attempt, as ms of refill" },
};
static const struct hx_check_param budget_params[] = {
	{ "tasks", HX_PARAM_TASKS, 0, 0, HX_PARAM_NO_DEFAULT,
	  "the ids of the tasks whose budget the scenario makes run out, each a task of the "
	  "scenario, listed once" },
	{ "tolerance_ms", HX_PARAM_INT, 0, TOLERANCE_MAX_MS, HX_BUDGET_TOLERANCE_MS,
	  "how late after the first attempt's arrival + `max_wait_s` an attempt may arrive "
	  "and still be inside the budget, ms" },
};
static const struct hx_check_param cancel_params[] = {
	{ "margin_ms", HX_PARAM_INT, 0, 60000, HX_CANCEL_MARGIN_MS,
	  "how long the quiet window goes on past the wait that was pending at the cancel, ms" },
	{ "tolerance_ms", HX_PARAM_INT, 0, TOLERANCE_MAX_MS, HX_CANCEL_TOLERANCE_MS,
	  "how soon after the cancel an attempt counts as already on its way, ms" },
};
static const struct hx_check_param circuit_params[] = {
	{ "max_identical", HX_PARAM_INT, 1, 100, HX_PARAM_NO_DEFAULT,
	  "most answers one identical failure may get in the scenario" },
};

#define PARAMS(t) (t), (sizeof(t) / sizeof((t)[0]))
#define NO_PARAMS NULL, 0

/* The sources, named as docs/references.md names them. */
#define GUIDE     "the retry-safety guide: "
#define LLM_GUIDE "the LLM rate-limit guide: "

/*
 * The registry: definition order is report order (text, JSON, JUnit and
 * the tests depend on it); docs/checks.md lists the same rows. A row:
 * id, level, required by default, source, title, parameters, judge,
 * judged without an attributed attempt.
 */
static const struct hx_check_def defs[] = {
	{ "attempts.bounded", 1, true,
	  GUIDE "retry budgets count every attempt; a Retry-After date already past gets a "
	        "small minimum delay, not a tight loop (RFC 9110 §10.2.3)",
	  "no task exceeds its attempt budget or loops after a past or invalid "
	  "Retry-After",
	  NO_PARAMS, hx_bounded_check, true },
	{ "wait.retry_after", 1, true,
	  GUIDE "429 is a scheduler signal; Retry-After wins over a shorter local delay "
	        "(RFC 9110 §10.2.3, RFC 6585 §4)",
	  "a task told to wait by Retry-After does not retry before that instant",
	  PARAMS(pause_params), hx_pause_retry_after_check, false },
	{ "classify.no_retry_4xx", 1, true,
	  GUIDE "400, 401, 403, 404 and 422 need a fix, not a retry",
	  "no retry after 400, 401, 403, 404 or 422", NO_PARAMS, hx_classify_check, false },
	{ "outcome.expected", 1, true,
	  GUIDE "a budget ends in an explicit outcome; a retryable answer is retried within "
	        "the budget",
	  "each task ends as the scenario says a correct client ends it within its budget",
	  NO_PARAMS, hx_outcome_check, true },
	{ "wait.scope_pause", 2, true, GUIDE "one local registry per scope; five-step test, step 2",
	  "no other task of the scope arrives inside an announced pause", PARAMS(pause_params),
	  hx_pause_scope_check, false },
	{ "wait.jitter", 2, true,
	  GUIDE "full jitter keeps workers that failed together from returning as one wave; "
	        "five-step test, step 3",
	  "the tasks a shared pause held do not come back as one wave", PARAMS(jitter_params),
	  hx_wave_check, false },
	{ "attempts.hidden", 2, true,
	  GUIDE "count every attempt really sent, library retries included; measure at the "
	        "fake API",
	  "the client's count of its attempts equals the provider's", NO_PARAMS, hx_tally_check,
	  false },
	{ "write.key_stable", 3, true,
	  GUIDE "one idempotency key per logical operation, kept across retries and "
	        "restarts; five-step test, step 4",
	  "every create of one logical write carries the same idempotency key", NO_PARAMS,
	  hx_write_key_stable, false },
	{ "write.body_stable", 3, true,
	  GUIDE "a retry repeats the same logical request: the same key and the same body",
	  "every create of one logical write carries the same body", NO_PARAMS,
	  hx_write_body_stable, false },
	{ "write.no_duplicate", 3, true,
	  GUIDE "the most dangerous retry bug is a duplicated side effect",
	  "the provider committed at most one record per logical write", NO_PARAMS,
	  hx_write_no_duplicate, false },
	{ "write.reconcile_first", 3, true,
	  GUIDE "after an ambiguous outcome, ask the provider (or replay with the same key) "
	        "before sending the write again",
	  "after an ambiguous outcome the next request is a read or a replay, never a "
	  "fresh create",
	  NO_PARAMS, hx_write_reconcile_first, false },
	{ "ambiguity.preserved", 3, true,
	  GUIDE "an outcome nobody can know is reported as unknown or escalated, never as "
	        "a failure or a success without evidence",
	  "an ambiguous write is reported unknown, escalated, or succeeded with the "
	  "provider's own record id",
	  NO_PARAMS, hx_write_ambiguity, false },
	{ "wait.concurrency", 2, false,
	  GUIDE "shared_scope max_concurrent_requests; a scheduler limits parallelism, not "
	        "only the rate",
	  "in-flight attempts per scope stay within the scenario's cap", PARAMS(concurrency_params),
	  hx_concurrency_check, false },
	{ "wait.pacing", 2, false,
	  LLM_GUIDE "every call reserves one request and its estimated tokens (prompt plus "
	            "max_tokens) from per-minute limits; a token bucket each",
	  "the client's pace per key stays within the RPM and TPM the scenario publishes",
	  PARAMS(pacing_params), hx_pacing_check, false },
	{ "budget.escalates", 4, true,
	  GUIDE "a budget counts attempts and waiting, and ends in an explicit outcome "
	        "with context; five-step test, step 5",
	  "a task the provider keeps refusing stops inside its budget and hands over an "
	  "escalation record",
	  PARAMS(budget_params), hx_budget_check, false },
	{ "escalation.sanitised", 4, true,
	  GUIDE "no secret and no raw request body in what an operator is shown; "
	        "five-step test, step 5",
	  "no key or body canary in the client's output, escalation records or state "
	  "(key only)",
	  NO_PARAMS, hx_escalation_sanitised_check, true },
	{ "cancel.quiet", 4, true,
	  GUIDE "a queue needs cancel; pending retries are deleted before they wake; "
	        "five-step test, step 5",
	  "a cancelled task sends nothing more and reports cancelled", PARAMS(cancel_params),
	  hx_cancel_check, false },
	{ "classify.circuit", 4, false,
	  GUIDE "a circuit breaker for repeated identical failures; varied whitespace or "
	        "field order is not a new request",
	  "an identical 4xx failure is not resent past the scenario's count",
	  PARAMS(circuit_params), hx_circuit_check, false },
	{ "stream.no_silent_retry", 4, false,
	  LLM_GUIDE "after the first streamed token a silent retry is no longer possible; "
	            "the interruption is shown",
	  "a stream that broke after its first token is not retried before the client "
	  "reports stream_interrupted",
	  NO_PARAMS, hx_interruption_check, false },
};

#define N_DEFS (sizeof(defs) / sizeof(defs[0]))

size_t hx_check_count(void)
{
	return N_DEFS;
}

const struct hx_check_def *hx_check_def_at(size_t i)
{
	return i < N_DEFS ? &defs[i] : NULL;
}

const struct hx_check_def *hx_check_find(const char *id)
{
	if (id == NULL)
		return NULL;
	for (size_t i = 0; i < N_DEFS; i++)
		if (strcmp(defs[i].id, id) == 0)
			return &defs[i];
	return NULL;
}

const char *hx_check_suggest(const char *id)
{
	const char *ids[N_DEFS];

	for (size_t i = 0; i < N_DEFS; i++)
		ids[i] = defs[i].id;
	return fa_suggest(id, ids, N_DEFS);
}

void hx_check_ctx_init(struct hx_check_ctx *c, const struct hx_check_input *in)
{
	size_t n = in->n_attempts;

	memset(c, 0, sizeof(*c));
	c->in = in;
	c->all = fa_xcalloc(n + 1, sizeof(*c->all));
	c->att = fa_xcalloc(n + 1, sizeof(*c->att));
	c->un = fa_xcalloc(n + 1, sizeof(*c->un));
	for (size_t i = 0; i < n; i++) {
		c->all[c->n_all++] = &in->attempts[i];
		if (!hx_check_attributed(in, &in->attempts[i]))
			c->un[c->n_un++] = &in->attempts[i];
	}
	hx_evidence_sort_arrival(c->all, c->n_all);
	for (size_t i = 0; i < c->n_all; i++)
		if (hx_check_attributed(in, c->all[i]))
			c->att[c->n++] = c->all[i];
	c->expect = fa_xcalloc(N_DEFS, sizeof(*c->expect));
	for (size_t i = 0; i < N_DEFS; i++)
		hx_param_read(in->sc, defs[i].id, defs[i].params, defs[i].n_params, &c->expect[i]);
}

/* A programming error: a judge asked for what the registry does not have. */
static void internal_error(const char *what, const char *name)
{
	fprintf(stderr, "fakeapi-harness: internal error: %s %s\n", what, name ? name : "(null)");
	abort();
}

void hx_check_ctx_focus(struct hx_check_ctx *c, const struct hx_check_def *def)
{
	if (def == NULL || def < defs || def >= defs + N_DEFS)
		internal_error("not a registry row:", def ? def->id : NULL);
	c->def = def;
	c->ex = &c->expect[def - defs];
}

void hx_check_ctx_release(struct hx_check_ctx *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; c->expect != NULL && i < N_DEFS; i++)
		hx_param_set_release(&c->expect[i]);
	free(c->expect);
	free(c->all);
	free(c->att);
	free(c->un);
	memset(c, 0, sizeof(*c));
}

bool hx_check_covered(const struct hx_check_ctx *c, const char **why)
{
	return hx_coverage_covers(c, why);
}

/* --strict makes every check required; else the scenario's "required",
 * else the check's default. */
static bool is_required(const struct hx_check_ctx *c)
{
	const struct hx_param_value *req = hx_check_param(c, hx_param_required.name);

	if (c->in->strict)
		return true;
	return req->given ? req->i != 0 : c->def->required;
}

void hx_check_run_all(const struct hx_check_input *in, struct hx_check_result **out, size_t *n)
{
	struct hx_check_ctx c;
	struct hx_check_result *res = fa_xcalloc(N_DEFS, sizeof(*res));
	const char *why;

	hx_check_ctx_init(&c, in);
	for (size_t i = 0; i < N_DEFS; i++) {
		hx_check_ctx_focus(&c, &defs[i]);
		res[i].id = defs[i].id;
		res[i].level = defs[i].level;
		res[i].required = is_required(&c);
		res[i].verdict = HX_NA;
		if (!hx_check_covered(&c, &why)) {
			res[i].uncovered = true;
			res[i].detail = fa_xasprintf("not judged here: %s", why);
		} else if (c.n == 0 && !defs[i].always)
			hx_check_na_empty(&c, &res[i]);
		else
			defs[i].judge(&c, &res[i]);
		if (res[i].detail == NULL)
			res[i].detail = fa_xstrdup("not evaluated");
	}
	hx_check_ctx_release(&c);
	*out = res;
	*n = N_DEFS;
}
