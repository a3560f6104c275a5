/* provider_fixture.c -- a provider played from scenario text and asked without a socket. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "clock.h"
#include "header.h"
#include "provider_fixture.h"

struct fa_provider *fx_provider_start(const char *text, const char *name, uint64_t seed,
                                      struct fa_scenario **sc, struct fa_journal **j)
{
	struct fa_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fa_scenario_parse(text, strlen(text), name, sc, &err), FA_OK);
	CU_ASSERT_EQUAL_FATAL(fa_journal_new(NULL, j, &err), FA_OK);
	return fa_provider_new(*sc, *j, seed, fa_clock_mono_us());
}

void fx_provider_stop(struct fa_provider *p, struct fa_journal *j, struct fa_scenario *sc)
{
	fa_provider_free(p);
	fa_journal_free(j);
	fa_scenario_free(sc);
}

void fx_decide_as(struct fa_provider *p, const char *secret, const char *method, const char *path,
                  const char *body, struct fa_resp *r)
{
	char auth[64];
	struct fa_header h = { .name = "Authorization", .value = auth };
	struct fa_req q = { .method = method,
		            .path = path,
		            .conn_id = 1,
		            .headers = &h,
		            .n_headers = 1,
		            .body = body,
		            .body_len = body != NULL ? strlen(body) : 0,
		            .t_arrival_us = fa_provider_now_us(p),
		            .wall_us = fa_clock_wall_us() };

	snprintf(auth, sizeof(auth), "Bearer %s", secret);
	memset(r, 0, sizeof(*r));
	fa_provider_decide(p, &q, r);
}

void fx_decide(struct fa_provider *p, const char *method, const char *path, const char *body,
               struct fa_resp *r)
{
	fx_decide_as(p, "s1", method, path, body, r);
}

void fx_done(struct fa_provider *p, struct fa_resp *r)
{
	fa_provider_finish(p, r, fa_provider_now_us(p), fa_provider_now_us(p),
	                   FA_DELIVERED_COMPLETE);
	fa_resp_release(r);
}

const char *fx_resp_header(const struct fa_resp *r, const char *name)
{
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}
