/* report_text.c -- the text report: per scenario, each check's verdict, detail and evidence, for
 * people. */
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
#include "known_failing.h"
#include "recap.h"
#include "report_facts.h"
#include "utf8.h"

/* Print @s for a terminal: control characters and broken UTF-8 as "?". */
static void put_plain(FILE *f, const char *s)
{
	const char *text = s ? s : "-";
	char *plain = fa_utf8_printable(text, strlen(text));

	fputs(plain, f);
	free(plain);
}

/* Print @text, a client's words in scenario @sc, for a terminal: its
 * canaries replaced (hx_report_scrub), then as put_plain(). */
static void put_client(FILE *f, const struct hx_scenario_result *sc, const char *text)
{
	char *clean = hx_report_scrub(sc, text);

	put_plain(f, clean);
	free(clean);
}

/* Lines a report shows of a client's stderr tail, the last ones. */
#define TEXT_TAIL_LINES 12

/* The last TEXT_TAIL_LINES lines of @text (a client's stderr tail in
 * scenario @s), each after @prefix, with a line saying how many earlier
 * ones only the JSON report has. */
static void put_tail(FILE *out, const struct hx_scenario_result *s, const char *text,
                     const char *prefix)
{
	size_t n = 0, skip;
	const char *p, *nl;

	for (p = text; *p != '\0'; p = nl ? nl + 1 : p + strlen(p), n++)
		nl = strchr(p, '\n');
	skip = n > TEXT_TAIL_LINES ? n - TEXT_TAIL_LINES : 0;
	if (skip > 0)
		fprintf(out, "%s(%zu earlier line%s in the JSON report)\n", prefix, skip,
		        skip == 1 ? "" : "s");
	for (p = text, n = 0; *p != '\0'; p = nl ? nl + 1 : p + strlen(p), n++) {
		char *line;

		nl = strchr(p, '\n');
		if (n < skip)
			continue;
		line = fa_xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
		fputs(prefix, out);
		put_client(out, s, line);
		fputc('\n', out);
		free(line);
	}
}

static void text_task(FILE *out, const struct hx_scenario_result *s, enum hx_mode mode,
                      const struct hx_task_run *t)
{
	char *what = hx_report_task_outcome(s, mode, t);

	fputs("  task ", out);
	put_plain(out, t->spec ? t->spec->id : "?");
	fputs(": ", out);
	put_client(out, s, what);
	fputc('\n', out);
	free(what);
	if (hx_report_task_stderr_shown(s, t)) {
		fputs("    stderr (its last lines):\n", out);
		put_tail(out, s, t->stderr_tail, "      | ");
	}
}

/* One line naming where the planted canaries were found, when anywhere;
 * one saying the search could not read everything, when so. */
static void text_canaries(FILE *out, const struct hx_scenario_result *s)
{
	if (s->canary_search_incomplete)
		fputs("  canary search incomplete: client output or state files past the "
		      "search's bounds, or unreadable, were not searched\n",
		      out);
	if (s->n_canary_hits == 0)
		return;
	fprintf(out, "  canary hits: %zu:", s->n_canary_hits);
	for (size_t i = 0; i < s->n_canary_hits; i++) {
		const struct hx_canary_hit *h = &s->canary_hits[i];

		fprintf(out, "%s %s canary in ", i ? ";" : "", hx_report_canary_kind_str(h->kind));
		put_client(out, s, h->where);
	}
	fputc('\n', out);
}

/* One line per kill event: when, what was let go, the restart. */
static void text_restarts(FILE *out, enum hx_mode mode, const struct hx_scenario_result *s)
{
	for (size_t i = 0; i < s->n_restarts; i++) {
		const struct hx_restart *rs = &s->restarts[i];

		fprintf(out,
		        "  kill at +%.1f ms: %s killed (SIGKILL) and reaped, %zu held "
		        "answer%s let go",
		        (double)rs->t_kill_us / 1000.0,
		        mode == HX_MODE_STDIO ? "client" : "task client", rs->released,
		        rs->released == 1 ? "" : "s");
		if (rs->t_restart_us < 0) {
			fputs("; not restarted", out);
		} else {
			fprintf(out, "; restarted at +%.1f ms, tasks %s: ",
			        (double)rs->t_restart_us / 1000.0,
			        mode == HX_MODE_STDIO ? "re-sent" : "run again");
			for (size_t k = 0; k < rs->n_tasks; k++) {
				fputs(k ? " " : "", out);
				put_plain(out, rs->tasks[k]);
			}
			if (rs->n_tasks == 0)
				fputs("none", out);
		}
		fputc('\n', out);
	}
}

