/* retry_after.c -- fuzz target: a Retry-After value through the provider's and client's parsers. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "retry_after.h"
#include "retry_hint.h"

/* A fixed "now" (2023-11-14T22:13:20Z), so a run is repeatable. */
#define NOW_WALL_US 1700000000000000LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value = fz_input_str(data, size);
	struct fa_retry_after ra;
	enum fa_ra_form form;
	char buf[FA_RA_BUFSZ];
	int64_t ms, us, until;

	if (fa_retry_after_parse(value, &ra) == FA_OK) {
		until = fa_retry_after_until_wall_us(&ra, NOW_WALL_US);
		/* the value read back in each form it can be written in */
		for (int f = FA_RA_DELTA; f <= FA_RA_ASCTIME; f++)
			fa_retry_after_format((enum fa_ra_form)f, (until - NOW_WALL_US) / 1000000,
			                      NOW_WALL_US, buf, sizeof(buf), NULL);
	}
	fa_retry_after_ms_parse(value, &ms);
	fa_retry_after_form_parse(value, &form);
	ref_retry_hint_pause_us(value, NOW_WALL_US, &us);
	free(value);
	return 0;
}
