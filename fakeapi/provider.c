/* provider.c -- the fake provider: decides the answer to one request. */
#include "provider.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "chat.h"
#include "clock.h"
#include "digest.h"
#include "fault.h"
#include "jsontext.h"
#include "messages.h"
#include "metrics.h"
#include "quota.h"
#include "quota_answer.h"
#include "reconcile.h"
#include "response_spec.h"
#include "route.h"
#include "scope.h"
#include "shape.h"
#include "sse.h"
#include "store.h"
#include "utf8.h"

struct fa_provider {
	const struct fa_scenario *sc;  /* borrowed */
	struct fa_journal *journal;    /* borrowed */
	uint64_t seed;                 /* for later random choices */
	int64_t t0_us;                 /* monotonic instant journal times count from */
	pthread_mutex_t lock;          /* guards cursors and scopes; taken before the
	                                  metrics' lock, never inside it */
	struct fa_cursors *cursors;    /* owned */
	struct fa_scopes *scopes;      /* owned */
	struct fa_store *store;        /* owned; thread-safe on its own */
	struct fa_metrics *metrics;    /* owned; thread-safe on its own: what
	                                  GET /_fakeapi/metrics shows */
	struct fa_quota *quota;        /* owned, guarded by lock; NULL without $.provider.quota */
	struct fa_shape_state *shapes; /* owned, guarded by lock: the platform's cooldown and
	                                  503 pauses (shape.h) */
	bool admin;                    /* /_fakeapi/ answered by the admin module */
	char *admin_token;             /* owned; NULL = none (fa_provider_set_admin_guard) */
	bool admin_loopback;           /* the server listens on loopback only */
	char *key_suffix;              /* owned: what a secret must end with after a '.'
	                                  (fa_provider_set_key_suffix), or NULL */
	uint64_t chat_seq;             /* guarded by lock: answers of chat_completions routes
	                                  so far, the last one "chatcmpl-<n>" (chat.h); 0
	                                  after a reset */
	uint64_t messages_seq;         /* guarded by lock: the same for messages routes,
	                                  "msg_<n>" (messages.h) */
};

/* Request headers recorded as attempt counters, in enum fa_attempt_header order. */
static const char *const attempt_header_names[FA_AH_COUNT] = {
	"x-stainless-retry-count",
	"amz-sdk-request",
	"grpc-previous-rpc-attempts",
};

struct fa_provider *fa_provider_new(const struct fa_scenario *sc, struct fa_journal *journal,
                                    uint64_t seed, int64_t t0_us)
{
	struct fa_provider *p = fa_xcalloc(1, sizeof(*p));

	p->sc = sc;
	p->journal = journal;
	p->seed = seed;
	p->t0_us = t0_us;
	pthread_mutex_init(&p->lock, NULL);
	p->cursors = fa_cursors_new(sc->routes, sc->n_routes);
	p->scopes = fa_scopes_new();
	p->store = fa_store_new(&sc->store);
	p->metrics = fa_metrics_new();
	if (sc->has_quota)
		p->quota = fa_quota_new(&sc->quota, sc->keys, sc->n_keys, seed);
	p->shapes = fa_shape_state_new(seed);
	p->admin = true;
	p->admin_loopback = true;
	return p;
}

