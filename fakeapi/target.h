/* target.h -- a request's target and framing as RFC 9112 has them: the path to route by, and what
 * is malformed. */
#ifndef FA_TARGET_H
#define FA_TARGET_H

#include <stddef.h>

#include "header.h"

/*
 * The path of @url as the provider routes and journals it: an
 * absolute-form target ("http://host:port/v1/x", RFC 9112 section 3.2.2;
 * scheme matched in any letter case) gives "/v1/x" ("/" when it names no
 * path); anything else is @url itself. Borrowed from @url.
 */
const char *fa_target_path(const char *url);

/*
 * Why the request is malformed, or NULL: the checks a server must make
 * before it can trust the framing or the path (docs/internals.md, "What
 * libmicrohttpd answers by itself"). @raw_uri is the request target as
 * sent (not decoded), @path the decoded path (fa_target_path of what
 * libmicrohttpd hands over), @version "HTTP/1.1" or "HTTP/1.0", @headers
 * the request headers, @reserved the admin prefix ("/_fakeapi/",
 * FA_ADMIN_PREFIX; NULL = none). In order: HTTP/1.1 without Host; two
 * different Content-Length values; Content-Length with
 * Transfer-Encoding; %00 in the raw path; a "." or ".." segment in the
 * decoded path; the reserved prefix reached only through
 * percent-encoding. The reason is a static string.
 */
const char *fa_target_malformed(const char *raw_uri, const char *path, const char *version,
                                const struct fa_header *headers, size_t n_headers,
                                const char *reserved);

#endif
