/* environment.h -- a process environment block: the harness's own, with entries replaced. */
#ifndef HX_ENVIRONMENT_H
#define HX_ENVIRONMENT_H

/*
 * The harness's environment (environ) with the names of @add's
 * "NAME=value" entries (NULL-terminated, or NULL) replaced by those
 * entries; a later entry of a name wins, and a bare "NAME" (no '=')
 * removes the name instead. Returns a NULL-terminated array the caller
 * frees (free() on the array only): its strings stay borrowed from
 * environ and @add. Allocates: call it before fork().
 */
char **hx_environment_merge(const char *const *add);

#endif
