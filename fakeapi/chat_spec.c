/* chat_spec.c -- a route's "kind" and the LLM endpoints' route and response options. */
#include "chat_spec.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "chat.h"
#include "fault.h"
#include "response_spec.h"

const char *const fa_route_kinds[] = { "scripted", "chat_completions", "models", "messages", NULL };

/* Does a route of @kind answer streams (chat completions, messages)? */
static bool streams(enum fa_route_kind kind)
{
	return kind == FA_ROUTE_CHAT || kind == FA_ROUTE_MESSAGES;
}

#define MODEL_NAME_MAX 256

static enum fa_rc read_models(struct fa_schema *s, const cJSON *arr, struct fa_route_spec *rt)
{
	const cJSON *m;
	size_t i = 0, mark;
	enum fa_rc rc = FA_OK;

	if (fa_schema_count(arr) > FA_CHAT_MAX_MODELS)
		return fa_schema_fail(s, "expected at most %d models, got %zu", FA_CHAT_MAX_MODELS,
		                      fa_schema_count(arr));
	rt->models = fa_xcalloc(fa_schema_count(arr), sizeof(*rt->models));
	cJSON_ArrayForEach(m, arr)
	{
		mark = fa_schema_enter_index(s, i);
		if (!cJSON_IsString(m) || m->valuestring[0] == '\0' ||
		    strlen(m->valuestring) > MODEL_NAME_MAX)
			rc = fa_schema_fail_got(s, m, "string of 1..%d bytes", MODEL_NAME_MAX);
		for (size_t k = 0; rc == FA_OK && k < i; k++)
			if (strcmp(rt->models[k], m->valuestring) == 0)
				rc = fa_schema_fail(s, "duplicate model %s (first at [%zu])",
				                    fa_schema_quote(m->valuestring).s, k);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
		rt->models[i] = fa_xstrdup(m->valuestring);
		rt->n_models = ++i;
	}
	return FA_OK;
}

/* "chunk_delay_ms" and the stall (the platform's stream_idle_timeout) of
 * response @r of a route of @kind. */
static enum fa_rc check_pacing(struct fa_schema *s, enum fa_route_kind kind,
                               const struct fa_response_spec *r)
{
	bool ok2xx = r->status >= 200 && r->status < 300;
	bool stall = r->stall_after_chunks >= 0;
	const char *end = kind == FA_ROUTE_MESSAGES ? "error event" : "stream_idle_timeout frame";

	if (!streams(kind) && (r->chunk_delay_ms > 0 || stall))
		return fa_schema_fail(s,
		                      "\"%s\" needs a route with \"kind\": \"chat_completions\" "
		                      "or \"messages\"",
		                      stall ? "stall_after_chunks" : "chunk_delay_ms");
	if (r->chunk_delay_ms > 0 && !ok2xx && r->shape.shape == FA_SHAPE_NONE &&
	    r->error_after_chunks < 0)
		return fa_schema_fail(s,
		                      "\"chunk_delay_ms\" needs a 2xx \"status\" or %s (a "
		                      "stream), got status %d",
		                      kind == FA_ROUTE_MESSAGES ? "\"error_after_chunks\""
		                                                : "a \"shape\"",
		                      r->status);
	if (!stall)
		return FA_OK;
	if (r->stop_after_chunks >= 0)
		return fa_schema_fail(s,
		                      "\"stall_after_chunks\" cannot go with "
		                      "\"stop_after_chunks\" (a stalled stream ends with its %s)",
		                      end);
	if (r->error_after_chunks >= 0)
		return fa_schema_fail(s,
		                      "\"stall_after_chunks\" cannot go with "
		                      "\"error_after_chunks\" (a stalled stream ends with its %s)",
		                      end);
	if (r->shape.shape != FA_SHAPE_NONE)
		return fa_schema_fail(s,
		                      "\"stall_after_chunks\" cannot go with \"shape\": \"%s\" "
		                      "(a stalled stream ends with its %s)",
		                      fa_shape_str(r->shape.shape), end);
	if (r->fault != FA_RESP_RESPOND)
		return fa_schema_fail(s, "\"stall_after_chunks\" cannot go with \"fault\": \"%s\"",
		                      fa_fault_str(fa_fault_of(r->fault, 0)));
	if (!ok2xx)
		return fa_schema_fail(s,
		                      "\"stall_after_chunks\" needs a 2xx \"status\", got "
		                      "status %d",
		                      r->status);
	return FA_OK;
}

