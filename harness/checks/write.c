/* write.c -- logical writes: which tasks write, their client references, the write checks. */
#include "write.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "alloc.h"
#include "clock.h"
#include "evidence.h"
#include "route.h"

/* The reconciliation read by key, as the provider journals it. */
#define OPERATION_ROUTE "_reconcile_operation"
#define OPERATION_PATH  "/v1/operations/"

/* ---- which tasks write ------------------------------------------------ */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool writes_method(const char *m)
{
	return same(m, "POST") || same(m, "PUT") || same(m, "PATCH");
}

const struct fa_route_spec *hx_write_route(const struct fa_scenario *sc,
                                           const struct fa_task_spec *t)
{
	const struct fa_route_spec *found = NULL;
	char *path;

	if (sc == NULL || t == NULL || t->path == NULL || !writes_method(t->method))
		return NULL;
	path = fa_xstrndup(t->path, strcspn(t->path, "?"));
	for (size_t i = 0; i < sc->n_routes && found == NULL; i++)
		if (same(sc->routes[i].method, t->method) &&
		    fa_route_match(sc->routes[i].path, path, NULL))
			found = &sc->routes[i];
	free(path);
	return found != NULL && found->effect != FA_EFFECT_NONE ? found : NULL;
}

char *hx_write_reference_new(const char *scenario_id, const char *task_id)
{
	static atomic_uint counter;
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)fa_clock_mono_us() ^ (atomic_fetch_add(&counter, 1) * 2654435761u);
	return fa_xasprintf("%s.%s.%0*x", scenario_id ? scenario_id : "", task_id ? task_id : "",
	                    HX_WRITE_REF_HEX, r);
}

cJSON *hx_write_body(const cJSON *body, const char *field, const char *ref)
{
	cJSON *copy;

	if (body != NULL && !cJSON_IsObject(body))
		return NULL;
	copy = body != NULL ? cJSON_Duplicate(body, 1) : cJSON_CreateObject();
	fa_xcheck(copy, "task body");
	cJSON_DeleteItemFromObjectCaseSensitive(copy, field);
	fa_xcheck(cJSON_AddStringToObject(copy, field, ref), "task body");
	return copy;
}

/* ---- the writes as the journal shows them ------------------------------ */

/* One logical write. */
struct wr {
	const struct fa_task_spec *t;  /* its task (borrowed from the scenario) */
	const char *ref;               /* its client reference, or NULL */
	const struct fa_attempt **att; /* owned array: its attempts, arrival order */
	size_t n;
};

/* Every logical write of one scenario run. */
struct writes {
	const struct hx_check_input *in;
	struct wr *w; /* owned, n */
	size_t n;
};

/* The Idempotency-Key @a carried; an empty header is none. */
static const char *key_of(const struct fa_attempt *a)
{
	return a->idempotency_key != NULL && a->idempotency_key[0] != '\0' ? a->idempotency_key
	                                                                   : NULL;
}

/* An attempt on a route with an effect: an attempt to create. */
static bool is_create(const struct fa_scenario *sc, const struct fa_attempt *a)
{
	for (size_t i = 0; sc != NULL && a->route != NULL && i < sc->n_routes; i++)
		if (strcmp(sc->routes[i].id, a->route) == 0)
			return sc->routes[i].effect != FA_EFFECT_NONE;
	return false;
}

/* The write @a carries the client reference of, else the one its task
 * is; NULL when neither. */
static struct wr *owner(const struct writes *ws, const struct fa_attempt *a)
{
	for (size_t i = 0; a->client_reference != NULL && i < ws->n; i++)
		if (same(ws->w[i].ref, a->client_reference))
			return &ws->w[i];
	for (size_t i = 0; a->task != NULL && i < ws->n; i++)
		if (same(ws->w[i].t->id, a->task))
			return &ws->w[i];
	return NULL;
}

/* The write one of whose creates carried the key @a reads by
 * (GET /v1/operations/KEY), or NULL. */
