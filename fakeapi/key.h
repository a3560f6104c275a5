/* key.h -- an API key the provider accepts, as a scenario names it. */
#ifndef FA_KEY_H
#define FA_KEY_H

/* An API key the provider accepts ($.provider.keys.<id>). */
struct fa_key {
	char *id;     /* the object key; what the journal records */
	char *secret; /* what the client sends; never journaled or reported */
	char *user;   /* the account it belongs to */
};

#endif
