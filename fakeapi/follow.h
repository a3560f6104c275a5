/* follow.h -- an attempt as one line a person can follow live (--follow, --journal -). */
#ifndef FA_FOLLOW_H
#define FA_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "journal.h"

/*
 * @a as one line of text without a newline; a new string the caller
 * frees. Columns are separated by two spaces:
 *
 *   +1.234s  #5  t3  POST /v1/chat/completions  429  quota  pause until +3.000s (scope key:ops-1)
 *
 * - arrival: t_arrival_us as seconds since the provider started, "+S.mmms"
 *   (3 decimals, truncated to the ms);
 * - "#SEQ": the journal's seq, the number the report's evidence cites;
 * - the task (fa_task / X-Fakeapi-Task), "-" when the attempt names none;
 * - method and path (path without the query);
 * - the status sent, "---" when none was (a drop or reset before the
 *   status line);
 * - the fault (journal.h: "respond", "quota", "during_pause", ...), "-"
 *   when NULL.
 * Then, only when they apply, in this order:
 * - "[QUOTA]": the quota decision ("[limited per-key replica 1]");
 * - the pause in force after this answer: "pause until +S.mmms" (the
 *   instant its Retry-After names, same clock as the arrival) followed by
 *   " (scope SCOPE)" when the attempt has a scope; a Retry-After that
 *   names no instant is "retry-after VALUE (no pause)";
 * - "client gone" or "dropped" when the answer was not delivered whole;
 * - a stream's end: "stream done, 12 chunks" ("done", "error_frame",
 *   "cut", "stall" or "client_gone").
 * Strings are written as the journal holds them (already clean UTF-8);
 * control characters in them become '?', so one attempt is one line.
 */
char *fa_follow_line(const struct fa_attempt *a);

/* Where and how a follow sink writes; set by the caller, borrowed. */
struct fa_follow {
	FILE *fp;             /* the stream written to, e.g. stdout; borrowed */
	bool text;            /* true: fa_follow_line(); false: the JSONL line */
	const char *scenario; /* NULL, or a scenario id (borrowed): text lines get
	                         "[ID] " in front, JSONL lines a first member
	                         "scenario": ID before the journal's own */
};

/*
 * A fa_journal_sink_fn (journal.h): @ctx is a struct fa_follow. Writes one
 * whole line for @a and flushes it at once, holding the stream's lock for
 * the line, so several journals writing to one stream (the harness's
 * --jobs) interleave only by whole lines. A JSONL line without a scenario
 * is the journal's line byte for byte (its "prev" hashes still chain);
 * with one, removing the leading `"scenario":ID,` gives it back. A write
 * error is logged (FA_LOG error, tag "follow"); the journal keeps the
 * entry regardless.
 */
void fa_follow_sink(void *ctx, const struct fa_attempt *a, const char *line,
		    size_t len);

#endif
