/* report_json.c -- the JSON report (docs/report.md): every verdict, its evidence and the journal
 * heads, for machines. */
#include "report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "digest.h"
#include "grade.h"
#include "known_failing.h"
#include "report_facts.h"
#include "utf8.h"

static void add_str(cJSON *obj, const char *name, const char *s)
{
	char *clean;

	if (s == NULL) {
		cJSON_AddNullToObject(obj, name);
		return;
	}
	clean = fa_utf8_clean(s);
	cJSON_AddStringToObject(obj, name, clean);
	free(clean);
}

/* A client's text from scenario @sc: its canaries replaced
 * (hx_report_scrub), then as add_str(). */
static void add_client_str(cJSON *obj, const char *name, const struct hx_scenario_result *sc,
                           const char *s)
{
	char *clean = hx_report_scrub(sc, s);

	add_str(obj, name, clean);
	free(clean);
}

/* @s replaced by its fa_utf8_clean() copy with @sc's canaries replaced, in
 * cJSON's own allocation. */
static char *json_clean_str(char *s, const struct hx_scenario_result *sc)
{
	char *clean, *scrubbed, *copy;

	clean = fa_utf8_clean(s);
	scrubbed = hx_report_scrub(sc, clean);
	free(clean);
	if (strcmp(scrubbed, s) == 0) {
		free(scrubbed);
		return s;
	}
	copy = fa_xcheck(cJSON_malloc(strlen(scrubbed) + 1), "report");
	memcpy(copy, scrubbed, strlen(scrubbed) + 1);
	free(scrubbed);
	cJSON_free(s);
	return copy;
}

/* Make every key and string of @j (a client's JSON: any bytes) UTF-8,
 * without the canaries of scenario @sc (NULL: none known). */
static void json_clean(cJSON *j, const struct hx_scenario_result *sc)
{
	for (; j != NULL; j = j->next) {
		if (j->string != NULL && !(j->type & cJSON_StringIsConst))
			j->string = json_clean_str(j->string, sc);
		if (cJSON_IsString(j) && j->valuestring != NULL)
			j->valuestring = json_clean_str(j->valuestring, sc);
		json_clean(j->child, sc);
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
	const struct fa_attempt *a = hx_report_attempt(s, seq);
	cJSON *e = cJSON_CreateObject();

	cJSON_AddNumberToObject(e, "seq", (double)seq);
	if (a == NULL)
		return e;
	add_client_str(e, "task", s, a->task);
	add_us(e, "t_arrival_us", a->t_arrival_us);
	add_us(e, "t_response_us", a->t_response_us);
	add_client_str(e, "method", s, a->method);
	add_client_str(e, "path", s, a->path);
	add_str(e, "scope", a->scope);
	if (a->status != 0)
		cJSON_AddNumberToObject(e, "status", a->status);
	else
		cJSON_AddNullToObject(e, "status");
	add_str(e, "retry_after", a->retry_after);
	if (a->retry_after_ms != NULL)
		cJSON_AddStringToObject(e, "retry_after_ms", a->retry_after_ms);
	add_us(e, "pause_until_us", a->retry_after ? a->pause_until_us : -1);
	add_str(e, "fault", a->fault);
	add_client_str(e, "idempotency_key", s, a->idempotency_key);
	add_client_str(e, "client_reference", s, a->client_reference);
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

/* The task's last escalation record (a scrubbed copy), or null. */
static void add_escalation(cJSON *item, const struct hx_scenario_result *s,
                           const struct hx_task_run *t)
{
	const cJSON *rec = hx_report_escalation(s, t->spec ? t->spec->id : NULL);
	cJSON *copy;

	if (!cJSON_IsObject(rec)) {
		cJSON_AddNullToObject(item, "escalation");
		return;
	}
	copy = fa_xcheck(cJSON_Duplicate(rec, 1), "report");
	json_clean(copy->child, s);
	cJSON_AddItemToObject(item, "escalation", copy);
}

/* Where the planted canaries were found, how much was searched, and
 * whether some of it could not be. */
static void add_canaries(cJSON *o, const struct hx_scenario_result *s)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "canary_hits"), *item;

	for (size_t i = 0; i < s->n_canary_hits; i++) {
		const struct hx_canary_hit *h = &s->canary_hits[i];

		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "kind", hx_report_canary_kind_str(h->kind));
		add_client_str(item, "where", s, h->where ? h->where : "?");
		add_client_str(item, "task", s, h->task);
		cJSON_AddItemToArray(arr, item);
	}
	cJSON_AddNumberToObject(o, "canary_bytes_searched", (double)s->canary_bytes_searched);
	cJSON_AddBoolToObject(o, "canary_search_incomplete", s->canary_search_incomplete);
}

