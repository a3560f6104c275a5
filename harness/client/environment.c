/* environment.c -- a process environment block: the harness's own, with entries replaced. */
#include "environment.h"

#include <stdbool.h>
#include <string.h>

#include "alloc.h"

extern char **environ;

/* Length of the name part of a "NAME=value" entry. */
static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

char **hx_environment_merge(const char *const *add)
{
	size_t n_own = 0, n_add = 0, k = 0;
	char **env;

	while (environ != NULL && environ[n_own] != NULL)
		n_own++;
	while (add != NULL && add[n_add] != NULL)
		n_add++;
	env = fa_xcalloc(n_own + n_add + 1, sizeof(*env));
	for (size_t i = 0; i < n_own + n_add; i++) {
		const char *e = i < n_own ? environ[i] : add[i - n_own];
		size_t len = name_len(e);
		bool replaced = false;

		/* a later entry of the same name wins; a bare NAME unsets it */
		for (size_t j = i < n_own ? 0 : i - n_own + 1; j < n_add && !replaced; j++)
			replaced = name_len(add[j]) == len && strncmp(add[j], e, len) == 0;
		if (!replaced && (i < n_own || e[len] == '='))
			env[k++] = (char *)e;
	}
	env[k] = NULL;
	return env;
}
