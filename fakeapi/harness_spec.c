/* harness_spec.c -- a scenario's $.harness block: tasks, events, pacing; expect kept for the
 * harness. */
#include "harness_spec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "header.h"
#include "task_spec.h"

#define N(a)     (sizeof(a) / sizeof((a)[0]))
#define REQ      FA_FIELD_REQUIRED
#define NONEMPTY FA_FIELD_NONEMPTY

/* Task ids: [A-Za-z0-9_-]{1,64}, no '.' as scenario ids have: they
 * travel in a URL query (fa_task=ID). */
#define TASK_CHARS "_-"
#define ID_MAX     64

/* A task's goal: 1..GOAL_MAX characters (docs/escalation.schema.json). */
#define GOAL_MAX 500

/* FA_STORE_INDEX writes an int into it; the list is in enum order */
_Static_assert(sizeof(enum fa_event_on) == sizeof(int), "enum size");
static const char *const ons[] = { "server_sent", "client_saw", NULL };

/* A boolean stored into a bool member (schema.h has no row macro for it). */
#define F_BOOL(N, ST, M)                                                                           \
	{                                                                                          \
		.name = (N), .type = FA_SCHEMA_BOOL, .store = FA_STORE_BOOL,                       \
		.off = offsetof(ST, M)                                                             \
	}

