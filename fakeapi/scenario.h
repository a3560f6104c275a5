/* scenario.h -- scenario and suite files: load, validate, hold. */
#ifndef FA_SCENARIO_H
#define FA_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "harness_spec.h"
#include "key.h"
#include "quota.h"
#include "rc.h"
#include "response_spec.h"
#include "route.h"
#include "scope.h"
#include "store.h"

/* A loaded, validated scenario. Every pointer is owned by it. */
struct fa_scenario {
	char *file;          /* path it was loaded from (or the name given) */
	char sha256[65];     /* hex SHA-256 of the file's bytes */
	char *id;            /* [A-Za-z0-9._-]{1,64} */
	char *title;         /* or NULL */
	char *comment;       /* or NULL; provenance of imported scenarios */
	struct fa_key *keys; /* n_keys >= 1 */
	size_t n_keys;
	char **users; /* every user named by a key, sorted, unique */
	size_t n_users;
	enum fa_scope_kind scope;             /* $.provider.scope, default FA_SCOPE_USER */
	struct fa_store_spec store;           /* idempotency and reconciliation reads */
	bool has_during_pause;                /* $.provider.during_pause given */
	struct fa_response_spec during_pause; /* answer to a request that arrives inside
	                                         an announced pause of its scope (times unused) */
	bool has_quota;                       /* $.provider.quota given: the quota model meters
	                                         every request with a valid key (quota.h) */
	struct fa_quota_spec quota;           /* $.provider.quota; zero unless has_quota */
	bool retry_after_ms;                  /* $.provider.retry_after_ms (default false): every
	                                         quota 429 and shaped answer that carries a
	                                         delta-seconds Retry-After also carries
	                                         retry-after-ms, the exact pause in ms (as OpenAI's
	                                         API does); the journal's pause_until_us is then
	                                         that exact instant */
	struct fa_route_spec *routes;         /* n_routes >= 1 */
	size_t n_routes;
	bool has_harness; /* $.harness given */
	struct fa_harness_spec harness;
};

/* A suite: a versioned list of scenarios. */
struct fa_suite {
	char *file;                     /* path of suite.json, or of the lone scenario */
	char *id;                       /* suite id; a lone scenario's id */
	char *version;                  /* "1"; "" for a lone scenario */
	char *title;                    /* or NULL */
	struct fa_scenario **scenarios; /* owned, in file order */
	size_t n_scenarios;
};

/*
 * Parse and validate a scenario from memory. @name is used in messages and
 * kept as ->file. On a JSON syntax error @err gets "NAME:LINE:COL: message";
 * on a validation error "NAME: $.json.path: expected ..., got ...". Unknown
 * keys (the message lists the allowed ones), duplicate keys, non-integers
 * where integers are expected and references to undefined keys or tasks
 * are errors; a top-level "$schema" string is accepted and ignored. A
 * suite file is "NAME: a suite (it lists scenarios): give one of its
 * scenario files, or run the suite with fakeapi-harness run NAME".
 * Returns FA_OK and a new scenario in *@out (free with fa_scenario_free),
 * or FA_EINVAL and *@out NULL.
 */
enum fa_rc fa_scenario_parse(const char *text, size_t len, const char *name,
                             struct fa_scenario **out, struct fa_err *err);

/* Read @path and fa_scenario_parse() it. An unreadable file is FA_EIO with
 * "PATH: cannot read: strerror". */
enum fa_rc fa_scenario_load(const char *path, struct fa_scenario **out, struct fa_err *err);

/* Release @sc and everything it owns. NULL is accepted. */
void fa_scenario_free(struct fa_scenario *sc);

/* Key with this secret, or NULL. */
const struct fa_key *fa_scenario_key_by_secret(const struct fa_scenario *sc, const char *secret);
/* Key with this id, or NULL. */
const struct fa_key *fa_scenario_key_by_id(const struct fa_scenario *sc, const char *id);
/* Task with this id, or NULL. */
const struct fa_task_spec *fa_scenario_task(const struct fa_scenario *sc, const char *id);

/*
 * Load a suite: @path is either a suite file ({"id", "version", "title"?,
 * "scenarios": ["relative/path.json", ...]}, paths relative to the suite
 * file's folder) or a single scenario file, which becomes a suite of one.
 * A file is a suite when its top-level object has a "scenarios" key.
 * Errors as fa_scenario_parse(), naming the file at fault; a listed file
 * that cannot be read is the suite's ("SUITE: $.scenarios[2]: PATH:
 * cannot read: REASON"), and so is one that is a suite itself; duplicate
 * scenario ids across the suite are an error.
 */
enum fa_rc fa_suite_load(const char *path, struct fa_suite **out, struct fa_err *err);

/* Release @suite and its scenarios. NULL is accepted. */
void fa_suite_free(struct fa_suite *suite);

#endif
