/* provider.h -- the fake provider: decides the answer to one request. */
#ifndef FA_PROVIDER_H
#define FA_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exchange.h"
#include "journal.h"
#include "scenario.h"

struct fa_provider;

/*
 * A provider playing @sc (borrowed: it must outlive the provider) and
 * appending to @journal (borrowed). @seed makes random choices repeatable.
 * @t0_us is the monotonic instant (fa_clock_mono_us) the journal's times
 * count from. Returns a new provider (free with fa_provider_free).
 */
struct fa_provider *fa_provider_new(const struct fa_scenario *sc, struct fa_journal *journal,
                                    uint64_t seed, int64_t t0_us);

/* NULL accepted. */
void fa_provider_free(struct fa_provider *p);

/*
 * Answer the admin endpoints (/_fakeapi/...) or not (default on). The
 * harness turns them off for the client under test: a client could
 * otherwise reset the journal it is graded on. Off, such a request is an
 * attempt like any other: journaled, and 404 unless a route matches it.
 * Call before the server starts.
 */
void fa_provider_set_admin(struct fa_provider *p, bool on);

/* Whether /_fakeapi/ is the admin API (fa_provider_set_admin): the server
 * then hands such requests to admin.h instead of fa_provider_decide(). */
bool fa_provider_admin_on(const struct fa_provider *p);

/*
 * How admin.h guards the admin API: @token (copied; NULL or "" = none)
 * is what every admin request must present as "Authorization: Bearer
 * TOKEN"; @loopback says the server listens on loopback only, so an
 * admin request whose Host names no loopback address is refused (DNS
 * rebinding). Default: no token, loopback. Call before the server starts.
 */
void fa_provider_set_admin_guard(struct fa_provider *p, const char *token, bool loopback);

/* The guard fa_provider_set_admin_guard() set: the token (borrowed; NULL
 * = none) and whether the server is on loopback only. */
const char *fa_provider_admin_token(const struct fa_provider *p);
bool fa_provider_admin_loopback(const struct fa_provider *p);

/*
 * Accept each key's secret only with "." and @suffix after it
 * ("<secret>.<suffix>"): the harness plants its key canary there
 * (harness/client/canary.h), so a client that prints its key is caught. The
 * plain secret, or the secret with any other ending, is then an unknown
 * key (401). @suffix is copied; NULL or "" accepts the plain secrets
 * again (the default). Call before the server starts.
 */
void fa_provider_set_key_suffix(struct fa_provider *p, const char *suffix);

/* The journal it appends to (borrowed). */
struct fa_journal *fa_provider_journal(struct fa_provider *p);

struct fa_store;

/* Its store of side effects (borrowed; store.h): the records writes on
 * effect routes committed, and the idempotency table. */
struct fa_store *fa_provider_store(struct fa_provider *p);

/* µs since the provider's start on the monotonic clock. */
int64_t fa_provider_now_us(const struct fa_provider *p);

