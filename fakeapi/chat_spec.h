/* chat_spec.h -- a route's "kind" and the chat endpoint's route and response options. */
#ifndef FA_CHAT_SPEC_H
#define FA_CHAT_SPEC_H

#include <cJSON.h>

#include "rc.h"
#include "scenario.h"
#include "schema.h"

/* The names of enum fa_route_kind, in order, NULL-terminated:
 * "scripted", "chat_completions", "models". */
extern const char *const fa_route_kinds[];

/*
 * Finish route @rt (at the current path of @s; its kind, effect and
 * responses already read): "reply" (@reply, a string, or NULL) only on a
 * chat_completions route, at most FA_CHAT_REPLY_MAX bytes; "models"
 * (@models, a non-empty array, or NULL) only on a models route, unique
 * non-empty strings of at most 256 bytes, at most FA_CHAT_MAX_MODELS; no
 * "effect" on a chat_completions or models route; on those routes a 2xx
 * response has no "body" (the provider renders it); "error_after_chunks"
 * only on a chat_completions route and with a "shape"; "stop_after_chunks"
 * only on a chat_completions route, with a 2xx status, no shape and no
 * "fault"; "chunk_delay_ms" (> 0) only on a chat_completions route, with a
 * 2xx status or a shape; "stall_after_chunks" only on a chat_completions
 * route, with a 2xx status and without "stop_after_chunks",
 * "error_after_chunks", a shape or a "fault" (the loader has checked that
 * "stall_ms" comes with it). Fills the defaults (FA_CHAT_DEFAULT_REPLY, one model
 * FA_CHAT_DEFAULT_MODEL). Errors are recorded through @s; whatever was
 * read stays in @rt for fa_chat_spec_release().
 */
enum fa_rc fa_chat_spec_read(struct fa_schema *s, const cJSON *reply,
			     const cJSON *models, struct fa_route_spec *rt);

/* Free @rt's reply and models. */
void fa_chat_spec_release(struct fa_route_spec *rt);

#endif