/* The hello's "client" name and version, protocol and features, on one
 * line. */
static void text_hello(FILE *out, const struct hx_scenario_result *sc, const cJSON *hello)
{
	const cJSON *client = cJSON_GetObjectItemCaseSensitive(hello, "client");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(client, "name");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(client, "version");
	const cJSON *proto = cJSON_GetObjectItemCaseSensitive(hello, "protocol");
	const cJSON *features = cJSON_GetObjectItemCaseSensitive(hello, "features");
	const cJSON *list = cJSON_IsArray(features) ? features : NULL;
	const cJSON *f;
	bool first = true;

	fputs("client hello: ", out);
	put_client(out, sc,
	           cJSON_IsString(name) && name->valuestring[0] != '\0' ? name->valuestring
	                                                                : "(no name)");
	fputc(' ', out);
	put_client(out, sc,
	           cJSON_IsString(version) && version->valuestring[0] != '\0' ? version->valuestring
	                                                                      : "(no version)");
	if (cJSON_IsNumber(proto))
		fprintf(out, ", protocol %.0f", proto->valuedouble);
	fputs(", features: ", out);
	cJSON_ArrayForEach(f, list)
	{
		if (!cJSON_IsString(f))
			continue;
		fputs(first ? "" : " ", out);
		put_client(out, sc, f->valuestring);
		first = false;
	}
	fputs(first ? "none\n" : "\n", out);
}

/* The protocol errors and, when the client failed, its stderr tail. */
static void text_client(FILE *out, const struct hx_scenario_result *s)
{
	/* the listed ones, or all of them when some were only counted (an
	 * "N more" entry stands for several) */
	size_t n_errors = s->n_protocol_errors_seen > s->n_protocol_errors
	                          ? s->n_protocol_errors_seen
	                          : s->n_protocol_errors;

	if (n_errors > 0)
		fprintf(out, "  protocol errors: %zu\n", n_errors);
	for (size_t i = 0; i < s->n_protocol_errors; i++) {
		fputs("    ", out);
		put_client(out, s, s->protocol_errors[i]);
		fputc('\n', out);
	}
	if (!hx_report_client_stderr_shown(s))
		return;
	fputs("  client stderr (its last lines):\n", out);
	put_tail(out, s, s->client_stderr, "    | ");
}

static void text_check(FILE *out, const struct hx_run_result *r, const struct hx_scenario_result *s,
                       const struct hx_check_result *c)
{
	static const char *tags[] = { "PASS", "FAIL", "N/A " };
	bool known = c->verdict == HX_FAIL && c->id != NULL &&
	             hx_grade_known_state(r, c->id) == HX_KNOWN_FAILING;
	size_t i;

	fprintf(out, "  %s  %-22s (L%d)%s%s  ", tags[c->verdict <= HX_NA ? c->verdict : HX_NA],
	        c->id ? c->id : "?", c->level, c->required || r->strict ? "" : " recommended",
	        known ? " known failing" : "");
	put_client(out, s, c->detail);
	fputc('\n', out);
	if (c->verdict != HX_FAIL)
		return;
	for (i = 0; i < c->n_evidence; i++) {
		const struct fa_attempt *a = hx_report_attempt(s, c->evidence[i]);
		char *line;

		if (a == NULL) {
			fprintf(out, "        seq %" PRIu64 "  (not in the journal copy)\n",
			        c->evidence[i]);
			continue;
		}
		line = hx_report_attempt_line(a);
		fputs("        ", out);
		put_client(out, s, line);
		fputc('\n', out);
		free(line);
	}
}

/* The header's lines on how the run was graded: strict, the known-failing
 * list, the repeat. */
static void text_grading(FILE *out, const struct hx_run_result *r)
{
	const struct hx_repeat *rep = r->repeat;

	fprintf(out, "strict: %s\n",
	        r->strict ? "yes (recommended checks count as required)" : "no");
	if (r->known_failing != NULL) {
		fputs("known failing: ", out);
		put_plain(out, r->known_failing->file);
		fprintf(out, " (%zu entr%s)\n", r->known_failing->n_entries,
		        r->known_failing->n_entries == 1 ? "y" : "ies");
	}
	if (rep != NULL)
		fprintf(out,
		        "repeat: %u run%s of %u, seeds %" PRIu64 "..%" PRIu64
		        "; the scenarios below are the last run's\n",
		        rep->runs, rep->runs == 1 ? "" : "s", rep->planned, rep->first_seed,
		        rep->first_seed + (rep->runs ? rep->runs - 1 : 0));
}

