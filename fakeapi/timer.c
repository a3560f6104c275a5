/* timer.c -- the answers that wait, ordered by when each is due. */
#include "timer.h"

#include <stdlib.h>

#include "alloc.h"

/* A heap slot keeps its entry's key beside the pointer: a sift compares
 * keys in one array instead of following a pointer into each waiting
 * request (a cache miss each, at thousands of entries). */
struct slot {
	int64_t due_us;           /* the entry's due time */
	uint64_t order;           /* tie-break among equal due times: order of adding */
	struct fa_timer_entry *e; /* borrowed */
};

struct fa_timer {
	struct slot *v;      /* the heap: v[i]'s children are v[2i+1] and v[2i+2] */
	size_t n;            /* entries queued */
	size_t cap;          /* room in v */
	uint64_t next_order; /* the order the next added (or moved) entry gets */
};

/* Whether @a comes out before @b: earlier due time, then earlier order,
 * so that equal due times keep the order they were queued in. */
static bool before(const struct slot *a, const struct slot *b)
{
	if (a->due_us != b->due_us)
		return a->due_us < b->due_us;
	return a->order < b->order;
}

static void put(struct fa_timer *t, size_t i, struct slot x)
{
	t->v[i] = x;
	x.e->slot = i + 1;
}

/* Move @x, bound for index @i, towards the root while it comes before
 * its parent. */
static void sift_up(struct fa_timer *t, size_t i, struct slot x)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(&x, &t->v[parent]))
			break;
		put(t, i, t->v[parent]);
		i = parent;
	}
	put(t, i, x);
}

/* Move @x, bound for index @i, towards the leaves while a child comes
 * before it. */
static void sift_down(struct fa_timer *t, size_t i, struct slot x)
{
	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= t->n)
			break;
		if (child + 1 < t->n && before(&t->v[child + 1], &t->v[child]))
			child++;
		if (!before(&t->v[child], &x))
			break;
		put(t, i, t->v[child]);
		i = child;
	}
	put(t, i, x);
}

/* Put @x at index @i, whose entry changed or left, where the heap wants
 * it: only one of the two directions moves anything. */
static void fix(struct fa_timer *t, size_t i, struct slot x)
{
	if (i > 0 && before(&x, &t->v[(i - 1) / 2]))
		sift_up(t, i, x);
	else
		sift_down(t, i, x);
}

struct fa_timer *fa_timer_new(void)
{
	return fa_xcalloc(1, sizeof(struct fa_timer));
}

void fa_timer_free(struct fa_timer *t)
{
	if (t == NULL)
		return;
	free(t->v);
	free(t);
}

void fa_timer_add(struct fa_timer *t, struct fa_timer_entry *e, int64_t due_us)
{
	if (t->n == t->cap) {
		t->cap = t->cap > 0 ? 2 * t->cap : 64;
		t->v = fa_xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	e->due_us = due_us;
	t->n++;
	sift_up(t, t->n - 1, (struct slot){ .due_us = due_us, .order = t->next_order++, .e = e });
}

void fa_timer_remove(struct fa_timer *t, struct fa_timer_entry *e)
{
	size_t i;

	if (e->slot == 0)
		return;
	i = e->slot - 1;
	e->slot = 0;
	if (--t->n == i)
		return; /* it was the last one: nothing moves */
	fix(t, i, t->v[t->n]);
}

void fa_timer_move(struct fa_timer *t, struct fa_timer_entry *e, int64_t due_us)
{
	if (e->slot == 0)
		return;
	e->due_us = due_us;
	fix(t, e->slot - 1, (struct slot){ .due_us = due_us, .order = t->next_order++, .e = e });
}

struct fa_timer_entry *fa_timer_first(const struct fa_timer *t)
{
	return t->n > 0 ? t->v[0].e : NULL;
}

struct fa_timer_entry *fa_timer_pop_due(struct fa_timer *t, int64_t now_us)
{
	struct fa_timer_entry *e;

	if (t->n == 0 || t->v[0].due_us > now_us)
		return NULL;
	e = t->v[0].e;
	fa_timer_remove(t, e);
	return e;
}

size_t fa_timer_count(const struct fa_timer *t)
{
	return t->n;
}

bool fa_timer_queued(const struct fa_timer_entry *e)
{
	return e->slot != 0;
}
