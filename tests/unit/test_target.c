/* test_target.c -- the request target's path and what makes a request malformed. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "target.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void path_of_absolute_form(void)
{
	CU_ASSERT_STRING_EQUAL(fa_target_path("/v1/x"), "/v1/x");
	CU_ASSERT_STRING_EQUAL(fa_target_path("http://127.0.0.1:8080/v1/x"), "/v1/x");
	CU_ASSERT_STRING_EQUAL(fa_target_path("HTTPS://api.example/v1/x?a=1"), "/v1/x?a=1");
	CU_ASSERT_STRING_EQUAL(fa_target_path("http://api.example"), "/");
	CU_ASSERT_STRING_EQUAL(fa_target_path("*"), "*");
}

static void framing_and_target_checks(void)
{
	struct fa_header host = { "Host", "x" };
	struct fa_header ok[] = { host, { "Content-Length", "3" }, { "content-length", "3" } };
	struct fa_header two[] = { host, { "Content-Length", "3" }, { "Content-Length", "5" } };
	struct fa_header te[] = { host,
		                  { "Content-Length", "3" },
		                  { "Transfer-Encoding", "chunked" } };
	struct fa_header te_only[] = { host, { "Transfer-Encoding", "chunked" } };

	CU_ASSERT_PTR_NULL(
	        fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.1", ok, N(ok), "/_fakeapi/"));
	CU_ASSERT_PTR_NULL(fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.1", te_only, N(te_only),
	                                       "/_fakeapi/"));
	CU_ASSERT_PTR_NULL(
	        fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.0", NULL, 0, "/_fakeapi/"));
	CU_ASSERT_STRING_EQUAL(
	        fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.1", NULL, 0, "/_fakeapi/"),
	        "an HTTP/1.1 request without a Host header (RFC 9112, section 3.2)");
	CU_ASSERT_STRING_EQUAL(
	        fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.1", two, N(two), "/_fakeapi/"),
	        "two different Content-Length values (RFC 9112, section 6.3)");
	CU_ASSERT_STRING_EQUAL(
	        fa_target_malformed("/v1/x", "/v1/x", "HTTP/1.1", te, N(te), "/_fakeapi/"),
	        "Content-Length together with Transfer-Encoding (RFC 9112, section 6.3)");
	CU_ASSERT_STRING_EQUAL(
	        fa_target_malformed("/v1/x%00y", "/v1/x", "HTTP/1.1", &host, 1, "/_fakeapi/"),
	        "a path that holds %00, a NUL byte");
	CU_ASSERT_PTR_NULL(
	        fa_target_malformed("/v1/x?q=%00", "/v1/x", "HTTP/1.1", &host, 1, "/_fakeapi/"));
	CU_ASSERT_PTR_NOT_NULL(
	        fa_target_malformed("/v1/../x", "/v1/../x", "HTTP/1.1", &host, 1, "/_fakeapi/"));
	CU_ASSERT_PTR_NOT_NULL(
	        fa_target_malformed("/v1/%2e/x", "/v1/./x", "HTTP/1.1", &host, 1, "/_fakeapi/"));
	CU_ASSERT_PTR_NOT_NULL(
	        fa_target_malformed("/v1/x/..", "/v1/x/..", "HTTP/1.1", &host, 1, "/_fakeapi/"));
	CU_ASSERT_PTR_NULL(fa_target_malformed("/v1/..x/.y", "/v1/..x/.y", "HTTP/1.1", &host, 1,
	                                       "/_fakeapi/"));
	CU_ASSERT_STRING_EQUAL(
	        fa_target_malformed("/%5Ffakeapi/health", "/_fakeapi/health", "HTTP/1.1", &host, 1,
	                            "/_fakeapi/"),
	        "a path that spells the reserved /_fakeapi/ prefix in percent-encoding");
	CU_ASSERT_PTR_NULL(fa_target_malformed("/_fakeapi/health", "/_fakeapi/health", "HTTP/1.1",
	                                       &host, 1, "/_fakeapi/"));
	CU_ASSERT_PTR_NULL(fa_target_malformed("http://h/_fakeapi/health", "/_fakeapi/health",
	                                       "HTTP/1.1", &host, 1, "/_fakeapi/"));
}

void test_target_register(void)
{
	CU_pSuite s = CU_add_suite("target", NULL, NULL);

	CU_add_test(s, "target__path_of_absolute_form", path_of_absolute_form);
	CU_add_test(s, "target__framing_and_target_checks", framing_and_target_checks);
}
