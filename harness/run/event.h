/* event.h -- a scenario's harness events: what triggers each, when it fires, whether any still can.
 */
#ifndef HX_EVENT_H
#define HX_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal.h"
#include "result.h"
#include "scenario.h"

/* Least delay of an `after` event with on: client_saw in exec mode, where
 * the harness cannot see what the client saw (DESIGN.md), ms. */
#define HX_EVENT_CLIENT_SAW_MIN_MS 200

/* Where a task stands, as the events see it. */
enum hx_task_phase {
	HX_TASK_UNSENT = 0, /* no event sent it yet */
	HX_TASK_RUNNING,    /* sent, its client has not finished it */
	HX_TASK_DONE,       /* finished: exited, reported, timed out or never started */
};

/* One event while the scenario runs. */
struct hx_event_state {
	bool fired;         /* its tasks were sent */
	bool triggered;     /* "after": its trigger was seen */
	int64_t fire_at_us; /* provider µs it fires at, once triggered */
};

/* The events of one scenario run. */
struct hx_event_set {
	const struct fa_scenario *sc; /* borrowed */
	bool stdio;                   /* client_saw triggers come from the client's
	                                 action_result (stdio mode), not the journal */
	int64_t start_us;             /* provider µs that at_ms counts from */
	struct hx_event_state *st;    /* owned, one per sc->harness.events */
};

/* The index of task @id in @sc->harness.tasks, or n_tasks when none. */
size_t hx_event_task_index(const struct fa_scenario *sc, const char *id);

/* Events of @sc (borrowed; it outlives @ev), none fired, at_ms counted
 * from @start_us (provider µs). Release with hx_event_release. */
void hx_event_init(struct hx_event_set *ev, const struct fa_scenario *sc, bool stdio,
                   int64_t start_us);

/* Release what @ev owns. NULL accepted. */
void hx_event_release(struct hx_event_set *ev);

/*
 * A journal entry arrived: each `after` event it matches (task and
 * status) is triggered, to fire plus_ms after the answer went out (its
 * t_response_us, else t_done_us, else t_arrival_us). on: client_saw
 * events are left to hx_event_on_client_saw() in stdio mode; in exec mode
 * they fire at least HX_EVENT_CLIENT_SAW_MIN_MS after the answer. Held
 * triggers are never matched here (hx_event_on_held).
 */
void hx_event_on_attempt(struct hx_event_set *ev, const struct fa_attempt *a);

/* Stdio mode: the client reported (action_result) @status for task @id,
 * read at @t_us (provider µs): its on: client_saw events are triggered, to
 * fire plus_ms later. */
void hx_event_on_client_saw(struct hx_event_set *ev, const char *id, int status, int64_t t_us);

/*
 * The task whose held answer event @e waits for ("after": {"task", "held":
 * true}), when that event is still waiting (neither triggered nor fired);
 * NULL otherwise. The run asks the server (fa_server_held) about it.
 */
const char *hx_event_held_task(const struct hx_event_set *ev, size_t e);

/* The provider holds an answer to task @id, seen at @t_us (provider µs):
 * its "held" events are triggered, to fire plus_ms later. */
void hx_event_on_held(struct hx_event_set *ev, const char *id, int64_t t_us);

/* The first event not yet fired that is due at @now_us (an at_ms event
 * past its time, a triggered one past fire_at_us): marked fired, its index
 * returned; the count of events when none is. */
size_t hx_event_next_due(struct hx_event_set *ev, int64_t now_us);

/*
 * The earliest instant (provider µs) an event not yet fired is due at,
 * of those whose instant is known (an at_ms event, a triggered one), and
 * of the quiet windows of @tasks (@n of them) still open at @now_us; the
 * scenario loop sleeps no longer than that. INT64_MAX when there is none.
 */
int64_t hx_event_next_at(const struct hx_event_set *ev, const struct hx_task_run *tasks, size_t n,
                         int64_t now_us);

/*
 * Whether some event can still fire, given each task's phase (@phase: one
 * per task). An unfired event is live unless it is an `after` event not
 * yet triggered whose task can no longer run: it is done, or it was never
 * sent and no live event sends it.
 */
bool hx_event_live(const struct hx_event_set *ev, const enum hx_task_phase *phase);

/*
 * Whether the scenario must stay open at @now_us (provider µs) for a
 * cancelled task's quiet window (cancel.h): some task of @tasks (@n of
 * them) was cancelled (t_cancel_us >= 0) and its window has not ended
 * (t_quiet_until_us not yet known, -1, or later than @now_us). A cancel
 * that found its task unsent or finished left t_cancel_us at -1 and
 * keeps nothing open.
 */
bool hx_event_quiet_open(const struct hx_task_run *tasks, size_t n, int64_t now_us);

#endif
