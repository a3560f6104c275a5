/* exchange.c -- one request and its answer as the server and every answer module see them. */
#include "exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

void fa_resp_add_header(struct fa_resp *r, const char *name, const char *value)
{
	r->headers = fa_xrealloc(r->headers, (r->n_headers + 1) * sizeof(*r->headers));
	r->headers[r->n_headers].name = fa_xstrdup(name);
	r->headers[r->n_headers].value = fa_xstrdup(value);
	r->n_headers++;
}

bool fa_resp_has_header(const struct fa_resp *r, const char *name)
{
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return true;
	return false;
}

void fa_resp_drop_header(struct fa_resp *r, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_headers; i++) {
		if (strcasecmp(r->headers[i].name, name) == 0) {
			free(r->headers[i].name);
			free(r->headers[i].value);
			continue;
		}
		r->headers[n++] = r->headers[i];
	}
	r->n_headers = n;
}

void fa_resp_add_retry_after_ms(struct fa_resp *resp, bool on, int64_t ms)
{
	char buf[32];

	/* a literal one from the scenario's headers is the answer's own */
	if (!on || fa_resp_has_header(resp, "retry-after-ms"))
		return;
	snprintf(buf, sizeof(buf), "%lld", (long long)(ms < 0 ? 0 : ms));
	fa_resp_add_header(resp, "retry-after-ms", buf);
	free(resp->attempt.retry_after_ms);
	resp->attempt.retry_after_ms = fa_xstrdup(buf);
}

void fa_resp_set_json(struct fa_resp *r, int status, const cJSON *body)
{
	r->status = status;
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
	if (body == NULL)
		return;
	r->body = fa_xcheck(cJSON_PrintUnformatted(body), "cJSON_PrintUnformatted");
	r->body_len = strlen(r->body);
	if (!fa_resp_has_header(r, "Content-Type"))
		fa_resp_add_header(r, "Content-Type", "application/json");
}

void fa_resp_release(struct fa_resp *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n_headers; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	free(r->body);
	fa_journal_view_close(r->journal_view);
	free(r->scope);
	fa_attempt_release(&r->attempt);
	memset(r, 0, sizeof(*r));
}

const char *fa_req_header(const struct fa_req *req, const char *name)
{
	for (size_t i = 0; i < req->n_headers; i++)
		if (strcasecmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	return NULL;
}

const char *fa_req_query(const struct fa_req *req, const char *name)
{
	for (size_t i = 0; i < req->n_query; i++)
		if (strcmp(req->query[i].name, name) == 0)
			return req->query[i].value;
	return NULL;
}