/* A check's line in the summary over the suite. */
static void text_suite_check(FILE *out, const struct hx_run_result *r, const struct hx_check_def *d)
{
	const struct hx_known_entry *e = hx_known_failing_find(r->known_failing, d->id);
	bool req;
	enum hx_verdict v = hx_report_suite_verdict(r, d->id, &req);
	/* "not counted" and what the list says are two facts: keep them apart */
	const char *sep = req ? " " : "; ";

	bool covered = hx_grade_covered(r, d->id);
	size_t n_uncounted;

	fprintf(out, "  %-4s  %-22s (L%d)%s",
	        v == HX_NA     ? "N/A"
	        : v == HX_PASS ? "PASS"
	                       : "FAIL",
	        d->id, d->level,
	        req       ? ""
	        : covered ? " not counted"
	                  : " not covered");
	switch (hx_grade_known_state(r, d->id)) {
	case HX_KNOWN_FAILING:
		fprintf(out, "%sknown failing", sep);
		if (e->reason != NULL) {
			fputs(": ", out);
			put_plain(out, e->reason);
		}
		break;
	case HX_KNOWN_PASSES_NOW:
		fprintf(out, "%sknown failing, passes now: remove it from ", sep);
		put_plain(out, r->known_failing->file);
		fprintf(out, " (line %u)", e->line);
		break;
	case HX_KNOWN_NA:
		/* not shown at all, or shown where it was not counted */
		fprintf(out, "%sknown failing%s", sep, v == HX_NA ? ", not shown" : "");
		if (v != HX_NA && e->reason != NULL) {
			fputs(": ", out);
			put_plain(out, e->reason);
		}
		break;
	case HX_KNOWN_UNLISTED: break;
	}
	/* the verdict above is over the scenarios where it counted: a failure
	 * elsewhere is still said */
	n_uncounted = req ? hx_recap_uncounted_failures(r, d->id) : 0;
	if (n_uncounted > 0)
		fprintf(out, "; failed in %zu scenario%s where it was not counted", n_uncounted,
		        n_uncounted == 1 ? "" : "s");
	fputc('\n', out);
}

#define PROFILE_WIDTH 100 /* columns a profile line fills before it wraps */

/* The profile (docs/checks.md, "Profile"): one line per level, each
 * check's suite value as one letter. */
static void text_profile(FILE *out, const struct hx_run_result *r)
{
	fputs("profile (P pass, F fail, ? n/a, - not covered):\n", out);
	for (int k = 1; k <= HX_MAX_LEVEL; k++) {
		int col = fprintf(out, "  L%d", k);

		for (size_t d = 0; d < hx_check_count(); d++) {
			const struct hx_check_def *def = hx_check_def_at(d);
			struct hx_profile_entry p;
			char tag;

			if (def->level != k)
				continue;
			hx_grade_profile(r, def->id, &p);
			tag = !p.covered             ? '-'
			      : p.verdict == HX_PASS ? 'P'
			      : p.verdict == HX_FAIL ? 'F'
			                             : '?';
			if (col + 3 + (int)strlen(def->id) > PROFILE_WIDTH)
				col = fprintf(out, "\n    ");
			col += fprintf(out, "  %s %c", def->id, tag);
		}
		fputc('\n', out);
	}
}

/* Each check's suite verdicts over the runs of a repeat, and the levels. */
static void text_repeat(FILE *out, const struct hx_repeat *rep)
{
	unsigned k;

	if (rep == NULL)
		return;
	fprintf(out, "checks over %u run%s:\n", rep->runs, rep->runs == 1 ? "" : "s");
	for (size_t d = 0; d < rep->n_tally && d < hx_check_count(); d++) {
		const struct hx_repeat_tally *t = &rep->tally[d];

		fprintf(out, "  %-22s %u/%u pass", hx_check_def_at(d)->id, t->pass, rep->runs);
		if (t->fail > 0)
			fprintf(out, ", %u fail", t->fail);
		if (t->na > 0)
			fprintf(out, ", %u n/a", t->na);
		fputs(t->counted ? "\n" : " (not counted)\n", out);
	}
	fputs("levels:", out);
	for (k = 0; k < rep->runs; k++)
		fprintf(out, " %s", hx_report_level_str(rep->levels[k]));
	fputc('\n', out);
}

