/* scenario_run.c -- one scenario's run: its provider, the client's tasks, the events, the journal,
 * the checks. */
#include "scenario_run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "alloc.h"
#include "canary.h"
#include "check.h"
#include "client_env.h"
#include "client_log.h"
#include "clock.h"
#include "event.h"
#include "exec.h"
#include "follow.h"
#include "journal.h"
#include "provider.h"
#include "restart.h"
#include "scenario_state.h"
#include "server.h"
#include "settle.h"
#include "stdio_client.h"
#include "store.h"
#include "timescale.h"
#include "waiting.h"
#include "write.h"

/* Room added to a task's max_wait_s for its own timeout, s. */
#define WAIT_SLACK_S 15

/* A scenario's timeout when it gives none, s. */
#define SCENARIO_TIMEOUT_S 60

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void hx__scenario_sleep_ms(int ms)
{
	const struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Per-task client timeout: its own, else its wait budget plus slack, else
 * the scenario's, s. */
static int task_timeout_s(const struct fa_scenario *sc, const struct fa_task_spec *t)
{
	if (t->timeout_s > 0)
		return t->timeout_s;
	if (t->budget.max_wait_s >= 0)
		return t->budget.max_wait_s + WAIT_SLACK_S;
	return sc->harness.timeout_s > 0 ? sc->harness.timeout_s : SCENARIO_TIMEOUT_S;
}

static char *task_file(const struct hx__scenario *s, const char *task, const char *ext)
{
	return fa_xasprintf("%s/%s.%s", s->dir, task, ext);
}

/* The body task @i is sent with (prepare_bodies), or NULL for none. */
static const cJSON *body_of(const struct hx__scenario *s, size_t i)
{
	return s->ts[i].body;
}

/* Put a unique client reference into the body of every write task (one
 * whose route has an effect), at the route's client_reference_field, so
 * the checks attribute a write's attempts without trusting the client. A
 * body that is not a JSON object cannot carry one: the task's id alone
 * attributes it then. Every body is copied, and the body canary planted
 * where it says {body_canary} (canary.h): the copy is what is sent. */
static void prepare_bodies(struct hx__scenario *s)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		const struct fa_task_spec *t = &s->sc->harness.tasks[i];
		const struct fa_route_spec *r = hx_write_route(s->sc, t);
		struct hx__task_state *ts = &s->ts[i];
		char *ref;

		if (r != NULL) {
			ref = hx_write_reference_new(s->sc->id, t->id);
			ts->body =
			        hx_write_body(t->body,
			                      r->client_reference_field ? r->client_reference_field
			                                                : "client_reference",
			                      ref);
			if (ts->body != NULL)
				s->out->tasks[i].client_reference = ref;
			else
				free(ref);
		}
		if (ts->body == NULL && t->body != NULL)
			ts->body = fa_xcheck(cJSON_Duplicate(t->body, 1), "task body");
		hx_canary_plant_body(ts->body, s->out->body_canary);
	}
}

/* The environment of docs/client-protocol.md for @s's client whose
 * FAKEAPI_KEY is key @key_id's, then @extra (taken); free with
 * hx_client_env_free(). */
static char **client_env(const struct hx__scenario *s, const char *key_id, char **extra)
{
	return hx_client_env_new(s->sc, s->base_url, s->state_dir, s->out->key_canary, key_id,
	                         extra);
}

/* Exec mode: start task @i's client. A client that cannot start is
 * recorded in the task and in the scenario's error, never fatal to the
 * loop. */
