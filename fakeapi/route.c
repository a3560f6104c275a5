/* route.c -- path templates, body rendering and response-sequence cursors. */
#include "route.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

const char *const fa_route_methods[] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", NULL,
};

void fa_params_release(struct fa_params *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->name[i]);
		free(p->value[i]);
	}
	memset(p, 0, sizeof(*p));
}

/* Length of the segment starting at @s (up to '/' or the end). */
static size_t seglen(const char *s)
{
	return strcspn(s, "/");
}

bool fa_route_match(const char *tmpl, const char *path, struct fa_params *out)
{
	struct fa_params got = { 0 };
	const char *t = tmpl, *s = path;

	if (*t != '/' || *s != '/')
		return false;
	while (*t == '/' && *s == '/') {
		size_t tl, sl;

		t++;
		s++;
		tl = seglen(t);
		sl = seglen(s);
		if (tl >= 2 && t[0] == '{' && t[tl - 1] == '}') {
			if (sl == 0 || got.n == FA_ROUTE_MAX_PARAMS)
				goto nomatch;
			got.name[got.n] = fa_xstrndup(t + 1, tl - 2);
			got.value[got.n] = fa_xstrndup(s, sl);
			got.n++;
		} else if (tl != sl || memcmp(t, s, tl) != 0) {
			goto nomatch;
		}
		t += tl;
		s += sl;
	}
	if (*t != '\0' || *s != '\0')
		goto nomatch;
	if (out != NULL)
		*out = got;
	else
		fa_params_release(&got);
	return true;
nomatch:
	fa_params_release(&got);
	return false;
}