/* No Retry-After (nor a literal retry-after-ms, which announces a pause
 * as well) on an entry whose stream members make it a 2xx stream, nor on
 * any 2xx answer of a chat_completions or messages route (any of them
 * becomes a stream when the request asks for one): a stall's pause is its
 * frame's retryAfter ("retry_after_s"), and a 200, streamed, paced or cut,
 * announces no pause, so the journal's retry_after and pause_until_us
 * could only contradict what the client reads. */
static enum fa_rc check_stream_retry_after(struct fa_schema *s, enum fa_route_kind kind,
                                           const struct fa_response_spec *r)
{
	bool ok2xx = r->status >= 200 && r->status < 300;
	const struct fa_header *h = fa_response_spec_pause_header(r);
	const char *member = r->stall_after_chunks >= 0       ? "stall_after_chunks"
	                     : r->stop_after_chunks >= 0      ? "stop_after_chunks"
	                     : r->chunk_delay_ms > 0 && ok2xx ? "chunk_delay_ms"
	                                                      : NULL;
	const char *why = r->stall_after_chunks >= 0
	                          ? "a stalled stream sends no Retry-After; \"retry_after_s\" "
	                            "gives its frame's retryAfter"
	                          : "a 2xx stream sends no Retry-After";

	if (r->shape.shape != FA_SHAPE_NONE)
		return FA_OK;
	if (member == NULL && streams(kind) && ok2xx) {
		if (r->has_retry_after)
			return fa_schema_fail(s,
			                      "\"retry_after\" cannot go with a 2xx answer on a "
			                      "\"kind\": \"%s\" route (a 2xx, streamed or not, "
			                      "announces no pause)",
			                      fa_route_kinds[kind]);
		if (h != NULL)
			return fa_schema_fail(s,
			                      "header %s cannot go with a 2xx answer on a "
			                      "\"kind\": \"%s\" route (a 2xx, streamed or not, "
			                      "announces no pause)",
			                      fa_schema_quote(h->name).s, fa_route_kinds[kind]);
		return FA_OK;
	}
	if (member == NULL)
		return FA_OK;
	if (r->has_retry_after)
		return fa_schema_fail(s, "\"retry_after\" cannot go with \"%s\" (%s)", member, why);
	if (h != NULL)
		return fa_schema_fail(s, "header %s cannot go with \"%s\" (%s)",
		                      fa_schema_quote(h->name).s, member, why);
	return FA_OK;
}

/* What a messages route allows on top (messages.h): no shape
 * (the endpoint answers in Anthropic's own error shape), an error event
 * for an error status, and no pause its events could name. */
static enum fa_rc check_messages(struct fa_schema *s, const struct fa_response_spec *r)
{
	const struct fa_header *h = fa_response_spec_pause_header(r);

	if (r->shape.shape != FA_SHAPE_NONE)
		return fa_schema_fail(
		        s, "\"shape\" cannot go with \"kind\": \"messages\" (the "
		           "endpoint answers in Anthropic's error shape: give a \"status\")");
	if (r->stall_after_chunks >= 0 && r->shape.retry_after_s > 0)
		return fa_schema_fail(s, "\"retry_after_s\" cannot go with \"kind\": \"messages\" "
		                         "(a stalled stream's error event names no pause)");
	if (r->error_after_chunks < 0)
		return FA_OK;
	if (r->status < 400)
		return fa_schema_fail(s,
		                      "\"error_after_chunks\" needs an error \"status\" "
		                      "(400..599: its error event's), got status %d",
		                      r->status);
	if (r->has_retry_after)
		return fa_schema_fail(s, "\"retry_after\" cannot go with \"error_after_chunks\" "
		                         "(the stream's error event names no pause)");
	if (h != NULL)
		return fa_schema_fail(s,
		                      "header %s cannot go with \"error_after_chunks\" (the "
		                      "stream's error event names no pause)",
		                      fa_schema_quote(h->name).s);
	return FA_OK;
}

