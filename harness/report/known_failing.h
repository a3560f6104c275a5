/* known_failing.h -- the --known-failing list: checks a client is known to fail, each with its line
 * and reason. */
#ifndef HX_KNOWN_FAILING_H
#define HX_KNOWN_FAILING_H

#include <stddef.h>

#include "rc.h"

/* Longest line of a list, bytes without the newline; a longer one is an
 * error. */
#define HX_KNOWN_FAILING_MAX_LINE 4096

/* One entry of the list. */
struct hx_known_entry {
	const char *id; /* static: the check's id, from the check table (check.h) */
	char *reason;   /* owned: the text after '#' on its line, trimmed; NULL without */
	unsigned line;  /* 1-based line number in the file */
};

/* A parsed list (docs/report.md, "Known failing checks"). */
struct hx_known_failing {
	char *file;                     /* owned: the path as given, for messages */
	struct hx_known_entry *entries; /* owned, n_entries, in file order */
	size_t n_entries;
};

/*
 * Parse @len bytes at @text (need not be NUL-terminated), read from @file
 * (used in messages only): one check id per line; blank lines and lines
 * whose first non-blank character is '#' are comments; after the id,
 * blanks then an optional "# reason". Surrounding blanks (space, tab, CR)
 * do not count, nor a UTF-8 byte order mark at the very start. On success *@out gets a new list
 * (free with hx_known_failing_free) and FA_OK is returned. FA_EINVAL with the first fault in @err,
 * *@out NULL: FILE:LINE: unknown check "x"   (not in hx_check_def_at(); control characters and
 * broken UTF-8 shown as ?) FILE:LINE: duplicate check "x" (first on line N) FILE:LINE: expected a
 * check id and an optional "# reason", got "..." FILE:LINE: line longer than 4096 bytes FILE:LINE:
 * NUL byte in the line
 */
enum fa_rc hx_known_failing_parse(const char *file, const char *text, size_t len,
                                  struct hx_known_failing **out, struct fa_err *err);

/* Read and parse the file at @path as hx_known_failing_parse() does; FA_EIO
 * with "PATH: cannot read: reason" when it cannot be read (a folder, say);
 * FA_EINVAL with "PATH: not a regular file" for a FIFO, a socket or a
 * device, refused at once (a FIFO is never waited on). */
enum fa_rc hx_known_failing_load(const char *path, struct hx_known_failing **out,
                                 struct fa_err *err);

/* The entry for check @id, borrowed from @kf; NULL when @kf is NULL or does
 * not list it. */
const struct hx_known_entry *hx_known_failing_find(const struct hx_known_failing *kf,
                                                   const char *id);

/* Free @kf and what it owns. NULL accepted. */
void hx_known_failing_free(struct hx_known_failing *kf);

#endif
