/* quota_spec.h -- a scenario's $.provider.quota block. */
#ifndef FA_QUOTA_SPEC_H
#define FA_QUOTA_SPEC_H

#include <cJSON.h>

#include "key.h"
#include "quota.h"
#include "rc.h"
#include "schema.h"

/*
 * Read the $.provider.quota object @obj (at the current path of @s) into
 * @q: per_key, per_user (1..FA_QUOTA_LIMIT_MAX),
 * period_s (1..FA_QUOTA_PERIOD_MAX_S), replicas (1..FA_QUOTA_REPLICAS_MAX),
 * spread ("round_robin" | "random"), key_limits (an object: key id ->
 * 1..FA_QUOTA_LIMIT_MAX; every id must be in $.provider.keys),
 * max_in_flight_per_key (1..FA_QUOTA_IN_FLIGHT_MAX), headers ("x" |
 * "ietf" | "legacy" | "none" | "openai"), tpm_per_key, tpm_per_user,
 * tpd_per_key (1..FA_QUOTA_TOKENS_MAX), rpd_per_key
 * (1..FA_QUOTA_LIMIT_MAX) and day_s (1..FA_QUOTA_DAY_MAX_S); defaults as
 * quota.h says; key_limits must name one of the @n_keys @keys (read
 * before). Errors are recorded through @s as fa_scenario_parse()
 * describes; on FA_EINVAL whatever was read stays in @q for
 * fa_quota_spec_release().
 */
enum fa_rc fa_quota_spec_read(struct fa_schema *s, const cJSON *obj, const struct fa_key *keys,
                              size_t n_keys, struct fa_quota_spec *q);

#endif
