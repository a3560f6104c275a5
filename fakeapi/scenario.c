/* scenario.c -- scenario files: load, validate, hold. */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "alloc.h"
#include "digest.h"
#include "harness_spec.h"
#include "header.h"
#include "jsontext.h"
#include "chat.h"
#include "chat_spec.h"
#include "quota_spec.h"
#include "route.h"
#include "schema.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define REQ FA_FIELD_REQUIRED
#define NONEMPTY FA_FIELD_NONEMPTY

/* Scenario and key ids: [A-Za-z0-9._-]{1,64} */
#define ID_CHARS "._-"
#define ID_MAX 64

/* FA_STORE_INDEX writes an int into these. */
_Static_assert(sizeof(enum fa_cursor_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fa_scope_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fa_resp_fault) == sizeof(int), "enum size");

const char *const fa_scenario_methods[] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", NULL,
};
/* in enum order: the index is the value */
static const char *const cursors[] = {"shared", "scope", NULL};
static const char *const scopes[] = {"user", "key", NULL};
/* fa_retry_after_form_parse() turns these into enum fa_ra_form */
static const char *const ra_forms[] = {
	"delta-seconds", "imf-fixdate", "rfc850", "asctime", NULL,
};
/* in enum fa_resp_fault order */
static const char *const resp_faults[] = {
	"respond", "drop_before_commit", "drop_after_commit", "reset",
	"partial_body", "close_idle", NULL,
};

/* $ */
enum { SC_ID, SC_TITLE, SC_COMMENT, SC_PROVIDER, SC_ROUTES, SC_HARNESS };
static const struct fa_field scenario_fields[] = {
	FA_F_ID("id", REQ, ID_CHARS, ID_MAX, struct fa_scenario, id),
	FA_F_STR("title", 0, struct fa_scenario, title),
	FA_F_STR("comment", 0, struct fa_scenario, comment),
	FA_F_CHECK("provider", FA_SCHEMA_OBJECT, REQ),
	FA_F_CHECK("routes", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	FA_F_CHECK("harness", FA_SCHEMA_OBJECT, 0),
};

/* a suite file's $ */
enum { SU_ID, SU_VERSION, SU_TITLE, SU_SCENARIOS };
static const struct fa_field suite_fields[] = {
	FA_F_ID("id", REQ, ID_CHARS, ID_MAX, struct fa_suite, id),
	FA_F_STR("version", REQ | NONEMPTY, struct fa_suite, version),
	FA_F_STR("title", 0, struct fa_suite, title),
	FA_F_CHECK("scenarios", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
};

/* $.scenarios[i] of a suite */
static const struct fa_field suite_entry_field =
	FA_F_CHECK(NULL, FA_SCHEMA_STRING, NONEMPTY);

/* $.provider */
enum { PV_KEYS, PV_USERS, PV_SCOPE, PV_PAUSE, PV_IDEMPOTENCY, PV_RECONCILIATION,
       PV_QUOTA, PV_RETRY_AFTER_MS };
static const struct fa_field provider_fields[] = {
	FA_F_CHECK("keys", FA_SCHEMA_OBJECT, REQ | NONEMPTY),
	FA_F_CHECK("users", FA_SCHEMA_OBJECT, 0),
	FA_F_ENUM("scope", 0, scopes, struct fa_scenario, scope),
	FA_F_CHECK("during_pause", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("idempotency", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("reconciliation", FA_SCHEMA_OBJECT, 0),
	FA_F_CHECK("quota", FA_SCHEMA_OBJECT, 0),
	{ .name = "retry_after_ms", .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_scenario, retry_after_ms) },
};

/* $.provider.idempotency; "profile" maps to enum fa_idem_profile + 1 */
static const char *const idem_profiles[] = {"payment", "ietf", NULL};
enum { ID_PROFILE, ID_RETENTION, ID_REQUIRED };
static const struct fa_field idempotency_fields[] = {
	{ .name = "profile", .type = FA_SCHEMA_STRING, .flags = REQ, .one_of = idem_profiles },
	FA_F_INT("retention_s", 0, 1, 31536000, struct fa_store_spec, retention_s),
	{ .name = "required", .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, key_required) },
};

/* $.provider.reconciliation */
static const struct fa_field reconciliation_fields[] = {
	{ .name = "by_client_reference", .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, by_client_reference) },
	{ .name = "by_operation", .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_store_spec, by_operation) },
};