/* "required" or "recommended": what check @id is without expect or
 * --strict (check.h). */
static const char *default_str(const char *id)
{
	const struct hx_check_def *d = id ? hx_check_find(id) : NULL;

	return d == NULL || d->required ? "required" : "recommended";
}

static cJSON *json_scenario(const struct hx_run_result *r, const struct hx_scenario_result *s)
{
	cJSON *o = cJSON_CreateObject(), *arr, *item, *ev;
	size_t i, j;

	add_str(o, "id", s->sc ? s->sc->id : NULL);
	add_str(o, "file", s->sc ? s->sc->file : NULL);
	add_str(o, "title", s->sc ? s->sc->title : NULL);
	add_str(o, "sha256", s->sc ? s->sc->sha256 : NULL);
	add_client_str(o, "error", s, s->error);
	add_client_str(o, "client_stderr", s, s->client_stderr);
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
		add_client_str(item, "error", s, t->error);
		add_client_str(item, "outcome", s, t->outcome);
		add_client_str(item, "stderr_tail", s, t->stderr_tail);
		if (t->client_reference != NULL) /* a write task's only */
			add_str(item, "client_reference", t->client_reference);
		if (t->t_cancel_us >= 0)
			cJSON_AddNumberToObject(item, "cancelled_at_ms",
			                        (double)t->t_cancel_us / 1000.0);
		else
			cJSON_AddNullToObject(item, "cancelled_at_ms");
		add_escalation(item, s, t);
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
			cJSON_AddNumberToObject(item, "restart_t_ms",
			                        (double)rs->t_restart_us / 1000.0);
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
		char *scrubbed = hx_report_scrub(s, s->protocol_errors[i]);
		char *clean = fa_utf8_clean(scrubbed);

		cJSON_AddItemToArray(arr, cJSON_CreateString(clean));
		free(clean);
		free(scrubbed);
	}
	add_canaries(o, s);
	cJSON_AddNumberToObject(o, "attempts", (double)s->n_attempts);
	cJSON_AddNumberToObject(o, "unattributed_attempts", (double)hx_report_unattributed(s));
	add_str(o, "journal_head", hx_report_head(s));
	arr = cJSON_AddArrayToObject(o, "checks");
	for (i = 0; i < s->n_checks; i++) {
		const struct hx_check_result *c = &s->checks[i];

		item = cJSON_CreateObject();
		add_str(item, "id", c->id);
		cJSON_AddNumberToObject(item, "level", c->level);
		cJSON_AddStringToObject(item, "verdict", hx_verdict_str(c->verdict));
		cJSON_AddBoolToObject(item, "required", c->required || r->strict);
		cJSON_AddStringToObject(item, "default", default_str(c->id));
		cJSON_AddBoolToObject(item, "covered", !c->uncovered);
		add_client_str(item, "detail", s, c->detail);
		ev = cJSON_AddArrayToObject(item, "evidence");
		for (j = 0; j < c->n_evidence; j++)
			cJSON_AddItemToArray(ev, json_evidence(s, c->evidence[j]));
		cJSON_AddItemToArray(arr, item);
	}
	return o;
}

/* "profile": per check, its suite value and its results over the
 * scenarios (docs/report.md). */
static void add_profile(cJSON *root, const struct hx_run_result *r)
{
	cJSON *obj = cJSON_AddObjectToObject(root, "profile"), *item;

	for (size_t d = 0; d < hx_check_count(); d++) {
		const char *id = hx_check_def_at(d)->id;
		struct hx_profile_entry p;

		hx_grade_profile(r, id, &p);
		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "value", hx_grade_profile_str(&p));
		cJSON_AddNumberToObject(item, "pass", (double)p.pass);
		cJSON_AddNumberToObject(item, "fail", (double)p.fail);
		cJSON_AddNumberToObject(item, "n/a", (double)p.na);
		cJSON_AddNumberToObject(item, "not_covered", (double)p.not_covered);
		cJSON_AddItemToObject(obj, id, item);
	}
}

