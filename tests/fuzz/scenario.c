/* scenario.c -- fuzz target: a scenario file's bytes through the harness's loader. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_input.h"
#include "scenario.h"
#include "suite.h"

/* hx_suite_scenario_parse: fa_scenario_parse (JSON, the field tables, the
 * cross-references) then the checks' expect validation. The bytes are
 * passed as they are, not NUL-terminated, so a read past @size is caught. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };

	hx_suite_scenario_parse((const char *)data, size, "fuzz.json", &sc, &err);
	fz_input_no_internal_error(&err, "fuzz.json");
	fa_scenario_free(sc);
	return 0;
}