/* $.provider.keys.<id> */
static const struct fa_field key_fields[] = {
	FA_F_STR("secret", REQ | NONEMPTY, struct fa_key, secret),
	FA_F_STR("user", REQ | NONEMPTY, struct fa_key, user),
};

/* $.routes[i] */
/* "effect" maps to enum fa_effect + 1 */
static const char *const effects[] = {"create", NULL};
enum { RT_ID, RT_METHOD, RT_PATH, RT_CLASS, RT_CURSOR, RT_RESPONSES, RT_EFFECT,
       RT_CLIENT_REF, RT_KIND, RT_REPLY, RT_MODELS };
static const struct fa_field route_fields[] = {
	FA_F_STR("id", REQ | NONEMPTY, struct fa_route_spec, id),
	FA_F_ONE_OF("method", REQ, fa_scenario_methods, struct fa_route_spec, method),
	FA_F_STR("path", REQ | NONEMPTY, struct fa_route_spec, path),
	FA_F_STR("class", 0, struct fa_route_spec, klass),
	FA_F_ENUM("cursor", 0, cursors, struct fa_route_spec, cursor),
	FA_F_CHECK("responses", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	{ .name = "effect", .type = FA_SCHEMA_STRING, .one_of = effects },
	FA_F_STR("client_reference_field", NONEMPTY, struct fa_route_spec,
		 client_reference_field),
	/* the OpenAI-compatible endpoint (chat_spec.h) */
	FA_F_ENUM("kind", 0, fa_route_kinds, struct fa_route_spec, kind),
	FA_F_STR("reply", NONEMPTY, struct fa_route_spec, reply),
	FA_F_CHECK("models", FA_SCHEMA_ARRAY, NONEMPTY),
};

/* $.routes[i].responses[j]; $.provider.during_pause is the same without
 * "times", which must stay first, and without the connection faults and
 * the shapes, which must stay last (RS_N_FAULT + RS_N_SHAPE of them).
 * "status" is required unless a "shape" gives it. */
enum { RS_TIMES, RS_STATUS, RS_HEADERS, RS_BODY, RS_RETRY_AFTER, RS_DELAY,
       RS_FAULT, RS_FAULT_BYTES, RS_HOLD, RS_HOLD_MS, RS_SHAPE, RS_RA_S,
       RS_COOLDOWN_S, RS_DEADLINE_MS, RS_ERROR_AFTER, RS_STOP_AFTER, RS_CHUNK_DELAY,
       RS_STALL_AFTER, RS_STALL_MS };
#define RS_N_FAULT 4
#define RS_N_SHAPE 4
#define RS_N_CHAT  5
static const struct fa_field response_fields[] = {
	FA_F_INT("times", 0, 1, 1000000, struct fa_response_spec, times),
	FA_F_INT("status", 0, 100, 599, struct fa_response_spec, status),
	FA_F_CHECK("headers", FA_SCHEMA_OBJECT, 0),
	FA_F_JSON("body", struct fa_response_spec, body),
	FA_F_CHECK("retry_after", FA_SCHEMA_ANY, 0),
	FA_F_INT("delay_ms", 0, 0, 600000, struct fa_response_spec, delay_ms),
	FA_F_ENUM("fault", 0, resp_faults, struct fa_response_spec, fault),
	/* no more than the largest response body the provider sends, 1 MiB */
	FA_F_INT("fault_bytes", 0, 0, 1048576, struct fa_response_spec, fault_bytes),
	{ .name = "hold", .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_response_spec, hold) },
	FA_F_INT("hold_ms", 0, 1, 600000, struct fa_response_spec, hold_ms),
	/* seed 002's answer shapes (shape.h); "shape" maps to enum fa_shape + 1 */
	{ .name = "shape", .type = FA_SCHEMA_STRING, .one_of = fa_shape_names },
	FA_F_INT("retry_after_s", 0, 1, FA_SHAPE_RETRY_AFTER_MAX_S,
		 struct fa_response_spec, shape.retry_after_s),
	FA_F_INT("cooldown_s", 0, 1, FA_SHAPE_COOLDOWN_MAX_S,
		 struct fa_response_spec, shape.cooldown_s),
	FA_F_INT("deadline_ms", 0, 1, FA_SHAPE_DEADLINE_MAX_MS,
		 struct fa_response_spec, shape.deadline_ms),
	/* chat_completions streams (chat_spec.h checks them against the route) */
	FA_F_INT("error_after_chunks", 0, 0, FA_CHAT_MAX_CHUNKS,
		 struct fa_response_spec, error_after_chunks),
	FA_F_INT("stop_after_chunks", 0, 0, FA_CHAT_MAX_CHUNKS,
		 struct fa_response_spec, stop_after_chunks),
	FA_F_INT("chunk_delay_ms", 0, 0, FA_CHAT_CHUNK_DELAY_MAX_MS,
		 struct fa_response_spec, chunk_delay_ms),
	FA_F_INT("stall_after_chunks", 0, 0, FA_CHAT_MAX_CHUNKS,
		 struct fa_response_spec, stall_after_chunks),
	FA_F_INT("stall_ms", 0, 1, FA_CHAT_STALL_MAX_MS, struct fa_response_spec, stall_ms),
};

