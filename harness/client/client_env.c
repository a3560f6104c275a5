/* client_env.c -- the environment a client under test runs with (docs/client-protocol.md). */
#include "client_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "canary.h"
#include "stdio_client.h"

char **hx_client_env_new(const struct fa_scenario *sc, const char *base_url, const char *state_dir,
                         const char *key_canary, const char *key_id, char **extra)
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

/* @v as decimal into @buf (16 bytes) when @set; the string, or NULL. */
static const char *num(char *buf, bool set, int v)
{
	if (!set)
		return NULL;
	snprintf(buf, 16, "%d", v);
	return buf;
}

void hx_client_task_init(struct hx_client_task *ct, const struct fa_scenario *sc,
                         const struct fa_task_spec *t, const char *url, const char *body_file,
                         const char *headers_file, int timeout_s)
{
	const struct fa_pacing_spec *pc = &sc->harness.pacing;
	const struct fa_budget *b = &t->budget;
	cJSON *h = fa_xcheck(cJSON_CreateObject(), "task headers");

	memset(ct, 0, sizeof(*ct));
	for (size_t i = 0; i < t->n_headers; i++)
		fa_xcheck(cJSON_AddStringToObject(h, t->headers[i].name, t->headers[i].value),
		          "task headers");
	ct->headers_json = fa_xcheck(cJSON_PrintUnformatted(h), "task headers");
	cJSON_Delete(h);
	ct->vars = (struct hx_exec_vars){
		.url = url,
		.method = t->method,
		.body_file = body_file,
		.task = t->id,
		.max_attempts = num(ct->max_attempts, b->max_attempts > 0, b->max_attempts),
		.max_retries = num(ct->max_retries, b->max_attempts > 0, b->max_attempts - 1),
		.max_wait_s = num(ct->max_wait_s, b->max_wait_s >= 0, b->max_wait_s),
		.timeout_s = num(ct->timeout_s, true, timeout_s),
		.rpm = num(ct->rpm, pc->given && pc->rpm > 0, pc->rpm),
		.tpm = num(ct->tpm, pc->given && pc->tpm > 0, pc->tpm),
		.period_s = num(ct->period_s, pc->given, pc->period_s),
		.headers_file = headers_file,
		.headers_json = ct->headers_json,
	};
}

void hx_client_task_release(struct hx_client_task *ct)
{
	if (ct == NULL)
		return;
	free(ct->headers_json);
	ct->headers_json = NULL;
}
