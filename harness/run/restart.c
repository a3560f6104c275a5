/* restart.c -- a scenario's events that stop the client's work: kill (and restart), cancel. */
#include "restart.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cancel.h"
#include "clock.h"
#include "expect.h"
#include "timescale.h"

/* A new entry of the scenario's restarts; its index. */
static size_t add_restart(struct hx__scenario *s)
{
	struct hx_scenario_result *out = s->out;

	out->restarts = fa_xrealloc(out->restarts, (out->n_restarts + 1) * sizeof(*out->restarts));
	memset(&out->restarts[out->n_restarts], 0, sizeof(*out->restarts));
	out->restarts[out->n_restarts].t_restart_us = -1;
	return out->n_restarts++;
}

static void restart_add_task(struct hx_restart *rs, const char *id)
{
	rs->tasks = fa_xrealloc(rs->tasks, (rs->n_tasks + 1) * sizeof(*rs->tasks));
	rs->tasks[rs->n_tasks++] = fa_xstrdup(id);
}

/* Stdio mode: SIGKILL the client's process group, reap it, and act on
 * what it printed before it died. */
static void kill_stdio(struct hx__scenario *s)
{
	hx_stdio_kill(s->client);
	while (!hx_stdio_finished(s->client))
		hx_stdio_pump(s->client, HX_SCENARIO_TICK_NS / 1000000);
	hx__scenario_read_msgs(s);
}

/* Exec mode: SIGKILL the client of event @ev's "after" task (with an
 * at_ms trigger: of every running task) and reap it; the tasks killed go
 * into @rs. */
static void kill_exec(struct hx__scenario *s, const struct fa_event_spec *ev, struct hx_restart *rs)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		struct hx__task_state *ts = &s->ts[i];

		if (s->phase[i] != HX_TASK_RUNNING || !ts->proc.running ||
		    (ev->after_task != NULL &&
		     strcmp(ev->after_task, s->sc->harness.tasks[i].id) != 0))
			continue;
		hx_exec_kill(&ts->proc);
		hx_exec_wait(&ts->proc);
		ts->killed = true;
		restart_add_task(rs, s->sc->harness.tasks[i].id);
	}
}

/* Stdio mode: tell the client to cancel task @id. */
static void cancel_stdio(struct hx__scenario *s, const char *id)
{
	cJSON *msg = fa_xcheck(cJSON_CreateObject(), "cancel line");

	fa_xcheck(cJSON_AddStringToObject(msg, "type", "cancel"), "cancel line");
	fa_xcheck(cJSON_AddStringToObject(msg, "id", id), "cancel line");
	hx_stdio_send(s->client, msg);
	cJSON_Delete(msg);
}

/* Stdio mode: start the client again, same CLIENT_STATE_DIR and
 * environment, and send it again the task line of every task still
 * running (sent, no result, not past its deadline): same id and body,
 * due within what is left of its deadline; one cancelled before the kill
 * gets its cancel line again. */
static void restart_stdio(struct hx__scenario *s, struct hx_restart *rs)
{
	int64_t now;

	hx__scenario_take_session(s);
	hx_stdio_free(s->client);
	s->client = NULL;
	s->msgs_seen = 0;
	s->session++;
	if (hx__scenario_start_client(s, true) != FA_OK) {
		s->restart_failed = true;
		return;
	}
	now = fa_provider_now_us(s->prov);
	rs->t_restart_us = now;
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		/* what is left of the timeout it was told, without the scale's margin */
		int64_t left_ms = (s->ts[i].deadline_us - now -
		                   hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_EXIT_US)) /
		                  1000;

		if (s->phase[i] != HX_TASK_RUNNING || s->ts[i].has_result)
			continue;
		hx__scenario_send_task_line(s, i, left_ms > 0 ? left_ms : 1);
		if (s->out->tasks[i].t_cancel_us >= 0)
			cancel_stdio(s, s->sc->harness.tasks[i].id);
		restart_add_task(rs, s->sc->harness.tasks[i].id);
	}
}