static struct wr *owner_by_key(const struct writes *ws, const struct fa_attempt *a,
                               struct wr *const *own, const struct fa_attempt *const *order,
                               size_t n)
{
	const char *key;

	if (!same(a->route, OPERATION_ROUTE) || a->path == NULL ||
	    strncmp(a->path, OPERATION_PATH, strlen(OPERATION_PATH)) != 0)
		return NULL;
	key = a->path + strlen(OPERATION_PATH);
	for (size_t k = 0; k < n; k++)
		if (own[k] != NULL && is_create(ws->in->sc, order[k]) &&
		    same(key_of(order[k]), key))
			return own[k];
	return NULL;
}

/* The writes of @c's scenario and their attempts, from every attempt in
 * arrival order (a write's attempts need not name its task). */
static void writes_collect(const struct hx_check_ctx *c, struct writes *ws)
{
	const struct hx_check_input *in = c->in;
	const struct fa_harness_spec *h = in->sc != NULL ? &in->sc->harness : NULL;
	size_t n_tasks = h != NULL ? h->n_tasks : 0, n = c->n_all;
	const struct fa_attempt *const *order = c->all;
	struct wr **own = fa_xcalloc(n + 1, sizeof(*own));

	memset(ws, 0, sizeof(*ws));
	ws->in = in;
	ws->w = fa_xcalloc(n_tasks + 1, sizeof(*ws->w));
	for (size_t i = 0; i < n_tasks; i++) {
		const struct fa_task_spec *t = &h->tasks[i];
		struct wr *w;

		if (hx_write_route(in->sc, t) == NULL)
			continue;
		w = &ws->w[ws->n++];
		w->t = t;
		for (size_t k = 0; k < in->n_tasks; k++)
			if (in->tasks[k].spec != NULL && same(in->tasks[k].spec->id, t->id))
				w->ref = in->tasks[k].client_reference;
		w->att = fa_xcalloc(n + 1, sizeof(*w->att));
	}
	for (size_t k = 0; k < n; k++)
		own[k] = owner(ws, order[k]);
	/* a read by key names no task when the client left fa_task out */
	for (size_t k = 0; k < n; k++)
		if (own[k] == NULL)
			own[k] = owner_by_key(ws, order[k], own, order, n);
	for (size_t k = 0; k < n; k++)
		if (own[k] != NULL)
			own[k]->att[own[k]->n++] = order[k];
	free(own);
}

static void writes_release(struct writes *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		free(ws->w[i].att);
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

static size_t count_creates(const struct writes *ws, const struct wr *w)
{
	size_t n = 0;

	for (size_t k = 0; k < w->n; k++)
		n += is_create(ws->in->sc, w->att[k]);
	return n;
}

/* When the client finished task @id (stdio mode: its result was read;
 * exec mode: its process ended), provider µs; -1 when it did not. */
static int64_t finished_at(const struct hx_check_input *in, const char *id)
{
	for (size_t i = 0; i < in->n_tasks; i++)
		if (in->tasks[i].spec != NULL && same(in->tasks[i].spec->id, id))
			return in->tasks[i].t_exit_us;
	return -1;
}

/* Attempt @k of @w is a create whose outcome the client could not know. */
static bool ambiguous(const struct writes *ws, const struct wr *w, size_t k)
{
	const struct fa_attempt *a = w->att[k];
	int64_t done;

	if (!is_create(ws->in->sc, a) || !a->committed)
		return false;
	if (a->delivered != FA_DELIVERED_COMPLETE || a->t_response_us < 0)
		return true;
	/* the client moved on before the answer went out (a read timeout):
	 * the write's next attempt, or the task's end, came first */
	for (size_t j = k + 1; j < w->n; j++)
		if (w->att[j]->t_arrival_us < a->t_response_us)
			return true;
	done = finished_at(ws->in, w->t->id);
	return done >= a->t_arrival_us && done < a->t_response_us;
}

/* Why @a left the client in the dark, for a detail; a new string. */
static char *why_ambiguous(const struct fa_attempt *a)
{
	if (a->delivered != FA_DELIVERED_COMPLETE || a->t_response_us < 0)
		return fa_xasprintf("%s: committed, the answer %s", a->fault ? a->fault : "?",
		                    a->delivered == FA_DELIVERED_CLIENT_GONE
		                            ? "never reached the client"
		                            : "dropped");
	return fa_xasprintf("committed, its answer went out at +%.1f ms, after the client "
	                    "had moved on",
	                    (double)a->t_response_us / 1000.0);
}

/* Record @r is the one committed create @a made: same route, body and
 * key, committed while the provider was answering @a. */
static bool made_by(const cJSON *r, const struct fa_attempt *a)
{
	const cJSON *created = cJSON_GetObjectItemCaseSensitive(r, "created_us");
	const char *key =
	        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "idempotency_key"));
	double t;

	if (!a->committed || !cJSON_IsNumber(created))
		return false;
	t = created->valuedouble;
	return same(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "route")), a->route) &&
	       same(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "body_sha256")),
	            a->body_sha256) &&
	       (key == NULL ? key_of(a) == NULL : same(key, key_of(a))) &&
	       t >= (double)a->t_arrival_us && (a->t_done_us < 0 || t <= (double)a->t_done_us);
}

