/* restart.h -- a scenario's kill events: the client killed and reaped, held answers let go, the client started again. */
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
 * of its deadline); exec mode runs the killed tasks' commands again (a
 * task keeps its first start time). The event is recorded as a new entry
 * of @s->out->restarts. A stdio client already gone is left alone; one
 * that cannot start again sets @s->restart_failed.
 */
void hx_restart_fire(struct scen *s, size_t e);

#endif
