/* fault.c -- what the provider does instead of (or before) a plain answer. */
#include "fault.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "header.h"
#include "retry_after.h"

const char *fa_fault_str(enum fa_fault f)
{
	switch (f) {
	case FA_FAULT_RESPOND: return "respond";
	case FA_FAULT_DELAY: return "delay";
	case FA_FAULT_DURING_PAUSE: return "during_pause";
	case FA_FAULT_UNAUTHORIZED: return "unauthorized";
	case FA_FAULT_NO_ROUTE: return "no_route";
	case FA_FAULT_TOO_LARGE: return "too_large";
	case FA_FAULT_INCOMPLETE: return "incomplete_request";
	case FA_FAULT_DROP_BEFORE_COMMIT: return "drop_before_commit";
	case FA_FAULT_DROP_AFTER_COMMIT: return "drop_after_commit";
	case FA_FAULT_RESET: return "reset";
	case FA_FAULT_PARTIAL_BODY: return "partial_body";
	case FA_FAULT_CLOSE_IDLE: return "close_idle";
	case FA_FAULT_REPLAY: return "replay";
	case FA_FAULT_IDEM_CONFLICT: return "idempotency_conflict";
	case FA_FAULT_IDEM_REUSED: return "idempotency_reused";
	case FA_FAULT_IDEM_MISSING: return "idempotency_missing";
	case FA_FAULT_IDEM_INVALID: return "idempotency_invalid";
	case FA_FAULT_QUOTA: return "quota";
	case FA_FAULT_JOURNAL: return "journal_unavailable";
	case FA_FAULT_MALFORMED: return "malformed_request";
	}
	return "unknown";
}

enum fa_fault fa_fault_of(enum fa_resp_fault f, int delay_ms)
{
	switch (f) {
	case FA_RESP_RESPOND: break;
	case FA_RESP_DROP_BEFORE_COMMIT: return FA_FAULT_DROP_BEFORE_COMMIT;
	case FA_RESP_DROP_AFTER_COMMIT: return FA_FAULT_DROP_AFTER_COMMIT;
	case FA_RESP_RESET: return FA_FAULT_RESET;
	case FA_RESP_PARTIAL_BODY: return FA_FAULT_PARTIAL_BODY;
	case FA_RESP_CLOSE_IDLE: return FA_FAULT_CLOSE_IDLE;
	}
	return delay_ms > 0 ? FA_FAULT_DELAY : FA_FAULT_RESPOND;
}

bool fa_fault_commits(enum fa_resp_fault f, int status)
{
	switch (f) {
	case FA_RESP_DROP_AFTER_COMMIT:
	case FA_RESP_RESET:
	case FA_RESP_PARTIAL_BODY: return true;
	case FA_RESP_DROP_BEFORE_COMMIT:
	case FA_RESP_CLOSE_IDLE: return false;
	case FA_RESP_RESPOND: break;
	}
	return status >= 200 && status <= 299;
}

enum fa_fault fa_fault_settle(struct fa_resp *resp, unsigned conn_reuse)
{
	if (resp->fault == FA_RESP_CLOSE_IDLE) {
		if (conn_reuse == 0) {
			resp->fault = FA_RESP_RESPOND; /* nothing idle to close yet */
		} else {
			/* the request found its connection already closing */
			resp->delay_ms = 0;
			resp->hold = false;
		}
	}
	return fa_fault_of(resp->fault, resp->delay_ms);
}

size_t fa_fault_partial_len(int fault_bytes, size_t body_len)
{
	size_t n = fault_bytes < 0 ? body_len / 2 : (size_t)fault_bytes;

	if (body_len == 0)
		return 0;
	return n < body_len ? n : body_len - 1;
}

/* The value of @spec's literal header @name (any letter case), or NULL. */
static const char *literal(const struct fa_response_spec *spec, const char *name)
{
	const struct fa_header *h = fa_header_find(spec->headers, spec->n_headers, name);

	return h != NULL ? h->value : NULL;
}

