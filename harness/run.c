/* run.c -- run a suite: a provider per scenario, events, client tasks, checks. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "alloc.h"
#include "check.h"
#include "clock.h"
#include "exec.h"
#include "journal.h"
#include "provider.h"
#include "server.h"
#include "stdio_client.h"

/* How often the scenario loop looks at the journal and the clients, ns. */
#define TICK_NS (10 * 1000 * 1000)

/* Room added to a task's max_wait_s for its own timeout, s. */
#define WAIT_SLACK_S 15

/* Bytes of a client's stderr read to explain why it could not start. */
#define STDERR_TAIL 2048

static atomic_int interrupted;

void hx_run_interrupt(void)
{
	atomic_store(&interrupted, 1);
}

/* Shared by the worker threads of one run. */
struct runner {
	const struct fa_suite *suite;
	const struct hx_run_opts *opts;
	struct hx_run_result *res;
	char *tmp_root;           /* owned: the run's temporary folder */
	bool *ran;                /* owned: scenario i was started */
	atomic_int client_broken; /* stdio mode: a client failed to start; run no more */
	pthread_mutex_t lock;     /* guards next and the progress stream */
	size_t next;              /* next scenario to start */
};

/* One task during a scenario. */
struct task_state {
	struct hx_exec_proc proc;
	bool sent;    /* its client was started (or failed to start) */
	bool done;    /* its client was reaped, or never started */
	bool seen;    /* the final journal holds an attempt of it */
	char *body_file; /* owned: what {body_file} names (exec mode) */
	int64_t deadline_us; /* stdio mode: provider µs its result is due by */
	bool has_result;     /* stdio mode: its result line was read */
};

/* One event during a scenario. */
struct event_state {
	bool fired;
	bool triggered;     /* "after": its attempt is in the journal */
	int64_t fire_at_us; /* provider µs; at_ms events from the start */
};

/* One scenario while it runs. */
struct scen {
	struct runner *rn;
	const struct fa_scenario *sc;
	struct hx_scenario_result *out;
	char *dir;            /* owned: this scenario's temporary folder */
	char *state_dir;      /* owned: CLIENT_STATE_DIR */
	char *base_url;       /* owned: "http://127.0.0.1:PORT" */
	struct fa_journal *journal;
	struct fa_provider *prov;
	struct fa_server *srv;
	int64_t t0_us;        /* monotonic origin of the provider's clock */
	int64_t start_us;     /* provider µs the events count from */
	uint64_t since;       /* last journal seq looked at */
	struct task_state *ts; /* owned, one per task */
	struct event_state *es; /* owned, one per event */
	bool timed_out;       /* the scenario's own timeout struck */
	bool stdio;           /* stdio mode: one client session for the scenario */
	struct hx_stdio *client; /* owned: that session, or NULL */
	size_t msgs_seen;     /* stdio mode: client messages already acted on */
};

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *path)
{
	if (path != NULL)
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void sleep_tick(void)
{
	const struct timespec tick = { 0, TICK_NS };

	nanosleep(&tick, NULL);
}

static size_t task_index(const struct fa_scenario *sc, const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < sc->harness.n_tasks; i++)
		if (strcmp(sc->harness.tasks[i].id, id) == 0)
			return i;
	return sc->harness.n_tasks;
}

/* Per-task client timeout: its own, else its wait budget plus slack, else
 * the scenario's, s. */
static int task_timeout_s(const struct fa_scenario *sc,
			  const struct fa_task_spec *t)
{
	if (t->timeout_s > 0)
		return t->timeout_s;
	if (t->budget.max_wait_s >= 0)
		return t->budget.max_wait_s + WAIT_SLACK_S;
	return sc->harness.timeout_s > 0 ? sc->harness.timeout_s : 60;
}

