/* chat_spec.h -- a route's "kind" and the LLM endpoints' route and response options. */
#ifndef FA_CHAT_SPEC_H
#define FA_CHAT_SPEC_H

#include <cJSON.h>

#include "rc.h"
#include "route.h"
#include "schema.h"

/* The names of enum fa_route_kind, in order, NULL-terminated:
 * "scripted", "chat_completions", "models", "messages". */
extern const char *const fa_route_kinds[];

/*
 * Finish route @rt (at the current path of @s; its kind, effect and
 * responses already read) with its "reply" (@reply, a string, or NULL)
 * and "models" (@models, a non-empty array, or NULL), and check the
 * stream members of its responses against its kind, as
 * docs/scenario-format.md ("Chat completions", "Messages") says; fills
 * the defaults (FA_CHAT_DEFAULT_REPLY, one model FA_CHAT_DEFAULT_MODEL).
 * Errors are recorded through @s; whatever was read stays in @rt for
 * fa_chat_spec_release().
 */
enum fa_rc fa_chat_spec_read(struct fa_schema *s, const cJSON *reply, const cJSON *models,
                             struct fa_route_spec *rt);

/* Free @rt's reply and models. */
void fa_chat_spec_release(struct fa_route_spec *rt);

#endif
