/* fuzz_input.c -- what the fuzz targets share: input as a file, internal errors as crashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"

const char *fz_input_path(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", 0);
		if (fd < 0) {
			perror("fuzz: memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz: writing the input");
		abort();
	}
	return path;
}

char *fz_input_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fz_input_no_internal_error(const struct fa_err *err, const char *name)
{
	static const char tag[] = ": internal error:";
	size_t n = strlen(name);

	if (strncmp(err->msg, name, n) == 0 && strncmp(err->msg + n, tag, strlen(tag)) == 0) {
		fprintf(stderr, "fuzz: %s\n", err->msg);
		abort();
	}
}