/* "retry_after" as a plain number: delta-seconds */
static const struct fa_field ra_delta_field =
	FA_F_RANGE(NULL, 0, 0, FA_RA_MAX_DELTA_S);

/* "retry_after" as an object; negative seconds name a past date */
enum { RA_SECONDS, RA_FORM };
static const struct fa_field ra_fields[] = {
	FA_F_I64("seconds", REQ, -FA_RA_MAX_DELTA_S, FA_RA_MAX_DELTA_S,
		 struct fa_response_spec, ra_seconds),
	{ .name = "form", .type = FA_SCHEMA_STRING, .one_of = ra_forms },
};

static enum fa_rc read_retry_after(struct fa_schema *s, const cJSON *v,
				   struct fa_response_spec *r)
{
	const cJSON *got[N(ra_fields)];
	enum fa_rc rc;
	size_t mark;

	r->has_retry_after = true;
	r->ra_form = FA_RA_DELTA;
	if (cJSON_IsNumber(v)) {
		rc = fa_schema_value(s, v, &ra_delta_field, NULL);
		if (rc == FA_OK)
			r->ra_seconds = (int64_t)v->valuedouble;
		return rc;
	}
	if (!cJSON_IsObject(v))
		return fa_schema_fail_got(s, v, "integer 0..%lld or object",
					  FA_RA_MAX_DELTA_S);
	rc = fa_schema_object(s, v, ra_fields, N(ra_fields), r, got);
	if (rc != FA_OK)
		return rc;
	if (got[RA_FORM] != NULL &&
	    fa_retry_after_form_parse(got[RA_FORM]->valuestring, &r->ra_form) != FA_OK) {
		mark = fa_schema_enter(s, "form");
		rc = fa_schema_fail(s, "form %s unknown to the Retry-After formatter",
				    fa_schema_quote(got[RA_FORM]->valuestring).s);
		fa_schema_leave(s, mark);
		return rc;
	}
	if (r->ra_form == FA_RA_RFC850 && (r->ra_seconds > FA_RA_RFC850_SPAN_S ||
					   r->ra_seconds < -FA_RA_RFC850_SPAN_S)) {
		mark = fa_schema_enter(s, "seconds");
		rc = fa_schema_fail_got(s, got[RA_SECONDS],
					"integer -%lld..%lld for rfc850 (a two-digit year "
					"names another century beyond 49 years)",
					FA_RA_RFC850_SPAN_S, FA_RA_RFC850_SPAN_S);
		fa_schema_leave(s, mark);
		return rc;
	}
	if (r->ra_form == FA_RA_DELTA && r->ra_seconds < 0) {
		mark = fa_schema_enter(s, "seconds");
		rc = fa_schema_fail_got(s, got[RA_SECONDS],
					"integer 0..%lld (negative only with a date form)",
					FA_RA_MAX_DELTA_S);
		fa_schema_leave(s, mark);
		return rc;
	}
	return FA_OK;
}