/*
 * The ids of the records the store holds for @w, ", "-separated: those
 * with its client reference (without one, a key its creates carried), and
 * those one of its committed creates made; a record of the latter kind
 * whose client reference is not the write's says so ("rec_2 (no client
 * reference)"). NULL when none.
 */
static char *records_of(const struct writes *ws, const struct wr *w)
{
	const cJSON *recs = cJSON_GetObjectItemCaseSensitive(ws->in->store, "records");
	const cJSON *r;
	char *list = NULL;

	cJSON_ArrayForEach(r, recs)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "id");
		const char *ref = cJSON_GetStringValue(
		        cJSON_GetObjectItemCaseSensitive(r, "client_reference"));
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(r, "idempotency_key");
		bool mine = false, by_ref = false;
		char *more, *note;

		if (!cJSON_IsString(id))
			continue;
		if (w->ref != NULL) {
			mine = by_ref = same(ref, w->ref);
		} else if (cJSON_IsString(key)) {
			for (size_t k = 0; k < w->n && !mine; k++)
				mine = is_create(ws->in->sc, w->att[k]) &&
				       same(key_of(w->att[k]), key->valuestring);
		}
		for (size_t k = 0; k < w->n && !mine; k++)
			mine = is_create(ws->in->sc, w->att[k]) && made_by(r, w->att[k]);
		if (!mine)
			continue;
		if (by_ref || w->ref == NULL)
			note = fa_xstrdup("");
		else if (ref == NULL)
			note = fa_xstrdup(" (no client reference)");
		else
			note = fa_xasprintf(" (client reference %s)", ref);
		more = list ? fa_xasprintf("%s, %s%s", list, id->valuestring, note)
		            : fa_xasprintf("%s%s", id->valuestring, note);
		free(note);
		free(list);
		list = more;
	}
	return list;
}

/* A record id in @list (as records_of() writes it, notes included). */
static bool in_list(const char *list, const char *id)
{
	size_t len = id ? strlen(id) : 0;

	for (const char *p = list; p != NULL && len > 0; p = strstr(p, ", ")) {
		if (p != list)
			p += 2;
		if (strncmp(p, id, len) == 0 && (p[len] == '\0' || p[len] == ',' || p[len] == ' '))
			return true;
	}
	return false;
}

/* "write w1 (client reference R)" */
static char *write_name(const struct wr *w)
{
	if (w->ref != NULL)
		return fa_xasprintf("write %s (client reference %s)", w->t->id, w->ref);
	return fa_xasprintf("write %s", w->t->id);
}

/* The verdict when no write of the scenario made a create. */
static void na_no_create(const struct writes *ws, struct hx_check_result *r)
{
	r->verdict = HX_NA;
	if (ws->n == 0)
		r->detail = fa_xstrdup("the scenario has no write (no task whose route has an "
		                       "\"effect\")");
	else
		r->detail = fa_xasprintf("no write reached its route: %zu write%s, no create "
		                         "attempt",
		                         ws->n, ws->n == 1 ? "" : "s");
}

