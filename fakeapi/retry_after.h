/* retry_after.h -- the one parser and formatter of Retry-After (RFC 9110 §10.2.3). */
#ifndef FA_RETRY_AFTER_H
#define FA_RETRY_AFTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rc.h"

/* The forms a Retry-After value can take. RFC 9110 §10.2.3 allows
 * delta-seconds or an HTTP-date; §5.6.7 defines three date forms, of which
 * a recipient must accept all three and a sender must emit IMF-fixdate. */
enum fa_ra_form {
	FA_RA_DELTA = 0,   /* "120" */
	FA_RA_IMF_FIXDATE, /* "Sun, 06 Nov 1994 08:49:37 GMT" */
	FA_RA_RFC850,      /* "Sunday, 06-Nov-94 08:49:37 GMT" (obsolete) */
	FA_RA_ASCTIME,     /* "Sun Nov  6 08:49:37 1994" (obsolete) */
};

/* Longest pause a value names, s: 2^31. RFC 9110 §10.2.3 sets delta-seconds
 * no upper bound; RFC 9111 §1.2.2 has a recipient take one greater than it
 * can represent as 2147483648 (2^31), and so do we: a larger delta-seconds
 * saturates to it, and a date farther than it from now counts as that far
 * (fa_retry_after_until_wall_us). In µs it is about 2.1e15, so instants
 * stay exact in int64 arithmetic and in the journal's JSON numbers. */
#define FA_RA_MAX_DELTA_S 2147483648LL

/* Longest pause a retry-after-ms value names, ms: the same 2^31 s. */
#define FA_RA_MAX_MS (FA_RA_MAX_DELTA_S * 1000)

/* Farthest an RFC 850 date may lie from now, s: 49 years of 365 days. */
#define FA_RA_RFC850_SPAN_S (49LL * 365 * 86400)

/* Buffer size that always holds a formatted value, NUL included. */
#define FA_RA_BUFSZ 64

/* A parsed Retry-After value. */
struct fa_retry_after {
	enum fa_ra_form form; /* which form the value had */
	int64_t delta_s;      /* FA_RA_DELTA: seconds, 0..FA_RA_MAX_DELTA_S */
	int64_t date_s;       /* date forms: seconds since the Unix epoch (UTC) */
	bool saturated;       /* FA_RA_DELTA: the value was above FA_RA_MAX_DELTA_S,
	                         which delta_s holds instead (RFC 9111 §1.2.2) */
};

/* Name of @form: "delta-seconds", "imf-fixdate", "rfc850", "asctime";
 * "unknown" for any other value. Static storage. */
const char *fa_retry_after_form_str(enum fa_ra_form form);

/* Parse a form name as fa_retry_after_form_str() prints it.
 * Returns FA_EINVAL for an unknown name. */
enum fa_rc fa_retry_after_form_parse(const char *name, enum fa_ra_form *out);

/*
 * Parse a Retry-After field value (leading and trailing spaces/tabs are
 * optional whitespace and ignored). delta-seconds is 1*DIGIT: a sign, a
 * fraction, an empty value or trailing garbage is FA_EINVAL; a value above
 * FA_RA_MAX_DELTA_S, of any length, saturates to it (RFC 9111 §1.2.2) with
 * @out->saturated set. Dates follow RFC 9110 §5.6.7 exactly
 * (case-sensitive names, "GMT"); RFC 850 two-digit years more than 50 years
 * in the future (judged against the wall clock at the call) are taken as the
 * past century. An invalid calendar date (Feb 30, hour 24, minute 60) is
 * FA_EINVAL; second 60 (a leap second) is accepted and lands on the next
 * minute, and a weekday that does not match the date is accepted (§5.6.7).
 * @value or @out NULL is FA_EINVAL. @out is written only on FA_OK.
 */
enum fa_rc fa_retry_after_parse(const char *value, struct fa_retry_after *out);

/*
 * Parse a retry-after-ms field value (OpenAI's API sends it beside
 * Retry-After: the pause in ms, which its SDKs read first) into *@ms:
 * 1*DIGIT with optional whitespace around it, as delta-seconds is; a
 * value above FA_RA_MAX_MS saturates to it. A sign, a fraction, an empty
 * value or any other character is FA_EINVAL, as is @value or @ms NULL;
 * *@ms is written only on FA_OK.
 */
enum fa_rc fa_retry_after_ms_parse(const char *value, int64_t *ms);

/*
 * The instant the value names, as wall-clock µs since the epoch, for a
 * value received at @now_wall_us: now + delta for delta-seconds, the date
 * itself for the date forms (which may lie in the past), but never more
 * than FA_RA_MAX_DELTA_S from @now_wall_us either way: a date beyond that
 * counts as a pause of 2^31 s (or, in the past, as 2^31 s ago), the
 * saturation delta-seconds gets. @ra NULL yields @now_wall_us.
 */
int64_t fa_retry_after_until_wall_us(const struct fa_retry_after *ra, int64_t now_wall_us);

/*
 * Format a Retry-After value asking for a pause of @seconds into @buf
 * (@len >= FA_RA_BUFSZ, else FA_ERANGE). For FA_RA_DELTA, @seconds must be
 * 0..FA_RA_MAX_DELTA_S (else FA_ERANGE) and the value is the decimal
 * number. For the date forms the date is ceil(now) + @seconds, so the
 * pause a recipient computes never comes out shorter than asked; @seconds
 * may be negative to name a date in the past; a date outside the years
 * 0000..9999 is FA_ERANGE. Day and month names are always English (never
 * the locale's). An RFC 850 date keeps only two year digits, so it reads
 * back as meant only within 50 years of now: beyond 49 years either way
 * (FA_RA_RFC850_SPAN_S) it is FA_ERANGE. When @until_wall_us is not
 * NULL it receives, on FA_OK only, the instant the emitted value names (µs
 * since epoch; for delta-seconds, now + seconds). An unknown @form or @buf
 * NULL is FA_EINVAL. On failure @buf (if any) holds "".
 */
enum fa_rc fa_retry_after_format(enum fa_ra_form form, int64_t seconds, int64_t now_wall_us,
                                 char *buf, size_t len, int64_t *until_wall_us);

#endif
