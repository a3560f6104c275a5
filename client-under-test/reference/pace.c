/* pace.c -- the client's own pace: request and token buckets per key
 * (the LLM rate-limit guide's RPM and TPM). */
#include "pace.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"

/* Rounding slack, in units: a level this close to the cost is enough, so
 * that a wait computed to the µs never ends a hair short and loops. */
#define SLACK 1e-6

/* One token bucket. */
struct bucket {
	double cap;    /* capacity (the published limit), units; 0 = no limit */
	double per_us; /* refill, units per µs (already 2% slow) */
	double level;  /* units in it at at_us, 0..cap */
	int64_t at_us; /* monotonic: when level was computed */
};

/* The two buckets of one key. */
struct key_buckets {
	char *key;                 /* the key id, owned */
	struct ref_pace_spec spec; /* the limits the buckets were made with */
	struct bucket req;         /* requests */
	struct bucket tok;         /* tokens */
	struct key_buckets *next;  /* the next key */
};

struct ref_pace {
	pthread_mutex_t mu;       /* guards everything below */
	pthread_cond_t cv;        /* waiters sleep here (monotonic clock) */
	struct key_buckets *keys; /* every key seen, owned */
};

struct ref_pace *ref_pace_new(void)
{
	struct ref_pace *p = fa_xcalloc(1, sizeof(*p));
	pthread_condattr_t ca;

	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	return p;
}

void ref_pace_free(struct ref_pace *p)
{
	struct key_buckets *k, *next;

	if (p == NULL)
		return;
	for (k = p->keys; k != NULL; k = next) {
		next = k->next;
		free(k->key);
		free(k);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* Set @b to @limit units per @period_s, keeping its level up to the new
 * capacity (a new bucket starts full). */
static void bucket_set(struct bucket *b, int64_t limit, double period_s, int64_t now, bool fresh)
{
	b->cap = (double)limit;
	b->per_us = limit > 0 ? (double)limit / (period_s * (1.0 + REF_PACE_MARGIN) * 1e6) : 0;
	if (fresh || b->level > b->cap)
		b->level = b->cap;
	b->at_us = now;
}

static void refill(struct bucket *b, int64_t now)
{
	if (b->cap > 0 && now > b->at_us) {
		b->level += (double)(now - b->at_us) * b->per_us;
		if (b->level > b->cap)
			b->level = b->cap;
	}
	b->at_us = now;
}

/* µs until @b holds @cost (0 when it does now or sets no limit). */
static int64_t until_room(const struct bucket *b, double cost)
{
	if (b->cap <= 0 || b->level + SLACK >= cost)
		return 0;
	return (int64_t)ceil((cost - b->level) / b->per_us) + 1;
}

/* @key's buckets under @spec, refilled to @now; created when new. Call
 * with p->mu held. */
static struct key_buckets *buckets(struct ref_pace *p, const char *key,
                                   const struct ref_pace_spec *spec, int64_t now)
{
	struct key_buckets *k;
	bool fresh = false;

	for (k = p->keys; k != NULL; k = k->next)
		if (strcmp(k->key, key) == 0)
			break;
	if (k == NULL) {
		k = fa_xcalloc(1, sizeof(*k));
		k->key = fa_xstrdup(key);
		k->next = p->keys;
		p->keys = k;
		fresh = true;
	}
	refill(&k->req, now);
	refill(&k->tok, now);
	if (fresh || k->spec.rpm != spec->rpm || k->spec.tpm != spec->tpm ||
	    k->spec.period_s != spec->period_s) {
		bucket_set(&k->req, spec->rpm, spec->period_s, now, fresh || k->spec.rpm == 0);
		bucket_set(&k->tok, spec->tpm, spec->period_s, now, fresh || k->spec.tpm == 0);
		k->spec = *spec;
	}
	return k;
}

enum ref_pace_rc ref_pace_wait(struct ref_pace *p, const char *key,
                               const struct ref_pace_spec *spec, int64_t tokens,
                               const atomic_bool *cancel, int64_t limit_mono_us, int64_t *waited_us)
{
	int64_t start = fa_clock_mono_us();
	enum ref_pace_rc rc;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		int64_t now = fa_clock_mono_us(), wait, w2, due;
		struct key_buckets *k = buckets(p, key, spec, now);
		struct timespec ts;

		if (cancel != NULL && atomic_load(cancel)) {
			rc = REF_PACE_CANCELLED;
			break;
		}
		if (k->tok.cap > 0 && (double)tokens > k->tok.cap) {
			rc = REF_PACE_TOO_BIG;
			break;
		}
		wait = until_room(&k->req, 1);
		w2 = until_room(&k->tok, (double)tokens);
		if (w2 > wait)
			wait = w2;
		if (wait == 0) {
			rc = REF_PACE_READY;
			break;
		}
		due = now + wait;
		if (limit_mono_us != 0 && due > limit_mono_us) {
			rc = REF_PACE_TIMEOUT;
			break;
		}
		ts.tv_sec = (time_t)(due / 1000000);
		ts.tv_nsec = (long)(due % 1000000) * 1000;
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	if (waited_us != NULL)
		*waited_us = fa_clock_mono_us() - start;
	return rc;
}

bool ref_pace_take(struct ref_pace *p, const char *key, const struct ref_pace_spec *spec,
                   int64_t tokens)
{
	struct key_buckets *k;
	bool ok;

	pthread_mutex_lock(&p->mu);
	k = buckets(p, key, spec, fa_clock_mono_us());
	ok = until_room(&k->req, 1) == 0 && until_room(&k->tok, (double)tokens) == 0 &&
	     !(k->tok.cap > 0 && (double)tokens > k->tok.cap);
	if (ok) {
		if (k->req.cap > 0)
			k->req.level -= 1;
		if (k->tok.cap > 0)
			k->tok.level -= (double)tokens;
	}
	pthread_mutex_unlock(&p->mu);
	return ok;
}

void ref_pace_wake(struct ref_pace *p)
{
	pthread_mutex_lock(&p->mu);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}
