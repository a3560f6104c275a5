/* circuit.c -- classify.circuit: an identical failure is not resent past the scenario's count. */
#include "circuit.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "evidence.h"
#include "route.h"

#define CHECK_ID "classify.circuit"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* An answer the client got whole that says the request itself is wrong:
 * 400..499 but 408 (a timeout) and 429 (a pause). */
static bool identical_kind(const struct fa_attempt *a)
{
	return a->status >= 400 && a->status <= 499 && a->status != 408 && a->status != 429 &&
	       a->t_response_us >= 0 && a->delivered == FA_DELIVERED_COMPLETE;
}

static const struct fa_route_spec *route_of(const struct fa_scenario *sc,
                                            const struct fa_attempt *a)
{
	for (size_t i = 0; sc != NULL && a->route != NULL && i < sc->n_routes; i++)
		if (same(sc->routes[i].id, a->route))
			return &sc->routes[i];
	return NULL;
}

/* The endpoint @a went to: its journaled route, else (an answer the
 * provider gave before routing, such as a 401 for a bad key) the first
 * route of the scenario whose method and template match its path; NULL
 * when none does. */
static const struct fa_route_spec *endpoint_of(const struct fa_scenario *sc,
                                               const struct fa_attempt *a)
{
	const struct fa_route_spec *rt = route_of(sc, a);

	for (size_t i = 0; rt == NULL && sc != NULL && a->path != NULL && i < sc->n_routes; i++)
		if (same(sc->routes[i].method, a->method) &&
		    fa_route_match(sc->routes[i].path, a->path, NULL))
			rt = &sc->routes[i];
	return rt;
}

/* The error code of the answer @a got, as the scenario wrote its body:
 * body.error.code, or body.error when that is a string; "" without one
 * (no route, no body, a provider answer the scenario did not write). */
static const char *code_of(const struct fa_scenario *sc, const struct fa_attempt *a)
{
	const struct fa_route_spec *rt = route_of(sc, a);
	const cJSON *body = NULL, *err, *code;

	if (sc != NULL && same(a->fault, "during_pause") && sc->has_during_pause)
		body = sc->during_pause.body;
	else if (rt != NULL && a->response_index >= 0 &&
	         (size_t)a->response_index < rt->n_responses)
		body = rt->responses[a->response_index].body;
	err = cJSON_GetObjectItemCaseSensitive(body, "error");
	if (cJSON_IsString(err))
		return err->valuestring;
	code = cJSON_GetObjectItemCaseSensitive(err, "code");
	return cJSON_IsString(code) ? code->valuestring : "";
}

/* One kind of identical failure. */
struct group {
	const char *method;
	const char *route; /* route id, or NULL: no route matched */
	const char *where; /* the route's template, else the path */
	int status;
	const char *code;
	const struct fa_attempt **att; /* owned: its attempts, arrival order */
	size_t n;
};

static bool in_group(const struct group *g, const struct fa_scenario *sc,
                     const struct fa_attempt *a)
{
	const struct fa_route_spec *rt = endpoint_of(sc, a);

	return same(g->method, a->method) && g->status == a->status &&
	       (g->route != NULL ? rt != NULL && same(g->route, rt->id)
	                         : rt == NULL && same(g->where, a->path)) &&
	       strcmp(g->code, code_of(sc, a)) == 0;
}

/* "POST /v1/records (route create) 422 \"invalid_filter\"" */
static char *group_name(const struct group *g)
{
	char *route = g->route ? fa_xasprintf(" (route %s)", g->route) : fa_xstrdup(" (no route)");
	char *s = g->code[0] != '\0'
	                  ? fa_xasprintf("%s %s%s %d \"%s\"", g->method ? g->method : "?",
	                                 g->where ? g->where : "?", route, g->status, g->code)
	                  : fa_xasprintf("%s %s%s %d", g->method ? g->method : "?",
	                                 g->where ? g->where : "?", route, g->status);

	free(route);
	return s;
}

