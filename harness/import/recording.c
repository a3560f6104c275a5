/* recording.c -- a journal fakeapi recorded turned into a scenario that answers the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "draft.h"
#include "recording.h"
#include "retry_after.h"
#include "scenario.h"
#include "schema.h"
#include "utf8.h"

/* One attempt kept, with what grouping needs. */
struct kept {
	const struct fa_attempt *a;
	char *tmpl;  /* its route template */
	size_t task; /* index in the task list */
};

/* One task: a journal task, or (attempts without one) a distinct method,
 * path, body hash and key. */
struct task {
	char *id;
	const struct fa_attempt *first;
};

/* A journal key id and the scenario key id it becomes: itself, unless an
 * id before it maps to the same FAKEAPI_KEY_<ID> variable (ops.2, ops-2,
 * oPs-2), which the loader refuses. */
struct key_map {
	const char *from; /* the journal's, borrowed from the attempt */
	char *to;         /* owned */
};

/* The error code a stand-in body names for @status. */
static const char *code_for(int status)
{
	static const struct {
		int status;
		const char *code;
	} codes[] = {
		{ 400, "bad_request" },    { 401, "unauthorized" },
		{ 403, "forbidden" },      { 404, "not_found" },
		{ 409, "conflict" },       { 413, "too_large" },
		{ 422, "unprocessable" },  { 429, "rate_limit_exceeded" },
		{ 500, "internal_error" }, { 502, "bad_gateway" },
		{ 503, "unavailable" },    { 504, "gateway_timeout" },
	};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].status == status)
			return codes[i].code;
	return status < 500 ? "client_error" : "server_error";
}

