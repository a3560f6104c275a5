/* journal.h -- every inbound attempt, appended once, hash-chained. */
#ifndef FA_JOURNAL_H
#define FA_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attempt.h"
#include "rc.h"

struct fa_journal;

/*
 * A new, empty journal. @path is a file created or truncated (FA_EIO
 * "PATH: cannot open: strerror"), "-" included: stdout is never the
 * journal's file, since a reader there could stall every append; a live
 * view of the journal is a sink writing to a feed (follow.h, livefeed.h).
 * Every appended line is written at once (one write(2), no buffering).
 *
 * Memory: the journal keeps 8 bytes per entry (its offset; 16 at most
 * while the index grows); the lines are read back from the file when a
 * view or a snapshot asks. With @path NULL, or when @path is not a
 * regular file (a FIFO, /dev/null), the lines go to an unnamed spill file
 * in $TMPDIR (default /tmp) that vanishes with the process; a line that
 * cannot be stored there (no spill file, disk full) is kept in memory, so
 * no entry is ever lost to readers (docs/internals.md, "The journal").
 */
enum fa_rc fa_journal_new(const char *path, struct fa_journal **out, struct fa_err *err);

/* Flush and close the file, free everything. NULL is accepted. */
void fa_journal_free(struct fa_journal *j);

/*
 * A sink sees every entry as it is appended (fa_journal_set_sink): @a is
 * the entry as kept, seq set, and @line its JSONL line as written to the
 * file, "prev" included, without the newline (both borrowed for the call).
 * It runs with the journal's lock held, after the file's line is written,
 * so entries reach it one at a time in seq order whatever thread finished
 * them; it must not call back into the journal, and must not wait on
 * anything outside the process (a reader of stdout, say): every attempt
 * being appended waits for it.
 */
typedef void (*fa_journal_sink_fn)(void *ctx, const struct fa_attempt *a, const char *line,
                                   size_t len);

/*
 * Give every entry appended from now on to @fn with @ctx as well (NULL =
 * no sink; one sink at a time, the last call wins). @ctx is borrowed and
 * must outlive the journal or the next call. The file, the chain and the
 * entries kept are the same with or without a sink. Thread-safe. Used by
 * --follow and the harness's --journal - (follow.h).
 */
void fa_journal_set_sink(struct fa_journal *j, fa_journal_sink_fn fn, void *ctx);

/*
 * Append an attempt: takes *@a's contents (the entry is moved, *@a is
 * zeroed), assigns the next seq and returns it. The line written is the
 * compact JSON of fa_attempt_to_json() with one more member, "prev": the
 * hex SHA-256 of the previous line's bytes (without its newline), or 64
 * zeros for the first line. Thread-safe. Never drops an entry: a write
 * error is logged and the entry is still kept in memory.
 */
uint64_t fa_journal_append(struct fa_journal *j, struct fa_attempt *a);

/* Number of entries kept (all appended since the last reset). Thread-safe. */
size_t fa_journal_count(struct fa_journal *j);

/* Bytes of every line appended so far, newlines included (what the file
 * holds when every write succeeded); not lowered by a reset. Thread-safe. */
uint64_t fa_journal_bytes(struct fa_journal *j);

/*
 * Has a write to the journal's file failed (disk full, I/O error)? From
 * the first failure on nothing more is written there: the file is cut
 * back to its last whole line, so it stays a prefix that verifies, and
 * the lines go on in a spill file for the views. *@missing (may be NULL)
 * gets the entries appended that the file lacks, *@in_file those it
 * holds (= the seq it ends at), *@err the errno of the failure. False,
 * and 0s, while every write succeeded or without a file. Thread-safe.
 */
bool fa_journal_file_failed(struct fa_journal *j, uint64_t *missing, uint64_t *in_file, int *err);

/* Hex SHA-256 of the last line appended (64 zeros when empty) into @out. */
void fa_journal_head(struct fa_journal *j, char out[65]);

