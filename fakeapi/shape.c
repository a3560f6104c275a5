/* shape.c -- the platform's 429 and 503 answers, rendered field by field. */
#include "shape.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"

const char *const fa_shape_names[] = {
	"rate_limit_cluster",   "ai_congested",   "ai_pacing_limited", "ai_provider_cooldown",
	"ai_deadline_exceeded", "pool_exhausted", "db_transient",      NULL,
};

struct fa_shape_state {
	uint64_t seed;
	uint64_t rng;     /* xorshift64* state, never 0 */
	int64_t until_us; /* the running cooldown ends here; -1 = none yet */
	int last_s;       /* length of the streak's last cooldown, s; 0 = no streak */
};

const char *fa_shape_str(enum fa_shape shape)
{
	if (shape <= FA_SHAPE_NONE || shape >= FA_SHAPE_COUNT)
		return "none";
	return fa_shape_names[shape - 1];
}

int fa_shape_status(enum fa_shape shape)
{
	switch (shape) {
	case FA_SHAPE_NONE:
	case FA_SHAPE_COUNT: return 0;
	case FA_SHAPE_POOL_EXHAUSTED:
	case FA_SHAPE_DB_TRANSIENT: return 503;
	default: return 429;
	}
}

int fa_shape_default_retry_after(enum fa_shape shape)
{
	switch (shape) {
	case FA_SHAPE_RATE_LIMIT_CLUSTER: return FA_SHAPE_CLUSTER_RA_S;
	case FA_SHAPE_AI_CONGESTED: return FA_SHAPE_CONGESTED_RA_S;
	case FA_SHAPE_AI_PACING_LIMITED: return FA_SHAPE_PACING_RA_S;
	case FA_SHAPE_AI_DEADLINE_EXCEEDED: return FA_SHAPE_DEADLINE_RA_S;
	default: return 0;
	}
}

/* splitmix64, to turn any seed (0 included) into a non-zero state; the
 * constant keeps this stream apart from the quota model's */
static uint64_t mix(uint64_t x)
{
	x ^= 0x5348415045ull; /* "SHAPE" */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x != 0 ? x : 1;
}

struct fa_shape_state *fa_shape_state_new(uint64_t seed)
{
	struct fa_shape_state *st = fa_xcalloc(1, sizeof(*st));

	st->seed = seed;
	fa_shape_state_reset(st);
	return st;
}

void fa_shape_state_free(struct fa_shape_state *st)
{
	free(st);
}

void fa_shape_state_reset(struct fa_shape_state *st)
{
	st->rng = mix(st->seed);
	st->until_us = -1;
	st->last_s = 0;
}

int fa_shape_draw_transient(struct fa_shape_state *st)
{
	uint64_t span = FA_SHAPE_TRANSIENT_MAX_S - FA_SHAPE_TRANSIENT_MIN_S + 1;
	uint64_t x = st->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	st->rng = x;
	return FA_SHAPE_TRANSIENT_MIN_S + (int)(((x * 0x2545f4914f6cdd1dull) >> 32) % span);
}

int fa_shape_cooldown(struct fa_shape_state *st, int base_s, int64_t now_us)
{
	int64_t left;
	int len;

	if (base_s < 1)
		base_s = 1;
	if (st->until_us >= 0 && now_us < st->until_us) {
		left = st->until_us - now_us;
		return (int)((left + 999999) / 1000000);
	}
	/* the platform's rate-limit contract: the next pause is longer while the
	 * cluster keeps failing, up to four times the first */
	len = st->last_s == 0 ? base_s : st->last_s * 2;
	if (len > FA_SHAPE_COOLDOWN_GROWTH * base_s)
		len = FA_SHAPE_COOLDOWN_GROWTH * base_s;
	st->last_s = len;
	st->until_us = now_us + (int64_t)len * 1000000;
	return len;
}

void fa_shape_cluster_ok(struct fa_shape_state *st)
{
	st->last_s = 0;
}

int fa_shape_deadline_budget(int platform_ms, const char *req_value)
{
	const char *p = req_value;
	long long v = 0;

	if (p == NULL)
		return platform_ms;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return platform_ms; /* empty, signed or not a number */
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v >= platform_ms) {
			/* not shorter: the rest cannot make it so; still check
			 * that the value is a number at all (it changes nothing) */
			return platform_ms;
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0' || v <= 0)
		return platform_ms;
	return (int)v;
}

static void add_header(struct fa_shape_answer *out, const char *name, const char *v)
{
	struct fa_shape_header *h = &out->headers[out->n_headers++];

	h->name = name;
	snprintf(h->value, sizeof(h->value), "%s", v);
}

