/* admin.c -- the reserved /_fakeapi/ endpoints; never journaled. */
#include "admin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "alloc.h"
#include "digest.h"
#include "metrics.h"

bool fa_admin_is_admin_path(const char *path)
{
	return strncmp(path, FA_ADMIN_PREFIX, strlen(FA_ADMIN_PREFIX)) == 0 ||
	       strcmp(path, "/_fakeapi") == 0;
}

/* An admin error in the API's own shape: {"error": {"code", "message"}}. */
static void fail(struct fa_resp *resp, int status, const char *code, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");

	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	fa_resp_set_json(resp, status, o);
	cJSON_Delete(o);
}

/* Take ownership of a JSON text as the body. */
static void answer_text(struct fa_resp *resp, int status, char *json)
{
	resp->status = status;
	resp->body = json;
	resp->body_len = strlen(json);
	fa_resp_add_header(resp, "Content-Type", "application/json");
}

/* Parse ?since=SEQ: absent is 0; anything but a decimal number is false. */
static bool parse_since(const char *v, uint64_t *out)
{
	char *end;

	*out = 0;
	if (v == NULL)
		return true;
	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno == 0 && *end == '\0';
}

/* One admin endpoint: name, method, handler. */
struct endpoint {
	const char *name;
	const char *method;
	void (*handle)(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp);
};

static void health(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t missing = 0, in_file = 0;
	int err = 0;
	bool failed = fa_journal_file_failed(fa_provider_journal(p), &missing, &in_file, &err);

	(void)req;
	cJSON_AddStringToObject(o, "status", failed ? "degraded" : "ok");
	cJSON_AddNumberToObject(o, "attempts", (double)fa_journal_count(fa_provider_journal(p)));
	if (failed) {
		cJSON *jf = cJSON_AddObjectToObject(o, "journal_file");

		cJSON_AddStringToObject(jf, "error", strerror(err));
		cJSON_AddNumberToObject(jf, "last_seq", (double)in_file);
		cJSON_AddNumberToObject(jf, "missing", (double)missing);
	}
	fa_resp_set_json(resp, 200, o);
	cJSON_Delete(o);
}

static void journal(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	uint64_t since;

	if (!parse_since(fa_req_query(req, "since"), &since)) {
		fail(resp, 400, "bad_since", "since: expected a decimal sequence number");
		return;
	}
	/* streamed from the journal's file: no copy of the journal per reader */
	resp->status = 200;
	resp->journal_view = fa_journal_view_open(fa_provider_journal(p), since);
	fa_resp_add_header(resp, "Content-Type", "application/json");
}

static void reset(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	cJSON *o = cJSON_CreateObject();

	(void)req;
	fa_provider_reset(p);
	cJSON_AddBoolToObject(o, "reset", 1);
	fa_resp_set_json(resp, 200, o);
	cJSON_Delete(o);
}

static void state(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	(void)req;
	answer_text(resp, 200, fa_provider_state_json(p));
}

static void metrics(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	(void)req;
	resp->status = 200;
	resp->body = fa_provider_metrics_text(p, &resp->body_len);
	fa_resp_add_header(resp, "Content-Type", FA_METRICS_CONTENT_TYPE);
}

static const struct endpoint endpoints[] = {
	{ "health", "GET", health },   /* {"status": "ok", "attempts": N} */
	{ "journal", "GET", journal }, /* ?since=SEQ */
	{ "metrics", "GET", metrics }, /* the Prometheus text format, not JSON */
	{ "reset", "POST", reset },    /* fa_provider_reset */
	{ "state", "GET", state },     /* fa_provider_state_json */
};

#define N_ENDPOINTS (sizeof(endpoints) / sizeof(endpoints[0]))

/* 404, naming every endpoint of the table. */
static void unknown(struct fa_resp *resp)
{
	char msg[160];
	size_t n = (size_t)snprintf(msg, sizeof(msg), "unknown admin endpoint (");

	for (size_t i = 0; i < N_ENDPOINTS && n < sizeof(msg); i++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s", i > 0 ? ", " : "",
		                      endpoints[i].name);
	if (n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, ")");
	fail(resp, 404, "unknown_endpoint", msg);
}

/* Is @host (a Host header: name or address, maybe a port) a loopback
 * name (fa_admin_loopback_name)? */
