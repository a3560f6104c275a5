/* key.c -- finding a scenario's API keys. */
#include "key.h"

#include <string.h>

const struct fa_key *fa_key_by_id(const struct fa_key *keys, size_t n, const char *id)
{
	for (size_t i = 0; id != NULL && i < n; i++) {
		if (keys[i].id != NULL && strcmp(keys[i].id, id) == 0)
			return &keys[i];
	}
	return NULL;
}

const struct fa_key *fa_key_by_secret(const struct fa_key *keys, size_t n, const char *secret)
{
	for (size_t i = 0; secret != NULL && i < n; i++) {
		if (keys[i].secret != NULL && strcmp(keys[i].secret, secret) == 0)
			return &keys[i];
	}
	return NULL;
}