/* Send a Retry-After as fa_fault_respond() says; returns the pause. */
static int64_t add_retry_after(const struct fa_response_spec *spec, int64_t send_us,
                               int64_t wall_send_us, int64_t auto_until_us, struct fa_resp *resp)
{
	const char *value = literal(spec, "Retry-After");
	char buf[FA_RA_BUFSZ];
	int64_t until_wall = -1;

	if (value != NULL) {
		struct fa_retry_after ra;

		resp->attempt.retry_after = fa_xstrdup(value);
		if (fa_retry_after_parse(value, &ra) != FA_OK)
			return -1;
		until_wall = fa_retry_after_until_wall_us(&ra, wall_send_us);
		fa_attempt_pause_from(&resp->attempt,
		                      ra.form == FA_RA_DELTA ? "retry-after" : "retry-after-date");
	} else if (spec->has_retry_after) {
		if (fa_retry_after_format(spec->ra_form, spec->ra_seconds, wall_send_us, buf,
		                          sizeof(buf), &until_wall) != FA_OK)
			return -1;
		fa_resp_add_header(resp, "Retry-After", buf);
		resp->attempt.retry_after = fa_xstrdup(buf);
		fa_attempt_pause_from(&resp->attempt, spec->ra_form == FA_RA_DELTA
		                                              ? "retry-after"
		                                              : "retry-after-date");
	} else if (auto_until_us >= 0) {
		int64_t left = auto_until_us - send_us;
		int64_t secs = left <= 0 ? 0 : (left + 999999) / 1000000;

		snprintf(buf, sizeof(buf), "%lld", (long long)secs);
		fa_resp_add_header(resp, "Retry-After", buf);
		resp->attempt.retry_after = fa_xstrdup(buf);
		fa_attempt_pause_from(&resp->attempt, "retry-after");
		return send_us + secs * 1000000;
	} else {
		return -1;
	}
	return send_us + (until_wall - wall_send_us);
}

/* A literal retry-after-ms, sent as written with the other headers:
 * journaled as sent, and a pause when it parses; with a Retry-After that
 * named @until too, the earlier instant, since a client may follow
 * either. Returns the pause. */
static int64_t add_retry_after_ms(const struct fa_response_spec *spec, int64_t send_us,
                                  int64_t until, struct fa_resp *resp)
{
	const char *value = literal(spec, "retry-after-ms");
	int64_t ms, at;

	if (value == NULL)
		return until;
	free(resp->attempt.retry_after_ms);
	resp->attempt.retry_after_ms = fa_xstrdup(value);
	if (fa_retry_after_ms_parse(value, &ms) != FA_OK)
		return until;
	at = send_us + ms * 1000;
	if (until != -1 && at >= until)
		return until;
	fa_attempt_pause_from(&resp->attempt, "retry-after-ms");
	return at;
}

int64_t fa_fault_respond(const struct fa_response_spec *spec, const struct fa_params *params,
                         int64_t send_us, int64_t wall_send_us, int64_t auto_until_us,
                         struct fa_resp *resp)
{
	cJSON *body = fa_route_render(spec->body, params);

	for (size_t i = 0; i < spec->n_headers; i++)
		fa_resp_add_header(resp, spec->headers[i].name, spec->headers[i].value);
	fa_resp_set_json(resp, spec->status, body);
	cJSON_Delete(body);
	resp->delay_ms = spec->delay_ms;
	resp->fault = spec->fault;
	resp->fault_bytes = spec->fault_bytes;
	resp->hold = spec->hold;
	resp->hold_ms = spec->hold_ms;
	resp->attempt.status = spec->status;
	resp->attempt.pause_until_us = add_retry_after_ms(
	        spec, send_us, add_retry_after(spec, send_us, wall_send_us, auto_until_us, resp),
	        resp);
	return resp->attempt.pause_until_us;
}
