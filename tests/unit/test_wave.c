/* test_wave.c -- wait.jitter on hand-made journals. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "check.h"
#include "wave.h"

#define MS      1000LL
#define N_TASKS 8

/* Eight tasks of one scope; t1 got a 2 s pause at +0.005 s, the others
 * started at +0.2 s and waited. */
struct fixture {
	struct fa_task_spec tasks[N_TASKS];
	char ids[N_TASKS][4];
	struct fa_scenario sc;
	struct hx_task_run runs[N_TASKS];
	struct fa_attempt a[2 * N_TASKS];
	size_t n;
};

static void add(struct fixture *f, int task, int64_t arr_ms, int status, int64_t pause_ms,
                const char *route)
{
	struct fa_attempt *a = &f->a[f->n];

	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(f->ids[task]);
	a->scope = fa_xstrdup("user:ops");
	a->route = fa_xstrdup(route);
	a->t_arrival_us = arr_ms * MS;
	a->t_response_us = (arr_ms + 1) * MS;
	a->status = status;
	a->pause_until_us = pause_ms < 0 ? -1 : pause_ms * MS;
	a->delivered = FA_DELIVERED_COMPLETE;
}

/* @spread_ms: the returns are spaced evenly over this many ms. */
static void setup(struct fixture *f, int64_t spread_ms)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < N_TASKS; i++) {
		snprintf(f->ids[i], sizeof(f->ids[i]), "t%d", i + 1);
		f->tasks[i].id = f->ids[i];
		f->runs[i].spec = &f->tasks[i];
		f->runs[i].t_sent_us = (i == 0 ? 0 : 200) * MS;
	}
	f->sc.id = "wave";
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = N_TASKS;
	add(f, 0, 5, 429, 2005, "r");
	for (int i = 0; i < N_TASKS; i++)
		add(f, i, 2010 + spread_ms * i / (N_TASKS - 1), 200, -1, "r");
}

static void teardown(struct fixture *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
}

static struct hx_check_result judge(struct fixture *f)
{
	struct hx_check_input in = { .sc = &f->sc,
		                     .attempts = f->a,
		                     .n_attempts = f->n,
		                     .tasks = f->runs,
		                     .n_tasks = N_TASKS };
	struct hx_check_result r = { .id = "wait.jitter" };
	struct hx_check_ctx c;

	hx_check_ctx_init(&c, &in);
	hx_check_ctx_focus(&c, hx_check_find(r.id));
	hx_wave_check(&c, &r);
	hx_check_ctx_release(&c);
	return r;
}

static void wave__spread_returns_pass(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 700);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_EQUAL(r.n_evidence, 9);
	CU_ASSERT_PTR_NOT_NULL(strstr(
	        r.detail, "spread out: 8 returns span 700.0 ms, any 7 of them at least 600.0 ms"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void wave__returns_within_a_fifth_of_w_min_fail(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 150);
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "one wave"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "all 8 returns within 150.0 ms of each other"));
	hx_check_result_release(&r);
	teardown(&f);
}

/* curl's way: the first task waits its own 2 s; the seven others, sent
 * inside the pause, are each told the rest of it and wait exactly that.
 * The returns are 200 ms apart on the clock, yet every task came back the
 * same 5 ms after it was free to go: one wave. */
static void wave__exact_waits_on_different_instants_are_still_a_wave(void)
{
	struct fixture f;
	struct hx_check_result r;

	memset(&f, 0, sizeof(f));
	for (int i = 0; i < N_TASKS; i++) {
		snprintf(f.ids[i], sizeof(f.ids[i]), "t%d", i + 1);
		f.tasks[i].id = f.ids[i];
		f.runs[i].spec = &f.tasks[i];
		f.runs[i].t_sent_us = (i == 0 ? 0 : 200) * MS;
	}
	f.sc.harness.tasks = f.tasks;
	f.sc.harness.n_tasks = N_TASKS;
	add(&f, 0, 5, 429, 2005, "r");
	for (int i = 1; i < N_TASKS; i++)
		add(&f, i, 200, 429, 2205, NULL); /* during_pause: told +2205 */
	add(&f, 0, 2010, 200, -1, "r");
	for (int i = 1; i < N_TASKS; i++)
		add(&f, i, 2210, 200, -1, "r");
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "all 8 returns within 0.0 ms of each other"));
	hx_check_result_release(&r);
	teardown(&f);
}

/* Seven tasks come back within 4.8 ms of the pause's end, as a client
 * without jitter does; t8, which the provider had answered during the
 * pause (a during_pause 429 naming +2005 ms), comes back 1000.9 ms after
 * them. Measured over all eight the returns span about a second, which
 * passed this check before; the seven are still one wave. */
