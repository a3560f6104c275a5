/* run.c -- run a suite: its scenarios on worker threads, their results graded together. */
#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "check.h"
#include "grade.h"
#include "client_log.h"
#include "scenario_run.h"
#include "waiting.h"

/* Shared by the worker threads of one run. */
struct runner {
	const struct fa_suite *suite;
	const struct hx_run_opts *opts;
	struct hx_run_result *res;
	char *tmp_root;           /* owned: the run's temporary folder */
	bool *ran;                /* owned: scenario i was started */
	atomic_int client_broken; /* stdio mode: a client failed to start; run no more */
	atomic_int cut;           /* an interruption cut a scenario short */
	pthread_mutex_t lock;     /* guards next and the progress stream */
	size_t next;              /* next scenario to start */
};

static void progress(struct runner *rn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

static void count_verdicts(const struct hx_scenario_result *r, size_t n[3])
{
	n[HX_PASS] = n[HX_FAIL] = n[HX_NA] = 0;
	for (size_t i = 0; i < r->n_checks; i++)
		n[r->checks[i].verdict]++;
}

/* Where a scenario's "waiting for" line goes: the runner and the index. */
struct waiting_ctx {
	struct runner *rn;
	size_t index;
};

static void say_waiting(void *ctx, const struct fa_scenario *sc, const char *what)
{
	const struct waiting_ctx *w = ctx;
	char *plain = hx_client_log_plain(what, strlen(what));

	progress(w->rn, "[%zu/%zu] %s: %s\n", w->index + 1, w->rn->suite->n_scenarios, sc->id,
	         plain);
	free(plain);
}

/* Scenario @index with a progress line before and after, and one every
 * HX_WAITING_EVERY_US while it waits long. */
static void run_scenario(struct runner *rn, size_t index)
{
	const struct fa_scenario *sc = rn->suite->scenarios[index];
	struct hx_scenario_result *out = &rn->res->scenarios[index];
	const size_t total = rn->suite->n_scenarios;
	char *dir = fa_xasprintf("%s/%zu-%s", rn->tmp_root, index + 1, sc->id);
	struct waiting_ctx wctx = { rn, index };
	struct hx_run_opts opts = *rn->opts;
	size_t n[3];
	bool cut = false;

	if (opts.progress != NULL) {
		opts.waiting = say_waiting;
		opts.waiting_ctx = &wctx;
		opts.waiting_every_us = hx_waiting_every_us();
	}
	progress(rn, "[%zu/%zu] %s ...\n", index + 1, total, sc->id);
	if (hx_scenario_run(sc, &opts, dir, out, &cut) != FA_OK)
		atomic_store(&rn->client_broken, 1);
	if (cut)
		atomic_store(&rn->cut, 1);
	free(dir);
	count_verdicts(out, n);
	if (out->error != NULL) {
		char *plain = hx_client_log_plain(out->error, strlen(out->error));

		progress(rn, "[%zu/%zu] %s ... error: %s (%.1f s)\n", index + 1, total, sc->id,
		         plain, (double)out->duration_us / 1e6);
		free(plain);
	} else {
		progress(rn, "[%zu/%zu] %s ... %zu pass, %zu fail, %zu n/a (%.1f s)\n", index + 1,
		         total, sc->id, n[HX_PASS], n[HX_FAIL], n[HX_NA],
		         (double)out->duration_us / 1e6);
	}
}

static void *worker(void *arg)
{
	struct runner *rn = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&rn->lock);
		i = rn->next++;
		pthread_mutex_unlock(&rn->lock);
		if (i >= rn->suite->n_scenarios || hx_run_interrupted() ||
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

enum fa_rc hx_run_suite(const struct fa_suite *suite, const struct hx_run_opts *opts,
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
	rn.tmp_root = fa_xasprintf("%s/fakeapi-harness-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
	if (mkdtemp(rn.tmp_root) == NULL) {
		fa_err_set(err, "%s: cannot create: %s", rn.tmp_root, strerror(errno));
		goto out;
	}
	out->suite = suite;
	out->harness_version = HX_VERSION;
	out->seed = opts->seed;
	out->time_scale = fa_clock_scale();
	out->clock_check = opts->clock_check;
	out->mode = opts->client_cmd != NULL ? HX_MODE_STDIO : HX_MODE_EXEC;
	out->client = opts->client_cmd != NULL ? opts->client_cmd : opts->exec_template;
	out->min_level = opts->min_level;
	out->strict = opts->strict;
	out->known_failing = opts->known_failing;
	out->n_scenarios = suite->n_scenarios;
	out->scenarios =
	        fa_xcalloc(suite->n_scenarios ? suite->n_scenarios : 1, sizeof(*out->scenarios));
	for (size_t i = 0; i < suite->n_scenarios; i++)
		out->scenarios[i].sc = suite->scenarios[i];
	rn.ran = fa_xcalloc(suite->n_scenarios + 1, sizeof(*rn.ran));
	atomic_init(&rn.client_broken, 0);
	atomic_init(&rn.cut, 0);
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
		if (atomic_load(&rn.client_broken)) {
			out->scenarios[i].error =
			        fa_xasprintf("%s: not run: the client failed to start",
			                     suite->scenarios[i]->file);
		} else {
			out->scenarios[i].error = fa_xasprintf("%s: interrupted before it ran",
			                                       suite->scenarios[i]->file);
			atomic_store(&rn.cut, 1);
		}
	}
	for (size_t i = 0; i < suite->n_scenarios && out->hello == NULL; i++)
		out->hello = out->scenarios[i].hello;
	pthread_mutex_destroy(&rn.lock);
	/* a signal after the last scenario ended cut nothing short */
	out->interrupted = atomic_load(&rn.cut) != 0;
	hx_grade_run(out);
	rc = FA_OK;
out:
	if (rn.tmp_root != NULL)
		rmdir(rn.tmp_root);
	free(rn.tmp_root);
	free(rn.ran);
	free(threads);
	return rc;
}
