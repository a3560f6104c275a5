/* escalate.c -- the escalation record: a task handed to a person with what they need to decide. */
#include "escalate.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "defect.h"
#include "emit.h"
#include "fingerprint.h"
#include "log.h"

static void add_str(cJSON *o, const char *name, const char *v)
{
	if (v == NULL)
		fa_xcheck(cJSON_AddNullToObject(o, name), "cJSON");
	else
		fa_xcheck(cJSON_AddStringToObject(o, name, v), "cJSON");
}

static void add_num(cJSON *o, const char *name, double v)
{
	fa_xcheck(cJSON_AddNumberToObject(o, name, v), "cJSON");
}

/* @s cut to REF_ESCALATE_TEXT_MAX bytes, never inside a UTF-8 sequence
 * (owned). */
static char *cut(const char *s)
{
	size_t n = strlen(s);

	if (n <= REF_ESCALATE_TEXT_MAX)
		return fa_xstrdup(s);
	n = REF_ESCALATE_TEXT_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return fa_xstrndup(s, n);
}

/* @us as seconds, at most 3 decimals, no trailing zeros ("8", "1.25"). */
static void secs(char *buf, size_t len, int64_t us)
{
	char *end;

	snprintf(buf, len, "%.3f", (double)(us < 0 ? 0 : us) / 1e6);
	end = buf + strlen(buf);
	while (end > buf && end[-1] == '0')
		*--end = '\0';
	if (end > buf && end[-1] == '.')
		end[-1] = '\0';
}

/* The url's path as given, without query or fragment ("/" when none). */
static char *raw_path(const char *url)
{
	const char *p = strstr(url, "://");

	p = p != NULL ? p + 3 + strcspn(p + 3, "/?#") : url;
	if (*p != '/')
		return fa_xstrdup("/");
	return fa_xstrndup(p, strcspn(p, "?#"));
}

/* The method as the schema spells one: its letters, upper-cased. */
static char *method_name(const char *method)
{
	char *m = fa_xstrdup(method);
	size_t o = 0;

	for (const char *c = method; *c != '\0'; c++)
		if (isalpha((unsigned char)*c))
			m[o++] = (char)toupper((unsigned char)*c);
	m[o] = '\0';
	if (o == 0) {
		free(m);
		m = fa_xstrdup("UNKNOWN");
	}
	return m;
}

static void add_attempts(cJSON *rec, const struct ref_run *run)
{
	cJSON *arr = fa_xcheck(cJSON_AddArrayToObject(rec, "attempts"), "cJSON");

	for (size_t i = 0; i < run->nlog; i++) {
		const struct ref_attempt_log *a = &run->log[i];
		cJSON *o = fa_xcheck(cJSON_CreateObject(), "cJSON");
		char at[40];

		cJSON_AddItemToArray(arr, o);
		fa_clock_rfc3339(a->at_wall_us, at, sizeof(at));
		add_num(o, "attempt", a->attempt);
		add_str(o, "at", at);
		add_num(o, "status", (double)a->status);
		add_str(o, "retry_after", a->retry_after);
		if (a->n_ratelimit == 0) {
			add_str(o, "ratelimit", NULL);
			continue;
		}
		cJSON *rl = fa_xcheck(cJSON_AddObjectToObject(o, "ratelimit"), "cJSON");
		for (size_t k = 0; k < a->n_ratelimit; k++)
			add_str(rl, a->ratelimit[k].name, a->ratelimit[k].value);
	}
}

/* Add option @name to @opts. */
static void option(cJSON *opts, const char *name)
{
	cJSON_AddItemToArray(opts, fa_xcheck(cJSON_CreateString(name), "cJSON"));
}

/*
 * The safe next steps (the retry-safety guide). A write that may have happened: ask the
 * provider, send it again with the same key (when it has one), or drop
 * it; never a fresh write, which could create a second side effect. Any
 * other write: wait and send it again with its key, change the plan, or
 * drop it. A read: wait, raise the quota, change the plan, or drop it.
 */
static void add_options(cJSON *rec, const struct ref_task *t, const char *sent)
{
	cJSON *opts = fa_xcheck(cJSON_AddArrayToObject(rec, "options"), "cJSON");
	bool key = t->op != NULL && t->op->key != NULL;

	if (t->write && strcmp(sent, "unknown") == 0) {
		option(opts, "query_status");
		if (key)
			option(opts, "retry_same_key");
	} else if (t->write) {
		option(opts, "wait");
		if (key)
			option(opts, "retry_same_key");
		option(opts, "change_plan");
	} else {
		option(opts, "wait");
		option(opts, "raise_quota");
		option(opts, "change_plan");
	}
	option(opts, "cancel");
}

/* The wait the provider last asked for, µs; -1 for none. A pause of the
 * scope that stopped the task is what the provider asked of it, through
 * another task's answer; else the task's own last Retry-After. */
static int64_t wait_requested_us(const struct ref_run *run)
{
	if (run->stop == REF_STOP_WAIT && run->stop_wait == REF_REASON_SCOPE_PAUSE)
		return run->stop_wait_us;
	return run->asked_us;
}

