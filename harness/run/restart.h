/* restart.h -- a scenario's events that stop the client's work: kill (and restart), cancel. */
#ifndef HX_RESTART_H
#define HX_RESTART_H

#include <stddef.h>

#include "scenario_state.h"

/* Longest wait, after a kill, for the answers let go to reach the
 * journal before the client starts again, µs. */
#define HX_RESTART_RELEASE_WAIT_US 2000000

/*
 * Fire event @e's "kill" ($.harness.events[e]; docs/scenario-format.md)
 * on the running scenario @s: SIGKILL the client (stdio mode: its
 * session, then act on what it printed before it died; exec mode: the
 * client of the event's "after" task, with an at_ms trigger every running
 * task's) and reap it; only then let every held answer go ahead
 * (fa_server_release: the connection breaks after the client is dead, so
 * nothing races it), and wait up to HX_RESTART_RELEASE_WAIT_US until they
 * reach the journal. Then, with "restart", start the client again, same
 * CLIENT_STATE_DIR and environment: stdio mode sends again the task line
 * of every task still running (same id and body, due within what is left
 * of its deadline, and its cancel line again when it was cancelled);
 * exec mode runs the killed tasks' commands again, the cancelled ones
 * aside (a task keeps its first start time). The event is recorded as a new entry
 * of @s->out->restarts. A stdio client already gone is left alone; one
 * that cannot start again sets @s->restart_failed.
 */
void hx_restart_fire(struct hx__scenario *s, size_t e);

/*
 * Fire event @e's "cancel" list on the running scenario @s
 * (docs/scenario-format.md): each task still running (sent, no result,
 * its process not ended) is cancelled: stdio mode writes {"type":
 * "cancel", "id": ID} to the client; exec mode sends SIGTERM to the
 * task's process group (SIGKILL HX_EXEC_KILL_GRACE_US later if it is
 * still there; not counted as a timeout). Its run's t_cancel_us is then
 * the provider's now. A task not sent yet, or already finished, is left
 * alone: a no-op, t_cancel_us stays -1.
 */
void hx_restart_cancel(struct hx__scenario *s, size_t e);

/*
 * Bring the quiet window of every cancelled task of @s up to date
 * (hx_cancel_quiet_until over the journal entries read so far and, stdio
 * mode, the current session's messages; margin: cancel.quiet's margin_ms): its
 * run's t_quiet_until_us only ever grows, as late journal entries or
 * lines show a longer pending wait. Call it every tick; the scenario does
 * not end while hx_event_quiet_open() says a window is open (its timeout
 * aside).
 */
void hx_restart_quiet(struct hx__scenario *s);

#endif