/* ---- write.key_stable -------------------------------------------------- */

void hx_write_key_stable(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct writes ws;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t judged = 0, unstable = 0;
	char *name;

	writes_collect(c, &ws);
	if (in->sc == NULL || in->sc->store.profile == FA_IDEM_NONE) {
		r->verdict = HX_NA;
		r->detail =
		        fa_xstrdup("the provider has no idempotency support "
		                   "($.provider.idempotency absent): a key means nothing to it");
		goto out;
	}
	for (size_t i = 0; i < ws.n; i++) {
		const struct wr *w = &ws.w[i];
		const struct fa_attempt *first = NULL, *odd = NULL;
		size_t n = 0;

		for (size_t k = 0; k < w->n; k++) {
			const struct fa_attempt *a = w->att[k];

			if (!is_create(in->sc, a))
				continue;
			n++;
			if (first == NULL)
				first = a;
			if (odd == NULL && (key_of(a) == NULL || !same(key_of(a), key_of(first))))
				odd = a;
		}
		if (n == 0)
			continue;
		judged++;
		for (size_t k = 0; k < w->n; k++)
			if (is_create(in->sc, w->att[k]))
				hx_evidence_add(odd ? &bad : &good, w->att[k]->seq);
		if (odd == NULL) {
			if (r->detail == NULL) {
				name = write_name(w);
				r->detail =
				        n == 1 ? fa_xasprintf(
				                         "%s: its one create carried the key \"%s\"",
				                         name, key_of(first))
				               : fa_xasprintf(
				                         "%s: %zu creates, each with the key \"%s\"",
				                         name, n, key_of(first));
				free(name);
			}
			continue;
		}
		if (unstable++ > 0)
			continue;
		free(r->detail);
		name = write_name(w);
		if (key_of(odd) == NULL)
			r->detail = fa_xasprintf("%s: create seq %llu carried no Idempotency-Key",
			                         name, (unsigned long long)odd->seq);
		else
			r->detail =
			        fa_xasprintf("%s: create seq %llu carried the key \"%s\", "
			                     "create seq %llu the key \"%s\"",
			                     name, (unsigned long long)first->seq, key_of(first),
			                     (unsigned long long)odd->seq, key_of(odd));
		free(name);
	}
	if (judged == 0) {
		free(r->detail);
		r->detail = NULL;
		na_no_create(&ws, r);
	} else if (unstable > 0) {
		char *d = r->detail;

		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", d,
		                         unstable > 1 ? "; other writes changed "
		                                        "keys too"
		                                      : "");
		free(d);
		hx_evidence_give(&bad, r);
	} else {
		char *d = r->detail;

		r->verdict = HX_PASS;
		r->detail = judged > 1 ? fa_xasprintf("%zu writes kept one key each; %s", judged, d)
		                       : fa_xstrdup(d);
		free(d);
		hx_evidence_give(&good, r);
	}
out:
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
	writes_release(&ws);
}

/* ---- write.body_stable ------------------------------------------------- */

/* SHA-256 of the empty body, as the journal writes it. */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* Hex digits of a body digest a detail shows. */
#define SHA_SHOWN 12

/* The provider read @a's body whole, so its digest is the body's. */
static bool body_known(const struct fa_attempt *a)
{
	return a->body_sha256[0] != '\0' && !same(a->fault, "incomplete_request") &&
	       !same(a->fault, "too_large");
}

/* "9b07e4a1c2d3.." or "e3b0c44298fc.. (empty)" */
static char *sha_text(const struct fa_attempt *a)
{
	return fa_xasprintf("%.*s..%s", SHA_SHOWN, a->body_sha256,
	                    same(a->body_sha256, EMPTY_SHA256) ? " (empty)" : "");
}

/* What may have changed @odd's body from @first's, for a detail. */
static const char *body_hint(const struct fa_attempt *first, const struct fa_attempt *odd)
{
	if (same(odd->body_sha256, EMPTY_SHA256))
		return "a body stream the first send consumed, resent empty?";
	if (first->client_reference != NULL && odd->client_reference == NULL)
		return "the body lost the client reference the harness put in it: rebuilt, "
		       "not resent?";
	return "a retry resends the request's exact bytes, not a rebuilt body";
}

