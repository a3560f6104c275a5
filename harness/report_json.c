/* report_json.c -- the JSON report (docs/report.md): every verdict, its evidence and the journal heads, for machines. */
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

/* @s replaced by its fa_utf8_clean() copy, in cJSON's own allocation. */
static char *json_clean_str(char *s)
{
	char *clean, *copy;

	if (fa_utf8_valid(s))
		return s;
	clean = fa_utf8_clean(s);
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
	const struct fa_attempt *a = hx_report_attempt(s, seq);
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
		char *clean = fa_utf8_clean(s->protocol_errors[i]);

		cJSON_AddItemToArray(arr, cJSON_CreateString(clean));
		free(clean);
	}
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
	obj = cJSON_AddObjectToObject(root, "client");
	add_str(obj, "command", r->client);
	if (r->hello != NULL) {
		item = fa_xcheck(cJSON_Duplicate(r->hello, 1), "report");
		json_clean(item->child);
		cJSON_AddItemToObject(obj, "hello", item);
	} else
		cJSON_AddNullToObject(obj, "hello");
	cJSON_AddStringToObject(root, "mode", hx_report_mode_str(r->mode));
	cJSON_AddStringToObject(root, "level", hx_report_level_str(r->level));
	if (r->min_level > 0)
		cJSON_AddStringToObject(root, "min_level", hx_report_level_str(r->min_level));
	else
		cJSON_AddNullToObject(root, "min_level");
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
		cJSON_AddStringToObject(item, "verdict", hx_verdict_str(v));
		cJSON_AddItemToArray(arr, item);
	}
	arr = cJSON_AddArrayToObject(root, "scenarios");
	for (i = 0; i < r->n_scenarios; i++)
		cJSON_AddItemToArray(arr, json_scenario(&r->scenarios[i]));
	hx_report_count(r, &t);
	obj = cJSON_AddObjectToObject(root, "summary");
	cJSON_AddNumberToObject(obj, "pass", (double)t.pass);
	cJSON_AddNumberToObject(obj, "fail", (double)t.fail);
	cJSON_AddNumberToObject(obj, "n/a", (double)t.na);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

enum fa_rc hx_report_json(const char *path, const struct hx_run_result *r,
			  struct fa_err *err)
{
	char *text = path != NULL ? json_text(r) : NULL;
	FILE *f = NULL;
	enum fa_rc rc = FA_EIO;

	if (path != NULL && text == NULL) {
		fa_err_set(err, "%s: cannot write: out of memory", path);
		goto out;
	}
	rc = hx_report_open(path, &f, err);
	if (rc != FA_OK)
		goto out;
	fputs(text, f);
	fputc('\n', f);
	rc = hx_report_close(f, path, err);
out:
	free(text);
	return rc;
}
