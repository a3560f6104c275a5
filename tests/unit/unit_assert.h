/* unit_assert.h -- CUnit's comparing assertions, printing both values on failure.
 *
 * The build includes it first in every tests/unit/ file (-include). It
 * replaces CU_ASSERT_EQUAL, CU_ASSERT_NOT_EQUAL, CU_ASSERT_STRING_EQUAL and
 * CU_ASSERT_STRING_NOT_EQUAL (and their _FATAL forms) with versions that
 * evaluate each argument once and, when they fail, name what they got and
 * what they wanted: `CU_ASSERT_EQUAL(n, 3): got 4, want 3`. Integers print
 * in decimal, floating point as %g, pointers as %p, strings quoted (at
 * most 300 bytes each; NULL as (null), which equals no string).
 */
#ifndef UNIT_ASSERT_H
#define UNIT_ASSERT_H

/* Comparisons keep CUnit's semantics (the usual conversions), so they keep
 * its silence about them too: gcc takes that from the system_header
 * pragma; clang warns at the expansion site all the same, so the one
 * comparison turns -Wsign-compare off for itself (UT_CMP). */
#pragma GCC system_header

#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

static inline void ut_fmt_i(char *b, size_t n, long long v)
{
	snprintf(b, n, "%lld", v);
}

static inline void ut_fmt_u(char *b, size_t n, unsigned long long v)
{
	snprintf(b, n, "%llu", v);
}

static inline void ut_fmt_d(char *b, size_t n, long double v)
{
	snprintf(b, n, "%Lg", v);
}

static inline void ut_fmt_p(char *b, size_t n, const volatile void *v)
{
	snprintf(b, n, "%p", (const void *)v);
}

/* Write @v into the char array @b, by its type. */
/* (kept by hand: clang-format cannot lay out a _Generic association list) */
/* clang-format off */
#define UT_FMT(b, v)                                                                               \
	_Generic((v),                                                                              \
		_Bool: ut_fmt_u, char: ut_fmt_i, signed char: ut_fmt_i,                            \
		unsigned char: ut_fmt_u, short: ut_fmt_i, unsigned short: ut_fmt_u,               \
		int: ut_fmt_i, unsigned: ut_fmt_u, long: ut_fmt_i,                                 \
		unsigned long: ut_fmt_u, long long: ut_fmt_i,                                      \
		unsigned long long: ut_fmt_u, float: ut_fmt_d, double: ut_fmt_d,                   \
		long double: ut_fmt_d, default: ut_fmt_p)(b, sizeof(b), v)
/* clang-format on */

/* @a @op @e with the usual conversions and no -Wsign-compare about them. */
#define UT_CMP(a, op, e)                                                                           \
	__extension__({                                                                            \
		_Pragma("GCC diagnostic push");                                                    \
		_Pragma("GCC diagnostic ignored \"-Wsign-compare\"");                              \
		int ut_r_ = (a)op(e);                                                              \
		_Pragma("GCC diagnostic pop");                                                     \
		ut_r_;                                                                             \
	})

#define UT_ASSERT_CMP(actual, expected, op, name, fatal)                                           \
	do {                                                                                       \
		__auto_type ut_a_ = (actual);                                                      \
		__auto_type ut_e_ = (expected);                                                    \
		int ut_ok_ = UT_CMP(ut_a_, op, ut_e_);                                             \
		char ut_as_[48], ut_es_[48], ut_msg_[768];                                         \
		UT_FMT(ut_as_, ut_a_);                                                             \
		UT_FMT(ut_es_, ut_e_);                                                             \
		snprintf(ut_msg_, sizeof(ut_msg_), "%s(%s, %s): got %s, want %s%s", name, #actual, \
		         #expected, ut_as_, #op[0] == '!' ? "not " : "", ut_es_);                  \
		CU_assertImplementation(ut_ok_ ? CU_TRUE : CU_FALSE, __LINE__, ut_msg_, __FILE__,  \
		                        "", fatal);                                                \
	} while (0)

#define UT_ASSERT_STR(actual, expected, want_equal, name, fatal)                                   \
	do {                                                                                       \
		const char *ut_a_ = (const char *)(actual);                                        \
		const char *ut_e_ = (const char *)(expected);                                      \
		int ut_eq_ = ut_a_ != NULL && ut_e_ != NULL && strcmp(ut_a_, ut_e_) == 0;          \
		char ut_msg_[1024];                                                                \
		snprintf(ut_msg_, sizeof(ut_msg_),                                                 \
		         "%s(%s, %s): got %s%.300s%s, want %s%s%.300s%s", name, #actual,           \
		         #expected, ut_a_ ? "\"" : "", ut_a_ ? ut_a_ : "(null)",                   \
		         ut_a_ ? "\"" : "", (want_equal) ? "" : "not ", ut_e_ ? "\"" : "",         \
		         ut_e_ ? ut_e_ : "(null)", ut_e_ ? "\"" : "");                             \
		CU_assertImplementation(ut_eq_ == (want_equal) ? CU_TRUE : CU_FALSE, __LINE__,     \
		                        ut_msg_, __FILE__, "", fatal);                             \
	} while (0)

#undef CU_ASSERT_EQUAL
#undef CU_ASSERT_EQUAL_FATAL
#undef CU_ASSERT_NOT_EQUAL
#undef CU_ASSERT_NOT_EQUAL_FATAL
#undef CU_ASSERT_STRING_EQUAL
#undef CU_ASSERT_STRING_EQUAL_FATAL
#undef CU_ASSERT_STRING_NOT_EQUAL
#undef CU_ASSERT_STRING_NOT_EQUAL_FATAL

#define CU_ASSERT_EQUAL(a, e)       UT_ASSERT_CMP(a, e, ==, "CU_ASSERT_EQUAL", CU_FALSE)
#define CU_ASSERT_EQUAL_FATAL(a, e) UT_ASSERT_CMP(a, e, ==, "CU_ASSERT_EQUAL_FATAL", CU_TRUE)
#define CU_ASSERT_NOT_EQUAL(a, e)   UT_ASSERT_CMP(a, e, !=, "CU_ASSERT_NOT_EQUAL", CU_FALSE)
#define CU_ASSERT_NOT_EQUAL_FATAL(a, e)                                                            \
	UT_ASSERT_CMP(a, e, !=, "CU_ASSERT_NOT_EQUAL_FATAL", CU_TRUE)
#define CU_ASSERT_STRING_EQUAL(a, e) UT_ASSERT_STR(a, e, 1, "CU_ASSERT_STRING_EQUAL", CU_FALSE)
#define CU_ASSERT_STRING_EQUAL_FATAL(a, e)                                                         \
	UT_ASSERT_STR(a, e, 1, "CU_ASSERT_STRING_EQUAL_FATAL", CU_TRUE)
#define CU_ASSERT_STRING_NOT_EQUAL(a, e)                                                           \
	UT_ASSERT_STR(a, e, 0, "CU_ASSERT_STRING_NOT_EQUAL", CU_FALSE)
#define CU_ASSERT_STRING_NOT_EQUAL_FATAL(a, e)                                                     \
	UT_ASSERT_STR(a, e, 0, "CU_ASSERT_STRING_NOT_EQUAL_FATAL", CU_TRUE)

#endif