void hx__scenario_start_exec_task(struct hx__scenario *s, size_t i)
{
	const struct fa_task_spec *t = &s->sc->harness.tasks[i];
	struct hx__task_state *ts = &s->ts[i];
	struct hx_task_run *tr = &s->out->tasks[i];
	struct hx_client_task ct;
	struct hx_exec_spec spec;
	struct fa_err err = { { 0 } };
	char *url = hx_exec_task_url(s->base_url, t->path, t->id);
	char *out_path = task_file(s, t->id, "stdout");
	char *err_path = task_file(s, t->id, "stderr");
	char **extra, **env;
	char *cmd;

	/* everything the task says, in the environment and the placeholders */
	hx_client_task_init(&ct, s->sc, t, url, ts->body_file, ts->headers_file,
	                    task_timeout_s(s->sc, t));
	extra = hx_exec_vars_env(&ct.vars);
	env = client_env(s, t->key, extra);
	free(extra); /* its strings are env's now */
	cmd = hx_exec_expand(s->opts->exec_template, &ct.vars);
	hx_client_task_release(&ct);
	spec.cmd = cmd;
	spec.env = (const char *const *)env;
	spec.stdout_path = out_path;
	spec.stderr_path = err_path;
	spec.append = true; /* a restarted task's output follows its first run's */
	spec.timeout_us = (int64_t)task_timeout_s(s->sc, t) * 1000000 +
	                  hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_EXIT_US);

	s->phase[i] = HX_TASK_RUNNING;
	tr->sent = true;
	tr->t_sent_us = fa_provider_now_us(s->prov);
	tr->timeout_s = task_timeout_s(s->sc, t);
	if (hx_exec_start(&ts->proc, &spec, &err) != FA_OK) {
		s->phase[i] = HX_TASK_DONE;
		tr->t_exit_us = tr->t_sent_us;
		tr->error = fa_xstrdup(err.msg);
		if (s->out->error == NULL)
			s->out->error =
			        fa_xasprintf("%s: task %s: %s", s->sc->file, t->id, err.msg);
	}
	hx_client_env_free(env);
	free(cmd);
	free(url);
	free(out_path);
	free(err_path);
}

/* Stdio mode: the task line of task @i, due within @deadline_ms, with
 * the body it is sent with, to the client. */
void hx__scenario_send_task_line(struct hx__scenario *s, size_t i, int64_t deadline_ms)
{
	const struct fa_task_spec *t = &s->sc->harness.tasks[i];
	char *url = hx_exec_task_url(s->base_url, t->path, t->id);
	cJSON *msg = hx_stdio_task_json(s->sc, t, url, deadline_ms);

	/* its stream and tokens are the sent body's (a canary may be in it) */
	if (s->ts[i].body != NULL)
		hx_stdio_task_body(msg, s->ts[i].body, hx_stdio_task_kind(s->sc, t));
	hx_stdio_send_task(s->client, msg);
	cJSON_Delete(msg);
	free(url);
}

/* Stdio mode: send task @i to the scenario's client, due within its
 * per-task timeout (the same as exec mode's). */
static void send_stdio_task(struct hx__scenario *s, size_t i)
{
	const struct fa_task_spec *t = &s->sc->harness.tasks[i];
	struct hx__task_state *ts = &s->ts[i];
	struct hx_task_run *tr = &s->out->tasks[i];
	int64_t deadline_ms = (int64_t)task_timeout_s(s->sc, t) * 1000;

	s->phase[i] = HX_TASK_RUNNING;
	tr->sent = true;
	tr->t_sent_us = fa_provider_now_us(s->prov);
	tr->timeout_s = task_timeout_s(s->sc, t);
	/* the client is told its timeout; the harness waits what a scale adds */
	ts->deadline_us = tr->t_sent_us + deadline_ms * 1000 +
	                  hx_timescale_margin_us(fa_clock_scale(), HX_TIMESCALE_EXIT_US);
	hx__scenario_send_task_line(s, i, deadline_ms);
}

static void start_task(struct hx__scenario *s, size_t i)
{
	if (s->stdio)
		send_stdio_task(s, i);
	else
		hx__scenario_start_exec_task(s, i);
}

/* Act on every event due at @now: first its kill (and restart), then its
 * cancels, then its tasks; each task is sent once, whichever event names
 * it first. */
static void fire_due(struct hx__scenario *s, int64_t now)
{
	size_t e;

	while ((e = hx_event_next_due(&s->ev, now)) < s->sc->harness.n_events) {
		const struct fa_event_spec *ev = &s->sc->harness.events[e];

		if (ev->kill)
			hx_restart_fire(s, e);
		hx_restart_cancel(s, e);
		for (size_t k = 0; k < ev->n_send; k++) {
			size_t i = hx_event_task_index(s->sc, ev->send[k]);

			if (i < s->sc->harness.n_tasks && s->phase[i] == HX_TASK_UNSENT)
				start_task(s, i);
		}
	}
}

/* A --journal-dir file that could not be written: the provider refused
 * the attempts after the failure (503 journal_unavailable), so the client
 * met no scenario; the run is an error, not a grade. */
