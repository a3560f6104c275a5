/* report.c -- the run's report: text for people, JSON and JUnit for machines. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "digest.h"

#define ZERO_HEAD "0000000000000000000000000000000000000000000000000000000000000000"

/* What the exit code says, worked out as hx_check_grade() does. */
struct tally {
	size_t pass, fail, na;   /* every (scenario, check) result */
	size_t broken;           /* scenarios that could not run */
	bool required_failed;
	bool required_passed;
};

static void tally_run(const struct hx_run_result *r, struct tally *t)
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

/* A check's verdict over the suite as docs/checks.md defines it (fail
 * anywhere, else pass somewhere, else n/a), over the scenarios that
 * required it; over all of them when none did. *@required tells which. */
static enum hx_verdict suite_verdict(const struct hx_run_result *r,
				     const char *id, bool *required)
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

static const char *mode_str(enum hx_mode m)
{
	return m == HX_MODE_STDIO ? "stdio" : "exec";
}

static const char *level_str(int level)
{
	static const char *names[] = { "L0", "L1", "L2", "L3", "L4" };

	return level >= 0 && level <= 4 ? names[level] : "L?";
}

/* One line on why the run exits as it does. Owned by the caller. */
static char *exit_reason(const struct hx_run_result *r)
{
	struct tally t;

	tally_run(r, &t);
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
				    level_str(r->level), level_str(r->min_level));
	return fa_xstrdup("the run did not meet its requirements");
}