/* "t1, t2, t3": the distinct tasks of @g, in arrival order. */
static char *task_list(const struct group *g)
{
	char *list = fa_xstrdup(""), *more;
	size_t shown = 0;

	for (size_t k = 0; k < g->n; k++) {
		bool seen = false;

		for (size_t j = 0; j < k && !seen; j++)
			seen = same(g->att[j]->task, g->att[k]->task);
		if (seen)
			continue;
		more = fa_xasprintf("%s%s%s", list, shown++ ? ", " : "", g->att[k]->task);
		free(list);
		list = more;
	}
	return list;
}

void hx_circuit_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	const struct hx_param_value *mx = hx_check_param(c, "max_identical");
	const struct fa_attempt **order;
	struct group *gs;
	struct hx_evidence bad = { 0 }, good = { 0 };
	const struct group *worst = NULL;
	size_t n = 0, n_gs = 0, n_over = 0, max;
	char *name, *tasks;

	if (!mx->given) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the scenario sets no count of identical failures "
		                       "($.harness.expect[\"" CHECK_ID "\"].max_identical)");
		return;
	}
	max = (size_t)mx->i;
	/* the attributed identical failures, arrival order */
	order = fa_xcalloc(c->n + 1, sizeof(*order));
	gs = fa_xcalloc(c->n + 1, sizeof(*gs));
	for (size_t i = 0; i < c->n; i++)
		if (identical_kind(c->att[i]))
			order[n++] = c->att[i];
	for (size_t i = 0; i < n; i++) {
		const struct fa_attempt *a = order[i];
		const struct fa_route_spec *rt = endpoint_of(in->sc, a);
		struct group *g = NULL;

		for (size_t k = 0; k < n_gs && g == NULL; k++)
			if (in_group(&gs[k], in->sc, a))
				g = &gs[k];
		if (g == NULL) {
			g = &gs[n_gs++];
			g->method = a->method;
			g->route = rt != NULL ? rt->id : NULL;
			g->where = rt != NULL ? rt->path : a->path;
			g->status = a->status;
			g->code = code_of(in->sc, a);
			g->att = fa_xcalloc(n, sizeof(*g->att));
		}
		g->att[g->n++] = a;
	}
	for (size_t k = 0; k < n_gs; k++) {
		const struct group *g = &gs[k];

		for (size_t i = 0; i < g->n; i++)
			hx_evidence_add(g->n > max ? &bad : &good, g->att[i]->seq);
		if (g->n > max)
			n_over++;
		/* show the first group over the count, else the largest */
		if (worst == NULL || (g->n > max && worst->n <= max) ||
		    (g->n <= max && worst->n <= max && g->n > worst->n))
			worst = g;
	}

	if (n_gs == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no task received a 4xx other than 408 and 429: no "
		                       "identical failure to count");
	} else {
		name = group_name(worst);
		tasks = task_list(worst);
		if (n_over > 0) {
			r->verdict = HX_FAIL;
			r->detail = fa_xasprintf(
			        "%s was answered %zu times, at most %zu allowed (tasks %s; "
			        "seq %llu, the first past the count, arrived at +%.1f ms)%s",
			        name, worst->n, max, tasks,
			        (unsigned long long)worst->att[max]->seq,
			        (double)worst->att[max]->t_arrival_us / 1000.0,
			        n_over > 1 ? "; other failures repeated too" : "");
			hx_evidence_give(&bad, r);
		} else if (worst->n < max) {
			/* the client never met the count: its circuit was not tested */
			r->verdict = HX_NA;
			r->detail = fa_xasprintf(
			        "%s%s was answered %zu time%s (tasks %s): fewer than the %zu "
			        "after which the circuit must open, so the scenario never "
			        "tested it",
			        n_gs > 1 ? "the most repeated failure, " : "", name, worst->n,
			        worst->n == 1 ? "" : "s", tasks, max);
		} else {
			r->verdict = HX_PASS;
			r->detail = fa_xasprintf(
			        "%s%s was answered %zu time%s (tasks %s), at most %zu allowed",
			        n_gs > 1 ? "the most repeated failure, " : "", name, worst->n,
			        worst->n == 1 ? "" : "s", tasks, max);
			hx_evidence_give(&good, r);
		}
		free(name);
		free(tasks);
	}
	for (size_t k = 0; k < n_gs; k++)
		free(gs[k].att);
	free(gs);
	free(order);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
