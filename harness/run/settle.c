/* settle.c -- when a scenario's run may end: nothing more on its way to the provider's journal. */
#include "settle.h"

void hx_settle_init(struct hx_settle *st, enum hx_settle_what what, int64_t parked_us,
                    int64_t open_us)
{
	*st = (struct hx_settle){
		.what = what,
		.parked_us = parked_us,
		.open_us = open_us,
		.since_us = -1,
		.idle_at_us = -1,
	};
}

bool hx_settle_idle(enum hx_settle_what what, const struct fa_server_load *l)
{
	if (l->queued || l->requests > 0)
		return false;
	return what == HX_SETTLE_REQUESTS || l->connections == 0;
}

bool hx_settle_parked(enum hx_settle_what what, const struct fa_server_load *l)
{
	if (l->queued || l->requests > l->parked)
		return false;
	/* a parked connection always carries its request */
	return what == HX_SETTLE_REQUESTS || l->connections <= l->parked;
}

bool hx_settle_step(struct hx_settle *st, const struct fa_server_load *l, int64_t now_us)
{
	bool idle = hx_settle_idle(st->what, l);
	int64_t bound;

	if (st->since_us < 0)
		st->since_us = now_us;
	if (!idle) {
		st->idle_at_us = -1;
	} else if (st->idle_at_us < 0 || l->opened != st->opened || l->started != st->started) {
		/* the first idle look, or a connection or a request came and
		 * went since: look again */
		st->idle_at_us = now_us;
		st->opened = l->opened;
		st->started = l->started;
	} else if (now_us - st->idle_at_us >= HX_SETTLE_CONFIRM_US) {
		return true;
	}
	bound = !idle && hx_settle_parked(st->what, l) ? st->parked_us : st->open_us;
	st->bounded = now_us - st->since_us >= bound;
	return st->bounded;
}