/* Length of the valid UTF-8 sequence at @p (its code point in *@cp), or
 * 0 when the bytes there are not UTF-8. */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp)
{
	size_t n, i;
	uint32_t c;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Copy of @s with every byte that is not UTF-8 replaced by U+FFFD, so the
 * JSON report stays valid whatever a client put in a path. */
static char *utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = fa_xmalloc(3 * strlen(s) + 1), *o = out;
	uint32_t cp;
	size_t n;

	while (*p != '\0') {
		n = utf8_seq(p, &cp);
		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}

/* Print @s for a terminal: control characters and broken UTF-8 as "?". */
static void put_plain(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "-");
	uint32_t cp;
	size_t n;

	while (*p != '\0') {
		n = utf8_seq(p, &cp);
		if (n == 0 || cp < 0x20 || cp == 0x7f) {
			fputc('?', f);
			p += n ? n : 1;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
}

/* Write @s XML-escaped (attribute and text alike). XML 1.0 cannot carry
 * most control characters even as references, nor broken UTF-8: those
 * bytes are written as the visible text \xNN. */
static void put_xml(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	uint32_t cp;
	size_t n, i;

	while (*p != '\0') {
		n = utf8_seq(p, &cp);
		if (n == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    cp == 0xfffe || cp == 0xffff) {
			for (i = 0; i < (n ? n : 1); i++)
				fprintf(f, "\\x%02X", p[i]);
			p += n ? n : 1;
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
	}
}

static const struct fa_attempt *attempt_by_seq(const struct hx_scenario_result *s,
					       uint64_t seq)
{
	size_t i;

	for (i = 0; i < s->n_attempts; i++)
		if (s->attempts[i].seq == seq)
			return &s->attempts[i];
	return NULL;
}

/* Attempts naming no task of the scenario, as the checks count them
 * (docs/checks.md, "unattributed"). */
static size_t unattributed(const struct hx_scenario_result *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->n_attempts; i++)
		if (s->attempts[i].task == NULL ||
		    (s->sc != NULL && fa_scenario_task(s->sc, s->attempts[i].task) == NULL))
			n++;
	return n;
}

/* The compact journal line of @a, raw bytes included; owned by the caller. */
static char *attempt_line(const struct fa_attempt *a)
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

/* The scenario's journal head; 64 zeros when it has none (did not run). */
static const char *head_of(const struct hx_scenario_result *s)
{
	return strlen(s->journal_head) == 64 ? s->journal_head : ZERO_HEAD;
}

static const char *scenario_id(const struct hx_scenario_result *s)
{
	return s->sc && s->sc->id ? s->sc->id : "?";
}

static const char *suite_id(const struct hx_run_result *r)
{
	return r->suite && r->suite->id ? r->suite->id : "?";
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

static void text_task(FILE *out, enum hx_mode mode, const struct hx_task_run *t)
{
	fputs("  task ", out);
	put_plain(out, t->spec ? t->spec->id : "?");
	fputs(": ", out);
	if (t->error != NULL) {
		fputs("error: ", out);
		put_plain(out, t->error);
	} else if (t->timed_out && mode == HX_MODE_STDIO) {
		fputs("timed out (no result within its deadline", out);
		if (t->outcome != NULL) {
			fputs("; late result: ", out);
			put_plain(out, t->outcome);
		}
		fputc(')', out);
	} else if (t->timed_out && t->term_signal > 0) {
		fputs("timed out, ", out);
		put_signal(out, t->term_signal);
	} else if (t->timed_out) {
		fputs("timed out (killed)", out);
	} else if (t->outcome != NULL) {
		fputs("result ", out);
		put_plain(out, t->outcome);
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
	if (t->client_reference != NULL) {
		fputs(" (client reference ", out);
		put_plain(out, t->client_reference);
		fputc(')', out);
	}
	fputc('\n', out);
}

/* One line per kill event: when, what was let go, the restart. */
static void text_restarts(FILE *out, enum hx_mode mode, const struct hx_scenario_result *s)
{
	for (size_t i = 0; i < s->n_restarts; i++) {
		const struct hx_restart *rs = &s->restarts[i];

		fprintf(out, "  kill at +%.1f ms: %s killed (SIGKILL) and reaped, %zu held "
			"answer%s let go", (double)rs->t_kill_us / 1000.0,
			mode == HX_MODE_STDIO ? "client" : "task client",
			rs->released, rs->released == 1 ? "" : "s");
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
static void text_hello(FILE *out, const cJSON *hello)
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
	put_plain(out, cJSON_IsString(name) ? name->valuestring : "?");
	fputc(' ', out);
	put_plain(out, cJSON_IsString(version) ? version->valuestring : "?");
	if (cJSON_IsNumber(proto))
		fprintf(out, ", protocol %.0f", proto->valuedouble);
	fputs(", features: ", out);
	cJSON_ArrayForEach(f, list) {
		if (!cJSON_IsString(f))
			continue;
		fputs(first ? "" : " ", out);
		put_plain(out, f->valuestring);
		first = false;
	}
	fputs(first ? "none\n" : "\n", out);
}

/* Whether the client failed in @s: it could not start, left a task with
 * an error, or broke the protocol. */
static bool client_failed(const struct hx_scenario_result *s)
{
	if (s->error != NULL || s->n_protocol_errors > 0)
		return true;
	for (size_t i = 0; i < s->n_tasks; i++)
		if (s->tasks[i].error != NULL)
			return true;
	return false;
}

/* The protocol errors and, when the client failed, its stderr tail. */
static void text_client(FILE *out, const struct hx_scenario_result *s)
{
	const char *p, *nl;

	if (s->n_protocol_errors > 0)
		fprintf(out, "  protocol errors: %zu\n", s->n_protocol_errors);
	for (size_t i = 0; i < s->n_protocol_errors; i++) {
		fputs("    ", out);
		put_plain(out, s->protocol_errors[i]);
		fputc('\n', out);
	}
	if (s->client_stderr == NULL || s->client_stderr[0] == '\0' || !client_failed(s))
		return;
	fputs("  client stderr (its last lines):\n", out);
	for (p = s->client_stderr; *p != '\0'; p = nl ? nl + 1 : p + strlen(p)) {
		char *line;

		nl = strchr(p, '\n');
		line = fa_xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
		fputs("    | ", out);
		put_plain(out, line);
		fputc('\n', out);
		free(line);
	}
}

static void text_check(FILE *out, const struct hx_scenario_result *s,
		       const struct hx_check_result *c)
{
	static const char *tags[] = { "PASS", "FAIL", "N/A " };
	size_t i;

	fprintf(out, "  %s  %-22s (L%d)%s  ", tags[c->verdict <= HX_NA ? c->verdict : HX_NA],
		c->id ? c->id : "?", c->level, c->required ? "" : " recommended");
	put_plain(out, c->detail);
	fputc('\n', out);
	if (c->verdict != HX_FAIL)
		return;
	for (i = 0; i < c->n_evidence; i++) {
		const struct fa_attempt *a = attempt_by_seq(s, c->evidence[i]);
		char *line;

		if (a == NULL) {
			fprintf(out, "        seq %" PRIu64 "  (not in the journal copy)\n",
				c->evidence[i]);
			continue;
		}
		line = attempt_line(a);
		fputs("        ", out);
		put_plain(out, line);
		fputc('\n', out);
		free(line);
	}
}

void hx_report_text(FILE *out, const struct hx_run_result *r)
{
	struct tally t;
	size_t i, j;
	char *why;

	fprintf(out, "fakeapi-harness %s\n", r->harness_version ? r->harness_version : "?");
	fputs("suite: ", out);
	put_plain(out, suite_id(r));
	if (r->suite && r->suite->version && r->suite->version[0] != '\0') {
		fputs(" version ", out);
		put_plain(out, r->suite->version);
	}
	fprintf(out, "\nseed: %" PRIu64 "\nmode: %s\nclient: ", r->seed, mode_str(r->mode));
	put_plain(out, r->client);
	fputc('\n', out);
	if (r->hello != NULL)
		text_hello(out, r->hello);

	for (i = 0; i < r->n_scenarios; i++) {
		const struct hx_scenario_result *s = &r->scenarios[i];
		size_t n_un = unattributed(s);

		fputs("\nscenario ", out);
		put_plain(out, scenario_id(s));
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
			put_plain(out, s->error);
			fputc('\n', out);
		}
		fprintf(out, "  attempts seen: %zu", s->n_attempts);
		if (n_un > 0)
			fprintf(out, " (%zu unattributed: no budget accounts for them)", n_un);
		fprintf(out, ", %.3f s\n", (double)s->duration_us / 1e6);
		for (j = 0; j < s->n_tasks; j++)
			text_task(out, r->mode, &s->tasks[j]);
		text_restarts(out, r->mode, s);
		text_client(out, s);
		for (j = 0; j < s->n_checks; j++)
			text_check(out, s, &s->checks[j]);
	}

	tally_run(r, &t);
	fprintf(out, "\nsummary: %zu pass, %zu fail, %zu n/a (over %zu scenario%s)\n"
		"checks over the suite:\n", t.pass, t.fail, t.na, r->n_scenarios,
		r->n_scenarios == 1 ? "" : "s");
	for (i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		bool req;
		enum hx_verdict v = suite_verdict(r, d->id, &req);

		fprintf(out, "  %-4s  %-22s (L%d)%s\n", v == HX_NA ? "N/A" : v == HX_PASS ? "PASS" : "FAIL",
			d->id, d->level, req ? "" : " not counted");
	}
	fprintf(out, "level reached: %s", level_str(r->level));
	if (r->min_level > 0)
		fprintf(out, " (minimum %s)", level_str(r->min_level));
	why = exit_reason(r);
	fprintf(out, "\nexit code %d: %s\n", r->exit_code, why);
	free(why);
}

static void add_str(cJSON *obj, const char *name, const char *s)
{
	char *clean;

	if (s == NULL) {
		cJSON_AddNullToObject(obj, name);
		return;
	}
	clean = utf8_clean(s);
	cJSON_AddStringToObject(obj, name, clean);
	free(clean);
}

/* @s replaced by its utf8_clean() copy, in cJSON's own allocation. */
static char *json_clean_str(char *s)
{
	char *clean = utf8_clean(s), *copy;

	if (strcmp(clean, s) == 0) {
		free(clean);
		return s;
	}
	copy = fa_xcheck(cJSON_malloc(strlen(clean) + 1), "report");
	memcpy(copy, clean, strlen(clean) + 1);
	free(clean);
	cJSON_free(s);
	return copy;
}

/* Make every key and string of @j (a client's JSON: any bytes) UTF-8. */
static void json_clean(cJSON *j)
{
	for (; j != NULL; j = j->next) {
		if (j->string != NULL && !(j->type & cJSON_StringIsConst))
			j->string = json_clean_str(j->string);
		if (cJSON_IsString(j) && j->valuestring != NULL)
			j->valuestring = json_clean_str(j->valuestring);
		json_clean(j->child);
	}
}

static void add_us(cJSON *obj, const char *name, int64_t us)
{
	if (us == -1)
		cJSON_AddNullToObject(obj, name);
	else
		cJSON_AddNumberToObject(obj, name, (double)us);
}

static cJSON *json_evidence(const struct hx_scenario_result *s, uint64_t seq)
{
	const struct fa_attempt *a = attempt_by_seq(s, seq);
	cJSON *e = cJSON_CreateObject();

	cJSON_AddNumberToObject(e, "seq", (double)seq);
	if (a == NULL)
		return e;
	add_str(e, "task", a->task);
	add_us(e, "t_arrival_us", a->t_arrival_us);
	add_us(e, "t_response_us", a->t_response_us);
	add_str(e, "method", a->method);
	add_str(e, "path", a->path);
	add_str(e, "scope", a->scope);
	if (a->status != 0)
		cJSON_AddNumberToObject(e, "status", a->status);
	else
		cJSON_AddNullToObject(e, "status");
	add_str(e, "retry_after", a->retry_after);
	add_us(e, "pause_until_us", a->retry_after ? a->pause_until_us : -1);
	add_str(e, "fault", a->fault);
	add_str(e, "idempotency_key", a->idempotency_key);
	add_str(e, "client_reference", a->client_reference);
	cJSON_AddBoolToObject(e, "committed", a->committed);
	cJSON_AddStringToObject(e, "delivered", fa_delivery_str(a->delivered));
	return e;
}


/* Attempts the journal attributes to task @id. */
static size_t task_attempts(const struct hx_scenario_result *s, const char *id)
{
	size_t n = 0;

	for (size_t i = 0; id != NULL && i < s->n_attempts; i++)
		if (s->attempts[i].task != NULL && strcmp(s->attempts[i].task, id) == 0)
			n++;
	return n;
}

static cJSON *json_scenario(const struct hx_scenario_result *s)
{
	cJSON *o = cJSON_CreateObject(), *arr, *item, *ev;
	size_t i, j;

	add_str(o, "id", s->sc ? s->sc->id : NULL);
	add_str(o, "file", s->sc ? s->sc->file : NULL);
	add_str(o, "title", s->sc ? s->sc->title : NULL);
	add_str(o, "sha256", s->sc ? s->sc->sha256 : NULL);
	add_str(o, "error", s->error);
	cJSON_AddNumberToObject(o, "duration_ms", (double)((s->duration_us + 500) / 1000));
	arr = cJSON_AddArrayToObject(o, "tasks");
	for (i = 0; i < s->n_tasks; i++) {
		const struct hx_task_run *t = &s->tasks[i];

		item = cJSON_CreateObject();
		add_str(item, "id", t->spec ? t->spec->id : NULL);
		cJSON_AddBoolToObject(item, "sent", t->sent);
		if (t->exit_code >= 0)
			cJSON_AddNumberToObject(item, "exit_code", t->exit_code);
		else
			cJSON_AddNullToObject(item, "exit_code");
		if (t->term_signal > 0)
			cJSON_AddNumberToObject(item, "signal", t->term_signal);
		else
			cJSON_AddNullToObject(item, "signal");
		cJSON_AddBoolToObject(item, "timed_out", t->timed_out);
		cJSON_AddNumberToObject(item, "attempts",
					(double)task_attempts(s, t->spec ? t->spec->id : NULL));
		add_str(item, "error", t->error);
		add_str(item, "outcome", t->outcome);
		if (t->client_reference != NULL) /* a write task's only */
			add_str(item, "client_reference", t->client_reference);
		cJSON_AddItemToArray(arr, item);
	}
	arr = cJSON_AddArrayToObject(o, "restarts");
	for (i = 0; i < s->n_restarts; i++) {
		const struct hx_restart *rs = &s->restarts[i];
		cJSON *list;

		item = cJSON_CreateObject();
		cJSON_AddNumberToObject(item, "t_ms", (double)rs->t_kill_us / 1000.0);
		cJSON_AddBoolToObject(item, "restarted", rs->t_restart_us >= 0);
		if (rs->t_restart_us >= 0)
			cJSON_AddNumberToObject(item, "restart_t_ms", (double)rs->t_restart_us / 1000.0);
		else
			cJSON_AddNullToObject(item, "restart_t_ms");
		cJSON_AddNumberToObject(item, "released", (double)rs->released);
		list = cJSON_AddArrayToObject(item, "tasks_resent");
		for (j = 0; rs->t_restart_us >= 0 && j < rs->n_tasks; j++)
			cJSON_AddItemToArray(list, cJSON_CreateString(rs->tasks[j]));
		cJSON_AddItemToArray(arr, item);
	}
	arr = cJSON_AddArrayToObject(o, "protocol_errors");
	for (i = 0; i < s->n_protocol_errors; i++) {
		char *clean = utf8_clean(s->protocol_errors[i]);

		cJSON_AddItemToArray(arr, cJSON_CreateString(clean));
		free(clean);
	}
	cJSON_AddNumberToObject(o, "attempts", (double)s->n_attempts);
	cJSON_AddNumberToObject(o, "unattributed_attempts", (double)unattributed(s));
	add_str(o, "journal_head", head_of(s));
	arr = cJSON_AddArrayToObject(o, "checks");
	for (i = 0; i < s->n_checks; i++) {
		const struct hx_check_result *c = &s->checks[i];

		item = cJSON_CreateObject();
		add_str(item, "id", c->id);
		cJSON_AddNumberToObject(item, "level", c->level);
		cJSON_AddStringToObject(item, "verdict", hx_verdict_str(c->verdict));
		cJSON_AddBoolToObject(item, "required", c->required);
		add_str(item, "detail", c->detail);
		ev = cJSON_AddArrayToObject(item, "evidence");
		for (j = 0; j < c->n_evidence; j++)
			cJSON_AddItemToArray(ev, json_evidence(s, c->evidence[j]));
		cJSON_AddItemToArray(arr, item);
	}
	return o;
}

/* SHA-256 over "HEAD\n" of each scenario in suite order (64 zeros for a
 * scenario without a journal): one value that commits to every journal. */
static void run_head(const struct hx_run_result *r, char out[FA_SHA256_HEX])
{
	size_t i, len = r->n_scenarios * 65;
	char *buf = fa_xmalloc(len + 1);

	for (i = 0; i < r->n_scenarios; i++) {
		memcpy(buf + 65 * i, head_of(&r->scenarios[i]), 64);
		buf[65 * i + 64] = '\n';
	}
	fa_digest_sha256_hex(buf, len, out);
	free(buf);
}

static char *json_text(const struct hx_run_result *r)
{
	cJSON *root = cJSON_CreateObject(), *obj, *arr, *item;
	char head[FA_SHA256_HEX], raw[32], *text, *why;
	struct tally t;
	size_t i;

	cJSON_AddStringToObject(root, "report_version", "1");
	add_str(root, "harness_version", r->harness_version);
	add_str(root, "suite", r->suite ? r->suite->id : NULL);
	add_str(root, "suite_version", r->suite ? r->suite->version : NULL);
	add_str(root, "suite_title", r->suite ? r->suite->title : NULL);
	obj = cJSON_AddObjectToObject(root, "scenario_sha256");
	for (i = 0; i < r->n_scenarios; i++)
		if (r->scenarios[i].sc != NULL)
			add_str(obj, scenario_id(&r->scenarios[i]),
				r->scenarios[i].sc->sha256);
	/* Raw so a 64-bit seed keeps every digit (a double would round it). */
	snprintf(raw, sizeof(raw), "%" PRIu64, r->seed);
	cJSON_AddRawToObject(root, "seed", raw);
	obj = cJSON_AddObjectToObject(root, "client");
	add_str(obj, "command", r->client);
	if (r->hello != NULL) {
		item = fa_xcheck(cJSON_Duplicate(r->hello, 1), "report");
		json_clean(item->child);
		cJSON_AddItemToObject(obj, "hello", item);
	} else
		cJSON_AddNullToObject(obj, "hello");
	cJSON_AddStringToObject(root, "mode", mode_str(r->mode));
	cJSON_AddStringToObject(root, "level", level_str(r->level));
	if (r->min_level > 0)
		cJSON_AddStringToObject(root, "min_level", level_str(r->min_level));
	else
		cJSON_AddNullToObject(root, "min_level");
	cJSON_AddNumberToObject(root, "exit_code", r->exit_code);
	why = exit_reason(r);
	cJSON_AddStringToObject(root, "exit_reason", why);
	free(why);
	run_head(r, head);
	cJSON_AddStringToObject(root, "journal_head", head);
	arr = cJSON_AddArrayToObject(root, "checks");
	for (i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		bool req;
		enum hx_verdict v = suite_verdict(r, d->id, &req);

		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "id", d->id);
		cJSON_AddNumberToObject(item, "level", d->level);
		cJSON_AddBoolToObject(item, "required", req);
		cJSON_AddStringToObject(item, "verdict", hx_verdict_str(v));
		cJSON_AddItemToArray(arr, item);
	}
	arr = cJSON_AddArrayToObject(root, "scenarios");
	for (i = 0; i < r->n_scenarios; i++)
		cJSON_AddItemToArray(arr, json_scenario(&r->scenarios[i]));
	tally_run(r, &t);
	obj = cJSON_AddObjectToObject(root, "summary");
	cJSON_AddNumberToObject(obj, "pass", (double)t.pass);
	cJSON_AddNumberToObject(obj, "fail", (double)t.fail);
	cJSON_AddNumberToObject(obj, "n/a", (double)t.na);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

/* Open @path ("-" = stdout) for writing, or NULL with errno set. */
static FILE *open_out(const char *path)
{
	return strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
}

/* Flush and close what open_out() gave; false with errno set on an error
 * at any point of the writing. */
static bool close_out(FILE *f, const char *path)
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
		errno = saved;
	return ok;
}

enum fa_rc hx_report_json(const char *path, const struct hx_run_result *r,
			  struct fa_err *err)
{
	enum fa_rc rc = FA_EIO;
	char *text = NULL;
	FILE *f;

	if (path == NULL) {
		fa_err_set(err, "report: no path given");
		rc = FA_EINVAL;
		goto out;
	}
	text = json_text(r);
	if (text == NULL) {
		fa_err_set(err, "%s: cannot write: out of memory", path);
		goto out;
	}
	f = open_out(path);
	if (f == NULL) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	errno = 0;
	fputs(text, f);
	fputc('\n', f);
	if (!close_out(f, path)) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	rc = FA_OK;
out:
	free(text);
	return rc;
}

/* The scenario's journal lines behind @c, one per line. */
static void junit_evidence(FILE *f, const struct hx_scenario_result *s,
			   const struct hx_check_result *c)
{
	size_t i;

	for (i = 0; i < c->n_evidence; i++) {
		const struct fa_attempt *a = attempt_by_seq(s, c->evidence[i]);
		char *line;

		if (a == NULL) {
			fprintf(f, "seq %" PRIu64 "\n", c->evidence[i]);
			continue;
		}
		line = attempt_line(a);
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
	put_xml(f, scenario_id(s));
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" skipped=\"%zu\" "
		"time=\"%.3f\">\n", tests, fail, s->error ? 1 : 0, skip,
		(double)s->duration_us / 1e6);
	fputs("    <properties>\n", f);
	junit_property(f, "file", s->sc ? s->sc->file : "");
	junit_property(f, "sha256", s->sc ? s->sc->sha256 : "");
	junit_property(f, "journal_head", head_of(s));
	snprintf(num, sizeof(num), "%zu", s->n_attempts);
	junit_property(f, "attempts", num);
	snprintf(num, sizeof(num), "%zu", unattributed(s));
	junit_property(f, "unattributed_attempts", num);
	fputs("    </properties>\n", f);
	if (s->error != NULL) {
		fputs("    <testcase classname=\"", f);
		put_xml(f, suite_id(r));
		fputc('.', f);
		put_xml(f, scenario_id(s));
		fputs("\" name=\"scenario\" time=\"0\">\n      <error message=\"", f);
		put_xml(f, s->error);
		fputs("\" type=\"scenario\">", f);
		put_xml(f, s->error);
		fputs("</error>\n    </testcase>\n", f);
	}
	for (i = 0; i < s->n_checks; i++) {
		const struct hx_check_result *c = &s->checks[i];

		fputs("    <testcase classname=\"", f);
		put_xml(f, suite_id(r));
		fputc('.', f);
		put_xml(f, scenario_id(s));
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
	enum fa_rc rc = FA_EIO;
	struct tally t;
	FILE *f;
	size_t i;

	if (path == NULL) {
		fa_err_set(err, "report: no path given");
		rc = FA_EINVAL;
		goto out;
	}
	f = open_out(path);
	if (f == NULL) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	errno = 0;
	tally_run(r, &t);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
	put_xml(f, suite_id(r));
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n",
		t.pass + t.fail + t.na + t.broken, t.fail, t.broken, t.na);
	for (i = 0; i < r->n_scenarios; i++)
		junit_scenario(f, r, &r->scenarios[i]);
	fputs("</testsuites>\n", f);
	if (!close_out(f, path)) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	rc = FA_OK;
out:
	return rc;
}
