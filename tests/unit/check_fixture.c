/* check_fixture.c -- a hand-built scenario run for the tests of one check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cJSON.h>

#include "alloc.h"
#include "check_fixture.h"

void fx_init(struct fx *f, const char *expect, const char *prefix, size_t n_tasks)
{
	memset(f, 0, sizeof(*f));
	CU_ASSERT_FATAL(n_tasks >= 1 && n_tasks <= FX_TASKS);
	CU_ASSERT_FATAL(strlen(prefix) >= 1 && strlen(prefix) <= 5);
	for (size_t i = 0; i < n_tasks; i++) {
		snprintf(f->ids[i], sizeof(f->ids[i]), "%.5s%zu", prefix, i + 1);
		f->tasks[i].id = f->ids[i];
		f->runs[i].spec = &f->tasks[i];
		f->runs[i].sent = true;
		f->runs[i].t_sent_us = 0;
		f->runs[i].t_exit_us = -1;
		f->runs[i].t_cancel_us = -1;
		f->runs[i].t_quiet_until_us = -1;
	}
	f->n_runs = n_tasks;
	f->sc.harness.tasks = f->tasks;
	f->sc.harness.n_tasks = n_tasks;
	if (expect != NULL) {
		f->sc.harness.expect = cJSON_Parse(expect);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->sc.harness.expect);
	}
}

void fx_release(struct fx *f)
{
	for (size_t i = 0; i < f->n; i++)
		fa_attempt_release(&f->a[i]);
	for (size_t i = 0; i < f->n_msgs; i++)
		hx_client_msg_release(&f->m[i]);
	for (size_t i = 0; i < FX_RESPONSES; i++)
		cJSON_Delete(f->responses[i].body);
	cJSON_Delete(f->sc.harness.expect);
}

struct fa_attempt *fx_add(struct fx *f, const char *task, int64_t arr_ms, int status)
{
	struct fa_attempt *a;

	CU_ASSERT_FATAL(f->n < FX_ATTEMPTS);
	a = &f->a[f->n];
	memset(a, 0, sizeof(*a));
	a->seq = ++f->n;
	a->task = fa_xstrdup(task);
	a->t_arrival_us = arr_ms * FX_MS;
	a->t_response_us = a->t_done_us = (arr_ms + 1) * FX_MS;
	a->response_index = -1;
	a->status = status;
	a->delivered = FA_DELIVERED_COMPLETE;
	a->pause_until_us = -1;
	return a;
}

void fx_say(struct fx *f, int64_t t_ms, const char *line)
{
	struct hx_client_msg *m;

	CU_ASSERT_FATAL(f->n_msgs < FX_MSGS);
	m = &f->m[f->n_msgs++];
	m->json = cJSON_Parse(line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->json);
	m->t_us = t_ms * FX_MS;
	m->type = fa_xstrdup(cJSON_GetObjectItem(m->json, "type")->valuestring);
	m->task = fa_xstrdup(cJSON_GetObjectItem(m->json, "task")->valuestring);
}

void fx_result(struct fx *f, int64_t t_ms, const char *task, const char *outcome)
{
	char *line = fa_xasprintf("{\"type\": \"result\", \"task\": \"%s\", \"outcome\": \"%s\"}",
	                          task, outcome);

	fx_say(f, t_ms, line);
	free(line);
}

void fx_escalation(struct fx *f, int64_t t_ms, const char *task, const char *record)
{
	char *line =
	        fa_xasprintf("{\"type\": \"escalation\", \"task\": \"%s\"%s%s}", task,
	                     record != NULL ? ", \"record\": " : "", record != NULL ? record : "");

	fx_say(f, t_ms, line);
	free(line);
}

void fx_hit(struct fx *f, enum hx_canary_kind kind, const char *where, const char *task)
{
	CU_ASSERT_FATAL(f->n_hits < FX_HITS);
	/* borrowed: fx_release never frees them */
	f->hits[f->n_hits++] = (struct hx_canary_hit){ .kind = kind,
		                                       .where = (char *)where,
		                                       .task = (char *)task };
}

struct hx_check_input fx_input(const struct fx *f, enum hx_mode mode)
{
	return (struct hx_check_input){ .sc = &f->sc,
		                        .attempts = f->a,
		                        .n_attempts = f->n,
		                        .tasks = f->runs,
		                        .n_tasks = f->n_runs,
		                        .mode = mode,
		                        .msgs = f->m,
		                        .n_msgs = f->n_msgs,
		                        .canary_hits = f->hits,
		                        .n_canary_hits = f->n_hits,
		                        .canary_bytes_searched = f->searched,
		                        .canary_search_incomplete = f->incomplete };
}

struct hx_check_result fx_judge(const struct fx *f, fx_check_fn *check, const char *id,
                                enum hx_mode mode)
{
	struct hx_check_input in = fx_input(f, mode);
	struct hx_check_result r = { .id = id };
	struct hx_check_ctx c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(hx_check_find(id));
	hx_check_ctx_init(&c, &in);
	hx_check_ctx_focus(&c, hx_check_find(id));
	check(&c, &r);
	hx_check_ctx_release(&c);
	CU_ASSERT_PTR_NOT_NULL(r.detail);
	return r;
}

bool fx_has(const struct hx_check_result *r, const char *s)
{
	return r->detail != NULL && strstr(r->detail, s) != NULL;
}
