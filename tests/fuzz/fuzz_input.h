/* fuzz_input.h -- what the fuzz targets share: input as a file, internal errors as crashes. */
#ifndef FZ_FUZZ_INPUT_H
#define FZ_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "rc.h"

/*
 * A path that reads back the @size bytes at @data: one memfd per process
 * (/proc/self/fd/N), rewritten on each call, so a parser that takes a path
 * reads the input without a temporary file. Static storage, valid until the
 * next call. Aborts when the memfd cannot be made or written.
 */
const char *fz_input_path(const uint8_t *data, size_t size);

/* A copy of the @size bytes at @data with a NUL after them; the caller frees. */
char *fz_input_str(const uint8_t *data, size_t size);

/* Abort (a crash to libFuzzer) when @err holds an internal error, "@name:
 * internal error: ..." (import.h: a scenario made that does not load),
 * which no input may cause; the rest of the message may quote the input,
 * so only that prefix counts. The checks' own internal errors abort by
 * themselves. */
void fz_input_no_internal_error(const struct fa_err *err, const char *name);

#endif
