/* provider_fixture.h -- a provider played from scenario text and asked without a socket. */
#ifndef FX_PROVIDER_FIXTURE_H
#define FX_PROVIDER_FIXTURE_H

#include <stdint.h>

#include "journal.h"
#include "provider.h"
#include "scenario.h"

/*
 * The provider playing the scenario in @text (named @name in errors),
 * with random choices from @seed and its clock starting now, journaling
 * into a new in-memory journal. *@sc and *@j get the scenario and the
 * journal. A scenario that does not parse fails the test (fatal). Free
 * all three with fx_provider_stop().
 */
struct fa_provider *fx_provider_start(const char *text, const char *name, uint64_t seed,
                                      struct fa_scenario **sc, struct fa_journal **j);

/* Free @p, then @j, then @sc. */
void fx_provider_stop(struct fa_provider *p, struct fa_journal *j, struct fa_scenario *sc);

/*
 * Decide @method @path (connection 1, arriving now) presenting
 * "Authorization: Bearer @secret", with @body (NULL: none), into @r
 * (cleared first); fx_done() ends it.
 */
void fx_decide_as(struct fa_provider *p, const char *secret, const char *method, const char *path,
                  const char *body, struct fa_resp *r);

/* fx_decide_as() with secret "s1", the key the fixtures' scenarios give. */
void fx_decide(struct fa_provider *p, const char *method, const char *path, const char *body,
               struct fa_resp *r);

/* Finish @r as delivered whole now (the journal gets its attempt) and
 * release it. */
void fx_done(struct fa_provider *p, struct fa_resp *r);

/* The value of @r's header @name, spelled exactly (the platform's rate-limit
 * contract gives header names letter for letter), or NULL. */
const char *fx_resp_header(const struct fa_resp *r, const char *name);

#endif
