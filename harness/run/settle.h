/* settle.h -- when a scenario's run may end: nothing more on its way to the provider's journal. */
#ifndef HX_SETTLE_H
#define HX_SETTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "server.h"

/*
 * How far apart the two looks that find the provider idle must be, with
 * no connection accepted and no request read between them, µs: a
 * connection the server has just taken from its listen queue shows
 * neither in the queue nor in its counts for the few µs before it is
 * counted (fa_server_load).
 */
#define HX_SETTLE_CONFIRM_US 2000

/* Time between two looks while a run settles, ms. */
#define HX_SETTLE_LOOK_MS 2

/* What must be over before the run may end. */
enum hx_settle_what {
	/* no request queued or in flight: the client still runs, and may
	 * keep idle connections open */
	HX_SETTLE_REQUESTS,
	/* no connection queued or open, no request in flight: the client is
	 * gone, so whatever is still open may yet carry an attempt */
	HX_SETTLE_CONNECTIONS,
};

/* One wait for the provider to settle. Embedded: hx_settle_init() it. */
struct hx_settle {
	enum hx_settle_what what;
	int64_t parked_us;  /* the wait's bound while what is left is parked
	                       (a hold, a delay, a paced stream: it waits on the
	                       provider's timer, and the server's stop journals
	                       it), µs */
	int64_t open_us;    /* the bound while anything else is left, µs */
	int64_t since_us;   /* the first look, real µs; -1 before it */
	int64_t idle_at_us; /* the look that found the provider idle, with none
	                       busy since; -1 = not idle at the last look */
	uint64_t opened;    /* connections the server had accepted at that look */
	uint64_t started;   /* requests it had read */
	bool bounded;       /* the wait ended at a bound, something still left */
};

/* @st begins a wait for @what, bounded by @parked_us (µs after its first
 * look) while only parked answers are left, else by @open_us. */
void hx_settle_init(struct hx_settle *st, enum hx_settle_what what, int64_t parked_us,
                    int64_t open_us);

/* Nothing of @what is left in @l. */
bool hx_settle_idle(enum hx_settle_what what, const struct fa_server_load *l);

/* What is left in @l (something is) waits on the provider's timer alone:
 * every request in flight and, for HX_SETTLE_CONNECTIONS, every open
 * connection is parked. */
bool hx_settle_parked(enum hx_settle_what what, const struct fa_server_load *l);

/*
 * One look, @l, at @now_us (fa_clock_real_mono_us()), HX_SETTLE_LOOK_MS
 * after the last. True once the wait is over: the provider was idle on
 * this look and on an earlier one at least HX_SETTLE_CONFIRM_US before
 * it, idle on every look between, with no connection accepted and no
 * request read in between (so the journal now holds every attempt that
 * reached the provider); or a bound has passed since the first look
 * (->bounded then says so): the parked one when this look finds only
 * parked answers left, the open one otherwise.
 */
bool hx_settle_step(struct hx_settle *st, const struct fa_server_load *l, int64_t now_us);

#endif