static void journal_file_failed(struct hx__scenario *s)
{
	uint64_t missing = 0, in_file = 0;
	int e = 0;

	if (!fa_journal_file_failed(s->journal, &missing, &in_file, &e) || s->out->error != NULL)
		return;
	s->out->error = fa_xasprintf("%s: the journal file in --journal-dir could not be written "
	                             "(%s): %llu attempt%s missing from it (it ends at seq "
	                             "%llu), and the provider refused them; not graded",
	                             s->sc->file, strerror(e), (unsigned long long)missing,
	                             missing == 1 ? " is" : "s are", (unsigned long long)in_file);
}

/* Read the journal's new entries for the "after" triggers they pull;
 * keep them for the cancelled tasks' quiet windows. */
static void scan_journal(struct hx__scenario *s)
{
	struct fa_attempt *a = NULL;
	size_t n = 0;

	fa_journal_snapshot(s->journal, s->since, &a, &n);
	if (n > 0)
		s->seen = fa_xrealloc(s->seen, (s->n_seen + n) * sizeof(*s->seen));
	for (size_t k = 0; k < n; k++) {
		if (a[k].seq > s->since)
			s->since = a[k].seq;
		hx_event_on_attempt(&s->ev, &a[k]);
		s->seen[s->n_seen++] = a[k]; /* moved: s->seen owns it now */
	}
	free(a);
	hx_restart_quiet(s);
}

/* Trigger the "held" events whose task the provider now holds an answer
 * for (polled, like the journal). */
static void scan_held(struct hx__scenario *s)
{
	for (size_t e = 0; e < s->sc->harness.n_events; e++) {
		const char *task = hx_event_held_task(&s->ev, e);

		if (task != NULL && fa_server_held(s->srv, task) > 0)
			hx_event_on_held(&s->ev, task, fa_provider_now_us(s->prov));
	}
}

/* Whether the run was interrupted; the first time, the scenario's error. */
static bool interrupted(struct hx__scenario *s)
{
	if (!s->interrupted && hx_run_interrupted()) {
		s->interrupted = true;
		if (s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: interrupted", s->sc->file);
	}
	return s->interrupted;
}

/* Whether the provider of @s has settled for @st (settle.h), looked at
 * now; once it has, the journal is read to its end. */
static bool settled(struct hx__scenario *s, struct hx_settle *st)
{
	struct fa_server_load l;

	fa_server_load(s->srv, &l);
	if (!hx_settle_step(st, &l, fa_clock_real_mono_us()))
		return false;
	scan_journal(s); /* what the last look counted as done */
	return true;
}

/* How long the loop may sleep at @now (provider µs), real ms: one tick,
 * or less when an event or the end of a quiet window falls due sooner;
 * a whole tick once the run stops (@stop), as nothing fires then. */
static int tick_ms(const struct hx__scenario *s, int64_t now, bool stop)
{
	const int tick = HX_SCENARIO_TICK_NS / 1000000;
	int64_t next = hx_event_next_at(&s->ev, s->out->tasks, s->out->n_tasks, now);
	int64_t real_us;

	if (stop || next == INT64_MAX)
		return tick;
	if (next <= now)
		return 0;
	/* due instants are virtual: a scaled clock gets there 1/S as fast */
	real_us = (int64_t)((double)(next - now) / fa_clock_scale());
	return real_us < (int64_t)tick * 1000 ? (int)((real_us + 999) / 1000) : tick;
}

/* Exec mode: wait @ms, or less when a client ends sooner. */
static void wait_exec(struct hx__scenario *s, int ms)
{
	size_t n = s->sc->harness.n_tasks;
	struct hx_exec_proc **procs = fa_xcalloc(n + 1, sizeof(*procs));

	for (size_t i = 0; i < n; i++)
		procs[i] = &s->ts[i].proc;
	hx_exec_wait_any(procs, n, ms);
	free(procs);
}

/*
 * Exec mode: drive the events and the clients until the scenario is
 * over: every started client has exited, no event can fire, no quiet
 * window is open, and the provider has nothing left (settle.h) -- an
 * attempt that lands meanwhile may still trigger an event.
 */
static void drive_exec(struct hx__scenario *s, int64_t deadline)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	struct hx_settle st;
	bool settling = false;

	for (;;) {
		int64_t now = fa_provider_now_us(s->prov);
		bool running = false, stop;

		scan_journal(s);
		scan_held(s);
		if (!interrupted(s) && now >= deadline)
			s->timed_out = true;
		stop = s->timed_out || s->interrupted;
		if (!stop)
			fire_due(s, now);
		for (size_t i = 0; i < h->n_tasks; i++) {
			struct hx__task_state *ts = &s->ts[i];

			if (s->phase[i] != HX_TASK_RUNNING)
				continue;
			if (stop && ts->proc.running && ts->proc.t_term_us == 0) {
				/* a timeout blames the client; an interruption does not */
				ts->stopped = !s->timed_out;
				hx_exec_stop(&ts->proc, fa_clock_mono_us());
			}
			if (hx_exec_poll(&ts->proc, fa_clock_mono_us()))
				s->phase[i] = HX_TASK_DONE;
			else
				running = true;
		}
		if (!running && (stop || (!hx_event_live(&s->ev, s->phase) &&
		                          !hx_event_quiet_open(s->out->tasks, h->n_tasks, now)))) {
			if (!settling)
				hx_settle_init(&st, HX_SETTLE_CONNECTIONS, HX_RUN_SETTLE_US,
				               HX_RUN_DRAIN_US);
			settling = true;
			/* what the journal brought last may have woken an event */
			if (settled(s, &st) && (stop || !hx_event_live(&s->ev, s->phase)))
				break;
		} else {
			settling = false;
		}
		hx__scenario_report_waiting(s);
		if (settling)
			hx__scenario_sleep_ms(HX_SETTLE_LOOK_MS);
		else
			wait_exec(s, tick_ms(s, now, stop));
	}
}

