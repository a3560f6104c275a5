/* rc.c -- status names and first-error-wins messages. */
#include "rc.h"

#include <stdarg.h>
#include <stdio.h>

const char *fa_rc_str(enum fa_rc rc)
{
	switch (rc) {
	case FA_OK: return "ok";
	case FA_EINVAL: return "invalid input";
	case FA_ENOMEM: return "out of memory";
	case FA_EIO: return "i/o error";
	case FA_ENOTFOUND: return "not found";
	case FA_ERANGE: return "out of range";
	case FA_ESTATE: return "invalid state";
	case FA_ECHAIN: return "hash chain broken";
	}
	return "unknown status";
}

void fa_err_set(struct fa_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->msg[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

void fa_err_clear(struct fa_err *err)
{
	if (err != NULL)
		err->msg[0] = '\0';
}