void fa_provider_free(struct fa_provider *p)
{
	if (p == NULL)
		return;
	fa_cursors_free(p->cursors);
	fa_scopes_free(p->scopes);
	fa_store_free(p->store);
	fa_metrics_free(p->metrics);
	fa_quota_free(p->quota);
	fa_shape_state_free(p->shapes);
	free(p->key_suffix);
	free(p->admin_token);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void fa_provider_set_admin(struct fa_provider *p, bool on)
{
	p->admin = on;
}

bool fa_provider_admin_on(const struct fa_provider *p)
{
	return p->admin;
}

void fa_provider_set_admin_guard(struct fa_provider *p, const char *token, bool loopback)
{
	free(p->admin_token);
	p->admin_token = token != NULL && token[0] != '\0' ? fa_xstrdup(token) : NULL;
	p->admin_loopback = loopback;
}

const char *fa_provider_admin_token(const struct fa_provider *p)
{
	return p->admin_token;
}

bool fa_provider_admin_loopback(const struct fa_provider *p)
{
	return p->admin_loopback;
}

void fa_provider_set_key_suffix(struct fa_provider *p, const char *suffix)
{
	free(p->key_suffix);
	p->key_suffix = suffix != NULL && suffix[0] != '\0' ? fa_xstrdup(suffix) : NULL;
}

/* The key whose secret @presented is: exactly, or with ".<key_suffix>"
 * after it when the provider has a suffix (and then only so). */
static const struct fa_key *key_of(const struct fa_provider *p, char *presented)
{
	size_t n = strlen(presented), m;

	if (p->key_suffix == NULL)
		return fa_scenario_key_by_secret(p->sc, presented);
	m = strlen(p->key_suffix);
	if (n < m + 2 || presented[n - m - 1] != '.' ||
	    strcmp(presented + n - m, p->key_suffix) != 0)
		return NULL;
	presented[n - m - 1] = '\0';
	return fa_scenario_key_by_secret(p->sc, presented);
}

struct fa_journal *fa_provider_journal(struct fa_provider *p)
{
	return p->journal;
}

struct fa_store *fa_provider_store(struct fa_provider *p)
{
	return p->store;
}

int64_t fa_provider_now_us(const struct fa_provider *p)
{
	return fa_clock_mono_us() - p->t0_us;
}

/* The API key a request presents, "Authorization: Bearer K" or else
 * "X-Api-Key: K", into @buf without surrounding blanks; NULL if none. */
static char *presented_secret(const struct fa_req *req, char *buf, size_t len)
{
	const char *v = fa_req_header(req, "Authorization");
	size_t n;

	if (v != NULL && strncasecmp(v, "Bearer ", 7) == 0)
		v += 7;
	else
		v = fa_req_header(req, "X-Api-Key");
	if (v == NULL)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= len)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

/* Fill what every journaled attempt records about the request itself, and
 * resolve its key and scope (without touching scope state). */
static const struct fa_key *describe(const struct fa_provider *p, const struct fa_req *req,
                                     struct fa_attempt *a)
{
	const struct fa_key *key = NULL;
	char secret_buf[512];
	char *secret = presented_secret(req, secret_buf, sizeof(secret_buf));
	const char *task = fa_req_query(req, "fa_task");

	a->t_arrival_us = req->t_arrival_us;
	a->t_response_us = -1;
	a->t_done_us = -1;
	a->wall_us = req->wall_us;
	a->time_scale = fa_clock_scale();
	/* bytes from the wire: the journal is JSON, so keep it valid UTF-8 */
	a->method = fa_utf8_clean(req->method);
	a->path = fa_utf8_clean(req->path);
	a->response_index = -1;
	a->task = fa_utf8_clean(task != NULL ? task : fa_req_header(req, "X-Fakeapi-Task"));
	a->idempotency_key = fa_utf8_clean(fa_req_header(req, "Idempotency-Key"));
	fa_digest_sha256_hex(req->body != NULL ? req->body : "", req->body_len, a->body_sha256);
	for (int i = 0; i < FA_AH_COUNT; i++)
		a->attempt_headers[i] = fa_utf8_clean(fa_req_header(req, attempt_header_names[i]));
	a->conn_id = req->conn_id;
	a->conn_reuse = req->conn_reuse;
	a->pause_until_us = -1;
	a->tokens = -1;
	if (secret != NULL)
		key = key_of(p, secret);
	if (key != NULL) {
		a->key = fa_xstrdup(key->id);
		a->user = fa_xstrdup(key->user);
		a->scope = p->sc->scope == FA_SCOPE_KEY ? fa_xasprintf("key:%s", key->id)
		                                        : fa_xasprintf("user:%s", key->user);
	}
	return key;
}

/* A provider-generated error body, {"error": {"code", "message"}}. */
static void error_answer(struct fa_resp *resp, int status, const char *code, const char *message)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(body, "error");

	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	fa_resp_set_json(resp, status, body);
	cJSON_Delete(body);
	resp->attempt.status = status;
}

