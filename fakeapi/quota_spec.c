/* quota_spec.c -- a scenario's $.provider.quota block. */
#include "quota_spec.h"

#include <string.h>

#include "alloc.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* FA_STORE_INDEX writes an int into these. */
_Static_assert(sizeof(enum fa_quota_spread) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fa_quota_headers) == sizeof(int), "enum size");

/* in enum order: the index is the value */
static const char *const spreads[] = { "round_robin", "random", NULL };
static const char *const header_styles[] = { "x",      "ietf",      "legacy", "none",
	                                     "openai", "anthropic", NULL };

/* $.provider.quota */
enum {
	QT_PER_KEY,
	QT_PER_USER,
	QT_PERIOD,
	QT_REPLICAS,
	QT_SPREAD,
	QT_KEY_LIMITS,
	QT_IN_FLIGHT,
	QT_HEADERS,
	QT_TPM_KEY,
	QT_TPM_USER,
	QT_RPD_KEY,
	QT_TPD_KEY,
	QT_DAY
};
static const struct fa_field quota_fields[] = {
	FA_F_INT("per_key", 0, 1, FA_QUOTA_LIMIT_MAX, struct fa_quota_spec, per_key),
	FA_F_INT("per_user", 0, 1, FA_QUOTA_LIMIT_MAX, struct fa_quota_spec, per_user),
	FA_F_INT("period_s", 0, 1, FA_QUOTA_PERIOD_MAX_S, struct fa_quota_spec, period_s),
	FA_F_INT("replicas", 0, 1, FA_QUOTA_REPLICAS_MAX, struct fa_quota_spec, replicas),
	FA_F_ENUM("spread", 0, spreads, struct fa_quota_spec, spread),
	FA_F_CHECK("key_limits", FA_SCHEMA_OBJECT, 0),
	FA_F_INT("max_in_flight_per_key", 0, 1, FA_QUOTA_IN_FLIGHT_MAX, struct fa_quota_spec,
	         max_in_flight_per_key),
	FA_F_ENUM("headers", 0, header_styles, struct fa_quota_spec, headers),
	/* the LLM rate-limit guide: tokens per minute, requests and tokens per day */
	FA_F_INT("tpm_per_key", 0, 1, FA_QUOTA_TOKENS_MAX, struct fa_quota_spec, tpm_per_key),
	FA_F_INT("tpm_per_user", 0, 1, FA_QUOTA_TOKENS_MAX, struct fa_quota_spec, tpm_per_user),
	FA_F_INT("rpd_per_key", 0, 1, FA_QUOTA_LIMIT_MAX, struct fa_quota_spec, rpd_per_key),
	FA_F_INT("tpd_per_key", 0, 1, FA_QUOTA_TOKENS_MAX, struct fa_quota_spec, tpd_per_key),
	FA_F_INT("day_s", 0, 1, FA_QUOTA_DAY_MAX_S, struct fa_quota_spec, day_s),
};

/* $.provider.quota.key_limits.<key id> */
static const struct fa_field key_limit_field =
        FA_F_INT(NULL, 0, 1, FA_QUOTA_LIMIT_MAX, struct fa_quota_key_limit, limit);

static enum fa_rc read_key_limits(struct fa_schema *s, const cJSON *obj, const struct fa_key *keys,
                                  size_t n_keys, struct fa_quota_spec *q)
{
	enum fa_rc rc = fa_schema_unique(s, obj);
	size_t mark;

	if (rc != FA_OK)
		return rc;
	q->key_limits = fa_xcalloc(fa_schema_count(obj) + 1, sizeof(*q->key_limits));
	for (const cJSON *k = obj->child; rc == FA_OK && k != NULL; k = k->next) {
		struct fa_quota_key_limit *kl = &q->key_limits[q->n_key_limits];

		mark = fa_schema_enter(s, k->string);
		if (fa_key_by_id(keys, n_keys, k->string) == NULL)
			rc = fa_schema_fail(s, "no key %s in $.provider.keys",
			                    fa_schema_quote(k->string).s);
		else
			rc = fa_schema_value(s, k, &key_limit_field, kl);
		fa_schema_leave(s, mark);
		if (rc == FA_OK) {
			kl->key = fa_xstrdup(k->string);
			q->n_key_limits++;
		}
	}
	return rc;
}

enum fa_rc fa_quota_spec_read(struct fa_schema *s, const cJSON *obj, const struct fa_key *keys,
                              size_t n_keys, struct fa_quota_spec *q)
{
	const cJSON *got[N(quota_fields)];
	enum fa_rc rc;
	size_t mark;

	fa_quota_spec_init(q);
	rc = fa_schema_object(s, obj, quota_fields, N(quota_fields), q, got);
	if (rc != FA_OK)
		return rc;
	/* a day with no daily bucket to measure would be silently ignored */
	if (got[QT_DAY] != NULL && got[QT_RPD_KEY] == NULL && got[QT_TPD_KEY] == NULL) {
		mark = fa_schema_enter(s, "day_s");
		rc = fa_schema_fail(s, "needs \"rpd_per_key\" or \"tpd_per_key\"");
		fa_schema_leave(s, mark);
		return rc;
	}
	if (got[QT_KEY_LIMITS] == NULL)
		return rc;
	mark = fa_schema_enter(s, "key_limits");
	rc = read_key_limits(s, got[QT_KEY_LIMITS], keys, n_keys, q);
	fa_schema_leave(s, mark);
	return rc;
}
