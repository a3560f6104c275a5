/* store.h -- the provider's side effects: records and the idempotency table. */
#ifndef FA_STORE_H
#define FA_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "rc.h"
#include "route.h"

/* Which idempotency contract the provider follows ($.provider.idempotency). */
enum fa_idem_profile {
	FA_IDEM_NONE = 0, /* no idempotency support: Idempotency-Key is ignored */
	FA_IDEM_PAYMENT,  /* "payment": as the large payment APIs: a replay carries
	                     Idempotent-Replayed: true; 429s, validation failures and
	                     in-flight conflicts are never stored */
	FA_IDEM_IETF,     /* "ietf": the IETF Idempotency-Key draft: 400 when a required
	                     key is missing, 422 on reuse with another body, 409 in flight */
};

/* $.provider.idempotency and $.provider.reconciliation. */
struct fa_store_spec {
	enum fa_idem_profile profile; /* default FA_IDEM_NONE (no "idempotency" object) */
	int retention_s;              /* how long a key is remembered, 1..31536000, default 86400 */
	bool key_required;            /* ietf: a write without a key is 400 (default false) */
	bool by_client_reference;     /* GET /v1/records?client_reference=R exists (default true) */
	bool by_operation; /* GET /v1/operations/{idempotency_key} exists (default true) */
};

/*
 * A write route ("effect": "create") that commits stores a *record*: a
 * provider id ("rec_1", "rec_2", ...; never handed out twice, not even
 * after a reset), the route, the client reference found in the request
 * body, the Idempotency-Key, the request body's SHA-256, and the answer
 * (status and body) the provider gave or would have given.
 *
 * With an idempotency profile (struct fa_store_spec) the store also keeps
 * an *idempotency table*, one entry per key:
 *  - in flight: fa_store_begin() let a write with this key go ahead and
 *    fa_store_end() has not been called for it yet (it may have committed
 *    already: a delayed or held answer commits before it waits);
 *  - completed: that write committed and ended; the entry remembers the
 *    request body's SHA-256 and the record, and expires retention_s after
 *    fa_store_end().
 * Only committed writes leave an entry behind: an answer that did not
 * commit (a scripted 429, 503 or 4xx, a drop before the commit) and the
 * store's own refusals (400, 409, 422) are never stored, so a retry of
 * them is a fresh write.
 *
 * Keys are global to the provider (not per account or route) and compared
 * byte for byte; bodies are compared by SHA-256 of their exact bytes.
 * Times are µs on the caller's clock (the provider's monotonic clock since
 * its start), passed in so tests drive expiry. Every function is
 * thread-safe.
 */
struct fa_store;

/* Room for a provider id and its NUL ("rec_18446744073709551615"). */
#define FA_STORE_ID_MAX 32

/* The member fa_store_params_add_id() adds: "{provider_id}" in an answer's
 * body names the record the write created. */
#define FA_STORE_ID_PARAM "provider_id"

/* What the idempotency layer says about a write (fa_store_begin). */
enum fa_store_verdict {
	FA_STORE_PROCEED = 0, /* a new write: go ahead (its key, if any, is now in flight) */
	FA_STORE_REPLAY,      /* same key, same body, completed: answer with the stored answer */
	FA_STORE_IN_FLIGHT,   /* same key while the first write is in flight: 409 */
	FA_STORE_REUSED,      /* same key, another body: 422 */
	FA_STORE_MISSING,     /* ietf profile with "required": no key: 400 */
};

/* "proceed", "replay", "in_flight", "reused", "missing"; static storage. */
const char *fa_store_verdict_str(enum fa_store_verdict v);

/* The answer stored with a record, handed out for a replay. */
struct fa_store_answer {
	int status;                        /* the committed answer's status */
	char *body;                        /* owned compact JSON, or NULL (empty body) */
	char provider_id[FA_STORE_ID_MAX]; /* the record it belongs to */
};

/* Release what @a owns and zero it. NULL accepted. */
void fa_store_answer_release(struct fa_store_answer *a);

/* What a committing write stores (fa_store_commit). Everything borrowed. */
struct fa_store_write {
	const char *route;              /* route id, or NULL */
	const char *client_reference;   /* from the request body, or NULL */
	const char *idempotency_key;    /* the Idempotency-Key header, or NULL */
	const char *body_sha256;        /* hex SHA-256 of the request body, or NULL */
	int status;                     /* status of the answer the write gets */
	const cJSON *body;              /* the answer's body as scripted (a template), or NULL */
	const struct fa_params *params; /* the route's captured {param}s, or NULL */
};

/*
 * A new, empty store following @spec (copied). Returns the store (free
 * with fa_store_free).
 */
struct fa_store *fa_store_new(const struct fa_store_spec *spec);

