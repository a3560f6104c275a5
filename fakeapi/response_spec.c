/* response_spec.c -- one response entry: a route's responses[j] and $.provider.during_pause. */
#include "response_spec.h"

#include <string.h>
#include <strings.h>

#include "header.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define REQ  FA_FIELD_REQUIRED

/* FA_STORE_INDEX writes an int into these. */
_Static_assert(sizeof(enum fa_resp_fault) == sizeof(int), "enum size");

/* fa_retry_after_form_parse() turns these into enum fa_ra_form */
static const char *const ra_forms[] = {
	"delta-seconds", "imf-fixdate", "rfc850", "asctime", NULL,
};
/* in enum fa_resp_fault order */
static const char *const resp_faults[] = {
	"respond", "drop_before_commit", "drop_after_commit", "reset", "partial_body", "close_idle",
	NULL,
};

/* $.routes[i].responses[j]; $.provider.during_pause is the same without
 * "times", which must stay first, and without the connection faults and
 * the shapes, which must stay last (RS_N_FAULT + RS_N_SHAPE of them).
 * "status" is required unless a "shape" gives it. */
enum {
	RS_TIMES,
	RS_STATUS,
	RS_HEADERS,
	RS_BODY,
	RS_RETRY_AFTER,
	RS_DELAY,
	RS_FAULT,
	RS_FAULT_BYTES,
	RS_HOLD,
	RS_HOLD_MS,
	RS_SHAPE,
	RS_RA_S,
	RS_COOLDOWN_S,
	RS_DEADLINE_MS,
	RS_ERROR_AFTER,
	RS_STOP_AFTER,
	RS_CHUNK_DELAY,
	RS_STALL_AFTER,
	RS_STALL_MS
};
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
	{ .name = "hold",
	  .type = FA_SCHEMA_BOOL,
	  .store = FA_STORE_BOOL,
	  .off = offsetof(struct fa_response_spec, hold) },
	FA_F_INT("hold_ms", 0, 1, 600000, struct fa_response_spec, hold_ms),
	/* the platform's answer shapes (shape.h); "shape" maps to enum fa_shape + 1 */
	{ .name = "shape", .type = FA_SCHEMA_STRING, .one_of = fa_shape_names },
	FA_F_INT("retry_after_s", 0, 1, FA_SHAPE_RETRY_AFTER_MAX_S, struct fa_response_spec,
	         shape.retry_after_s),
	FA_F_INT("cooldown_s", 0, 1, FA_SHAPE_COOLDOWN_MAX_S, struct fa_response_spec,
	         shape.cooldown_s),
	FA_F_INT("deadline_ms", 0, 1, FA_SHAPE_DEADLINE_MAX_MS, struct fa_response_spec,
	         shape.deadline_ms),
	/* chat_completions streams (chat_spec.h checks them against the route) */
	FA_F_INT("error_after_chunks", 0, 0, FA_STREAM_MAX_CHUNKS, struct fa_response_spec,
	         error_after_chunks),
	FA_F_INT("stop_after_chunks", 0, 0, FA_STREAM_MAX_CHUNKS, struct fa_response_spec,
	         stop_after_chunks),
	FA_F_INT("chunk_delay_ms", 0, 0, FA_STREAM_CHUNK_DELAY_MAX_MS, struct fa_response_spec,
	         chunk_delay_ms),
	FA_F_INT("stall_after_chunks", 0, 0, FA_STREAM_MAX_CHUNKS, struct fa_response_spec,
	         stall_after_chunks),
	FA_F_INT("stall_ms", 0, 1, FA_STREAM_STALL_MAX_MS, struct fa_response_spec, stall_ms),
};

/* "retry_after" as a plain number: delta-seconds */
static const struct fa_field ra_delta_field = FA_F_RANGE(NULL, 0, 0, FA_RA_MAX_DELTA_S);

/* "retry_after" as an object; negative seconds name a past date */
enum { RA_SECONDS, RA_FORM };
static const struct fa_field ra_fields[] = {
	FA_F_I64("seconds", REQ, -FA_RA_MAX_DELTA_S, FA_RA_MAX_DELTA_S, struct fa_response_spec,
	         ra_seconds),
	{ .name = "form", .type = FA_SCHEMA_STRING, .one_of = ra_forms },
};

