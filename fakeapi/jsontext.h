/* jsontext.h -- JSON text to a cJSON tree, with LINE:COL on a syntax error. */
#ifndef FA_JSONTEXT_H
#define FA_JSONTEXT_H

#include <stddef.h>

#include <cJSON.h>

#include "rc.h"

/* Deepest nesting of arrays and objects accepted (cJSON stops at 1000). */
#define FA_JSONTEXT_MAX_DEPTH 512

/*
 * Parse @len bytes at @text (need not be NUL-terminated) as exactly one
 * JSON text (RFC 8259): strict syntax, where cJSON alone would accept
 * leading zeros, raw control characters in strings or stray bytes below
 * 0x20 as whitespace. A leading UTF-8 byte order mark is skipped. Strings
 * must be valid UTF-8 and must not contain \u0000 (cJSON strings end at a
 * NUL). Thread-safe: cJSON's global error pointer is never read.
 *
 * On a syntax error, @err gets "NAME:LINE:COL: message" with LINE and COL
 * 1-based and COL counted in characters (UTF-8 code points), e.g.
 * "x.json:3:9: expected ',' or '}', got ']'"; an input that stops early is
 * "unexpected end of input" placed just after its last non-blank
 * character; anything but whitespace after the value is "trailing
 * characters after the JSON value". Returns FA_OK and a new tree in *@out
 * (the caller frees it with cJSON_Delete), or FA_EINVAL and *@out NULL.
 */
enum fa_rc fa_jsontext_parse(const char *text, size_t len, const char *name, cJSON **out,
                             struct fa_err *err);

/*
 * Read the whole file at @path into a new buffer (*@text, NUL-terminated
 * for convenience, *@len bytes before the NUL; the caller frees it). A file
 * that cannot be opened or read is FA_EIO with "PATH: cannot read:
 * strerror" in @err (a folder: "Is a directory"); one over
 * FA_JSONTEXT_MAX_FILE bytes is FA_EINVAL with "PATH: cannot read: file
 * larger than 64 MiB"; anything else that is not a regular file (a FIFO,
 * a device, a socket), which could block the read for ever, is FA_EINVAL
 * with "PATH: not a regular file", found before the open and never waited on.
 */
#define FA_JSONTEXT_MAX_FILE (64u * 1024 * 1024)
enum fa_rc fa_jsontext_read(const char *path, char **text, size_t *len, struct fa_err *err);

/* 1-based line and column (in UTF-8 code points) of byte @off of @text. */
void fa_jsontext_position(const char *text, size_t off, unsigned *line, unsigned *col);

#endif
