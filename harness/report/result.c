/* result.c -- verdict names and the release of what a run found. */
#include "result.h"

#include <stdlib.h>
#include <string.h>

const char *hx_verdict_str(enum hx_verdict v)
{
	switch (v) {
	case HX_PASS: return "pass";
	case HX_FAIL: return "fail";
	case HX_NA: return "n/a";
	}
	return "n/a";
}

void hx_check_result_release(struct hx_check_result *r)
{
	if (r == NULL)
		return;
	free(r->detail);
	free(r->evidence);
	memset(r, 0, sizeof(*r));
}

void hx_task_run_release(struct hx_task_run *t)
{
	if (t == NULL)
		return;
	free(t->error);
	free(t->stderr_tail);
	t->error = NULL;
	free(t->outcome);
	t->outcome = NULL;
	free(t->client_reference);
	t->client_reference = NULL;
}

void hx_restart_release(struct hx_restart *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n_tasks; i++)
		free(r->tasks[i]);
	free(r->tasks);
	memset(r, 0, sizeof(*r));
}

void hx_scenario_result_release(struct hx_scenario_result *s)
{
	size_t i;

	if (s == NULL)
		return;
	free(s->error);
	for (i = 0; i < s->n_tasks; i++)
		hx_task_run_release(&s->tasks[i]);
	free(s->tasks);
	for (i = 0; i < s->n_attempts; i++)
		fa_attempt_release(&s->attempts[i]);
	free(s->attempts);
	for (i = 0; i < s->n_checks; i++)
		hx_check_result_release(&s->checks[i]);
	free(s->checks);
	for (i = 0; i < s->n_msgs; i++)
		hx_client_msg_release(&s->msgs[i]);
	free(s->msgs);
	for (i = 0; i < s->n_protocol_errors; i++)
		free(s->protocol_errors[i]);
	free(s->protocol_errors);
	cJSON_Delete(s->hello);
	free(s->client_stderr);
	for (i = 0; i < s->n_restarts; i++)
		hx_restart_release(&s->restarts[i]);
	free(s->restarts);
	cJSON_Delete(s->store);
	for (i = 0; i < s->n_canary_hits; i++) {
		free(s->canary_hits[i].where);
		free(s->canary_hits[i].task);
	}
	free(s->canary_hits);
	memset(s, 0, sizeof(*s));
}

void hx_client_msg_release(struct hx_client_msg *m)
{
	if (m == NULL)
		return;
	free(m->type);
	free(m->task);
	cJSON_Delete(m->json);
	memset(m, 0, sizeof(*m));
}

void hx_run_result_release(struct hx_run_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n_scenarios; i++)
		hx_scenario_result_release(&r->scenarios[i]);
	free(r->scenarios);
	r->scenarios = NULL;
	r->n_scenarios = 0;
}
