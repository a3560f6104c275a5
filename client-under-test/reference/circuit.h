/* circuit.h -- the circuit breaker: one path that keeps failing the same way is stopped. */
#ifndef REF_CIRCUIT_H
#define REF_CIRCUIT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The retry-safety guide: an agent can flood a provider with wrong requests as surely
 * as with retries, sending the same request that fails with a 422 task
 * after task. When one method and endpoint keep failing the same way in
 * one run, that path is stopped and the failure handed back as a
 * constraint.
 *
 * A failure's key is the method, the endpoint template (path with numeric
 * and UUID-like segments as {id}, ref_fingerprint_endpoint()), the
 * status and the response body's error.code ("" without one). Only
 * statuses 400..499 other than 408 and 429 count: those say the request
 * itself is wrong, while 408 and 429 say "not now". The request body is
 * not part of the key, so new whitespace or reordered fields do not make
 * a new request. Once a key has REF_CIRCUIT_MAX_IDENTICAL failures it is
 * open: every later request with its method and endpoint is refused before
 * it is sent, for the rest of the process. A 2xx for a method and
 * endpoint clears its counts (the path works; earlier failures were about
 * other records). One breaker per client process, shared by every task;
 * every call is thread-safe.
 */
struct ref_circuit;

/* An empty breaker that opens a key after @max_identical (>= 1) identical
 * failures. Aborts when memory runs out. Free with ref_circuit_free(). */
struct ref_circuit *ref_circuit_new(int max_identical);

/* Free @c; NULL is accepted. No task may use it any more. */
void ref_circuit_free(struct ref_circuit *c);

/*
 * Record the answer to a request @method @endpoint: HTTP @status and its
 * @body (NUL-terminated, @len bytes, NULL for none). A status that is not
 * an identical-failure candidate is ignored, but a 2xx clears the counts
 * of @method @endpoint. Returns true when this answer opened a key.
 */
bool ref_circuit_answer(struct ref_circuit *c, const char *method, const char *endpoint,
                        long status, const char *body, size_t len);

/*
 * Is a key of @method @endpoint open? On true *@status is its status and
 * *@code its error.code (static to the breaker until it is freed; "" for
 * none).
 */
bool ref_circuit_open(struct ref_circuit *c, const char *method, const char *endpoint, long *status,
                      const char **code);

#endif
