/* canary.h -- canaries the harness plants in keys and bodies, and the search for them. */
#ifndef HX_CANARY_H
#define HX_CANARY_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "result.h"

/* What a scenario writes inside a task body's strings for the harness to
 * replace with the body canary (docs/scenario-format.md). */
#define HX_CANARY_BODY_TOKEN "{body_canary}"

/*
 * The run's canaries for one scenario, derived from @seed and
 * @scenario_id (so a run can be repeated): @key gets "kc" and 24 lower-case
 * hex digits (NUL-terminated, 27 bytes), planted at the end of every key's
 * secret; @body gets "canary." 16 hex digits "@example.invalid", a
 * personal-data marker. Two scenarios or seeds give different canaries.
 */
void hx_canary_make(uint64_t seed, const char *scenario_id, char key[33], char body[64]);

/* The secret a client gets for a key whose scenario secret is @secret:
 * "<secret>.<key canary>". Owned by the caller. */
char *hx_canary_secret(const char *secret, const char *key_canary);

/* Replace every HX_CANARY_BODY_TOKEN in the string values of @body (in
 * place, recursively; member names untouched) with @body_canary. Returns
 * how many strings changed. NULL @body: 0. */
size_t hx_canary_plant_body(cJSON *body, const char *body_canary);

/*
 * Search @len bytes at @buf for the key canary and (when not NULL) the
 * body canary; append one hit per canary found to *@hits / *@n (owned,
 * grown with realloc), naming @where and @task (copied; @task may be
 * NULL). Returns @len, for the caller's count of bytes searched.
 */
size_t hx_canary_scan(const char *buf, size_t len, const char *key_canary,
		      const char *body_canary, const char *where, const char *task,
		      struct hx_canary_hit **hits, size_t *n);

/*
 * Search every regular file under @dir (recursively, symlinks not
 * followed, at most 64 MiB in all) for the key canary only: the client
 * must keep a write's body in its state dir to replay it. A hit's where
 * is "state dir file REL". Returns the bytes searched.
 */
size_t hx_canary_scan_dir(const char *dir, const char *key_canary,
			  struct hx_canary_hit **hits, size_t *n);

#endif
