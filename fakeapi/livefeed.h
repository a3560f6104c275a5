/* livefeed.h -- live lines on a stream that no reader, however slow, can stall. */
#ifndef FA_LIVEFEED_H
#define FA_LIVEFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The queue's default bounds: whichever is reached first. */
#define FA_LIVEFEED_LINES 100000
#define FA_LIVEFEED_BYTES (8u << 20)

/* How long fa_livefeed_close() lets the writer drain by default, ms. */
#define FA_LIVEFEED_DRAIN_MS 2000

/*
 * Test knob, not an option: FAKEAPI_LIVE_QUEUE_LINES=N in the environment
 * (1..100000) makes the default line bound N, so a test fills the queue
 * with a few requests.
 */
#define FA_LIVEFEED_ENV_LINES "FAKEAPI_LIVE_QUEUE_LINES"

struct fa_livefeed;

/*
 * A feed writing to file descriptor @fd (borrowed, never closed; stdout's
 * in the programs) from a thread of its own, so that fa_livefeed_put()
 * never waits for the reader. The queue holds at most @max_lines lines
 * and @max_bytes bytes (0 = FA_LIVEFEED_LINES, or FA_LIVEFEED_ENV_LINES,
 * and FA_LIVEFEED_BYTES). @prog names the program in the messages on
 * stderr and @complete says there what still holds every line (e.g.
 * "the journal file is complete"); both borrowed, they must outlive the
 * feed. The writer blocks every signal: a reader gone is EPIPE, never
 * SIGPIPE. Aborts on out of memory (alloc.h) or when no thread starts.
 */
struct fa_livefeed *fa_livefeed_new(int fd, size_t max_lines, size_t max_bytes, const char *prog,
                                    const char *complete);

/*
 * Queue the @len bytes at @line and a newline; never blocks on the
 * reader (only on the queue's lock, held for a copy). Lines go out whole
 * and in the order of the calls, whatever thread makes them. A line that
 * does not fit in the queue is dropped and counted; the first drop prints
 * once on stderr "PROG: live journal: the reader of stdout is too slow;
 * N lines not shown; COMPLETE". After a write error (logged once, tag
 * "livefeed": EPIPE when the reader left, EBADF, ...) lines are counted
 * as not shown and no more writes are tried. Thread-safe; a no-op after
 * fa_livefeed_close().
 */
void fa_livefeed_put(struct fa_livefeed *f, const char *line, size_t len);

/* Lines not shown so far: dropped on a full queue, lost to a write error
 * or, after fa_livefeed_close(), left in the queue. Thread-safe. */
uint64_t fa_livefeed_not_shown(struct fa_livefeed *f);

/*
 * Let the writer write what is queued for at most @drain_ms, so this
 * returns within about @drain_ms whatever the reader does: a writer still
 * waiting on the reader then is left behind, detached, to end when its
 * write returns (or with the process), and the lines it had not written
 * count as not shown. When lines were not shown, says on stderr "PROG:
 * live journal: N lines not shown (the reader of stdout was too slow or
 * gone); COMPLETE". Returns that N. Later calls return it again at once.
 * NULL gives 0.
 */
uint64_t fa_livefeed_close(struct fa_livefeed *f, unsigned drain_ms);

/* fa_livefeed_close(@f, FA_LIVEFEED_DRAIN_MS) unless done, then free
 * everything (a writer left behind frees the rest when it ends). NULL is
 * accepted. */
void fa_livefeed_free(struct fa_livefeed *f);

/*
 * Open /dev/null onto whichever of fds 0, 1 and 2 is closed (read-only
 * for 0, write-only for 1 and 2), so that no file opened later (the
 * journal) lands on one of them and gets what is printed there. Call
 * first thing in main(). False when /dev/null cannot be opened there.
 */
bool fa_livefeed_std_fds_open(void);

#endif
