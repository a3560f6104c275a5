/* har.h -- a HAR 1.2 capture (browser developer tools, proxies) turned into a scenario. */
#ifndef HX_HAR_H
#define HX_HAR_H

#include <stddef.h>

#include <cJSON.h>

#include "draft.h"
#include "rc.h"

/*
 * Convert the HAR text @text (@len bytes, read from the file @name) into
 * a scenario object (docs/import.md gives the mapping): routes by method
 * and path template, each with its responses in entry order (consecutive
 * identical ones merged into "times" N), hop-by-hop and secret headers
 * dropped, JSON bodies kept, timings.wait as "delay_ms"; unless
 * @opts->no_harness, one task per distinct request (method, URL, body)
 * sent at its first entry's offset from the earliest entry. Entries
 * --host or --path-prefix leave out are checked for request.url only.
 *
 * Errors name the file and the entry, in the scenario loader's style:
 * "capture.har: $.log.entries[3].response.status: expected integer
 * 100..599, got string "200""; a syntax error is "capture.har:LINE:COL:
 * ..."; an empty result is an error too. Warnings (bodies dropped,
 * entries without a response skipped) go to @warn. Returns FA_OK and a
 * new object in *@out (cJSON_Delete), not yet checked by the loader
 * (hx_import_render does that), or FA_EINVAL and *@out NULL.
 */
enum fa_rc hx_har_convert(const char *text, size_t len, const char *name,
                          const struct hx_draft_opts *opts, cJSON **out,
                          struct hx_draft_warnings *warn, struct fa_err *err);

#endif
