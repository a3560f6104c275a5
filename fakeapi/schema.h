/* schema.h -- table-driven checks of JSON values, with located messages. */
#ifndef FA_SCHEMA_H
#define FA_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"

/*
 * A file format is described by tables of struct fa_field, one table per
 * kind of object; fa_schema_object() checks an object against its table
 * and copies the plain members into a C struct. Messages follow one shape
 * (docs/scenario-format.md, "Errors"):
 *
 *   FILE: $.routes[2].status: expected integer 100..599, got string "200"
 *   FILE: $.routes[0]: missing required key "status"
 *   FILE: $.routes[0]: unknown key "stauts", did you mean "status"? (allowed: times, status, ...)
 *   FILE: $.provider: duplicate key "keys"
 */

/* What a value must be. */
enum fa_schema_type {
	FA_SCHEMA_ANY = 0, /* any JSON value */
	FA_SCHEMA_STRING,  /* see charset, one_of, FA_FIELD_NONEMPTY */
	FA_SCHEMA_INT,     /* a number without a fraction, min..max */
	FA_SCHEMA_BOOL,    /* true or false */
	FA_SCHEMA_OBJECT,  /* checked further by the caller */
	FA_SCHEMA_ARRAY,   /* checked further by the caller */
};

/* Where fa_schema_object() writes a checked value: the member at `off`
 * of the destination struct, which must have this C type. */
enum fa_schema_store {
	FA_STORE_NONE = 0, /* nothing: the caller reads the value from got[] */
	FA_STORE_STR,      /* char *: a copy of the string (free()) */
	FA_STORE_INT,      /* int */
	FA_STORE_I64,      /* int64_t */
	FA_STORE_BOOL,     /* bool */
	FA_STORE_INDEX,    /* an enum the size of int: index of the string in one_of */
	FA_STORE_JSON,     /* cJSON *: a deep copy (cJSON_Delete) */
};

#define FA_FIELD_REQUIRED 0x1u /* absent is an error */
#define FA_FIELD_NONEMPTY 0x2u /* a string, array or object needs >= 1 character or member */
/* accepted, but named in no "allowed:" list nor hint ("$schema", which
 * editors read and the loader ignores) */
#define FA_FIELD_UNLISTED 0x4u

/* One member an object may have. Absent members leave the destination
 * untouched, so the caller sets defaults first. */
struct fa_field {
	const char *name; /* member name; NULL for an array element */
	enum fa_schema_type type;
	unsigned flags;             /* FA_FIELD_* */
	int64_t min;                /* INT: smallest value allowed */
	int64_t max;                /* INT: largest value; STRING with charset: longest length */
	const char *charset;        /* STRING: [A-Za-z0-9] and these characters only,
	                               1..max of them ('-' last); NULL = any text */
	const char *const *one_of;  /* STRING: the only values allowed, NULL-terminated */
	enum fa_schema_store store; /* what to write at off */
	size_t off;                 /* offsetof() of the destination member */
};

/*
 * Table rows, one line each. ST is the destination struct type, M its
 * member; FL is a mix of FA_FIELD_* (or 0).
 */
#define FA_F_STR(N, FL, ST, M) /* string, copied */                                                \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_STRING, .flags = (FL), .store = FA_STORE_STR,       \
		.off = offsetof(ST, M)                                                             \
	}
#define FA_F_ID(N, FL, CHARS, MAX, ST, M) /* [A-Za-z0-9 CHARS]{1,MAX}, copied */                   \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_STRING, .flags = (FL), .max = (MAX),                \
		.charset = (CHARS), .store = FA_STORE_STR, .off = offsetof(ST, M)                  \
	}
#define FA_F_ONE_OF(N, FL, LIST, ST, M) /* one of LIST, copied */                                  \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_STRING, .flags = (FL), .one_of = (LIST),            \
		.store = FA_STORE_STR, .off = offsetof(ST, M)                                      \
	}
#define FA_F_ENUM(N, FL, LIST, ST, M) /* one of LIST, stored as its index */                       \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_STRING, .flags = (FL), .one_of = (LIST),            \
		.store = FA_STORE_INDEX, .off = offsetof(ST, M)                                    \
	}
#define FA_F_INT(N, FL, LO, HI, ST, M) /* integer LO..HI into an int */                            \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_INT, .flags = (FL), .min = (LO), .max = (HI),       \
		.store = FA_STORE_INT, .off = offsetof(ST, M)                                      \
	}
#define FA_F_I64(N, FL, LO, HI, ST, M) /* integer LO..HI into an int64_t */                        \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_INT, .flags = (FL), .min = (LO), .max = (HI),       \
		.store = FA_STORE_I64, .off = offsetof(ST, M)                                      \
	}
#define FA_F_JSON(N, ST, M) /* any value, deep-copied */                                           \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_ANY, .store = FA_STORE_JSON, .off = offsetof(ST, M) \
	}
