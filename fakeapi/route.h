/* route.h -- path templates, body rendering and response-sequence cursors. */
#ifndef FA_ROUTE_H
#define FA_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "scenario.h"

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
const struct fa_route_spec *fa_route_of_target(const struct fa_scenario *sc,
					       const char *method, const char *target);

/*
 * The first route of @sc whose method is @method and whose template
 * matches @path (decoded, no query: fa_route_match), its captured values
 * into @params (may be NULL; released by the caller) and its index into
 * @idx (may be NULL); NULL when none matches. What the provider routes
 * on, reconciliation reads aside (reconcile.h).
 */
const struct fa_route_spec *fa_route_find(const struct fa_scenario *sc, const char *method,
					  const char *path, struct fa_params *params,
					  size_t *idx);

/*
 * A deep copy of @body in which every "{name}" inside a JSON string (object
 * keys untouched) is replaced by the captured value; unknown names stay as
 * they are. The value lands inside a JSON string, so printing the result
 * escapes it. Returns NULL for @body NULL; the caller frees with
 * cJSON_Delete.
 */
cJSON *fa_route_render(const cJSON *body, const struct fa_params *p);

struct fa_cursors;

/* Cursors for every route of @sc (borrowed; must outlive the cursors). */
struct fa_cursors *fa_cursors_new(const struct fa_scenario *sc);

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
