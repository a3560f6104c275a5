/* test_event.c -- harness events: status and held triggers, kill and cancel events, liveness, quiet
 * windows. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "event.h"

#define MS 1000 /* µs */

/* A scenario with tasks w1 and t2 and the events the test sets. */
struct sc {
	struct fa_scenario s;
	struct fa_task_spec tasks[2];
	struct fa_event_spec events[3];
	char *send_w1[1];
	char *send_t2[1];
};

/* Events: 0 at_ms 0 sends w1; 1 after w1 held (plus 5 ms) kills and
 * restarts; 2 after w1 got status @status sends t2. */
static void sc_init(struct sc *sc, int status)
{
	memset(sc, 0, sizeof(*sc));
	sc->tasks[0].id = "w1";
	sc->tasks[1].id = "t2";
	sc->send_w1[0] = "w1";
	sc->send_t2[0] = "t2";
	sc->events[0] = (struct fa_event_spec){ .at_ms = 0, .send = sc->send_w1, .n_send = 1 };
	sc->events[1] = (struct fa_event_spec){ .at_ms = -1,
		                                .after_task = "w1",
		                                .after_held = true,
		                                .plus_ms = 5,
		                                .kill = true,
		                                .restart = true };
	sc->events[2] = (struct fa_event_spec){ .at_ms = -1,
		                                .after_task = "w1",
		                                .after_status = status,
		                                .send = sc->send_t2,
		                                .n_send = 1 };
	sc->s.harness.tasks = sc->tasks;
	sc->s.harness.n_tasks = 2;
	sc->s.harness.events = sc->events;
	sc->s.harness.n_events = 3;
}

static void event__held_trigger_fires_on_a_held_answer_only(void)
{
	struct sc sc;
	struct hx_event_set ev;
	struct fa_attempt a;

	sc_init(&sc, 201);
	hx_event_init(&ev, &sc.s, true, 0);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 0), 0); /* at_ms 0 */
	CU_ASSERT_PTR_NULL(hx_event_held_task(&ev, 0));
	CU_ASSERT_STRING_EQUAL(hx_event_held_task(&ev, 1), "w1");
	CU_ASSERT_PTR_NULL(hx_event_held_task(&ev, 2));
	CU_ASSERT_PTR_NULL(hx_event_held_task(&ev, 3));
	/* a dropped answer (status 0) is no held trigger, whoever reports it */
	memset(&a, 0, sizeof(a));
	a.task = "w1";
	a.t_arrival_us = 10 * MS;
	a.t_response_us = -1;
	a.t_done_us = 20 * MS;
	hx_event_on_attempt(&ev, &a);
	hx_event_on_client_saw(&ev, "w1", 0, 30 * MS);
	CU_ASSERT_FALSE(ev.st[1].triggered);
	hx_event_on_held(&ev, "t2", 40 * MS);
	CU_ASSERT_FALSE(ev.st[1].triggered);
	hx_event_on_held(&ev, "w1", 40 * MS);
	CU_ASSERT_TRUE(ev.st[1].triggered);
	CU_ASSERT_EQUAL(ev.st[1].fire_at_us, 45 * MS);
	CU_ASSERT_PTR_NULL(hx_event_held_task(&ev, 1)); /* asked once */
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 44 * MS), 3);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 45 * MS), 1);
	/* a second hold does not fire it again */
	hx_event_on_held(&ev, "w1", 50 * MS);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 100 * MS), 3);
	/* the status trigger still works beside it */
	a.status = 201;
	a.t_response_us = 60 * MS;
	hx_event_on_attempt(&ev, &a);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 60 * MS), 2);
	hx_event_release(&ev);
}

static void event__status_zero_trigger_is_not_a_held_one(void)
{
	struct sc sc;
	struct hx_event_set ev;

	/* after_status 0 never comes from the loader with a status trigger,
	 * but a held event's after_status is 0: a client reporting status 0
	 * must not pull it */
	sc_init(&sc, 201);
	sc.events[2].on = FA_ON_CLIENT_SAW;
	hx_event_init(&ev, &sc.s, true, 0);
	hx_event_on_client_saw(&ev, "w1", 0, 10 * MS);
	CU_ASSERT_FALSE(ev.st[1].triggered);
	CU_ASSERT_FALSE(ev.st[2].triggered);
	hx_event_on_client_saw(&ev, "w1", 201, 10 * MS);
	CU_ASSERT_TRUE(ev.st[2].triggered);
	hx_event_release(&ev);
}

static void event__held_event_is_live_while_its_task_runs(void)
{
	struct sc sc;
	struct hx_event_set ev;
	enum hx_task_phase phase[2] = { HX_TASK_UNSENT, HX_TASK_UNSENT };

	sc_init(&sc, 201);
	hx_event_init(&ev, &sc.s, false, 0);
	CU_ASSERT_TRUE(hx_event_live(&ev, phase));
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 0), 0);
	phase[0] = HX_TASK_RUNNING;
	CU_ASSERT_TRUE(hx_event_live(&ev, phase));
	/* w1 ended without a hold or the status: nothing can fire */
	phase[0] = HX_TASK_DONE;
	CU_ASSERT_FALSE(hx_event_live(&ev, phase));
	hx_event_release(&ev);
}

