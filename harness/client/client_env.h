/* client_env.h -- the environment a client under test runs with (docs/client-protocol.md). */
#ifndef HX_CLIENT_ENV_H
#define HX_CLIENT_ENV_H

#include "exec.h"
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
char **hx_client_env_new(const struct fa_scenario *sc, const char *base_url, const char *state_dir,
                         const char *key_canary, const char *key_id, char **extra);

/* Free @env and its strings. */
void hx_client_env_free(char **env);

/* What exec mode tells one task's client: hx_exec_vars and the strings it
 * borrows. Embedded; do not move it once filled. */
struct hx_client_task {
	struct hx_exec_vars vars; /* borrows from the members below and from the
	                             arguments of hx_client_task_init() */
	char max_attempts[16];    /* decimal values; vars points here when set */
	char max_retries[16];
	char max_wait_s[16];
	char timeout_s[16];
	char rpm[16];
	char tpm[16];
	char period_s[16];
	char *headers_json; /* owned: the task's headers as one JSON object */
};

/*
 * Fill @ct for task @t of @sc (docs/client-protocol.md, exec mode): its
 * @url, method, id, @body_file and @headers_file (borrowed: they must
 * outlive @ct), the harness's per-task timeout @timeout_s, its budget
 * (max_attempts, max_retries = max_attempts - 1, max_wait_s: NULL where
 * the budget gives none), $.harness.pacing's rpm, tpm and period_s (NULL
 * where the scenario publishes none) and its headers as one JSON object
 * ({} for none). Release with hx_client_task_release().
 */
void hx_client_task_init(struct hx_client_task *ct, const struct fa_scenario *sc,
                         const struct fa_task_spec *t, const char *url, const char *body_file,
                         const char *headers_file, int timeout_s);

/* Free what @ct owns. NULL accepted. */
void hx_client_task_release(struct hx_client_task *ct);

#endif
