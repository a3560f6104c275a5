/* task_spec.c -- what a scenario's tasks must be once everything is read. */
#include "task_spec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "reconcile.h"
#include "route.h"

/* Does the query @q (what follows "?", or NULL) carry a client_reference
 * argument, its name read as the server reads it (percent-decoded)? */
static bool query_has_reference(const char *q)
{
	while (q != NULL) {
		char *name = fa_route_pct_decode(q, strcspn(q, "&="));
		bool hit = strcmp(name, "client_reference") == 0;

		free(name);
		if (hit)
			return true;
		q = strchr(q, '&');
		q = q != NULL ? q + 1 : NULL;
	}
	return false;
}

/* Does a request as task @t sends it get an answer of the scenario's own:
 * a route (method and template on the decoded path; routing ignores the
 * query) or a reconciliation read @store keeps on? The provider decides
 * the same way (provider.c). */
static bool task_answered(const struct fa_task_spec *t, const struct fa_route_spec *routes,
                          size_t n_routes, const struct fa_store_spec *store)
{
	const char *q = strchr(t->path, '?');
	char *path =
	        fa_route_pct_decode(t->path, q != NULL ? (size_t)(q - t->path) : strlen(t->path));
	bool ok = fa_route_find(routes, n_routes, t->method, path, NULL, NULL) != NULL ||
	          fa_reconcile_is_read_of(store, t->method, path,
	                                  query_has_reference(q != NULL ? q + 1 : NULL));

	free(path);
	return ok;
}

/* A task header the provider reads a key from: the client sends its key
 * (FAKEAPI_KEY) itself, and a task's headers reach exec clients in files
 * and variables where no secret belongs. */
static const struct fa_header *key_header(const struct fa_task_spec *t)
{
	const struct fa_header *h = fa_header_find(t->headers, t->n_headers, "Authorization");

	return h != NULL ? h : fa_header_find(t->headers, t->n_headers, "X-Api-Key");
}

/* A task that reaches neither a route nor a reconciliation read would
 * get the provider's 404 no_route, and a client that does not retry it
 * would pass classify.no_retry_4xx on the scenario's mistake. */
enum fa_rc fa_task_spec_check(struct fa_schema *s, const struct fa_task_spec *tasks, size_t n_tasks,
                              const struct fa_route_spec *routes, size_t n_routes,
                              const struct fa_store_spec *store)
{
	char list[400];
	size_t used = 0, mark;
	enum fa_rc rc;

	for (size_t i = 0; i < n_tasks; i++) {
		const struct fa_task_spec *t = &tasks[i];
		const struct fa_header *h = key_header(t);

		if (h != NULL) {
			mark = fa_schema_enter(s, "tasks");
			fa_schema_enter_index(s, i);
			fa_schema_enter(s, "headers");
			rc = fa_schema_fail(s,
			                    "header %s cannot go in a task (the client sends "
			                    "its key, FAKEAPI_KEY, itself)",
			                    fa_schema_quote(h->name).s);
			fa_schema_leave(s, mark);
			return rc;
		}
		if (task_answered(t, routes, n_routes, store))
			continue;
		list[0] = '\0';
		for (size_t k = 0; k < n_routes; k++) {
			const struct fa_route_spec *r = &routes[k];
			int n = snprintf(list + used, sizeof(list) - used, "%s%s %s",
			                 k > 0 ? ", " : "", r->method, r->path);

			if (n < 0 || (size_t)n + sizeof(", ...") > sizeof(list) - used) {
				snprintf(list + used, sizeof(list) - used, "%s...",
				         k > 0 ? ", " : "");
				break;
			}
			used += (size_t)n;
		}
		mark = fa_schema_enter(s, "tasks");
		fa_schema_enter_index(s, i);
		rc = fa_schema_fail(s, "%s %s matches no route (routes: %s)", t->method, t->path,
		                    list);
		fa_schema_leave(s, mark);
		return rc;
	}
	return FA_OK;
}

static const char *const outcome_names[FA_OUTCOME_COUNT] = {
	"succeeded", "failed", "escalated", "cancelled", "unknown",
};

#define OUTCOME_LIST "succeeded, failed, escalated, cancelled, unknown"

const char *fa_task_outcome_name(unsigned i)
{
	return i < FA_OUTCOME_COUNT ? outcome_names[i] : NULL;
}

unsigned fa_task_outcome_bit(const char *name)
{
	for (unsigned i = 0; name != NULL && i < FA_OUTCOME_COUNT; i++)
		if (strcmp(outcome_names[i], name) == 0)
			return 1u << i;
	return 0;
}

/* One outcome name at the current path, its bit added to *@out; named
 * twice is an error too (a list is a set). */
static enum fa_rc read_one_outcome(struct fa_schema *s, const cJSON *v, unsigned *out)
{
	unsigned bit = cJSON_IsString(v) ? fa_task_outcome_bit(v->valuestring) : 0;

	if (bit == 0)
		return fa_schema_fail_got(s, v, "one of " OUTCOME_LIST);
	if (*out & bit)
		return fa_schema_fail(s, "outcome %s listed twice",
		                      fa_schema_quote(v->valuestring).s);
	*out |= bit;
	return FA_OK;
}

enum fa_rc fa_task_spec_read_outcome(struct fa_schema *s, const cJSON *v, unsigned *out)
{
	enum fa_rc rc = FA_OK;
	size_t i = 0, mark;

	*out = 0;
	if (!cJSON_IsArray(v))
		return read_one_outcome(s, v, out);
	if (v->child == NULL)
		return fa_schema_fail_got(s, v,
		                          "one of " OUTCOME_LIST ", or a non-empty "
		                          "array of them");
	for (const cJSON *c = v->child; c != NULL && rc == FA_OK; c = c->next, i++) {
		mark = fa_schema_enter_index(s, i);
		rc = read_one_outcome(s, c, out);
		fa_schema_leave(s, mark);
	}
	return rc;
}
