/* draft.h -- what both importers share to draft a scenario from observed traffic: options,
 * warnings, path templates, route ids, times. */
#ifndef HX_DRAFT_H
#define HX_DRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"
#include "redact.h"

/* The longest offset an imported task may start at, ms: the largest
 * "at_ms" a scenario allows (docs/scenario-format.md, events). */
#define HX_DRAFT_MAX_AT_MS 3600000

/* The longest "delay_ms" kept from a capture or a journal, ms (the
 * scenario format's limit); a longer wait is cut to it. */
#define HX_DRAFT_MAX_DELAY_MS 600000

/* The placeholder key every imported scenario offers when the source
 * names none: id, secret (never a real one) and user. */
#define HX_DRAFT_KEY_ID     "imported"
#define HX_DRAFT_KEY_SECRET "sk-imported-placeholder"
#define HX_DRAFT_USER       "imported"

/* What the command line asked of a conversion. Every pointer is borrowed. */
struct hx_draft_opts {
	const char *const *hosts; /* --host: keep only these hosts (HAR), n_hosts >= 0 */
	size_t n_hosts;
	const char *const
	        *prefixes; /* --path-prefix: keep only paths starting so, n_prefixes >= 0 */
	size_t n_prefixes;
	const char *id;  /* --id: the scenario id; NULL = from the file name */
	bool no_harness; /* --no-harness: routes only, no $.harness block */
};

/* Warnings a conversion collects (a body dropped, a broken hash chain):
 * the caller prints them. Owned strings, "FILE: $.path: what". */
struct hx_draft_warnings {
	char **msg;
	size_t n;
};

/* Add a printf-formatted warning to @w. */
void hx_draft_warn(struct hx_draft_warnings *w, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Free the warnings and zero @w. NULL is accepted. */
void hx_draft_warnings_release(struct hx_draft_warnings *w);

/*
 * The route template of @path (no query), or NULL when it has more than
 * FA_ROUTE_MAX_PARAMS segments to turn into parameters. With @decode
 * the whole path is percent-decoded first, as the provider decodes it
 * before routing (a HAR URL is encoded; a journal's path is decoded
 * already), so a %2F splits a segment; then it is split at "/". A segment becomes a parameter,
 * {id}, {id2}, {id3}... in order, when it is all digits; a UUID (8-4-4-4-12 hex digits); 16 or more
 * characters of [A-Za-z0-9_-] with at least one digit (hex digests,
 * base62 and prefixed ids such as "cus_4QFJqXQ9e8Bq2x"); or text a
 * template cannot hold literally (a space, a control character, "%",
 * "{", "}", "?", "#", invalid UTF-8). Empty
 * segments stay ("/v1/" keeps its trailing slash). A new string.
 */
char *hx_draft_template(const char *path, bool decode);

/*
 * @path (absolute, as written in a URL) with its "." and ".." segments
 * resolved as RFC 3986 §5.2.4 says and clients do before sending:
 * "/v1/../../etc/passwd" is "/etc/passwd", "/v1/./x/." is "/v1/x/". Only
 * literal dots count ("%2E" is left to hx_draft_path_unfit). A new string.
 */
char *hx_draft_remove_dots(const char *path);

/*
 * Why the URL path @path (percent-encoded, dots resolved) cannot be
 * replayed as captured, or NULL when it can: a %00 (the provider's path
 * ends there), or a "." or ".." segment once decoded (written %2E, or
 * made by a %2F), which some clients resolve and some send. Static text.
 */
const char *hx_draft_path_unfit(const char *path);

/*
 * Whether @auth (@len bytes: a URL's host and optional port, userinfo
 * removed) can be a URL's: a host, "[...]" closed for IPv6, a port of
 * 1..65535 digits or none. When not, what is wrong, in @msg (@size
 * bytes): `port "99999", expected 1..65535`.
 */
bool hx_draft_authority_ok(const char *auth, size_t len, char *msg, size_t size);

/*
 * A task's path for a captured request: @path (percent-encoded, dots
 * resolved) and @query (after "?", or NULL), fa_task parameters removed
 * (the harness adds its own), the value of every parameter whose name
 * is a credential's "redacted" (hx_redact_text, counted into @st, which
 * may be NULL), blanks, controls, "#", non-ASCII bytes and a "%" that
 * starts no escape percent-encoded. A new string.
 */
char *hx_draft_task_path(const char *path, const char *query, struct hx_redact_stats *st);

/* @path with every byte but [A-Za-z0-9-._~!$&'()*+,;=:@/] percent-encoded
 * (a decoded journal path made fit for a task's URL). A new string. */
char *hx_draft_encode_path(const char *path);

/* A scenario id made from @file's base name without its extension:
 * characters outside [A-Za-z0-9._-] become "-", cut to 64; "imported"
 * when nothing is left. A new string. */
char *hx_draft_id_from_file(const char *file);

/* The base name of @file (a pointer into it): what a comment names, so
 * that no folder of the machine the import ran on is written out. */
const char *hx_draft_basename(const char *file);

/* A route id for @method and @tmpl, unique among the @n ids in @taken:
 * "get-v1-records-id", then "-2", "-3"... on a clash. A new string. */
char *hx_draft_route_id(const char *method, const char *tmpl, char *const *taken, size_t n);

/* "read" for GET, HEAD and OPTIONS, "write" for the other methods: the
 * class an imported route and task get. Static storage. */
const char *hx_draft_class(const char *method);

/* Response @r with "times": @times as its first member when @times is
 * more than 1, else @r itself. Takes @r; returns what to keep. */
cJSON *hx_draft_times(cJSON *r, int times);

/* Whether a scenario header may hold @value: no control character but tab. */
bool hx_draft_value_ok(const char *value);

/*
 * The scenario's "timeout_s" for tasks the last of which starts at
 * @last_at_ms: 60 s after it, at least 60 and at most 3600.
 */
int hx_draft_timeout_s(int64_t last_at_ms);

#endif
