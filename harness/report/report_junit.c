/* report_junit.c -- the JUnit XML report: a testsuite per scenario, a testcase per check, for CI.
 */
#include "report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "known_failing.h"
#include "report_facts.h"
#include "utf8.h"

/* Write @s XML-escaped (attribute and text alike). XML 1.0 cannot carry
 * most control characters even as references, nor broken UTF-8: those
 * bytes are written as the visible text \xNN. */
static void put_xml(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t left = strlen((const char *)p), n, i;
	uint32_t cp = 0;

	while (left > 0) {
		n = fa_utf8_seq((const char *)p, left, &cp);
		if (n == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    cp == 0xfffe || cp == 0xffff) {
			n = n ? n : 1;
			for (i = 0; i < n; i++)
				fprintf(f, "\\x%02X", p[i]);
			p += n;
			left -= n;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\r': fputs("&#13;", f); break;
		default: fwrite(p, 1, n, f); break;
		}
		p += n;
		left -= n;
	}
}

/* What the <testsuites> element totals. */
struct totals {
	size_t tests, failures, errors, skipped;
};

/* @text, a client's words in scenario @sc, without its canaries
 * (hx_report_scrub), XML-escaped. */
static void put_client_xml(FILE *f, const struct hx_scenario_result *sc, const char *text)
{
	char *clean = hx_report_scrub(sc, text);

	put_xml(f, clean);
	free(clean);
}

/* The scenario's journal lines behind @c, one per line. */
static void junit_evidence(FILE *f, const struct hx_scenario_result *s,
                           const struct hx_check_result *c)
{
	size_t i;

	for (i = 0; i < c->n_evidence; i++) {
		const struct fa_attempt *a = hx_report_attempt(s, c->evidence[i]);
		char *line;

		if (a == NULL) {
			fprintf(f, "seq %" PRIu64 "\n", c->evidence[i]);
			continue;
		}
		line = hx_report_attempt_line(a);
		put_client_xml(f, s, line);
		fputc('\n', f);
		free(line);
	}
}

static void junit_property(FILE *f, const char *name, const char *value)
{
	fputs("      <property name=\"", f);
	put_xml(f, name);
	fputs("\" value=\"", f);
	put_xml(f, value);
	fputs("\"/>\n", f);
}

/* A <system-err> with the client's stderr behind check @c (NULL: behind
 * the scenario as a whole): stdio mode, the client's tail; exec mode, the
 * tail of each task @c's evidence names (of each task whose tail the
 * reports show, for the scenario). Nothing when there is none. */
static void junit_stderr(FILE *f, const struct hx_scenario_result *s,
                         const struct hx_check_result *c, const char *indent)
{
	bool open = false;

	if (s->client_stderr != NULL && s->client_stderr[0] != '\0' &&
	    (c != NULL || hx_report_client_stderr_shown(s))) {
		fprintf(f, "%s<system-err>client stderr (its last lines):\n", indent);
		put_client_xml(f, s, s->client_stderr);
		open = true;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct hx_task_run *t = &s->tasks[i];
		const char *id = t->spec ? t->spec->id : NULL;

		if (t->stderr_tail == NULL || t->stderr_tail[0] == '\0' ||
		    !(c != NULL ? hx_report_check_names_task(s, c, id)
		                : hx_report_task_stderr_shown(s, t)))
			continue;
		if (open)
			fputc('\n', f);
		else
			fprintf(f, "%s<system-err>", indent);
		open = true;
		fputs("task ", f);
		put_xml(f, id ? id : "?");
		fputs(" stderr (its last lines):\n", f);
		put_client_xml(f, s, t->stderr_tail);
	}
	if (open)
		fputs("</system-err>\n", f);
}

/* A failed check the --known-failing list forgives: reported skipped. */
static bool known(const struct hx_run_result *r, const struct hx_check_result *c)
{
	return c->verdict == HX_FAIL && c->id != NULL &&
	       hx_grade_known_state(r, c->id) == HX_KNOWN_FAILING;
}

/* A failure that does not change the exit code (forgiven by the list, or
 * recommended there): reported skipped, so the page is red only for what
 * fails the run. */
static bool forgiven(const struct hx_run_result *r, const struct hx_check_result *c)
{
	return c->verdict == HX_FAIL && (known(r, c) || !hx_grade_counts(r, c));
}