/* The fields that only make sense together: fault_bytes with
 * partial_body (which needs a body to cut), hold_ms with hold, and no hold
 * on close_idle, which closes before there is anything to hold. */
static enum fa_rc check_fault(struct fa_schema *s, const cJSON **got,
			      const struct fa_response_spec *r)
{
	bool partial = r->fault == FA_RESP_PARTIAL_BODY;

	if (got[RS_FAULT_BYTES] != NULL && !partial)
		return fa_schema_fail(s, "\"fault_bytes\" needs \"fault\": \"partial_body\", "
				      "got fault \"%s\"", resp_faults[r->fault]);
	if (partial && r->body == NULL && r->shape.shape == FA_SHAPE_NONE)
		return fa_schema_fail(s, "\"fault\": \"partial_body\" needs a \"body\" to cut short");
	if (partial && (r->status < 200 || r->status == 204 || r->status == 304))
		return fa_schema_fail(s, "\"fault\": \"partial_body\" needs a status that carries "
				      "a body, got status %d", r->status);
	if (got[RS_HOLD_MS] != NULL && !r->hold)
		return fa_schema_fail(s, "\"hold_ms\" needs \"hold\": true");
	if (r->hold && r->fault == FA_RESP_CLOSE_IDLE)
		return fa_schema_fail(s, "\"hold\" cannot go with \"fault\": \"close_idle\" "
				      "(it closes before the request is answered)");
	return FA_OK;
}

/* "shape" and what goes with it: the shape gives the status (one given
 * must agree), the body and the Retry-After; each tuning member belongs
 * to the shapes it tunes. Without a shape, "status" is required. */
static enum fa_rc check_shape(struct fa_schema *s, const cJSON **got,
			      struct fa_response_spec *r)
{
	enum fa_shape sh = FA_SHAPE_NONE;
	const struct fa_header *h;
	const char *name;