/* @a as the write @w counts its attempts, reads included: "attempt 3 (seq 5)". */
static char *attempt_text(const struct wr *w, const struct fa_attempt *a)
{
	size_t k = 0;

	while (k < w->n && w->att[k] != a)
		k++;
	return fa_xasprintf("attempt %zu (seq %llu)", k + 1, (unsigned long long)a->seq);
}

void hx_write_body_stable(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct writes ws;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t retried = 0, changed = 0, created = 0;
	char *shown = NULL;

	writes_collect(c, &ws);
	for (size_t i = 0; i < ws.n; i++) {
		const struct wr *w = &ws.w[i];
		const struct fa_attempt *first = NULL, *odd = NULL;
		size_t n = 0;

		for (size_t k = 0; k < w->n; k++) {
			const struct fa_attempt *a = w->att[k];

			if (!is_create(in->sc, a) || !body_known(a))
				continue;
			n++;
			if (first == NULL)
				first = a;
			else if (odd == NULL && !same(a->body_sha256, first->body_sha256))
				odd = a;
		}
		created += n > 0;
		if (n < 2)
			continue;
		retried++;
		for (size_t k = 0; k < w->n; k++)
			if (is_create(in->sc, w->att[k]) && body_known(w->att[k]))
				hx_evidence_add(odd ? &bad : &good, w->att[k]->seq);
		if (odd != NULL && changed++ == 0) {
			char *name = write_name(w), *was = sha_text(first), *now = sha_text(odd);
			char *at_first = attempt_text(w, first), *at_odd = attempt_text(w, odd);

			free(shown);
			shown = fa_xasprintf("%s: %s sent a different body than %s: sha256 %s "
			                     "instead of %s; %s",
			                     name, at_odd, at_first, now, was,
			                     body_hint(first, odd));
			free(name);
			free(was);
			free(now);
			free(at_first);
			free(at_odd);
		} else if (odd == NULL && shown == NULL) {
			char *name = write_name(w), *sha = sha_text(first);

			shown = fa_xasprintf("%s: %zu creates, each with the body sha256 %s", name,
			                     n, sha);
			free(name);
			free(sha);
		}
	}
	if (created == 0) {
		na_no_create(&ws, r);
	} else if (retried == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("no write was retried: %zu write%s, one create each",
		                         created, created == 1 ? "" : "s");
	} else if (changed > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown,
		                         changed > 1 ? "; other writes changed "
		                                       "their bodies too"
		                                     : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = retried > 1 ? fa_xasprintf("%zu retried writes kept one body each; %s",
		                                       retried, shown)
		                        : fa_xstrdup(shown);
		hx_evidence_give(&good, r);
	}
	free(shown);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
	writes_release(&ws);
}

/* ---- write.no_duplicate ------------------------------------------------ */

/* "1, 3": the seqs of @s. A new string. */
static char *seq_list(const struct hx_evidence *s)
{
	char *list = fa_xstrdup("");

	for (size_t k = 0; k < s->n; k++) {
		char *more =
		        fa_xasprintf("%s%s%llu", list, k ? ", " : "", (unsigned long long)s->v[k]);

		free(list);
		list = more;
	}
	return list;
}

/* The kill after which @second was sent, @first before it: the last kill
 * event between their arrivals that restarted the client; NULL when none. */
static const struct hx_restart *restart_between(const struct hx_check_input *in,
                                                const struct fa_attempt *first,
                                                const struct fa_attempt *second)
{
	const struct hx_restart *found = NULL;

	for (size_t i = 0; i < in->n_restarts; i++) {
		const struct hx_restart *k = &in->restarts[i];

		if (k->t_restart_us >= 0 && k->t_kill_us >= first->t_arrival_us &&
		    k->t_kill_us <= second->t_arrival_us)
			found = k;
	}
	return found;
}

/* How @second's key compares with @first's: "with a new idempotency key
 * \"K2\" (the first create carried \"K1\")". A new string. */
