/* client_env.c -- the environment a client under test runs with (docs/client-protocol.md). */
#include "client_env.h"

#include <stdlib.h>

#include "alloc.h"
#include "canary.h"
#include "stdio_client.h"

char **hx_client_env_new(const struct fa_scenario *sc, const char *base_url,
			 const char *state_dir, const char *key_canary,
			 const char *key_id, char **extra)
{
	const struct fa_key *key = fa_scenario_key_by_id(sc, key_id);
	size_t n_extra = 0, k = 0;
	char **env;
	char *secret;

	while (extra != NULL && extra[n_extra] != NULL)
		n_extra++;
	env = fa_xcalloc(sc->n_keys + n_extra + 4, sizeof(*env));
	env[k++] = fa_xasprintf("FAKEAPI_URL=%s", base_url);
	secret = hx_canary_secret(key ? key->secret : "", key_canary);
	env[k++] = fa_xasprintf("FAKEAPI_KEY=%s", secret);
	free(secret);
	env[k++] = fa_xasprintf("CLIENT_STATE_DIR=%s", state_dir);
	for (size_t i = 0; i < sc->n_keys; i++) {
		char *name = hx_stdio_key_env(sc->keys[i].id);

		secret = hx_canary_secret(sc->keys[i].secret, key_canary);
		env[k++] = fa_xasprintf("%s=%s", name, secret);
		free(secret);
		free(name);
	}
	for (size_t i = 0; i < n_extra; i++)
		env[k++] = extra[i];
	env[k] = NULL;
	return env;
}

void hx_client_env_free(char **env)
{
	if (env == NULL)
		return;
	for (size_t k = 0; env[k] != NULL; k++)
		free(env[k]);
	free(env);
}