/* One row of the recap. */
static void text_recap_row(FILE *out, const struct hx_recap_row *row, const char *known_file)
{
	switch (row->kind) {
	case HX_RECAP_FAIL:
		fprintf(out, "  FAIL  %-22s (L%d)%s%s  ", row->def->id, row->def->level,
		        row->counted ? "" : " recommended, not counted",
		        row->known ? " known failing" : "");
		break;
	case HX_RECAP_NA:
		fprintf(out,
		        "  N/A   %-22s (L%d) not judged where it counts, so %s is not reached  ",
		        row->def->id, row->def->level, hx_report_level_str(row->level));
		break;
	case HX_RECAP_PASSES_NOW:
		fprintf(out, "  PASS  %-22s (L%d) known failing, passes now: remove it from ",
		        row->def->id, row->def->level);
		put_plain(out, known_file);
		fputc('\n', out);
		return;
	case HX_RECAP_NO_CHECKS:
		fprintf(out,
		        "  %-4s  no %s check counts here (none is both covered and required), so %s "
		        "is not reached\n",
		        hx_report_level_str(row->level), hx_report_level_str(row->level),
		        hx_report_level_str(row->level));
		return;
	}
	put_plain(out, hx_report_scenario_id(row->where));
	fputs(": ", out);
	put_client(out, row->where, row->detail);
	if (row->more > 0)
		fprintf(out, " (and in %zu more scenario%s)", row->more, row->more == 1 ? "" : "s");
	fputc('\n', out);
}

/* The recap: each check that failed, once, with the first scenario it
 * failed in and its reason there; the checks that held the level without
 * failing; the scenarios that could not run, once per cause. */
static void text_recap(FILE *out, const struct hx_run_result *r)
{
	struct hx_recap rc;
	struct hx_error_group *g;
	size_t n, n_fail = 0, n_now = 0;

	hx_recap_build(r, &rc);
	for (size_t k = 0; k < rc.n; k++) {
		n_fail += rc.rows[k].kind == HX_RECAP_FAIL;
		n_now += rc.rows[k].kind == HX_RECAP_PASSES_NOW;
	}
	g = fa_xcalloc(r->n_scenarios + 1, sizeof(*g));
	n = hx_report_error_groups(r, g);
	if (n_fail > 0)
		fputs("\nwhy (each failed check once, in the first scenario it failed):\n", out);
	else if (n_now > 0)
		fputs("\nwhy (no check failed, but a known-failing entry passes now):\n", out);
	else if (rc.n > 0)
		fprintf(out, "\nwhy (no check failed, but the level stops at %s):\n",
		        hx_report_level_str(r->level));
	else
		fputs(n > 0 ? "\nwhy (no check failed, but not every scenario ran):\n"
		            : "\nwhy: no check failed\n",
		      out);
	for (size_t k = 0; k < rc.n; k++)
		text_recap_row(out, &rc.rows[k],
		               r->known_failing != NULL ? r->known_failing->file : "-");
	hx_recap_release(&rc);
	/* each cause once: a client that cannot start is one line, not one
	 * per scenario */
	for (size_t k = 0; k < n; k++) {
		const struct hx_scenario_result *first = &r->scenarios[g[k].first];

		fputs("  ERROR  could not run ", out);
		put_plain(out, hx_report_scenario_id(first));
		if (g[k].n > 1)
			fprintf(out, " and %zu more scenario%s", g[k].n - 1,
			        g[k].n == 2 ? "" : "s");
		fputs(": ", out);
		put_client(out, first, g[k].cause);
		fputc('\n', out);
	}
	free(g);
}

/* The line that stands for a scenario's hidden n/a checks: @n_na of
 * them, @n_nc of those not covered. */
static void text_na_count(FILE *out, size_t n_na, size_t n_nc)
{
	if (n_na == 0)
		return;
	fprintf(out, "  N/A   %zu check%s had nothing to judge here", n_na, n_na == 1 ? "" : "s");
	if (n_nc == n_na)
		fputs(n_na == 1 ? ", not covered" : ", none of them covered", out);
	else if (n_nc > 0)
		fprintf(out, ", %zu of them not covered", n_nc);
	fputs(" (-v lists each with why)\n", out);
}

