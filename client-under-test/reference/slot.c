/* slot.c -- the shared scope's budget: requests in flight and tasks waiting, per scope. */
#include "slot.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"

/* One scope's counters. A client talks to a handful of scopes, so a list
 * searched under the lock is all it needs. */
struct scope {
	char *name;         /* "user:ops-team", owned */
	int in_flight;      /* slots held */
	int delayed;        /* tasks waiting out a pause or a backoff */
	bool open;          /* an answer came since the start or the last pause:
	                       every slot may be used; else one (a probe) */
	struct scope *next; /* next scope */
};

struct ref_slots {
	pthread_mutex_t mu;               /* guards the list and every scope */
	pthread_cond_t cv;                /* a slot was given back, or a cancel */
	const struct ref_scope_budget *b; /* the limits (static) */
	struct scope *head;               /* scopes seen so far */
};

struct ref_slots *ref_slots_new(const struct ref_scope_budget *b)
{
	struct ref_slots *s = fa_xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;

	pthread_mutex_init(&s->mu, NULL);
	/* Limits are monotonic instants, like every wait of the client. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->b = b;
	return s;
}

void ref_slots_free(struct ref_slots *s)
{
	struct scope *sc, *next;

	if (s == NULL)
		return;
	for (sc = s->head; sc != NULL; sc = next) {
		next = sc->next;
		free(sc->name);
		free(sc);
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* The record of @name, created on first use; the caller holds the lock. */
static struct scope *find(struct ref_slots *s, const char *name)
{
	struct scope *sc;

	for (sc = s->head; sc != NULL; sc = sc->next)
		if (strcmp(sc->name, name) == 0)
			return sc;
	sc = fa_xcalloc(1, sizeof(*sc));
	sc->name = fa_xstrdup(name);
	sc->next = s->head;
	s->head = sc;
	return sc;
}

enum ref_slot_rc ref_slots_take(struct ref_slots *s, const char *scope, const atomic_bool *cancel,
                                int64_t limit_mono_us)
{
	struct timespec ts = { .tv_sec = (time_t)(limit_mono_us / 1000000),
		               .tv_nsec = (long)(limit_mono_us % 1000000) * 1000 };
	enum ref_slot_rc rc = REF_SLOT_TAKEN;
	struct scope *sc;

	/* DEFECT nocap: no concurrency cap: every attempt goes on the wire
	 * at once, however many of the scope are already in flight. */
	if (defect_is("nocap"))
		return REF_SLOT_TAKEN;

	pthread_mutex_lock(&s->mu);
	sc = find(s, scope);
	for (;;) {
		if (cancel != NULL && atomic_load(cancel)) {
			rc = REF_SLOT_CANCELLED;
			break;
		}
		if (sc->in_flight < (sc->open ? s->b->max_concurrent_requests : 1)) {
			sc->in_flight++;
			break;
		}
		if (limit_mono_us != 0 && fa_clock_mono_us() >= limit_mono_us) {
			rc = REF_SLOT_TIMEOUT;
			break;
		}
		if (limit_mono_us != 0)
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		else
			pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void ref_slots_give(struct ref_slots *s, const char *scope, enum ref_slot_news news)
{
	struct scope *sc;

	if (defect_is("nocap")) /* nothing was taken */
		return;
	pthread_mutex_lock(&s->mu);
	sc = find(s, scope);
	if (sc->in_flight > 0)
		sc->in_flight--;
	if (news == REF_SLOT_ANSWERED)
		sc->open = true;
	else if (news == REF_SLOT_PAUSED)
		sc->open = false;
	/* Every waiter, not one: waiters of other scopes share the
	 * condition variable, and one woken for the wrong scope would keep
	 * the slot's rightful taker asleep. */
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

bool ref_slots_delay_enter(struct ref_slots *s, const char *scope)
{
	struct scope *sc;
	bool ok;

	pthread_mutex_lock(&s->mu);
	sc = find(s, scope);
	ok = sc->delayed < s->b->max_delayed_requests;
	if (ok)
		sc->delayed++;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

void ref_slots_delay_leave(struct ref_slots *s, const char *scope)
{
	struct scope *sc;

	pthread_mutex_lock(&s->mu);
	sc = find(s, scope);
	if (sc->delayed > 0)
		sc->delayed--;
	pthread_mutex_unlock(&s->mu);
}

void ref_slots_wake(struct ref_slots *s)
{
	/* Under the lock: a waiter checks its flag and starts waiting
	 * without letting go of it, so this broadcast cannot fall between
	 * the two. */
	pthread_mutex_lock(&s->mu);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}