/* NULL accepted. */
void fa_store_free(struct fa_store *s);

/* Forget every record and every key, in flight or not (admin reset). The
 * id counter goes on, so an id is never handed out twice. */
void fa_store_reset(struct fa_store *s);

/*
 * The idempotency layer, before a write is performed. @key is the
 * request's Idempotency-Key (NULL = none), @body_sha256 the hex SHA-256 of
 * its body, @owner a number unique among the writes in flight (the
 * provider passes the connection number: a connection carries one request
 * at a time), @now_us the current time. Without a profile every write
 * proceeds and nothing is remembered. With one:
 *  - no key: FA_STORE_MISSING when the ietf profile requires a key, else
 *    FA_STORE_PROCEED (every keyless write creates a record);
 *  - the key is in flight: FA_STORE_IN_FLIGHT, whatever the body;
 *  - the key completed, not expired, same body: FA_STORE_REPLAY, and
 *    @replay (may be NULL) gets a copy of the stored answer;
 *  - the key completed, not expired, another body: FA_STORE_REUSED;
 *  - otherwise (new or expired key): FA_STORE_PROCEED, and the key is in
 *    flight for @owner until fa_store_end().
 * @replay is zeroed first in every case.
 */
enum fa_store_verdict fa_store_begin(struct fa_store *s, const char *key, const char *body_sha256,
                                     uint64_t owner, int64_t now_us,
                                     struct fa_store_answer *replay);

/*
 * Commit the side effect of a write: a new record holding @w's route,
 * client reference, key, body SHA-256, status and body. The body is @w->body
 * with its {param}s rendered from @w->params plus "{provider_id}" -> the
 * new record's id (fa_route_render, so an answer rendered afterwards with
 * fa_store_params_add_id() is byte for byte the stored one). When @owner
 * holds @w->idempotency_key in flight, the entry now points at the record
 * (a replay after fa_store_end() answers with it). The new id goes into
 * @id_out (may be NULL). Returns FA_OK, or FA_ESTATE when @owner's
 * in-flight entry for that key already committed (nothing is stored).
 */
enum fa_rc fa_store_commit(struct fa_store *s, const struct fa_store_write *w, uint64_t owner,
                           int64_t now_us, char id_out[FA_STORE_ID_MAX]);

/*
 * The write @owner began with @key is over (its answer went out, or the
 * connection broke). Committed, the key becomes completed and expires
 * retention_s after @now_us; not committed, it is forgotten (an abort), so
 * the same key may try again. Nothing happens when @key is NULL or @owner
 * does not hold it in flight (a replay, a refusal, or a reset in between).
 */
void fa_store_end(struct fa_store *s, const char *key, uint64_t owner, int64_t now_us);

/*
 * Add FA_STORE_ID_PARAM = @provider_id to @p (an owned copy; released by
 * fa_params_release) so that fa_route_render() names the record; a
 * param of that name already there is overwritten. When @p already holds
 * FA_ROUTE_MAX_PARAMS others nothing is added (fa_store_commit then leaves
 * "{provider_id}" as written too).
 */
void fa_store_params_add_id(struct fa_params *p, const char *provider_id);

/*
 * GET /v1/records?client_reference=R: the records holding @ref, oldest
 * first, as a JSON array of record objects (see fa_store_json). Caller
 * frees with cJSON_Delete.
 */
cJSON *fa_store_by_client_reference(struct fa_store *s, const char *ref);

/*
 * GET /v1/operations/{key}: {"idempotency_key", "status": "completed" |
 * "in_flight", "record": RECORD or null} from the idempotency table (an
 * in-flight write shows its record once committed); without a profile,
 * the newest record carrying @key as "completed". NULL when the key is
 * unknown or expired. Caller frees with cJSON_Delete.
 */
cJSON *fa_store_by_key(struct fa_store *s, const char *key, int64_t now_us);

/* Number of records with client reference @ref (NULL: every record). */
size_t fa_store_count(struct fa_store *s, const char *ref);

/*
 * For GET /_fakeapi/state: {"profile": "none"|"payment"|"ietf",
 * "retention_s", "next_id", "records": [RECORD...], "keys": [{"idempotency_key",
 * "body_sha256", "record", "completed_us", "expires_us"}], "in_flight":
 * [{"idempotency_key", "body_sha256", "owner", "since_us", "record"}]}
 * where "record" is a provider id or null and a RECORD is {"id", "route",
 * "client_reference", "idempotency_key", "body_sha256", "status", "body",
 * "created_us"}. Expired keys are left out (and forgotten). Caller frees
 * with cJSON_Delete.
 */
cJSON *fa_store_json(struct fa_store *s, int64_t now_us);

#endif