/* Stdio mode: act on the client's new messages. An action_result pulls
 * the client_saw triggers it names; a result finishes its task. */
void hx__scenario_read_msgs(struct hx__scenario *s)
{
	const struct hx_client_log *log = hx_stdio_log(s->client);

	for (; s->msgs_seen < log->n_msgs; s->msgs_seen++) {
		const struct hx_client_msg *m = &log->msgs[s->msgs_seen];
		size_t i = hx_event_task_index(s->sc, m->task);
		const cJSON *v;

		if (i >= s->sc->harness.n_tasks)
			continue;
		if (strcmp(m->type, "action_result") == 0) {
			/* the log let it through only with an integer status */
			v = cJSON_GetObjectItemCaseSensitive(m->json, "status");
			hx_event_on_client_saw(&s->ev, m->task, (int)v->valuedouble, m->t_us);
		} else if (strcmp(m->type, "result") == 0) {
			struct hx_task_run *tr = &s->out->tasks[i];
			const char *outcome =
			        cJSON_GetObjectItemCaseSensitive(m->json, "outcome")->valuestring;

			/* a late result is kept, but the task stays timed out */
			s->ts[i].has_result = true;
			s->phase[i] = HX_TASK_DONE;
			free(tr->outcome);
			tr->outcome = fa_xstrdup(outcome);
			tr->exit_code = strcmp(outcome, "succeeded") == 0 ? 0 : 1;
			tr->t_exit_us = m->t_us;
		}
	}
}

/* Stdio mode: every sent task without a result now counts as timed out
 * (its deadline passed, or, @all, the scenario's timeout struck). */
static void time_out_tasks(struct hx__scenario *s, int64_t now, bool all)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		if (s->phase[i] != HX_TASK_RUNNING || (!all && now < s->ts[i].deadline_us))
			continue;
		s->phase[i] = HX_TASK_DONE;
		s->out->tasks[i].timed_out = true;
	}
}

static bool all_sent_done(const struct hx__scenario *s)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++)
		if (s->phase[i] == HX_TASK_RUNNING)
			return false;
	return true;
}

/*
 * Stdio mode: drive the events and the client's session. The run phase
 * ends when every sent task has its result (or is past its deadline), no
 * event can fire, no quiet window is open and the provider has no request
 * left in flight (settle.h: what lands meanwhile may still trigger an
 * event); at once on the scenario's timeout, an interruption or the
 * client's end. Then shutdown, the client's grace, and, once it is gone,
 * the provider's connections closed.
 */