static void progress(struct runner *rn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress(struct runner *rn, const char *fmt, ...)
{
	va_list ap;

	if (rn->opts->progress == NULL)
		return;
	pthread_mutex_lock(&rn->lock);
	va_start(ap, fmt);
	vfprintf(rn->opts->progress, fmt, ap);
	va_end(ap);
	fflush(rn->opts->progress);
	pthread_mutex_unlock(&rn->lock);
}

/* Write @body as compact JSON (or nothing) to @path. */
static enum fa_rc write_body(const char *path, const cJSON *body,
			     struct fa_err *err)
{
	char *text = body ? cJSON_PrintUnformatted(body) : NULL;
	FILE *f = fopen(path, "w");
	enum fa_rc rc = FA_EIO;

	if (f == NULL) {
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	if (text != NULL)
		fputs(text, f);
	if (fclose(f) != 0) {
		f = NULL;
		fa_err_set(err, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	rc = FA_OK;
out:
	free(text);
	return rc;
}

/* The last non-empty line of @path's tail, at most 200 bytes, or "". */
static char *stderr_last_line(const char *path)
{
	char buf[STDERR_TAIL + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t end;
	ssize_t n = 0;
	char *line, *nl;

	if (fd >= 0) {
		end = lseek(fd, 0, SEEK_END);
		if (end > STDERR_TAIL)
			lseek(fd, end - STDERR_TAIL, SEEK_SET);
		else
			lseek(fd, 0, SEEK_SET);
		n = read(fd, buf, STDERR_TAIL);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	nl = strrchr(buf, '\n');
	line = nl ? nl + 1 : buf;
	return fa_xstrndup(line, 200);
}

static char *task_file(const struct scen *s, const char *task, const char *ext)
{
	return fa_xasprintf("%s/%s.%s", s->dir, task, ext);
}

/* Exec mode: start task @i's client. A client that cannot start is
 * recorded in the task and in the scenario's error, never fatal to the
 * loop. */
static void start_exec_task(struct scen *s, size_t i)
{
	const struct fa_task_spec *t = &s->sc->harness.tasks[i];
	struct task_state *ts = &s->ts[i];
	struct hx_task_run *tr = &s->out->tasks[i];
	const struct fa_key *key = fa_scenario_key_by_id(s->sc, t->key);
	struct hx_exec_vars vars;
	struct hx_exec_spec spec;
	struct fa_err err = { { 0 } };
	char *url = hx_exec_task_url(s->base_url, t->path, t->id);
	char *out_path = task_file(s, t->id, "stdout");
	char *err_path = task_file(s, t->id, "stderr");
	char *env[6];
	char *cmd;

	env[0] = fa_xasprintf("FAKEAPI_URL=%s", s->base_url);
	env[1] = fa_xasprintf("FAKEAPI_KEY=%s", key ? key->secret : "");
	env[2] = fa_xasprintf("CLIENT_STATE_DIR=%s", s->state_dir);
	env[3] = fa_xasprintf("FAKEAPI_TASK=%s", t->id);
	env[4] = fa_xasprintf("FAKEAPI_METHOD=%s", t->method);
	env[5] = NULL;
	vars.url = url;
	vars.method = t->method;
	vars.body_file = ts->body_file;
	cmd = hx_exec_expand(s->rn->opts->exec_template, &vars);
	spec.cmd = cmd;
	spec.env = (const char *const *)env;
	spec.stdout_path = out_path;
	spec.stderr_path = err_path;
	spec.timeout_us = (int64_t)task_timeout_s(s->sc, t) * 1000000;

	ts->sent = true;
	tr->sent = true;
	tr->t_sent_us = fa_provider_now_us(s->prov);
	if (hx_exec_start(&ts->proc, &spec, &err) != FA_OK) {
		ts->done = true;
		tr->t_exit_us = tr->t_sent_us;
		tr->error = fa_xstrdup(err.msg);
		if (s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: task %s: %s", s->sc->file,
						     t->id, err.msg);
	}
	for (size_t k = 0; env[k] != NULL; k++)
		free(env[k]);
	free(cmd);
	free(url);
	free(out_path);
	free(err_path);
}

/* Stdio mode: send task @i to the scenario's client, due within its
 * per-task timeout (the same as exec mode's). */
static void send_stdio_task(struct scen *s, size_t i)
{
	const struct fa_task_spec *t = &s->sc->harness.tasks[i];
	struct task_state *ts = &s->ts[i];
	struct hx_task_run *tr = &s->out->tasks[i];
	int64_t deadline_ms = (int64_t)task_timeout_s(s->sc, t) * 1000;
	char *url = hx_exec_task_url(s->base_url, t->path, t->id);
	cJSON *msg = hx_stdio_task_json(s->sc, t, url, deadline_ms);

	ts->sent = true;
	tr->sent = true;
	tr->t_sent_us = fa_provider_now_us(s->prov);
	ts->deadline_us = tr->t_sent_us + deadline_ms * 1000;
	hx_stdio_send_task(s->client, msg);
	cJSON_Delete(msg);
	free(url);
}

static void start_task(struct scen *s, size_t i)
{
	if (s->stdio)
		send_stdio_task(s, i);
	else
		start_exec_task(s, i);
}

static void fire(struct scen *s, size_t e)
{
	const struct fa_event_spec *ev = &s->sc->harness.events[e];

	s->es[e].fired = true;
	for (size_t k = 0; k < ev->n_send; k++) {
		size_t i = task_index(s->sc, ev->send[k]);

		/* each task is sent once, whichever event names it first */
		if (i < s->sc->harness.n_tasks && !s->ts[i].sent)
			start_task(s, i);
	}
}

/* Read the journal's new entries for the "after" triggers they pull. */
static void scan_journal(struct scen *s)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	struct fa_attempt *a = NULL;
	size_t n = 0;

	fa_journal_snapshot(s->journal, s->since, &a, &n);
	for (size_t k = 0; k < n; k++) {
		int64_t t = a[k].t_response_us;

		if (a[k].seq > s->since)
			s->since = a[k].seq;
		if (t < 0)
			t = a[k].t_done_us >= 0 ? a[k].t_done_us : a[k].t_arrival_us;
		for (size_t e = 0; e < h->n_events; e++) {
			const struct fa_event_spec *ev = &h->events[e];
			int64_t plus_ms = ev->plus_ms;

			if (ev->at_ms >= 0 || s->es[e].triggered ||
			    a[k].task == NULL || strcmp(a[k].task, ev->after_task) != 0 ||
			    a[k].status != ev->after_status)
				continue;
			/* stdio mode hears it from the client (read_msgs) */
			if (ev->on == FA_ON_CLIENT_SAW && s->stdio)
				continue;
			/* exec mode cannot see what the client saw: assume it saw
			 * the answer a little after the provider sent it */
			if (ev->on == FA_ON_CLIENT_SAW && plus_ms < HX_RUN_CLIENT_SAW_MIN_MS)
				plus_ms = HX_RUN_CLIENT_SAW_MIN_MS;
			s->es[e].triggered = true;
			s->es[e].fire_at_us = t + plus_ms * 1000;
		}
		fa_attempt_release(&a[k]);
	}
	free(a);
}

/*
 * Whether some event can still fire. An unfired event is live unless it is
 * an "after" event not yet triggered whose task can no longer run: it has
 * exited, or it was never sent and no live event sends it. Dropping one
 * event can strand the tasks only it would send, so iterate to a fixpoint.
 */
static bool events_live(const struct scen *s)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	bool *live = fa_xcalloc(h->n_events + 1, sizeof(*live));
	bool any = false, changed = true;

	for (size_t e = 0; e < h->n_events; e++)
		live[e] = !s->es[e].fired;
	while (changed) {
		changed = false;
		for (size_t e = 0; e < h->n_events; e++) {
			const struct fa_event_spec *ev = &h->events[e];
			size_t i;
			bool may_run = false;

			if (!live[e] || ev->at_ms >= 0 || s->es[e].triggered)
				continue;
			i = task_index(s->sc, ev->after_task);
			if (i >= h->n_tasks) {
				may_run = false;
			} else if (s->ts[i].sent) {
				may_run = !s->ts[i].done;
			} else {
				for (size_t f = 0; f < h->n_events && !may_run; f++) {
					if (!live[f] || f == e)
						continue;
					for (size_t k = 0; k < h->events[f].n_send; k++)
						if (strcmp(h->events[f].send[k],
							   ev->after_task) == 0)
							may_run = true;
				}
			}
			if (!may_run) {
				live[e] = false;
				changed = true;
			}
		}
	}
	for (size_t e = 0; e < h->n_events; e++)
		any = any || live[e];
	free(live);
	return any;
}

/* Drive the events and the clients until the scenario is over. */
static void drive(struct scen *s)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	int timeout_s = h->timeout_s > 0 ? h->timeout_s : 60;
	int64_t deadline = s->start_us + (int64_t)timeout_s * 1000000;
	int64_t quiet_since = -1;

	for (;;) {
		int64_t now = fa_provider_now_us(s->prov);
		bool running = false, stop = false;

		scan_journal(s);
		if (atomic_load(&interrupted) && s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: interrupted", s->sc->file);
		if (now >= deadline && !s->timed_out)
			s->timed_out = true;
		stop = s->timed_out || atomic_load(&interrupted);
		for (size_t e = 0; e < h->n_events && !stop; e++) {
			const struct fa_event_spec *ev = &h->events[e];

			if (s->es[e].fired)
				continue;
			if (ev->at_ms >= 0 && now >= s->start_us + ev->at_ms * 1000)
				fire(s, e);
			else if (ev->at_ms < 0 && s->es[e].triggered &&
				 now >= s->es[e].fire_at_us)
				fire(s, e);
		}
		for (size_t i = 0; i < h->n_tasks; i++) {
			struct task_state *ts = &s->ts[i];

			if (!ts->sent || ts->done)
				continue;
			if (stop)
				hx_exec_stop(&ts->proc, fa_clock_mono_us());
			if (hx_exec_poll(&ts->proc, fa_clock_mono_us()))
				ts->done = true;
			else
				running = true;
		}
		if (!running && (stop || !events_live(s))) {
			if (quiet_since < 0)
				quiet_since = now;
			/* late attempts land, and may still trigger an event */
			if (now - quiet_since >= HX_RUN_SETTLE_US)
				break;
		} else {
			quiet_since = -1;
		}
		sleep_tick();
	}
}

/* Stdio mode: act on the client's new messages. An action_result pulls
 * the client_saw triggers it names; a result finishes its task. */
static void read_msgs(struct scen *s)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	const struct hx_client_log *log = hx_stdio_log(s->client);

	for (; s->msgs_seen < log->n_msgs; s->msgs_seen++) {
		const struct hx_client_msg *m = &log->msgs[s->msgs_seen];
		size_t i = task_index(s->sc, m->task);
		const cJSON *v;

		if (i >= h->n_tasks)
			continue;
		if (strcmp(m->type, "action_result") == 0) {
			/* the log let it through only with an integer status */
			v = cJSON_GetObjectItemCaseSensitive(m->json, "status");
			for (size_t e = 0; e < h->n_events; e++) {
				const struct fa_event_spec *ev = &h->events[e];

				if (ev->at_ms >= 0 || ev->on != FA_ON_CLIENT_SAW ||
				    s->es[e].triggered || strcmp(ev->after_task, m->task) != 0 ||
				    ev->after_status != (int)v->valuedouble)
					continue;
				s->es[e].triggered = true;
				s->es[e].fire_at_us = m->t_us + (int64_t)ev->plus_ms * 1000;
			}
		} else if (strcmp(m->type, "result") == 0) {
			struct hx_task_run *tr = &s->out->tasks[i];
			const char *outcome = cJSON_GetObjectItemCaseSensitive(m->json,
									     "outcome")->valuestring;

			/* a late result is kept, but the task stays timed out */
			s->ts[i].has_result = true;
			s->ts[i].done = true;
			free(tr->outcome);
			tr->outcome = fa_xstrdup(outcome);
			tr->exit_code = strcmp(outcome, "succeeded") == 0 ? 0 : 1;
			tr->t_exit_us = m->t_us;
		}
	}
}

/* Stdio mode: every sent task without a result now counts as timed out
 * (its deadline passed, or the scenario's timeout struck). */
static void time_out_tasks(struct scen *s, int64_t now, bool all)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++) {
		struct task_state *ts = &s->ts[i];

		if (!ts->sent || ts->done || (!all && now < ts->deadline_us))
			continue;
		ts->done = true;
		s->out->tasks[i].timed_out = true;
	}
}

static bool all_sent_done(const struct scen *s)
{
	for (size_t i = 0; i < s->sc->harness.n_tasks; i++)
		if (s->ts[i].sent && !s->ts[i].done)
			return false;
	return true;
}

/*
 * Stdio mode: drive the events and the client's session. The run phase
 * ends when every sent task has its result (or is past its deadline) and
 * no event can fire, after HX_RUN_SETTLE_US of quiet (a late journal
 * entry may still trigger one); at once on the scenario's timeout, an
 * interruption or the client's end. Then shutdown, the client's grace,
 * and HX_RUN_SETTLE_US for the journal.
 */
static void drive_stdio(struct scen *s)
{
	const struct fa_harness_spec *h = &s->sc->harness;
	int timeout_s = h->timeout_s > 0 ? h->timeout_s : 60;
	int64_t deadline = s->start_us + (int64_t)timeout_s * 1000000;
	int64_t quiet_since = -1, ended_since = -1;
	bool shutting_down = false;

	for (;;) {
		int64_t now = fa_provider_now_us(s->prov);
		bool stop;

		scan_journal(s);
		read_msgs(s);
		if (atomic_load(&interrupted) && s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: interrupted", s->sc->file);
		if (now >= deadline && !shutting_down)
			s->timed_out = true;
		stop = s->timed_out || atomic_load(&interrupted) ||
		       !hx_stdio_running(s->client);
		if (!shutting_down) {
			for (size_t e = 0; e < h->n_events && !stop; e++) {
				const struct fa_event_spec *ev = &h->events[e];

				if (s->es[e].fired)
					continue;
				if ((ev->at_ms >= 0 && now >= s->start_us + ev->at_ms * 1000) ||
				    (ev->at_ms < 0 && s->es[e].triggered &&
				     now >= s->es[e].fire_at_us))
					fire(s, e);
			}
			time_out_tasks(s, now, s->timed_out || atomic_load(&interrupted));
			if (!stop && all_sent_done(s) && !events_live(s)) {
				if (quiet_since < 0)
					quiet_since = now;
			} else {
				quiet_since = -1;
			}
			if (stop || (quiet_since >= 0 && now - quiet_since >= HX_RUN_SETTLE_US)) {
				hx_stdio_shutdown(s->client);
				shutting_down = true;
			}
		} else if (hx_stdio_finished(s->client)) {
			if (ended_since < 0)
				ended_since = now;
			/* attempts cut off by the client's end land */
			if (now - ended_since >= HX_RUN_SETTLE_US)
				break;
		}
		hx_stdio_pump(s->client, TICK_NS / 1000000);
	}
	read_msgs(s);
}

/* Stdio mode: the environment of docs/client-protocol.md, NULL-terminated;
 * free each entry and the array. */
static char **client_env(const struct scen *s)
{
	const struct fa_key *first = fa_scenario_key_by_id(s->sc, s->sc->harness.tasks[0].key);
	char **env = fa_xcalloc(s->sc->n_keys + 4, sizeof(*env));
	size_t k = 0;

	env[k++] = fa_xasprintf("FAKEAPI_URL=%s", s->base_url);
	env[k++] = fa_xasprintf("FAKEAPI_KEY=%s", first ? first->secret : "");
	env[k++] = fa_xasprintf("CLIENT_STATE_DIR=%s", s->state_dir);
	for (size_t i = 0; i < s->sc->n_keys; i++) {
		char *name = hx_stdio_key_env(s->sc->keys[i].id);

		env[k++] = fa_xasprintf("%s=%s", name, s->sc->keys[i].secret);
		free(name);
	}
	env[k] = NULL;
	return env;
}

/* Stdio mode: start the scenario's client and wait for its hello. On
 * failure the reason is the scenario's error, the run starts no further
 * scenario, and what the client said is kept for the report. */
static enum fa_rc start_client(struct scen *s)
{
	char **env = client_env(s);
	struct hx_stdio_spec spec = {
		.cmd = s->rn->opts->client_cmd,
		.env = (const char *const *)env,
		.t0_us = s->t0_us,
	};
	struct fa_err err = { { 0 } };
	enum fa_rc rc;

	rc = hx_stdio_start(&spec, &s->client, &err);
	if (rc == FA_OK)
		rc = hx_stdio_hello(s->client, 0, &err);
	if (rc != FA_OK) {
		s->out->error = fa_xasprintf("%s: %s", s->sc->file, err.msg);
		atomic_store(&s->rn->client_broken, 1);
		if (s->client != NULL) {
			hx_stdio_kill(s->client);
			while (!hx_stdio_finished(s->client))
				hx_stdio_pump(s->client, TICK_NS / 1000000);
			hx_stdio_take(s->client, s->out);
		}
	}
	for (size_t k = 0; env[k] != NULL; k++)
		free(env[k]);
	free(env);
	return rc;
}

/* Stdio mode: what the client said goes into the result; a task it never
 * reported on, when it ended on its own, failed with the reason. */
static void collect_stdio(struct scen *s)
{
	struct hx_stdio_end e;
	char *how;

	hx_stdio_end(s->client, &e);
	how = hx_stdio_end_str(&e);
	for (size_t i = 0; i < s->out->n_tasks; i++) {
		struct hx_task_run *tr = &s->out->tasks[i];

		if (!s->ts[i].sent || s->ts[i].has_result || tr->timed_out)
			continue;
		if (e.early)
			tr->error = fa_xasprintf("client %s before reporting", how);
		else
			tr->timed_out = true; /* stopped with the scenario */
	}
	free(how);
	hx_stdio_take(s->client, s->out);
}

/* Fill the task results from the processes, and blame a client that could
 * not even start. */
static void collect_tasks(struct scen *s)
{
	for (size_t i = 0; i < s->out->n_tasks; i++) {
		const struct fa_task_spec *t = &s->sc->harness.tasks[i];
		struct task_state *ts = &s->ts[i];
		struct hx_task_run *tr = &s->out->tasks[i];
		char *path, *line;

		if (!ts->sent || ts->proc.pid == 0)
			continue;
		tr->t_exit_us = ts->proc.t_exit_us - s->t0_us;
		tr->exit_code = ts->proc.exit_code;
		tr->timed_out = ts->proc.timed_out;
		/* sh says 127 (not found) or 126 (not executable) */
		if (tr->exit_code != 126 && tr->exit_code != 127)
			continue;
		for (size_t k = 0; k < s->out->n_attempts && !ts->seen; k++)
			ts->seen = s->out->attempts[k].task != NULL &&
				   strcmp(s->out->attempts[k].task, t->id) == 0;
		if (ts->seen)
			continue;
		path = task_file(s, t->id, "stderr");
		line = stderr_last_line(path);
		tr->error = fa_xasprintf("client could not start: exit %d, no "
					 "attempt made%s%s", tr->exit_code,
					 line[0] ? ": " : "", line);
		if (s->out->error == NULL)
			s->out->error = fa_xasprintf("%s: task %s: %s", s->sc->file,
						     t->id, tr->error);
		free(line);
		free(path);
	}
}

/* Folder, body files and the provider for @s. */
static enum fa_rc set_up(struct scen *s, size_t index, struct fa_err *err)
{
	const struct hx_run_opts *o = s->rn->opts;
	struct fa_server_opts so = { .bind = "127.0.0.1", .port = 0 };
	char *jpath = NULL;
	enum fa_rc rc = FA_EIO;

	s->dir = fa_xasprintf("%s/%zu-%s", s->rn->tmp_root, index + 1, s->sc->id);
	s->state_dir = fa_xasprintf("%s/state", s->dir);
	if (mkdir(s->dir, 0700) != 0 || mkdir(s->state_dir, 0700) != 0) {
		fa_err_set(err, "%s: cannot create: %s", s->state_dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; !s->stdio && i < s->sc->harness.n_tasks; i++) {
		const struct fa_task_spec *t = &s->sc->harness.tasks[i];

		s->ts[i].body_file = task_file(s, t->id, "body");
		if (write_body(s->ts[i].body_file, t->body, err) != FA_OK)
			goto out;
	}
	if (o->journal_dir != NULL)
		jpath = fa_xasprintf("%s/%s.jsonl", o->journal_dir, s->sc->id);
	rc = fa_journal_new(jpath, &s->journal, err);
	if (rc != FA_OK)
		goto out;
	s->t0_us = fa_clock_mono_us();
	s->prov = fa_provider_new(s->sc, s->journal, o->seed, s->t0_us);
	rc = fa_server_start(s->prov, &so, &s->srv, err);
	if (rc != FA_OK)
		goto out;
	s->base_url = fa_xasprintf("http://127.0.0.1:%u", fa_server_port(s->srv));
	rc = FA_OK;
out:
	free(jpath);
	return rc;
}

static void count_verdicts(const struct hx_scenario_result *r, size_t n[3])
{
	n[HX_PASS] = n[HX_FAIL] = n[HX_NA] = 0;
	for (size_t i = 0; i < r->n_checks; i++)
		n[r->checks[i].verdict]++;
}

static void run_scenario(struct runner *rn, size_t index)
{
	const struct fa_scenario *sc = rn->suite->scenarios[index];
	struct hx_scenario_result *out = &rn->res->scenarios[index];
	const size_t total = rn->suite->n_scenarios;
	const size_t n_tasks = sc->has_harness ? sc->harness.n_tasks : 0;
	struct scen s = { .rn = rn, .sc = sc, .out = out,
			  .stdio = rn->opts->client_cmd != NULL };
	struct fa_err err = { { 0 } };
	int64_t begin = fa_clock_mono_us();
	struct hx_check_input in;
	size_t n[3];

	progress(rn, "[%zu/%zu] %s ...\n", index + 1, total, sc->id);
	out->tasks = fa_xcalloc(n_tasks ? n_tasks : 1, sizeof(*out->tasks));
	out->n_tasks = n_tasks;
	for (size_t i = 0; i < n_tasks; i++) {
		out->tasks[i].spec = &sc->harness.tasks[i];
		out->tasks[i].t_sent_us = -1;
		out->tasks[i].t_exit_us = -1;
		out->tasks[i].exit_code = -1;
	}
	if (n_tasks == 0) {
		out->error = fa_xasprintf("%s: $.harness: expected tasks for the "
					  "client to run, got none", sc->file);
		goto out;
	}
	s.ts = fa_xcalloc(n_tasks, sizeof(*s.ts));
	s.es = fa_xcalloc(sc->harness.n_events + 1, sizeof(*s.es));
	if (set_up(&s, index, &err) != FA_OK) {
		out->error = fa_xstrdup(err.msg);
		goto out;
	}
	/* the client is up before the first event counts its time */
	if (s.stdio && start_client(&s) != FA_OK)
		goto out;
	s.start_us = fa_provider_now_us(s.prov);
	if (sc->harness.n_events == 0)
		for (size_t i = 0; i < n_tasks; i++)
			start_task(&s, i); /* no events: every task at the start */
	if (s.stdio)
		drive_stdio(&s);
	else
		drive(&s);
	fa_server_stop(s.srv);
	s.srv = NULL;
	fa_journal_snapshot(s.journal, 0, &out->attempts, &out->n_attempts);
	fa_journal_head(s.journal, out->journal_head);
	if (s.stdio)
		collect_stdio(&s);
	else
		collect_tasks(&s);
	in.sc = sc;
	in.attempts = out->attempts;
	in.n_attempts = out->n_attempts;
	in.tasks = out->tasks;
	in.n_tasks = out->n_tasks;
	in.mode = s.stdio ? HX_MODE_STDIO : HX_MODE_EXEC;
	in.msgs = out->msgs;
	in.n_msgs = out->n_msgs;
	hx_check_run_all(&in, &out->checks, &out->n_checks);
out:
	/* a loop cut short must not leave a client behind */
	hx_stdio_free(s.client);
	fa_server_stop(s.srv);
	fa_provider_free(s.prov);
	fa_journal_free(s.journal);
	for (size_t i = 0; s.ts != NULL && i < n_tasks; i++) {
		/* a loop cut short must not leave a client behind */
		if (s.ts[i].sent && !s.ts[i].done) {
			hx_exec_stop(&s.ts[i].proc, fa_clock_mono_us());
			hx_exec_wait(&s.ts[i].proc);
		}
		free(s.ts[i].body_file);
	}
	rm_tree(s.dir);
	free(s.dir);
	free(s.state_dir);
	free(s.base_url);
	free(s.ts);
	free(s.es);
	out->duration_us = fa_clock_mono_us() - begin;
	count_verdicts(out, n);
	if (out->error != NULL)
		progress(rn, "[%zu/%zu] %s ... error: %s (%.1f s)\n", index + 1,
			 total, sc->id, out->error, (double)out->duration_us / 1e6);
	else
		progress(rn, "[%zu/%zu] %s ... %zu pass, %zu fail, %zu n/a (%.1f s)\n",
			 index + 1, total, sc->id, n[HX_PASS], n[HX_FAIL], n[HX_NA],
			 (double)out->duration_us / 1e6);
}

static void *worker(void *arg)
{
	struct runner *rn = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&rn->lock);
		i = rn->next++;
		pthread_mutex_unlock(&rn->lock);
		if (i >= rn->suite->n_scenarios || atomic_load(&interrupted) ||
		    atomic_load(&rn->client_broken))
			break;
		rn->ran[i] = true;
		run_scenario(rn, i);
	}
	return NULL;
}

/* Make @dir (one level) unless it is already a folder. */
static enum fa_rc ensure_dir(const char *dir, struct fa_err *err)
{
	struct stat st;
	enum fa_rc rc = FA_EIO;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fa_err_set(err, "%s: cannot create: %s", dir, strerror(errno));
		goto out;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fa_err_set(err, "%s: cannot create: not a folder", dir);
		goto out;
	}
	rc = FA_OK;
out:
	return rc;
}