/*
 * The platform's answer @spec names with "shape", over what fa_fault_respond()
 * built (the extra headers, delay, fault, hold): its status, body and
 * headers, and the pause its Retry-After names, which is returned. The
 * answer goes out at @send_us (@wall_send_us on the wall clock).
 */
static int64_t shaped_answer(struct fa_provider *p, struct fa_resp *resp,
                             const struct fa_response_spec *spec, const struct fa_req *req,
                             int64_t send_us, int64_t wall_send_us)
{
	struct fa_shape_answer ans;

	fa_shape_render(p->shapes, &spec->shape,
	                req != NULL ? fa_req_header(req, "X-AI-Deadline-Ms") : NULL, send_us,
	                wall_send_us, &ans);
	for (size_t i = 0; i < ans.n_headers; i++)
		fa_resp_add_header(resp, ans.headers[i].name, ans.headers[i].value);
	fa_resp_set_json(resp, ans.status, ans.body);
	resp->attempt.status = ans.status;
	free(resp->attempt.retry_after);
	resp->attempt.retry_after = fa_xstrdup(ans.headers[0].value);
	resp->attempt.pause_until_us = send_us + (int64_t)ans.retry_after_s * 1000000;
	fa_attempt_pause_from(&resp->attempt, "retry-after");
	fa_resp_add_retry_after_ms(resp, p->sc->retry_after_ms, (int64_t)ans.retry_after_s * 1000);
	fa_shape_answer_release(&ans);
	return resp->attempt.pause_until_us;
}

/* Answer with a scripted response entry going out after its delay;
 * returns the pause it announced (fa_fault_respond). A scripted 2xx is
 * the cluster answering: ai_provider_cooldown's streak is over. */
static int64_t scripted_answer(struct fa_provider *p, struct fa_resp *resp,
                               const struct fa_response_spec *spec, const struct fa_params *params,
                               int64_t auto_until_us, const struct fa_req *req)
{
	int64_t delay_us = (int64_t)spec->delay_ms * 1000;
	int64_t send_us = fa_provider_now_us(p) + delay_us;
	int64_t wall_send_us = fa_clock_wall_us() + delay_us;
	int64_t until;

	until = fa_fault_respond(spec, params, send_us, wall_send_us, auto_until_us, resp);
	if (spec->shape.shape != FA_SHAPE_NONE)
		return shaped_answer(p, resp, spec, req, send_us, wall_send_us);
	/* only a Retry-After the provider wrote in delta form (a literal
	 * header is sent as written, and a literal retry-after-ms is the
	 * answer's own): the entry's, or during_pause's rest */
	if (spec->has_retry_after && spec->ra_form == FA_RA_DELTA) {
		fa_resp_add_retry_after_ms(resp, p->sc->retry_after_ms, spec->ra_seconds * 1000);
	} else if (!spec->has_retry_after && auto_until_us >= 0 && p->sc->retry_after_ms &&
	           fa_response_spec_pause_header(spec) == NULL) {
		int64_t left = auto_until_us - send_us;
		int64_t ms = left <= 0 ? 0 : (left + 999) / 1000;

		fa_resp_add_retry_after_ms(resp, p->sc->retry_after_ms, ms);
		until = send_us + ms * 1000;
		resp->attempt.pause_until_us = until;
		fa_attempt_pause_from(&resp->attempt, "retry-after-ms");
	}
	if (spec->status >= 200 && spec->status < 300)
		fa_shape_cluster_ok(p->shapes);
	return until;
}