static char *key_change(const struct fa_scenario *sc, const struct fa_attempt *first,
                        const struct fa_attempt *second)
{
	if (key_of(second) == NULL)
		return fa_xstrdup(key_of(first) ? "without the idempotency key the first create "
		                                  "carried"
		                                : "without an idempotency key, like "
		                                  "the first");
	if (key_of(first) == NULL)
		return fa_xasprintf("with the idempotency key \"%s\" (the first create carried "
		                    "none)",
		                    key_of(second));
	if (!same(key_of(first), key_of(second)))
		return fa_xasprintf("with a new idempotency key \"%s\" (the first create carried "
		                    "\"%s\")",
		                    key_of(second), key_of(first));
	return fa_xasprintf("with the same idempotency key \"%s\"%s", key_of(second),
	                    sc != NULL && sc->store.profile == FA_IDEM_NONE
	                            ? ", which this provider does not deduplicate by"
	                            : "");
}

/* Where @w's second committed create @second (after @first) came from,
 * for a no_duplicate detail: "; the second create (seq 9) came from the
 * client restarted after the kill at +812.0 ms, ..." A new string. */
static char *second_origin(const struct hx_check_input *in, const struct fa_attempt *first,
                           const struct fa_attempt *second)
{
	const struct hx_restart *k = restart_between(in, first, second);
	char *keys = key_change(in->sc, first, second), *d;

	if (k != NULL)
		d = fa_xasprintf("; the second create (seq %llu) came from %s after the kill at "
		                 "+%.1f ms, %s: a client survives a restart only if it %s "
		                 "before its first send",
		                 (unsigned long long)second->seq,
		                 in->mode == HX_MODE_STDIO ? "the client restarted"
		                                           : "the task's command run again",
		                 (double)k->t_kill_us / 1000.0, keys,
		                 key_of(first) != NULL ? "stores the key (its operation record)"
		                                       : "sends an idempotency key it stored");
	else
		d = fa_xasprintf("; the second create (seq %llu) went out %s",
		                 (unsigned long long)second->seq, keys);
	free(keys);
	return d;
}

void hx_write_no_duplicate(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct writes ws;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t judged = 0, doubled = 0;
	char *shown = NULL;

	writes_collect(c, &ws);
	for (size_t i = 0; i < ws.n; i++) {
		const struct wr *w = &ws.w[i];
		struct hx_evidence mine = { 0 };
		const struct fa_attempt *first = NULL, *second = NULL;
		char *recs, *name, *list, *origin;

		if (count_creates(&ws, w) == 0)
			continue;
		judged++;
		for (size_t k = 0; k < w->n; k++) {
			if (!is_create(in->sc, w->att[k]) || !w->att[k]->committed)
				continue;
			hx_evidence_add(&mine, w->att[k]->seq);
			if (first == NULL)
				first = w->att[k];
			else if (second == NULL)
				second = w->att[k];
		}
		for (size_t k = 0; k < mine.n; k++)
			hx_evidence_add(mine.n > 1 ? &bad : &good, mine.v[k]);
		/* show the first duplicate, else the first write committed */
		if (mine.n > 0 && doubled == 0 && (mine.n > 1 || shown == NULL)) {
			recs = records_of(&ws, w);
			name = write_name(w);
			list = seq_list(&mine);
			free(shown);
			if (mine.n > 1) {
				origin = second_origin(in, first, second);
				shown = fa_xasprintf("%s was committed %zu times: records %s (seq "
				                     "%s)%s",
				                     name, mine.n, recs ? recs : "not in the store",
				                     list, origin);
				free(origin);
			} else {
				shown = fa_xasprintf("%s was committed once: record %s (seq %s)",
				                     name, recs ? recs : "not in the store", list);
			}
			free(list);
			free(name);
			free(recs);
		}
		doubled += mine.n > 1;
		hx_evidence_release(&mine);
	}
	if (judged == 0) {
		na_no_create(&ws, r);
	} else if (doubled > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown,
		                         doubled > 1 ? "; other writes were "
		                                       "duplicated too"
		                                     : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		if (shown == NULL)
			r->detail = fa_xasprintf("%zu write%s, none committed", judged,
			                         judged == 1 ? "" : "s");
		else if (judged > 1)
			r->detail = fa_xasprintf("%zu writes, each committed at most once; %s",
			                         judged, shown);
		else
			r->detail = fa_xstrdup(shown);
		hx_evidence_give(&good, r);
	}
	free(shown);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
	writes_release(&ws);
}

