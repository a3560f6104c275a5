/* reconcile.h -- what the provider's answers say about a write: its record, its error, the status
 * reads. */
#ifndef REF_RECONCILE_H
#define REF_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The retry-safety guide: after an ambiguous outcome (the connection dropped after the
 * request may have been acted on), the question "did my write happen?"
 * is answered by asking the provider, not by sending the write again as
 * new. Two reads can answer it (docs/client-protocol.md):
 *
 *   GET {base}/v1/operations/{idempotency_key}
 *       200 {"status": "completed", "record": {"id": ...}} | {"status": "in_flight"}
 *       404 {"error": {"code": "operation_not_found"}}
 *   GET {base}/v1/records?client_reference=R
 *       200 {"records": [{"id": ..., "client_reference": R}, ...]}
 *
 * {base} is the scheme, host and port of the task's url. A provider may
 * have neither: an endpoint that answers 404 without the
 * operation_not_found code (it is not there), 405 or 501 does not exist.
 * These functions only read URLs and bodies; task.c decides what to do.
 * Bodies are NUL-terminated texts of @len bytes, NULL when there was none.
 */

/* What one reconciliation read says. */
enum ref_found {
	REF_FOUND = 0,   /* the provider holds the record (its id is given) */
	REF_NOT_FOUND,   /* the read works and knows no such write: it did not happen */
	REF_IN_FLIGHT,   /* the provider is still processing the write: ask again later */
	REF_UNAVAILABLE, /* this read does not exist or gives no usable answer */
	REF_TRY_AGAIN,   /* a passing failure (transport error, 408, 429, 5xx but 501) */
};

/* "found", "not_found", "in_flight", "unavailable", "try_again". */
const char *ref_found_str(enum ref_found f);

/*
 * The URL of GET /v1/operations/{@key} on the host of @task_url, carrying
 * the task url's fa_task query parameter (so the harness attributes the
 * read to the task); the key is percent-encoded. Owned; NULL when
 * @task_url has no "scheme://host" part.
 */
char *ref_reconcile_operation_url(const char *task_url, const char *key);

/* The same for GET /v1/records?client_reference=@client_reference. */
char *ref_reconcile_records_url(const char *task_url, const char *client_reference);

/*
 * Read the answer to GET /v1/operations/{key}: HTTP @status (0 for a
 * transport error) and its body. On REF_FOUND *@provider_id is the
 * record's id (owned); NULL otherwise. A completed operation whose record
 * has no id is REF_UNAVAILABLE: success without the record's name is no
 * evidence.
 */
enum ref_found ref_reconcile_operation(long status, const char *body, size_t len,
                                       char **provider_id);

/*
 * Read the answer to GET /v1/records?client_reference=@client_reference.
 * Records that carry another client_reference are not counted (a provider
 * that ignored the filter); *@n_records is how many match. On REF_FOUND
 * *@provider_id is the first one's id (owned); NULL otherwise.
 */
enum ref_found ref_reconcile_records(long status, const char *body, size_t len,
                                     const char *client_reference, char **provider_id,
                                     size_t *n_records);

/* The id of the record a 2xx write answer names ("id", else "record.id"),
 * owned; NULL when it names none. */
char *ref_reconcile_created_id(const char *body, size_t len);

/* Is @body an error answer {"error": {"code": @code}}? */
bool ref_reconcile_error_is(const char *body, size_t len, const char *code);

/* The "client_reference" string member of a JSON object @body, owned;
 * NULL when @body is NULL, not a JSON object, or has no such string. */
char *ref_reconcile_client_reference(const char *body);

#endif
