/* report_html.c -- the HTML report: one self-contained page with the summary, the recap, the
 * profile, and per scenario its checks and a timeline of its attempts, for people. */
#include "report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "grade.h"
#include "html.h"
#include "known_failing.h"
#include "recap.h"
#include "report_facts.h"
#include "timeline.h"

#define OPEN_EVIDENCE 20 /* journal lines a failed check shows unfolded, at most */

/* The page's only style: no asset, no script, so the file reads anywhere. */
static const char style[] =
        "body{font:14px/1.45 system-ui,sans-serif;color:#1d2125;margin:0 auto;"
        "max-width:1040px;padding:16px 20px 48px}\n"
        "h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;"
        "border-bottom:1px solid #ccd1d6;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}\n"
        "table{border-collapse:collapse;width:100%;margin:6px 0}\n"
        "th,td{text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid #e3e6e9}\n"
        "th{background:#f4f6f8;font-weight:600}\n"
        "table.facts th{width:150px;background:none}\n"
        "code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}\n"
        "pre{background:#f4f6f8;padding:6px 8px;margin:4px 0;white-space:pre-wrap;"
        "overflow-wrap:anywhere}\n"
        ".tag{display:inline-block;min-width:34px;text-align:center;font-weight:700;"
        "font-size:12px;border-radius:3px;padding:0 4px}\n"
        ".pass .tag,.tag.pass{background:#d9f2e6;color:#0b5c36}"
        ".fail .tag,.tag.fail{background:#fadbd8;color:#8a1c12}"
        ".na .tag,.tag.na{background:#eceef0;color:#4a5056}"
        ".error .tag,.tag.error{background:#ffe8b3;color:#6b4700}\n"
        ".verdict{font-size:16px;font-weight:600;padding:8px 12px;border-radius:4px}\n"
        ".exit0{background:#d9f2e6}.exit1{background:#fadbd8}.exit2{background:#ffe8b3}\n"
        ".note{color:#5b636b;font-size:12.5px}\n"
        "details>summary{cursor:pointer;color:#2a5d8f}\n"
        "figure{margin:8px 0;overflow-x:auto}\n"
        "ul.tasks{columns:20em;column-gap:24px;margin:6px 0}ul.tasks li{break-inside:avoid}\n"
        "svg.timeline{max-width:100%;height:auto;font:11px system-ui,sans-serif}\n"
        ".timeline .zebra{fill:#f4f6f8}.timeline .grid line{stroke:#dde1e6}"
        ".timeline .axis{stroke:#5b636b}\n"
        ".timeline .tick{fill:#4a5056;text-anchor:middle}.timeline .caption{fill:#5b636b}"
        ".timeline .lane{text-anchor:end;fill:#1d2125}\n"
        ".timeline .pause{fill:#56b4e9;fill-opacity:.3;stroke:#2a86c2;stroke-opacity:.7}\n"
        ".timeline .run{stroke:#8d959e;stroke-width:1.5}\n"
        ".timeline .attempt{stroke:#fff;stroke-width:.8}\n"
        ".s2xx{fill:#009e73}.s429{fill:#e69f00}.s5xx{fill:#d55e00}.s4xx{fill:#cc79a7}"
        ".sother{fill:#0072b2}.sna{fill:#aab1b9}\n"
        ".timeline .flight{stroke-width:4;stroke-opacity:.45;stroke-linecap:round}"
        ".flight.s2xx{stroke:#009e73}.flight.s429{stroke:#e69f00}.flight.s5xx{stroke:#d55e00}"
        ".flight.s4xx{stroke:#cc79a7}.flight.sother{stroke:#0072b2}"
        ".flight.snone,.flight.sna{stroke:#5b636b}\n"
        ".timeline .snone{fill:#fff;stroke:#5b636b;stroke-width:1.5}\n"
        ".timeline .cut-label{fill:#1f5f8b;font-size:10px}\n"
        ".timeline .fault-ring{stroke:#000;stroke-width:1.5;fill:none;pointer-events:none}\n"
        ".timeline .kill{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:4 3}"
        ".timeline .cancel{stroke:#000;stroke-width:2}\n";

