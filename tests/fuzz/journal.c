/* journal.c -- fuzz target: a journal file's bytes through the reader and the verifier. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "attempt.h"
#include "fuzz_input.h"
#include "journal.h"

static void read_all(const char *path, struct fa_journal_tail *tail)
{
	struct fa_attempt *a = NULL;
	struct fa_err err = { { 0 } };
	size_t n = 0;

	fa_journal_read(path, &a, &n, tail, &err);
	fz_input_no_internal_error(&err, path);
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&a[i]);
	free(a);
}

/* Each entry point with and without a tail to report a cut last line to:
 * without one, a cut line is an error. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	struct fa_journal_tail tail;
	struct fa_err err = { { 0 } };
	char head[65];
	size_t lines = 0;

	fa_journal_verify(path, &lines, head, &tail, &err);
	fz_input_no_internal_error(&err, path);
	fa_err_clear(&err);
	fa_journal_verify(path, &lines, NULL, NULL, &err);
	fz_input_no_internal_error(&err, path);
	read_all(path, &tail);
	read_all(path, NULL);
	return 0;
}
