/* timer.h -- the answers that wait, ordered by when each is due. */
#ifndef FA_TIMER_H
#define FA_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A binary min-heap of waiting entries keyed by due time (µs on the
 * provider's clock), earliest first; entries due at the same instant come
 * out in the order they were added. Adding, removing any entry and moving
 * one to another due time cost O(log n); reading the earliest costs O(1).
 * The server keeps its suspended connections here (docs/internals.md,
 * "Delays, holds and paced streams"). Not thread-safe: the server holds
 * its lock.
 */
struct fa_timer;

/* One waiting entry, embedded in what waits (the caller's memory; the
 * heap points at it while it is queued and never frees it). Zeroed, or
 * after fa_timer_remove(), it is not queued. */
struct fa_timer_entry {
	int64_t due_us; /* when it is due; set by fa_timer_add and fa_timer_move */
	size_t slot;    /* 1 + its index in the heap; 0 = not queued */
};

struct fa_timer *fa_timer_new(void);

/* NULL accepted. Entries still queued are left as they are (not zeroed). */
void fa_timer_free(struct fa_timer *t);

/* Queue @e (not queued yet; borrowed until it is removed) due at @due_us. */
void fa_timer_add(struct fa_timer *t, struct fa_timer_entry *e, int64_t due_us);

/* Take @e out of the heap wherever it sits; nothing when it is not queued. */
void fa_timer_remove(struct fa_timer *t, struct fa_timer_entry *e);

/* Give the queued @e the new due time @due_us (earlier or later); it
 * goes after the entries already due at @due_us. */
void fa_timer_move(struct fa_timer *t, struct fa_timer_entry *e, int64_t due_us);

/* The earliest entry, still queued; NULL when the heap is empty. */
struct fa_timer_entry *fa_timer_first(const struct fa_timer *t);

/* The earliest entry if it is due at @now_us (due_us <= @now_us), taken
 * out of the heap; NULL when none is due. */
struct fa_timer_entry *fa_timer_pop_due(struct fa_timer *t, int64_t now_us);

/* How many entries are queued. */
size_t fa_timer_count(const struct fa_timer *t);

/* Whether @e is queued (in some heap). */
bool fa_timer_queued(const struct fa_timer_entry *e);

#endif
