/* quota_answer.c -- the quota model's word on one answer: admission, the refusals, settling. */
#include "quota_answer.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "clock.h"
#include "fault.h"

/* The rate-limit headers of decision @d in the scenario's style, each
 * unless the answer already carries a header of that name. */
static void quota_headers(const struct fa_scenario *sc, struct fa_resp *resp,
                          const struct fa_quota_decision *d)
{
	struct fa_quota_header h[FA_QUOTA_MAX_HEADERS];
	size_t n = fa_quota_rate_headers(sc->quota.headers, d, fa_clock_wall_us(), h);

	for (size_t i = 0; i < n; i++)
		if (!fa_resp_has_header(resp, h[i].name))
			fa_resp_add_header(resp, h[i].name, h[i].value);
}

bool fa_quota_answer_admit(struct fa_quota *q, const struct fa_scenario *sc, struct fa_resp *resp,
                           int64_t cost, int64_t now)
{
	struct fa_attempt *a = &resp->attempt;
	struct fa_quota_decision *d = &resp->quota;
	char buf[32];
	cJSON *body;

	if (fa_quota_admit(q, a->key, a->user, cost, now, d) != FA_OK)
		return true; /* cannot happen: the model knows every key */
	a->quota = fa_quota_decision_str(d);
	if (d->admitted) {
		resp->quota_admitted = true;
		return true;
	}
	a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_QUOTA));
	if (d->over_capacity) {
		/* no pause helps: no Retry-After */
		quota_headers(sc, resp, d);
		body = fa_quota_over_capacity_body(d);
		fa_resp_set_json(resp, 400, body);
		cJSON_Delete(body);
		a->status = 400;
		return false;
	}
	snprintf(buf, sizeof(buf), "%d", d->retry_after_s);
	fa_resp_add_header(resp, "Retry-After", buf);
	fa_resp_add_retry_after_ms(resp, sc->retry_after_ms, d->retry_after_ms);
	fa_resp_add_header(resp, "X-RateLimit-Scope", fa_quota_scope_str(d->scope));
	quota_headers(sc, resp, d);
	body = fa_quota_error_body(d);
	fa_resp_set_json(resp, 429, body);
	cJSON_Delete(body);
	a->status = 429;
	a->retry_after = fa_xstrdup(buf);
	/* the exact pause when the answer names it in ms */
	a->pause_until_us = now + (sc->retry_after_ms ? d->retry_after_ms * 1000
	                                              : (int64_t)d->retry_after_s * 1000000);
	fa_attempt_pause_from(a, sc->retry_after_ms && d->retry_after_ms * 1000 !=
	                                                       (int64_t)d->retry_after_s * 1000000
	                                 ? "retry-after-ms"
	                                 : "retry-after");
	return false;
}

void fa_quota_answer_settle(struct fa_quota *q, const struct fa_scenario *sc, struct fa_resp *resp,
                            bool refund, int64_t now)
{
	struct fa_attempt *a = &resp->attempt;

	if (refund || resp->status == 429 || resp->status == 503) {
		fa_quota_refund(q, &resp->quota, now);
		free(a->quota);
		a->quota = fa_quota_decision_str(&resp->quota);
	}
	quota_headers(sc, resp, &resp->quota);
}