static const char *verdict_class(enum hx_verdict v)
{
	return v == HX_PASS ? "pass" : v == HX_FAIL ? "fail" : "na";
}

static const char *verdict_tag(enum hx_verdict v)
{
	return v == HX_PASS ? "PASS" : v == HX_FAIL ? "FAIL" : "N/A";
}

/* One row of the summary table: @name, then @value escaped. */
static void fact(FILE *f, const char *name, const char *value)
{
	fprintf(f, "<tr><th>%s</th><td>", name);
	hx_html_put(f, value);
	fputs("</td></tr>\n", f);
}

/* The header: what ran, how it was graded, the level and the exit code. */
static void html_summary(FILE *f, const struct hx_run_result *r)
{
	const struct hx_repeat *rep = r->repeat;
	struct hx_report_counts t;
	char *why = hx_report_exit_reason(r), *hello;

	hx_report_count(r, &t);
	fputs("<header id=\"summary\">\n<h1>fakeapi-harness report: ", f);
	hx_html_put(f, hx_report_suite_id(r));
	fprintf(f, "</h1>\n<p class=\"verdict exit%d\">level reached: %s", r->exit_code,
	        hx_report_level_str(r->level));
	if (rep != NULL && rep->runs > 1)
		fprintf(f, " (lowest of %u runs)", rep->runs);
	if (r->min_level > 0)
		fprintf(f, " (minimum %s)", hx_report_level_str(r->min_level));
	fprintf(f, " &middot; exit code <span class=\"exit-code\">%d</span>: ", r->exit_code);
	hx_html_put(f, why);
	fputs("</p>\n<table class=\"facts\">\n", f);
	fact(f, "harness", r->harness_version);
	fputs("<tr><th>suite</th><td>", f);
	hx_html_put(f, hx_report_suite_id(r));
	if (r->suite && r->suite->version && r->suite->version[0] != '\0') {
		fputs(" version ", f);
		hx_html_put(f, r->suite->version);
	}
	if (r->suite && r->suite->title) {
		fputs(" &mdash; ", f);
		hx_html_put(f, r->suite->title);
	}
	fprintf(f, "</td></tr>\n<tr><th>seed</th><td>%" PRIu64 "</td></tr>\n", r->seed);
	if (r->time_scale > 1.0) {
		fprintf(f,
		        "<tr><th>time scale</th><td>%g (every time below is virtual: the "
		        "provider's clock and the client's ran %g times faster than real "
		        "time)</td></tr>\n",
		        r->time_scale, r->time_scale);
		fact(f, "client clock", r->clock_check);
	}
	fact(f, "mode", hx_report_mode_str(r->mode));
	fputs("<tr><th>client</th><td><code>", f);
	hx_html_put(f, r->client);
	fputs("</code></td></tr>\n", f);
	if (r->hello != NULL) {
		hello = fa_xcheck(cJSON_PrintUnformatted(r->hello), "report");
		fputs("<tr><th>client hello</th><td><code>", f);
		hx_html_put_client(f, hx_report_hello_scenario(r), hello);
		fputs("</code></td></tr>\n", f);
		free(hello);
	}
	fact(f, "strict", r->strict ? "yes (recommended checks count as required)" : "no");
	if (r->known_failing != NULL) {
		fputs("<tr><th>known failing</th><td>", f);
		hx_html_put(f, r->known_failing->file);
		fprintf(f, " (%zu entr%s)</td></tr>\n", r->known_failing->n_entries,
		        r->known_failing->n_entries == 1 ? "y" : "ies");
	}
	if (rep != NULL)
		fprintf(f,
		        "<tr><th>repeat</th><td>%u run%s of %u, seeds %" PRIu64 "..%" PRIu64
		        "; the scenarios below are the last run's</td></tr>\n",
		        rep->runs, rep->runs == 1 ? "" : "s", rep->planned, rep->first_seed,
		        rep->first_seed + (rep->runs ? rep->runs - 1 : 0));
	fprintf(f,
	        "<tr><th>verdicts</th><td>%zu pass, %zu fail, %zu n/a (%zu of them not "
	        "covered) over %zu scenario%s</td></tr>\n</table>\n</header>\n",
	        t.pass, t.fail, t.na, t.not_covered, r->n_scenarios,
	        r->n_scenarios == 1 ? "" : "s");
	free(why);
}

