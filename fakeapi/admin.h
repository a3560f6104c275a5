/* admin.h -- the reserved /_fakeapi/ endpoints; never journaled. */
#ifndef FA_ADMIN_H
#define FA_ADMIN_H

#include <stdbool.h>

#include "provider.h"

/* Reserved prefix: nothing under it is a scenario route or an attempt. */
#define FA_ADMIN_PREFIX "/_fakeapi/"

/* Is @name (a host name or address, no port) a loopback one: localhost
 * and *.localhost in any letter case (RFC 6761), 127.0.0.0/8, ::1? */
bool fa_admin_loopback_name(const char *name);

/* Is @path under FA_ADMIN_PREFIX? */
bool fa_admin_is_admin_path(const char *path);

/*
 * Answer an admin request into @resp (JSON bodies but one):
 * GET health -> {"status": "ok", "attempts"}, or "degraded" with
 *   "journal_file": {"error", "last_seq", "missing"} once a write to the
 *   journal file failed (fa_journal_file_failed);
 * GET journal[?since=SEQ] -> the fa_journal_json document as a streamed
 *   view (resp->journal_view, no body; 400 on a bad since);
 * GET metrics -> fa_provider_metrics_text, the Prometheus text format
 * (FA_METRICS_CONTENT_TYPE; docs/internals.md, "Metrics");
 * POST reset -> fa_provider_reset, {"reset": true};
 * GET state -> fa_provider_state_json.
 * HEAD is GET's. Unknown endpoint 404 naming them all, wrong method 405
 * with Allow. Thread-safe.
 */
void fa_admin_handle(struct fa_provider *p, const struct fa_req *req, struct fa_resp *resp);

#endif
