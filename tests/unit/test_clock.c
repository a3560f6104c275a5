/* test_clock.c -- the virtual timeline of a time scale. */
#include <stdlib.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "clock.h"

static int64_t real_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void clock__unscaled_is_real_time(void)
{
	int64_t a, v, b;

	fa_clock_set_scale(1.0);
	CU_ASSERT_FALSE(fa_clock_scaled());
	a = real_mono_us();
	v = fa_clock_mono_us();
	b = real_mono_us();
	CU_ASSERT(v >= a && v <= b);
	CU_ASSERT_EQUAL(fa_clock_real_us(12345), 12345);
}

static int64_t us_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

/* Each virtual reading lies between v = T0 + S x (t - T0) of the real
 * readings taken just before and just after it: the relation itself,
 * bracketed on both clocks, never a sleep's length. */
static void clock__scaled_runs_s_times_faster_from_its_origin(void)
{
	int64_t t0, before, v, after;

	fa_clock_set_scale(20.0);
	CU_ASSERT_TRUE(fa_clock_scaled());
	CU_ASSERT_DOUBLE_EQUAL(fa_clock_scale(), 20.0, 1e-12);
	t0 = us_of(&fa_clock_origin()->mono);
	for (int i = 0; i < 3; i++) {
		struct timespec pause = { 0, 1000000 };

		before = real_mono_us();
		v = fa_clock_mono_us();
		after = real_mono_us();
		CU_ASSERT(v >= t0 + 20 * (before - t0) - 20);
		CU_ASSERT(v <= t0 + 20 * (after - t0) + 20);
		nanosleep(&pause, NULL);
	}
	/* the wall clock runs on the same line from its own origin */
	t0 = us_of(&fa_clock_origin()->real);
	{
		struct timespec a, b;
		int64_t w;

		clock_gettime(CLOCK_REALTIME, &a);
		w = fa_clock_wall_us();
		clock_gettime(CLOCK_REALTIME, &b);
		CU_ASSERT(w >= t0 + 20 * (us_of(&a) - t0) - 20);
		CU_ASSERT(w <= t0 + 20 * (us_of(&b) - t0) + 20);
	}
	fa_clock_set_scale(1.0);
}

static void clock__real_durations_divide_and_round_up(void)
{
	fa_clock_set_scale(20.0);
	CU_ASSERT_EQUAL(fa_clock_real_us(1000), 50);
	CU_ASSERT_EQUAL(fa_clock_real_us(1001), 51);
	CU_ASSERT_EQUAL(fa_clock_real_us(10000000), 500000);
	CU_ASSERT_EQUAL(fa_clock_real_us(0), 0);
	CU_ASSERT_EQUAL(fa_clock_real_us(-7), -7);
	fa_clock_set_scale(1.0);
}

/* A due instant maps to the real instant that reaches it; one past is now. */
static void clock__real_deadline_of_a_virtual_instant(void)
{
	int64_t r0, due_real;
	struct timespec ts;

	fa_clock_set_scale(20.0);
	r0 = real_mono_us();
	ts = fa_clock_real_deadline(fa_clock_mono_us() + 1000000); /* 1 s virtual */
	due_real = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	CU_ASSERT(due_real - r0 >= 50000 - 100);
	CU_ASSERT(due_real - r0 <= 50000 + 20000);
	ts = fa_clock_real_deadline(fa_clock_mono_us() - 5000000);
	due_real = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	CU_ASSERT(due_real - r0 >= 0);
	CU_ASSERT(due_real - r0 <= 20000);
	fa_clock_set_scale(1.0);
}

void test_clock_register(void)
{
	CU_pSuite s = CU_add_suite("clock", NULL, NULL);

	CU_add_test(s, "clock__unscaled_is_real_time", clock__unscaled_is_real_time);
	CU_add_test(s, "clock__scaled_runs_s_times_faster_from_its_origin",
	            clock__scaled_runs_s_times_faster_from_its_origin);
	CU_add_test(s, "clock__real_durations_divide_and_round_up",
	            clock__real_durations_divide_and_round_up);
	CU_add_test(s, "clock__real_deadline_of_a_virtual_instant",
	            clock__real_deadline_of_a_virtual_instant);
}