/* ---- write.reconcile_first --------------------------------------------- */

/* What @next (the attempt after ambiguous create @a) was, for a detail. */
static char *what_next(const struct writes *ws, const struct fa_attempt *a,
                       const struct fa_attempt *next, bool *ok)
{
	*ok = true;
	if (next == NULL)
		return fa_xstrdup("no further attempt followed");
	if (!is_create(ws->in->sc, next))
		return fa_xasprintf("the next attempt, seq %llu, was a read (%s %s)",
		                    (unsigned long long)next->seq,
		                    next->method ? next->method : "?",
		                    next->path ? next->path : "?");
	if (key_of(a) != NULL && same(key_of(next), key_of(a)))
		return fa_xasprintf("the next attempt, seq %llu, was a replay with the same "
		                    "key \"%s\"",
		                    (unsigned long long)next->seq, key_of(a));
	*ok = false;
	if (key_of(next) == NULL)
		return fa_xasprintf("the next attempt, seq %llu, was a fresh create without "
		                    "an Idempotency-Key",
		                    (unsigned long long)next->seq);
	if (key_of(a) == NULL)
		return fa_xasprintf("the next attempt, seq %llu, was a fresh create (key "
		                    "\"%s\"; seq %llu had none)",
		                    (unsigned long long)next->seq, key_of(next),
		                    (unsigned long long)a->seq);
	return fa_xasprintf("the next attempt, seq %llu, was a fresh create (key \"%s\", "
	                    "not \"%s\")",
	                    (unsigned long long)next->seq, key_of(next), key_of(a));
}

void hx_write_reconcile_first(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct writes ws;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t n_amb = 0, n_bad = 0;
	char *shown = NULL;

	if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("exec mode: judged only for a client the harness "
		                       "drives in stdio mode");
		return;
	}
	writes_collect(c, &ws);
	for (size_t i = 0; i < ws.n; i++) {
		const struct wr *w = &ws.w[i];

		for (size_t k = 0; k < w->n; k++) {
			const struct fa_attempt *a = w->att[k];
			const struct fa_attempt *next = k + 1 < w->n ? w->att[k + 1] : NULL;
			char *what, *why, *name;
			bool ok;

			if (!ambiguous(&ws, w, k))
				continue;
			n_amb++;
			what = what_next(&ws, a, next, &ok);
			hx_evidence_add(ok ? &good : &bad, a->seq);
			if (next != NULL)
				hx_evidence_add(ok ? &good : &bad, next->seq);
			if (!ok)
				n_bad++;
			if ((!ok && n_bad == 1) || (ok && shown == NULL)) {
				why = why_ambiguous(a);
				name = write_name(w);
				free(shown);
				shown = fa_xasprintf("%s: after seq %llu (%s), %s", name,
				                     (unsigned long long)a->seq, why, what);
				free(name);
				free(why);
			}
			free(what);
		}
	}
	if (n_amb == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no create's outcome was ambiguous (none committed "
		                       "without the client getting its answer)");
	} else if (n_bad > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown,
		                         n_bad > 1 ? "; more fresh creates "
		                                     "after ambiguous outcomes"
		                                   : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail = n_amb > 1 ? fa_xasprintf("%zu ambiguous outcomes, none followed by a "
		                                     "fresh create; %s",
		                                     n_amb, shown)
		                      : fa_xstrdup(shown);
		hx_evidence_give(&good, r);
	}
	free(shown);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
	writes_release(&ws);
}

/* ---- ambiguity.preserved ----------------------------------------------- */