static const char *known_state_str(enum hx_known_state k)
{
	switch (k) {
	case HX_KNOWN_FAILING: return "failing";
	case HX_KNOWN_PASSES_NOW: return "passes_now";
	case HX_KNOWN_NA: return "n/a";
	case HX_KNOWN_UNLISTED: break;
	}
	return "unlisted";
}

/* "known_failing": the list's file and each entry's state, or null. */
static void add_known_failing(cJSON *root, const struct hx_run_result *r)
{
	const struct hx_known_failing *kf = r->known_failing;
	cJSON *obj, *arr, *item;

	if (kf == NULL) {
		cJSON_AddNullToObject(root, "known_failing");
		return;
	}
	obj = cJSON_AddObjectToObject(root, "known_failing");
	add_str(obj, "file", kf->file);
	arr = cJSON_AddArrayToObject(obj, "entries");
	for (size_t i = 0; i < kf->n_entries; i++) {
		const struct hx_known_entry *e = &kf->entries[i];

		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "id", e->id);
		cJSON_AddNumberToObject(item, "line", e->line);
		add_str(item, "reason", e->reason);
		cJSON_AddStringToObject(item, "state",
		                        known_state_str(hx_grade_known_state(r, e->id)));
		cJSON_AddItemToArray(arr, item);
	}
}

/* "repeat": each check's suite verdicts over the runs, each run's level
 * and exit code; null without --repeat. */
static void add_repeat(cJSON *root, const struct hx_repeat *rep)
{
	cJSON *obj, *checks, *arr, *item;
	char raw[32];
	unsigned k;

	if (rep == NULL) {
		cJSON_AddNullToObject(root, "repeat");
		return;
	}
	obj = cJSON_AddObjectToObject(root, "repeat");
	cJSON_AddNumberToObject(obj, "runs", rep->runs);
	cJSON_AddNumberToObject(obj, "planned", rep->planned);
	snprintf(raw, sizeof(raw), "%" PRIu64, rep->first_seed);
	cJSON_AddRawToObject(obj, "first_seed", raw);
	checks = cJSON_AddObjectToObject(obj, "checks");
	for (size_t d = 0; d < rep->n_tally && d < hx_check_count(); d++) {
		const struct hx_repeat_tally *t = &rep->tally[d];

		item = cJSON_CreateObject();
		cJSON_AddNumberToObject(item, "pass", t->pass);
		cJSON_AddNumberToObject(item, "fail", t->fail);
		cJSON_AddNumberToObject(item, "n/a", t->na);
		/* three decimals: 2/3 reads 0.667 */
		cJSON_AddNumberToObject(
		        item, "pass_rate",
		        rep->runs ? (double)((t->pass * 1000u + rep->runs / 2) / rep->runs) / 1000.0
		                  : 0.0);
		cJSON_AddBoolToObject(item, "counted", t->counted);
		cJSON_AddItemToObject(checks, hx_check_def_at(d)->id, item);
	}
	arr = cJSON_AddArrayToObject(obj, "levels");
	for (k = 0; k < rep->runs; k++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(hx_report_level_str(rep->levels[k])));
	arr = cJSON_AddArrayToObject(obj, "exit_codes");
	for (k = 0; k < rep->runs; k++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(rep->exit_codes[k]));
}

/* SHA-256 over "HEAD\n" of each scenario in suite order (64 zeros for a
 * scenario without a journal): one value that commits to every journal. */
static void run_head(const struct hx_run_result *r, char out[FA_SHA256_HEX])
{
	size_t i, len = r->n_scenarios * 65;
	char *buf = fa_xmalloc(len + 1);

	for (i = 0; i < r->n_scenarios; i++) {
		memcpy(buf + 65 * i, hx_report_head(&r->scenarios[i]), 64);
		buf[65 * i + 64] = '\n';
	}
	fa_digest_sha256_hex(buf, len, out);
	free(buf);
}