/*
 * Entries with seq > @since as {"head": "...", "count": N,
 * "last_seq": S, "entries": [lines as objects, "prev" included]}, a string
 * the caller frees. N counts the entries returned; S is the highest seq
 * ever assigned (0 before the first; not lowered by a reset), so a poller
 * passes it back as @since. Thread-safe.
 */
char *fa_journal_json(struct fa_journal *j, uint64_t since);

/*
 * The same document as fa_journal_json(), streamed: a view fixes the
 * entries with seq > @since kept when it opens (later appends and resets
 * do not change it) and reads their lines back from the file in pieces,
 * so a reader costs a few hundred bytes whatever the journal's size.
 * The view borrows @j, which must outlive it. Caller closes it with
 * fa_journal_view_close(). Thread-safe (one reader per view).
 */
struct fa_journal_view;
struct fa_journal_view *fa_journal_view_open(struct fa_journal *j, uint64_t since);

/* Length of the view's whole document, bytes. */
uint64_t fa_journal_view_size(const struct fa_journal_view *w);

/* Up to @max bytes of the document from byte @pos into @buf: the count
 * (0 at the end), or -1 when a stored line could not be read back (the
 * file was cut or removed under the provider; logged). */
ssize_t fa_journal_view_read(struct fa_journal_view *w, uint64_t pos, char *buf, size_t max);

/* Free @w. NULL is accepted. */
void fa_journal_view_close(struct fa_journal_view *w);

/*
 * Copies of the entries with seq > @since, parsed back from their lines: *@out is an array of *@n
 * entries the caller releases with fa_attempt_release() each, then free().
 * Thread-safe.
 */
void fa_journal_snapshot(struct fa_journal *j, uint64_t since, struct fa_attempt **out, size_t *n);

/* Forget the entries kept (admin reset): views, snapshots and the count start after them. seq keeps
 * counting and the file and its chain go on. Thread-safe. */
void fa_journal_reset(struct fa_journal *j);

/*
 * A cut tail: a last line that ends without its newline and is not one
 * JSON object, as a provider killed in the middle of a write leaves it.
 * line 0 = none.
 */
struct fa_journal_tail {
	size_t line;  /* its line number, 1-based */
	size_t bytes; /* the bytes it holds */
};

/*
 * Check a JSONL journal file: every line parses, its "prev" is the SHA-256
 * of the line before (64 zeros on the first), and seq runs 1, 2, 3, ...
 * On success *@n_lines gets the line count and @head_out (65 bytes, may be
 * NULL) the hash of the last line (64 zeros for an empty file; a missing
 * final newline is fine). The first break is FA_ECHAIN with
 * "PATH:LINE: not valid JSON", "PATH:LINE: prev does not match the line
 * before (a line was removed, added or changed)" or "PATH:LINE: seq N does
 * not follow M"; unreadable is FA_EIO "PATH: cannot read: strerror".
 * An edited line shows as a break on the line after it. A file cut after
 * its last line still verifies: only the head tells, which is why the
 * report records journal_head and a checker compares it with @head_out.
 * With @tail not NULL, a cut tail is not a break: the lines before it are
 * verified (and counted in *@n_lines, @head_out their head) and *@tail
 * says where the cut is; with @tail NULL it is "not valid JSON".
 */
enum fa_rc fa_journal_verify(const char *path, size_t *n_lines, char *head_out,
                             struct fa_journal_tail *tail, struct fa_err *err);

/* Read a JSONL journal file into entries (as fa_journal_snapshot hands
 * them out), checking nothing but syntax. Errors name PATH:LINE. A cut
 * tail is handled as by fa_journal_verify(): with @tail, the complete
 * lines are read and *@tail locates the cut. */
enum fa_rc fa_journal_read(const char *path, struct fa_attempt **out, size_t *n,
                           struct fa_journal_tail *tail, struct fa_err *err);

#endif