/* The string member @field of the JSON object that is @req's body: the
 * client's reference for its write. NULL when the body is not a JSON
 * object or the member is absent or not a string. */
static char *body_reference(const struct fa_req *req, const char *field)
{
	cJSON *root = NULL;
	const cJSON *v;
	char *ref = NULL;

	if (field == NULL || req->body == NULL ||
	    fa_jsontext_parse(req->body, req->body_len, "body", &root, NULL) != FA_OK)
		return NULL;
	v = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, field) : NULL;
	if (cJSON_IsString(v))
		ref = fa_xstrdup(v->valuestring);
	cJSON_Delete(root);
	return ref;
}

/*
 * Is @v (the raw header, or NULL) a key the store can keep exactly: absent,
 * empty (= none), or 1..255 printable ASCII characters (the IETF draft's
 * key is a structured-field string, which allows no more)? Anything else
 * would be compared after the journal's UTF-8 cleaning, so two different
 * keys could look the same.
 */
static bool key_well_formed(const char *v)
{
	size_t n = 0;

	for (; v != NULL && v[n] != '\0'; n++)
		if ((unsigned char)v[n] < 0x20 || (unsigned char)v[n] > 0x7e)
			return false;
	return n <= 255;
}

/* The Idempotency-Key the store looks at: an empty header is none. */
static const char *store_key(const struct fa_attempt *a)
{
	return a->idempotency_key != NULL && a->idempotency_key[0] != '\0' ? a->idempotency_key
	                                                                   : NULL;
}

/*
 * The idempotency layer in front of a write on an effect route (after the
 * key check and the during_pause answer, so a 429 is never stored). True
 * when the write goes ahead, its key (if any) now in flight until
 * fa_provider_finish(); false when the store answered it into @resp: a
 * replay of the stored answer, 409, 422 or 400. Caller holds p->lock.
 */
static bool idempotency_layer(struct fa_provider *p, struct fa_resp *resp)
{
	struct fa_attempt *a = &resp->attempt;
	struct fa_store_answer ans;
	enum fa_fault f;

	switch (fa_store_begin(p->store, store_key(a), a->body_sha256, a->conn_id,
	                       fa_provider_now_us(p), &ans)) {
	case FA_STORE_PROCEED: return true;
	case FA_STORE_REPLAY:
		f = FA_FAULT_REPLAY;
		resp->status = ans.status;
		a->status = ans.status;
		if (ans.body != NULL) {
			resp->body = ans.body; /* the answer owns it now */
			resp->body_len = strlen(ans.body);
			ans.body = NULL;
			fa_resp_add_header(resp, "Content-Type", "application/json");
		}
		if (p->sc->store.profile == FA_IDEM_PAYMENT)
			fa_resp_add_header(resp, "Idempotent-Replayed", "true");
		break;
	case FA_STORE_IN_FLIGHT:
		f = FA_FAULT_IDEM_CONFLICT;
		error_answer(resp, 409, "idempotency_in_flight",
		             "a request with this Idempotency-Key is still in progress");
		break;
	case FA_STORE_REUSED:
		f = FA_FAULT_IDEM_REUSED;
		error_answer(resp, 422, "idempotency_key_reused",
		             "this Idempotency-Key was used with another request body");
		break;
	case FA_STORE_MISSING:
	default:
		f = FA_FAULT_IDEM_MISSING;
		error_answer(resp, 400, "idempotency_key_missing",
		             "this endpoint requires an Idempotency-Key header");
		break;
	}
	fa_store_answer_release(&ans);
	a->fault = fa_xstrdup(fa_fault_str(f));
	return false;
}

/*
 * Commit the write this attempt carries on effect route @r, answered by
 * response entry @spec (whose answer fa_fault_respond() already built in
 * @resp): the store keeps a record with the attempt's route, client
 * reference, Idempotency-Key and body SHA-256, @spec's status and its body
 * rendered with @params and "{provider_id}" -> the new record's id. Adds
 * provider_id to @params and renders @resp's body again with it, so the
 * answer sent (or cut short) names the record, and sets
 * resp->attempt.committed. Once per attempt: a second call does nothing.
 * Caller holds p->lock; call before any delay, hold or drop.
 */