static void drive_stdio(struct hx__scenario *s, int64_t deadline)
{
	struct hx_settle st;
	bool shutting_down = false, settling = false;

	for (;;) {
		int64_t now = fa_provider_now_us(s->prov);
		bool stop, done;

		if (s->client == NULL)
			break; /* a restart could not even start it */
		scan_journal(s);
		scan_held(s);
		hx__scenario_read_msgs(s);
		if (!interrupted(s) && now >= deadline && !shutting_down)
			s->timed_out = true;
		stop = s->timed_out || s->interrupted || !hx_stdio_running(s->client);
		if (!shutting_down) {
			if (!stop)
				fire_due(s, now);
			time_out_tasks(s, now, s->timed_out);
			done = !stop && all_sent_done(s) && !hx_event_live(&s->ev, s->phase) &&
			       !hx_event_quiet_open(s->out->tasks, s->out->n_tasks, now);
			if (done && !settling)
				hx_settle_init(&st, HX_SETTLE_REQUESTS, HX_RUN_SETTLE_US,
				               HX_RUN_SETTLE_US);
			settling = done;
			/* what the journal brought last may have woken an event */
			if (stop || (done && settled(s, &st) && !hx_event_live(&s->ev, s->phase))) {
				hx_stdio_shutdown(s->client);
				shutting_down = true;
				settling = false;
			}
		} else if (hx_stdio_finished(s->client)) {
			/* attempts cut off by the client's end land */
			if (!settling)
				hx_settle_init(&st, HX_SETTLE_CONNECTIONS, HX_RUN_SETTLE_US,
				               HX_RUN_DRAIN_US);
			settling = true;
			if (settled(s, &st))
				break;
		}
		hx__scenario_report_waiting(s);
		hx_stdio_pump(s->client, settling ? HX_SETTLE_LOOK_MS
		                                  : tick_ms(s, now, stop || shutting_down));
	}
	if (s->client != NULL)
		hx__scenario_read_msgs(s);
}

/* Stdio mode: what the client said goes into the result, marked with
 * its process's session. */
void hx__scenario_take_session(struct hx__scenario *s)
{
	size_t from = s->out->n_msgs;

	hx_stdio_take(s->client, s->out);
	for (size_t k = from; k < s->out->n_msgs; k++)
		s->out->msgs[k].session = s->session;
}

/* Stdio mode: start the scenario's client (again, after a kill, when
 * @restart) and wait for its hello. On failure the reason is the
 * scenario's error, and the client is killed; at the first start what it
 * said is kept for the report at once, after a restart the end of the
 * scenario keeps it. */
enum fa_rc hx__scenario_start_client(struct hx__scenario *s, bool restart)
{
	/* FAKEAPI_KEY: the first task's key */
	char **env = client_env(s, s->sc->harness.tasks[0].key, NULL);
	struct hx_stdio_spec spec = {
		.cmd = s->opts->client_cmd,
		.env = (const char *const *)env,
		.t0_us = s->t0_us,
		.capture = &s->capture,
		.key_canary = s->out->key_canary,
		.body_canary = s->out->body_canary,
	};
	struct fa_err err = { { 0 } };
	enum fa_rc rc;

	rc = hx_stdio_start(&spec, &s->client, &err);
	if (rc == FA_OK)
		rc = hx_stdio_hello(s->client, 0, &err);
	if (rc != FA_OK) {
		if (s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: %s%s", s->sc->file,
			                             restart ? "restart: " : "", err.msg);
		if (s->client != NULL) {
			hx_stdio_kill(s->client);
			while (!hx_stdio_finished(s->client))
				hx_stdio_pump(s->client, HX_SCENARIO_TICK_NS / 1000000);
			if (!restart)
				hx__scenario_take_session(s);
		}
	}
	hx_client_env_free(env);
	return rc;
}

/* Stdio mode: what the client said goes into the result; a task it never
 * reported on, when it ended on its own, failed with the reason. */
static void collect_stdio(struct hx__scenario *s)
{
	struct hx_stdio_end e = { 0 };
	char *how = NULL;

	if (s->client != NULL) {
		hx_stdio_end(s->client, &e);
		how = hx_stdio_end_str(&e);
	}
	for (size_t i = 0; i < s->out->n_tasks; i++) {
		struct hx_task_run *tr = &s->out->tasks[i];

		if (!tr->sent || s->ts[i].has_result || tr->timed_out)
			continue;
		if (s->client == NULL || s->restart_failed)
			tr->error =
			        fa_xstrdup("client could not be started again before reporting");
		else if (e.early)
			tr->error = fa_xasprintf("client %s before reporting", how);
		else if (s->killed)
			tr->term_signal = SIGKILL; /* the scenario's kill, not a hang */
		else if (!s->interrupted)
			tr->timed_out = true; /* stopped with the scenario */
	}
	free(how);
	if (s->client != NULL)
		hx__scenario_take_session(s);
}

