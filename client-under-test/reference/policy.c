/* policy.c -- request classes, what is retryable, and how long to wait, as data
 * (the retry-safety guide). */
#include "policy.h"

#include <pthread.h>
#include <string.h>

#include "defect.h"
#include "retry_hint.h"

/*
 * The numbers follow the retry-safety guide's example table: reads get a small budget,
 * idempotent writes a smaller one without 500 (the write may have
 * happened), and an uncertain write no retry at all (it needs a status
 * check or a person, not persistence). A task without a known class gets
 * read's numbers; when it is not a safe read it is treated as a possible
 * write: only the statuses that say the request was not processed, and
 * no retry after a transport error.
 */
static const struct ref_class classes[] = {
	{ "read", 4, 90, 1000, 60000, { 408, 429, 500, 502, 503, 504, 0 }, true },
	{ "idempotent_write", 3, 120, 1000, 60000, { 408, 429, 502, 503, 504, 0 }, true },
	{ "uncertain_write", 1, 0, 0, 0, { 0 }, false },
	{ "default", 4, 90, 1000, 60000, { 408, 429, 503, 0 }, false },
};
#define NCLASSES      ((int)(sizeof(classes) / sizeof(classes[0])))
#define READ_CLASS    (&classes[0])
#define DEFAULT_CLASS (&classes[NCLASSES - 1])

/* The retry-safety guide's shared_scope: what one scope's tasks may do together. */
static const struct ref_scope_budget shared_scope = {
	.max_delayed_requests = 25,
	.max_concurrent_requests = 2,
};

/* splitmix64: tiny, good enough for jitter, and one state under a mutex
 * keeps a fixed FAKEAPI_SEED reproducible across threads' draws. */
static pthread_mutex_t rng_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_state = 0x853c49e6748fea9bULL;

const struct ref_class *ref_policy_class(const char *name, const char *method)
{
	for (int i = 0; name != NULL && i < NCLASSES; i++)
		if (strcmp(classes[i].name, name) == 0)
			return &classes[i];
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	    strcmp(method, "OPTIONS") == 0)
		return READ_CLASS;
	return DEFAULT_CLASS;
}

const struct ref_scope_budget *ref_policy_scope(void)
{
	return &shared_scope;
}

bool ref_policy_retryable(const struct ref_class *c, long status)
{
	/* DEFECT retry4xx: every 4xx counts as retryable, so 400 and 422
	 * are repeated with backoff instead of failing at once. */
	if (defect_is("retry4xx") && status >= 400 && status <= 499)
		return true;

	/* DEFECT giveup: a 503 counts as fatal, with or without Retry-After
	 * (a "Retry-After: 0" too), so the task ends failed at the first
	 * answer its budget had room to retry. */
	if (defect_is("giveup") && status == 503)
		return false;

	for (int i = 0; i < REF_MAX_STATUSES && c->retry_status[i] != 0; i++)
		if (c->retry_status[i] == status)
			return true;
	return false;
}

static uint64_t rng_next(void)
{
	uint64_t z;

	pthread_mutex_lock(&rng_mu);
	rng_state += 0x9e3779b97f4a7c15ULL;
	z = rng_state;
	pthread_mutex_unlock(&rng_mu);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform(0, @max) inclusive, µs; the modulo bias is below 2^-40 for any
 * wait this client makes. */
static int64_t uniform_us(int64_t max)
{
	if (max <= 0)
		return 0;
	return (int64_t)(rng_next() % ((uint64_t)max + 1));
}

void ref_policy_seed(uint64_t seed)
{
	pthread_mutex_lock(&rng_mu);
	rng_state = seed;
	pthread_mutex_unlock(&rng_mu);
}

int64_t ref_policy_backoff_us(const struct ref_class *c, int retry, int64_t max_us)
{
	int64_t ceiling = (int64_t)c->base_ms * 1000;
	int64_t cap = (int64_t)c->cap_ms * 1000;
	int64_t d;

	for (int i = 1; i < retry && ceiling < cap; i++)
		ceiling *= 2;
	if (ceiling > cap)
		ceiling = cap;
	/* A backoff is a choice within a range: when the wait budget left
	 * is shorter than the range, draw within what is left. */
	if (ceiling > max_us)
		ceiling = max_us;
	d = uniform_us(ceiling);
	return d < REF_BACKOFF_FLOOR_US ? REF_BACKOFF_FLOOR_US : d;
}

int64_t ref_policy_window_us(int64_t pause_us)
{
	int64_t w = pause_us / 2;

	if (w < REF_WINDOW_MIN_US)
		return REF_WINDOW_MIN_US;
	if (w > REF_WINDOW_MAX_US)
		return REF_WINDOW_MAX_US;
	return w;
}

int64_t ref_policy_jitter_us(int64_t window_us)
{
	/* DEFECT nojitter: no random part; every task a pause held wakes at
	 * the very instant the pause ends, in one wave. */
	if (defect_is("nojitter"))
		return 0;

	return uniform_us(window_us);
}

bool ref_policy_retry_after(const char *value, int64_t seen_wall_us, int64_t seen_mono_us,
                            int64_t *until_mono_us, int64_t *window_us)
{
	int64_t pause;

	/* The date forms name a wall-clock instant; carry the distance over
	 * to the monotonic clock so a clock step later cannot move it. */
	if (!ref_retry_hint_pause_us(value, seen_wall_us, &pause))
		return false;
	if (pause <= 0)
		return false;
	*until_mono_us = seen_mono_us + pause;
	*window_us = ref_policy_window_us(pause);
	return true;
}

const char *ref_reason_str(enum ref_reason r)
{
	switch (r) {
	case REF_REASON_RETRY_AFTER: return "retry_after";
	case REF_REASON_SCOPE_PAUSE: return "scope_pause";
	case REF_REASON_BACKOFF: return "backoff";
	case REF_REASON_NONE: break;
	}
	return "none";
}
