/* scenario.c -- scenario files: load, validate, hold. */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "alloc.h"
#include "digest.h"
#include "harness_spec.h"
#include "jsontext.h"
#include "chat_spec.h"
#include "quota_spec.h"
#include "response_spec.h"
#include "route.h"
#include "schema.h"
#include "task_spec.h"

#define N(a)     (sizeof(a) / sizeof((a)[0]))
#define REQ      FA_FIELD_REQUIRED
#define NONEMPTY FA_FIELD_NONEMPTY

/* Scenario and key ids: [A-Za-z0-9._-]{1,64} */
#define ID_CHARS "._-"
#define ID_MAX   64

/* FA_STORE_INDEX writes an int into these. */
_Static_assert(sizeof(enum fa_cursor_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fa_scope_kind) == sizeof(int), "enum size");

/* in enum order: the index is the value */
static const char *const cursors[] = { "shared", "scope", NULL };
static const char *const scopes[] = { "user", "key", NULL };

/* "$schema" at the top of a scenario or a suite: where an editor finds
 * docs/scenario.schema.json; the loader takes any string and ignores it. */
#define SCHEMA_FIELD FA_F_CHECK("$schema", FA_SCHEMA_STRING, FA_FIELD_UNLISTED)

/* $ */
enum { SC_ID, SC_TITLE, SC_COMMENT, SC_PROVIDER, SC_ROUTES, SC_HARNESS, SC_SCHEMA };
static const struct fa_field scenario_fields[] = {
	FA_F_ID("id", REQ, ID_CHARS, ID_MAX, struct fa_scenario, id),
	FA_F_STR("title", 0, struct fa_scenario, title),
	FA_F_STR("comment", 0, struct fa_scenario, comment),
	FA_F_CHECK("provider", FA_SCHEMA_OBJECT, REQ),
	FA_F_CHECK("routes", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	FA_F_CHECK("harness", FA_SCHEMA_OBJECT, 0),
	SCHEMA_FIELD,
};

/* a suite file's $ */
enum { SU_ID, SU_VERSION, SU_TITLE, SU_SCENARIOS, SU_SCHEMA };
static const struct fa_field suite_fields[] = {
	FA_F_ID("id", REQ, ID_CHARS, ID_MAX, struct fa_suite, id),
	FA_F_STR("version", REQ | NONEMPTY, struct fa_suite, version),
	FA_F_STR("title", 0, struct fa_suite, title),
	FA_F_CHECK("scenarios", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	SCHEMA_FIELD,
};

/* A file is a suite when its top-level object has a "scenarios" key. */
static bool is_suite(const cJSON *root)
{
	return cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "scenarios") != NULL;
}

/* $.scenarios[i] of a suite */
static const struct fa_field suite_entry_field = FA_F_CHECK(NULL, FA_SCHEMA_STRING, NONEMPTY);

/* $.provider */
enum {
	PV_KEYS,
	PV_USERS,
	PV_SCOPE,
	PV_PAUSE,
	PV_IDEMPOTENCY,
	PV_RECONCILIATION,
	PV_QUOTA,
	PV_RETRY_AFTER_MS
};
static const struct fa_field provider_fields[] = {
	FA_F_CHECK("keys", FA_SCHEMA_OBJECT, REQ | NONEMPTY),
	FA_F_CHECK("users", FA_SCHEMA_OBJECT, 0),
	FA_F_ENUM("scope", 0, scopes, struct fa_scenario, scope),
	FA_F_CHECK("during_pause", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("idempotency", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("reconciliation", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("quota", FA_SCHEMA_OBJECT, 0),
	{ .name = "retry_after_ms",
	  .type = FA_SCHEMA_BOOL,
	  .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_scenario, retry_after_ms) },
};

/* $.provider.idempotency; "profile" maps to enum fa_idem_profile + 1 */
static const char *const idem_profiles[] = { "payment", "ietf", NULL };
enum { ID_PROFILE, ID_RETENTION, ID_REQUIRED };
static const struct fa_field idempotency_fields[] = {
	{ .name = "profile", .type = FA_SCHEMA_STRING, .flags = REQ, .one_of = idem_profiles },
	FA_F_INT("retention_s", 0, 1, 31536000, struct fa_store_spec, retention_s),
	{ .name = "required",
	  .type = FA_SCHEMA_BOOL,
	  .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, key_required) },
};

/* $.provider.reconciliation */
static const struct fa_field reconciliation_fields[] = {
	{ .name = "by_client_reference",
	  .type = FA_SCHEMA_BOOL,
	  .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, by_client_reference) },
	{ .name = "by_operation",
	  .type = FA_SCHEMA_BOOL,
	  .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, by_operation) },
};

