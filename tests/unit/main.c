/* main.c -- CUnit runner: every tests/unit/test_<module>.c registers one suite. */
#include <stdio.h>

#include <CUnit/Basic.h>

/*
 * Every tests/unit/test_<name>.c, each once, in run order; the file defines
 * test_<name>_register(). A listed name without its file fails the link
 * (the declarations are strong), and ci/unit-suites, which the build runs
 * before linking, fails on a test file this list leaves out.
 */
#define TEST_MODULES(X)                                                                            \
	X(retry_after)                                                                             \
	X(client_retry_after)                                                                      \
	X(scenario)                                                                                \
	X(task_spec)                                                                               \
	X(journal)                                                                                 \
	X(attempt)                                                                                 \
	X(route)                                                                                   \
	X(provider)                                                                                \
	X(check)                                                                                   \
	X(expect)                                                                                  \
	X(report)                                                                                  \
	X(report_html)                                                                             \
	X(exec)                                                                                    \
	X(wave)                                                                                    \
	X(tally)                                                                                   \
	X(stdio)                                                                                   \
	X(store)                                                                                   \
	X(fault)                                                                                   \
	X(evidence)                                                                                \
	X(write)                                                                                   \
	X(event)                                                                                   \
	X(settle)                                                                                  \
	X(budget)                                                                                  \
	X(escalation)                                                                              \
	X(cancel)                                                                                  \
	X(circuit)                                                                                 \
	X(concurrency)                                                                             \
	X(pacing)                                                                                  \
	X(interruption)                                                                            \
	X(canary)                                                                                  \
	X(grade)                                                                                   \
	X(recap)                                                                                   \
	X(known_failing)                                                                           \
	X(quota)                                                                                   \
	X(quota_tokens)                                                                            \
	X(shape)                                                                                   \
	X(chat)                                                                                    \
	X(sse)                                                                                     \
	X(messages)                                                                                \
	X(follow)                                                                                  \
	X(livefeed)                                                                                \
	X(har)                                                                                     \
	X(redact)                                                                                  \
	X(recording)                                                                               \
	X(coverage)                                                                                \
	X(clock)                                                                                   \
	X(suggest)                                                                                 \
	X(metrics)                                                                                 \
	X(timer)                                                                                   \
	X(target)

#define DECLARE(m) void test_##m##_register(void);
TEST_MODULES(DECLARE)
#undef DECLARE

int main(void)
{
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: cannot initialise CUnit: %s\n", CU_get_error_msg());
		return 2;
	}
#define CALL(m) test_##m##_register();
	TEST_MODULES(CALL)
#undef CALL
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	if (CU_get_error() != CUE_SUCCESS)
		failures++;
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}
