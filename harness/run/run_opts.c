/* run_opts.c -- how a suite run goes (the options every scenario of it reads) and the request to
 * stop it. */
#include "run_opts.h"

#include <stdatomic.h>

static atomic_int interrupted;

void hx_run_interrupt(void)
{
	atomic_store(&interrupted, 1);
}

bool hx_run_interrupted(void)
{
	return atomic_load(&interrupted) != 0;
}