static enum fa_rc read_retry_after(struct fa_schema *s, const cJSON *v, struct fa_response_spec *r)
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
		return fa_schema_fail_got(s, v, "integer 0..%lld or object", FA_RA_MAX_DELTA_S);
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
	if (r->ra_form == FA_RA_RFC850 &&
	    (r->ra_seconds > FA_RA_RFC850_SPAN_S || r->ra_seconds < -FA_RA_RFC850_SPAN_S)) {
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
		return fa_schema_fail(s,
		                      "\"fault_bytes\" needs \"fault\": \"partial_body\", "
		                      "got fault \"%s\"",
		                      resp_faults[r->fault]);
	if (partial && r->body == NULL && r->shape.shape == FA_SHAPE_NONE)
		return fa_schema_fail(s,
		                      "\"fault\": \"partial_body\" needs a \"body\" to cut short");
	if (partial && (r->status < 200 || r->status == 204 || r->status == 304))
		return fa_schema_fail(s,
		                      "\"fault\": \"partial_body\" needs a status that carries "
		                      "a body, got status %d",
		                      r->status);
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
static enum fa_rc check_shape(struct fa_schema *s, const cJSON **got, struct fa_response_spec *r)
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
		return fa_schema_fail(s,
		                      "\"status\" %d does not match \"shape\": \"%s\" "
		                      "(which answers %d)",
		                      r->status, name, fa_shape_status(sh));
	r->status = fa_shape_status(sh);
	if (got[RS_BODY] != NULL)
		return fa_schema_fail(s,
		                      "\"body\" cannot go with \"shape\": \"%s\" "
		                      "(the shape renders the body)",
		                      name);
	if (got[RS_RETRY_AFTER] != NULL)
		return fa_schema_fail(s,
		                      "\"retry_after\" cannot go with \"shape\": \"%s\" "
		                      "(the shape sends Retry-After)",
		                      name);
	h = fa_response_spec_pause_header(r);
	if (h != NULL)
		return fa_schema_fail(s,
		                      "header %s cannot go with \"shape\": \"%s\" "
		                      "(the shape sends Retry-After)",
		                      fa_schema_quote(h->name).s, name);
	if (got[RS_RA_S] != NULL && fa_shape_default_retry_after(sh) == 0)
		return fa_schema_fail(s,
		                      "\"retry_after_s\" cannot go with \"shape\": \"%s\" "
		                      "(its pause is %s)",
		                      name,
		                      sh == FA_SHAPE_AI_PROVIDER_COOLDOWN
		                              ? "the cooldown's; tune \"cooldown_s\""
		                              : "drawn 3..7 s");
	if (got[RS_COOLDOWN_S] != NULL && sh != FA_SHAPE_AI_PROVIDER_COOLDOWN)
		return fa_schema_fail(s,
		                      "\"cooldown_s\" needs \"shape\": "
		                      "\"ai_provider_cooldown\", got shape \"%s\"",
		                      name);
	if (got[RS_DEADLINE_MS] != NULL && sh != FA_SHAPE_AI_DEADLINE_EXCEEDED)
		return fa_schema_fail(s,
		                      "\"deadline_ms\" needs \"shape\": "
		                      "\"ai_deadline_exceeded\", got shape \"%s\"",
		                      name);
	return FA_OK;
}

enum fa_rc fa_response_spec_read(struct fa_schema *s, const cJSON *obj, struct fa_response_spec *r,
                                 bool last, bool pause)
{
	const cJSON *got[N(response_fields)] = { 0 };
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
	r->stall_ms = FA_STREAM_STALL_DEFAULT_MS;
	rc = fa_schema_object(s, obj, fields, n, r, got + (pause ? 1 : 0));
	if (rc != FA_OK)
		return rc;
	if (got[RS_STALL_MS] != NULL && got[RS_STALL_AFTER] == NULL)
		return fa_schema_fail(s, "\"stall_ms\" needs \"stall_after_chunks\"");
	if (got[RS_HEADERS] != NULL) {
		mark = fa_schema_enter(s, "headers");
		rc = fa_header_read_list(s, got[RS_HEADERS], true, &r->headers, &r->n_headers);
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
			return fa_schema_fail(s,
			                      "\"retry_after\" and header %s both given (give one)",
			                      fa_schema_quote(h->name).s);
	}
	return FA_OK;
}

const struct fa_header *fa_response_spec_pause_header(const struct fa_response_spec *r)
{
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, "Retry-After") == 0 ||
		    strcasecmp(r->headers[i].name, "retry-after-ms") == 0)
			return &r->headers[i];
	return NULL;
}

void fa_response_spec_release(struct fa_response_spec *r)
{
	fa_header_free_list(r->headers, r->n_headers);
	cJSON_Delete(r->body);
}