/*
 * Decide the answer to @req into @resp (zeroed by the caller); admin
 * requests never come here (the server hands them to admin.h when
 * fa_provider_admin_on()). A missing or unknown key is 401 (no cursor moves, no quota
 * spent); a body over FA_PROVIDER_MAX_BODY is 413. Then the route that
 * will answer is looked up (nothing moves); on a chat_completions or
 * messages route the body is parsed now, and its cost (the LLM rate-limit guide:
 * estimated prompt tokens plus max_tokens) goes into the journal's
 * `tokens` (with or without a quota; -1 on any other route or for an
 * unusable body, whose 400 comes in its place below and is not metered). When the scenario has
 * $.provider.quota the quota model (quota.h) decides next, for one
 * request and that many tokens (0 off chat routes): a refusal is the
 * platform's 429 (body from fa_quota_error_body(), Retry-After,
 * X-RateLimit-Scope, the scenario's rate-limit headers; journal fault
 * "quota", pause_until_us the instant Retry-After names) or, for a cost
 * over a whole bucket, 400 tokens_over_limit without Retry-After
 * (fa_quota_over_capacity_body()), and moves no cursor; an admitted
 * request whose answer turns out to be a 429 or a 503 gets its quota back,
 * tokens included (the platform's rate-limit contract: neither spends quota); every answer the
 * model governs carries the rate-limit headers of the buckets it used,
 * unless the scripted answer sets the same header itself, and the
 * journal's `quota` field says what happened. With
 * $.provider.retry_after_ms every delta-seconds Retry-After the provider
 * writes itself (the quota's 429, a shape, a response's retry_after,
 * during_pause's own) comes with `retry-after-ms`, the exact pause in ms,
 * and pause_until_us is that exact instant; a literal header in a
 * response's "headers" is left alone. A literal retry-after-ms announces
 * a pause as a literal Retry-After does (fa_fault_respond(): the earlier
 * instant of the two), scope pause included. Then, inside an
 * announced pause of the scope the during_pause answer goes out when the
 * scenario has one; then the reconciliation reads the scenario keeps on
 * (GET /v1/records?client_reference=R, GET /v1/operations/{key}) are
 * answered from the store, moving no cursor; else the first route whose
 * method and template match answers. On a route with an effect the client
 * reference is read from the JSON body and the idempotency layer runs
 * first: a replay, 409, 422 or 400 from it moves no cursor; otherwise the
 * cursor advances, and an answer that commits (fa_fault_commits) stores a
 * record before any delay, hold or drop, its body naming the record's
 * "{provider_id}". A response with a "shape" is rendered by shape.h
 * (the platform's answers). A route of kind "chat_completions" parses the
 * request first (an unusable body is 400 and moves no cursor) and answers
 * a completion or an SSE stream (chat.h), a shape in a stream as its last
 * error frame; a route of kind "models" lists the models; a route of
 * kind "messages" answers a Message or its event stream (messages.h), and
 * every answer on it, the 401, 413, 400 and quota answers above
 * included, gets Anthropic's request-id and, for an error, its error
 * shape and x-should-retry. No route is 404.
 * The scope's in-flight count is raised here and dropped by
 * fa_provider_finish(). Thread-safe.
 */
void fa_provider_decide(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp);

/*
 * The request never reached a decision (the client left while sending it):
 * fill @resp->attempt with what is known (status 0, fault
 * "incomplete_request"), moving no cursor, so fa_provider_finish() still
 * journals it. Thread-safe.
 */
void fa_provider_abandon(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp);

/*
 * The response went out (or did not): stamp @t_response_us / @t_done_us
 * (-1 when not reached) and @delivered, drop the scope's in-flight count
 * (and the key's in the quota model),
 * end the write's idempotency key (fa_store_end: a committed one now
 * replays, an uncommitted one is forgotten),
 * record the pause the answer announced, and append the attempt to the
 * journal and count it in the metrics (admin traffic is neither). Releases
 * nothing: call fa_resp_release() after. Thread-safe.
 */
void fa_provider_finish(struct fa_provider *p, struct fa_resp *resp, int64_t t_response_us,
                        int64_t t_done_us, enum fa_delivery delivered);

/* Admin reset: cursors rewind, pauses end, quota buckets fill up again
 * (quota.h: fa_quota_reset), the store forgets its records
 * and keys (provider ids go on), the journal's memory is cleared. The
 * metrics' counters go on (a Prometheus counter only grows). Thread-safe. */
void fa_provider_reset(struct fa_provider *p);

struct fa_metrics;

/*
 * Its metrics (borrowed; metrics.h). fa_provider_decide() counts the quota
 * model's word on each request it meters (a refusal; or the tokens
 * reserved, and those refunded); fa_provider_finish() counts each
 * journaled attempt by route, status and fault, and each stream by how it
 * ended.
 */
struct fa_metrics *fa_provider_metrics(struct fa_provider *p);

/*
 * The text of GET /_fakeapi/metrics (fa_metrics_text(), its length in
 * *@len when not NULL): the counters, and the gauges read now: each
 * scope's requests in flight, the scopes whose pause has not ended, the
 * journal's entries and bytes. The caller frees it. Thread-safe.
 */
char *fa_provider_metrics_text(struct fa_provider *p, size_t *len);

/* Current state for GET /_fakeapi/state: {"scenario", "routes": [{id,
 * cursor state}], "scopes": [{scope, pause_until_us, in_flight}],
 * "store": fa_store_json(), "journal": {count, head}}; the caller frees
 * the string. */
char *fa_provider_state_json(struct fa_provider *p);

#endif