static void junit_scenario(FILE *f, const struct hx_run_result *r,
                           const struct hx_scenario_result *s, struct totals *tot)
{
	size_t fail = 0, skip = 0, na = 0, i;
	size_t tests;
	char num[32], *not_judged = fa_xstrdup(""), *more;

	/* only judged checks are testcases: an N/A is "not judged", never a
	 * skipped test a CI page would count with the known failures */
	for (i = 0; i < s->n_checks; i++) {
		if (s->checks[i].verdict == HX_NA) {
			more = fa_xasprintf("%s%s%s", not_judged, na++ ? " " : "",
			                    s->checks[i].id ? s->checks[i].id : "?");
			free(not_judged);
			not_judged = more;
		} else if (forgiven(r, &s->checks[i])) {
			skip++;
		} else if (s->checks[i].verdict == HX_FAIL) {
			fail++;
		}
	}
	tests = s->n_checks - na + (s->error ? 1 : 0);
	tot->tests += tests;
	tot->failures += fail;
	tot->errors += s->error ? 1 : 0;
	tot->skipped += skip;
	fputs("  <testsuite name=\"", f);
	put_xml(f, hx_report_scenario_id(s));
	fprintf(f,
	        "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" skipped=\"%zu\" "
	        "time=\"%.3f\">\n",
	        tests, fail, s->error ? 1 : 0, skip, (double)s->duration_us / 1e6);
	fputs("    <properties>\n", f);
	junit_property(f, "file", s->sc ? s->sc->file : "");
	junit_property(f, "sha256", s->sc ? s->sc->sha256 : "");
	junit_property(f, "journal_head", hx_report_head(s));
	snprintf(num, sizeof(num), "%zu", s->n_attempts);
	junit_property(f, "attempts", num);
	snprintf(num, sizeof(num), "%zu", hx_report_unattributed(s));
	junit_property(f, "unattributed_attempts", num);
	/* the checks this scenario could not judge, space-separated */
	junit_property(f, "not_judged", not_judged);
	free(not_judged);
	if (r->time_scale > 1.0) {
		/* the times are virtual: the suite ran this much faster */
		snprintf(num, sizeof(num), "%g", r->time_scale);
		junit_property(f, "time_scale", num);
	}
	fputs("    </properties>\n", f);
	if (s->error != NULL) {
		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fputc('.', f);
		put_xml(f, hx_report_scenario_id(s));
		fputs("\" name=\"scenario\" time=\"0\">\n      <error message=\"", f);
		put_client_xml(f, s, s->error);
		fputs("\" type=\"scenario\">", f);
		put_client_xml(f, s, s->error);
		fputs("</error>\n    </testcase>\n", f);
	}
	for (i = 0; i < s->n_checks; i++) {
		const struct hx_check_result *c = &s->checks[i];

		if (c->verdict == HX_NA)
			continue;
		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fputc('.', f);
		put_xml(f, hx_report_scenario_id(s));
		fputs("\" name=\"", f);
		put_xml(f, c->id);
		fputs("\" time=\"0\">\n", f);
		if (forgiven(r, c)) {
			fputs(known(r, c) ? "      <skipped message=\"known failing: "
			                  : "      <skipped message=\"recommended, not counted: ",
			      f);
			put_client_xml(f, s, c->detail);
			fputs("\"/>\n      <system-out>", f);
			junit_evidence(f, s, c);
			fputs("</system-out>\n", f);
		} else if (c->verdict == HX_FAIL) {
			fputs("      <failure message=\"", f);
			put_client_xml(f, s, c->detail);
			fprintf(f, "\" type=\"L%d required\">", c->level);
			junit_evidence(f, s, c);
			fputs("</failure>\n", f);
			junit_stderr(f, s, c, "      ");
		} else {
			fputs("      <system-out>", f);
			put_client_xml(f, s, c->detail);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	/* the failed and killed tasks' output, the client's when it failed */
	junit_stderr(f, s, NULL, "    ");
	fputs("  </testsuite>\n", f);
}

/* A testsuite "known-failing": a testcase per entry of the list, a
 * failure for one that passes now. */
static void junit_known_failing(FILE *f, const struct hx_run_result *r, struct totals *tot)
{
	const struct hx_known_failing *kf = r->known_failing;
	size_t fail = 0, skip = 0, i;

	if (kf == NULL || kf->n_entries == 0)
		return;
	for (i = 0; i < kf->n_entries; i++) {
		enum hx_known_state k = hx_grade_known_state(r, kf->entries[i].id);

		fail += k == HX_KNOWN_PASSES_NOW;
		skip += k != HX_KNOWN_PASSES_NOW;
	}
	tot->tests += kf->n_entries;
	tot->failures += fail;
	tot->skipped += skip;
	fprintf(f,
	        "  <testsuite name=\"known-failing\" tests=\"%zu\" failures=\"%zu\" "
	        "errors=\"0\" skipped=\"%zu\" time=\"0\">\n",
	        kf->n_entries, fail, skip);
	for (i = 0; i < kf->n_entries; i++) {
		const struct hx_known_entry *e = &kf->entries[i];
		enum hx_known_state k = hx_grade_known_state(r, e->id);

		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fprintf(f, ".known-failing\" name=\"%s\" time=\"0\">\n", e->id);
		if (k == HX_KNOWN_PASSES_NOW) {
			fprintf(f,
			        "      <failure message=\"known-failing entry %s passes now: "
			        "remove it from ",
			        e->id);
			put_xml(f, kf->file);
			fprintf(f, "\" type=\"known-failing\">line %u</failure>\n", e->line);
		} else {
			fputs(k == HX_KNOWN_FAILING
			              ? "      <skipped message=\"fails, as listed"
			              : "      <skipped message=\"not shown by the run",
			      f);
			if (e->reason != NULL) {
				fputs(": ", f);
				put_xml(f, e->reason);
			}
			fputs("\"/>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);
}

/* A testsuite "repeat": a testcase per check with its suite verdicts over
 * the runs; a failure when it failed in any run where it counted and the
 * list does not forgive it. */
static void junit_repeat(FILE *f, const struct hx_run_result *r, struct totals *tot)
{
	const struct hx_repeat *rep = r->repeat;
	size_t fail = 0, skip = 0, tests = 0, d, n;

	if (rep == NULL)
		return;
	n = rep->n_tally < hx_check_count() ? rep->n_tally : hx_check_count();
	for (d = 0; d < n; d++) {
		const struct hx_repeat_tally *t = &rep->tally[d];
		bool listed =
		        hx_known_failing_find(r->known_failing, hx_check_def_at(d)->id) != NULL;

		if (t->pass == 0 && t->fail == 0)
			continue; /* n/a in every run: not judged, not a test */
		tests++;
		if (t->fail > 0 && t->counted && !listed)
			fail++;
		else if (t->fail > 0)
			skip++;
	}
	tot->tests += tests;
	tot->failures += fail;
	tot->skipped += skip;
	fprintf(f,
	        "  <testsuite name=\"repeat\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	        "skipped=\"%zu\" time=\"0\">\n",
	        tests, fail, skip);
	for (d = 0; d < n; d++) {
		const struct hx_repeat_tally *t = &rep->tally[d];
		const char *id = hx_check_def_at(d)->id;
		bool listed = hx_known_failing_find(r->known_failing, id) != NULL;
		char tally[96];

		if (t->pass == 0 && t->fail == 0)
			continue;

		snprintf(tally, sizeof(tally), "%u/%u pass, %u fail, %u n/a", t->pass, rep->runs,
		         t->fail, t->na);
		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fprintf(f, ".repeat\" name=\"%s\" time=\"0\">\n", id);
		if (t->fail > 0 && t->counted && !listed)
			fprintf(f, "      <failure message=\"%s\" type=\"L%d required\"/>\n", tally,
			        hx_check_def_at(d)->level);
		else if (t->fail > 0)
			fprintf(f, "      <skipped message=\"%s%s\"/>\n", tally,
			        listed ? " (known failing)" : " (not counted)");
		else
			fprintf(f, "      <system-out>%s%s</system-out>\n", tally,
			        listed ? " (known failing)" : "");
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);
}

/* A testsuite "grade" with one testcase "level": the level reached and
 * the exit code's reason. It is the failure (or the error) when the exit
 * code is not 0 and no testcase above says so (the level is below the
 * minimum, no required check passed, the run was interrupted), so the page
 * is red exactly when the exit code is not 0. */
static void junit_grade(FILE *f, const struct hx_run_result *r, struct totals *tot)
{
	bool fail = r->exit_code == 1 && tot->failures == 0;
	bool error = r->exit_code == 2 && tot->errors == 0;
	char *why = hx_report_exit_reason(r);

	tot->tests++;
	tot->failures += fail;
	tot->errors += error;
	fprintf(f,
	        "  <testsuite name=\"grade\" tests=\"1\" failures=\"%d\" errors=\"%d\" "
	        "skipped=\"0\" time=\"0\">\n    <testcase classname=\"",
	        fail, error);
	put_xml(f, hx_report_suite_id(r));
	fputs(".grade\" name=\"level\" time=\"0\">\n", f);
	fprintf(f, "      <%s",
	        fail    ? "failure message=\""
	        : error ? "error message=\""
	                : "system-out>");
	fprintf(f, "level reached: %s", hx_report_level_str(r->level));
	if (r->min_level > 0)
		fprintf(f, " (minimum %s)", hx_report_level_str(r->min_level));
	fprintf(f, "; exit code %d: ", r->exit_code);
	put_xml(f, why);
	fputs(fail    ? "\" type=\"grade\"/>\n"
	      : error ? "\" type=\"grade\"/>\n"
	              : "</system-out>\n",
	      f);
	fputs("    </testcase>\n  </testsuite>\n", f);
	free(why);
}

enum fa_rc hx_report_junit(const char *path, const struct hx_run_result *r, struct fa_err *err)
{
	struct totals tot = { 0 };
	char *body = NULL;
	size_t len = 0;
	struct hx_report_out out;
	FILE *f, *mem;
	enum fa_rc rc;

	/* the totals come first but are known last: the suites go to memory */
	mem = fa_xcheck(open_memstream(&body, &len), "report");
	for (size_t i = 0; i < r->n_scenarios; i++)
		junit_scenario(mem, r, &r->scenarios[i], &tot);
	junit_known_failing(mem, r, &tot);
	junit_repeat(mem, r, &tot);
	junit_grade(mem, r, &tot);
	fclose(mem);
	rc = hx_report_open(path, &out, err);
	f = out.f;
	if (rc != FA_OK)
		goto out;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
	put_xml(f, hx_report_suite_id(r));
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", tot.tests,
	        tot.failures, tot.errors, tot.skipped);
	fwrite(body, 1, len, f);
	fputs("</testsuites>\n", f);
	rc = hx_report_close(&out, path, err);
out:
	free(body);
	return rc;
}
