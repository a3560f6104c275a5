/* follow.h -- an attempt as one line a person can follow live (--follow, --journal -). */
#ifndef FA_FOLLOW_H
#define FA_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "journal.h"
#include "livefeed.h"

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
 * Strings are written as the journal holds them; control characters and
 * bytes that are not UTF-8 become '?' (utf8.h, fa_utf8_printable), so one
 * attempt is one printable line.
 */
char *fa_follow_line(const struct fa_attempt *a);

/* Where and how a follow sink writes; set by the caller, borrowed. */
struct fa_follow {
	struct fa_livefeed *feed; /* where the lines go (stdout's, in the programs);
	                         borrowed, it must outlive the journal's sink */
	bool text;                /* true: fa_follow_line(); false: the JSONL line */
	const char *scenario;     /* NULL, or a scenario id (borrowed): text lines get
	                             "[ID] " in front, JSONL lines a first member
	                             "scenario": ID before the journal's own */
};

/*
 * A fa_journal_sink_fn (journal.h): @ctx is a struct fa_follow. Queues one
 * whole line for @a on the feed (fa_livefeed_put), so it never waits for
 * the reader, and several journals on one feed (the harness's --jobs)
 * interleave only by whole lines, each journal's in seq order. A JSONL
 * line without a scenario is the journal's line byte for byte (its "prev"
 * hashes still chain); with one, removing the leading `"scenario":ID,`
 * gives it back. A line the feed cannot take (a slow reader, a write
 * error) is counted there; the journal keeps the entry regardless.
 */
void fa_follow_sink(void *ctx, const struct fa_attempt *a, const char *line, size_t len);

#endif
