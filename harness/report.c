/* report.c -- what every report format says about a run: counts, suite verdicts, exit reason, journal lines. */
#include "report_facts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scenario.h"

#define ZERO_HEAD "0000000000000000000000000000000000000000000000000000000000000000"

void hx_report_count(const struct hx_run_result *r, struct hx_report_counts *t)
{
	size_t i, j;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		if (s->error != NULL)
			t->broken++;
		for (j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *c = &s->checks[j];

			if (c->verdict == HX_PASS)
				t->pass++;
			else if (c->verdict == HX_FAIL)
				t->fail++;
			else
				t->na++;
			if (c->required && c->verdict == HX_FAIL)
				t->required_failed = true;
			if (c->required && c->verdict == HX_PASS)
				t->required_passed = true;
		}
	}
}

enum hx_verdict hx_report_suite_verdict(const struct hx_run_result *r, const char *id,
					bool *required)
{
	enum hx_verdict v[2] = { HX_NA, HX_NA }; /* [0] required only, [1] all */
	size_t i, j, k;

	*required = false;
	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];

		for (j = 0; j < s->n_checks; j++) {
			const struct hx_check_result *c = &s->checks[j];

			if (c->id == NULL || strcmp(c->id, id) != 0)
				continue;
			if (c->required)
				*required = true;
			for (k = c->required ? 0 : 1; k < 2; k++) {
				if (c->verdict == HX_FAIL)
					v[k] = HX_FAIL;
				else if (c->verdict == HX_PASS && v[k] != HX_FAIL)
					v[k] = HX_PASS;
			}
		}
	}
	return *required ? v[0] : v[1];
}

const char *hx_report_mode_str(enum hx_mode m)
{
	return m == HX_MODE_STDIO ? "stdio" : "exec";
}

const char *hx_report_level_str(int level)
{
	static const char *names[] = { "L0", "L1", "L2", "L3", "L4" };

	return level >= 0 && level <= 4 ? names[level] : "L?";
}

char *hx_report_exit_reason(const struct hx_run_result *r)
{
	struct hx_report_counts t;

	hx_report_count(r, &t);
	switch (r->exit_code) {
	case 0:
		return fa_xstrdup("no required check failed and at least one passed");
	case 2:
		if (r->interrupted)
			return fa_xstrdup("interrupted");
		return fa_xasprintf("%zu scenario%s could not run", t.broken,
				    t.broken == 1 ? "" : "s");
	default:
		break;
	}
	if (t.required_failed)
		return fa_xstrdup("a required check failed");
	if (!t.required_passed)
		return fa_xstrdup("no required check passed");
	if (r->level < r->min_level)
		return fa_xasprintf("level %s is below the minimum %s",
				    hx_report_level_str(r->level), hx_report_level_str(r->min_level));
	return fa_xstrdup("the run did not meet its requirements");
}

const struct fa_attempt *hx_report_attempt(const struct hx_scenario_result *s, uint64_t seq)
{
	size_t i;

	for (i = 0; i < s->n_attempts; i++)
		if (s->attempts[i].seq == seq)
			return &s->attempts[i];
	return NULL;
}

size_t hx_report_unattributed(const struct hx_scenario_result *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->n_attempts; i++)
		if (s->attempts[i].task == NULL ||
		    (s->sc != NULL && fa_scenario_task(s->sc, s->attempts[i].task) == NULL))
			n++;
	return n;
}

char *hx_report_attempt_line(const struct fa_attempt *a)
{
	char status[16], pause[80];
	bool show_fault = a->fault != NULL && strcmp(a->fault, "respond") != 0;
	int64_t sent = a->t_response_us >= 0 ? a->t_response_us : a->t_arrival_us;

	if (a->status != 0)
		snprintf(status, sizeof(status), "%d", a->status);
	else
		snprintf(status, sizeof(status), "none");
	pause[0] = '\0';
	/* a date already past (clock skew) names an instant before the answer */
	if (a->retry_after != NULL && a->pause_until_us != -1 && a->pause_until_us < sent)
		snprintf(pause, sizeof(pause), " (names %+.1f ms: in the past)",
			 (double)a->pause_until_us / 1000.0);
	else if (a->retry_after != NULL && a->pause_until_us != -1)
		snprintf(pause, sizeof(pause), " (until +%.1f ms)",
			 (double)a->pause_until_us / 1000.0);
	return fa_xasprintf(
		"seq %" PRIu64 "  +%.1f ms  task %s  %s %s  -> %s%s%s%s%s%s%s%s%s%s%s",
		a->seq, (double)a->t_arrival_us / 1000.0, a->task ? a->task : "-",
		a->method ? a->method : "-", a->path ? a->path : "-", status,
		a->retry_after ? "  retry-after: " : "",
		a->retry_after ? a->retry_after : "", pause,
		a->scope ? "  scope " : "", a->scope ? a->scope : "",
		show_fault ? "  fault " : "", show_fault ? a->fault : "",
		a->idempotency_key ? "  key " : "",
		a->idempotency_key ? a->idempotency_key : "",
		a->committed ? "  committed" : "");
}

const char *hx_report_head(const struct hx_scenario_result *s)
{
	return strlen(s->journal_head) == 64 ? s->journal_head : ZERO_HEAD;
}

const char *hx_report_scenario_id(const struct hx_scenario_result *s)
{
	return s->sc && s->sc->id ? s->sc->id : "?";
}

const char *hx_report_suite_id(const struct hx_run_result *r)
{
	return r->suite && r->suite->id ? r->suite->id : "?";
}

enum fa_rc hx_report_open(const char *path, FILE **out, struct fa_err *err)
{
	enum fa_rc rc = FA_EINVAL;

	*out = NULL;
	if (path == NULL) {
		fa_err_set(err, "report: no path given");
		goto out;
	}
	rc = FA_EIO;
	*out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (*out == NULL) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	errno = 0; /* hx_report_close() reports what the writing set */
	rc = FA_OK;
out:
	return rc;
}

enum fa_rc hx_report_close(FILE *f, const char *path, struct fa_err *err)
{
	bool ok = !ferror(f);
	int saved = ok ? 0 : (errno ? errno : EIO);

	if (strcmp(path, "-") == 0) {
		if (fflush(f) != 0 && ok) {
			ok = false;
			saved = errno;
		}
	} else if (fclose(f) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (!ok)
		fa_err_set(err, "%s: cannot write: %s", path, strerror(saved));
	return ok ? FA_OK : FA_EIO;
}