/* One row of the recap, as the text report's "why" says it. */
static void html_recap_row(FILE *f, const struct hx_recap_row *row)
{
	const char *lv = hx_report_level_str(row->level);

	if (row->kind == HX_RECAP_PASSES_NOW) {
		fprintf(f,
		        "<tr class=\"fail\"><td><span class=\"tag\">PASS</span></td><td><code>%s"
		        "</code> (L%d)</td><td colspan=\"2\">known failing, passes now: remove it "
		        "from the known-failing list</td></tr>\n",
		        row->def->id, row->def->level);
		return;
	}
	if (row->kind == HX_RECAP_NO_CHECKS) {
		fprintf(f,
		        "<tr class=\"na\"><td><span class=\"tag\">%s</span></td><td colspan=\"3\">"
		        "no %s check counts here (none is both covered and required), so %s is "
		        "not reached</td></tr>\n",
		        lv, lv, lv);
		return;
	}
	fprintf(f,
	        "<tr class=\"%s\"><td><span class=\"tag\">%s</span></td><td><code>%s</code> (L%d)",
	        row->kind == HX_RECAP_FAIL ? "fail" : "na",
	        row->kind == HX_RECAP_FAIL ? "FAIL" : "N/A", row->def->id, row->def->level);
	if (row->kind == HX_RECAP_FAIL && !row->counted)
		fputs(" <span class=\"note\">recommended, not counted</span>", f);
	if (row->kind == HX_RECAP_FAIL && row->known)
		fputs(" <span class=\"note\">known failing</span>", f);
	if (row->kind == HX_RECAP_NA)
		fprintf(f,
		        " <span class=\"note\">not judged where it counts, so %s is not "
		        "reached</span>",
		        lv);
	fputs("</td><td>", f);
	hx_html_put(f, hx_report_scenario_id(row->where));
	fputs("</td><td>", f);
	hx_html_put_client(f, row->where, row->detail);
	if (row->more > 0)
		fprintf(f, " (and in %zu more scenario%s)", row->more, row->more == 1 ? "" : "s");
	fputs("</td></tr>\n", f);
}

/* Why the run ended where it did: mirrors the text report's recap. */
static void html_recap(FILE *f, const struct hx_run_result *r)
{
	struct hx_recap rc;
	struct hx_error_group *g = fa_xcalloc(r->n_scenarios + 1, sizeof(*g));
	size_t n = hx_report_error_groups(r, g), n_fail = 0;

	hx_recap_build(r, &rc);
	size_t n_now = 0;

	for (size_t k = 0; k < rc.n; k++) {
		n_fail += rc.rows[k].kind == HX_RECAP_FAIL;
		n_now += rc.rows[k].kind == HX_RECAP_PASSES_NOW;
	}
	fputs("<section id=\"why\">\n<h2>Why</h2>\n<p>", f);
	if (n_fail > 0)
		fputs("Each failed check once, in the first scenario it failed:", f);
	else if (n_now > 0)
		fputs("No check failed, but a known-failing entry passes now:", f);
	else if (rc.n > 0)
		fprintf(f, "No check failed, but the level stops at %s:",
		        hx_report_level_str(r->level));
	else
		fputs(n > 0 ? "No check failed, but not every scenario ran:" : "No check failed.",
		      f);
	fputs("</p>\n", f);
	if (rc.n + n > 0)
		fputs("<table>\n<tr><th></th><th>check</th><th>scenario</th><th>why</th></tr>\n",
		      f);
	for (size_t k = 0; k < rc.n; k++)
		html_recap_row(f, &rc.rows[k]);
	for (size_t k = 0; k < n; k++) {
		const struct hx_scenario_result *first = &r->scenarios[g[k].first];

		fputs("<tr class=\"error\"><td><span class=\"tag\">ERROR</span></td>"
		      "<td>could not run</td><td>",
		      f);
		hx_html_put(f, hx_report_scenario_id(first));
		if (g[k].n > 1)
			fprintf(f, " and %zu more scenario%s", g[k].n - 1, g[k].n == 2 ? "" : "s");
		fputs("</td><td>", f);
		hx_html_put_client(f, first, g[k].cause);
		fputs("</td></tr>\n", f);
	}
	if (rc.n + n > 0)
		fputs("</table>\n", f);
	fputs("</section>\n", f);
	hx_recap_release(&rc);
	free(g);
}