static void commit_write(struct fa_provider *p, const struct fa_route_spec *r,
                         const struct fa_response_spec *spec, struct fa_params *params,
                         struct fa_resp *resp)
{
	struct fa_attempt *a = &resp->attempt;
	char id[FA_STORE_ID_MAX];
	struct fa_store_write w = {
		.route = r->id,
		.client_reference = a->client_reference,
		.idempotency_key = store_key(a),
		.body_sha256 = a->body_sha256,
		.status = spec->status,
		.body = spec->body,
		.params = params,
	};
	cJSON *body;

	if (a->committed ||
	    fa_store_commit(p->store, &w, a->conn_id, fa_provider_now_us(p), id) != FA_OK)
		return;
	a->committed = true;
	fa_store_params_add_id(params, id);
	if (spec->body == NULL)
		return;
	body = fa_route_render(spec->body, params);
	fa_resp_set_json(resp, resp->status, body);
	cJSON_Delete(body);
}

/*
 * The route that answers @req, its template's parameters (cleaned to
 * UTF-8) into @params and its index into @idx; NULL when none matches or
 * a reconciliation read answers it. A pure lookup: nothing moves.
 */
static const struct fa_route_spec *find_route(const struct fa_provider *p, const struct fa_req *req,
                                              struct fa_params *params, size_t *idx)
{
	const struct fa_route_spec *r;

	if (fa_reconcile_is_read(&p->sc->store, req))
		return NULL;
	r = fa_route_find(p->sc->routes, p->sc->n_routes, req->method, req->path, params, idx);
	for (size_t k = 0; r != NULL && k < params->n; k++) {
		char *v = fa_utf8_clean(params->value[k]);

		free(params->value[k]);
		params->value[k] = v;
	}
	return r;
}

/* What the quota model's decision on @resp adds to the metrics, once the
 * answer is settled: the tokens it reserved and got back, or its refusal. */
static void count_quota(struct fa_provider *p, const struct fa_resp *resp)
{
	const struct fa_quota_decision *d = &resp->quota;

	if (resp->attempt.quota == NULL)
		return; /* the model did not decide */
	if (!d->admitted) {
		const char *refusal[] = {
			fa_quota_scope_str(d->scope),
			d->in_flight ? "in-flight" : fa_quota_bucket_str(d->bucket),
			d->over_capacity ? "400" : "429",
		};

		fa_metrics_add(p->metrics, FA_METRIC_REFUSALS, refusal, 1);
		return;
	}
	fa_metrics_add(p->metrics, FA_METRIC_TOKENS_RESERVED, NULL, (uint64_t)d->cost);
	if (d->refunded)
		fa_metrics_add(p->metrics, FA_METRIC_TOKENS_REFUNDED, NULL, (uint64_t)d->cost);
}

