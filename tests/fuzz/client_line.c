/* client_line.c -- fuzz target: what a stdio client prints, line by line, through the parser. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "client_log.h"
#include "result.h"

/* The input is a client's stdout: split at each newline, each line goes
 * to hx_client_log_line() (not NUL-terminated, so a read past a line is
 * caught) with the canaries on and two tasks given, then the session is
 * moved into a scenario result as the harness does at its end. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hx_client_log log;
	struct hx_scenario_result res;
	const char *p = (const char *)data, *end = p + size;
	int64_t t_us = 0;

	hx_client_log_init(&log);
	memset(&res, 0, sizeof(res));
	hx_client_log_canaries(&log, "kcKEY", "body@x");
	hx_client_log_task(&log, "t1");
	hx_client_log_task(&log, "t2");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		hx_client_log_line(&log, p, len, false, t_us);
		t_us += 1000;
		p += len + (nl != NULL);
	}
	hx_client_log_error(&log, "client exited with status %d", 0);
	hx_client_log_move(&log, &res);
	hx_client_log_release(&log);
	hx_scenario_result_release(&res);
	return 0;
}