/* Whether attempt @a is left out, and why (for the warning), or NULL. */
static const char *left_out(const struct fa_attempt *a, const struct hx_draft_opts *o)
{
	bool prefix = o->n_prefixes == 0, method = false;

	if (a->method == NULL || a->path == NULL)
		return "no method or path";
	if (a->fault != NULL && strcmp(a->fault, "incomplete_request") == 0)
		return "incomplete request";
	if (a->fault != NULL && strcmp(a->fault, "unauthorized") == 0)
		return "unauthorized";
	if (a->fault != NULL && strcmp(a->fault, "too_large") == 0)
		return "too large";
	if (a->route != NULL && strncmp(a->route, "_reconcile_", 11) == 0)
		return "reconciliation read";
	if (strcmp(a->path, "/_fakeapi") == 0 || strncmp(a->path, "/_fakeapi/", 10) == 0)
		return "reserved path";
	if (a->path[0] != '/')
		return "not a path";
	for (const char *p = a->path; *p != '\0'; p += strcspn(p + 1, "/") + 1)
		if (strncmp(p, "/.", 2) == 0 &&
		    (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			/* sent encoded (%2E), decoded by the provider: a client
			 * would resolve it before sending, and miss the route */
			return "a \".\" or \"..\" segment";
	for (size_t i = 0; !method; i++) {
		if (fa_route_methods[i] == NULL)
			return "a method no route can have";
		method = strcmp(fa_route_methods[i], a->method) == 0;
	}
	for (size_t i = 0; i < o->n_prefixes && !prefix; i++)
		prefix = strncmp(a->path, o->prefixes[i], strlen(o->prefixes[i])) == 0;
	return prefix ? NULL : "path prefix";
}

/* The response that answers like attempt @a. */
static cJSON *response_for(const struct fa_attempt *a)
{
	static const char *const faults[] = { "drop_before_commit", "drop_after_commit", "reset",
		                              "partial_body",       "close_idle",        NULL };
	const char *fault = NULL;
	int status = a->status;
	cJSON *r = cJSON_CreateObject();
	struct fa_retry_after ra;
	bool head = strcmp(a->method, "HEAD") == 0;

	for (size_t i = 0; a->fault != NULL && faults[i] != NULL; i++)
		if (strcmp(a->fault, faults[i]) == 0)
			fault = faults[i];
	if (status == 0)
		status = 503; /* a drop sends no status: any will do */
	cJSON_AddNumberToObject(r, "status", status);
	/* a saturated delta-seconds (above 2^31) goes out again as written */
	if (a->retry_after != NULL && fa_retry_after_parse(a->retry_after, &ra) == FA_OK &&
	    ra.form == FA_RA_DELTA && !ra.saturated) {
		cJSON_AddNumberToObject(r, "retry_after", (double)ra.delta_s);
	} else if (a->retry_after != NULL && fa_retry_after_parse(a->retry_after, &ra) == FA_OK &&
	           a->pause_until_us != -1 && a->t_response_us >= 0 &&
	           llabs(a->pause_until_us - a->t_response_us) / 1000000 <
	                   (ra.form == FA_RA_RFC850 ? FA_RA_RFC850_SPAN_S
	                                            : FA_RA_MAX_DELTA_S - 1)) {
		/* a date: the same pause, from whenever the answer goes out; the
		 * provider wrote ceil(now) + S, a pause in [S, S + 1): floor gives S */
		int64_t d = a->pause_until_us - a->t_response_us;
		cJSON *o = cJSON_AddObjectToObject(r, "retry_after");

		cJSON_AddNumberToObject(
		        o, "seconds", (double)(d >= 0 ? d / 1000000 : -((-d + 999999) / 1000000)));
		cJSON_AddStringToObject(o, "form", fa_retry_after_form_str(ra.form));
	} else if (a->retry_after != NULL && hx_draft_value_ok(a->retry_after)) {
		cJSON *h = cJSON_AddObjectToObject(r, "headers");

		cJSON_AddStringToObject(h, "Retry-After", a->retry_after);
	}
	if (a->retry_after_ms != NULL && hx_draft_value_ok(a->retry_after_ms)) {
		/* sent again as written: the exact pause an SDK reads first */
		cJSON *h = cJSON_GetObjectItemCaseSensitive(r, "headers");

		if (h == NULL)
			h = cJSON_AddObjectToObject(r, "headers");
		cJSON_AddStringToObject(h, "retry-after-ms", a->retry_after_ms);
	}
	if (!head && status >= 200 && status < 300 && status != 204)
		cJSON_AddItemToObject(r, "body", cJSON_Parse("{\"ok\":true}"));
	else if (!head && status >= 400) {
		cJSON *body = cJSON_AddObjectToObject(r, "body");
		cJSON *e = cJSON_AddObjectToObject(body, "error");

		cJSON_AddStringToObject(e, "code", code_for(status));
	}
	if (a->fault != NULL && strcmp(a->fault, "delay") == 0 && a->t_response_us >= 0) {
		int64_t ms = (a->t_response_us - a->t_arrival_us + 500) / 1000;

		if (ms > HX_DRAFT_MAX_DELAY_MS)
			ms = HX_DRAFT_MAX_DELAY_MS;
		if (ms > 0)
			cJSON_AddNumberToObject(r, "delay_ms", (double)ms);
	}
	if (fault != NULL &&
	    !(strcmp(fault, "partial_body") == 0 && !cJSON_HasObjectItem(r, "body")))
		cJSON_AddStringToObject(r, "fault", fault);
	return r;
}

/* Whether attempts @x and @y without a journal task are the same request. */
static bool same_request(const struct fa_attempt *x, const struct fa_attempt *y)
{
	return strcmp(x->method, y->method) == 0 && strcmp(x->path, y->path) == 0 &&
	       strcmp(x->body_sha256, y->body_sha256) == 0 &&
	       ((x->key == NULL && y->key == NULL) ||
	        (x->key != NULL && y->key != NULL && strcmp(x->key, y->key) == 0));
}

/* The key id of @a when it can be one (an edited journal may hold
 * anything), else NULL. */
static const char *key_id(const struct fa_attempt *a)
{
	return a->key != NULL && fa_schema_charset_ok(a->key, "._-", 64) ? a->key : NULL;
}

/* Whether key ids @x and @y name one environment variable: the same once
 * upper-cased with every byte but A-Z and 0-9 made "_" (the loader's rule,
 * docs/client-protocol.md). */
static bool same_env(const char *x, const char *y)
{
	for (; *x != '\0' && *y != '\0'; x++, y++) {
		char a = *x >= 'a' && *x <= 'z' ? (char)(*x - 'a' + 'A') : *x;
		char b = *y >= 'a' && *y <= 'z' ? (char)(*y - 'a' + 'A') : *y;

		a = (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9') ? a : '_';
		b = (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ? b : '_';
		if (a != b)
			return false;
	}
	return *x == *y;
}

/* Whether @id's variable is one an id in @m[0..@n) has. */
static bool env_taken(const struct key_map *m, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (same_env(m[i].to, id))
			return true;
	return false;
}

/* The key ids of the kept attempts @k[0..@n), in order of first use, each
 * mapped to a scenario id no other shares a variable with: the journal's,
 * or "ID-2", "ID-3"... (cut to 64 bytes), with a warning naming the line
 * of its first attempt. Returns the map (*@nm entries), which
 * keys_release() frees. */
static struct key_map *map_keys(const struct kept *k, size_t n, const struct fa_attempt *all,
                                const char *name, struct hx_draft_warnings *warn, size_t *nm)
{
	struct key_map *m = fa_xcalloc(n + 1, sizeof(*m));
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		const char *id = key_id(k[i].a);
		bool seen = false;

		for (size_t j = 0; j < o && !seen && id != NULL; j++)
			seen = strcmp(m[j].from, id) == 0;
		if (id == NULL || seen)
			continue;
		m[o].from = id;
		m[o].to = fa_xstrdup(id);
		for (int suffix = 2; env_taken(m, o, m[o].to); suffix++) {
			free(m[o].to);
			m[o].to = fa_xasprintf("%.*s-%d", 60, id, suffix);
		}
		if (strcmp(m[o].to, id) != 0)
			hx_draft_warn(warn,
			              "%s:%zu: $.key: key id \"%s\" is imported as \"%s\": a "
			              "client finds each key in FAKEAPI_KEY_<ID>, and an id "
			              "before it names the same variable",
			              name, (size_t)(k[i].a - all) + 1, id, m[o].to);
		o++;
	}
	*nm = o;
	return m;
}

/* The scenario key id @a's key became in @m, or NULL (no usable key). */
static const char *mapped_key(const struct key_map *m, size_t n, const struct fa_attempt *a)
{
	const char *id = key_id(a);

	for (size_t i = 0; i < n && id != NULL; i++)
		if (strcmp(m[i].from, id) == 0)
			return m[i].to;
	return NULL;
}

static void keys_release(struct key_map *m, size_t n)
{
	for (size_t i = 0; m != NULL && i < n; i++)
		free(m[i].to);
	free(m);
}

/* The journal task of @a when it can name a scenario's task: the
 * fa_task parameter is the client's to send, so any text may be there. */
static const char *task_id(const struct fa_attempt *a)
{
	return a->task != NULL && fa_schema_charset_ok(a->task, "_-", 64) ? a->task : NULL;
}

/* The task of @a: found in @t[0..*@n) or added. */
static size_t task_of(struct task **t, size_t *n, const struct fa_attempt *a,
                      const struct fa_attempt *all, size_t n_all)
{
	for (size_t i = 0; i < *n; i++) {
		const struct fa_attempt *f = (*t)[i].first;

		if (task_id(a) != NULL ? task_id(f) != NULL && strcmp(task_id(f), task_id(a)) == 0
		                       : task_id(f) == NULL && same_request(f, a))
			return i;
	}
	*t = fa_xrealloc(*t, (*n + 1) * sizeof(**t));
	(*t)[*n].first = a;
	if (task_id(a) != NULL) {
		(*t)[*n].id = fa_xstrdup(task_id(a));
	} else {
		/* t1, t2...: the first number no journal task uses */
		for (size_t k = 1;; k++) {
			char *id = fa_xasprintf("t%zu", k);
			bool used = false;

			for (size_t i = 0; i < n_all && !used; i++)
				used = task_id(&all[i]) != NULL &&
				       strcmp(task_id(&all[i]), id) == 0;
			for (size_t i = 0; i < *n && !used; i++)
				used = strcmp((*t)[i].id, id) == 0;
			if (!used) {
				(*t)[*n].id = id;
				break;
			}
			free(id);
		}
	}
	return (*n)++;
}

/* $.provider: a key per key id the journal names (placeholder secrets),
 * their users, and the scope the journal's scopes show. */
static void add_provider(cJSON *sc, const struct kept *k, size_t n, const struct key_map *m,
                         size_t nm)
{
	cJSON *provider = cJSON_AddObjectToObject(sc, "provider");
	cJSON *keys = cJSON_AddObjectToObject(provider, "keys");
	cJSON *users = cJSON_CreateObject();
	bool key_scope = false;

	for (size_t i = 0; i < n; i++) {
		const struct fa_attempt *a = k[i].a;
		const char *user = a->user != NULL && a->user[0] != '\0' ? a->user : HX_DRAFT_USER;

		if (a->scope != NULL && strncmp(a->scope, "key:", 4) == 0)
			key_scope = true;
		const char *id = mapped_key(m, nm, a);

		if (id == NULL || (cJSON_GetObjectItemCaseSensitive(keys, id) != NULL))
			continue;
		cJSON *key = cJSON_AddObjectToObject(keys, id);
		char *secret = fa_xasprintf("sk-imported-%s", id);

		cJSON_AddStringToObject(key, "secret", secret);
		cJSON_AddStringToObject(key, "user", user);
		free(secret);
		if (cJSON_GetObjectItemCaseSensitive(users, user) == NULL)
			cJSON_AddObjectToObject(users, user);
	}
	if (keys->child == NULL) {
		cJSON *key = cJSON_AddObjectToObject(keys, HX_DRAFT_KEY_ID);

		cJSON_AddStringToObject(key, "secret", HX_DRAFT_KEY_SECRET);
		cJSON_AddStringToObject(key, "user", HX_DRAFT_USER);
		cJSON_AddObjectToObject(users, HX_DRAFT_USER);
	}
	cJSON_AddItemToObject(provider, "users", users);
	if (key_scope)
		cJSON_AddStringToObject(provider, "scope", "key");
}

/* $.routes: one per method and template, in order of first attempt. */
static cJSON *make_routes(const struct kept *k, size_t n, size_t *n_routes)
{
	cJSON *routes = cJSON_CreateArray();
	bool *done = fa_xcalloc(n + 1, sizeof(*done));
	char **ids = NULL;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		const char *method = k[i].a->method;
		cJSON *route, *resps, *last = NULL;
		bool effect = false;
		int times = 0;

		if (done[i])
			continue;
		ids = fa_xrealloc(ids, (nr + 1) * sizeof(*ids));
		ids[nr] = hx_draft_route_id(method, k[i].tmpl, ids, nr);
		route = cJSON_CreateObject();
		cJSON_AddStringToObject(route, "id", ids[nr++]);
		cJSON_AddStringToObject(route, "method", method);
		cJSON_AddStringToObject(route, "path", k[i].tmpl);
		cJSON_AddStringToObject(route, "class", hx_draft_class(method));
		resps = cJSON_AddArrayToObject(route, "responses");
		for (size_t j = i; j <= n; j++) {
			cJSON *r = NULL;

			if (j < n) {
				if (done[j] || strcmp(k[j].a->method, method) != 0 ||
				    strcmp(k[j].tmpl, k[i].tmpl) != 0)
					continue;
				done[j] = true;
				effect = effect || k[j].a->committed ||
				         k[j].a->client_reference != NULL;
				r = response_for(k[j].a);
				if (last != NULL && cJSON_Compare(last, r, true)) {
					times++;
					cJSON_Delete(r);
					continue;
				}
			}
			if (last != NULL)
				cJSON_AddItemToArray(resps, hx_draft_times(last, times));
			last = r;
			times = 1;
		}
		/* a write the provider committed, or whose client reference it
		 * read: the route had an effect, and the write checks need it */
		if (effect && (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
		               strcmp(method, "PATCH") == 0))
			cJSON_AddStringToObject(route, "effect", "create");
		cJSON_AddItemToArray(routes, route);
	}
	for (size_t i = 0; i < nr; i++)
		free(ids[i]);
	free(ids);
	free(done);
	*n_routes = nr;
	return routes;
}

/* $.harness: each task sent at its first arrival's offset from @t0. */
static enum fa_rc add_harness(cJSON *sc, const struct task *t, size_t n, int64_t t0,
                              const struct key_map *m, size_t nm, const char *name,
                              struct fa_err *err)
{
	cJSON *harness = cJSON_AddObjectToObject(sc, "harness");
	cJSON *tasks = cJSON_AddArrayToObject(harness, "tasks");
	cJSON *events = cJSON_AddArrayToObject(harness, "events");
	int64_t last_ms = 0;

	for (size_t i = 0; i < n; i++) {
		const struct fa_attempt *f = t[i].first;
		int64_t at_ms = (f->t_arrival_us - t0) / 1000;
		cJSON *task = cJSON_CreateObject(), *ev = cJSON_CreateObject();
		char *path = hx_draft_encode_path(f->path);

		if (at_ms > HX_DRAFT_MAX_AT_MS) {
			fa_err_set(err,
			           "%s: seq %llu: task %s starts %lld ms after the first "
			           "arrival, past the %d a scenario's at_ms allows: keep fewer "
			           "attempts (--path-prefix)",
			           name, (unsigned long long)f->seq, t[i].id, (long long)at_ms,
			           HX_DRAFT_MAX_AT_MS);
			cJSON_Delete(task);
			cJSON_Delete(ev);
			free(path);
			return FA_EINVAL;
		}
		if (at_ms > last_ms)
			last_ms = at_ms;
		cJSON_AddStringToObject(task, "id", t[i].id);
		cJSON_AddStringToObject(task, "key",
		                        mapped_key(m, nm, f) != NULL ? mapped_key(m, nm, f)
		                                                     : HX_DRAFT_KEY_ID);
		cJSON_AddStringToObject(task, "class", hx_draft_class(f->method));
		cJSON_AddStringToObject(task, "method", f->method);
		cJSON_AddStringToObject(task, "path", path);
		free(path);
		cJSON_AddItemToArray(tasks, task);
		cJSON_AddNumberToObject(ev, "at_ms", (double)at_ms);
		cJSON_AddItemToObject(ev, "send",
		                      cJSON_CreateStringArray((const char *[]){ t[i].id }, 1));
		cJSON_AddItemToArray(events, ev);
	}
	cJSON_AddNumberToObject(harness, "timeout_s", hx_draft_timeout_s(last_ms));
	return FA_OK;
}

static int by_arrival(const void *x, const void *y)
{
	const struct fa_attempt *a = *(const struct fa_attempt *const *)x;
	const struct fa_attempt *b = *(const struct fa_attempt *const *)y;

	if (a->t_arrival_us != b->t_arrival_us)
		return a->t_arrival_us < b->t_arrival_us ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

enum fa_rc hx_recording_scenario(const struct fa_attempt *a, size_t n, const char *name,
                                 const struct hx_draft_opts *opts, cJSON **out,
                                 struct hx_draft_warnings *warn, struct fa_err *err)
{
	struct kept *k = fa_xcalloc(n + 1, sizeof(*k));
	const struct fa_attempt **order = fa_xcalloc(n + 1, sizeof(*order));
	struct task *t = NULL;
	struct key_map *km = NULL;
	size_t nk = 0, nt = 0, n_routes = 0, skipped = 0, nkm = 0;
	char renamed[256] = "";
	cJSON *sc = NULL, *keys;
	char *id = NULL, *comment = NULL;
	int64_t t0 = 0;
	enum fa_rc rc = FA_EINVAL;

	*out = NULL;
	/* arrival order: seq counts completions, and a quick answer (a drop)
	 * can be appended before a slower one that arrived first */
	for (size_t i = 0; i < n; i++)
		order[i] = &a[i];
	qsort(order, n, sizeof(*order), by_arrival);
	for (size_t i = 0; i < n; i++) {
		/* one attempt per line: attempt i is on line i + 1 */
		if (a[i].status != 0 && (a[i].status < 100 || a[i].status > 599)) {
			fa_err_set(err, "%s:%zu: $.status: expected integer 100..599, got %d", name,
			           i + 1, a[i].status);
			goto out;
		}
		/* the provider journals the header it sent, which a scenario
		 * gave as UTF-8: other bytes come from an edited journal */
		if (!fa_utf8_valid(a[i].retry_after) || !fa_utf8_valid(a[i].retry_after_ms)) {
			fa_err_set(err,
			           "%s:%zu: $.%s: expected a header value in UTF-8, got bytes "
			           "that are not UTF-8",
			           name, i + 1,
			           fa_utf8_valid(a[i].retry_after) ? "retry_after_ms"
			                                           : "retry_after");
			goto out;
		}
	}
	for (size_t o = 0; o < n; o++) {
		size_t i = (size_t)(order[o] - a);
		const char *why = left_out(&a[i], opts);

		if (why != NULL) {
			if (strcmp(why, "path prefix") != 0)
				hx_draft_warn(warn, "%s: seq %llu: %s %s: %s, left out", name,
				              (unsigned long long)a[i].seq, a[i].method, a[i].path,
				              why);
			skipped++;
			continue;
		}
		k[nk].a = &a[i];
		k[nk].tmpl = hx_draft_template(a[i].path, false);
		if (k[nk].tmpl == NULL) {
			fa_err_set(err, "%s: seq %llu: path %s: more than 16 id segments", name,
			           (unsigned long long)a[i].seq, a[i].path);
			goto out;
		}
		if (nk == 0 || a[i].t_arrival_us < t0)
			t0 = a[i].t_arrival_us;
		nk++;
	}
	if (nk == 0) {
		fa_err_set(err, "%s: no attempt to import (%zu read, %zu left out)", name, n,
		           skipped);
		goto out;
	}
	for (size_t i = 0; i < nk; i++)
		k[i].task = task_of(&t, &nt, k[i].a, a, n);
	sc = cJSON_CreateObject();
	id = opts->id != NULL ? fa_xstrdup(opts->id) : hx_draft_id_from_file(name);
	cJSON_AddStringToObject(sc, "id", id);
	comment = fa_xasprintf("replay of %s", hx_draft_basename(name));
	cJSON_AddStringToObject(sc, "title", comment);
	free(comment);
	cJSON_AddStringToObject(sc, "comment", "");
	km = map_keys(k, nk, a, name, warn, &nkm);
	for (size_t i = 0, o = 0; i < nkm; i++) {
		/* "; key ids renamed (...): ops-2 as ops-2-2, ...", cut to fit */
		if (strcmp(km[i].from, km[i].to) != 0 && o + 1 < sizeof(renamed))
			o += (size_t)snprintf(renamed + o, sizeof(renamed) - o, "%s%s as %s",
			                      o == 0 ? "; key ids that name one FAKEAPI_KEY_<ID> "
			                               "variable renamed: "
			                             : ", ",
			                      km[i].from, km[i].to);
	}
	add_provider(sc, k, nk, km, nkm);
	cJSON_AddItemToObject(sc, "routes", make_routes(k, nk, &n_routes));
	if (!opts->no_harness) {
		/* a task without a key (its attempts all unauthorized) uses the first */
		keys = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(sc, "provider"), "keys");
		if (add_harness(sc, t, nt, t0, km, nkm, name, err) != FA_OK)
			goto out;
		cJSON *ti;

		cJSON_ArrayForEach(
		        ti, cJSON_GetObjectItemCaseSensitive(
		                    cJSON_GetObjectItemCaseSensitive(sc, "harness"), "tasks"))
		{
			cJSON *kid = cJSON_GetObjectItemCaseSensitive(ti, "key");

			if (cJSON_GetObjectItemCaseSensitive(keys, kid->valuestring) == NULL)
				cJSON_SetValuestring(kid, keys->child->string);
		}
	}
	comment = fa_xasprintf(
	        "imported from %s (%zu attempt%s, %zu route%s, %zu task%s) by "
	        "fakeapi-harness import-journal; a journal keeps no bodies, so "
	        "answers carry stand-ins: {\"ok\": true} for a 2xx, "
	        "{\"error\": {\"code\": ...}} for an error%s%s",
	        hx_draft_basename(name), nk, nk == 1 ? "" : "s", n_routes, n_routes == 1 ? "" : "s",
	        opts->no_harness ? 0 : nt, !opts->no_harness && nt == 1 ? "" : "s",
	        skipped > 0 ? "; attempts the provider answers by itself left out" : "", renamed);
	cJSON_ReplaceItemInObject(sc, "comment", cJSON_CreateString(comment));
	*out = sc;
	sc = NULL;
	rc = FA_OK;
out:
	for (size_t i = 0; i < nk; i++)
		free(k[i].tmpl);
	for (size_t i = 0; i < nt; i++)
		free(t[i].id);
	keys_release(km, nkm);
	free(k);
	free(order);
	free(t);
	free(id);
	free(comment);
	cJSON_Delete(sc);
	return rc;
}

enum fa_rc hx_recording_convert(const char *path, const struct hx_draft_opts *opts, cJSON **out,
                                struct hx_draft_warnings *warn, struct fa_err *err)
{
	struct fa_attempt *a = NULL;
	struct fa_err chain = { { 0 } };
	struct fa_journal_tail tail;
	size_t n = 0, lines = 0;
	enum fa_rc rc;

	*out = NULL;
	rc = fa_journal_read(path, &a, &n, &tail, err);
	if (rc != FA_OK)
		return rc;
	if (tail.line > 0)
		hx_draft_warn(warn,
		              "%s:%zu: the last line is cut short (%zu bytes, no newline), "
		              "as a provider stopped mid-write leaves it: the %zu complete lines "
		              "are imported",
		              path, tail.line, tail.bytes, n);
	if (fa_journal_verify(path, &lines, NULL, &tail, &chain) != FA_OK)
		hx_draft_warn(warn, "%s (the lines are imported as they are)", chain.msg);
	rc = hx_recording_scenario(a, n, path, opts, out, warn, err);
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&a[i]);
	free(a);
	return rc;
}
