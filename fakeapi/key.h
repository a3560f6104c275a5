/* key.h -- an API key the provider accepts, as a scenario names it. */
#ifndef FA_KEY_H
#define FA_KEY_H

#include <stddef.h>

/* An API key the provider accepts ($.provider.keys.<id>). */
struct fa_key {
	char *id;     /* the object key; what the journal records */
	char *secret; /* what the client sends; never journaled or reported */
	char *user;   /* the account it belongs to */
};

/* The key among the @n @keys whose id is @id, or NULL (also for @id NULL).
 * The pointer is into @keys. */
const struct fa_key *fa_key_by_id(const struct fa_key *keys, size_t n, const char *id);

/* The key among the @n @keys whose secret is @secret, or NULL (also for
 * @secret NULL). The pointer is into @keys. */
const struct fa_key *fa_key_by_secret(const struct fa_key *keys, size_t n, const char *secret);

#endif
