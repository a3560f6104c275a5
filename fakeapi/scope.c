/* scope.c -- per-scope state: the pause in force and requests in flight. */
#include "scope.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* One scope's state. */
struct entry {
	char *name;          /* owned: "user:ops-team" */
	int64_t pause_until; /* µs since start; -1 none */
	int in_flight;       /* requests in flight now */
};

struct fa_scopes {
	struct entry *e; /* owned; few scopes per scenario, so a plain array */
	size_t n;
};

struct fa_scopes *fa_scopes_new(void)
{
	return fa_xcalloc(1, sizeof(struct fa_scopes));
}

void fa_scopes_free(struct fa_scopes *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].name);
	free(s->e);
	free(s);
}

static struct entry *get(struct fa_scopes *s, const char *scope)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, scope) == 0)
			return &s->e[i];
	s->e = fa_xrealloc(s->e, (s->n + 1) * sizeof(*s->e));
	s->e[s->n] = (struct entry){ .name = fa_xstrdup(scope), .pause_until = -1 };
	return &s->e[s->n++];
}

int fa_scopes_enter(struct fa_scopes *s, const char *scope)
{
	return ++get(s, scope)->in_flight;
}

void fa_scopes_leave(struct fa_scopes *s, const char *scope)
{
	struct entry *e = get(s, scope);

	if (e->in_flight > 0)
		e->in_flight--;
}

void fa_scopes_pause(struct fa_scopes *s, const char *scope, int64_t until_us)
{
	struct entry *e = get(s, scope);

	if (until_us > e->pause_until)
		e->pause_until = until_us;
}

int64_t fa_scopes_pause_until(struct fa_scopes *s, const char *scope)
{
	return get(s, scope)->pause_until;
}

void fa_scopes_reset(struct fa_scopes *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->e[i].pause_until = -1;
}

void fa_scopes_each(const struct fa_scopes *s,
                    void (*fn)(void *ctx, const char *scope, int64_t pause_until_us, int in_flight),
                    void *ctx)
{
	for (size_t i = 0; i < s->n; i++)
		fn(ctx, s->e[i].name, s->e[i].pause_until, s->e[i].in_flight);
}

cJSON *fa_scopes_json(const struct fa_scopes *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < s->n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "scope", s->e[i].name);
		if (s->e[i].pause_until < 0)
			cJSON_AddNullToObject(o, "pause_until_us");
		else
			cJSON_AddNumberToObject(o, "pause_until_us", (double)s->e[i].pause_until);
		cJSON_AddNumberToObject(o, "in_flight", s->e[i].in_flight);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
