/* timeline.h -- one scenario's attempts over time, drawn as an inline SVG for the HTML report. */
#ifndef HX_TIMELINE_H
#define HX_TIMELINE_H

#include <stdio.h>

#include "result.h"

/*
 * Write the timeline of @s on @f as one <svg> element (docs/report.md,
 * "HTML"): a lane per task of the scenario, then one for the attempts
 * that name none of them; each journal entry exactly one
 * <circle class="attempt ..." data-seq="N"> at its arrival (µs since the
 * provider started, on an axis in ms or s), coloured by status class,
 * with its journal line as <title>; faults crossed; the pauses the
 * answers announced shaded in every lane of their scope; a legend. The
 * client's words are escaped and scrubbed (html.h). Writes nothing when
 * @s has neither an attempt nor a task.
 */
void hx_timeline_write(FILE *f, const struct hx_scenario_result *s);

#endif
