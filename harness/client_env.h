/* client_env.h -- the environment a client under test runs with (docs/client-protocol.md). */
#ifndef HX_CLIENT_ENV_H
#define HX_CLIENT_ENV_H

#include "scenario.h"

/*
 * The environment of docs/client-protocol.md for a client of scenario @sc
 * whose FAKEAPI_KEY is key @key_id's (an unknown id gets an empty secret):
 * FAKEAPI_URL=@base_url, FAKEAPI_KEY, CLIENT_STATE_DIR=@state_dir and
 * FAKEAPI_KEY_<ID> for every key, each secret with @key_canary at its end
 * (hx_canary_secret()), then @extra ("NAME=value" strings, NULL-terminated,
 * or NULL; takes them). Returns a new NULL-terminated array; free it with
 * hx_client_env_free().
 */
char **hx_client_env_new(const struct fa_scenario *sc, const char *base_url,
			 const char *state_dir, const char *key_canary,
			 const char *key_id, char **extra);

/* Free @env and its strings. */
void hx_client_env_free(char **env);

#endif