void fa_provider_decide(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	struct fa_attempt *a = &resp->attempt;
	const struct fa_key *key;
	const struct fa_route_spec *r;
	struct fa_params params = { 0 };
	struct fa_chat_req creq = { 0 };
	struct fa_sse_pending pending = { 0 };
	const struct fa_response_spec *scripted = NULL; /* the entry that answered */
	char request_id[FA_MESSAGES_REQUEST_ID_MAX];
	enum fa_rc chat_rc = FA_OK;
	char why[160] = "";
	bool refund = false;
	int64_t pause_until, cost = 0, until;
	size_t i = 0, idx;

	resp->journaled = true;
	/* a pure lookup (nothing moves), before the key: a messages route
	 * answers its 401 in its own shape too */
	r = find_route(p, req, &params, &i);
	key = describe(p, req, a);
	if (req->malformed != NULL) {
		/* before the key: nothing of a request whose framing is in doubt is trusted */
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_MALFORMED));
		error_answer(resp, 400, "bad_request", req->malformed);
		goto done;
	}
	if (fa_journal_file_failed(p->journal, NULL, NULL, NULL)) {
		/* an attempt the file cannot record is not answered as if it were */
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_JOURNAL));
		error_answer(resp, 503, "journal_unavailable",
		             "the provider cannot write its journal file, so it refuses "
		             "requests it could not record (see GET /_fakeapi/health)");
		goto done;
	}
	if (key == NULL) {
		/* the platform's rate-limit contract: an invalid key is 401 and spends nothing */
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_UNAUTHORIZED));
		error_answer(resp, 401, "unauthorized", "missing or unknown API key");
		fa_resp_add_header(resp, "WWW-Authenticate", "Bearer");
		goto done;
	}
	pthread_mutex_lock(&p->lock);
	resp->scope = fa_xstrdup(a->scope);
	a->in_flight = fa_scopes_enter(p->scopes, a->scope);
	if (req->body_too_large) {
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_TOO_LARGE));
		error_answer(resp, 413, "request_too_large", "request body too large");
		goto out;
	}
	/* the LLM rate-limit guide: the quota must know what a chat request costs, so its
	 * body is read first */
	if (r != NULL && (r->kind == FA_ROUTE_CHAT || r->kind == FA_ROUTE_MESSAGES)) {
		chat_rc = r->kind == FA_ROUTE_CHAT
		                  ? fa_chat_parse(req->body, req->body_len, &creq, why, sizeof(why))
		                  : fa_messages_parse(req->body, req->body_len, &creq, why,
		                                      sizeof(why));
		if (chat_rc == FA_OK) {
			cost = fa_chat_cost(&creq);
			a->tokens = (int)cost;
		}
	}
	/* the platform's rate-limit contract: after the key check, before any answer is chosen; an
	 * unusable chat body (its 400 below) is not metered at all */
	if (p->quota != NULL && chat_rc == FA_OK &&
	    !fa_quota_answer_admit(p->quota, p->sc, resp, cost, fa_provider_now_us(p)))
		goto out;
	pause_until = fa_scopes_pause_until(p->scopes, a->scope);
	if (p->sc->has_during_pause && pause_until > req->t_arrival_us) {
		/* the scope is paused: answer again without moving any cursor
		 * and without extending the pause a compliant client waits out */
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_DURING_PAUSE));
		scripted = &p->sc->during_pause;
		scripted_answer(p, resp, scripted, NULL, pause_until, req);
		goto out;
	}
	if (fa_reconcile_answer(&p->sc->store, p->store, req, fa_provider_now_us(p), resp))
		goto out;
	if (r == NULL) {
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_NO_ROUTE));
		error_answer(resp, 404, "not_found", "no route matches this method and path");
		goto out;
	}
	if (r->effect != FA_EFFECT_NONE) {
		a->client_reference = body_reference(req, r->client_reference_field);
		if (p->sc->store.profile != FA_IDEM_NONE &&
		    !key_well_formed(fa_req_header(req, "Idempotency-Key"))) {
			a->route = fa_xstrdup(r->id);
			a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_IDEM_INVALID));
			error_answer(resp, 400, "idempotency_key_invalid",
			             "Idempotency-Key must be 1 to 255 printable ASCII characters");
			goto out;
		}
		if (!idempotency_layer(p, resp)) {
			a->route = fa_xstrdup(r->id);
			goto out;
		}
	}
	if (chat_rc != FA_OK) {
		/* the provider's own 400: no cursor moves */
		cJSON *bad = fa_chat_invalid(why);

		a->route = fa_xstrdup(r->id);
		a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_RESPOND));
		fa_resp_set_json(resp, 400, bad);
		cJSON_Delete(bad);
		a->status = 400;
		goto out;
	}
	idx = fa_cursors_next(p->cursors, i, a->scope);
	a->route = fa_xstrdup(r->id);
	a->response_index = (int)idx;
	scripted = &r->responses[idx];
	until = scripted_answer(p, resp, scripted, &params, -1, req);
	if (r->kind == FA_ROUTE_MESSAGES) {
		refund = fa_messages_answer(r, scripted, &creq, ++p->messages_seq, resp, &pending);
	} else if (r->kind != FA_ROUTE_SCRIPTED) {
		refund = fa_chat_answer(r, scripted, &creq,
		                        r->kind == FA_ROUTE_CHAT ? ++p->chat_seq : 0,
		                        fa_clock_wall_us() / 1000000, resp, &pending);
	}
	a->fault = fa_xstrdup(fa_fault_str(fa_fault_settle(resp, req->conn_reuse)));
	/* before any hold, delay or drop; the fault module says which
	 * answers commit */
	if (r->effect != FA_EFFECT_NONE && fa_fault_commits(resp->fault, resp->status))
		commit_write(p, r, &r->responses[idx], &params, resp);
	/* an answer that goes out (or drops) at once is settled now: the
	 * client may send the same key again as soon as it has it, before
	 * fa_provider_finish() runs; a delayed or held one stays in
	 * flight until then */
	if (r->effect != FA_EFFECT_NONE && resp->delay_ms == 0 && !resp->hold)
		fa_store_end(p->store, store_key(a), a->conn_id, fa_provider_now_us(p));
	/* only an answer whose headers go out announces its pause */
	if (until > req->t_arrival_us &&
	    (resp->fault == FA_RESP_RESPOND || resp->fault == FA_RESP_PARTIAL_BODY))
		fa_scopes_pause(p->scopes, a->scope, until);
