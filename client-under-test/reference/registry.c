/* registry.c -- the local registry of pauses, one next_allowed_at per scope
 * (the retry-safety guide). */
#include "registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* One scope's record. A client talks to a handful of scopes, so a list
 * searched under the lock is all it needs. */
struct entry {
	char *scope;        /* "user:ops-team", owned */
	struct ref_pause p; /* the pause in force */
	struct entry *next; /* next scope */
};

struct ref_registry {
	pthread_mutex_t mu; /* guards the list and every entry */
	struct entry *head; /* scopes seen so far */
};

struct ref_registry *ref_registry_new(void)
{
	struct ref_registry *reg = fa_xcalloc(1, sizeof(*reg));

	pthread_mutex_init(&reg->mu, NULL);
	return reg;
}

void ref_registry_free(struct ref_registry *reg)
{
	struct entry *e, *next;

	if (reg == NULL)
		return;
	for (e = reg->head; e != NULL; e = next) {
		next = e->next;
		free(e->scope);
		free(e);
	}
	pthread_mutex_destroy(&reg->mu);
	free(reg);
}

/* The entry of @scope, or NULL; the caller holds the lock. */
static struct entry *find(struct ref_registry *reg, const char *scope)
{
	for (struct entry *e = reg->head; e != NULL; e = e->next)
		if (strcmp(e->scope, scope) == 0)
			return e;
	return NULL;
}

void ref_registry_raise(struct ref_registry *reg, const char *scope, int64_t until_us,
                        int64_t window_us)
{
	struct entry *e;

	pthread_mutex_lock(&reg->mu);
	e = find(reg, scope);
	if (e == NULL) {
		e = fa_xcalloc(1, sizeof(*e));
		e->scope = fa_xstrdup(scope);
		e->next = reg->head;
		reg->head = e;
	}
	if (until_us > e->p.until_us) {
		e->p.until_us = until_us;
		e->p.window_us = window_us;
	}
	pthread_mutex_unlock(&reg->mu);
}

struct ref_pause ref_registry_get(struct ref_registry *reg, const char *scope)
{
	struct ref_pause p = { 0, 0 };
	struct entry *e;

	pthread_mutex_lock(&reg->mu);
	e = find(reg, scope);
	if (e != NULL)
		p = e->p;
	pthread_mutex_unlock(&reg->mu);
	return p;
}