	if (got[RS_SHAPE] != NULL)
		for (size_t i = 0; fa_shape_names[i] != NULL; i++)
			if (strcmp(fa_shape_names[i], got[RS_SHAPE]->valuestring) == 0)
				sh = (enum fa_shape)(i + 1);
	r->shape.shape = sh;
	name = fa_shape_str(sh);
	if (sh == FA_SHAPE_NONE) {
		if (got[RS_STATUS] == NULL)
			return fa_schema_fail(s, "missing required key \"status\"");
		/* a stall's stream_idle_timeout frame names its pause too */
		if (got[RS_RA_S] != NULL && got[RS_STALL_AFTER] == NULL)
			return fa_schema_fail(s, "\"retry_after_s\" needs a \"shape\" "
					      "(use \"retry_after\" for a scripted answer)");
		if (got[RS_COOLDOWN_S] != NULL)
			return fa_schema_fail(s, "\"cooldown_s\" needs \"shape\": "
					      "\"ai_provider_cooldown\"");
		if (got[RS_DEADLINE_MS] != NULL)
			return fa_schema_fail(s, "\"deadline_ms\" needs \"shape\": "
					      "\"ai_deadline_exceeded\"");
		return FA_OK;
	}
	if (got[RS_STATUS] != NULL && r->status != fa_shape_status(sh))
		return fa_schema_fail(s, "\"status\" %d does not match \"shape\": \"%s\" "
				      "(which answers %d)", r->status, name,
				      fa_shape_status(sh));
	r->status = fa_shape_status(sh);
	if (got[RS_BODY] != NULL)
		return fa_schema_fail(s, "\"body\" cannot go with \"shape\": \"%s\" "
				      "(the shape renders the body)", name);
	if (got[RS_RETRY_AFTER] != NULL)
		return fa_schema_fail(s, "\"retry_after\" cannot go with \"shape\": \"%s\" "
				      "(the shape sends Retry-After)", name);
	h = fa_header_find(r->headers, r->n_headers, "Retry-After");
	if (h != NULL)
		return fa_schema_fail(s, "header %s cannot go with \"shape\": \"%s\" "
				      "(the shape sends Retry-After)",
				      fa_schema_quote(h->name).s, name);
	if (got[RS_RA_S] != NULL && fa_shape_default_retry_after(sh) == 0)
		return fa_schema_fail(s, "\"retry_after_s\" cannot go with \"shape\": \"%s\" "
				      "(its pause is %s)", name,
				      sh == FA_SHAPE_AI_PROVIDER_COOLDOWN
					      ? "the cooldown's; tune \"cooldown_s\""
					      : "drawn 3..7 s");
	if (got[RS_COOLDOWN_S] != NULL && sh != FA_SHAPE_AI_PROVIDER_COOLDOWN)
		return fa_schema_fail(s, "\"cooldown_s\" needs \"shape\": "
				      "\"ai_provider_cooldown\", got shape \"%s\"", name);
	if (got[RS_DEADLINE_MS] != NULL && sh != FA_SHAPE_AI_DEADLINE_EXCEEDED)
		return fa_schema_fail(s, "\"deadline_ms\" needs \"shape\": "
				      "\"ai_deadline_exceeded\", got shape \"%s\"", name);
	return FA_OK;
}

/* One response spec at the current path. @last: the sequence's last entry,
 * which answers for ever unless it says "times". @pause: the provider's
 * during_pause answer, which has no "times". */
static enum fa_rc read_response(struct fa_schema *s, const cJSON *obj,
				struct fa_response_spec *r, bool last, bool pause)
{
	const cJSON *got[N(response_fields)] = {0};
	const struct fa_field *fields = response_fields + (pause ? 1 : 0);
	const struct fa_header *h;
	size_t n = N(response_fields) - (pause ? 1 + RS_N_FAULT + RS_N_SHAPE + RS_N_CHAT : 0);
	enum fa_rc rc;
	size_t mark;

