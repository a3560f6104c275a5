/* test_timer.c -- the waiting answers ordered by due time. */
#include <stdint.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "timer.h"

/* A deterministic sequence for the mixed-operations case (an LCG). */
static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

static void timer__empty_has_nothing_due(void)
{
	struct fa_timer *t = fa_timer_new();

	CU_ASSERT_PTR_NULL(fa_timer_first(t));
	CU_ASSERT_PTR_NULL(fa_timer_pop_due(t, INT64_MAX));
	CU_ASSERT_EQUAL(fa_timer_count(t), 0);
	fa_timer_free(t);
	fa_timer_free(NULL);
}

static void timer__pops_in_due_order(void)
{
	enum { N = 1000 };
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry *e = calloc(N, sizeof(*e)), *got;
	uint32_t seed = 7;
	int64_t last = INT64_MIN;

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	for (int i = 0; i < N; i++)
		fa_timer_add(t, &e[i], (int64_t)(next_random(&seed) % 5000));
	CU_ASSERT_EQUAL(fa_timer_count(t), N);
	for (int i = 0; i < N; i++) {
		got = fa_timer_pop_due(t, INT64_MAX);
		CU_ASSERT_PTR_NOT_NULL_FATAL(got);
		CU_ASSERT(got->due_us >= last);
		CU_ASSERT_FALSE(fa_timer_queued(got));
		last = got->due_us;
	}
	CU_ASSERT_PTR_NULL(fa_timer_first(t));
	fa_timer_free(t);
	free(e);
}

static void timer__equal_due_times_come_out_in_the_order_added(void)
{
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry e[8] = { 0 };

	/* added out of due order, three of them due at 50 */
	fa_timer_add(t, &e[0], 50);
	fa_timer_add(t, &e[1], 10);
	fa_timer_add(t, &e[2], 50);
	fa_timer_add(t, &e[3], 90);
	fa_timer_add(t, &e[4], 50);
	fa_timer_add(t, &e[5], 10);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[1]);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[5]);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[0]);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[2]);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[4]);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &e[3]);
	fa_timer_free(t);
}

static void timer__pops_only_what_is_due(void)
{
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry a = { 0 }, b = { 0 };

	fa_timer_add(t, &a, 100);
	fa_timer_add(t, &b, 200);
	CU_ASSERT_PTR_NULL(fa_timer_pop_due(t, 99));
	CU_ASSERT_PTR_EQUAL(fa_timer_first(t), &a);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 100), &a); /* due at its instant */
	CU_ASSERT_PTR_NULL(fa_timer_pop_due(t, 199));
	CU_ASSERT_EQUAL(fa_timer_count(t), 1);
	fa_timer_free(t);
}

/* Removing the root, an inner entry, the last one and one twice leaves
 * the others in order; a removed entry is no longer queued. */
static void timer__removes_an_arbitrary_entry(void)
{
	enum { N = 64 };
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry e[N] = { 0 }, *got;
	bool removed[N] = { false };
	int64_t last = INT64_MIN;
	int left = N;

	for (int i = 0; i < N; i++)
		fa_timer_add(t, &e[i], (int64_t)((i * 37) % N)); /* every due time once */
	for (int i = 0; i < N; i += 5) {
		fa_timer_remove(t, &e[i]);
		CU_ASSERT_FALSE(fa_timer_queued(&e[i]));
		removed[i] = true;
		left--;
	}
	fa_timer_remove(t, fa_timer_first(t)); /* the root */
	for (int i = 0; i < N; i++)
		if (!removed[i] && !fa_timer_queued(&e[i])) {
			removed[i] = true;
			left--;
		}
	fa_timer_remove(t, &e[0]); /* twice: nothing happens */
	CU_ASSERT_EQUAL(fa_timer_count(t), (size_t)left);
	for (int n = 0; n < left; n++) {
		got = fa_timer_pop_due(t, INT64_MAX);
		CU_ASSERT_PTR_NOT_NULL_FATAL(got);
		CU_ASSERT_FALSE(removed[got - e]);
		CU_ASSERT(got->due_us > last);
		last = got->due_us;
	}
	CU_ASSERT_PTR_NULL(fa_timer_first(t));
	fa_timer_free(t);
}

