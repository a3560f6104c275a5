/* route.h -- a route: its spec, path templates, body rendering and response-sequence cursors. */
#ifndef FA_ROUTE_H
#define FA_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "response_spec.h"

/* How a route's response sequence advances. */
enum fa_cursor_kind {
	FA_CURSOR_SHARED = 0, /* one cursor for every caller */
	FA_CURSOR_SCOPE,      /* one cursor per scope (see fa_scope_kind) */
};

/* The side effect a route has ($.routes[i].effect). */
enum fa_effect {
	FA_EFFECT_NONE = 0, /* a read: nothing is stored */
	FA_EFFECT_CREATE,   /* "create": a 2xx answer (or a committing fault) stores a record */
};

/* What a route plays ($.routes[i].kind). */
enum fa_route_kind {
	FA_ROUTE_SCRIPTED = 0, /* "scripted" (default): the responses as written */
	FA_ROUTE_CHAT,         /* "chat_completions": a 2xx response is rendered as an
	                          OpenAI-compatible chat completion or stream (chat.h) */
	FA_ROUTE_MODELS,       /* "models": a 2xx response is rendered as the model list */
	FA_ROUTE_MESSAGES,     /* "messages": an Anthropic-compatible Messages endpoint: a
	                          2xx is a Message or its event stream, an error answers
	                          in Anthropic's error shape (messages.h) */
};

/* One route ($.routes[i]). */
struct fa_route_spec {
	char *id;                   /* unique in the scenario */
	char *method;               /* upper case: GET HEAD POST PUT PATCH DELETE OPTIONS */
	char *path;                 /* template, "/v1/records/{id}"; never under /_fakeapi/ */
	char *klass;                /* request class ("read", ...) or NULL */
	enum fa_cursor_kind cursor; /* default FA_CURSOR_SHARED */
	struct fa_response_spec *responses; /* owned, n_responses >= 1 */
	size_t n_responses;
	enum fa_effect effect;        /* "effect", default FA_EFFECT_NONE */
	char *client_reference_field; /* "client_reference_field": top-level body member
	                                 holding the client's reference; default
	                                 "client_reference" on an effect route, else NULL */
	enum fa_route_kind kind;      /* "kind", default FA_ROUTE_SCRIPTED */
	char *reply;                  /* chat_completions, messages: "reply", the
	                                 assistant's text,
	                                 1..FA_CHAT_REPLY_MAX bytes; default
	                                 FA_CHAT_DEFAULT_REPLY */
	char **models;                /* models: "models", 1..FA_CHAT_MAX_MODELS unique
	                                 names; default {FA_CHAT_DEFAULT_MODEL} */
	size_t n_models;
};

/* The methods a route or a task may use, upper case, NULL-terminated:
 * GET HEAD POST PUT PATCH DELETE OPTIONS. */
extern const char *const fa_route_methods[];

/* Most {param} segments one template may have. */
#define FA_ROUTE_MAX_PARAMS 16

/* Values a template captured, in template order. Owned strings. */
struct fa_params {
	size_t n;
	char *name[FA_ROUTE_MAX_PARAMS];
	char *value[FA_ROUTE_MAX_PARAMS];
};

/* Free the captured strings and zero @p. NULL accepted. */
void fa_params_release(struct fa_params *p);

/*
 * Does @path ("/v1/records/42", no query) match template @tmpl
 * ("/v1/records/{id}")? Segment by segment: a literal matches itself, a
 * {name} segment any non-empty segment. On a match, fills @out (may be
 * NULL) with the captured values, which the caller releases.
 */
bool fa_route_match(const char *tmpl, const char *path, struct fa_params *out);

/* The value of hex digit @c (0..15, either case), or -1 when @c is none:
 * for reading %-escapes. */
int fa_route_hexval(int c);

/*
 * @n bytes at @s percent-decoded, as the server decodes a request path
 * before routing it: "%XX" with two hex digits becomes that byte; a "%"
 * without them stays as it is, and so does "%00" (a NUL would end the
 * string). Returns a new string the caller frees.
 */
char *fa_route_pct_decode(const char *s, size_t n);

/*
 * The route a request for @target (a path as a task gives it, may carry a
 * query, percent-escapes allowed) with @method reaches: fa_route_find()
 * on the decoded path without its query, as the provider routes it; NULL
 * when no route matches (a reconciliation read, or a mistake).
 */
const struct fa_route_spec *fa_route_of_target(const struct fa_route_spec *routes, size_t n_routes,
                                               const char *method, const char *target);

/*
 * The first of the @n_routes @routes whose method is @method and whose template
 * matches @path (decoded, no query: fa_route_match), its captured values
 * into @params (may be NULL; released by the caller) and its index into
 * @idx (may be NULL); NULL when none matches. What the provider routes
 * on, reconciliation reads aside (reconcile.h).
 */
const struct fa_route_spec *fa_route_find(const struct fa_route_spec *routes, size_t n_routes,
                                          const char *method, const char *path,
                                          struct fa_params *params, size_t *idx);

/*
 * A deep copy of @body in which every "{name}" inside a JSON string (object
 * keys untouched) is replaced by the captured value; unknown names stay as
 * they are. The value lands inside a JSON string, so printing the result
 * escapes it. Returns NULL for @body NULL; the caller frees with
 * cJSON_Delete.
 */
cJSON *fa_route_render(const cJSON *body, const struct fa_params *p);

struct fa_cursors;

/* Cursors for each of the @n_routes @routes (borrowed; must outlive the
 * cursors). */
struct fa_cursors *fa_cursors_new(const struct fa_route_spec *routes, size_t n_routes);

/* NULL accepted. */
void fa_cursors_free(struct fa_cursors *c);

/*
 * Index of the response that route @route_idx gives now, and advance. A
 * shared cursor ignores @scope; a per-scope cursor (FA_CURSOR_SCOPE) keeps
 * one position per scope string. Each entry answers `times` requests in a
 * row, then the next one takes over; an entry with times 0, or the last
 * entry once used up, answers for ever. Not thread-safe: the provider
 * holds its lock.
 */
size_t fa_cursors_next(struct fa_cursors *c, size_t route_idx, const char *scope);

/* Rewind every cursor (admin reset). */
void fa_cursors_reset(struct fa_cursors *c);

/* The cursors as JSON for GET /_fakeapi/state: [{"route", "cursor",
 * "positions": [{"scope", "index", "used"}]}]. Caller frees. */
cJSON *fa_cursors_json(const struct fa_cursors *c);

#endif