/* Exec mode: fill the task results from the processes, and blame a
 * client that could not even start. */
static void collect_exec(struct hx__scenario *s)
{
	for (size_t i = 0; i < s->out->n_tasks; i++) {
		const struct fa_task_spec *t = &s->sc->harness.tasks[i];
		struct hx__task_state *ts = &s->ts[i];
		struct hx_task_run *tr = &s->out->tasks[i];
		bool seen = false;
		char *path, *line;

		if (!tr->sent || ts->proc.pid == 0)
			continue;
		tr->t_exit_us = ts->proc.t_exit_us - s->t0_us;
		tr->exit_code = ts->proc.exit_code;
		tr->term_signal = ts->proc.term_signal;
		tr->timed_out = ts->proc.timed_out && !ts->stopped;
		path = task_file(s, t->id, "stderr");
		tr->stderr_tail = hx_exec_tail(path);
		free(path);
		/* sh says 127 (not found) or 126 (not executable) */
		if (tr->exit_code != 126 && tr->exit_code != 127)
			continue;
		for (size_t k = 0; k < s->out->n_attempts && !seen; k++)
			seen = s->out->attempts[k].task != NULL &&
			       strcmp(s->out->attempts[k].task, t->id) == 0;
		if (seen)
			continue;
		path = task_file(s, t->id, "stderr");
		line = hx_exec_last_line(path);
		tr->error = fa_xasprintf("client could not start: exit %d, no "
		                         "attempt made%s%s",
		                         tr->exit_code, line[0] ? ": " : "", line);
		if (s->out->error == NULL)
			s->out->error =
			        fa_xasprintf("%s: task %s: %s", s->sc->file, t->id, tr->error);
		free(line);
		free(path);
	}
}

/* A journal sink for `run --journal -` and `--follow` (run.h): each
 * attempt of @ctx's scenario on opts->live as it completes, marked with
 * the scenario's id. */
static void live_line(void *ctx, const struct fa_attempt *a, const char *line, size_t len)
{
	const struct hx__scenario *s = ctx;
	struct fa_follow f = { .feed = s->opts->live,
		               .text = s->opts->live_text,
		               .scenario = s->sc->id };

	fa_follow_sink(&f, a, line, len);
}

/* Folders, body files and the provider for @s. */
static enum fa_rc set_up(struct hx__scenario *s, struct fa_err *err)
{
	struct fa_server_opts so = { .bind = "127.0.0.1", .port = 0 };
	char *jpath = NULL;
	enum fa_rc rc = FA_EIO;

	s->state_dir = fa_xasprintf("%s/state", s->dir);
	if (mkdir(s->dir, 0700) != 0 || mkdir(s->state_dir, 0700) != 0) {
		fa_err_set(err, "%s: cannot create: %s", s->state_dir, strerror(errno));
		goto out;
	}
	hx_canary_make(s->opts->seed, s->sc->id, s->out->key_canary, s->out->body_canary);
	prepare_bodies(s);
	for (size_t i = 0; !s->stdio && i < s->sc->harness.n_tasks; i++) {
		const struct fa_task_spec *t = &s->sc->harness.tasks[i];

		s->ts[i].body_file = task_file(s, t->id, "body");
		if (hx_exec_write_body(s->ts[i].body_file, body_of(s, i), err) != FA_OK)
			goto out;
		s->ts[i].headers_file = task_file(s, t->id, "headers");
		if (hx_exec_write_headers(s->ts[i].headers_file, t->headers, t->n_headers, err) !=
		    FA_OK)
			goto out;
	}
	if (s->opts->journal_dir != NULL)
		jpath = fa_xasprintf("%s/%s.jsonl", s->opts->journal_dir, s->sc->id);
	rc = fa_journal_new(jpath, &s->journal, err);
	if (rc != FA_OK)
		goto out;
	if (s->opts->live != NULL)
		fa_journal_set_sink(s->journal, live_line, s);
	s->t0_us = fa_clock_mono_us();
	s->prov = fa_provider_new(s->sc, s->journal, s->opts->seed, s->t0_us);
	/* the client must not reach the journal it is graded on */
	fa_provider_set_admin(s->prov, false);
	/* the client gets "<secret>.<key canary>", and only that opens */
	fa_provider_set_key_suffix(s->prov, s->out->key_canary);
	rc = fa_server_start(s->prov, &so, &s->srv, err);
	if (rc != FA_OK)
		goto out;
	s->base_url = fa_xasprintf("http://127.0.0.1:%u", fa_server_port(s->srv));
	rc = FA_OK;
out:
	free(jpath);
	return rc;
}

