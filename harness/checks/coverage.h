/* coverage.h -- which checks a scenario and a mode can judge at all, decided before the run. */
#ifndef HX_COVERAGE_H
#define HX_COVERAGE_H

#include "judge.h"

/*
 * The coverage predicate of check @id (docs/checks.md, "Coverage"), or
 * NULL when the check is covered wherever it runs (attempts.bounded,
 * escalation.sanitised, an unknown id). A predicate reads only the
 * scenario and the mode (c->in->sc, c->in->mode) and the parameters of
 * the check in focus, never the journal: a check is not covered where the
 * scenario poses nothing it judges (no answer that announces a pause, no
 * 4xx, no write, no cancel, no parameter it needs) or where the mode
 * cannot show it (attempts.hidden in exec mode). Its "why" is a static
 * phrase.
 */
hx_check_covers_fn *hx_coverage_of(const char *id);

/*
 * Whether c->def (in focus) is covered by c->in's scenario and mode:
 * hx_coverage_of() its id, true without a predicate or a scenario. A
 * scenario without routes (built by hand, as no loaded scenario is) is
 * judged by the mode alone. False with *@why a static phrase.
 */
bool hx_coverage_covers(const struct hx_check_ctx *c, const char **why);

/*
 * When task @id is released, as a lower bound in ms after the scenario's
 * start: its event's at_ms, or for an "after" trigger the trigger task's
 * release + plus_ms + 1 (the answer it waits for comes after that task
 * started). -1 when no event sends it or @sc has none such task.
 */
int64_t hx_coverage_release_ms(const struct fa_scenario *sc, const char *id);

#endif
