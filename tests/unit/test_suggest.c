/* test_suggest.c -- did-you-mean hints: the nearest known word, or none. */
#include <stddef.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suggest.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const response_keys[] = { "times",       "status",   "headers", "body",
	                                     "retry_after", "delay_ms", "fault" };
static const char *const check_ids[] = { "attempts.bounded", "wait.retry_after", "wait.scope_pause",
	                                 "wait.jitter",      "wait.pacing",      "cancel.quiet" };

static void suggest__letter_case_alone_is_a_slip(void)
{
	CU_ASSERT_STRING_EQUAL(fa_suggest("Status", response_keys, N(response_keys)), "status");
	CU_ASSERT_STRING_EQUAL(fa_suggest("HEADERS", response_keys, N(response_keys)), "headers");
}

static void suggest__one_edit_or_swap_finds_the_word(void)
{
	CU_ASSERT_STRING_EQUAL(fa_suggest("stauts", response_keys, N(response_keys)), "status");
	CU_ASSERT_STRING_EQUAL(fa_suggest("tims", response_keys, N(response_keys)), "times");
	CU_ASSERT_STRING_EQUAL(fa_suggest("bodyy", response_keys, N(response_keys)), "body");
	CU_ASSERT_STRING_EQUAL(fa_suggest("retry-after", response_keys, N(response_keys)),
	                       "retry_after");
	CU_ASSERT_STRING_EQUAL(fa_suggest("wait.jiter", check_ids, N(check_ids)), "wait.jitter");
	CU_ASSERT_STRING_EQUAL(fa_suggest("wait.retryafter", check_ids, N(check_ids)),
	                       "wait.retry_after");
}

static void suggest__two_edits_need_a_long_word(void)
{
	/* 2 edits in 6 letters is a third: near; in 5 letters it is not */
	CU_ASSERT_STRING_EQUAL(fa_suggest("sdatos", response_keys, N(response_keys)), "status");
	CU_ASSERT_STRING_EQUAL(fa_suggest("dlay_mss", response_keys, N(response_keys)), "delay_ms");
	CU_ASSERT_PTR_NULL(fa_suggest("bdoyy", response_keys, N(response_keys)));
	CU_ASSERT_PTR_NULL(fa_suggest("fa", response_keys, N(response_keys)));
}

static void suggest__far_words_get_no_hint(void)
{
	CU_ASSERT_PTR_NULL(fa_suggest("comment", response_keys, N(response_keys)));
	CU_ASSERT_PTR_NULL(fa_suggest("wait.cap", check_ids, N(check_ids)));
	CU_ASSERT_PTR_NULL(fa_suggest("x", response_keys, N(response_keys)));
	/* three edits are never a slip, however long the word */
	CU_ASSERT_PTR_NULL(fa_suggest("attempts.bnddd", check_ids, N(check_ids)));
}

static void suggest__the_nearest_wins_then_the_first_listed(void)
{
	static const char *const close[] = { "abcd", "abce", "abcf" };
	static const char *const nearer[] = { "abxx", "abcx", "abc" };

	CU_ASSERT_STRING_EQUAL(fa_suggest("abcz", close, N(close)), "abcd");
	CU_ASSERT_STRING_EQUAL(fa_suggest("abc_", nearer, N(nearer)), "abcx");
	CU_ASSERT_STRING_EQUAL(fa_suggest("abc", nearer, N(nearer)), "abc");
}

static void suggest__empty_null_and_overlong_are_no_hint(void)
{
	static const char *const with_null[] = { NULL, "", "status" };
	char longer[FA_SUGGEST_MAX_LEN + 2];

	CU_ASSERT_STRING_EQUAL(fa_suggest("statu", with_null, N(with_null)), "status");
	CU_ASSERT_PTR_NULL(fa_suggest("", response_keys, N(response_keys)));
	CU_ASSERT_PTR_NULL(fa_suggest(NULL, response_keys, N(response_keys)));
	CU_ASSERT_PTR_NULL(fa_suggest("status", NULL, 0));
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CU_ASSERT_PTR_NULL(fa_suggest(longer, response_keys, N(response_keys)));
	{
		const char *const only[] = { longer };

		CU_ASSERT_PTR_NULL(fa_suggest(longer + 1, only, 1));
	}
}

void test_suggest_register(void)
{
	CU_pSuite s = CU_add_suite("suggest", NULL, NULL);

	CU_add_test(s, "suggest__letter_case_alone_is_a_slip",
	            suggest__letter_case_alone_is_a_slip);
	CU_add_test(s, "suggest__one_edit_or_swap_finds_the_word",
	            suggest__one_edit_or_swap_finds_the_word);
	CU_add_test(s, "suggest__two_edits_need_a_long_word", suggest__two_edits_need_a_long_word);
	CU_add_test(s, "suggest__far_words_get_no_hint", suggest__far_words_get_no_hint);
	CU_add_test(s, "suggest__the_nearest_wins_then_the_first_listed",
	            suggest__the_nearest_wins_then_the_first_listed);
	CU_add_test(s, "suggest__empty_null_and_overlong_are_no_hint",
	            suggest__empty_null_and_overlong_are_no_hint);
}
