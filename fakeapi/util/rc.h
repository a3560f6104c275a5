/* rc.h -- the one status enum and the located error every module reports. */
#ifndef FA_RC_H
#define FA_RC_H

#include <stddef.h>

/* Status of a library call. FA_OK is 0 so `if (rc != FA_OK)` reads naturally. */
enum fa_rc {
	FA_OK = 0,
	FA_EINVAL,    /* bad input: syntax, validation, out of range */
	FA_ENOMEM,    /* allocation failed (only where fa_xmalloc is not used) */
	FA_EIO,       /* a file or socket operation failed; errno is in the message */
	FA_ENOTFOUND, /* a looked-up thing does not exist */
	FA_ERANGE,    /* a number outside what the caller or the RFC allows */
	FA_ESTATE,    /* call not valid in the object's current state */
	FA_ECHAIN,    /* a hash chain does not verify (journal) */
};

/* Short lowercase name of @rc ("ok", "invalid input", ...); static storage. */
const char *fa_rc_str(enum fa_rc rc);

/*
 * Where and what went wrong, owned by the caller. The first error wins:
 * fa_err_set() does nothing once msg[0] is set, so the innermost, most
 * precise message survives the unwinding. Only main() (or the harness's
 * per-scenario loop) prints it.
 */
struct fa_err {
	char msg[1024]; /* "FILE:LINE:COL: message" or "FILE: $.path: message"; "" = none */
};

/* Record a printf-formatted message in @err unless one is already there.
 * @err may be NULL (the message is dropped). */
void fa_err_set(struct fa_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear @err so it can be reused. NULL is accepted. */
void fa_err_clear(struct fa_err *err);

#endif