	r->times = last ? 0 : 1;
	r->fault_bytes = -1;
	r->hold_ms = 60000;
	r->error_after_chunks = -1;
	r->stop_after_chunks = -1;
	r->stall_after_chunks = -1;
	r->stall_ms = FA_CHAT_STALL_DEFAULT_MS;
	rc = fa_schema_object(s, obj, fields, n, r, got + (pause ? 1 : 0));
	if (rc != FA_OK)
		return rc;
	if (got[RS_STALL_MS] != NULL && got[RS_STALL_AFTER] == NULL)
		return fa_schema_fail(s, "\"stall_ms\" needs \"stall_after_chunks\"");
	if (got[RS_HEADERS] != NULL) {
		mark = fa_schema_enter(s, "headers");
		rc = fa_header_read_list(s, got[RS_HEADERS], &r->headers, &r->n_headers);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	rc = check_shape(s, got, r);
	if (rc != FA_OK)
		return rc;
	rc = check_fault(s, got, r);
	if (rc != FA_OK)
		return rc;
	if (got[RS_RETRY_AFTER] != NULL) {
		mark = fa_schema_enter(s, "retry_after");
		rc = read_retry_after(s, got[RS_RETRY_AFTER], r);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
		h = fa_header_find(r->headers, r->n_headers, "Retry-After");
		if (h != NULL)
			return fa_schema_fail(s, "\"retry_after\" and header %s both given (give one)",
					      fa_schema_quote(h->name).s);
	}
	return FA_OK;
}

static bool is_param_name(const char *p, size_t n)
{
	if (n == 0 || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '_'))
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
			return fa_schema_fail(s, "expected each segment literal or a whole {name} with name [A-Za-z_][A-Za-z0-9_]*, got segment %s",
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
static enum fa_rc read_effect(struct fa_schema *s, const cJSON **got,
			      struct fa_route_spec *rt)
{
	if (got[RT_EFFECT] == NULL) {
		if (got[RT_CLIENT_REF] != NULL)
			return fa_schema_fail(s, "\"client_reference_field\" is only allowed with \"effect\"");
		return FA_OK;
	}
	for (size_t i = 0; effects[i] != NULL; i++)
		if (strcmp(effects[i], got[RT_EFFECT]->valuestring) == 0)
			rt->effect = (enum fa_effect)(i + 1);
	if (rt->client_reference_field == NULL)
		rt->client_reference_field = fa_xstrdup("client_reference");
	return FA_OK;
}

static enum fa_rc read_route(struct fa_schema *s, const cJSON *obj,
			     struct fa_route_spec *rt)
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
		rc = read_response(s, resp, &rt->responses[j],
				   j + 1 == rt->n_responses, false);
		fa_schema_leave(s, mark2);
		if (rc != FA_OK)
			break;
	}
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	return fa_chat_spec_read(s, got[RT_REPLY], got[RT_MODELS], rt);
}

static enum fa_rc read_routes(struct fa_schema *s, const cJSON *arr,
			      struct fa_scenario *sc)
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

static enum fa_rc read_key(struct fa_schema *s, const cJSON *obj,
			   struct fa_scenario *sc, size_t i, const cJSON *users)
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
			var[n++] = isalnum((unsigned char)*c) ? (char)toupper((unsigned char)*c) : '_';
		var[n] = '\0';
		return fa_schema_fail(s, "key ids %s and %s would share the environment "
				      "variable %s", fa_schema_quote(sc->keys[k].id).s,
				      fa_schema_quote(key->id).s, var);
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
	if (users != NULL &&
	    cJSON_GetObjectItemCaseSensitive(users, key->user) == NULL) {
		mark = fa_schema_enter(s, "user");
		rc = fa_schema_fail(s, "no user %s in $.provider.users",
				    fa_schema_quote(key->user).s);
		fa_schema_leave(s, mark);
	}
	return rc;
}

/* $.provider.idempotency and $.provider.reconciliation into @st, whose
 * defaults are set. */
static enum fa_rc read_store(struct fa_schema *s, const cJSON **pv,
			     struct fa_store_spec *st)
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
			rc = fa_schema_fail(s, "\"required\" is only allowed with \"profile\": \"ietf\"");
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

static enum fa_rc read_provider(struct fa_schema *s, const cJSON *obj,
				struct fa_scenario *sc)
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
			rc = fa_schema_fail(s, "expected key ids matching [A-Za-z0-9%s]{1,%d}, got %s",
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
		rc = read_response(s, got[PV_PAUSE], &sc->during_pause, false, true);
		fa_schema_leave(s, mark);
		sc->during_pause.times = 0;
	}
	if (rc == FA_OK && got[PV_QUOTA] != NULL) {
		/* after the keys: key_limits names them */
		mark = fa_schema_enter(s, "quota");
		rc = fa_quota_spec_read(s, got[PV_QUOTA], sc);
		fa_schema_leave(s, mark);
	}
	return rc;
}

static enum fa_rc build(struct fa_schema *s, const cJSON *root,
			struct fa_scenario *sc)
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
	rc = fa_harness_spec_read(s, got[SC_HARNESS], sc);
	fa_schema_leave(s, mark);
	return rc;
}

