/* waiting.c -- the progress line of a scenario that runs long. */
#include "waiting.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "provider.h"

/* The last attempt of @task the scenario has seen, or NULL. */
static const struct fa_attempt *last_attempt(const struct hx__scenario *s, const char *task)
{
	for (size_t k = s->n_seen; k-- > 0;)
		if (s->seen[k].task != NULL && strcmp(s->seen[k].task, task) == 0)
			return &s->seen[k];
	return NULL;
}

/* "t1 (Retry-After 120 s, task timeout 45 s, running 30 s)", appended to
 * *@line. */
static void describe(const struct hx__scenario *s, size_t i, int64_t now, char **line)
{
	const struct hx_task_run *tr = &s->out->tasks[i];
	const char *id = s->sc->harness.tasks[i].id;
	const struct fa_attempt *a = last_attempt(s, id);
	char *next, what[160];
	size_t w = 0;

	what[0] = '\0';
	if (a == NULL)
		w += (size_t)snprintf(what + w, sizeof(what) - w, "no attempt yet, ");
	else if (a->retry_after != NULL && a->pause_until_us > now)
		w += (size_t)snprintf(
		        what + w, sizeof(what) - w, "Retry-After %.60s%s, %.0f s left, ",
		        a->retry_after,
		        strspn(a->retry_after, "0123456789") == strlen(a->retry_after) ? " s" : "",
		        (double)(a->pause_until_us - now) / 1e6);
	else if (a->status != 0)
		w += (size_t)snprintf(what + w, sizeof(what) - w, "last answer %d, ", a->status);
	if (tr->timeout_s > 0 && w < sizeof(what))
		w += (size_t)snprintf(what + w, sizeof(what) - w, "task timeout %d s, ",
		                      tr->timeout_s);
	if (w < sizeof(what))
		snprintf(what + w, sizeof(what) - w, "running %.0f s",
		         (double)(now - tr->t_sent_us) / 1e6);
	next = fa_xasprintf("%s%s%s (%s)", *line, (*line)[0] ? ", " : "", id, what);
	free(*line);
	*line = next;
}

int64_t hx_waiting_every_us(void)
{
	const char *env = getenv("FAKEAPI_PROGRESS_S");
	char *end;
	double v;

	if (env == NULL || *env == '\0')
		return HX_WAITING_EVERY_US;
	v = strtod(env, &end);
	return *end == '\0' && v >= 0.1 && v <= 3600 ? (int64_t)(v * 1e6) : HX_WAITING_EVERY_US;
}

void hx__scenario_report_waiting(struct hx__scenario *s)
{
	int64_t real = fa_clock_real_mono_us(), now; /* the interval is real time */
	char *line, *said;

	if (s->opts->waiting == NULL)
		return;
	if (s->waiting_said_us == 0)
		s->waiting_said_us = real; /* the scenario's start */
	if (real - s->waiting_said_us < s->opts->waiting_every_us)
		return;
	s->waiting_said_us = real;
	now = fa_provider_now_us(s->prov);
	line = fa_xstrdup("");
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++)
		if (s->phase[i] == HX_TASK_RUNNING)
			describe(s, i, now, &line);
	if (line[0] != '\0') {
		said = fa_xasprintf("waiting for %s", line);
		s->opts->waiting(s->opts->waiting_ctx, s->sc, said);
		free(said);
	}
	free(line);
}