/* What the --known-failing list says of check @id, for the profile;
 * @after: a note is already written before it. */
static void known_note(FILE *f, const struct hx_run_result *r, const char *id, bool after)
{
	const struct hx_known_entry *e = hx_known_failing_find(r->known_failing, id);

	if (after && e != NULL)
		fputs("; ", f);
	switch (hx_grade_known_state(r, id)) {
	case HX_KNOWN_FAILING: fputs("known failing", f); break;
	case HX_KNOWN_PASSES_NOW:
		fputs("known failing, passes now: remove it from ", f);
		hx_html_put(f, r->known_failing->file);
		fprintf(f, " (line %u)", e->line);
		return;
	case HX_KNOWN_NA: fputs("known failing, not shown", f); break;
	case HX_KNOWN_UNLISTED: return;
	}
	if (e != NULL && e->reason != NULL) {
		fputs(": ", f);
		hx_html_put(f, e->reason);
	}
}

/* The profile (docs/checks.md, "Profile"): each check's value over the
 * suite and its results per kind, by level. */
static void html_profile(FILE *f, const struct hx_run_result *r)
{
	fputs("<section id=\"profile\">\n<h2>Profile</h2>\n<table>\n<tr><th>level</th>"
	      "<th>check</th><th>over the suite</th><th>pass</th><th>fail</th><th>n/a</th>"
	      "<th>not covered</th><th></th></tr>\n",
	      f);
	for (int k = 1; k <= HX_MAX_LEVEL; k++) {
		for (size_t d = 0; d < hx_check_count(); d++) {
			const struct hx_check_def *def = hx_check_def_at(d);
			struct hx_profile_entry p;
			size_t n_uncounted;

			if (def->level != k)
				continue;
			hx_grade_profile(r, def->id, &p);
			fprintf(f,
			        "<tr class=\"%s\"><td>L%d</td><td><code>%s</code></td><td>"
			        "<span class=\"tag\">%s</span></td><td>%zu</td><td>%zu</td>"
			        "<td>%zu</td><td>%zu</td><td class=\"note\">",
			        p.covered ? verdict_class(p.verdict) : "na", k, def->id,
			        p.covered ? hx_verdict_str(p.verdict) : "not covered", p.pass,
			        p.fail, p.na, p.not_covered);
			n_uncounted = p.counted ? hx_recap_uncounted_failures(r, def->id) : 0;
			if (p.covered && !p.counted)
				fputs("not counted", f);
			else if (n_uncounted > 0)
				fprintf(f, "failed in %zu scenario%s where it was not counted",
				        n_uncounted, n_uncounted == 1 ? "" : "s");
			known_note(f, r, def->id, (p.covered && !p.counted) || n_uncounted > 0);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n</section>\n", f);
}

/* Each check's suite verdicts over the runs of a --repeat. */
static void html_repeat(FILE *f, const struct hx_repeat *rep)
{
	if (rep == NULL)
		return;
	fprintf(f,
	        "<section id=\"repeat\">\n<h2>Over %u run%s</h2>\n<table>\n<tr><th>check</th>"
	        "<th>pass</th><th>fail</th><th>n/a</th><th></th></tr>\n",
	        rep->runs, rep->runs == 1 ? "" : "s");
	for (size_t d = 0; d < rep->n_tally && d < hx_check_count(); d++) {
		const struct hx_repeat_tally *t = &rep->tally[d];

		fprintf(f,
		        "<tr><td><code>%s</code></td><td>%u/%u</td><td>%u</td><td>%u</td>"
		        "<td class=\"note\">%s</td></tr>\n",
		        hx_check_def_at(d)->id, t->pass, rep->runs, t->fail, t->na,
		        t->counted ? "" : "not counted");
	}
	fputs("</table>\n<p>levels:", f);
	for (unsigned k = 0; k < rep->runs; k++)
		fprintf(f, " %s", hx_report_level_str(rep->levels[k]));
	fputs("</p>\n</section>\n", f);
}

/* A link per scenario, with its counts. */
static void html_contents(FILE *f, const struct hx_run_result *r)
{
	fputs("<nav id=\"scenarios\">\n<h2>Scenarios</h2>\n<table>\n<tr><th></th><th>scenario</th>"
	      "<th>title</th><th>attempts</th><th>pass</th><th>fail</th><th>n/a</th></tr>\n",
	      f);
	for (size_t i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];
		size_t n[3] = { 0, 0, 0 };
		const char *kind;

		for (size_t j = 0; j < s->n_checks; j++)
			n[s->checks[j].verdict <= HX_NA ? s->checks[j].verdict : HX_NA]++;
		kind = s->error ? "error" : n[HX_FAIL] ? "fail" : "pass";
		fprintf(f,
		        "<tr class=\"%s\"><td><span class=\"tag\">%s</span></td><td><a "
		        "href=\"#scenario-%zu\">",
		        kind,
		        s->error     ? "ERROR"
		        : n[HX_FAIL] ? "FAIL"
		                     : "PASS",
		        i + 1);
		hx_html_put(f, hx_report_scenario_id(s));
		fputs("</a></td><td>", f);
		hx_html_put(f, s->sc && s->sc->title ? s->sc->title : "");
		if (s->error)
			fputs("</td><td colspan=\"4\">could not run</td></tr>\n", f);
		else
			fprintf(f, "</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n",
			        s->n_attempts, n[HX_PASS], n[HX_FAIL], n[HX_NA]);
	}
	fputs("</table>\n</nav>\n", f);
}

/* @text (a client's output in scenario @s), line by line, each escaped
 * and scrubbed, for a <pre>. */
static void put_lines(FILE *f, const struct hx_scenario_result *s, const char *text)
{
	const char *p = text, *nl;

	for (; *p != '\0'; p = nl ? nl + 1 : p + strlen(p)) {
		char *line;

		nl = strchr(p, '\n');
		line = fa_xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
		hx_html_put_client(f, s, line);
		fputc('\n', f);
		free(line);
	}
}

/* Tasks, kills, protocol errors, canary hits, the stderr tails. */
static void html_scenario_facts(FILE *f, const struct hx_run_result *r,
                                const struct hx_scenario_result *s)
{
	fputs("<ul class=\"tasks\">\n", f);
	for (size_t j = 0; j < s->n_tasks; j++) {
		char *what = hx_report_task_outcome(s, r->mode, &s->tasks[j]);

		fputs("<li>task <code>", f);
		hx_html_put(f, s->tasks[j].spec ? s->tasks[j].spec->id : "?");
		fputs("</code>: ", f);
		hx_html_put_client(f, s, what);
		if (s->tasks[j].stderr_tail != NULL && s->tasks[j].stderr_tail[0] != '\0') {
			/* open when it is evidence: the task failed or a failed check names it */
			fprintf(f, "<details%s><summary>stderr (its last lines)</summary><pre>",
			        hx_report_task_stderr_shown(s, &s->tasks[j]) ? " open" : "");
			put_lines(f, s, s->tasks[j].stderr_tail);
			fputs("</pre></details>", f);
		}
		fputs("</li>\n", f);
		free(what);
	}
	for (size_t j = 0; j < s->n_restarts; j++) {
		const struct hx_restart *rs = &s->restarts[j];

		fprintf(f,
		        "<li>kill at +%.1f ms: client killed (SIGKILL), %zu held answer%s let go",
		        (double)rs->t_kill_us / 1000.0, rs->released, rs->released == 1 ? "" : "s");
		if (rs->t_restart_us < 0)
			fputs("; not restarted", f);
		else
			fprintf(f, "; restarted at +%.1f ms", (double)rs->t_restart_us / 1000.0);
		for (size_t k = 0; k < rs->n_tasks; k++) {
			fputs(k ? " " : ", tasks: ", f);
			hx_html_put(f, rs->tasks[k]);
		}
		fputs("</li>\n", f);
	}
	if (s->n_canary_hits > 0 || s->canary_search_incomplete) {
		fprintf(f, "<li>canary hits: %zu", s->n_canary_hits);
		for (size_t j = 0; j < s->n_canary_hits; j++) {
			fprintf(f, "%s %s canary in ", j ? ";" : ":",
			        hx_report_canary_kind_str(s->canary_hits[j].kind));
			hx_html_put_client(f, s, s->canary_hits[j].where);
		}
		fputs(s->canary_search_incomplete ? " (search incomplete)</li>\n" : "</li>\n", f);
	}
	fputs("</ul>\n", f);
	if (s->n_protocol_errors > 0) {
		fprintf(f, "<details open><summary>protocol errors: %zu</summary><pre>",
		        s->n_protocol_errors_seen > s->n_protocol_errors ? s->n_protocol_errors_seen
		                                                         : s->n_protocol_errors);
		for (size_t j = 0; j < s->n_protocol_errors; j++) {
			hx_html_put_client(f, s, s->protocol_errors[j]);
			fputc('\n', f);
		}
		fputs("</pre></details>\n", f);
	}
	if (s->client_stderr != NULL && s->client_stderr[0] != '\0') {
		fprintf(f, "<details%s><summary>client stderr (its last lines)</summary><pre>",
		        hx_report_client_stderr_shown(s) ? " open" : "");
		put_lines(f, s, s->client_stderr);
		fputs("</pre></details>\n", f);
	}
}

/* One check's row: verdict, id, level, detail, and its evidence as
 * journal lines (open when it failed). */
static void html_check(FILE *f, const struct hx_run_result *r, const struct hx_scenario_result *s,
                       const struct hx_check_result *c)
{
	bool known = c->verdict == HX_FAIL && c->id != NULL &&
	             hx_grade_known_state(r, c->id) == HX_KNOWN_FAILING;

	fprintf(f,
	        "<tr class=\"check %s\" data-check=\"%s\"><td><span class=\"tag\">%s</span></td>"
	        "<td><code>%s</code></td><td>L%d",
	        verdict_class(c->verdict), c->id ? c->id : "?", verdict_tag(c->verdict),
	        c->id ? c->id : "?", c->level);
	if (!c->required && !r->strict)
		fputs(" <span class=\"note\">recommended</span>", f);
	if (known)
		fputs(" <span class=\"note\">known failing</span>", f);
	fputs("</td><td>", f);
	hx_html_put_client(f, s, c->detail);
	if (c->n_evidence > 0) {
		/* a failure's evidence is open, unless it is a storm's */
		fprintf(f, "<details%s><summary>evidence: %zu journal entr%s</summary><pre>",
		        c->verdict == HX_FAIL && c->n_evidence <= OPEN_EVIDENCE ? " open" : "",
		        c->n_evidence, c->n_evidence == 1 ? "y" : "ies");
		for (size_t i = 0; i < c->n_evidence; i++) {
			const struct fa_attempt *a = hx_report_attempt(s, c->evidence[i]);
			char *line = a ? hx_report_attempt_line(a) : NULL;

			if (line == NULL)
				fprintf(f, "seq %" PRIu64 "  (not in the journal copy)",
				        c->evidence[i]);
			else
				hx_html_put_client(f, s, line);
			fputc('\n', f);
			free(line);
		}
		fputs("</pre></details>", f);
	}
	fputs("</td></tr>\n", f);
}

/* The checks of @s: the judged ones in a table, the n/a ones folded. */
static void html_checks(FILE *f, const struct hx_run_result *r, const struct hx_scenario_result *s)
{
	static const char head[] = "<table class=\"checks\">\n<tr><th></th><th>check</th>"
	                           "<th>level</th><th>detail</th></tr>\n";
	size_t n_na = 0, n_nc = 0;

	for (size_t j = 0; j < s->n_checks; j++) {
		n_na += s->checks[j].verdict == HX_NA;
		n_nc += s->checks[j].verdict == HX_NA && s->checks[j].uncovered;
	}
	if (s->n_checks > n_na) {
		fputs(head, f);
		for (size_t j = 0; j < s->n_checks; j++)
			if (s->checks[j].verdict != HX_NA)
				html_check(f, r, s, &s->checks[j]);
		fputs("</table>\n", f);
	}
	if (n_na == 0)
		return;
	fprintf(f,
	        "<details class=\"na-checks\"><summary>%zu check%s had nothing to judge here, "
	        "%zu of them not covered</summary>\n",
	        n_na, n_na == 1 ? "" : "s", n_nc);
	fputs(head, f);
	for (size_t j = 0; j < s->n_checks; j++)
		if (s->checks[j].verdict == HX_NA)
			html_check(f, r, s, &s->checks[j]);
	fputs("</table>\n</details>\n", f);
}

static void html_scenario(FILE *f, const struct hx_run_result *r,
                          const struct hx_scenario_result *s, size_t i)
{
	size_t n_un = hx_report_unattributed(s);

	fprintf(f, "<section class=\"scenario\" id=\"scenario-%zu\" data-scenario=\"", i + 1);
	hx_html_put(f, hx_report_scenario_id(s));
	fputs("\">\n<h2>scenario ", f);
	hx_html_put(f, hx_report_scenario_id(s));
	if (s->sc && s->sc->title) {
		fputs(" &mdash; ", f);
		hx_html_put(f, s->sc->title);
	}
	fputs("</h2>\n<p class=\"note\">", f);
	hx_html_put(f, s->sc && s->sc->file ? s->sc->file : "");
	fprintf(f, " &middot; attempts seen: %zu", s->n_attempts);
	if (n_un > 0)
		fprintf(f, " (%zu unattributed: no budget accounts for them)", n_un);
	fprintf(f, " &middot; %.3f s</p>\n", (double)s->duration_us / 1e6);
	if (s->error != NULL) {
		fputs("<p class=\"error\"><span class=\"tag\">ERROR</span> could not run: ", f);
		hx_html_put_client(f, s, s->error);
		fputs("</p>\n", f);
	}
	html_scenario_facts(f, r, s);
	if (s->n_attempts > 0 || s->n_tasks > 0) {
		fputs("<figure>\n", f);
		hx_timeline_write(f, s);
		fputs("</figure>\n", f);
	}
	html_checks(f, r, s);
	fputs("</section>\n", f);
}

enum fa_rc hx_report_html(const char *path, const struct hx_run_result *r, struct fa_err *err)
{
	struct hx_report_out out;
	enum fa_rc rc = hx_report_open(path, &out, err);
	FILE *f = out.f;

	if (rc != FA_OK)
		goto out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>fakeapi-harness report: ",
	      f);
	hx_html_put(f, hx_report_suite_id(r));
	fprintf(f, ", level %s, exit code %d</title>\n<style>\n%s</style>\n</head>\n<body>\n",
	        hx_report_level_str(r->level), r->exit_code, style);
	html_summary(f, r);
	fputs("<main>\n", f);
	html_recap(f, r);
	html_profile(f, r);
	html_repeat(f, r->repeat);
	html_contents(f, r);
	for (size_t i = 0; i < r->n_scenarios; i++)
		html_scenario(f, r, &r->scenarios[i], i);
	fputs("</main>\n</body>\n</html>\n", f);
	rc = hx_report_close(&out, path, err);
out:
	return rc;
}
