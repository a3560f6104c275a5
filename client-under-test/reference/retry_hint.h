/* retry_hint.h -- the reference client's own reading of a Retry-After value (RFC 9110 §10.2.3). */
#ifndef REF_RETRY_HINT_H
#define REF_RETRY_HINT_H

#include <stdbool.h>
#include <stdint.h>

/* The longest pause a value can name, s (2^31, RFC 9111 §1.2.2): a larger
 * delta-seconds, or a date farther away, counts as this. */
#define REF_RETRY_HINT_MAX_S 2147483648LL

/*
 * The pause a Retry-After field value asks for, received at @now_wall_us
 * (wall clock, µs since the epoch), into *@out_us: delta-seconds × 10^6,
 * or the HTTP-date (IMF-fixdate, RFC 850, asctime; RFC 9110 §5.6.7, names
 * case-sensitive) minus @now_wall_us, negative for a date in the past;
 * within ±REF_RETRY_HINT_MAX_S either way. Spaces and tabs around the
 * value are ignored. An RFC 850 year more than 50 years after now is
 * taken as the most recent past year with the same two digits. A second
 * 60 is accepted (it lands on the next minute), a weekday that does not
 * match the date too; an impossible date (Feb 30, hour 24) is not.
 * False, *@out_us untouched, when @value is NULL or not of the grammar.
 *
 * The client's own parser, written apart from the provider's: the unit
 * tests cross-check the two on the same inputs, so they can disagree.
 */
bool ref_retry_hint_pause_us(const char *value, int64_t now_wall_us, int64_t *out_us);

#endif
