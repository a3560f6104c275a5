/* har.c -- fuzz target: a HAR capture's bytes through import-har's conversion and its check. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cJSON.h>

#include "draft.h"
#include "fuzz_input.h"
#include "har.h"
#include "import.h"

/* What `import-har FILE` does: convert, then print and reload the
 * scenario (hx_import_render), where a scenario the loader refuses is an
 * internal error. The bytes are passed as they are, not NUL-terminated. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hx_draft_opts opts = { 0 };
	struct hx_draft_warnings warn = { 0 };
	struct fa_err err = { { 0 } };
	cJSON *sc = NULL;
	char *text = NULL;

	if (hx_har_convert((const char *)data, size, "fuzz.har", &opts, &sc, &warn, &err) == FA_OK)
		hx_import_render(sc, "fuzz.har", &text, &err);
	fz_input_no_internal_error(&err, "fuzz.har");
	free(text);
	cJSON_Delete(sc);
	hx_draft_warnings_release(&warn);
	return 0;
}
