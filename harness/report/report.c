/* report.c -- what every report format says about a run: counts, suite verdicts, exit reason,
 * journal lines. */
#include "report_facts.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "grade.h"
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
			bool counted = c->required || r->strict;

			if (c->verdict == HX_PASS)
				t->pass++;
			else if (c->verdict == HX_FAIL)
				t->fail++;
			else
				t->na++;
			if (c->uncovered)
				t->not_covered++;
			counted = counted && !c->uncovered;
			if (counted && c->verdict == HX_FAIL)
				t->required_failed = true;
			if (counted && c->verdict == HX_PASS)
				t->required_passed = true;
		}
	}
}

enum hx_verdict hx_report_suite_verdict(const struct hx_run_result *r, const char *id,
                                        bool *required)
{
	return hx_grade_suite_verdict(r, id, required);
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
	return hx_grade_exit_reason(r);
}

const struct fa_attempt *hx_report_attempt(const struct hx_scenario_result *s, uint64_t seq)
{
	size_t i;

	for (i = 0; i < s->n_attempts; i++)
		if (s->attempts[i].seq == seq)
			return &s->attempts[i];
	return NULL;
}

/* @s's error without the scenario file it starts with. */
static const char *error_cause(const struct hx_scenario_result *s)
{
	const char *file = s->sc != NULL ? s->sc->file : NULL;
	size_t n = file != NULL ? strlen(file) : 0;

	if (n > 0 && strncmp(s->error, file, n) == 0 && strncmp(s->error + n, ": ", 2) == 0)
		return s->error + n + 2;
	return s->error;
}

size_t hx_report_error_groups(const struct hx_run_result *r, struct hx_error_group *out)
{
	size_t n = 0, g;

	for (size_t i = 0; i < r->n_scenarios; i++) {
		const char *cause;

		if (r->scenarios[i].error == NULL)
			continue;
		cause = error_cause(&r->scenarios[i]);
		for (g = 0; g < n && strcmp(out[g].cause, cause) != 0; g++)
			;
		if (g == n)
			out[n++] = (struct hx_error_group){ .cause = cause, .first = i, .n = 0 };
		out[g].n++;
	}
	return n;
}

bool hx_report_task_failed(const struct hx_task_run *t)
{
	return t->sent && (t->error != NULL || t->timed_out || t->term_signal > 0 ||
	                   (t->outcome == NULL && t->exit_code != 0) ||
	                   (t->outcome != NULL && strcmp(t->outcome, "succeeded") != 0));
}

bool hx_report_check_names_task(const struct hx_scenario_result *s, const struct hx_check_result *c,
                                const char *task)
{
	for (size_t i = 0; task != NULL && i < c->n_evidence; i++) {
		const struct fa_attempt *a = hx_report_attempt(s, c->evidence[i]);

		if (a != NULL && a->task != NULL && strcmp(a->task, task) == 0)
			return true;
	}
	return false;
}

bool hx_report_task_stderr_shown(const struct hx_scenario_result *s, const struct hx_task_run *t)
{
	if (t->stderr_tail == NULL || t->stderr_tail[0] == '\0')
		return false;
	if (hx_report_task_failed(t))
		return true;
	for (size_t i = 0; i < s->n_checks; i++)
		if (s->checks[i].verdict == HX_FAIL &&
		    hx_report_check_names_task(s, &s->checks[i], t->spec ? t->spec->id : NULL))
			return true;
	return false;
}

bool hx_report_client_stderr_shown(const struct hx_scenario_result *s)
{
	if (s->client_stderr == NULL || s->client_stderr[0] == '\0')
		return false;
	if (s->error != NULL || s->n_protocol_errors > 0)
		return true;
	for (size_t i = 0; i < s->n_tasks; i++)
		if (hx_report_task_failed(&s->tasks[i]))
			return true;
	for (size_t i = 0; i < s->n_checks; i++)
		if (s->checks[i].verdict == HX_FAIL)
			return true;
	return false;
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
	        "seq %" PRIu64 "  +%.1f ms  task %s  %s %s  -> %s%s%s%s%s%s%s%s%s%s%s%s%s", a->seq,
	        (double)a->t_arrival_us / 1000.0, a->task ? a->task : "-",
	        a->method ? a->method : "-", a->path ? a->path : "-", status,
	        a->retry_after ? "  retry-after: " : "", a->retry_after ? a->retry_after : "",
	        a->retry_after_ms ? "  retry-after-ms: " : "",
	        a->retry_after_ms ? a->retry_after_ms : "", pause, a->scope ? "  scope " : "",
	        a->scope ? a->scope : "", show_fault ? "  fault " : "", show_fault ? a->fault : "",
	        a->idempotency_key ? "  key " : "", a->idempotency_key ? a->idempotency_key : "",
	        a->committed ? "  committed" : "");
}

/* "killed by signal 9 (SIGKILL)" */
static void put_signal(FILE *out, int sig)
{
	const char *name = sigabbrev_np(sig);

	if (name != NULL)
		fprintf(out, "killed by signal %d (SIG%s)", sig, name);
	else
		fprintf(out, "killed by signal %d", sig);
}