static char *json_text(const struct hx_run_result *r)
{
	cJSON *root = cJSON_CreateObject(), *obj, *arr, *item;
	char head[FA_SHA256_HEX], raw[32], *text, *why;
	struct hx_report_counts t;
	size_t i;

	cJSON_AddStringToObject(root, "report_version", "1");
	add_str(root, "harness_version", r->harness_version);
	add_str(root, "suite", r->suite ? r->suite->id : NULL);
	add_str(root, "suite_version", r->suite ? r->suite->version : NULL);
	add_str(root, "suite_title", r->suite ? r->suite->title : NULL);
	obj = cJSON_AddObjectToObject(root, "scenario_sha256");
	for (i = 0; i < r->n_scenarios; i++)
		if (r->scenarios[i].sc != NULL)
			add_str(obj, hx_report_scenario_id(&r->scenarios[i]),
			        r->scenarios[i].sc->sha256);
	/* Raw so a 64-bit seed keeps every digit (a double would round it). */
	snprintf(raw, sizeof(raw), "%" PRIu64, r->seed);
	cJSON_AddRawToObject(root, "seed", raw);
	cJSON_AddNumberToObject(root, "time_scale", r->time_scale > 1.0 ? r->time_scale : 1);
	add_str(root, "clock_check", r->clock_check);
	obj = cJSON_AddObjectToObject(root, "client");
	add_str(obj, "command", r->client);
	if (r->hello != NULL) {
		item = fa_xcheck(cJSON_Duplicate(r->hello, 1), "report");
		json_clean(item->child, hx_report_hello_scenario(r));
		cJSON_AddItemToObject(obj, "hello", item);
	} else
		cJSON_AddNullToObject(obj, "hello");
	cJSON_AddStringToObject(root, "mode", hx_report_mode_str(r->mode));
	cJSON_AddStringToObject(root, "level", hx_report_level_str(r->level));
	if (r->min_level > 0)
		cJSON_AddStringToObject(root, "min_level", hx_report_level_str(r->min_level));
	else
		cJSON_AddNullToObject(root, "min_level");
	cJSON_AddBoolToObject(root, "strict", r->strict);
	add_known_failing(root, r);
	cJSON_AddNumberToObject(root, "exit_code", r->exit_code);
	why = hx_report_exit_reason(r);
	cJSON_AddStringToObject(root, "exit_reason", why);
	free(why);
	run_head(r, head);
	cJSON_AddStringToObject(root, "journal_head", head);
	arr = cJSON_AddArrayToObject(root, "checks");
	for (i = 0; i < hx_check_count(); i++) {
		const struct hx_check_def *d = hx_check_def_at(i);
		bool req;
		enum hx_verdict v = hx_report_suite_verdict(r, d->id, &req);

		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "id", d->id);
		cJSON_AddNumberToObject(item, "level", d->level);
		cJSON_AddBoolToObject(item, "required", req);
		cJSON_AddStringToObject(item, "default", d->required ? "required" : "recommended");
		cJSON_AddStringToObject(item, "verdict", hx_verdict_str(v));
		cJSON_AddBoolToObject(item, "covered", hx_grade_covered(r, d->id));
		cJSON_AddBoolToObject(item, "known_failing",
		                      hx_known_failing_find(r->known_failing, d->id) != NULL);
		cJSON_AddItemToArray(arr, item);
	}
	arr = cJSON_AddArrayToObject(root, "scenarios");
	for (i = 0; i < r->n_scenarios; i++)
		cJSON_AddItemToArray(arr, json_scenario(r, &r->scenarios[i]));
	hx_report_count(r, &t);
	obj = cJSON_AddObjectToObject(root, "summary");
	cJSON_AddNumberToObject(obj, "pass", (double)t.pass);
	cJSON_AddNumberToObject(obj, "fail", (double)t.fail);
	cJSON_AddNumberToObject(obj, "n/a", (double)t.na);
	cJSON_AddNumberToObject(obj, "not_covered", (double)t.not_covered);
	add_profile(root, r);
	add_repeat(root, r->repeat);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

enum fa_rc hx_report_json(const char *path, const struct hx_run_result *r, struct fa_err *err)
{
	char *text = path != NULL ? json_text(r) : NULL;
	struct hx_report_out out;
	enum fa_rc rc = FA_EIO;

	if (path != NULL && text == NULL) {
		fa_err_set(err, "%s: cannot write: out of memory", path);
		goto out;
	}
	rc = hx_report_open(path, &out, err);
	if (rc != FA_OK)
		goto out;
	fputs(text, out.f);
	fputc('\n', out.f);
	rc = hx_report_close(&out, path, err);
out:
	free(text);
	return rc;
}