/* The stream options of response @r of a route of @kind. */
static enum fa_rc check_response(struct fa_schema *s, enum fa_route_kind kind,
                                 const struct fa_response_spec *r)
{
	bool ok2xx = r->status >= 200 && r->status < 300;

	if (kind == FA_ROUTE_MESSAGES && check_messages(s, r) != FA_OK)
		return FA_EINVAL;
	if (check_pacing(s, kind, r) != FA_OK)
		return FA_EINVAL;
	if (kind != FA_ROUTE_SCRIPTED && ok2xx && r->body != NULL)
		return fa_schema_fail(s,
		                      "\"body\" cannot go with a 2xx answer on a \"kind\": "
		                      "\"%s\" route (the provider renders it)",
		                      fa_route_kinds[kind]);
	if (!streams(kind) && (r->error_after_chunks >= 0 || r->stop_after_chunks >= 0))
		return fa_schema_fail(s,
		                      "\"%s\" needs a route with \"kind\": \"chat_completions\" "
		                      "or \"messages\"",
		                      r->error_after_chunks >= 0 ? "error_after_chunks"
		                                                 : "stop_after_chunks");
	if (kind == FA_ROUTE_CHAT && r->error_after_chunks >= 0 && r->shape.shape == FA_SHAPE_NONE)
		return fa_schema_fail(s, "\"error_after_chunks\" needs a \"shape\" "
		                         "(the error frame is the shape's)");
	if (r->stop_after_chunks >= 0 &&
	    (!ok2xx || r->shape.shape != FA_SHAPE_NONE || r->fault != FA_RESP_RESPOND))
		return fa_schema_fail(s,
		                      "\"stop_after_chunks\" needs a 2xx \"status\" without "
		                      "\"shape\" or \"fault\", got status %d",
		                      r->status);
	return check_stream_retry_after(s, kind, r);
}

enum fa_rc fa_chat_spec_read(struct fa_schema *s, const cJSON *reply, const cJSON *models,
                             struct fa_route_spec *rt)
{
	enum fa_rc rc = FA_OK;
	size_t mark, mark2;

	if (reply != NULL && !streams(rt->kind))
		return fa_schema_fail(s, "\"reply\" needs \"kind\": \"chat_completions\" or "
		                         "\"messages\"");
	if (models != NULL && rt->kind != FA_ROUTE_MODELS)
		return fa_schema_fail(s, "\"models\" needs \"kind\": \"models\"");
	if (rt->kind != FA_ROUTE_SCRIPTED && rt->effect != FA_EFFECT_NONE)
		return fa_schema_fail(s, "\"effect\" cannot go with \"kind\": \"%s\"",
		                      fa_route_kinds[rt->kind]);
	if (reply != NULL && strlen(reply->valuestring) > FA_CHAT_REPLY_MAX) {
		mark = fa_schema_enter(s, "reply");
		rc = fa_schema_fail(s, "expected at most %d bytes, got %zu", FA_CHAT_REPLY_MAX,
		                    strlen(reply->valuestring));
		fa_schema_leave(s, mark);
		return rc;
	}
	if (models != NULL) {
		mark = fa_schema_enter(s, "models");
		rc = read_models(s, models, rt);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	mark = fa_schema_enter(s, "responses");
	for (size_t j = 0; rc == FA_OK && j < rt->n_responses; j++) {
		mark2 = fa_schema_enter_index(s, j);
		rc = check_response(s, rt->kind, &rt->responses[j]);
		fa_schema_leave(s, mark2);
	}
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	if (streams(rt->kind) && rt->reply == NULL)
		rt->reply = fa_xstrdup(FA_CHAT_DEFAULT_REPLY);
	if (rt->kind == FA_ROUTE_MODELS && rt->models == NULL) {
		rt->models = fa_xcalloc(1, sizeof(*rt->models));
		rt->models[0] = fa_xstrdup(FA_CHAT_DEFAULT_MODEL);
		rt->n_models = 1;
	}
	return FA_OK;
}

void fa_chat_spec_release(struct fa_route_spec *rt)
{
	free(rt->reply);
	for (size_t i = 0; i < rt->n_models && rt->models != NULL; i++)
		free(rt->models[i]);
	free(rt->models);
	rt->reply = NULL;
	rt->models = NULL;
	rt->n_models = 0;
}
