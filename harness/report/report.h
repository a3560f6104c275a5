/* report.h -- the run's report: text and HTML for people, JSON and JUnit for machines. */
#ifndef HX_REPORT_H
#define HX_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "rc.h"
#include "result.h"

/*
 * Readable report on @out: per scenario, each judged check's verdict,
 * detail and evidence (journal lines), then the checks over the suite,
 * and last the recap: each failed check once with its reason and the
 * scenario it failed in, the profile, the level and the exit code, so the
 * last screen says why. N/A checks are counted but not listed unless
 * @verbose (`-v`); the JSON report keeps everything.
 */
void hx_report_text(FILE *out, const struct hx_run_result *r, bool verbose);

/* Write the JSON report (schema in docs/report.md) to @path ("-" = stdout).
 * FA_EIO with "PATH: cannot write: reason" in @err on failure. */
enum fa_rc hx_report_json(const char *path, const struct hx_run_result *r, struct fa_err *err);

/* Write JUnit XML to @path: a testsuite per scenario, a testcase per check
 * (fail = <failure>, n/a = <skipped>). Errors as hx_report_json. */
enum fa_rc hx_report_junit(const char *path, const struct hx_run_result *r, struct fa_err *err);

/*
 * Write the HTML report to @path ("-" = stdout): one self-contained page
 * (inline CSS, no script) with the summary, the recap, the profile and,
 * per scenario, every check with its evidence and an SVG timeline of its
 * attempts (timeline.h; docs/report.md, "HTML"). Errors as hx_report_json.
 */
enum fa_rc hx_report_html(const char *path, const struct hx_run_result *r, struct fa_err *err);

#endif