static void add_int_header(struct fa_shape_answer *out, const char *name, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	add_header(out, name, buf);
}

void fa_shape_render(struct fa_shape_state *st, const struct fa_shape_spec *spec,
                     const char *req_deadline, int64_t now_us, int64_t wall_us,
                     struct fa_shape_answer *out)
{
	cJSON *e, *env;
	char msg[160], when[40];
	int ra = spec->retry_after_s > 0 ? spec->retry_after_s
	                                 : fa_shape_default_retry_after(spec->shape);
	int budget = 0;

	memset(out, 0, sizeof(*out));
	out->status = fa_shape_status(spec->shape);
	if (spec->shape == FA_SHAPE_POOL_EXHAUSTED || spec->shape == FA_SHAPE_DB_TRANSIENT)
		ra = fa_shape_draw_transient(st);
	else if (spec->shape == FA_SHAPE_AI_PROVIDER_COOLDOWN)
		ra = fa_shape_cooldown(
		        st, spec->cooldown_s > 0 ? spec->cooldown_s : FA_SHAPE_COOLDOWN_BASE_S,
		        now_us);
	if (ra < 1)
		ra = 1;
	out->retry_after_s = ra;
	add_int_header(out, "Retry-After", ra);

	env = cJSON_CreateObject();
	if (spec->shape == FA_SHAPE_AI_PACING_LIMITED)
		cJSON_AddFalseToObject(env, "success");
	e = cJSON_AddObjectToObject(env, "error");
	switch (spec->shape) {
	case FA_SHAPE_RATE_LIMIT_CLUSTER:
		snprintf(msg, sizeof(msg),
		         "Rate limit exceeded by the model cluster. "
		         "Retry after %d seconds.",
		         ra);
		cJSON_AddStringToObject(e, "type", "rate_limit_exceeded");
		cJSON_AddStringToObject(e, "code", "rate_limit_exceeded");
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddNumberToObject(e, "providerStatusCode", 429);
		cJSON_AddNumberToObject(e, "retryAfter", ra);
		break;
	case FA_SHAPE_AI_CONGESTED:
		add_header(out, "X-AI-Admission", "shed");
		snprintf(msg, sizeof(msg),
		         "The model cluster is congested; the request was "
		         "not run. Retry after %d seconds.",
		         ra);
		cJSON_AddStringToObject(e, "code", "ai_congested");
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddNumberToObject(e, "retryAfter", ra);
		break;
	case FA_SHAPE_AI_PACING_LIMITED:
		fa_clock_rfc3339_s(wall_us + (int64_t)ra * 1000000, when, sizeof(when));
		snprintf(msg, sizeof(msg), "AI quota pacing: the window is used up until %s.",
		         when);
		cJSON_AddStringToObject(e, "code", "ai_pacing_limited");
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddStringToObject(e, "reason", FA_SHAPE_PACING_REASON);
		cJSON_AddTrueToObject(e, "overageDenied");
		cJSON_AddStringToObject(e, "resetAt", when);
		break;
	case FA_SHAPE_AI_PROVIDER_COOLDOWN:
		snprintf(msg, sizeof(msg),
		         "The model cluster is cooling down after repeated "
		         "errors. Retry after %d seconds.",
		         ra);
		cJSON_AddStringToObject(e, "code", "ai_provider_cooldown");
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddNumberToObject(e, "retryAfter", ra);
		break;
	case FA_SHAPE_AI_DEADLINE_EXCEEDED:
		budget = fa_shape_deadline_budget(spec->deadline_ms > 0 ? spec->deadline_ms
		                                                        : FA_SHAPE_DEADLINE_MS,
		                                  req_deadline);
		add_int_header(out, "X-AI-Deadline-Ms", budget);
		snprintf(msg, sizeof(msg),
		         "The request did not finish within its %d ms "
		         "deadline. Retry after %d seconds.",
		         budget, ra);
		cJSON_AddStringToObject(e, "type", "rate_limit_exceeded");
		cJSON_AddStringToObject(e, "code", "ai_deadline_exceeded");
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddNumberToObject(e, "retryAfter", ra);
		break;
	case FA_SHAPE_POOL_EXHAUSTED:
	case FA_SHAPE_DB_TRANSIENT:
		/* the platform's example, member for member */
		cJSON_AddStringToObject(e, "code", fa_shape_str(spec->shape));
		cJSON_AddStringToObject(e, "type", "server_error");
		cJSON_AddNumberToObject(e, "retryAfter", ra);
		break;
	default: break;
	}
	out->body = env;
}

void fa_shape_answer_release(struct fa_shape_answer *out)
{
	cJSON_Delete(out->body);
	memset(out, 0, sizeof(*out));
}
