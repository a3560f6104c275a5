/* event.c -- a scenario's harness events: what triggers each, when it fires, whether any still can.
 */
#include "event.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

size_t hx_event_task_index(const struct fa_scenario *sc, const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < sc->harness.n_tasks; i++)
		if (strcmp(sc->harness.tasks[i].id, id) == 0)
			return i;
	return sc->harness.n_tasks;
}

void hx_event_init(struct hx_event_set *ev, const struct fa_scenario *sc, bool stdio,
                   int64_t start_us)
{
	ev->sc = sc;
	ev->stdio = stdio;
	ev->start_us = start_us;
	ev->st = fa_xcalloc(sc->harness.n_events + 1, sizeof(*ev->st));
}

void hx_event_release(struct hx_event_set *ev)
{
	if (ev == NULL)
		return;
	free(ev->st);
	ev->st = NULL;
}

void hx_event_on_attempt(struct hx_event_set *ev, const struct fa_attempt *a)
{
	const struct fa_harness_spec *h = &ev->sc->harness;
	int64_t t = a->t_response_us;

	if (t < 0)
		t = a->t_done_us >= 0 ? a->t_done_us : a->t_arrival_us;
	for (size_t e = 0; e < h->n_events; e++) {
		const struct fa_event_spec *spec = &h->events[e];
		int64_t plus_ms = spec->plus_ms;

		if (spec->at_ms >= 0 || spec->after_held || ev->st[e].triggered ||
		    a->task == NULL || strcmp(a->task, spec->after_task) != 0 ||
		    a->status != spec->after_status)
			continue;
		/* stdio mode hears it from the client */
		if (spec->on == FA_ON_CLIENT_SAW && ev->stdio)
			continue;
		/* exec mode cannot see what the client saw: assume it saw the
		 * answer a little after the provider sent it */
		if (spec->on == FA_ON_CLIENT_SAW && plus_ms < HX_EVENT_CLIENT_SAW_MIN_MS)
			plus_ms = HX_EVENT_CLIENT_SAW_MIN_MS;
		ev->st[e].triggered = true;
		ev->st[e].fire_at_us = t + plus_ms * 1000;
	}
}

void hx_event_on_client_saw(struct hx_event_set *ev, const char *id, int status, int64_t t_us)
{
	const struct fa_harness_spec *h = &ev->sc->harness;

	for (size_t e = 0; e < h->n_events; e++) {
		const struct fa_event_spec *spec = &h->events[e];

		if (spec->at_ms >= 0 || spec->after_held || spec->on != FA_ON_CLIENT_SAW ||
		    ev->st[e].triggered || strcmp(spec->after_task, id) != 0 ||
		    spec->after_status != status)
			continue;
		ev->st[e].triggered = true;
		ev->st[e].fire_at_us = t_us + (int64_t)spec->plus_ms * 1000;
	}
}

const char *hx_event_held_task(const struct hx_event_set *ev, size_t e)
{
	const struct fa_event_spec *spec;

	if (e >= ev->sc->harness.n_events)
		return NULL;
	spec = &ev->sc->harness.events[e];
	if (spec->at_ms >= 0 || !spec->after_held || ev->st[e].triggered || ev->st[e].fired)
		return NULL;
	return spec->after_task;
}

void hx_event_on_held(struct hx_event_set *ev, const char *id, int64_t t_us)
{
	const struct fa_harness_spec *h = &ev->sc->harness;

	for (size_t e = 0; e < h->n_events; e++) {
		const struct fa_event_spec *spec = &h->events[e];

		if (hx_event_held_task(ev, e) == NULL || strcmp(spec->after_task, id) != 0)
			continue;
		ev->st[e].triggered = true;
		ev->st[e].fire_at_us = t_us + (int64_t)spec->plus_ms * 1000;
	}
}

size_t hx_event_next_due(struct hx_event_set *ev, int64_t now_us)
{
	const struct fa_harness_spec *h = &ev->sc->harness;

	for (size_t e = 0; e < h->n_events; e++) {
		const struct fa_event_spec *spec = &h->events[e];

		if (ev->st[e].fired)
			continue;
		if ((spec->at_ms >= 0 && now_us >= ev->start_us + spec->at_ms * 1000) ||
		    (spec->at_ms < 0 && ev->st[e].triggered && now_us >= ev->st[e].fire_at_us)) {
			ev->st[e].fired = true;
			return e;
		}
	}
	return h->n_events;
}

/* Some event other than @e, live in @live, sends task @id. */
static bool sent_by_other(const struct fa_harness_spec *h, const bool *live, size_t e,
                          const char *id)
{
	for (size_t f = 0; f < h->n_events; f++) {
		if (!live[f] || f == e)
			continue;
		for (size_t k = 0; k < h->events[f].n_send; k++)
			if (strcmp(h->events[f].send[k], id) == 0)
				return true;
	}
	return false;
}

bool hx_event_live(const struct hx_event_set *ev, const enum hx_task_phase *phase)
{
	const struct fa_harness_spec *h = &ev->sc->harness;
	bool *live = fa_xcalloc(h->n_events + 1, sizeof(*live));
	bool any = false, changed = true;

	for (size_t e = 0; e < h->n_events; e++)
		live[e] = !ev->st[e].fired;
	/* dropping one event can strand the tasks only it would send:
	 * iterate to a fixpoint */
	while (changed) {
		changed = false;
		for (size_t e = 0; e < h->n_events; e++) {
			const struct fa_event_spec *spec = &h->events[e];
			size_t i;
			bool may_run;

			if (!live[e] || spec->at_ms >= 0 || ev->st[e].triggered)
				continue;
			i = hx_event_task_index(ev->sc, spec->after_task);
			if (i >= h->n_tasks)
				may_run = false;
			else if (phase[i] != HX_TASK_UNSENT)
				may_run = phase[i] == HX_TASK_RUNNING;
			else
				may_run = sent_by_other(h, live, e, spec->after_task);
			if (!may_run) {
				live[e] = false;
				changed = true;
			}
		}
	}
	for (size_t e = 0; e < h->n_events; e++)
		any = any || live[e];
	free(live);
	return any;
}

int64_t hx_event_next_at(const struct hx_event_set *ev, const struct hx_task_run *tasks, size_t n,
                         int64_t now_us)
{
	const struct fa_harness_spec *h = &ev->sc->harness;
	int64_t next = INT64_MAX, at;

	for (size_t e = 0; e < h->n_events; e++) {
		const struct fa_event_spec *spec = &h->events[e];

		if (ev->st[e].fired || (spec->at_ms < 0 && !ev->st[e].triggered))
			continue;
		at = spec->at_ms >= 0 ? ev->start_us + spec->at_ms * 1000 : ev->st[e].fire_at_us;
		if (at < next)
			next = at;
	}
	for (size_t i = 0; i < n; i++) {
		at = tasks[i].t_quiet_until_us;
		if (tasks[i].t_cancel_us >= 0 && at > now_us && at < next)
			next = at;
	}
	return next;
}

bool hx_event_quiet_open(const struct hx_task_run *tasks, size_t n, int64_t now_us)
{
	for (size_t i = 0; i < n; i++)
		if (tasks[i].t_cancel_us >= 0 &&
		    (tasks[i].t_quiet_until_us < 0 || now_us < tasks[i].t_quiet_until_us))
			return true;
	return false;
}
