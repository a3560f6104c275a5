/* coverage.c -- which checks a scenario and a mode can judge at all, decided before the run. */
#include "coverage.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "route.h"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* Every answer @sc scripts: each route's responses, then during_pause
 * (index past the routes'); NULL past the last. */
static const struct fa_response_spec *answer_at(const struct fa_scenario *sc, size_t k)
{
	for (size_t i = 0; i < sc->n_routes; i++) {
		if (k < sc->routes[i].n_responses)
			return &sc->routes[i].responses[k];
		k -= sc->routes[i].n_responses;
	}
	return k == 0 && sc->has_during_pause ? &sc->during_pause : NULL;
}

static bool names_pause(const struct fa_response_spec *a)
{
	if (a->has_retry_after || a->shape.shape != FA_SHAPE_NONE)
		return true;
	for (size_t h = 0; h < a->n_headers; h++)
		if (strcasecmp(a->headers[h].name, "retry-after") == 0 ||
		    strcasecmp(a->headers[h].name, "retry-after-ms") == 0)
			return true;
	return false;
}

/* Some answer of @sc can announce a pause: a Retry-After (scripted,
 * literal or a shape's), or the quota model's 429. */
static bool can_pause(const struct fa_scenario *sc)
{
	const struct fa_response_spec *a;

	if (sc->has_quota)
		return true;
	for (size_t k = 0; (a = answer_at(sc, k)) != NULL; k++)
		if (names_pause(a))
			return true;
	return false;
}

#define NO_PAUSE "no answer of the scenario announces a pause (no Retry-After, no quota)"

/* The scope task @t belongs to, as the provider names it without its
 * kind (the kind is the scenario's): its key's id or its key's user. */
static const char *scope_of(const struct fa_scenario *sc, const struct fa_task_spec *t)
{
	const struct fa_key *k = fa_scenario_key_by_id(sc, t->key);

	if (k == NULL)
		return t->key;
	return sc->scope == FA_SCOPE_KEY ? k->id : k->user;
}

/* The event that sends task @id, or NULL. */
static const struct fa_event_spec *sender(const struct fa_scenario *sc, const char *id)
{
	const struct fa_harness_spec *h = &sc->harness;

	for (size_t e = 0; e < h->n_events; e++)
		for (size_t k = 0; k < h->events[e].n_send; k++)
			if (same(h->events[e].send[k], id))
				return &h->events[e];
	return NULL;
}

static int64_t release_ms(const struct fa_scenario *sc, const char *id, size_t depth)
{
	const struct fa_event_spec *ev = sender(sc, id);
	int64_t base;

	if (ev == NULL || depth > sc->harness.n_events)
		return -1;
	if (ev->at_ms >= 0)
		return ev->at_ms;
	base = release_ms(sc, ev->after_task, depth + 1);
	return base < 0 ? -1 : base + ev->plus_ms + 1;
}

int64_t hx_coverage_release_ms(const struct fa_scenario *sc, const char *id)
{
	return sc != NULL ? release_ms(sc, id, 0) : -1;
}

/* Tasks of the scope of task @i (itself included) and, in *@later, whether
 * one of them is released after the scope's first; *@zero: all at 0 ms. */
static size_t scope_tasks(const struct fa_scenario *sc, size_t i, bool *later, bool *zero)
{
	const struct fa_harness_spec *h = &sc->harness;
	const char *s = scope_of(sc, &h->tasks[i]);
	int64_t first = -1, last = -1;
	size_t n = 0;

	for (size_t j = 0; j < h->n_tasks; j++) {
		int64_t at;

		if (!same(scope_of(sc, &h->tasks[j]), s))
			continue;
		n++;
		at = hx_coverage_release_ms(sc, h->tasks[j].id);
		if (at < 0)
			continue;
		if (first < 0 || at < first)
			first = at;
		if (at > last)
			last = at;
	}
	*later = last > first;
	*zero = last <= 0;
	return n;
}

static bool scope_pause_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_scenario *sc = c->in->sc;
	bool shared = false, all_zero = true;

	for (size_t i = 0; i < sc->harness.n_tasks; i++) {
		bool later, zero;

		if (scope_tasks(sc, i, &later, &zero) < 2)
			continue;
		shared = true;
		if (later && can_pause(sc))
			return true;
		all_zero = all_zero && zero;
	}
	if (!shared)
		*why = "no scope has two tasks: a pause told to one task holds no other";
	else if (!can_pause(sc))
		*why = NO_PAUSE;
	else if (all_zero)
		*why = "every task of the scope starts at 0 ms, so whether one starts inside "
		       "the pause is start-up luck";
	else
		*why = "every task of each shared scope starts at the same instant, so whether "
		       "one starts inside the pause is start-up luck";
	return false;
}

static bool jitter_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_scenario *sc = c->in->sc;
	size_t most = 0;

	for (size_t i = 0; i < sc->harness.n_tasks; i++) {
		bool later, zero;
		size_t n = scope_tasks(sc, i, &later, &zero);

		if (n > most)
			most = n;
	}
	if (most < (size_t)hx_check_param(c, "min_tasks")->i) {
		*why = "no scope has min_tasks tasks, so no pause can hold enough of them "
		       "to judge a spread";
		return false;
	}
	if (!can_pause(c->in->sc)) {
		*why = NO_PAUSE;
		return false;
	}
	return true;
}

