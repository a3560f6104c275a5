/* admin.c -- the reserved /_fakeapi/ endpoints; never journaled. */
#include "admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "metrics.h"

bool fa_admin_is_admin_path(const char *path)
{
	return strncmp(path, FA_ADMIN_PREFIX, strlen(FA_ADMIN_PREFIX)) == 0 ||
	       strcmp(path, "/_fakeapi") == 0;
}

static void answer(struct fa_resp *resp, int status, const char *key, const char *value)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, key, value);
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
		answer(resp, 400, "error", "since: expected a decimal sequence number");
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
	answer(resp, 404, "error", msg);
}

void fa_admin_handle(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp)
{
	const char *name = req->path + strlen(FA_ADMIN_PREFIX);

	resp->journaled = false;
	if (strlen(req->path) < strlen(FA_ADMIN_PREFIX))
		name = "";
	for (size_t i = 0; i < N_ENDPOINTS; i++) {
		const struct endpoint *e = &endpoints[i];

		if (strcmp(e->name, name) != 0)
			continue;
		if (strcmp(e->method, req->method) != 0 &&
		    !(strcmp(req->method, "HEAD") == 0 && strcmp(e->method, "GET") == 0)) {
			answer(resp, 405, "error", "method not allowed");
			fa_resp_add_header(resp, "Allow", e->method);
			return;
		}
		e->handle(p, req, resp);
		return;
	}
	unknown(resp);
}