/* Search for the canaries (canary.h) before the folder goes: what the
 * client printed (stdio mode: the sessions' capture, whose lines were
 * searched as they were parsed too; exec mode: each task's stdout and
 * stderr files), its escalation records, and its state folder for the
 * key canary; and say when any of it could not be searched whole. */
static void search_canaries(struct hx__scenario *s)
{
	size_t n = s->stdio ? 2 : 2 * s->sc->harness.n_tasks;
	struct hx_client_text *texts = fa_xcalloc(n + 1, sizeof(*texts));

	if (s->stdio) {
		texts[0] = (struct hx_client_text){ .buf = s->capture.out,
			                            .len = s->capture.out_len,
			                            .where = "stdout" };
		texts[1] = (struct hx_client_text){ .buf = s->capture.err,
			                            .len = s->capture.err_len,
			                            .where = "stderr" };
	}
	/* what the capture's bound left out was never searched; but the
	 * stderr tail was kept, and a leak at the very end is not lost */
	if (s->stdio && s->capture.dropped > 0) {
		s->out->canary_search_incomplete = true;
		if (s->out->client_stderr != NULL)
			texts[n++] = (struct hx_client_text){ .buf = s->out->client_stderr,
				                              .len = strlen(s->out->client_stderr),
				                              .where = "stderr" };
	}
	for (size_t k = 0; !s->stdio && k < n; k++) {
		const char *id = s->sc->harness.tasks[k / 2].id,
		           *stream = k % 2 ? "stderr" : "stdout";

		texts[k].path = task_file(s, id, stream);
		texts[k].where = fa_xasprintf("%s of task %s", stream, id);
		texts[k].task = id;
	}
	hx_client_log_search(s->out, texts, n, HX_STDIO_CAPTURE_MAX);
	s->out->canary_bytes_searched +=
	        hx_canary_scan_dir(s->state_dir, s->out->key_canary, &s->out->canary_hits,
	                           &s->out->n_canary_hits, &s->out->canary_search_incomplete);
	for (size_t k = 0; !s->stdio && k < n; k++) {
		free((char *)texts[k].path);
		free((char *)texts[k].where);
	}
	free(texts);
}

/* The checks on the journal copy; an interrupted scenario is not graded:
 * what an unfinished run shows (a client stopped mid-wait looks hung)
 * says nothing of the client. */
static void grade(struct hx__scenario *s)
{
	struct hx_scenario_result *out = s->out;
	struct hx_check_input in = {
		.sc = s->sc,
		.attempts = out->attempts,
		.n_attempts = out->n_attempts,
		.tasks = out->tasks,
		.n_tasks = out->n_tasks,
		.mode = s->stdio ? HX_MODE_STDIO : HX_MODE_EXEC,
		.msgs = out->msgs,
		.n_msgs = out->n_msgs,
		.store = out->store,
		.strict = s->opts->strict,
		.canary_hits = out->canary_hits,
		.n_canary_hits = out->n_canary_hits,
		.canary_bytes_searched = out->canary_bytes_searched,
		.canary_search_incomplete = out->canary_search_incomplete,
		.restarts = out->restarts,
		.n_restarts = out->n_restarts,
		.hello = out->hello,
	};

	/* a scenario that could not run (a client that does not start, a
	 * scenario its provider refused) shows nothing of the client: no
	 * check, as in stdio mode and as docs/report.md says */
	if (out->error != NULL && !s->interrupted)
		return;
	hx_check_run_all(&in, &out->checks, &out->n_checks);
	if (!s->interrupted)
		return;
	/* the same checks (ids, levels, required), none judged */
	for (size_t i = 0; i < out->n_checks; i++) {
		struct hx_check_result *c = &out->checks[i];

		c->verdict = HX_NA;
		free(c->detail);
		c->detail = fa_xstrdup(HX_SCENARIO_INTERRUPTED);
		free(c->evidence);
		c->evidence = NULL;
		c->n_evidence = 0;
	}
}