/* The scenario in the parsed @root of @text (@len bytes, for the digest). */
static enum fa_rc scenario_from_tree(const cJSON *root, const char *text,
				     size_t len, const char *name,
				     struct fa_scenario **out, struct fa_err *err)
{
	struct fa_scenario *sc = fa_xcalloc(1, sizeof(*sc));
	struct fa_schema s;
	enum fa_rc rc;

	sc->file = fa_xstrdup(name);
	fa_digest_sha256_hex(text, len, sc->sha256);
	fa_schema_init(&s, name, err);
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

enum fa_rc fa_scenario_load(const char *path, struct fa_scenario **out,
			    struct fa_err *err)
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

static void response_release(struct fa_response_spec *r)
{
	fa_header_free_list(r->headers, r->n_headers);
	cJSON_Delete(r->body);
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
	response_release(&sc->during_pause);
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
			response_release(&rt->responses[j]);
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

const struct fa_key *fa_scenario_key_by_secret(const struct fa_scenario *sc,
					       const char *secret)
{
	for (size_t i = 0; secret != NULL && i < sc->n_keys; i++) {
		if (sc->keys[i].secret != NULL && strcmp(sc->keys[i].secret, secret) == 0)
			return &sc->keys[i];
	}
	return NULL;
}

const struct fa_key *fa_scenario_key_by_id(const struct fa_scenario *sc,
					   const char *id)
{
	for (size_t i = 0; id != NULL && i < sc->n_keys; i++) {
		if (sc->keys[i].id != NULL && strcmp(sc->keys[i].id, id) == 0)
			return &sc->keys[i];
	}
	return NULL;
}

const struct fa_task_spec *fa_scenario_task(const struct fa_scenario *sc,
					    const char *id)
{
	for (size_t i = 0; id != NULL && i < sc->harness.n_tasks; i++) {
		if (sc->harness.tasks[i].id != NULL &&
		    strcmp(sc->harness.tasks[i].id, id) == 0)
			return &sc->harness.tasks[i];
	}
	return NULL;
}

/* @rel read from the folder the suite file @suite_path is in. */
static char *suite_join(const char *suite_path, const char *rel)
{
	const char *slash = strrchr(suite_path, '/');

	if (slash == NULL)
		return fa_xstrdup(rel);
	return fa_xasprintf("%.*s/%s", (int)(slash - suite_path), suite_path, rel);
}

/* Load the scenario named by $.scenarios[i] into su->scenarios[i]. */
static enum fa_rc suite_entry(struct fa_schema *s, const cJSON *v,
			      struct fa_suite *su, size_t i, struct fa_err *err)
{
	const struct fa_scenario *sc;
	enum fa_rc rc;
	char *path = NULL;

	rc = fa_schema_value(s, v, &suite_entry_field, NULL);
	if (rc == FA_OK && v->valuestring[0] == '/')
		rc = fa_schema_fail_got(s, v, "a path relative to the suite file's folder");
	if (rc != FA_OK)
		goto out;
	path = suite_join(su->file, v->valuestring);
	rc = fa_scenario_load(path, &su->scenarios[i], err);
	if (rc != FA_OK)
		goto out;
	sc = su->scenarios[i];
	for (size_t k = 0; k < i; k++) {
		if (strcmp(su->scenarios[k]->id, sc->id) != 0)
			continue;
		fa_err_set(err, "%s: $.id: duplicate scenario id %s (also in %s)",
			   sc->file, fa_schema_quote(sc->id).s,
			   su->scenarios[k]->file);
		rc = FA_EINVAL;
		goto out;
	}
out:
	free(path);
	return rc;
}

static enum fa_rc suite_from_tree(const cJSON *root, struct fa_suite *su,
				  struct fa_err *err)
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

enum fa_rc fa_suite_load(const char *path, struct fa_suite **out,
			 struct fa_err *err)
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
	if (cJSON_IsObject(root) &&
	    cJSON_GetObjectItemCaseSensitive(root, "scenarios") != NULL) {
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
	su = NULL;                      /* the caller owns it now */
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