int fa_route_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *fa_route_pct_decode(const char *s, size_t n)
{
	char *out = fa_xmalloc(n + 1);
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi = i + 2 < n && s[i] == '%' ? fa_route_hexval((unsigned char)s[i + 1]) : -1;
		int lo = hi >= 0 ? fa_route_hexval((unsigned char)s[i + 2]) : -1;

		if (lo >= 0 && (hi | lo) != 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

const struct fa_route_spec *fa_route_find(const struct fa_route_spec *routes, size_t n_routes,
                                          const char *method, const char *path,
                                          struct fa_params *params, size_t *idx)
{
	for (size_t i = 0; i < n_routes; i++) {
		const struct fa_route_spec *r = &routes[i];

		if (strcmp(r->method, method) != 0 || !fa_route_match(r->path, path, params))
			continue;
		if (idx != NULL)
			*idx = i;
		return r;
	}
	return NULL;
}

/* @s with every known {name} replaced; caller frees. */
static char *substitute(const char *s, const struct fa_params *p)
{
	size_t cap = strlen(s) + 1, len = 0;
	char *out = fa_xmalloc(cap);

	while (*s != '\0') {
		const char *val = NULL;
		size_t skip = 1;

		if (*s == '{' && p != NULL) {
			const char *end = strchr(s, '}');

			for (size_t i = 0; end != NULL && i < p->n; i++) {
				size_t nl = strlen(p->name[i]);

				if ((size_t)(end - s - 1) == nl &&
				    memcmp(s + 1, p->name[i], nl) == 0) {
					val = p->value[i];
					skip = nl + 2;
					break;
				}
			}
		}
		if (val == NULL)
			val = s;
		size_t vl = val == s ? 1 : strlen(val);
		if (len + vl + 1 > cap) {
			cap = (len + vl + 1) * 2;
			out = fa_xrealloc(out, cap);
		}
		memcpy(out + len, val, vl);
		len += vl;
		s += skip;
	}
	out[len] = '\0';
	return out;
}

static void render_into(cJSON *node, const struct fa_params *p)
{
	for (; node != NULL; node = node->next) {
		if (cJSON_IsString(node) && strchr(node->valuestring, '{')) {
			char *v = substitute(node->valuestring, p);

			cJSON_SetValuestring(node, v);
			free(v);
		}
		render_into(node->child, p);
	}
}

cJSON *fa_route_render(const cJSON *body, const struct fa_params *p)
{
	cJSON *copy;

	if (body == NULL)
		return NULL;
	copy = fa_xcheck(cJSON_Duplicate(body, 1), "cJSON_Duplicate");
	if (cJSON_IsString(copy) && strchr(copy->valuestring, '{')) {
		char *v = substitute(copy->valuestring, p);

		cJSON_SetValuestring(copy, v);
		free(v);
	}
	render_into(copy->child, p);
	return copy;
}

/* Position of one cursor. */
struct position {
	char *scope;  /* owned; NULL for the shared cursor */
	size_t index; /* response entry answering now */
	int used;     /* answers it has given */
};

/* Cursor state of one route. */
struct route_cursor {
	const struct fa_route_spec *spec; /* borrowed */
	struct position *pos;             /* owned; one when shared */
	size_t n_pos;
};

struct fa_cursors {
	struct route_cursor *routes; /* one per scenario route */
	size_t n_routes;
};

struct fa_cursors *fa_cursors_new(const struct fa_route_spec *routes, size_t n_routes)
{
	struct fa_cursors *c = fa_xcalloc(1, sizeof(*c));

	c->n_routes = n_routes;
	c->routes = fa_xcalloc(n_routes, sizeof(*c->routes));
	for (size_t i = 0; i < n_routes; i++)
		c->routes[i].spec = &routes[i];
	return c;
}

void fa_cursors_reset(struct fa_cursors *c)
{
	for (size_t i = 0; i < c->n_routes; i++) {
		struct route_cursor *rc = &c->routes[i];

		for (size_t j = 0; j < rc->n_pos; j++)
			free(rc->pos[j].scope);
		free(rc->pos);
		rc->pos = NULL;
		rc->n_pos = 0;
	}
}

void fa_cursors_free(struct fa_cursors *c)
{
	if (c == NULL)
		return;
	fa_cursors_reset(c);
	free(c->routes);
	free(c);
}

static struct position *find_position(struct route_cursor *rc, const char *scope)
{
	for (size_t i = 0; i < rc->n_pos; i++) {
		const char *s = rc->pos[i].scope;

		if ((s == NULL && scope == NULL) ||
		    (s != NULL && scope != NULL && strcmp(s, scope) == 0))
			return &rc->pos[i];
	}
	rc->pos = fa_xrealloc(rc->pos, (rc->n_pos + 1) * sizeof(*rc->pos));
	rc->pos[rc->n_pos] = (struct position){ .scope = fa_xstrdup(scope) };
	return &rc->pos[rc->n_pos++];
}

size_t fa_cursors_next(struct fa_cursors *c, size_t route_idx, const char *scope)
{
	struct route_cursor *rc = &c->routes[route_idx];
	const struct fa_route_spec *spec = rc->spec;
	struct position *p;
	size_t answer;

	if (spec->cursor == FA_CURSOR_SHARED || scope == NULL)
		scope = NULL;
	p = find_position(rc, scope);
	answer = p->index;
	p->used++;
	if (spec->responses[p->index].times > 0 && p->used >= spec->responses[p->index].times &&
	    p->index + 1 < spec->n_responses) {
		p->index++;
		p->used = 0;
	}
	return answer;
}

cJSON *fa_cursors_json(const struct fa_cursors *c)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < c->n_routes; i++) {
		const struct route_cursor *rc = &c->routes[i];
		cJSON *o = cJSON_CreateObject();
		cJSON *ps = cJSON_CreateArray();

		cJSON_AddStringToObject(o, "route", rc->spec->id);
		cJSON_AddStringToObject(o, "cursor",
		                        rc->spec->cursor == FA_CURSOR_SCOPE ? "scope" : "shared");
		for (size_t j = 0; j < rc->n_pos; j++) {
			cJSON *po = cJSON_CreateObject();

			if (rc->pos[j].scope != NULL)
				cJSON_AddStringToObject(po, "scope", rc->pos[j].scope);
			else
				cJSON_AddNullToObject(po, "scope");
			cJSON_AddNumberToObject(po, "index", (double)rc->pos[j].index);
			cJSON_AddNumberToObject(po, "used", rc->pos[j].used);
			cJSON_AddItemToArray(ps, po);
		}
		cJSON_AddItemToObject(o, "positions", ps);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

const struct fa_route_spec *fa_route_of_target(const struct fa_route_spec *routes, size_t n_routes,
                                               const char *method, const char *target)
{
	const char *q = strchr(target, '?');
	char *path = fa_route_pct_decode(target, q != NULL ? (size_t)(q - target) : strlen(target));
	const struct fa_route_spec *r = fa_route_find(routes, n_routes, method, path, NULL, NULL);

	free(path);
	return r;
}
