/* test_client_retry_after.c -- the reference client's Retry-After parser against the provider's, on
 * the same inputs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "../../client-under-test/reference/retry_hint.h"
#include "clock.h"
#include "retry_after.h"

/* Whether the two parsers agree on @value at @now_us: both refuse it, or
 * both take it and name the same pause (µs). On a disagreement the
 * assertion prints both readings. */
static void agree(const char *value, int64_t now_us)
{
	struct fa_retry_after ra;
	bool provider = fa_retry_after_parse(value, &ra) == FA_OK;
	int64_t p_pause = provider ? fa_retry_after_until_wall_us(&ra, now_us) - now_us : 0;
	int64_t c_pause = 0;
	bool client = ref_retry_hint_pause_us(value, now_us, &c_pause);
	char what[400];

	snprintf(what, sizeof(what), "\"%.300s\": provider %s %lld, client %s %lld", value,
	         provider ? "takes it," : "refuses it", (long long)p_pause,
	         client ? "takes it," : "refuses it", (long long)c_pause);
	CU_assertImplementation(provider == client && p_pause == c_pause, __LINE__, what, __FILE__,
	                        "", CU_FALSE);
}

static const char *const corpus[] = {
	"0",
	"1",
	"10",
	"120",
	"86400",
	"2147483648",
	"2147483649",
	"99999999999999999999999",
	" 10",
	"10 ",
	"\t10\t",
	"",
	" ",
	"-1",
	"+5",
	"1.5",
	"10s",
	"1e3",
	"0x10",
	"١٠",
	"Sun, 06 Nov 1994 08:49:37 GMT",
	"Sunday, 06-Nov-94 08:49:37 GMT",
	"Sun Nov  6 08:49:37 1994",
	"Sun Nov 06 08:49:37 1994",
	"Sun Nov 6 08:49:37 1994",
	"Mon, 29 Feb 2024 00:00:00 GMT",
	"Mon, 29 Feb 2023 00:00:00 GMT",
	"Mon, 31 Apr 2030 00:00:00 GMT",
	"Tue, 01 Jan 2030 24:00:00 GMT",
	"Tue, 01 Jan 2030 23:60:00 GMT",
	"Tue, 31 Dec 2030 23:59:60 GMT",
	"Tue, 01 Jan 2030 00:00:00 UTC",
	"Tue, 01 Jan 2030 00:00:00 gmt",
	"tue, 01 Jan 2030 00:00:00 GMT",
	"Tue, 01 jan 2030 00:00:00 GMT",
	"Tue, 1 Jan 2030 00:00:00 GMT",
	"Tue,  1 Jan 2030 00:00:00 GMT",
	"Tue, 01 Jan 30 00:00:00 GMT",
	"Tue, 01 Jan 2030 0:00:00 GMT",
	"Tue, 01 Jan 2030 00:00:00 GMT x",
	"Tue 01 Jan 2030 00:00:00 GMT",
	"Tuesday, 01-Jan-30 00:00:00 GMT",
	"Tuesday, 01-Jan-99 00:00:00 GMT",
	"Tuesday, 01-Jan-76 00:00:00 GMT",
	"Tuesday, 01-Jan-77 00:00:00 GMT",
	"Tuesday, 29-Feb-00 00:00:00 GMT",
	"Tuesday, 29-Feb-01 00:00:00 GMT",
	"Tuesday, 01-Jan-2030 00:00:00 GMT",
	"Tue, 01-Jan-30 00:00:00 GMT",
	"Funday, 01-Jan-30 00:00:00 GMT",
	"Sat, 01 Jan 0000 00:00:00 GMT",
	"Fri, 31 Dec 9999 23:59:59 GMT",
	"Thu Jan  1 00:00:00 1970",
	"Thu Jan 1  00:00:00 1970",
	"Wed Dec 31 23:59:59 1969",
};

static void client_retry_after__agrees_with_the_provider_on_the_corpus(void)
{
	int64_t now = fa_clock_wall_us();

	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		agree(corpus[i], now);
}

/* Every value the provider writes, in each form, for pauses from the
 * past to centuries ahead. */
static void client_retry_after__reads_every_value_the_provider_writes(void)
{
	static const int64_t seconds[] = { -3000000000LL,
		                           -86400,
		                           -1,
		                           0,
		                           1,
		                           10,
		                           59,
		                           60,
		                           3599,
		                           86400,
		                           31536000,
		                           1576800000,
		                           2147483647,
		                           2147483648LL,
		                           5000000000LL };
	static const enum fa_ra_form forms[] = { FA_RA_DELTA, FA_RA_IMF_FIXDATE, FA_RA_RFC850,
		                                 FA_RA_ASCTIME };
	int64_t now = fa_clock_wall_us();
	char buf[FA_RA_BUFSZ];

	for (size_t f = 0; f < 4; f++)
		for (size_t k = 0; k < sizeof(seconds) / sizeof(seconds[0]); k++)
			if (fa_retry_after_format(forms[f], seconds[k], now, buf, sizeof(buf),
			                          NULL) == FA_OK)
				agree(buf, now);
}

/* Valid values with one byte changed, deleted or doubled: both parsers
 * must still give the same answer, whatever it is. */
static void client_retry_after__agrees_on_one_byte_mutations(void)
{
	static const char alphabet[] = "0123456789 ,:-ajnuFMTGSD\t";
	int64_t now = fa_clock_wall_us();
	char buf[FA_RA_BUFSZ + 2];
	unsigned seed = 12345;

	for (size_t i = 20; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		size_t n = strlen(corpus[i]);

		for (size_t at = 0; at < n; at++) {
			for (int kind = 0; kind < 3; kind++) {
				memcpy(buf, corpus[i], at);
				if (kind == 0) { /* replace */
					seed = seed * 1103515245u + 12345u;
					buf[at] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
					memcpy(buf + at + 1, corpus[i] + at + 1, n - at);
				} else if (kind == 1) { /* delete */
					memcpy(buf + at, corpus[i] + at + 1, n - at);
				} else { /* double */
					buf[at] = corpus[i][at];
					memcpy(buf + at + 1, corpus[i] + at, n - at + 1);
				}
				agree(buf, now);
			}
		}
	}
}

void test_client_retry_after_register(void)
{
	CU_pSuite suite = CU_add_suite("client_retry_after", NULL, NULL);

#define T(f) CU_add_test(suite, #f, f)
	T(client_retry_after__agrees_with_the_provider_on_the_corpus);
	T(client_retry_after__reads_every_value_the_provider_writes);
	T(client_retry_after__agrees_on_one_byte_mutations);
#undef T
}