/* Exec mode: run the killed tasks' commands again (same CLIENT_STATE_DIR,
 * body file and environment), those cancelled aside; a task keeps its
 * first start time. */
static void restart_exec(struct hx__scenario *s, struct hx_restart *rs)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		int64_t first = s->out->tasks[i].t_sent_us;

		if (!s->ts[i].killed || s->phase[i] != HX_TASK_RUNNING ||
		    s->out->tasks[i].t_cancel_us >= 0)
			continue; /* a cancelled task stays stopped */
		s->ts[i].killed = false;
		hx__scenario_start_exec_task(s, i);
		s->out->tasks[i].t_sent_us = first;
	}
	rs->t_restart_us = fa_provider_now_us(s->prov);
}

void hx_restart_fire(struct hx__scenario *s, size_t e)
{
	const struct fa_event_spec *ev = &s->sc->harness.events[e];
	struct hx_restart *rs;
	int64_t until;
	size_t target, k;

	if (s->stdio && (s->client == NULL || !hx_stdio_running(s->client)))
		return; /* nothing left to kill */
	k = add_restart(s);
	rs = &s->out->restarts[k]; /* add_restart() moved the array */
	if (s->stdio)
		kill_stdio(s);
	else
		kill_exec(s, ev, rs);
	rs->t_kill_us = fa_provider_now_us(s->prov);
	target = fa_journal_count(s->journal);
	rs->released = fa_server_release(s->srv, NULL);
	target += rs->released;
	until = fa_clock_real_mono_us() + HX_RESTART_RELEASE_WAIT_US;
	while (fa_journal_count(s->journal) < target && fa_clock_real_mono_us() < until)
		hx__scenario_sleep_ms(1);
	if (!ev->restart) {
		s->killed = s->stdio;
		return;
	}
	if (s->stdio)
		restart_stdio(s, rs);
	else
		restart_exec(s, rs);
}

void hx_restart_cancel(struct hx__scenario *s, size_t e)
{
	const struct fa_event_spec *ev = &s->sc->harness.events[e];

	for (size_t k = 0; k < ev->n_cancel; k++) {
		size_t i = hx_event_task_index(s->sc, ev->cancel[k]);
		struct hx__task_state *ts;

		if (i >= s->sc->harness.n_tasks || s->phase[i] != HX_TASK_RUNNING)
			continue; /* not sent yet, or finished: nothing to cancel */
		ts = &s->ts[i];
		if (s->stdio) {
			if (s->client == NULL || !hx_stdio_running(s->client) || ts->has_result)
				continue;
			cancel_stdio(s, ev->cancel[k]);
		} else {
			if (!ts->proc.running || ts->proc.t_term_us > 0)
				continue;
			hx_exec_terminate(&ts->proc, fa_clock_mono_us());
		}
		s->out->tasks[i].t_cancel_us = fa_provider_now_us(s->prov);
	}
}

void hx_restart_quiet(struct hx__scenario *s)
{
	const struct hx_client_msg *msgs = NULL;
	size_t n_msgs = 0;
	int margin_ms = -1;

	if (s->stdio && s->client != NULL) {
		msgs = hx_stdio_log(s->client)->msgs;
		n_msgs = hx_stdio_log(s->client)->n_msgs;
	}
	for (size_t i = 0; i < s->out->n_tasks; i++) {
		struct hx_task_run *tr = &s->out->tasks[i];
		int64_t until;

		if (tr->t_cancel_us < 0)
			continue;
		if (margin_ms < 0)
			margin_ms = (int)hx_expect_int(s->sc, "cancel.quiet", "margin_ms");
		until = hx_cancel_quiet_until(s->seen, s->n_seen, msgs, n_msgs, tr->spec->id,
		                              tr->t_cancel_us, margin_ms);
		if (until > tr->t_quiet_until_us)
			tr->t_quiet_until_us = until;
	}
}