/* How @t ended, in words. */
static void put_task_end(FILE *out, enum hx_mode mode, const struct hx_task_run *t)
{
	if (t->error != NULL) {
		fprintf(out, "error: %s", t->error);
	} else if (t->timed_out && mode == HX_MODE_STDIO) {
		fputs("timed out (no result within its deadline", out);
		if (t->outcome != NULL)
			fprintf(out, "; late result: %s", t->outcome);
		fputc(')', out);
	} else if (t->timed_out && t->term_signal > 0) {
		fputs("timed out, ", out);
		put_signal(out, t->term_signal);
	} else if (t->timed_out) {
		fputs("timed out (killed)", out);
	} else if (t->outcome != NULL) {
		fprintf(out, "result %s", t->outcome);
	} else if (!t->sent) {
		fputs("not sent", out);
	} else if (t->term_signal > 0) {
		put_signal(out, t->term_signal);
	} else if (mode == HX_MODE_STDIO) {
		fputs("no result", out);
	} else if (t->exit_code < 0) {
		fputs("no exit status", out);
	} else {
		fprintf(out, "exit %d", t->exit_code);
	}
}

char *hx_report_task_outcome(const struct hx_scenario_result *s, enum hx_mode mode,
                             const struct hx_task_run *t)
{
	const cJSON *rec = hx_report_escalation(s, t->spec ? t->spec->id : NULL);
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rec, "reason");
	char *text = NULL;
	size_t len = 0;
	FILE *out = fa_xcheck(open_memstream(&text, &len), "report");

	put_task_end(out, mode, t);
	if (t->client_reference != NULL)
		fprintf(out, " (client reference %s)", t->client_reference);
	if (t->t_cancel_us >= 0)
		fprintf(out, " (cancelled at +%.1f ms)", (double)t->t_cancel_us / 1000.0);
	if (rec != NULL)
		fprintf(out, " (escalation: %s)",
		        cJSON_IsString(reason) ? reason->valuestring : "no reason");
	fclose(out);
	return text;
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

/* @s with every @needle replaced by @with; takes @s, returns a new string. */
static char *replace_all(char *s, const char *needle, const char *with)
{
	size_t n = strlen(needle), w = strlen(with), count = 0, len;
	const char *p, *hit;
	char *out, *o;

	if (n == 0)
		return s;
	for (p = s; (hit = strstr(p, needle)) != NULL; p = hit + n)
		count++;
	if (count == 0)
		return s;
	len = strlen(s) - count * n + count * w;
	out = fa_xmalloc(len + 1);
	o = out;
	for (p = s; (hit = strstr(p, needle)) != NULL; p = hit + n) {
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, with, w);
		o += w;
	}
	memcpy(o, p, strlen(p) + 1);
	free(s);
	return out;
}

char *hx_report_scrub(const struct hx_scenario_result *s, const char *text)
{
	char *out;

	if (text == NULL)
		return NULL;
	out = fa_xstrdup(text);
	if (s == NULL)
		return out;
	out = replace_all(out, s->key_canary, "[key canary]");
	return replace_all(out, s->body_canary, "[body canary]");
}

const char *hx_report_canary_kind_str(enum hx_canary_kind k)
{
	return k == HX_CANARY_BODY ? "body" : "key";
}

const cJSON *hx_report_escalation(const struct hx_scenario_result *s, const char *task)
{
	size_t i;

	for (i = s->n_msgs; task != NULL && i-- > 0;) {
		const struct hx_client_msg *m = &s->msgs[i];

		if (m->type != NULL && strcmp(m->type, "escalation") == 0 && m->task != NULL &&
		    strcmp(m->task, task) == 0)
			return cJSON_GetObjectItemCaseSensitive(m->json, "record");
	}
	return NULL;
}

const struct hx_scenario_result *hx_report_hello_scenario(const struct hx_run_result *r)
{
	size_t i;

	for (i = 0; r->hello != NULL && i < r->n_scenarios; i++)
		if (r->scenarios[i].hello == r->hello)
			return &r->scenarios[i];
	return NULL;
}

enum fa_rc hx_report_open(const char *path, struct hx_report_out *out, struct fa_err *err)
{
	const char *slash;
	enum fa_rc rc = FA_EINVAL;
	int fd;

	*out = (struct hx_report_out){ NULL, NULL };
	if (path == NULL) {
		fa_err_set(err, "report: no path given");
		goto out;
	}
	rc = FA_EIO;
	if (strcmp(path, "-") == 0) {
		out->f = stdout;
	} else {
		slash = strrchr(path, '/');
		out->tmp = slash != NULL ? fa_xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path),
		                                        path, slash + 1)
		                         : fa_xasprintf(".%s.XXXXXX", path);
		fd = mkostemp(out->tmp, O_CLOEXEC);
		if (fd >= 0 && fchmod(fd, 0644) == 0)
			out->f = fdopen(fd, "w");
		if (out->f == NULL) {
			fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(out->tmp);
			}
			free(out->tmp);
			out->tmp = NULL;
			goto out;
		}
	}
	errno = 0; /* hx_report_close() reports what the writing set */
	rc = FA_OK;
out:
	return rc;
}

enum fa_rc hx_report_close(struct hx_report_out *out, const char *path, struct fa_err *err)
{
	bool ok = !ferror(out->f);
	int saved = ok ? 0 : (errno ? errno : EIO);

	if (out->tmp == NULL) {
		if (fflush(out->f) != 0 && ok) {
			ok = false;
			saved = errno;
		}
	} else {
		if (fclose(out->f) != 0 && ok) {
			ok = false;
			saved = errno;
		}
		if (ok && rename(out->tmp, path) != 0) {
			ok = false;
			saved = errno;
		}
		if (!ok)
			unlink(out->tmp);
		free(out->tmp);
	}
	*out = (struct hx_report_out){ NULL, NULL };
	if (!ok)
		fa_err_set(err, "%s: cannot write: %s", path, strerror(saved));
	return ok ? FA_OK : FA_EIO;
}