out:
	if (resp->quota_admitted)
		fa_quota_answer_settle(p->quota, p->sc, resp, refund, fa_provider_now_us(p));
	pthread_mutex_unlock(&p->lock);
	count_quota(p, resp);
	/* a stream's body, up to some 5 MB, is rendered without the lock:
	 * nothing under it reads the body, and other requests need not wait */
	fa_sse_render(&creq, &pending, resp);
done:
	if (r != NULL && r->kind == FA_ROUTE_MESSAGES) {
		fa_messages_request_id(req->conn_id, req->conn_reuse, request_id);
		fa_messages_dress(scripted, request_id, resp);
	}
	fa_params_release(&params);
	fa_chat_req_release(&creq);
}

void fa_provider_abandon(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	resp->journaled = true;
	describe(p, req, &resp->attempt);
	resp->attempt.fault = fa_xstrdup(fa_fault_str(FA_FAULT_INCOMPLETE));
}

/* What a finished attempt adds to the metrics, as the journal gets it. */
static void count_attempt(struct fa_provider *p, const struct fa_attempt *a)
{
	char status[16];
	const char *attempt[] = { a->route, status, a->fault };
	const char *stream[] = { a->stream_end };

	snprintf(status, sizeof(status), "%d", a->status);
	fa_metrics_add(p->metrics, FA_METRIC_ATTEMPTS, attempt, 1);
	if (a->stream_end != NULL)
		fa_metrics_add(p->metrics, FA_METRIC_STREAMS, stream, 1);
}