/* $.provider.keys.<id> */
static const struct fa_field key_fields[] = {
	FA_F_STR("secret", REQ | NONEMPTY, struct fa_key, secret),
	FA_F_STR("user", REQ | NONEMPTY, struct fa_key, user),
};

/* $.routes[i] */
/* "effect" maps to enum fa_effect + 1 */
static const char *const effects[] = { "create", NULL };
enum {
	RT_ID,
	RT_METHOD,
	RT_PATH,
	RT_CLASS,
	RT_CURSOR,
	RT_RESPONSES,
	RT_EFFECT,
	RT_CLIENT_REF,
	RT_KIND,
	RT_REPLY,
	RT_MODELS
};
static const struct fa_field route_fields[] = {
	FA_F_STR("id", REQ | NONEMPTY, struct fa_route_spec, id),
	FA_F_ONE_OF("method", REQ, fa_route_methods, struct fa_route_spec, method),
	FA_F_STR("path", REQ | NONEMPTY, struct fa_route_spec, path),
	FA_F_STR("class", 0, struct fa_route_spec, klass),
	FA_F_ENUM("cursor", 0, cursors, struct fa_route_spec, cursor),
	FA_F_CHECK("responses", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	{ .name = "effect", .type = FA_SCHEMA_STRING, .one_of = effects },
	FA_F_STR("client_reference_field", NONEMPTY, struct fa_route_spec, client_reference_field),
	/* the OpenAI-compatible endpoint (chat_spec.h) */
	FA_F_ENUM("kind", 0, fa_route_kinds, struct fa_route_spec, kind),
	FA_F_STR("reply", NONEMPTY, struct fa_route_spec, reply),
	FA_F_CHECK("models", FA_SCHEMA_ARRAY, NONEMPTY),
};

static bool is_param_name(const char *p, size_t n)
{
	if (n == 0 || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

/* "/v1/records/{id}": each segment is literal or a whole {name}. */
static enum fa_rc check_template(struct fa_schema *s, const cJSON *v)
{
	const char *names[FA_ROUTE_MAX_PARAMS];
	size_t lens[FA_ROUTE_MAX_PARAMS];
	size_t n_params = 0;
	const char *seg = v->valuestring + 1;
	enum fa_rc rc;

	rc = fa_schema_http_path(s, v, false);
	if (rc != FA_OK)
		return rc;
	for (;;) {
		size_t len = strcspn(seg, "/");
		bool braces = memchr(seg, '{', len) != NULL || memchr(seg, '}', len) != NULL;

		if (braces && !(len >= 2 && seg[0] == '{' && seg[len - 1] == '}' &&
		                is_param_name(seg + 1, len - 2))) {
			char bad[256];

			snprintf(bad, sizeof(bad), "%.*s", (int)len, seg);
			return fa_schema_fail(
			        s,
			        "expected each segment literal or a whole {name} with name [A-Za-z_][A-Za-z0-9_]*, got segment %s",
			        fa_schema_quote(bad).s);
		}
		if (braces) {
			for (size_t i = 0; i < n_params; i++) {
				if (lens[i] == len - 2 && memcmp(names[i], seg + 1, len - 2) == 0)
					return fa_schema_fail(s, "parameter %.*s appears twice",
					                      (int)len, seg);
			}
			if (n_params == FA_ROUTE_MAX_PARAMS)
				return fa_schema_fail(s, "more than %d {name} segments",
				                      FA_ROUTE_MAX_PARAMS);
			names[n_params] = seg + 1;
			lens[n_params++] = len - 2;
		}
		if (seg[len] == '\0')
			break;
		seg += len + 1;
	}
	return FA_OK;
}

/* "effect" and "client_reference_field": the field is the effect's, and
 * defaults to "client_reference" on an effect route. */
static enum fa_rc read_effect(struct fa_schema *s, const cJSON **got, struct fa_route_spec *rt)
{
	if (got[RT_EFFECT] == NULL) {
		if (got[RT_CLIENT_REF] != NULL)
			return fa_schema_fail(
			        s, "\"client_reference_field\" is only allowed with \"effect\"");
		return FA_OK;
	}
	for (size_t i = 0; effects[i] != NULL; i++)
		if (strcmp(effects[i], got[RT_EFFECT]->valuestring) == 0)
			rt->effect = (enum fa_effect)(i + 1);
	if (rt->client_reference_field == NULL)
		rt->client_reference_field = fa_xstrdup("client_reference");
	return FA_OK;
}

static enum fa_rc read_route(struct fa_schema *s, const cJSON *obj, struct fa_route_spec *rt)
{
	const cJSON *got[N(route_fields)];
	const cJSON *resp;
	enum fa_rc rc;
	size_t mark, mark2, j = 0;

	rc = fa_schema_object(s, obj, route_fields, N(route_fields), rt, got);
	if (rc != FA_OK)
		return rc;
	rc = read_effect(s, got, rt);
	if (rc != FA_OK)
		return rc;
	mark = fa_schema_enter(s, "path");
	rc = check_template(s, got[RT_PATH]);
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	rt->n_responses = fa_schema_count(got[RT_RESPONSES]);
	rt->responses = fa_xcalloc(rt->n_responses, sizeof(*rt->responses));
	mark = fa_schema_enter(s, "responses");
	for (resp = got[RT_RESPONSES]->child; resp != NULL; resp = resp->next, j++) {
		mark2 = fa_schema_enter_index(s, j);
		rc = fa_response_spec_read(s, resp, &rt->responses[j], j + 1 == rt->n_responses,
		                           false);
		fa_schema_leave(s, mark2);
		if (rc != FA_OK)
			break;
	}
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	return fa_chat_spec_read(s, got[RT_REPLY], got[RT_MODELS], rt);
}

static enum fa_rc read_routes(struct fa_schema *s, const cJSON *arr, struct fa_scenario *sc)
{
	enum fa_rc rc = FA_OK;
	size_t i = 0, mark, mark2;

	sc->n_routes = fa_schema_count(arr);
	sc->routes = fa_xcalloc(sc->n_routes, sizeof(*sc->routes));
	for (const cJSON *r = arr->child; r != NULL; r = r->next, i++) {
		mark = fa_schema_enter_index(s, i);
		rc = read_route(s, r, &sc->routes[i]);
		for (size_t k = 0; rc == FA_OK && k < i; k++) {
			if (strcmp(sc->routes[k].id, sc->routes[i].id) != 0)
				continue;
			mark2 = fa_schema_enter(s, "id");
			rc = fa_schema_fail(s, "duplicate route id %s (first at $.routes[%zu])",
			                    fa_schema_quote(sc->routes[i].id).s, k);
			fa_schema_leave(s, mark2);
		}
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			break;
	}
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sc->users: every user a key names, sorted, once each. */
static void collect_users(struct fa_scenario *sc)
{
	size_t n = 0;

	sc->users = fa_xcalloc(sc->n_keys, sizeof(*sc->users));
	for (size_t i = 0; i < sc->n_keys; i++)
		sc->users[i] = sc->keys[i].user;
	qsort(sc->users, sc->n_keys, sizeof(*sc->users), cmp_str);
	for (size_t i = 0; i < sc->n_keys; i++) {
		if (n == 0 || strcmp(sc->users[n - 1], sc->users[i]) != 0)
			sc->users[n++] = sc->users[i];
	}
	for (size_t i = 0; i < n; i++)
		sc->users[i] = fa_xstrdup(sc->users[i]);
	sc->n_users = n;
}

/* $.provider.users: names of accounts, each an object with no members
 * (room for per-user settings). */
static enum fa_rc read_users(struct fa_schema *s, const cJSON *obj)
{
	enum fa_rc rc;
	size_t mark;

	rc = fa_schema_unique(s, obj);
	for (const cJSON *u = obj->child; rc == FA_OK && u != NULL; u = u->next) {
		if (u->string[0] == '\0')
			return fa_schema_fail(s, "expected non-empty user names, got \"\"");
		mark = fa_schema_enter(s, u->string);
		rc = fa_schema_object(s, u, NULL, 0, NULL, NULL);
		fa_schema_leave(s, mark);
	}
	return rc;
}

/* Do key ids @a and @b name the same FAKEAPI_KEY_<ID> variable (upper
 * case, every character but A-Z0-9 as "_"; docs/client-protocol.md)? */
static bool same_env_name(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = isalnum((unsigned char)*a) ? toupper((unsigned char)*a) : '_';
		int y = isalnum((unsigned char)*b) ? toupper((unsigned char)*b) : '_';

		if (*a == '\0' || *b == '\0')
			return *a == *b;
		if (x != y)
			return false;
	}
}

static enum fa_rc read_key(struct fa_schema *s, const cJSON *obj, struct fa_scenario *sc, size_t i,
                           const cJSON *users)
{
	struct fa_key *key = &sc->keys[i];
	enum fa_rc rc;
	size_t mark;

	key->id = fa_xstrdup(obj->string);
	rc = fa_schema_object(s, obj, key_fields, N(key_fields), key, NULL);
	if (rc != FA_OK)
		return rc;
	for (size_t k = 0; k < i; k++) {
		if (!same_env_name(sc->keys[k].id, key->id))
			continue;
		/* a client finds each secret in FAKEAPI_KEY_<ID>: two ids that
		 * map to one variable would hand it the wrong account's key */
		char var[96];
		size_t n = (size_t)snprintf(var, sizeof(var), "FAKEAPI_KEY_");

		for (const char *c = key->id; *c != '\0' && n + 1 < sizeof(var); c++)
			var[n++] =
			        isalnum((unsigned char)*c) ? (char)toupper((unsigned char)*c) : '_';
		var[n] = '\0';
		return fa_schema_fail(s,
		                      "key ids %s and %s would share the environment "
		                      "variable %s",
		                      fa_schema_quote(sc->keys[k].id).s, fa_schema_quote(key->id).s,
		                      var);
	}
	for (size_t k = 0; k < i; k++) {
		if (strcmp(sc->keys[k].secret, key->secret) != 0)
			continue;
		/* the secret itself never goes into a message */
		mark = fa_schema_enter(s, "secret");
		rc = fa_schema_fail(s, "duplicate secret (key %s has the same one)",
		                    fa_schema_quote(sc->keys[k].id).s);
		fa_schema_leave(s, mark);
		return rc;
	}
	if (users != NULL && cJSON_GetObjectItemCaseSensitive(users, key->user) == NULL) {
		mark = fa_schema_enter(s, "user");
		rc = fa_schema_fail(s, "no user %s in $.provider.users",
		                    fa_schema_quote(key->user).s);
		fa_schema_leave(s, mark);
	}
	return rc;
}

/* $.provider.idempotency and $.provider.reconciliation into @st, whose
 * defaults are set. */
static enum fa_rc read_store(struct fa_schema *s, const cJSON **pv, struct fa_store_spec *st)
{
	const cJSON *got[N(idempotency_fields)];
	enum fa_rc rc = FA_OK;
	size_t mark;

	if (pv[PV_IDEMPOTENCY] != NULL) {
		mark = fa_schema_enter(s, "idempotency");
		rc = fa_schema_object(s, pv[PV_IDEMPOTENCY], idempotency_fields,
		                      N(idempotency_fields), st, got);
		for (size_t i = 0; rc == FA_OK && idem_profiles[i] != NULL; i++)
			if (strcmp(idem_profiles[i], got[ID_PROFILE]->valuestring) == 0)
				st->profile = (enum fa_idem_profile)(i + 1);
		if (rc == FA_OK && got[ID_REQUIRED] != NULL && st->profile != FA_IDEM_IETF)
			rc = fa_schema_fail(
			        s, "\"required\" is only allowed with \"profile\": \"ietf\"");
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	if (pv[PV_RECONCILIATION] != NULL) {
		mark = fa_schema_enter(s, "reconciliation");
		rc = fa_schema_object(s, pv[PV_RECONCILIATION], reconciliation_fields,
		                      N(reconciliation_fields), st, NULL);
		fa_schema_leave(s, mark);
	}
	return rc;
}

static enum fa_rc read_provider(struct fa_schema *s, const cJSON *obj, struct fa_scenario *sc)
{
	const cJSON *got[N(provider_fields)];
	const cJSON *keys;
	enum fa_rc rc;
	size_t mark, mark2, i = 0;

	sc->store.retention_s = 86400;
	sc->store.by_client_reference = true;
	sc->store.by_operation = true;
	rc = fa_schema_object(s, obj, provider_fields, N(provider_fields), sc, got);
	if (rc != FA_OK)
		return rc;
	rc = read_store(s, got, &sc->store);
	if (rc != FA_OK)
		return rc;
	if (got[PV_USERS] != NULL) {
		mark = fa_schema_enter(s, "users");
		rc = read_users(s, got[PV_USERS]);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	keys = got[PV_KEYS];
	mark = fa_schema_enter(s, "keys");
	rc = fa_schema_unique(s, keys);
	sc->n_keys = fa_schema_count(keys);
	sc->keys = fa_xcalloc(sc->n_keys, sizeof(*sc->keys));
	for (const cJSON *k = keys->child; rc == FA_OK && k != NULL; k = k->next, i++) {
		if (!fa_schema_charset_ok(k->string, ID_CHARS, ID_MAX)) {
			rc = fa_schema_fail(s,
			                    "expected key ids matching [A-Za-z0-9%s]{1,%d}, got %s",
			                    ID_CHARS, ID_MAX, fa_schema_quote(k->string).s);
			break;
		}
		mark2 = fa_schema_enter(s, k->string);
		rc = read_key(s, k, sc, i, got[PV_USERS]);
		fa_schema_leave(s, mark2);
	}
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	collect_users(sc);
	if (got[PV_PAUSE] != NULL) {
		sc->has_during_pause = true;
		mark = fa_schema_enter(s, "during_pause");
		rc = fa_response_spec_read(s, got[PV_PAUSE], &sc->during_pause, false, true);
		fa_schema_leave(s, mark);
		sc->during_pause.times = 0;
	}
	if (rc == FA_OK && got[PV_QUOTA] != NULL) {
		/* after the keys: key_limits names them */
		mark = fa_schema_enter(s, "quota");
		sc->has_quota = true;
		rc = fa_quota_spec_read(s, got[PV_QUOTA], sc->keys, sc->n_keys, &sc->quota);
		fa_schema_leave(s, mark);
	}
	return rc;
}

static enum fa_rc build(struct fa_schema *s, const cJSON *root, struct fa_scenario *sc)
{
	const cJSON *got[N(scenario_fields)];
	enum fa_rc rc;
	size_t mark;

	rc = fa_schema_object(s, root, scenario_fields, N(scenario_fields), sc, got);
	if (rc != FA_OK)
		return rc;
	mark = fa_schema_enter(s, "provider");
	rc = read_provider(s, got[SC_PROVIDER], sc);
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	mark = fa_schema_enter(s, "routes");
	rc = read_routes(s, got[SC_ROUTES], sc);
	fa_schema_leave(s, mark);
	if (rc != FA_OK || got[SC_HARNESS] == NULL)
		return rc;
	sc->has_harness = true;
	mark = fa_schema_enter(s, "harness");
	rc = fa_harness_spec_read(s, got[SC_HARNESS], sc->keys, sc->n_keys,
	                          sc->has_quota ? &sc->quota : NULL, &sc->harness);
	if (rc == FA_OK)
		rc = fa_task_spec_check(s, sc->harness.tasks, sc->harness.n_tasks, sc->routes,
		                        sc->n_routes, &sc->store);
	fa_schema_leave(s, mark);
	return rc;
}

/* The scenario in the parsed @root of @text (@len bytes, for the digest). */
static enum fa_rc scenario_from_tree(const cJSON *root, const char *text, size_t len,
                                     const char *name, struct fa_scenario **out, struct fa_err *err)
{
	struct fa_scenario *sc = fa_xcalloc(1, sizeof(*sc));
	struct fa_schema s;
	enum fa_rc rc;

	sc->file = fa_xstrdup(name);
	fa_digest_sha256_hex(text, len, sc->sha256);
	fa_schema_init(&s, name, err);
	if (is_suite(root)) {
		/* told apart from a scenario with an unknown key: the file is
		 * fine, the program is the wrong one for it */
		fa_err_set(err,
		           "%s: a suite (it lists scenarios): give one of its scenario files, or "
		           "run the suite with fakeapi-harness run %s",
		           name, name);
		fa_scenario_free(sc);
		return FA_EINVAL;
	}
	rc = build(&s, root, sc);
	if (rc != FA_OK) {
		fa_scenario_free(sc);
		return rc;
	}
	*out = sc;
	return FA_OK;
}

enum fa_rc fa_scenario_parse(const char *text, size_t len, const char *name,
                             struct fa_scenario **out, struct fa_err *err)
{
	cJSON *root = NULL;
	enum fa_rc rc;

	*out = NULL;
	rc = fa_jsontext_parse(text, len, name, &root, err);
	if (rc == FA_OK)
		rc = scenario_from_tree(root, text, len, name, out, err);
	cJSON_Delete(root);
	return rc;
}

enum fa_rc fa_scenario_load(const char *path, struct fa_scenario **out, struct fa_err *err)
{
	char *text = NULL;
	size_t len = 0;
	enum fa_rc rc;

	*out = NULL;
	rc = fa_jsontext_read(path, &text, &len, err);
	if (rc == FA_OK)
		rc = fa_scenario_parse(text, len, path, out, err);
	free(text);
	return rc;
}

void fa_scenario_free(struct fa_scenario *sc)
{
	if (sc == NULL)
		return;
	for (size_t i = 0; i < sc->n_keys && sc->keys != NULL; i++) {
		free(sc->keys[i].id);
		free(sc->keys[i].secret);
		free(sc->keys[i].user);
	}
	free(sc->keys);
	for (size_t i = 0; i < sc->n_users && sc->users != NULL; i++)
		free(sc->users[i]);
	free(sc->users);
	fa_response_spec_release(&sc->during_pause);
	fa_quota_spec_release(&sc->quota);
	for (size_t i = 0; i < sc->n_routes && sc->routes != NULL; i++) {
		struct fa_route_spec *rt = &sc->routes[i];

		free(rt->id);
		free(rt->method);
		free(rt->path);
		free(rt->klass);
		free(rt->client_reference_field);
		fa_chat_spec_release(rt);
		for (size_t j = 0; j < rt->n_responses && rt->responses != NULL; j++)
			fa_response_spec_release(&rt->responses[j]);
		free(rt->responses);
	}
	free(sc->routes);
	fa_harness_spec_release(&sc->harness);
	free(sc->file);
	free(sc->id);
	free(sc->title);
	free(sc->comment);
	free(sc);
}

const struct fa_key *fa_scenario_key_by_secret(const struct fa_scenario *sc, const char *secret)
{
	return fa_key_by_secret(sc->keys, sc->n_keys, secret);
}

const struct fa_key *fa_scenario_key_by_id(const struct fa_scenario *sc, const char *id)
{
	return fa_key_by_id(sc->keys, sc->n_keys, id);
}

const struct fa_task_spec *fa_scenario_task(const struct fa_scenario *sc, const char *id)
{
	return fa_harness_spec_task(&sc->harness, id);
}

/* @rel read from the folder the suite file @suite_path is in. */
static char *suite_join(const char *suite_path, const char *rel)
{
	const char *slash = strrchr(suite_path, '/');

	if (slash == NULL)
		return fa_xstrdup(rel);
	return fa_xasprintf("%.*s/%s", (int)(slash - suite_path), suite_path, rel);
}

/*
 * Load the scenario named by $.scenarios[i] into su->scenarios[i]. A file
 * that cannot be read is named by the suite and the entry (a typo in the
 * list is the suite's mistake); one that reads is named by its own path.
 */
static enum fa_rc suite_entry(struct fa_schema *s, const cJSON *v, struct fa_suite *su, size_t i,
                              struct fa_err *err)
{
	const struct fa_scenario *sc;
	struct fa_err read_err = { { 0 } };
	cJSON *root = NULL;
	char *path = NULL, *text = NULL;
	size_t len = 0;
	enum fa_rc rc;

	rc = fa_schema_value(s, v, &suite_entry_field, NULL);
	if (rc == FA_OK && v->valuestring[0] == '/')
		rc = fa_schema_fail_got(s, v, "a path relative to the suite file's folder");
	if (rc != FA_OK)
		goto out;
	path = suite_join(su->file, v->valuestring);
	rc = fa_jsontext_read(path, &text, &len, &read_err);
	if (rc != FA_OK) {
		fa_schema_fail(s, "%s", read_err.msg);
		goto out;
	}
	rc = fa_jsontext_parse(text, len, path, &root, err);
	if (rc != FA_OK)
		goto out;
	if (is_suite(root)) {
		rc = fa_schema_fail(s, "%s is a suite: a suite lists scenario files, not suites",
		                    fa_schema_quote(v->valuestring).s);
		goto out;
	}
	rc = scenario_from_tree(root, text, len, path, &su->scenarios[i], err);
	if (rc != FA_OK)
		goto out;
	sc = su->scenarios[i];
	for (size_t k = 0; k < i; k++) {
		if (strcmp(su->scenarios[k]->id, sc->id) != 0)
			continue;
		fa_err_set(err, "%s: $.id: duplicate scenario id %s (also in %s)", sc->file,
		           fa_schema_quote(sc->id).s, su->scenarios[k]->file);
		rc = FA_EINVAL;
		goto out;
	}
out:
	cJSON_Delete(root);
	free(text);
	free(path);
	return rc;
}

static enum fa_rc suite_from_tree(const cJSON *root, struct fa_suite *su, struct fa_err *err)
{
	const cJSON *got[N(suite_fields)];
	struct fa_schema s;
	enum fa_rc rc;
	size_t mark, mark2, i = 0;

	fa_schema_init(&s, su->file, err);
	rc = fa_schema_object(&s, root, suite_fields, N(suite_fields), su, got);
	if (rc != FA_OK)
		return rc;
	su->n_scenarios = fa_schema_count(got[SU_SCENARIOS]);
	su->scenarios = fa_xcalloc(su->n_scenarios, sizeof(*su->scenarios));
	mark = fa_schema_enter(&s, "scenarios");
	for (const cJSON *c = got[SU_SCENARIOS]->child; c != NULL; c = c->next, i++) {
		mark2 = fa_schema_enter_index(&s, i);
		rc = suite_entry(&s, c, su, i, err);
		fa_schema_leave(&s, mark2);
		if (rc != FA_OK)
			break;
	}
	fa_schema_leave(&s, mark);
	return rc;
}

enum fa_rc fa_suite_load(const char *path, struct fa_suite **out, struct fa_err *err)
{
	struct fa_suite *su = NULL;
	struct fa_scenario *sc = NULL;
	cJSON *root = NULL;
	char *text = NULL;
	size_t len = 0;
	enum fa_rc rc;

	*out = NULL;
	rc = fa_jsontext_read(path, &text, &len, err);
	if (rc != FA_OK)
		goto out;
	rc = fa_jsontext_parse(text, len, path, &root, err);
	if (rc != FA_OK)
		goto out;
	su = fa_xcalloc(1, sizeof(*su));
	su->file = fa_xstrdup(path);
	if (is_suite(root)) {
		rc = suite_from_tree(root, su, err);
		if (rc != FA_OK)
			goto out;
	} else {
		rc = scenario_from_tree(root, text, len, path, &sc, err);
		if (rc != FA_OK)
			goto out;
		su->id = fa_xstrdup(sc->id);
		su->version = fa_xstrdup("");
		su->title = fa_xstrdup(sc->title);
		su->scenarios = fa_xcalloc(1, sizeof(*su->scenarios));
		su->scenarios[0] = sc;
		su->n_scenarios = 1;
	}
	*out = su;
	su = NULL; /* the caller owns it now */
out:
	fa_suite_free(su);
	cJSON_Delete(root);
	free(text);
	return rc;
}

void fa_suite_free(struct fa_suite *suite)
{
	if (suite == NULL)
		return;
	for (size_t i = 0; i < suite->n_scenarios && suite->scenarios; i++)
		fa_scenario_free(suite->scenarios[i]);
	free(suite->scenarios);
	free(suite->file);
	free(suite->id);
	free(suite->version);
	free(suite->title);
	free(suite);
}
