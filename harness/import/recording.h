/* recording.h -- a journal fakeapi recorded turned into a scenario that answers the same way. */
#ifndef HX_RECORDING_H
#define HX_RECORDING_H

#include <stddef.h>

#include <cJSON.h>

#include "draft.h"
#include "journal.h"
#include "rc.h"

/*
 * Convert the attempts @a[0..@n) (a journal's lines, read from the file
 * @name) into a scenario object (docs/import.md gives the mapping),
 * taking them in order of arrival (t_arrival_us, then seq: seq counts
 * completions): routes by method and path template, each attempt a response
 * with its status, a stand-in body (the journal keeps none), its
 * Retry-After and its connection fault; unless @opts->no_harness, one
 * task per journal task (attempts without one: per method, path, body
 * hash and key), sent at its first arrival's offset from the first
 * arrival of the file. Attempts the provider would answer again by itself
 * (unauthorized, too_large), reconciliation reads (the store answers
 * them), incomplete requests and paths with a "." or ".." segment (a
 * client resolves it before sending) are left out. Returns FA_OK and a
 * new object in *@out (cJSON_Delete), not yet checked by the loader, or
 * FA_EINVAL with "NAME: ..." in @err (nothing left to import; a task
 * starting more than an hour after the first arrival) or
 * "NAME:LINE: $.status: expected integer 100..599, got 999" (a status
 * no HTTP answer has; 0, none sent, is a drop: @a[i] is from line i + 1).
 */
enum fa_rc hx_recording_scenario(const struct fa_attempt *a, size_t n, const char *name,
                                 const struct hx_draft_opts *opts, cJSON **out,
                                 struct hx_draft_warnings *warn, struct fa_err *err);

/*
 * Read the JSONL journal at @path (a malformed line is FA_EINVAL
 * "PATH:LINE: ..."; unreadable FA_EIO "PATH: cannot read: ..."), check its
 * hash chain (a break is only a warning: the lines are imported as they
 * are) and hx_recording_scenario() it.
 */
enum fa_rc hx_recording_convert(const char *path, const struct hx_draft_opts *opts, cJSON **out,
                                struct hx_draft_warnings *warn, struct fa_err *err);

#endif