static void wave__one_late_return_does_not_hide_a_wave(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	f.n = 1;
	for (size_t i = 1; i < 2 * N_TASKS; i++)
		fa_attempt_release(&f.a[i]);
	add(&f, 7, 300, 429, 2005, NULL); /* during_pause: told +2005 */
	for (int i = 0; i < N_TASKS - 1; i++) {
		add(&f, i, 2005, 200, -1, "r");
		f.a[f.n - 1].t_arrival_us += i * 800; /* 0 .. 4.8 ms late */
	}
	add(&f, 7, 3005, 200, -1, "r");
	f.a[f.n - 1].t_arrival_us += 900; /* +3005.9 ms */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail,
	                              "one wave: 7 of 8 returns within 4.8 ms of "
	                              "each other; task t8 came back 996.1 ms after them"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "(W_min 1000 ms)"));
	CU_ASSERT_EQUAL(r.n_evidence, 9);
	hx_check_result_release(&r);
	teardown(&f);
}

/* The same wave, t8 now back with the others although the during_pause
 * answer had told it +3005 ms: its return fell inside its own later
 * pause. Counted from that instant its delay was -1000 ms and the eight
 * returns read as "1000.9 ms apart" (a pass); it was released by the
 * scope's end, as the others were: one wave of eight. */
static void wave__a_return_inside_its_own_later_pause_counts_from_the_scope_end(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	f.n = 1;
	for (size_t i = 1; i < 2 * N_TASKS; i++)
		fa_attempt_release(&f.a[i]);
	add(&f, 7, 300, 429, 3006, NULL); /* during_pause: told +3006 */
	for (int i = 0; i < N_TASKS; i++) {
		add(&f, i, 2005, 200, -1, "r");
		f.a[f.n - 1].t_arrival_us += (i + 1) % N_TASKS * 600; /* t8 first */
	}
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_FAIL);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(r.detail, "one wave: all 8 returns within 4.2 ms of each other"));
	hx_check_result_release(&r);
	teardown(&f);
}

/* Full jitter over one W_min: eight returns drawn over [0, 1000 ms]. */
static void wave__a_jittered_set_passes(void)
{
	static const int64_t draw_ms[N_TASKS] = { 412, 87, 903, 655, 231, 768, 340, 512 };
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	f.n = 1;
	for (size_t i = 1; i < 2 * N_TASKS; i++)
		fa_attempt_release(&f.a[i]);
	for (int i = 0; i < N_TASKS; i++)
		add(&f, i, 2005 + draw_ms[i], 200, -1, "r");
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_PASS);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "spread out: 8 returns span 816.0 ms, any 7 "
	                                        "of them at least 672.0 ms"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void wave__fewer_than_eight_held_tasks_is_na(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	f.runs[7].t_sent_us = 3000 * MS; /* started after the pause: not held */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "most: 7"));
	hx_check_result_release(&r);
	teardown(&f);
}

static void wave__during_pause_answers_are_not_pauses_of_their_own(void)
{
	struct fixture f;
	struct hx_check_result r;

	setup(&f, 0);
	free(f.a[0].route);
	f.a[0].route = NULL; /* as if the provider's during_pause answer */
	r = judge(&f);
	CU_ASSERT_EQUAL(r.verdict, HX_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.detail, "no route announced a pause"));
	hx_check_result_release(&r);
	teardown(&f);
}

void test_wave_register(void)
{
	CU_pSuite s = CU_add_suite("wave", NULL, NULL);

	CU_add_test(s, "wave__spread_returns_pass", wave__spread_returns_pass);
	CU_add_test(s, "wave__returns_within_a_fifth_of_w_min_fail",
	            wave__returns_within_a_fifth_of_w_min_fail);
	CU_add_test(s, "wave__exact_waits_on_different_instants_are_still_a_wave",
	            wave__exact_waits_on_different_instants_are_still_a_wave);
	CU_add_test(s, "wave__one_late_return_does_not_hide_a_wave",
	            wave__one_late_return_does_not_hide_a_wave);
	CU_add_test(s, "wave__a_return_inside_its_own_later_pause_counts_from_the_scope_end",
	            wave__a_return_inside_its_own_later_pause_counts_from_the_scope_end);
	CU_add_test(s, "wave__a_jittered_set_passes", wave__a_jittered_set_passes);
	CU_add_test(s, "wave__fewer_than_eight_held_tasks_is_na",
	            wave__fewer_than_eight_held_tasks_is_na);
	CU_add_test(s, "wave__during_pause_answers_are_not_pauses_of_their_own",
	            wave__during_pause_answers_are_not_pauses_of_their_own);
}