static void timer__moves_an_entry_earlier_and_later(void)
{
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry a = { 0 }, b = { 0 }, c = { 0 };

	fa_timer_add(t, &a, 100);
	fa_timer_add(t, &b, 200);
	fa_timer_add(t, &c, 300);
	fa_timer_move(t, &c, 50); /* earlier: first now */
	CU_ASSERT_PTR_EQUAL(fa_timer_first(t), &c);
	CU_ASSERT_EQUAL(c.due_us, 50);
	fa_timer_move(t, &c, 400); /* later: last */
	fa_timer_move(t, &a, 200); /* equal to b's, after it */
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 1000), &b);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 1000), &a);
	CU_ASSERT_PTR_EQUAL(fa_timer_pop_due(t, 1000), &c);
	fa_timer_move(t, &c, 10); /* not queued: nothing happens */
	CU_ASSERT_FALSE(fa_timer_queued(&c));
	CU_ASSERT_EQUAL(fa_timer_count(t), 0);
	/* an entry taken out may be queued again */
	fa_timer_add(t, &c, 10);
	CU_ASSERT_PTR_EQUAL(fa_timer_first(t), &c);
	fa_timer_free(t);
}

/* Adds, removals, moves and pops mixed, against a plain array that
 * numbers adds and moves as the heap's tie-break does: after every step
 * the earliest entry is the model's earliest. */
static void timer__mixed_operations_keep_the_earliest_first(void)
{
	enum { N = 200, STEPS = 20000 };
	struct fa_timer *t = fa_timer_new();
	struct fa_timer_entry e[N] = { 0 };
	uint64_t order[N] = { 0 }, counter = 0;
	uint32_t seed = 12345;
	int64_t now = 0;

	for (int step = 0; step < STEPS; step++) {
		int x = (int)(next_random(&seed) % N), want = -1;
		uint32_t op = next_random(&seed) % 4;
		int64_t due = now + (int64_t)(next_random(&seed) % 1000);
		size_t queued = 0;

		if (op == 0 && !fa_timer_queued(&e[x])) {
			fa_timer_add(t, &e[x], due);
			order[x] = counter++;
		} else if (op == 1) {
			fa_timer_remove(t, &e[x]);
		} else if (op == 2 && fa_timer_queued(&e[x])) {
			fa_timer_move(t, &e[x], due);
			order[x] = counter++;
		} else if (op == 3 && fa_timer_pop_due(t, now) != NULL) {
			now += next_random(&seed) % 20;
		}
		for (int i = 0; i < N; i++) {
			if (!fa_timer_queued(&e[i]))
				continue;
			queued++;
			if (want < 0 || e[i].due_us < e[want].due_us ||
			    (e[i].due_us == e[want].due_us && order[i] < order[want]))
				want = i;
		}
		CU_ASSERT_EQUAL_FATAL(fa_timer_count(t), queued);
		CU_ASSERT_PTR_EQUAL_FATAL(fa_timer_first(t), want < 0 ? NULL : &e[want]);
		now++;
	}
	fa_timer_free(t);
}

void test_timer_register(void)
{
	CU_pSuite s = CU_add_suite("timer", NULL, NULL);

	CU_add_test(s, "timer__empty_has_nothing_due", timer__empty_has_nothing_due);
	CU_add_test(s, "timer__pops_in_due_order", timer__pops_in_due_order);
	CU_add_test(s, "timer__equal_due_times_come_out_in_the_order_added",
	            timer__equal_due_times_come_out_in_the_order_added);
	CU_add_test(s, "timer__pops_only_what_is_due", timer__pops_only_what_is_due);
	CU_add_test(s, "timer__removes_an_arbitrary_entry", timer__removes_an_arbitrary_entry);
	CU_add_test(s, "timer__moves_an_entry_earlier_and_later",
	            timer__moves_an_entry_earlier_and_later);
	CU_add_test(s, "timer__mixed_operations_keep_the_earliest_first",
	            timer__mixed_operations_keep_the_earliest_first);
}