/* Stop and reap every client still running, remove the folder. */
static void tear_down(struct hx__scenario *s, size_t n_tasks)
{
	hx_stdio_free(s->client);
	fa_server_stop(s->srv);
	fa_provider_free(s->prov);
	fa_journal_free(s->journal);
	for (size_t i = 0; s->ts != NULL && i < n_tasks; i++) {
		if (s->ts[i].proc.running) {
			hx_exec_stop(&s->ts[i].proc, fa_clock_mono_us());
			hx_exec_wait(&s->ts[i].proc);
		}
		free(s->ts[i].body_file);
		free(s->ts[i].headers_file);
		cJSON_Delete(s->ts[i].body);
	}
	for (size_t k = 0; k < s->n_seen; k++)
		fa_attempt_release(&s->seen[k]);
	free(s->seen);
	hx_stdio_capture_release(&s->capture);
	nftw(s->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(s->state_dir);
	free(s->base_url);
	free(s->ts);
	free(s->phase);
	hx_event_release(&s->ev);
}

enum fa_rc hx_scenario_run(const struct fa_scenario *sc, const struct hx_run_opts *opts,
                           const char *dir, struct hx_scenario_result *out, bool *cut)
{
	const size_t n_tasks = sc->has_harness ? sc->harness.n_tasks : 0;
	struct hx__scenario s = {
		.sc = sc, .opts = opts, .out = out, .dir = dir, .stdio = opts->client_cmd != NULL
	};
	struct fa_err err = { { 0 } };
	int64_t begin = fa_clock_mono_us(), deadline;
	int timeout_s = sc->harness.timeout_s > 0 ? sc->harness.timeout_s : SCENARIO_TIMEOUT_S;
	enum fa_rc rc = FA_OK;

	out->tasks = fa_xcalloc(n_tasks ? n_tasks : 1, sizeof(*out->tasks));
	out->n_tasks = n_tasks;
	for (size_t i = 0; i < n_tasks; i++) {
		out->tasks[i].spec = &sc->harness.tasks[i];
		out->tasks[i].t_sent_us = -1;
		out->tasks[i].t_exit_us = -1;
		out->tasks[i].exit_code = -1;
		out->tasks[i].t_cancel_us = -1;
		out->tasks[i].t_quiet_until_us = -1;
	}
	if (n_tasks == 0) {
		out->error = fa_xasprintf("%s: $.harness: expected tasks for the "
		                          "client to run, got none",
		                          sc->file);
		goto out;
	}
	s.ts = fa_xcalloc(n_tasks, sizeof(*s.ts));
	s.phase = fa_xcalloc(n_tasks, sizeof(*s.phase));
	if (set_up(&s, &err) != FA_OK) {
		out->error = fa_xstrdup(err.msg);
		goto out;
	}
	/* the client is up before the first event counts its time */
	if (s.stdio && hx__scenario_start_client(&s, false) != FA_OK) {
		rc = FA_EIO;
		goto out;
	}
	hx_event_init(&s.ev, sc, s.stdio, fa_provider_now_us(s.prov));
	deadline = s.ev.start_us + (int64_t)timeout_s * 1000000;
	if (sc->harness.n_events == 0)
		for (size_t i = 0; i < n_tasks; i++)
			start_task(&s, i); /* no events: every task at the start */
	if (s.stdio)
		drive_stdio(&s, deadline);
	else
		drive_exec(&s, deadline);
	fa_server_stop(s.srv);
	s.srv = NULL;
	out->store = fa_store_json(fa_provider_store(s.prov), fa_provider_now_us(s.prov));
	fa_journal_snapshot(s.journal, 0, &out->attempts, &out->n_attempts);
	fa_journal_head(s.journal, out->journal_head);
	journal_file_failed(&s);
	if (s.stdio)
		collect_stdio(&s);
	else
		collect_exec(&s);
	search_canaries(&s);
	grade(&s);
	if (s.restart_failed)
		rc = FA_EIO; /* a client that cannot start: no further scenario */
out:
	/* a loop cut short must not leave a client behind */
	tear_down(&s, n_tasks);
	/* after the checks, which read the client's words as printed */
	hx_client_log_scrub(out, sc);
	out->duration_us = fa_clock_mono_us() - begin;
	if (cut != NULL)
		*cut = s.interrupted;
	return rc;
}
