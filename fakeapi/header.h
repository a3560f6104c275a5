/* header.h -- header lists as scenario files give them: read, find, free. */
#ifndef FA_HEADER_H
#define FA_HEADER_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "rc.h"
#include "schema.h"

/* A header to send, in the order the file lists them. */
struct fa_header {
	char *name;  /* as written in the file */
	char *value; /* as written in the file */
};

/* True when @name is an RFC 9110 §5.6.2 token (1*tchar): a valid field name. */
bool fa_header_is_token(const char *name);

/*
 * Read a JSON object of header name -> string value (@obj, at the current
 * path of @s) into a new array, in file order. Names must be tokens and
 * unique as JSON keys; values strings without control characters other
 * than HTAB (so a scenario cannot split a message in two). With @repeat
 * (a response's headers) a value may also be a non-empty array of such
 * strings: one entry per string, in order, each sent as its own field
 * line (Vary, Link, Set-Cookie); never for Retry-After or retry-after-ms,
 * which have one value. Returns FA_OK with *@out (free with
 * fa_header_free_list) and *@n set; on FA_EINVAL *@out and *@n still
 * describe what was allocated, for the same release.
 */
enum fa_rc fa_header_read_list(struct fa_schema *s, const cJSON *obj, bool repeat,
                               struct fa_header **out, size_t *n);

/* First header of @h (n entries) named @name, compared case-insensitively
 * (RFC 9110 §5.1), or NULL. */
const struct fa_header *fa_header_find(const struct fa_header *h, size_t n, const char *name);

/* Free the @n names and values of @h and @h itself. NULL accepted. */
void fa_header_free_list(struct fa_header *h, size_t n);

#endif