void fa_provider_finish(struct fa_provider *p, struct fa_resp *resp, int64_t t_response_us,
                        int64_t t_done_us, enum fa_delivery delivered)
{
	if (resp->scope != NULL) {
		pthread_mutex_lock(&p->lock);
		fa_scopes_leave(p->scopes, resp->scope);
		if (resp->quota_admitted)
			fa_quota_leave(p->quota, &resp->quota);
		resp->quota_admitted = false;
		pthread_mutex_unlock(&p->lock);
	}
	if (!resp->journaled)
		return;
	/* the write is over: a committed key now replays, another is forgotten */
	if (resp->attempt.route != NULL)
		fa_store_end(p->store, store_key(&resp->attempt), resp->attempt.conn_id,
		             fa_provider_now_us(p));
	resp->attempt.t_response_us = t_response_us;
	resp->attempt.t_done_us = t_done_us;
	resp->attempt.delivered = delivered;
	if (t_response_us < 0) {
		/* nothing reached the wire: no status, no Retry-After */
		resp->attempt.status = 0;
		free(resp->attempt.retry_after);
		resp->attempt.retry_after = NULL;
		free(resp->attempt.retry_after_ms);
		resp->attempt.retry_after_ms = NULL;
		resp->attempt.pause_until_us = -1;
	}
	if (resp->attempt.pause_until_us == -1)
		fa_attempt_pause_from(&resp->attempt, NULL);
	count_attempt(p, &resp->attempt);
	fa_journal_append(p->journal, &resp->attempt);
}

void fa_provider_reset(struct fa_provider *p)
{
	pthread_mutex_lock(&p->lock);
	fa_cursors_reset(p->cursors);
	fa_scopes_reset(p->scopes);
	if (p->quota != NULL)
		fa_quota_reset(p->quota);
	fa_shape_state_reset(p->shapes);
	p->chat_seq = 0;
	p->messages_seq = 0;
	pthread_mutex_unlock(&p->lock);
	fa_store_reset(p->store);
	fa_journal_reset(p->journal);
}

struct fa_metrics *fa_provider_metrics(struct fa_provider *p)
{
	return p->metrics;
}

/* What a scrape reads of the scopes (fa_scopes_each). */
struct scrape {
	struct fa_metrics *m; /* borrowed */
	int64_t now_us;       /* the provider's clock at the scrape */
	uint64_t paused;      /* scopes whose pause ends after now_us */
};

static void scrape_scope(void *ctx, const char *scope, int64_t pause_until_us, int in_flight)
{
	struct scrape *s = ctx;
	const char *labels[] = { scope };

	if (pause_until_us > s->now_us)
		s->paused++;
	fa_metrics_set(s->m, FA_METRIC_IN_FLIGHT, labels, (uint64_t)in_flight);
}

char *fa_provider_metrics_text(struct fa_provider *p, size_t *len)
{
	struct scrape s = { .m = p->metrics, .now_us = fa_provider_now_us(p) };

	pthread_mutex_lock(&p->lock);
	fa_scopes_each(p->scopes, scrape_scope, &s);
	pthread_mutex_unlock(&p->lock);
	fa_metrics_set(p->metrics, FA_METRIC_PAUSES, NULL, s.paused);
	fa_metrics_set(p->metrics, FA_METRIC_JOURNAL_ENTRIES, NULL, fa_journal_count(p->journal));
	fa_metrics_set(p->metrics, FA_METRIC_JOURNAL_BYTES, NULL, fa_journal_bytes(p->journal));
	return fa_metrics_text(p->metrics, len);
}

char *fa_provider_state_json(struct fa_provider *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *j;
	char head[65];
	char *out;

	cJSON_AddStringToObject(o, "scenario", p->sc->id);
	cJSON_AddNumberToObject(o, "uptime_us", (double)fa_provider_now_us(p));
	pthread_mutex_lock(&p->lock);
	cJSON_AddItemToObject(o, "routes", fa_cursors_json(p->cursors));
	cJSON_AddItemToObject(o, "scopes", fa_scopes_json(p->scopes));
	pthread_mutex_unlock(&p->lock);
	cJSON_AddItemToObject(o, "store", fa_store_json(p->store, fa_provider_now_us(p)));
	j = cJSON_AddObjectToObject(o, "journal");
	cJSON_AddNumberToObject(j, "count", (double)fa_journal_count(p->journal));
	fa_journal_head(p->journal, head);
	cJSON_AddStringToObject(j, "head", head);
	out = fa_xcheck(cJSON_PrintUnformatted(o), "cJSON_PrintUnformatted");
	cJSON_Delete(o);
	return out;
}