/* The last result line the client printed for task @id, or NULL. */
static const cJSON *result_of(const struct hx_check_input *in, const char *id)
{
	const cJSON *res = NULL;

	for (size_t i = 0; i < in->n_msgs; i++)
		if (same(in->msgs[i].type, "result") && same(in->msgs[i].task, id))
			res = in->msgs[i].json;
	return res;
}

static const char *str_member(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether @res keeps the ambiguity of @w; a detail either way. */
static bool preserved(const struct writes *ws, const struct wr *w, const cJSON *res, char **detail)
{
	const char *outcome = str_member(res, "outcome");
	const char *sent = str_member(res, "sent");
	const char *pid = str_member(res, "provider_id");
	char *recs = records_of(ws, w), *name = write_name(w);
	bool ok;

	if (same(outcome, "escalated")) {
		ok = true;
		*detail = fa_xasprintf("%s: the client escalated it", name);
	} else if (same(outcome, "succeeded")) {
		ok = pid != NULL && in_list(recs, pid);
		if (ok)
			*detail = fa_xasprintf("%s: the client reported succeeded with provider_id "
			                       "%s, the record the provider holds",
			                       name, pid);
		else if (pid == NULL)
			*detail = fa_xasprintf("%s: the client reported succeeded without a "
			                       "provider_id (the provider holds %s)",
			                       name, recs ? recs : "no record");
		else
			*detail = fa_xasprintf("%s: the client reported succeeded with provider_id "
			                       "\"%s\", but the provider holds %s",
			                       name, pid, recs ? recs : "no record");
	} else if (same(sent, "unknown")) {
		ok = true;
		*detail = fa_xasprintf("%s: the client reported %s with sent \"unknown\"", name,
		                       outcome ? outcome : "?");
	} else {
		ok = false;
		*detail = fa_xasprintf("%s: the client reported %s with sent %s%s%s, though the "
		                       "provider holds %s",
		                       name, outcome ? outcome : "?", sent ? "\"" : "",
		                       sent ? sent : "missing", sent ? "\"" : "",
		                       recs ? recs : "no record");
	}
	free(recs);
	free(name);
	return ok;
}

void hx_write_ambiguity(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct writes ws;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t n_amb = 0, judged = 0, n_bad = 0;
	const char *silent = NULL;
	char *shown = NULL;

	if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("exec mode: the client reports no outcome");
		return;
	}
	writes_collect(c, &ws);
	for (size_t i = 0; i < ws.n; i++) {
		const struct wr *w = &ws.w[i];
		const cJSON *res;
		bool amb = false, ok;
		char *d = NULL;

		for (size_t k = 0; k < w->n && !amb; k++)
			amb = ambiguous(&ws, w, k);
		if (!amb)
			continue;
		n_amb++;
		res = result_of(in, w->t->id);
		if (res == NULL) {
			if (silent == NULL)
				silent = w->t->id;
			continue;
		}
		judged++;
		ok = preserved(&ws, w, res, &d);
		for (size_t k = 0; k < w->n; k++)
			if (is_create(in->sc, w->att[k]) && w->att[k]->committed)
				hx_evidence_add(ok ? &good : &bad, w->att[k]->seq);
		if (!ok)
			n_bad++;
		if ((!ok && n_bad == 1) || (ok && shown == NULL)) {
			free(shown);
			shown = d;
			d = NULL;
		}
		free(d);
	}
	if (n_amb == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("no create's outcome was ambiguous (none committed "
		                       "without the client getting its answer)");
	} else if (judged == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("the client reported no result for write %s, whose "
		                         "outcome was ambiguous",
		                         silent);
	} else if (n_bad > 0) {
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("%s%s", shown,
		                         n_bad > 1 ? "; other writes lost their "
		                                     "ambiguity too"
		                                   : "");
		hx_evidence_give(&bad, r);
	} else {
		r->verdict = HX_PASS;
		r->detail =
		        judged > 1 ? fa_xasprintf("%zu ambiguous writes kept so; %s", judged, shown)
		                   : fa_xstrdup(shown);
		hx_evidence_give(&good, r);
	}
	free(shown);
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
	writes_release(&ws);
}
