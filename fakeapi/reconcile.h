/* reconcile.h -- the reconciliation reads: what became of a write whose outcome the client could
 * not see. */
#ifndef FA_RECONCILE_H
#define FA_RECONCILE_H

#include <stdbool.h>
#include <stdint.h>

struct fa_req;
struct fa_resp;
struct fa_store;
struct fa_store_spec;

/*
 * Is @req one of the reads @spec keeps on (docs/scenario-format.md,
 * "reconciliation"): GET /v1/records?client_reference=R, or GET
 * /v1/operations/{key}? Pure: a route lookup calls it to leave these to
 * fa_reconcile_answer().
 */
bool fa_reconcile_is_read(const struct fa_store_spec *spec, const struct fa_req *req);

/*
 * fa_reconcile_is_read() for a request of @method to @path (decoded,
 * without the query) whose query does or does not carry a
 * client_reference argument (@by_reference): what a scenario's task may
 * aim at without a route.
 */
bool fa_reconcile_is_read_of(const struct fa_store_spec *spec, const char *method, const char *path,
                             bool by_reference);

/*
 * Answer @req into @resp from @store when it is one of those reads:
 * GET /v1/records?client_reference=R -> 200 {"records": [...]} and
 * GET /v1/operations/{key} -> 200 {"idempotency_key", "status", "record"}
 * (as of @now_us, µs on the provider's clock) or 404 operation_not_found.
 * They are attempts (journaled, route "_reconcile_records" /
 * "_reconcile_operation", fault "respond", client_reference the one asked
 * about) that move no cursor. True when @req was one and @resp holds the
 * answer; false (nothing touched) otherwise. The caller serialises calls
 * as for the store.
 */
bool fa_reconcile_answer(const struct fa_store_spec *spec, struct fa_store *store,
                         const struct fa_req *req, int64_t now_us, struct fa_resp *resp);

#endif