static bool retry_after_covers(const struct hx_check_ctx *c, const char **why)
{
	if (can_pause(c->in->sc))
		return true;
	*why = NO_PAUSE;
	return false;
}

static bool non_retryable(int status)
{
	return status == 400 || status == 401 || status == 403 || status == 404 || status == 422;
}

/* A task of @sc reaches a route with a side effect. */
static bool has_write(const struct fa_scenario *sc)
{
	for (size_t i = 0; i < sc->harness.n_tasks; i++) {
		const struct fa_task_spec *t = &sc->harness.tasks[i];
		const struct fa_route_spec *rt =
		        t->method && t->path
		                ? fa_route_of_target(sc->routes, sc->n_routes, t->method, t->path)
		                : NULL;

		if (rt != NULL && rt->effect != FA_EFFECT_NONE)
			return true;
	}
	return false;
}

/* A scripted 400, 401, 403, 404 or 422, or the store's own (an
 * idempotency contract's 400 and 422, a status read's 404). */
static bool classify_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_scenario *sc = c->in->sc;
	const struct fa_response_spec *a;

	for (size_t k = 0; (a = answer_at(sc, k)) != NULL; k++)
		if (non_retryable(a->status))
			return true;
	if (sc->store.profile != FA_IDEM_NONE || has_write(sc))
		return true;
	*why = "no answer of the scenario is a 400, 401, 403, 404 or 422";
	return false;
}

static bool write_covers(const struct hx_check_ctx *c, const char **why)
{
	if (has_write(c->in->sc))
		return true;
	*why = "no task writes (none reaches a route with an effect)";
	return false;
}

static bool outcome_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_harness_spec *h = &c->in->sc->harness;

	for (size_t i = 0; i < h->n_tasks; i++)
		if (h->tasks[i].outcome != 0)
			return true;
	*why = "no task says how a correct client ends it ($.harness.tasks[i].outcome)";
	return false;
}

static bool hidden_covers(const struct hx_check_ctx *c, const char **why)
{
	if (c->in->mode == HX_MODE_STDIO)
		return true;
	*why = "an exec client reports no attempt count";
	return false;
}

static bool concurrency_covers(const struct hx_check_ctx *c, const char **why)
{
	if (hx_check_param(c, "max_concurrent_requests")->given)
		return true;
	*why = "the scenario sets no max_concurrent_requests";
	return false;
}

static bool pacing_covers(const struct hx_check_ctx *c, const char **why)
{
	if (c->in->sc->harness.pacing.given)
		return true;
	*why = "the scenario publishes no rate limit ($.harness.pacing)";
	return false;
}

static bool budget_covers(const struct hx_check_ctx *c, const char **why)
{
	if (hx_check_param(c, "tasks")->n_tasks > 0)
		return true;
	*why = "the scenario lists no task whose budget runs out";
	return false;
}

static bool cancel_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_harness_spec *h = &c->in->sc->harness;

	for (size_t e = 0; e < h->n_events; e++)
		if (h->events[e].n_cancel > 0)
			return true;
	*why = "no event cancels a task";
	return false;
}

static bool circuit_covers(const struct hx_check_ctx *c, const char **why)
{
	if (hx_check_param(c, "max_identical")->given)
		return true;
	*why = "the scenario sets no max_identical";
	return false;
}

static bool stream_covers(const struct hx_check_ctx *c, const char **why)
{
	const struct fa_harness_spec *h = &c->in->sc->harness;

	for (size_t i = 0; i < h->n_tasks; i++)
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h->tasks[i].body, "stream")))
			return true;
	*why = "no task asks for a stream";
	return false;
}

static const struct {
	const char *id;
	hx_check_covers_fn *covers;
} table[] = {
	{ "wait.retry_after", retry_after_covers },
	{ "classify.no_retry_4xx", classify_covers },
	{ "outcome.expected", outcome_covers },
	{ "wait.scope_pause", scope_pause_covers },
	{ "wait.jitter", jitter_covers },
	{ "attempts.hidden", hidden_covers },
	{ "write.key_stable", write_covers },
	{ "write.body_stable", write_covers },
	{ "write.no_duplicate", write_covers },
	{ "write.reconcile_first", write_covers },
	{ "ambiguity.preserved", write_covers },
	{ "wait.concurrency", concurrency_covers },
	{ "wait.pacing", pacing_covers },
	{ "budget.escalates", budget_covers },
	{ "cancel.quiet", cancel_covers },
	{ "classify.circuit", circuit_covers },
	{ "stream.no_silent_retry", stream_covers },
};

hx_check_covers_fn *hx_coverage_of(const char *id)
{
	for (size_t i = 0; id != NULL && i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].id, id) == 0)
			return table[i].covers;
	return NULL;
}

bool hx_coverage_covers(const struct hx_check_ctx *c, const char **why)
{
	hx_check_covers_fn *covers = hx_coverage_of(c->def->id);

	*why = NULL;
	if (covers == NULL || c->in->sc == NULL)
		return true;
	/* a scenario without routes was built by hand, not loaded: only the
	 * mode decides there */
	if (c->in->sc->n_routes == 0 && covers != hidden_covers)
		return true;
	if (covers(c, why))
		return true;
	if (*why == NULL)
		*why = "the scenario poses nothing this check judges";
	return false;
}
