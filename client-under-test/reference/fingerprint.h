/* fingerprint.h -- the sanitised names of a request: provider, endpoint template, fingerprint. */
#ifndef REF_FINGERPRINT_H
#define REF_FINGERPRINT_H

/*
 * The retry-safety guide: a normalised request fingerprint holds no secret and no
 * volatile header; it names the method, the endpoint template and the
 * body's stable fields, so a loop can be noticed (and an operator shown
 * the request) without writing down credentials or a sensitive body.
 * These functions only read strings; every result is owned by the caller.
 */

/* Length of "sha256:" and 64 hex digits, with the NUL. */
#define REF_FINGERPRINT_LEN (7 + 64 + 1)

/*
 * The endpoint template of @url: its path (from the first '/' after
 * "scheme://authority", without query or fragment; "/" when there is
 * none), with every segment that is all digits or UUID-like (8-4-4-4-12
 * hex digits) written {id}: "http://h:1/v1/records/42?fa_task=t1" ->
 * "/v1/records/{id}". Owned, never NULL.
 */
char *ref_fingerprint_endpoint(const char *url);

/*
 * The provider of @url: "scheme://host:port", the scheme lower-cased,
 * any userinfo ("user:secret@") dropped, the default port (80 for http,
 * 443 for https) added when the url names none. Owned; NULL when @url has
 * no "scheme://host" part.
 */
char *ref_fingerprint_origin(const char *url);

/*
 * The fingerprint of a request: "sha256:" and the hex SHA-256 over
 * @method, "\n", @endpoint (a template), "\n" and the body in canonical
 * form: a JSON body printed without whitespace, the members of every
 * object sorted by name (byte order), recursively, so that whitespace and
 * member order do not change it; a body that is not JSON as its bytes; no
 * body (NULL) as nothing. Written into @out.
 */
void ref_fingerprint(const char *method, const char *endpoint, const char *body,
                     char out[REF_FINGERPRINT_LEN]);

#endif