/* $.harness */
enum { HX_TASKS, HX_EVENTS, HX_EXPECT, HX_TIMEOUT, HX_PACING };
static const struct fa_field harness_fields[] = {
	FA_F_CHECK("tasks", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	FA_F_CHECK("events", FA_SCHEMA_ARRAY, REQ | NONEMPTY),
	FA_F_CHECK("expect", FA_SCHEMA_OBJECT, 0),
	FA_F_INT("timeout_s", 0, 1, 3600, struct fa_harness_spec, timeout_s),
	FA_F_CHECK("pacing", FA_SCHEMA_OBJECT, 0),
};

/* $.harness.pacing (the LLM rate-limit guide: requests and tokens per period, per key) */
#define PACING_PERIOD_DEFAULT_S 60 /* without $.provider.quota: per minute */
enum { PC_RPM, PC_TPM, PC_PERIOD };
static const struct fa_field pacing_fields[] = {
	FA_F_INT("rpm", 0, 1, 1000000, struct fa_pacing_spec, rpm),
	FA_F_INT("tpm", 0, 1, 100000000, struct fa_pacing_spec, tpm),
	FA_F_INT("period_s", 0, 1, 86400, struct fa_pacing_spec, period_s),
};

/* $.harness.tasks[i] */
enum {
	TK_ID,
	TK_KEY,
	TK_CLASS,
	TK_METHOD,
	TK_PATH,
	TK_HEADERS,
	TK_BODY,
	TK_BUDGET,
	TK_TIMEOUT,
	TK_GOAL,
	TK_OUTCOME
};
static const struct fa_field task_fields[] = {
	FA_F_ID("id", REQ, TASK_CHARS, ID_MAX, struct fa_task_spec, id),
	FA_F_STR("key", REQ | NONEMPTY, struct fa_task_spec, key),
	FA_F_STR("class", 0, struct fa_task_spec, klass),
	FA_F_ONE_OF("method", REQ, fa_route_methods, struct fa_task_spec, method),
	FA_F_STR("path", REQ | NONEMPTY, struct fa_task_spec, path),
	FA_F_CHECK("headers", FA_SCHEMA_OBJECT, 0),
	FA_F_JSON("body", struct fa_task_spec, body),
	FA_F_CHECK("budget", FA_SCHEMA_OBJECT, 0),
	FA_F_INT("timeout_s", 0, 1, 3600, struct fa_task_spec, timeout_s),
	FA_F_CHECK("goal", FA_SCHEMA_ANY, 0),    /* read_goal() */
	FA_F_CHECK("outcome", FA_SCHEMA_ANY, 0), /* fa_task_spec_read_outcome() */
};

/* $.harness.tasks[i].budget */
static const struct fa_field budget_fields[] = {
	FA_F_INT("max_attempts", 0, 1, 1000, struct fa_budget, max_attempts),
	FA_F_INT("max_wait_s", 0, 0, 86400, struct fa_budget, max_wait_s),
};

/* $.harness.events[i] */
enum { EV_AT, EV_AFTER, EV_PLUS, EV_SEND, EV_KILL, EV_RESTART, EV_CANCEL };
static const struct fa_field event_fields[] = {
	FA_F_I64("at_ms", 0, 0, 3600000, struct fa_event_spec, at_ms),
	FA_F_CHECK("after", FA_SCHEMA_OBJECT, 0),
	FA_F_INT("plus_ms", 0, 0, 600000, struct fa_event_spec, plus_ms),
	FA_F_CHECK("send", FA_SCHEMA_ARRAY, NONEMPTY),
	F_BOOL("kill", struct fa_event_spec, kill),
	F_BOOL("restart", struct fa_event_spec, restart),
	FA_F_CHECK("cancel", FA_SCHEMA_ARRAY, NONEMPTY),
};

/* $.harness.events[i].after: a status trigger or a held trigger */
enum { AF_TASK, AF_STATUS, AF_HELD, AF_ON };
static const struct fa_field after_fields[] = {
	FA_F_STR("task", REQ | NONEMPTY, struct fa_event_spec, after_task),
	FA_F_INT("status", 0, 100, 599, struct fa_event_spec, after_status),
	F_BOOL("held", struct fa_event_spec, after_held),
	FA_F_ENUM("on", 0, ons, struct fa_event_spec, on),
};

/* $.harness.events[i].send[k], .cancel[k] */
static const struct fa_field send_field = FA_F_CHECK(NULL, FA_SCHEMA_STRING, NONEMPTY);

/* Characters (UTF-8 sequences) of @s. */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* "goal": a string of 1..GOAL_MAX characters, copied into t->goal. */
static enum fa_rc read_goal(struct fa_schema *s, const cJSON *v, struct fa_task_spec *t)
{
	enum fa_rc rc = FA_OK;
	size_t mark = fa_schema_enter(s, "goal");
	size_t n = cJSON_IsString(v) ? utf8_chars(v->valuestring) : 0;

	if (n < 1 || n > GOAL_MAX)
		rc = fa_schema_fail_got(s, v, "string of 1..%d characters", GOAL_MAX);
	else
		t->goal = fa_xstrdup(v->valuestring);
	fa_schema_leave(s, mark);
	return rc;
}

/* What reading $.harness needs of the rest of the scenario. */
struct reading {
	struct fa_harness_spec *h; /* being read */
	const struct fa_key *keys; /* $.provider.keys, n_keys of them */
	size_t n_keys;
	int period_s; /* $.harness.pacing.period_s default */
};

static enum fa_rc read_task(struct fa_schema *s, const cJSON *obj, struct reading *rd,
                            struct fa_task_spec *t)
{
	const cJSON *got[N(task_fields)];
	enum fa_rc rc;
	size_t mark;

	t->budget.max_attempts = 0;
	t->budget.max_wait_s = -1;
	rc = fa_schema_object(s, obj, task_fields, N(task_fields), t, got);
	if (rc != FA_OK)
		return rc;
	mark = fa_schema_enter(s, "key");
	if (fa_key_by_id(rd->keys, rd->n_keys, t->key) == NULL)
		rc = fa_schema_fail(s, "no key %s in $.provider.keys", fa_schema_quote(t->key).s);
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		return rc;
	mark = fa_schema_enter(s, "path");
	rc = fa_schema_http_path(s, got[TK_PATH], true);
	fa_schema_leave(s, mark);
	if (rc == FA_OK && got[TK_HEADERS] != NULL) {
		mark = fa_schema_enter(s, "headers");
		rc = fa_header_read_list(s, got[TK_HEADERS], false, &t->headers, &t->n_headers);
		fa_schema_leave(s, mark);
	}
	if (rc == FA_OK && got[TK_BUDGET] != NULL) {
		mark = fa_schema_enter(s, "budget");
		rc = fa_schema_object(s, got[TK_BUDGET], budget_fields, N(budget_fields),
		                      &t->budget, NULL);
		fa_schema_leave(s, mark);
	}
	if (rc == FA_OK && got[TK_GOAL] != NULL)
		rc = read_goal(s, got[TK_GOAL], t);
	if (rc == FA_OK && got[TK_OUTCOME] != NULL) {
		mark = fa_schema_enter(s, "outcome");
		rc = fa_task_spec_read_outcome(s, got[TK_OUTCOME], &t->outcome);
		fa_schema_leave(s, mark);
	}
	return rc;
}

static enum fa_rc read_tasks(struct fa_schema *s, const cJSON *arr, struct reading *rd)
{
	struct fa_harness_spec *h = rd->h;
	enum fa_rc rc = FA_OK;
	size_t i = 0, mark, mark2;

	h->n_tasks = fa_schema_count(arr);
	h->tasks = fa_xcalloc(h->n_tasks, sizeof(*h->tasks));
	for (const cJSON *t = arr->child; t != NULL; t = t->next, i++) {
		mark = fa_schema_enter_index(s, i);
		rc = read_task(s, t, rd, &h->tasks[i]);
		for (size_t k = 0; rc == FA_OK && k < i; k++) {
			if (strcmp(h->tasks[k].id, h->tasks[i].id) != 0)
				continue;
			mark2 = fa_schema_enter(s, "id");
			rc = fa_schema_fail(s,
			                    "duplicate task id %s (first at $.harness.tasks[%zu])",
			                    fa_schema_quote(h->tasks[i].id).s, k);
			fa_schema_leave(s, mark2);
		}
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			break;
	}
	return rc;
}

/* $.harness.pacing: "rpm", "tpm" or both; "period_s" defaults to the
 * provider's quota period, else a minute. */
static enum fa_rc read_pacing(struct fa_schema *s, const cJSON *obj, struct reading *rd)
{
	struct fa_pacing_spec *p = &rd->h->pacing;
	const cJSON *got[N(pacing_fields)];
	enum fa_rc rc;

	p->rpm = p->tpm = 0;
	p->period_s = rd->period_s;
	rc = fa_schema_object(s, obj, pacing_fields, N(pacing_fields), p, got);
	if (rc != FA_OK)
		return rc;
	if (got[PC_RPM] == NULL && got[PC_TPM] == NULL)
		return fa_schema_fail(s, "missing limit: give \"rpm\" or \"tpm\" (or both)");
	p->given = true;
	return FA_OK;
}

/* Where a task is sent from: $.harness.events[ev].send[k]. */
struct sender {
	size_t ev; /* event index; SIZE_MAX = no event sends it (yet) */
	size_t k;  /* index in that event's "send" */
};

static enum fa_rc read_send(struct fa_schema *s, const cJSON *arr, struct reading *rd,
                            size_t ev_idx, struct sender *sent_by)
{
	struct fa_event_spec *ev = &rd->h->events[ev_idx];
	const struct fa_task_spec *t;
	enum fa_rc rc = FA_OK;
	size_t k = 0, mark, ti;

	ev->n_send = fa_schema_count(arr);
	ev->send = fa_xcalloc(ev->n_send, sizeof(*ev->send));
	for (const cJSON *c = arr->child; c != NULL; c = c->next, k++) {
		mark = fa_schema_enter_index(s, k);
		rc = fa_schema_value(s, c, &send_field, NULL);
		t = rc == FA_OK ? fa_harness_spec_task(rd->h, c->valuestring) : NULL;
		if (rc == FA_OK && t == NULL)
			rc = fa_schema_fail(s, "no task %s in $.harness.tasks",
			                    fa_schema_quote(c->valuestring).s);
		if (rc == FA_OK) {
			ti = (size_t)(t - rd->h->tasks);
			if (sent_by[ti].ev != SIZE_MAX)
				rc = fa_schema_fail(
				        s,
				        "task %s is already sent by $.harness.events[%zu].send[%zu]",
				        fa_schema_quote(t->id).s, sent_by[ti].ev, sent_by[ti].k);
			sent_by[ti].ev = ev_idx;
			sent_by[ti].k = k;
			ev->send[k] = fa_xstrdup(t->id);
		}
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			break;
	}
	return rc;
}

/* $.harness.events[ev_idx].cancel: tasks of $.harness.tasks, each cancelled
 * by one event only, none sent by this same event. */
static enum fa_rc read_cancel(struct fa_schema *s, const cJSON *arr, struct reading *rd,
                              size_t ev_idx, const struct sender *sent_by,
                              struct sender *cancelled_by)
{
	struct fa_event_spec *ev = &rd->h->events[ev_idx];
	const struct fa_task_spec *t;
	enum fa_rc rc = FA_OK;
	size_t k = 0, mark, ti;

	ev->n_cancel = fa_schema_count(arr);
	ev->cancel = fa_xcalloc(ev->n_cancel, sizeof(*ev->cancel));
	for (const cJSON *c = arr->child; rc == FA_OK && c != NULL; c = c->next, k++) {
		mark = fa_schema_enter_index(s, k);
		rc = fa_schema_value(s, c, &send_field, NULL);
		t = rc == FA_OK ? fa_harness_spec_task(rd->h, c->valuestring) : NULL;
		if (rc == FA_OK && t == NULL)
			rc = fa_schema_fail(s, "no task %s in $.harness.tasks",
			                    fa_schema_quote(c->valuestring).s);
		ti = t != NULL ? (size_t)(t - rd->h->tasks) : 0;
		if (rc == FA_OK && cancelled_by[ti].ev != SIZE_MAX)
			rc = fa_schema_fail(
			        s,
			        "task %s is already cancelled by $.harness.events[%zu].cancel[%zu]",
			        fa_schema_quote(t->id).s, cancelled_by[ti].ev, cancelled_by[ti].k);
		if (rc == FA_OK && sent_by[ti].ev == ev_idx)
			rc = fa_schema_fail(s,
			                    "task %s is sent by this same event (send[%zu]): "
			                    "cancel it from a later one",
			                    fa_schema_quote(t->id).s, sent_by[ti].k);
		if (rc == FA_OK) {
			cancelled_by[ti].ev = ev_idx;
			cancelled_by[ti].k = k;
			ev->cancel[k] = fa_xstrdup(t->id);
		}
		fa_schema_leave(s, mark);
	}
	return rc;
}

/* $.harness.events[i].after: exactly one of "status" and "held": true;
 * "on" only with "status" (a held answer is the provider's to see). */
static enum fa_rc read_after(struct fa_schema *s, const cJSON *obj, struct reading *rd,
                             struct fa_event_spec *ev)
{
	const cJSON *got[N(after_fields)];
	enum fa_rc rc;
	size_t mark;

	rc = fa_schema_object(s, obj, after_fields, N(after_fields), ev, got);
	if (rc != FA_OK)
		return rc;
	if (fa_harness_spec_task(rd->h, ev->after_task) == NULL) {
		mark = fa_schema_enter(s, "task");
		rc = fa_schema_fail(s, "no task %s in $.harness.tasks",
		                    fa_schema_quote(ev->after_task).s);
		fa_schema_leave(s, mark);
		return rc;
	}
	if (got[AF_HELD] != NULL && !ev->after_held) {
		mark = fa_schema_enter(s, "held");
		rc = fa_schema_fail_got(s, got[AF_HELD], "true");
		fa_schema_leave(s, mark);
		return rc;
	}
	if (got[AF_STATUS] == NULL && got[AF_HELD] == NULL)
		return fa_schema_fail(s, "missing trigger: give \"status\" or \"held\": true");
	if (got[AF_STATUS] != NULL && got[AF_HELD] != NULL)
		return fa_schema_fail(s, "\"status\" and \"held\" both given (give one)");
	if (got[AF_ON] != NULL && got[AF_HELD] != NULL)
		return fa_schema_fail(s, "\"on\" is only allowed with \"status\"");
	return FA_OK;
}

static enum fa_rc read_event(struct fa_schema *s, const cJSON *obj, struct reading *rd, size_t i,
                             struct sender *sent_by, struct sender *cancelled_by)
{
	struct fa_event_spec *ev = &rd->h->events[i];
	const cJSON *got[N(event_fields)];
	enum fa_rc rc;
	size_t mark;

	ev->at_ms = -1;
	rc = fa_schema_object(s, obj, event_fields, N(event_fields), ev, got);
	if (rc != FA_OK)
		return rc;
	if (got[EV_AT] == NULL && got[EV_AFTER] == NULL)
		return fa_schema_fail(s, "missing trigger: give \"at_ms\" or \"after\"");
	if (got[EV_AT] != NULL && got[EV_AFTER] != NULL)
		return fa_schema_fail(s, "\"at_ms\" and \"after\" both given (give one)");
	if (got[EV_PLUS] != NULL && got[EV_AFTER] == NULL)
		return fa_schema_fail(s, "\"plus_ms\" is only allowed with \"after\"");
	if (ev->restart && !ev->kill)
		return fa_schema_fail(s, "\"restart\" needs \"kill\": true");
	if (got[EV_SEND] == NULL && got[EV_CANCEL] == NULL && !ev->kill)
		return fa_schema_fail(s, "missing required key \"send\" (or give \"cancel\", "
		                         "or \"kill\": true)");
	if (got[EV_AFTER] != NULL) {
		mark = fa_schema_enter(s, "after");
		rc = read_after(s, got[EV_AFTER], rd, ev);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	if (got[EV_SEND] != NULL) {
		mark = fa_schema_enter(s, "send");
		rc = read_send(s, got[EV_SEND], rd, i, sent_by);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
	}
	if (got[EV_CANCEL] == NULL)
		return FA_OK;
	mark = fa_schema_enter(s, "cancel");
	rc = read_cancel(s, got[EV_CANCEL], rd, i, sent_by, cancelled_by);
	fa_schema_leave(s, mark);
	return rc;
}

/* An "after" event fires only once the task it waits for was sent, so
 * following "waits for a task sent by" from an event must reach an at_ms
 * event; a loop means none of the events on it ever fires. */
static enum fa_rc check_event_cycles(struct fa_schema *s, const struct reading *rd,
                                     const struct sender *sent_by)
{
	const struct fa_harness_spec *h = rd->h;
	size_t mark;
	enum fa_rc rc;

	for (size_t i = 0; i < h->n_events; i++) {
		size_t cur = i, steps = 0;

		while (h->events[cur].at_ms < 0 && steps++ <= h->n_events) {
			const struct fa_task_spec *t =
			        fa_harness_spec_task(rd->h, h->events[cur].after_task);

			cur = sent_by[t - h->tasks].ev;
		}
		if (h->events[cur].at_ms >= 0)
			continue;
		mark = fa_schema_enter(s, "events");
		fa_schema_enter_index(s, i);
		fa_schema_enter(s, "after");
		rc = fa_schema_fail(s, "waits on a cycle of \"after\" events, so it never fires");
		fa_schema_leave(s, mark);
		return rc;
	}
	return FA_OK;
}

const struct fa_task_spec *fa_harness_spec_task(const struct fa_harness_spec *h, const char *id)
{
	for (size_t i = 0; id != NULL && i < h->n_tasks; i++) {
		if (h->tasks[i].id != NULL && strcmp(h->tasks[i].id, id) == 0)
			return &h->tasks[i];
	}
	return NULL;
}

enum fa_rc fa_harness_spec_read(struct fa_schema *s, const cJSON *obj, const struct fa_key *keys,
                                size_t n_keys, const struct fa_quota_spec *quota,
                                struct fa_harness_spec *h)
{
	struct reading rd = {
		.h = h,
		.keys = keys,
		.n_keys = n_keys,
		.period_s = quota != NULL ? quota->period_s : PACING_PERIOD_DEFAULT_S,
	};
	const cJSON *got[N(harness_fields)];
	struct sender *sent_by = NULL, *cancelled_by = NULL;
	enum fa_rc rc;
	size_t mark, mark2, i = 0;

	h->timeout_s = 60;
	rc = fa_schema_object(s, obj, harness_fields, N(harness_fields), h, got);
	if (rc != FA_OK)
		goto out;
	mark = fa_schema_enter(s, "tasks");
	rc = read_tasks(s, got[HX_TASKS], &rd);
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		goto out;
	/* each check's parameters are the harness's to read (expect.h there):
	 * the provider keeps the object as it is */
	if (got[HX_EXPECT] != NULL)
		h->expect = fa_xcheck(cJSON_Duplicate(got[HX_EXPECT], 1), "cJSON_Duplicate");
	if (got[HX_PACING] != NULL) {
		mark = fa_schema_enter(s, "pacing");
		rc = read_pacing(s, got[HX_PACING], &rd);
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			goto out;
	}

	sent_by = fa_xcalloc(h->n_tasks, sizeof(*sent_by));
	cancelled_by = fa_xcalloc(h->n_tasks, sizeof(*cancelled_by));
	for (size_t t = 0; t < h->n_tasks; t++)
		sent_by[t].ev = cancelled_by[t].ev = SIZE_MAX;
	h->n_events = fa_schema_count(got[HX_EVENTS]);
	h->events = fa_xcalloc(h->n_events, sizeof(*h->events));
	mark = fa_schema_enter(s, "events");
	for (const cJSON *e = got[HX_EVENTS]->child; e != NULL; e = e->next, i++) {
		mark2 = fa_schema_enter_index(s, i);
		rc = read_event(s, e, &rd, i, sent_by, cancelled_by);
		fa_schema_leave(s, mark2);
		if (rc != FA_OK)
			break;
	}
	fa_schema_leave(s, mark);
	if (rc != FA_OK)
		goto out;
	for (size_t t = 0; t < h->n_tasks; t++) {
		if (sent_by[t].ev != SIZE_MAX)
			continue;
		mark = fa_schema_enter(s, "tasks");
		fa_schema_enter_index(s, t);
		rc = fa_schema_fail(s, "task %s is never sent (no event lists it in \"send\")",
		                    fa_schema_quote(h->tasks[t].id).s);
		fa_schema_leave(s, mark);
		goto out;
	}
	rc = check_event_cycles(s, &rd, sent_by);
out:
	free(sent_by);
	free(cancelled_by);
	return rc;
}

void fa_harness_spec_release(struct fa_harness_spec *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->n_tasks && h->tasks != NULL; i++) {
		struct fa_task_spec *t = &h->tasks[i];

		free(t->id);
		free(t->key);
		free(t->klass);
		free(t->method);
		free(t->path);
		fa_header_free_list(t->headers, t->n_headers);
		cJSON_Delete(t->body);
		free(t->goal);
	}
	free(h->tasks);
	for (size_t i = 0; i < h->n_events && h->events != NULL; i++) {
		free(h->events[i].after_task);
		for (size_t k = 0; k < h->events[i].n_send && h->events[i].send; k++)
			free(h->events[i].send[k]);
		free(h->events[i].send);
		for (size_t k = 0; k < h->events[i].n_cancel && h->events[i].cancel; k++)
			free(h->events[i].cancel[k]);
		free(h->events[i].cancel);
	}
	free(h->events);
	cJSON_Delete(h->expect);
	memset(h, 0, sizeof(*h));
}
