/* report_junit.c -- the JUnit XML report: a testsuite per scenario, a testcase per check, for CI. */
#include "report.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		put_xml(f, line);
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

static void junit_scenario(FILE *f, const struct hx_run_result *r,
			   const struct hx_scenario_result *s)
{
	size_t fail = 0, skip = 0, i;
	size_t tests = s->n_checks + (s->error ? 1 : 0);
	char num[32];

	for (i = 0; i < s->n_checks; i++) {
		if (s->checks[i].verdict == HX_FAIL)
			fail++;
		else if (s->checks[i].verdict == HX_NA)
			skip++;
	}
	fputs("  <testsuite name=\"", f);
	put_xml(f, hx_report_scenario_id(s));
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" skipped=\"%zu\" "
		"time=\"%.3f\">\n", tests, fail, s->error ? 1 : 0, skip,
		(double)s->duration_us / 1e6);
	fputs("    <properties>\n", f);
	junit_property(f, "file", s->sc ? s->sc->file : "");
	junit_property(f, "sha256", s->sc ? s->sc->sha256 : "");
	junit_property(f, "journal_head", hx_report_head(s));
	snprintf(num, sizeof(num), "%zu", s->n_attempts);
	junit_property(f, "attempts", num);
	snprintf(num, sizeof(num), "%zu", hx_report_unattributed(s));
	junit_property(f, "unattributed_attempts", num);
	fputs("    </properties>\n", f);
	if (s->error != NULL) {
		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fputc('.', f);
		put_xml(f, hx_report_scenario_id(s));
		fputs("\" name=\"scenario\" time=\"0\">\n      <error message=\"", f);
		put_xml(f, s->error);
		fputs("\" type=\"scenario\">", f);
		put_xml(f, s->error);
		fputs("</error>\n    </testcase>\n", f);
	}
	for (i = 0; i < s->n_checks; i++) {
		const struct hx_check_result *c = &s->checks[i];

		fputs("    <testcase classname=\"", f);
		put_xml(f, hx_report_suite_id(r));
		fputc('.', f);
		put_xml(f, hx_report_scenario_id(s));
		fputs("\" name=\"", f);
		put_xml(f, c->id);
		fputs("\" time=\"0\">\n", f);
		if (c->verdict == HX_FAIL) {
			fputs("      <failure message=\"", f);
			put_xml(f, c->detail);
			fprintf(f, "\" type=\"L%d %s\">", c->level,
				c->required ? "required" : "recommended");
			junit_evidence(f, s, c);
			fputs("</failure>\n", f);
		} else if (c->verdict == HX_NA) {
			fputs("      <skipped message=\"", f);
			put_xml(f, c->detail);
			fputs("\"/>\n", f);
		} else {
			fputs("      <system-out>", f);
			put_xml(f, c->detail);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n", f);
}

enum fa_rc hx_report_junit(const char *path, const struct hx_run_result *r,
			   struct fa_err *err)
{
	struct hx_report_counts t;
	FILE *f = NULL;
	enum fa_rc rc;

	rc = hx_report_open(path, &f, err);
	if (rc != FA_OK)
		goto out;
	hx_report_count(r, &t);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
	put_xml(f, hx_report_suite_id(r));
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n",
		t.pass + t.fail + t.na + t.broken, t.fail, t.broken, t.na);
	for (size_t i = 0; i < r->n_scenarios; i++)
		junit_scenario(f, r, &r->scenarios[i]);
	fputs("</testsuites>\n", f);
	rc = hx_report_close(f, path, err);
out:
	return rc;
}
