/* log.c -- one key=value line per event on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fa_log_level = FA_LOG_WARN;

static const char *names[] = { "error", "warn", "info", "debug" };

void fa_log_init(void)
{
	const char *v = getenv("FAKEAPI_LOG");

	if (v == NULL)
		return;
	for (int i = 0; i < 4; i++)
		if (strcmp(v, names[i]) == 0)
			fa_log_level = i;
}

void fa_log_write(int level, const char *tag, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one fprintf so concurrent threads do not interleave within a line */
	fprintf(stderr, "level=%s mod=%s %s\n",
	        names[level < 0   ? 0
	              : level > 3 ? 3
	                          : level],
	        tag, line);
}