enum fa_rc hx_run_suite(const struct fa_suite *suite,
			const struct hx_run_opts *opts,
			struct hx_run_result *out, struct fa_err *err)
{
	struct runner rn = { .suite = suite, .opts = opts, .res = out };
	const char *tmp = getenv("TMPDIR");
	size_t n_threads = opts->jobs ? opts->jobs : 1;
	pthread_t *threads = NULL;
	size_t started = 0;
	enum fa_rc rc = FA_EINVAL;

	memset(out, 0, sizeof(*out));
	if ((opts->exec_template == NULL) == (opts->client_cmd == NULL)) {
		fa_err_set(err, "no client: give --client 'COMMAND' or --exec 'TEMPLATE'");
		goto out;
	}
	rc = FA_EIO;
	if (opts->journal_dir != NULL && ensure_dir(opts->journal_dir, err) != FA_OK)
		goto out;
	rn.tmp_root = fa_xasprintf("%s/fakeapi-harness-XXXXXX",
				   tmp && *tmp ? tmp : P_tmpdir);
	if (mkdtemp(rn.tmp_root) == NULL) {
		fa_err_set(err, "%s: cannot create: %s", rn.tmp_root, strerror(errno));
		goto out;
	}
	out->suite = suite;
	out->harness_version = HX_VERSION;
	out->seed = opts->seed;
	out->mode = opts->client_cmd != NULL ? HX_MODE_STDIO : HX_MODE_EXEC;
	out->client = opts->client_cmd != NULL ? opts->client_cmd : opts->exec_template;
	out->min_level = opts->min_level;
	out->n_scenarios = suite->n_scenarios;
	out->scenarios = fa_xcalloc(suite->n_scenarios ? suite->n_scenarios : 1,
				    sizeof(*out->scenarios));
	for (size_t i = 0; i < suite->n_scenarios; i++)
		out->scenarios[i].sc = suite->scenarios[i];
	rn.ran = fa_xcalloc(suite->n_scenarios + 1, sizeof(*rn.ran));
	atomic_init(&rn.client_broken, 0);
	pthread_mutex_init(&rn.lock, NULL);
	if (n_threads > suite->n_scenarios)
		n_threads = suite->n_scenarios ? suite->n_scenarios : 1;
	threads = fa_xcalloc(n_threads, sizeof(*threads));
	for (size_t i = 0; i < n_threads; i++) {
		if (pthread_create(&threads[i], NULL, worker, &rn) != 0)
			break;
		started++;
	}
	if (started == 0)
		worker(&rn); /* no thread to be had: run them here */
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	for (size_t i = 0; i < suite->n_scenarios; i++) {
		if (rn.ran[i] || out->scenarios[i].error != NULL)
			continue;
		if (atomic_load(&rn.client_broken))
			out->scenarios[i].error = fa_xasprintf(
				"%s: not run: the client failed to start",
				suite->scenarios[i]->file);
		else
			out->scenarios[i].error = fa_xasprintf(
				"%s: interrupted before it ran", suite->scenarios[i]->file);
	}
	for (size_t i = 0; i < suite->n_scenarios && out->hello == NULL; i++)
		out->hello = out->scenarios[i].hello;
	pthread_mutex_destroy(&rn.lock);
	hx_check_grade(out);
	rc = FA_OK;
out:
	if (rn.tmp_root != NULL)
		rmdir(rn.tmp_root);
	free(rn.tmp_root);
	free(rn.ran);
	free(threads);
	return rc;
}