#define FA_F_CHECK(N, TYPE, FL) /* checked, not stored */                                          \
	{                                                                                          \
		.name = (N), .type = (TYPE), .flags = (FL)                                         \
	}
#define FA_F_RANGE(N, FL, LO, HI) /* integer LO..HI, not stored */                                 \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_INT, .flags = (FL), .min = (LO), .max = (HI)        \
	}

/* Checking state: the file and the JSON path of the value at hand. */
struct fa_schema {
	const char *file;   /* named first in every message (borrowed) */
	struct fa_err *err; /* receives the first error (borrowed) */
	char path[512];     /* "$", "$.routes[2]", "$.provider.keys[\"ops-1\"]" */
	size_t len;         /* strlen(path) */
};

/* A short quoted rendering of a string for messages: JSON-escaped, cut to
 * FA_SCHEMA_QUOTE_CHARS characters with "..." inside the quotes. */
#define FA_SCHEMA_QUOTE_CHARS 40
struct fa_quoted {
	char s[256]; /* "\"ops-1\"" */
};

/* Start checking @file at path "$". Both are borrowed. */
void fa_schema_init(struct fa_schema *s, const char *file, struct fa_err *err);

/*
 * Descend into member @key (".key" when it is an identifier, else
 * "[\"key\"]" JSON-escaped) or element @i ("[i]"). Return the mark to give
 * fa_schema_leave(), which restores the path. A path longer than the
 * buffer is cut short, never overflowed.
 */
size_t fa_schema_enter(struct fa_schema *s, const char *key);
size_t fa_schema_enter_index(struct fa_schema *s, size_t i);
void fa_schema_leave(struct fa_schema *s, size_t mark);

/* Record "FILE: PATH: message" in s->err (first error wins) and return
 * FA_EINVAL, so callers can write `return fa_schema_fail(...)`. */
enum fa_rc fa_schema_fail(struct fa_schema *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Record "FILE: PATH: expected WHAT, got DESCRIPTION-OF-@got" and return
 * FA_EINVAL. */
enum fa_rc fa_schema_fail_got(struct fa_schema *s, const cJSON *got, const char *what_fmt, ...)
        __attribute__((format(printf, 3, 4)));

/*
 * How a value is named after "got": `string "x"` (see fa_schema_quote),
 * `integer 700`, `number 10.5`, `true`, `false`, `null`, `object`,
 * `empty object`, `array`, `empty array`. Written into @buf (@len bytes).
 */
void fa_schema_describe(const cJSON *v, char *buf, size_t len);

/* @str quoted for a message; NULL gives "null". */
struct fa_quoted fa_schema_quote(const char *str);

/* True when @str is 1..@max characters of [A-Za-z0-9] and @charset. */
bool fa_schema_charset_ok(const char *str, const char *charset, size_t max);

/* True when @v is a number with no fraction (2.0 counts as 2). */
bool fa_schema_is_integer(const cJSON *v);

/* Number of members of an object or elements of an array. */
size_t fa_schema_count(const cJSON *v);

/*
 * Check the string @v, at the current path, as an HTTP request path: it
 * starts with "/", holds no space, control character or "#", and is not
 * "/_fakeapi" or under "/_fakeapi/" (the provider's reserved admin
 * prefix, never journaled); a query ("?...") only when @query_ok, and
 * then without an fa_task parameter (the harness adds its own); no "%"
 * escape without @query_ok (route templates match the decoded path).
 */
enum fa_rc fa_schema_http_path(struct fa_schema *s, const cJSON *v, bool query_ok);

/* An error when @obj holds a member name twice ("duplicate key"); cJSON
 * keeps both. @obj must be an object. */
enum fa_rc fa_schema_unique(struct fa_schema *s, const cJSON *obj);

/*
 * Check value @v, at the current path, against @f alone (its name is not
 * looked at) and store it into @dst when @dst is not NULL and f->store
 * says so. Returns FA_OK or FA_EINVAL with the error recorded; a string
 * not in f->one_of but near one of them (fa_suggest) gets ", did you mean
 * "GET"?" after the value.
 */
enum fa_rc fa_schema_value(struct fa_schema *s, const cJSON *v, const struct fa_field *f,
                           void *dst);

/*
 * Check @obj, at the current path, against the @n members in @fields: it
 * must be an object without duplicate or unknown keys (the message lists
 * the allowed ones, in table order, after ", did you mean "status"?" when
 * one is near the unknown key) that has every required member; then
 * each member present is checked with fa_schema_value() at its own path
 * and stored into @dst (may be NULL). @got (may be NULL) receives, per
 * table row, the member found or NULL; the pointers borrow from @obj.
 */
enum fa_rc fa_schema_object(struct fa_schema *s, const cJSON *obj, const struct fa_field *fields,
                            size_t n, void *dst, const cJSON **got);

#endif
