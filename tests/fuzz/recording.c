/* recording.c -- fuzz target: a journal through import-journal's conversion and its check. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cJSON.h>

#include "draft.h"
#include "fuzz_input.h"
#include "import.h"
#include "recording.h"

/* What `import-journal FILE` does: read and verify the journal, convert
 * it, then print and reload the scenario (hx_import_render), where a
 * scenario the loader refuses is an internal error. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	struct hx_draft_opts opts = { 0 };
	struct hx_draft_warnings warn = { 0 };
	struct fa_err err = { { 0 } };
	cJSON *sc = NULL;
	char *text = NULL;

	opts.id = "fuzz";
	if (hx_recording_convert(path, &opts, &sc, &warn, &err) == FA_OK)
		hx_import_render(sc, "fuzz.jsonl", &text, &err);
	fz_input_no_internal_error(&err, "fuzz.jsonl");
	free(text);
	cJSON_Delete(sc);
	hx_draft_warnings_release(&warn);
	return 0;
}