void hx_report_text(FILE *out, const struct hx_run_result *r, bool verbose)
{
	struct hx_report_counts t;
	size_t i, j, n_na, n_nc;
	char *why;

	fprintf(out, "fakeapi-harness %s\n", r->harness_version ? r->harness_version : "?");
	fputs("suite: ", out);
	put_plain(out, hx_report_suite_id(r));
	if (r->suite && r->suite->version && r->suite->version[0] != '\0') {
		fputs(" version ", out);
		put_plain(out, r->suite->version);
	}
	fprintf(out, "\nseed: %" PRIu64 "\n", r->seed);
	if (r->time_scale > 1.0) {
		fprintf(out,
		        "time scale: %g (every time below is virtual: the provider's "
		        "clock and the client's ran %g times faster than real time)\n",
		        r->time_scale, r->time_scale);
		fputs("client clock: ", out);
		put_plain(out, r->clock_check ? r->clock_check : "-");
		fputc('\n', out);
	}
	fprintf(out, "mode: %s\nclient: ", hx_report_mode_str(r->mode));
	put_plain(out, r->client);
	fputc('\n', out);
	text_grading(out, r);
	if (r->hello != NULL)
		text_hello(out, hx_report_hello_scenario(r), r->hello);

	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];
		size_t n_un = hx_report_unattributed(s);

		fputs("\nscenario ", out);
		put_plain(out, hx_report_scenario_id(s));
		if (s->sc && s->sc->file) {
			fputs(" (", out);
			put_plain(out, s->sc->file);
			fputc(')', out);
		}
		if (s->sc && s->sc->title) {
			fputs(" -- ", out);
			put_plain(out, s->sc->title);
		}
		fputc('\n', out);
		if (s->error != NULL) {
			fputs("  ERROR: could not run: ", out);
			put_client(out, s, s->error);
			fputc('\n', out);
		}
		fprintf(out, "  attempts seen: %zu", s->n_attempts);
		if (n_un > 0)
			fprintf(out, " (%zu unattributed: no budget accounts for them)", n_un);
		fprintf(out, ", %.3f s\n", (double)s->duration_us / 1e6);
		for (j = 0; j < s->n_tasks; j++)
			text_task(out, s, r->mode, &s->tasks[j]);
		text_restarts(out, r->mode, s);
		text_client(out, s);
		text_canaries(out, s);
		for (j = 0, n_na = 0, n_nc = 0; j < s->n_checks; j++) {
			if (s->checks[j].verdict == HX_NA && !verbose) {
				n_na++;
				n_nc += s->checks[j].uncovered;
			} else {
				text_check(out, r, s, &s->checks[j]);
			}
		}
		text_na_count(out, n_na, n_nc);
	}

	hx_report_count(r, &t);
	fprintf(out, "\nsummary: %zu pass, %zu fail, %zu n/a", t.pass, t.fail, t.na);
	if (t.not_covered > 0)
		fprintf(out, " (%zu of them not covered)", t.not_covered);
	fprintf(out, " (over %zu scenario%s)\nchecks over the suite:\n", r->n_scenarios,
	        r->n_scenarios == 1 ? "" : "s");
	for (i = 0, n_na = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		struct hx_profile_entry p;

		/* a check hidden here was judged nowhere: it failed and passed
		 * in no scenario, counted or not */
		hx_grade_profile(r, d->id, &p);
		if (!verbose && p.pass == 0 && p.fail == 0 &&
		    hx_grade_known_state(r, d->id) == HX_KNOWN_UNLISTED)
			n_na++;
		else
			text_suite_check(out, r, d);
	}
	if (n_na > 0)
		fprintf(out,
		        "  N/A   %zu check%s had nothing to judge in any scenario (-v lists them)\n",
		        n_na, n_na == 1 ? "" : "s");
	text_repeat(out, r->repeat);
	text_recap(out, r);
	fputc('\n', out);
	text_profile(out, r);
	fprintf(out, "level reached: %s", hx_report_level_str(r->level));
	if (r->repeat != NULL && r->repeat->runs > 1)
		fprintf(out, " (lowest of %u runs)", r->repeat->runs);
	if (r->min_level > 0)
		fprintf(out, " (minimum %s)", hx_report_level_str(r->min_level));
	why = hx_report_exit_reason(r);
	fputs("\nexit code ", out);
	fprintf(out, "%d: ", r->exit_code);
	put_plain(out, why);
	fputc('\n', out);
	free(why);
}