static cJSON *record(const struct ref_task *t, const struct ref_run *run, const char *reason,
                     const char *action)
{
	cJSON *rec = fa_xcheck(cJSON_CreateObject(), "cJSON");
	cJSON *budget;
	const char *sent = ref_run_sent(run);
	char *method = method_name(t->method);
	char *origin = ref_fingerprint_origin(t->url);
	char *text;
	char fp[REF_FINGERPRINT_LEN];
	int64_t asked = wait_requested_us(run);

	add_str(rec, "reason", reason);
	if (t->goal != NULL && t->goal[0] != '\0') {
		text = cut(t->goal);
	} else {
		char *path = raw_path(t->url);
		char *g = fa_xasprintf("%s %s", method, path);

		text = cut(g);
		free(g);
		free(path);
	}
	add_str(rec, "goal", text);
	free(text);
	text = cut(action);
	add_str(rec, "action", text);
	free(text);
	add_str(rec, "provider", origin != NULL ? origin : "unknown");
	add_str(rec, "endpoint", t->endpoint);
	add_str(rec, "method", method);
	add_str(rec, "scope", t->scope);
	ref_fingerprint(method, t->endpoint, t->body, fp);
	add_str(rec, "fingerprint", fp);
	add_attempts(rec, run);
	budget = fa_xcheck(cJSON_AddObjectToObject(rec, "budget"), "cJSON");
	add_num(budget, "max_attempts", t->max_attempts);
	add_num(budget, "max_wait_s", (double)(t->max_wait_us / 1000) / 1000.0);
	add_num(budget, "attempts_used", ref_task_attempts_used(t, run));
	add_num(budget, "waited_ms", (double)(run->waited_us / 1000));
	add_str(rec, "idempotency_key", t->op != NULL ? t->op->key : NULL);
	add_str(rec, "provider_operation_id", t->op != NULL ? t->op->provider_id : NULL);
	add_str(rec, "client_reference", t->op != NULL ? t->op->client_reference : NULL);
	add_str(rec, "sent", sent);
	if (asked >= 0)
		add_num(rec, "wait_requested_s", (double)(asked / 1000) / 1000.0);
	else
		add_str(rec, "wait_requested_s", NULL);
	add_options(rec, t, sent);

	/* DEFECT leakkey: the request's headers go into the record as they
	 * were sent, the Authorization value (the key's secret) with them. */
	if (defect_is("leakkey")) {
		const char *secret = getenv(t->key_env != NULL ? t->key_env : "FAKEAPI_KEY");
		cJSON *h = fa_xcheck(cJSON_AddObjectToObject(rec, "request_headers"), "cJSON");

		text = fa_xasprintf("Bearer %s", secret != NULL ? secret : "");
		add_str(h, "Authorization", text);
		free(text);
	}

	free(origin);
	free(method);
	return rec;
}

void ref_escalate(struct ref_task *t, struct ref_run *run, const char *reason, const char *action)
{
	FA_LOG(FA_LOG_INFO, "client", "task=%s event=escalation reason=%s attempts=%d", t->id,
	       reason, ref_task_attempts_used(t, run));
	ref_emit_escalation(t->id, record(t, run, reason, action));
	run->outcome = "escalated";
}

void ref_escalate_stop(struct ref_task *t, struct ref_run *run, const struct ref_wire *w)
{
	int64_t left = t->max_wait_us - run->waited_us;
	char s_left[32], s_max[32], s_wait[32];
	const char *reason = "attempts_exhausted";
	char *what, *why = NULL, *action;

	secs(s_left, sizeof(s_left), left);
	secs(s_max, sizeof(s_max), t->max_wait_us);
	secs(s_wait, sizeof(s_wait),
	     run->stop_wait == REF_REASON_RETRY_AFTER && run->asked_us >= 0 ? run->asked_us
	                                                                    : run->stop_wait_us);
	if (strcmp(w->kind, "reconcile") == 0)
		what = fa_xasprintf("status read (attempt %d) for %s %s not sent", run->n + 1,
		                    t->method, t->endpoint);
	else
		what = fa_xasprintf("attempt %d of %s %s not sent", run->n + 1, t->method,
		                    t->endpoint);
	switch (run->stop) {
	case REF_STOP_WAIT:
		reason = "wait_exceeds_budget";
		if (run->stop_wait == REF_REASON_RETRY_AFTER)
			why = fa_xasprintf("the provider's Retry-After asks for %s s", s_wait);
		else if (run->stop_wait == REF_REASON_SCOPE_PAUSE)
			why = fa_xasprintf("scope %s is paused for %s s more", t->scope, s_wait);
		else if (run->stop_wait == REF_REASON_BACKOFF)
			why = fa_xasprintf("the shortest backoff is %s s", s_wait);
		else
			why = fa_xasprintf("no in-flight slot of scope %s came free", t->scope);
		action = fa_xasprintf("%s: %s, and %s s of the wait budget (max_wait_s %s) %s",
		                      what, why, s_left, s_max,
		                      run->stop_wait == REF_REASON_NONE ? "ran out" : "are left");
		break;
	case REF_STOP_DEADLINE:
		reason = "deadline";
		action = fa_xasprintf("%s: the task's deadline leaves no time for it", what);
		break;
	case REF_STOP_QUEUE:
		reason = "scope_queue_full";
		action = fa_xasprintf("%s: %d tasks of scope %s already wait to retry "
		                      "(max_delayed_requests)",
		                      what, ref_policy_scope()->max_delayed_requests, t->scope);
		break;
	case REF_STOP_PACE:
		reason = "over_token_limit";
		action = fa_xasprintf(
		        "%s: it costs %lld tokens, more than the %lld the key may "
		        "spend in %g s (tpm), so it can never be sent",
		        what, (long long)(strcmp(w->kind, "reconcile") != 0 ? t->tokens : 0),
		        (long long)t->pacing.tpm, t->pacing.period_s);
		break;
	default:
		if (run->n == 0)
			why = fa_xstrdup("earlier processes made them all");
		else if (run->status == 0)
			why = fa_xstrdup("the last one got a transport error");
		else
			why = fa_xasprintf("the last one got HTTP %ld", run->status);
		action = fa_xasprintf("%s: all %d attempts of the budget are used, %s", what,
		                      t->max_attempts, why);
		break;
	}
	ref_escalate(t, run, reason, action);
	free(action);
	free(why);
	free(what);
}