bool fa_admin_loopback_name(const char *name)
{
	size_t n = strlen(name);
	struct in_addr a4;
	struct in6_addr a6;

	if (strcasecmp(name, "localhost") == 0 ||
	    (n > 10 && strcasecmp(name + n - 10, ".localhost") == 0))
		return true;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, name, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static bool loopback_host(const char *host)
{
	char name[256];
	const char *end;
	size_t n;

	if (host[0] == '[') {
		end = strchr(host, ']');
		n = end != NULL ? (size_t)(end - host - 1) : 0;
		host++;
	} else {
		end = strchr(host, ':');
		n = end != NULL ? (size_t)(end - host) : strlen(host);
	}
	if (n == 0 || n >= sizeof(name))
		return false;
	memcpy(name, host, n);
	name[n] = '\0';
	if (name[n - 1] == '.')
		name[--n] = '\0'; /* a fully qualified "localhost." */
	return fa_admin_loopback_name(name);
}

/* Does @req present @token as "Authorization: Bearer TOKEN"? Compared as
 * SHA-256 digests in constant time: neither the bytes nor the length of
 * the token leak through the time an answer takes. */
static bool token_ok(const struct fa_req *req, const char *token)
{
	const char *v = fa_req_header(req, "Authorization");
	char want[FA_SHA256_HEX], got[FA_SHA256_HEX];

	if (v == NULL || strncasecmp(v, "Bearer ", 7) != 0)
		return false;
	fa_digest_sha256_hex(token, strlen(token), want);
	fa_digest_sha256_hex(v + 7, strlen(v + 7), got);
	return CRYPTO_memcmp(want, got, sizeof(want)) == 0;
}

/* A browser's cross-origin request: an Origin whose authority is not the
 * Host, or Sec-Fetch-Site naming another site. */
static bool cross_origin(const struct fa_req *req)
{
	const char *origin = fa_req_header(req, "Origin");
	const char *site = fa_req_header(req, "Sec-Fetch-Site");
	const char *host = fa_req_header(req, "Host");
	const char *auth;

	if (site != NULL && strcmp(site, "same-origin") != 0 && strcmp(site, "none") != 0)
		return true;
	if (origin == NULL)
		return false;
	auth = strstr(origin, "://");
	return auth == NULL || host == NULL || strcasecmp(auth + 3, host) != 0;
}

/* A state-changing call's body: Content-Type application/json, and no
 * body or a JSON object. A form or text/plain POST, which a web page may
 * send anywhere without asking, is refused. */
static bool json_body(const struct fa_req *req)
{
	const char *ct = fa_req_header(req, "Content-Type");
	cJSON *body;
	bool ok;

	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' '))
		return false;
	if (req->body_len == 0)
		return true;
	body = cJSON_ParseWithLength(req->body, req->body_len);
	ok = cJSON_IsObject(body);
	cJSON_Delete(body);
	return ok;
}

/* The guard before any endpoint (docs/internals.md, "The admin API"):
 * false when it answered @resp with the refusal. */
static bool admitted(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	const char *token = fa_provider_admin_token(p);
	const char *host = fa_req_header(req, "Host");

	if (token != NULL && !token_ok(req, token)) {
		fail(resp, 401, "admin_token_required",
		     "the admin API needs Authorization: Bearer <the --admin-token value>");
		fa_resp_add_header(resp, "WWW-Authenticate", "Bearer realm=\"fakeapi admin\"");
		return false;
	}
	if (token == NULL && fa_provider_admin_loopback(p) && host != NULL &&
	    !loopback_host(host)) {
		fail(resp, 403, "host_not_loopback",
		     "the admin API answers requests addressed to a loopback name only "
		     "(localhost, 127.0.0.1, [::1]): this one names another host");
		return false;
	}
	if (cross_origin(req)) {
		fail(resp, 403, "cross_origin", "the admin API refuses cross-origin requests");
		return false;
	}
	return true;
}

void fa_admin_handle(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	const char *name = req->path + strlen(FA_ADMIN_PREFIX);

	resp->journaled = false;
	if (!admitted(p, req, resp))
		return;
	if (strlen(req->path) < strlen(FA_ADMIN_PREFIX))
		name = "";
	for (size_t i = 0; i < N_ENDPOINTS; i++) {
		const struct endpoint *e = &endpoints[i];

		if (strcmp(e->name, name) != 0)
			continue;
		if (strcmp(e->method, req->method) != 0 &&
		    !(strcmp(req->method, "HEAD") == 0 && strcmp(e->method, "GET") == 0)) {
			fail(resp, 405, "method_not_allowed", "method not allowed");
			fa_resp_add_header(resp, "Allow", e->method);
			return;
		}
		if (strcmp(e->method, "POST") == 0 && !json_body(req)) {
			fail(resp, 415, "json_required",
			     "a state-changing admin call needs Content-Type: application/json "
			     "and a JSON object (or no body)");
			return;
		}
		e->handle(p, req, resp);
		return;
	}
	unknown(resp);
}
