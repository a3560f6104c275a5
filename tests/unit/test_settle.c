/* test_settle.c -- the end of a scenario's run: an idle provider seen twice, the bounds of the
 * wait. */
#include <CUnit/CUnit.h>

#include "settle.h"

#define MS 1000 /* µs */

/* The provider with @conns connections open, @reqs requests in flight,
 * @parked of them parked, @opened accepted and @started read so far. */
static struct fa_server_load load(size_t conns, size_t reqs, size_t parked, uint64_t opened,
                                  uint64_t started)
{
	return (struct fa_server_load){ .connections = conns,
		                        .requests = reqs,
		                        .parked = parked,
		                        .opened = opened,
		                        .started = started };
}

static void settle__idle_means_nothing_left_of_what_is_waited_for(void)
{
	struct fa_server_load l = load(0, 0, 0, 3, 3);

	CU_ASSERT_TRUE(hx_settle_idle(HX_SETTLE_CONNECTIONS, &l));
	l.queued = true; /* accepted by the kernel, not yet by the server */
	CU_ASSERT_FALSE(hx_settle_idle(HX_SETTLE_CONNECTIONS, &l));
	CU_ASSERT_FALSE(hx_settle_idle(HX_SETTLE_REQUESTS, &l));
	/* an idle keep-alive connection: a running client may keep it */
	l = load(1, 0, 0, 3, 3);
	CU_ASSERT_TRUE(hx_settle_idle(HX_SETTLE_REQUESTS, &l));
	CU_ASSERT_FALSE(hx_settle_idle(HX_SETTLE_CONNECTIONS, &l));
	l = load(1, 1, 0, 3, 4);
	CU_ASSERT_FALSE(hx_settle_idle(HX_SETTLE_REQUESTS, &l));
	/* a parked answer is still in flight */
	l = load(1, 1, 1, 3, 4);
	CU_ASSERT_FALSE(hx_settle_idle(HX_SETTLE_REQUESTS, &l));
	CU_ASSERT_TRUE(hx_settle_parked(HX_SETTLE_REQUESTS, &l));
	CU_ASSERT_TRUE(hx_settle_parked(HX_SETTLE_CONNECTIONS, &l));
	/* beside it, an open connection that is not parked */
	l = load(2, 1, 1, 3, 4);
	CU_ASSERT_TRUE(hx_settle_parked(HX_SETTLE_REQUESTS, &l));
	CU_ASSERT_FALSE(hx_settle_parked(HX_SETTLE_CONNECTIONS, &l));
	l = load(2, 2, 1, 3, 5);
	CU_ASSERT_FALSE(hx_settle_parked(HX_SETTLE_REQUESTS, &l));
}

static void settle__ends_on_the_second_idle_look_after_the_confirm_time(void)
{
	struct hx_settle st;
	struct fa_server_load l = load(0, 0, 0, 2, 2);

	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 10 * MS)); /* one look is not enough */
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 10 * MS + HX_SETTLE_CONFIRM_US - 1));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 10 * MS + HX_SETTLE_CONFIRM_US));
	CU_ASSERT_FALSE(st.bounded);
}

static void settle__a_connection_between_two_idle_looks_starts_over(void)
{
	struct hx_settle st;
	struct fa_server_load l = load(0, 0, 0, 2, 2);

	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	/* a connection came, sent its request and went between the looks */
	l = load(0, 0, 0, 3, 3);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 2 * HX_SETTLE_CONFIRM_US));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 3 * HX_SETTLE_CONFIRM_US));
	/* a request on a kept connection between the looks, likewise */
	hx_settle_init(&st, HX_SETTLE_REQUESTS, 300 * MS, 300 * MS);
	l = load(1, 0, 0, 3, 3);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	l = load(1, 0, 0, 3, 4);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 2 * HX_SETTLE_CONFIRM_US));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 3 * HX_SETTLE_CONFIRM_US));
	/* and a busy look between two idle ones */
	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	l = load(0, 0, 0, 3, 3);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	l.queued = true;
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, HX_SETTLE_CONFIRM_US));
	l.queued = false;
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 2 * HX_SETTLE_CONFIRM_US));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 3 * HX_SETTLE_CONFIRM_US));
}

static void settle__an_open_connection_is_waited_for_up_to_the_open_bound(void)
{
	struct hx_settle st;
	struct fa_server_load l = load(1, 0, 0, 1, 1);

	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 5000 * MS)); /* the bound counts from here */
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 5300 * MS));
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 5999 * MS));
	CU_ASSERT_FALSE(st.bounded);
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 6000 * MS));
	CU_ASSERT_TRUE(st.bounded);
	/* connections that keep coming and going end at the bound too */
	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	for (int64_t t = 0; t < 1000 * MS; t += HX_SETTLE_CONFIRM_US) {
		l = load(0, 0, 0, (uint64_t)t, (uint64_t)t);
		CU_ASSERT_FALSE(hx_settle_step(&st, &l, t));
	}
	l = load(0, 0, 0, 1000 * MS, 1000 * MS);
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 1000 * MS));
	CU_ASSERT_TRUE(st.bounded);
}

static void settle__parked_answers_are_waited_for_up_to_the_parked_bound(void)
{
	struct hx_settle st;
	struct fa_server_load l = load(1, 1, 1, 1, 1);

	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 299 * MS));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 300 * MS));
	CU_ASSERT_TRUE(st.bounded);
	/* one open beside it: the open bound */
	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	l = load(2, 1, 1, 2, 1);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 300 * MS));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 1000 * MS));
	/* the answer ends by itself within the bound: idle, at once */
	hx_settle_init(&st, HX_SETTLE_CONNECTIONS, 300 * MS, 1000 * MS);
	l = load(1, 1, 1, 1, 1);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 0));
	l = load(0, 0, 0, 1, 1);
	CU_ASSERT_FALSE(hx_settle_step(&st, &l, 100 * MS));
	CU_ASSERT_TRUE(hx_settle_step(&st, &l, 100 * MS + HX_SETTLE_CONFIRM_US));
	CU_ASSERT_FALSE(st.bounded);
}

void test_settle_register(void)
{
	CU_pSuite s = CU_add_suite("settle", NULL, NULL);

	if (s == NULL)
		return;
	CU_add_test(s, "settle__idle_means_nothing_left_of_what_is_waited_for",
	            settle__idle_means_nothing_left_of_what_is_waited_for);
	CU_add_test(s, "settle__ends_on_the_second_idle_look_after_the_confirm_time",
	            settle__ends_on_the_second_idle_look_after_the_confirm_time);
	CU_add_test(s, "settle__a_connection_between_two_idle_looks_starts_over",
	            settle__a_connection_between_two_idle_looks_starts_over);
	CU_add_test(s, "settle__an_open_connection_is_waited_for_up_to_the_open_bound",
	            settle__an_open_connection_is_waited_for_up_to_the_open_bound);
	CU_add_test(s, "settle__parked_answers_are_waited_for_up_to_the_parked_bound",
	            settle__parked_answers_are_waited_for_up_to_the_parked_bound);
}