/* A cancel-only event (no send) is live until it fires, like any at_ms
 * event, and dead once the task it waits on can no longer trigger it. */
static void event__cancel_only_event_lives_like_any_other(void)
{
	struct sc sc;
	struct hx_event_set ev;
	enum hx_task_phase phase[2] = { HX_TASK_RUNNING, HX_TASK_UNSENT };
	char *cancel_w1[1] = { "w1" };

	sc_init(&sc, 503);
	sc.events[1] = (struct fa_event_spec){ .at_ms = -1,
		                               .after_task = "w1",
		                               .after_status = 503,
		                               .plus_ms = 300,
		                               .cancel = cancel_w1,
		                               .n_cancel = 1 };
	sc.s.harness.n_events = 2;
	hx_event_init(&ev, &sc.s, false, 0);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 0), 0);
	CU_ASSERT_TRUE(hx_event_live(&ev, phase));
	phase[0] = HX_TASK_DONE;
	CU_ASSERT_FALSE(hx_event_live(&ev, phase));
	hx_event_release(&ev);
}

static void event__quiet_window_keeps_the_scenario_open_until_it_ends(void)
{
	struct hx_task_run t[3];

	for (size_t i = 0; i < 3; i++)
		t[i] = (struct hx_task_run){ .t_cancel_us = -1, .t_quiet_until_us = -1 };
	CU_ASSERT_FALSE(hx_event_quiet_open(t, 3, 0));
	/* cancelled, window not computed yet: open */
	t[1].t_cancel_us = 100 * MS;
	CU_ASSERT_TRUE(hx_event_quiet_open(t, 3, 100 * MS));
	t[1].t_quiet_until_us = 1100 * MS;
	CU_ASSERT_TRUE(hx_event_quiet_open(t, 3, 1099 * MS));
	CU_ASSERT_FALSE(hx_event_quiet_open(t, 3, 1100 * MS));
	/* the latest window counts */
	t[2].t_cancel_us = 200 * MS;
	t[2].t_quiet_until_us = 5000 * MS;
	CU_ASSERT_TRUE(hx_event_quiet_open(t, 3, 2000 * MS));
	CU_ASSERT_FALSE(hx_event_quiet_open(t, 3, 5000 * MS));
	/* a no-op cancel (unsent or finished task) keeps nothing open */
	CU_ASSERT_FALSE(hx_event_quiet_open(t, 1, 0));
}

static void event__next_at_is_the_earliest_instant_known_to_fall_due(void)
{
	struct sc sc;
	struct hx_event_set ev;
	struct hx_task_run t[1] = { { .t_cancel_us = -1, .t_quiet_until_us = -1 } };

	sc_init(&sc, 201);
	hx_event_init(&ev, &sc.s, true, 7 * MS);
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 0), 7 * MS); /* at_ms 0 */
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 7 * MS), 0);
	/* the others wait for triggers no one has seen: nothing is due */
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 7 * MS), INT64_MAX);
	hx_event_on_held(&ev, "w1", 40 * MS);
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 41 * MS), 45 * MS); /* plus_ms 5 */
	/* a quiet window that ends sooner, while it is still open */
	t[0].t_cancel_us = 10 * MS;
	t[0].t_quiet_until_us = 42 * MS;
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 41 * MS), 42 * MS);
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 42 * MS), 45 * MS);
	CU_ASSERT_EQUAL(hx_event_next_due(&ev, 45 * MS), 1);
	CU_ASSERT_EQUAL(hx_event_next_at(&ev, t, 1, 45 * MS), INT64_MAX);
	hx_event_release(&ev);
}

void test_event_register(void)
{
	CU_pSuite s = CU_add_suite("event", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "event__held_trigger_fires_on_a_held_answer_only",
	            event__held_trigger_fires_on_a_held_answer_only);
	CU_add_test(s, "event__status_zero_trigger_is_not_a_held_one",
	            event__status_zero_trigger_is_not_a_held_one);
	CU_add_test(s, "event__held_event_is_live_while_its_task_runs",
	            event__held_event_is_live_while_its_task_runs);
	CU_add_test(s, "event__cancel_only_event_lives_like_any_other",
	            event__cancel_only_event_lives_like_any_other);
	CU_add_test(s, "event__quiet_window_keeps_the_scenario_open_until_it_ends",
	            event__quiet_window_keeps_the_scenario_open_until_it_ends);
	CU_add_test(s, "event__next_at_is_the_earliest_instant_known_to_fall_due",
	            event__next_at_is_the_earliest_instant_known_to_fall_due);
}
