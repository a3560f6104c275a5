/* scope.h -- per-scope state: the pause in force and requests in flight. */
#ifndef FA_SCOPE_H
#define FA_SCOPE_H

#include <stdint.h>

#include <cJSON.h>

/* What a "scope" is: the set of requests that share a pause, a cursor
 * (FA_CURSOR_SCOPE) and, later, a budget. The retry-safety guide: an account scope. */
enum fa_scope_kind {
	FA_SCOPE_USER = 0, /* scope "user:<user>": every key of one account */
	FA_SCOPE_KEY,      /* scope "key:<key id>" */
};

/*
 * A scope is the set of requests a provider meters together (the retry-safety guide: an
 * account or a key): a Retry-After sent to one of them pauses them all.
 * Scopes are named by strings ("user:ops-team", "key:ops-1") and created
 * on first use. Not thread-safe: the provider holds its lock.
 */
struct fa_scopes;

struct fa_scopes *fa_scopes_new(void);

/* NULL accepted. */
void fa_scopes_free(struct fa_scopes *s);

/* A request of @scope arrived: returns the in-flight count, itself included. */
int fa_scopes_enter(struct fa_scopes *s, const char *scope);

/* A request of @scope finished (never below 0). */
void fa_scopes_leave(struct fa_scopes *s, const char *scope);

/* Extend @scope's pause to @until_us (monotonic µs since start) if later. */
void fa_scopes_pause(struct fa_scopes *s, const char *scope, int64_t until_us);

/* End of @scope's pause in µs since start; -1 when none was announced. */
int64_t fa_scopes_pause_until(struct fa_scopes *s, const char *scope);

/* End every pause (admin reset); in-flight counts stay, they are real. */
void fa_scopes_reset(struct fa_scopes *s);

/* Call @fn with @ctx for each scope, in order of first use: its name
 * (borrowed for the call), the end of its pause (µs since start, -1 when
 * none was announced) and its requests in flight. @fn must not change @s. */
void fa_scopes_each(const struct fa_scopes *s,
                    void (*fn)(void *ctx, const char *scope, int64_t pause_until_us, int in_flight),
                    void *ctx);

/* [{"scope", "pause_until_us", "in_flight"}]; caller frees. */
cJSON *fa_scopes_json(const struct fa_scopes *s);

#endif
