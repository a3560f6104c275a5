/* test_exec.c -- client processes: templates, quoting, timeouts, markers, no strays. */
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "client_env.h"
#include "clock.h"
#include "exec.h"
#include "scenario.h"

/* A scratch folder per test case, removed after. */
static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-exec-XXXXXX", base && *base ? base : P_tmpdir);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void)
{
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *scratch(const char *name)
{
	return fa_xasprintf("%s/%s", tmpdir, name);
}

/* Whole file as a string (NULL when unreadable); the caller frees. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long len;

	if (f == NULL)
		return NULL;
	len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		s = fa_xmalloc((size_t)len + 1);
		s[fread(s, 1, (size_t)len, f)] = '\0';
	}
	fclose(f);
	return s;
}

/* Run @cmd to the end with @env and @timeout_ms; stdout lands in "out". */
static void run(struct hx_exec_proc *p, const char *cmd, const char *const *env, int timeout_ms)
{
	char *out = scratch("out");
	char *err = scratch("err");
	struct hx_exec_spec spec = {
		.cmd = cmd,
		.env = env,
		.stdout_path = out,
		.stderr_path = err,
		.timeout_us = (int64_t)timeout_ms * 1000,
	};
	struct fa_err e = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(hx_exec_start(p, &spec, &e), FA_OK);
	hx_exec_wait(p);
	free(out);
	free(err);
}

/* Process @pid is gone or a zombie (a zombie runs nothing). */
static int pid_dead(long pid)
{
	char path[64], buf[512];
	FILE *f;
	char *rp;
	int dead = 1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 1;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		rp = strrchr(buf, ')');
		dead = rp == NULL || rp[2] == 'Z' || rp[2] == 'X';
	}
	fclose(f);
	return dead;
}

/* Number of live (non-zombie) processes whose process group is @pgid. */
static int group_alive(long pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[512], state;
		long ppid, pgrp;
		FILE *f;
		char *rp;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		if (rp != NULL && sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 &&
		    pgrp == pgid && state != 'Z' && state != 'X')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Wait up to 2 s for a condition that a SIGKILL makes true shortly. */
static int eventually_dead(long pid)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 200; i++) {
		if (pid_dead(pid) && group_alive(pid) == 0)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static long read_pid(const char *name)
{
	char *path = scratch(name);
	char *s = slurp(path);
	long pid = s ? strtol(s, NULL, 10) : 0;

	free(s);
	free(path);
	return pid;
}

static void exec__quote_wraps_in_single_quotes(void)
{
	char *a = hx_exec_quote("http://h/x?a=1&b=2");
	char *b = hx_exec_quote("");
	char *c = hx_exec_quote(NULL);

	CU_ASSERT_STRING_EQUAL(a, "'http://h/x?a=1&b=2'");
	CU_ASSERT_STRING_EQUAL(b, "''");
	CU_ASSERT_STRING_EQUAL(c, "''");
	free(a);
	free(b);
	free(c);
}

static void exec__quote_escapes_a_single_quote(void)
{
	char *a = hx_exec_quote("a'b");
	char *b = hx_exec_quote("''");

	CU_ASSERT_STRING_EQUAL(a, "'a'\\''b'");
	CU_ASSERT_STRING_EQUAL(b, "''\\'''\\'''");
	free(a);
	free(b);
}

static void exec__expand_replaces_the_three_placeholders(void)
{
	struct hx_exec_vars v = { .url = "http://h/v1/x?fa_task=t1",
		                  .method = "POST",
		                  .body_file = "/d/t1.body" };
	char *s = hx_exec_expand("c -X {method} -d @{body_file} {url} {url}", &v);

	CU_ASSERT_STRING_EQUAL(s, "c -X 'POST' -d @'/d/t1.body' "
	                          "'http://h/v1/x?fa_task=t1' 'http://h/v1/x?fa_task=t1'");
	free(s);
}

static void exec__expand_leaves_unknown_braces_as_written(void)
{
	struct hx_exec_vars v = { .url = "u" };
	char *s = hx_exec_expand("curl -w '%{http_code}' {URL} {ur {x} { a; } {url}{", &v);

	CU_ASSERT_STRING_EQUAL(s, "curl -w '%{http_code}' {URL} {ur {x} { a; } 'u'{");
	free(s);
}

static void exec__expand_with_empty_values_gives_empty_words(void)
{
	struct hx_exec_vars v = { .url = NULL };
	char *s = hx_exec_expand("{method}{body_file}", &v);

	CU_ASSERT_STRING_EQUAL(s, "''''");
	free(s);
}

static void exec__task_url_appends_fa_task_as_query_or_parameter(void)
{
	char *a = hx_exec_task_url("http://127.0.0.1:9", "/v1/records/42", "t1");
	char *b = hx_exec_task_url("http://127.0.0.1:9", "/v1/records?x=1", "t-2");

	CU_ASSERT_STRING_EQUAL(a, "http://127.0.0.1:9/v1/records/42?fa_task=t1");
	CU_ASSERT_STRING_EQUAL(b, "http://127.0.0.1:9/v1/records?x=1&fa_task=t-2");
	free(a);
	free(b);
}

static void exec__quoted_values_reach_the_client_verbatim(void)
{
	const char *nasty = "it's $HOME `id` \"q\" \\ ; & {url} *";
	struct hx_exec_vars v = { .url = nasty, .method = "GET", .body_file = "a b" };
	char *cmd = hx_exec_expand("printf '%s|%s|%s' {url} {method} {body_file}", &v);
	char *want = fa_xasprintf("%s|GET|a b", nasty);
	char *out = scratch("out");
	struct hx_exec_proc p;
	char *got;

	run(&p, cmd, NULL, 5000);
	got = slurp(out);
	CU_ASSERT_EQUAL(p.exit_code, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, want);
	free(got);
	free(out);
	free(want);
	free(cmd);
}

static void exec__environment_is_set_and_replaces_inherited_names(void)
{
	const char *env[] = { "FAKEAPI_KEY=sk-secret", "FAKEAPI_TASK=t9", NULL };
	char *out = scratch("out");
	struct hx_exec_proc p;
	char *got;

	setenv("FAKEAPI_KEY", "inherited", 1);
	run(&p, "printf '%s,%s,%s' \"$FAKEAPI_KEY\" \"$FAKEAPI_TASK\" \"${PATH:+path}\"", env,
	    5000);
	unsetenv("FAKEAPI_KEY");
	got = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, "sk-secret,t9,path");
	free(got);
	free(out);
}

static void exec__each_client_gets_a_fresh_marker_in_its_environment(void)
{
	struct hx_exec_proc p, q;
	char *out = scratch("out");
	char *first, *second;

	run(&p, "printf %s \"$" HX_STRAY_ENV "\"", NULL, 5000);
	first = slurp(out);
	run(&q, "printf %s \"$" HX_STRAY_ENV "\"", NULL, 5000);
	second = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	CU_ASSERT_PTR_NOT_NULL_FATAL(second);
	CU_ASSERT_EQUAL(strlen(first), HX_STRAY_NONCE_LEN);
	CU_ASSERT_EQUAL(strspn(first, "0123456789abcdef"), HX_STRAY_NONCE_LEN);
	CU_ASSERT_STRING_EQUAL(first, p.marker);
	CU_ASSERT_STRING_EQUAL(second, q.marker);
	CU_ASSERT_STRING_NOT_EQUAL(first, second);
	free(first);
	free(second);
	free(out);
}

static void exec__client_env_puts_the_extras_then_a_fresh_marker_on_top(void)
{
	const char *extra[] = { "FAKEAPI_TASK=t1", HX_STRAY_ENV "=from-extra", NULL };
	struct hx_exec_client_env a, b;
	size_t n_task = 0, n_mark = 0, n_path = 0;
	const char *mark = NULL;

	setenv("FAKEAPI_TASK", "inherited", 1);
	hx_exec_client_env_init(&a, extra);
	hx_exec_client_env_init(&b, NULL);
	unsetenv("FAKEAPI_TASK");
	CU_ASSERT_EQUAL(strlen(a.marker), HX_STRAY_NONCE_LEN);
	CU_ASSERT_STRING_NOT_EQUAL(a.marker, b.marker);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a.envp);
	for (size_t i = 0; a.envp[i] != NULL; i++) {
		if (strncmp(a.envp[i], "FAKEAPI_TASK=", 13) == 0) {
			n_task++;
			CU_ASSERT_STRING_EQUAL(a.envp[i], "FAKEAPI_TASK=t1");
		}
		if (strncmp(a.envp[i], HX_STRAY_ENV "=", sizeof(HX_STRAY_ENV)) == 0) {
			n_mark++;
			mark = a.envp[i];
		}
		n_path += strncmp(a.envp[i], "PATH=", 5) == 0;
	}
	/* the marker wins over an extra entry of its name; the rest is inherited */
	CU_ASSERT_EQUAL(n_task, 1);
	CU_ASSERT_EQUAL(n_mark, 1);
	CU_ASSERT_EQUAL(n_path, getenv("PATH") != NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mark);
	CU_ASSERT_STRING_EQUAL(mark + sizeof(HX_STRAY_ENV), a.marker);
	hx_exec_client_env_release(&a);
	hx_exec_client_env_release(&b);
	CU_ASSERT_PTR_NULL(a.envp);
	hx_exec_client_env_release(NULL);
}

/* The process group of @pid, or -1 when it is gone. */
static long pgid_of(long pid)
{
	char path[64], buf[512];
	long pgrp = -1, ppid;
	char state;
	FILE *f;
	char *rp;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	if (rp == NULL || sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3)
		pgrp = -1;
	fclose(f);
	return pgrp;
}

static void exec__process_that_left_its_group_dies_with_the_client(void)
{
	/* a new session (setsid) escapes the group kill; the marker does not */
	char *cmd = fa_xasprintf("setsid sh -c 'echo $$ > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; "
	                         "exec sleep 30' '%s/escaped.pid' & "
	                         "while [ ! -s '%s/escaped.pid' ]; do sleep 0.01; done; exit 0",
	                         tmpdir, tmpdir);
	struct hx_exec_proc p;
	int64_t t0 = fa_clock_mono_us();
	long escaped;

	run(&p, cmd, NULL, 5000);
	CU_ASSERT_EQUAL(p.exit_code, 0);
	CU_ASSERT_FALSE(p.timed_out);
	escaped = read_pid("escaped.pid");
	CU_ASSERT_FATAL(escaped > 0);
	CU_ASSERT_NOT_EQUAL(pgid_of(escaped), p.pid); /* it did leave the group */
	CU_ASSERT_TRUE(eventually_dead(escaped));
	CU_ASSERT(fa_clock_mono_us() - t0 < 5000000);
	free(cmd);
}

static void exec__environment_keeps_a_marker_the_harness_inherited_out(void)
{
	char *out = scratch("out");
	struct hx_exec_proc p;
	char *got;

	setenv(HX_STRAY_ENV, "outer", 1);
	run(&p, "printf %s \"$" HX_STRAY_ENV "\"", NULL, 5000);
	unsetenv(HX_STRAY_ENV);
	got = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, p.marker);
	free(got);
	free(out);
}

static void exec__exit_status_is_recorded(void)
{
	struct hx_exec_proc p;

	run(&p, "exit 3", NULL, 5000);
	CU_ASSERT_FALSE(p.running);
	CU_ASSERT_EQUAL(p.exit_code, 3);
	CU_ASSERT_EQUAL(p.term_signal, 0);
	CU_ASSERT_FALSE(p.timed_out);
	CU_ASSERT(p.t_exit_us >= p.t_start_us);
}

static void exec__missing_command_exits_127(void)
{
	struct hx_exec_proc p;

	run(&p, "./no-such-client-here --flag", NULL, 5000);
	CU_ASSERT_EQUAL(p.exit_code, 127);
	CU_ASSERT_FALSE(p.timed_out);
}

static void exec__stdin_is_empty_and_stderr_is_captured(void)
{
	char *out = scratch("out");
	char *err = scratch("err");
	struct hx_exec_proc p;
	char *o, *e;

	run(&p, "cat; echo done; echo oops >&2", NULL, 5000);
	o = slurp(out);
	e = slurp(err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_STRING_EQUAL(o, "done\n");
	CU_ASSERT_STRING_EQUAL(e, "oops\n");
	free(o);
	free(e);
	free(out);
	free(err);
}

static void exec__client_inherits_no_descriptor_above_2(void)
{
	char *out = scratch("out");
	struct hx_exec_proc p;
	int fds[2];
	char *got;

	CU_ASSERT_EQUAL_FATAL(pipe(fds), 0); /* deliberately without O_CLOEXEC */
	run(&p, "for f in /proc/$$/fd/*; do readlink \"$f\"; done", NULL, 5000);
	close(fds[0]);
	close(fds[1]);
	got = slurp(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "/dev/null"));
	CU_ASSERT_PTR_NULL(strstr(got, "pipe:"));
	free(got);
	free(out);
}

static void exec__timeout_stops_a_hung_sleep(void)
{
	int64_t t0 = fa_clock_mono_us();
	struct hx_exec_proc p;

	run(&p, "sleep 30", NULL, 200);
	CU_ASSERT_TRUE(p.timed_out);
	CU_ASSERT_EQUAL(p.exit_code, -1);
	CU_ASSERT_EQUAL(p.term_signal, SIGTERM);
	CU_ASSERT(p.t_exit_us - p.t_start_us >= 200000);
	CU_ASSERT(fa_clock_mono_us() - t0 < 3000000);
	CU_ASSERT_TRUE(eventually_dead(p.pid));
}

static void exec__sigkill_follows_when_sigterm_is_ignored(void)
{
	int64_t t0 = fa_clock_mono_us();
	struct hx_exec_proc p;

	run(&p, "trap '' TERM; sleep 30; sleep 30", NULL, 100);
	CU_ASSERT_TRUE(p.timed_out);
	CU_ASSERT_EQUAL(p.term_signal, SIGKILL);
	CU_ASSERT(p.t_exit_us - p.t_start_us >= 100000 + HX_EXEC_KILL_GRACE_US);
	CU_ASSERT(fa_clock_mono_us() - t0 < 5000000);
	CU_ASSERT_TRUE(eventually_dead(p.pid));
}

static void exec__timeout_kills_the_whole_group(void)
{
	char *cmd = fa_xasprintf("sleep 30 & echo $! > '%s/bg.pid'; sleep 30", tmpdir);
	struct hx_exec_proc p;
	long bg;

	run(&p, cmd, NULL, 300);
	CU_ASSERT_TRUE(p.timed_out);
	bg = read_pid("bg.pid");
	CU_ASSERT_FATAL(bg > 0);
	CU_ASSERT_TRUE(eventually_dead(bg));
	CU_ASSERT_TRUE(eventually_dead(p.pid));
	free(cmd);
}

static void exec__background_child_dies_with_the_leader(void)
{
	char *cmd = fa_xasprintf("sleep 30 & echo $! > '%s/bg.pid'; exit 0", tmpdir);
	struct hx_exec_proc p;
	long bg;

	run(&p, cmd, NULL, 5000);
	CU_ASSERT_EQUAL(p.exit_code, 0);
	CU_ASSERT_FALSE(p.timed_out);
	bg = read_pid("bg.pid");
	CU_ASSERT_FATAL(bg > 0);
	CU_ASSERT_TRUE(eventually_dead(bg));
	CU_ASSERT_EQUAL(group_alive(p.pid), 0);
	free(cmd);
}

static void exec__stop_ends_a_running_client(void)
{
	struct hx_exec_proc p;
	struct hx_exec_spec spec = { .cmd = "sleep 30" };
	struct fa_err e = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(hx_exec_start(&p, &spec, &e), FA_OK);
	CU_ASSERT_TRUE(p.running);
	CU_ASSERT_FALSE(hx_exec_poll(&p, fa_clock_mono_us()));
	hx_exec_stop(&p, fa_clock_mono_us());
	hx_exec_wait(&p);
	CU_ASSERT_FALSE(p.running);
	CU_ASSERT_TRUE(p.timed_out);
	CU_ASSERT_TRUE(hx_exec_poll(&p, fa_clock_mono_us()));
	CU_ASSERT_TRUE(eventually_dead(p.pid));
}

static void exec__wait_any_wakes_when_a_client_ends(void)
{
	struct hx_exec_proc a, b;
	struct hx_exec_proc *both[] = { &a, &b };
	struct hx_exec_spec slow = { .cmd = "sleep 30" }, quick = { .cmd = "sleep 0.1" };
	struct fa_err e = { { 0 } };
	int64_t t0;

	CU_ASSERT_EQUAL_FATAL(hx_exec_start(&a, &slow, &e), FA_OK);
	CU_ASSERT_EQUAL_FATAL(hx_exec_start(&b, &quick, &e), FA_OK);
	CU_ASSERT(a.pidfd >= 0 && b.pidfd >= 0);
	t0 = fa_clock_mono_us();
	hx_exec_wait_any(both, 2, 20000);
	/* woken by the quick one's end, not by the 20 s timeout */
	CU_ASSERT(fa_clock_mono_us() - t0 < 10000000);
	CU_ASSERT_TRUE(hx_exec_poll(&b, fa_clock_mono_us()));
	CU_ASSERT_EQUAL(b.pidfd, -1); /* closed with the reaping */
	CU_ASSERT_FALSE(hx_exec_poll(&a, fa_clock_mono_us()));
	hx_exec_kill(&a);
	hx_exec_wait(&a);
	CU_ASSERT_EQUAL(a.pidfd, -1);
}

/* Every value a task can have, for the placeholder and variable tests. */
static const struct hx_exec_vars all_vars = {
	.url = "http://h/v1/x?fa_task=t1",
	.method = "POST",
	.body_file = "/d/t1.body",
	.task = "t1",
	.max_attempts = "4",
	.max_retries = "3",
	.max_wait_s = "90",
	.timeout_s = "105",
	.rpm = "60",
	.tpm = "40000",
	.period_s = "60",
	.headers_file = "/d/t1.headers",
	.headers_json = "{\"Idempotency-Key\":\"k 1\"}",
};

static void exec__expand_replaces_every_placeholder_quoted(void)
{
	char *s = hx_exec_expand("c {task} {max_attempts} {max_retries} {max_wait_s} "
	                         "{timeout_s} {rpm} {tpm} {period_s} -H @{headers_file} "
	                         "-X {method} -d @{body_file} {url}",
	                         &all_vars);

	CU_ASSERT_STRING_EQUAL(s, "c 't1' '4' '3' '90' '105' '60' '40000' '60' "
	                          "-H @'/d/t1.headers' -X 'POST' -d @'/d/t1.body' "
	                          "'http://h/v1/x?fa_task=t1'");
	free(s);
}

/* A placeholder the task does not set is '' (an empty word, never a
 * missing one); an unknown or misspelt {word} stays as written. */
static void exec__expand_gives_unset_values_as_empty_words_and_keeps_unknown_ones(void)
{
	struct hx_exec_vars v = { .url = "u", .task = "t1" };
	char *s = hx_exec_expand("x {max_attempts} {rpm}{tpm} {task} {max_attempt} {TASK} "
	                         "{headers} {timeout_s}",
	                         &v);

	CU_ASSERT_STRING_EQUAL(s, "x '' '''' 't1' {max_attempt} {TASK} {headers} ''");
	free(s);
}

/* The variables of a task that sets them all, in order; {url} has none.
 * One the task does not set is a bare name: unset, inherited or not. */
static void exec__vars_env_names_every_value_set(void)
{
	static const char *const want[] = {
		"FAKEAPI_METHOD=POST",
		"FAKEAPI_BODY_FILE=/d/t1.body",
		"FAKEAPI_TASK=t1",
		"FAKEAPI_MAX_ATTEMPTS=4",
		"FAKEAPI_MAX_RETRIES=3",
		"FAKEAPI_MAX_WAIT_S=90",
		"FAKEAPI_TIMEOUT_S=105",
		"FAKEAPI_RPM=60",
		"FAKEAPI_TPM=40000",
		"FAKEAPI_PERIOD_S=60",
		"FAKEAPI_HEADERS_FILE=/d/t1.headers",
		"FAKEAPI_HEADERS={\"Idempotency-Key\":\"k 1\"}",
		NULL,
	};
	struct hx_exec_vars some = { .url = "u", .method = "GET", .timeout_s = "20" };
	char **env = hx_exec_vars_env(&all_vars);
	size_t i;

	for (i = 0; want[i] != NULL && env[i] != NULL; i++)
		CU_ASSERT_STRING_EQUAL(env[i], want[i]);
	CU_ASSERT_PTR_NULL(want[i]);
	CU_ASSERT_PTR_NULL(env[i]);
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
	env = hx_exec_vars_env(&some);
	CU_ASSERT_STRING_EQUAL(env[0], "FAKEAPI_METHOD=GET");
	CU_ASSERT_STRING_EQUAL(env[1], "FAKEAPI_BODY_FILE");
	CU_ASSERT_STRING_EQUAL(env[6], "FAKEAPI_TIMEOUT_S=20");
	CU_ASSERT_STRING_EQUAL(env[7], "FAKEAPI_RPM");
	CU_ASSERT_STRING_EQUAL(env[11], "FAKEAPI_HEADERS");
	CU_ASSERT_PTR_NULL(env[12]);
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* A bare NAME among the extras removes an inherited NAME: a value the
 * task does not set is unset, not empty and not the harness's own. */
static void exec__bare_name_unsets_an_inherited_variable(void)
{
	const char *extra[] = { "FX_EXEC_INHERITED", "FX_EXEC_NEW", "FX_EXEC_SET=1", NULL };
	char **env;
	size_t n_inh = 0, n_new = 0, n_set = 0;

	setenv("FX_EXEC_INHERITED", "from the harness", 1);
	env = hx_exec_env(extra, NULL);
	for (size_t i = 0; env[i] != NULL; i++) {
		n_inh += strncmp(env[i], "FX_EXEC_INHERITED", 17) == 0;
		n_new += strncmp(env[i], "FX_EXEC_NEW", 11) == 0;
		n_set += strcmp(env[i], "FX_EXEC_SET=1") == 0;
	}
	CU_ASSERT_EQUAL(n_inh, 0);
	CU_ASSERT_EQUAL(n_new, 0);
	CU_ASSERT_EQUAL(n_set, 1);
	free(env);
	unsetenv("FX_EXEC_INHERITED");
}

static void exec__headers_file_has_one_line_per_header(void)
{
	struct fa_header h[] = {
		{ .name = "Idempotency-Key", .value = "key-1" },
		{ .name = "X-Trace", .value = "a: b\tc" },
	};
	struct fa_err err = { { 0 } };
	char *path = scratch("t1.headers");
	char *got;

	CU_ASSERT_EQUAL_FATAL(hx_exec_write_headers(path, h, 2, &err), FA_OK);
	got = slurp(path);
	CU_ASSERT_STRING_EQUAL(got, "Idempotency-Key: key-1\nX-Trace: a: b\tc\n");
	free(got);
	CU_ASSERT_EQUAL_FATAL(hx_exec_write_headers(path, NULL, 0, &err), FA_OK);
	got = slurp(path);
	CU_ASSERT_STRING_EQUAL(got, "");
	free(got);
	free(path);
	CU_ASSERT_EQUAL(hx_exec_write_headers("/nonexistent/dir/h", h, 2, &err), FA_EIO);
	CU_ASSERT_STRING_EQUAL(err.msg,
	                       "/nonexistent/dir/h: cannot write: No such file or directory");
}

/* A scenario with task "w" (budget, headers) and task "r" (neither),
 * and pacing when @pacing. */
static struct fa_scenario *task_scenario(bool pacing)
{
	char *text = fa_xasprintf(
	        "{\"id\": \"s\", \"provider\": {\"keys\": {\"k1\": {\"secret\": \"sk-x\", \"user\": \"u\"}}},"
	        " \"routes\": [{\"id\": \"r\", \"method\": \"POST\", \"path\": \"/v1/r\","
	        "   \"responses\": [{\"status\": 200}]}],"
	        " \"harness\": {\"tasks\": ["
	        "   {\"id\": \"w\", \"key\": \"k1\", \"method\": \"POST\", \"path\": \"/v1/r\","
	        "    \"headers\": {\"Idempotency-Key\": \"it's 1\", \"Accept\": \"*/*\"},"
	        "    \"budget\": {\"max_attempts\": 1, \"max_wait_s\": 0}},"
	        "   {\"id\": \"r\", \"key\": \"k1\", \"method\": \"POST\", \"path\": \"/v1/r\"}],"
	        "  \"events\": [{\"at_ms\": 0, \"send\": [\"w\", \"r\"]}]%s}}",
	        pacing ? ", \"pacing\": {\"tpm\": 3000}" : "");
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };

	if (fa_scenario_parse(text, strlen(text), "s.json", &sc, &err) != FA_OK)
		fprintf(stderr, "\ntask scenario: %s\n", err.msg);
	free(text);
	return sc;
}

/* What exec mode tells a task: its budget, its timeout, the published
 * pacing and its headers; what the task or the scenario leaves out is
 * NULL (an unset variable, an empty placeholder). */
static void exec__client_task_carries_budget_timeout_pacing_and_headers(void)
{
	struct fa_scenario *sc = task_scenario(true);
	struct hx_client_task ct;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	hx_client_task_init(&ct, sc, &sc->harness.tasks[0], "U", "B", "H", 15);
	CU_ASSERT_STRING_EQUAL(ct.vars.url, "U");
	CU_ASSERT_STRING_EQUAL(ct.vars.method, "POST");
	CU_ASSERT_STRING_EQUAL(ct.vars.task, "w");
	CU_ASSERT_STRING_EQUAL(ct.vars.body_file, "B");
	CU_ASSERT_STRING_EQUAL(ct.vars.headers_file, "H");
	CU_ASSERT_STRING_EQUAL(ct.vars.max_attempts, "1");
	CU_ASSERT_STRING_EQUAL(ct.vars.max_retries, "0");
	CU_ASSERT_STRING_EQUAL(ct.vars.max_wait_s, "0");
	CU_ASSERT_STRING_EQUAL(ct.vars.timeout_s, "15");
	CU_ASSERT_PTR_NULL(ct.vars.rpm);
	CU_ASSERT_STRING_EQUAL(ct.vars.tpm, "3000");
	CU_ASSERT_STRING_EQUAL(ct.vars.period_s, "60"); /* the default without a quota */
	CU_ASSERT_STRING_EQUAL(ct.vars.headers_json,
	                       "{\"Idempotency-Key\":\"it's 1\",\"Accept\":\"*/*\"}");
	hx_client_task_release(&ct);
	hx_client_task_init(&ct, sc, &sc->harness.tasks[1], "U", "B", "H", 60);
	CU_ASSERT_PTR_NULL(ct.vars.max_attempts);
	CU_ASSERT_PTR_NULL(ct.vars.max_retries);
	CU_ASSERT_PTR_NULL(ct.vars.max_wait_s);
	CU_ASSERT_STRING_EQUAL(ct.vars.timeout_s, "60");
	CU_ASSERT_STRING_EQUAL(ct.vars.headers_json, "{}");
	hx_client_task_release(&ct);
	fa_scenario_free(sc);
	sc = task_scenario(false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	hx_client_task_init(&ct, sc, &sc->harness.tasks[0], "U", "B", "H", 15);
	CU_ASSERT_PTR_NULL(ct.vars.rpm);
	CU_ASSERT_PTR_NULL(ct.vars.tpm);
	CU_ASSERT_PTR_NULL(ct.vars.period_s);
	hx_client_task_release(&ct);
	hx_client_task_release(NULL);
	fa_scenario_free(sc);
}

/* A client started as the harness starts one reads it all from its
 * environment and its command line (a value the scenario does not set is
 * unset even when the harness has it), and the key is in neither the
 * command line nor the headers file. */
static void exec__client_reads_the_task_from_env_and_placeholders_never_the_key_in_argv(void)
{
	struct fa_scenario *sc = task_scenario(true);
	struct hx_client_task ct;
	struct hx_exec_proc p;
	struct fa_err err = { { 0 } };
	char *hdrs = scratch("w.headers");
	char *out = scratch("out");
	char **extra, **env;
	char *cmd, *got;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(hx_exec_write_headers(hdrs, sc->harness.tasks[0].headers,
	                                            sc->harness.tasks[0].n_headers, &err),
	                      FA_OK);
	hx_client_task_init(&ct, sc, &sc->harness.tasks[0], "http://h/v1/r?fa_task=w", "/d/b", hdrs,
	                    15);
	extra = hx_exec_vars_env(&ct.vars);
	env = hx_client_env_new(sc, "http://h", "/d/state", "kc0123", "k1", extra);
	free(extra);
	cmd = hx_exec_expand("printf '%s|%s|%s|%s|' {task} {max_retries} {tpm} {rpm}; "
	                     "printf '%s|%s|%s|%s|%s|' \"$FAKEAPI_MAX_ATTEMPTS\" "
	                     "\"$FAKEAPI_MAX_WAIT_S\" \"$FAKEAPI_TIMEOUT_S\" \"$FAKEAPI_PERIOD_S\" "
	                     "\"${FAKEAPI_RPM-unset}\"; printf '%s|' \"$FAKEAPI_HEADERS\"; "
	                     "cat {headers_file}",
	                     &ct.vars);
	CU_ASSERT_PTR_NULL(strstr(cmd, "sk-x"));
	setenv("FAKEAPI_RPM", "999", 1); /* the harness's own: never the task's */
	run(&p, cmd, (const char *const *)env, 5000);
	unsetenv("FAKEAPI_RPM");
	got = slurp(out);
	CU_ASSERT_EQUAL(p.exit_code, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, "w|0|3000||1|0|15|60|unset|"
	                            "{\"Idempotency-Key\":\"it's 1\",\"Accept\":\"*/*\"}|"
	                            "Idempotency-Key: it's 1\nAccept: */*\n");
	free(got);
	got = slurp(hdrs);
	CU_ASSERT_PTR_NULL(strstr(got, "sk-x"));
	free(got);
	free(cmd);
	hx_client_env_free(env);
	hx_client_task_release(&ct);
	free(hdrs);
	free(out);
	fa_scenario_free(sc);
}

void test_exec_register(void)
{
	CU_pSuite s = CU_add_suite("exec", setup, teardown);

	if (s == NULL)
		return;
	CU_add_test(s, "exec__quote_wraps_in_single_quotes", exec__quote_wraps_in_single_quotes);
	CU_add_test(s, "exec__quote_escapes_a_single_quote", exec__quote_escapes_a_single_quote);
	CU_add_test(s, "exec__expand_replaces_the_three_placeholders",
	            exec__expand_replaces_the_three_placeholders);
	CU_add_test(s, "exec__expand_leaves_unknown_braces_as_written",
	            exec__expand_leaves_unknown_braces_as_written);
	CU_add_test(s, "exec__expand_with_empty_values_gives_empty_words",
	            exec__expand_with_empty_values_gives_empty_words);
	CU_add_test(s, "exec__task_url_appends_fa_task_as_query_or_parameter",
	            exec__task_url_appends_fa_task_as_query_or_parameter);
	CU_add_test(s, "exec__quoted_values_reach_the_client_verbatim",
	            exec__quoted_values_reach_the_client_verbatim);
	CU_add_test(s, "exec__environment_is_set_and_replaces_inherited_names",
	            exec__environment_is_set_and_replaces_inherited_names);
	CU_add_test(s, "exec__each_client_gets_a_fresh_marker_in_its_environment",
	            exec__each_client_gets_a_fresh_marker_in_its_environment);
	CU_add_test(s, "exec__client_env_puts_the_extras_then_a_fresh_marker_on_top",
	            exec__client_env_puts_the_extras_then_a_fresh_marker_on_top);
	CU_add_test(s, "exec__environment_keeps_a_marker_the_harness_inherited_out",
	            exec__environment_keeps_a_marker_the_harness_inherited_out);
	CU_add_test(s, "exec__process_that_left_its_group_dies_with_the_client",
	            exec__process_that_left_its_group_dies_with_the_client);
	CU_add_test(s, "exec__exit_status_is_recorded", exec__exit_status_is_recorded);
	CU_add_test(s, "exec__missing_command_exits_127", exec__missing_command_exits_127);
	CU_add_test(s, "exec__stdin_is_empty_and_stderr_is_captured",
	            exec__stdin_is_empty_and_stderr_is_captured);
	CU_add_test(s, "exec__client_inherits_no_descriptor_above_2",
	            exec__client_inherits_no_descriptor_above_2);
	CU_add_test(s, "exec__timeout_stops_a_hung_sleep", exec__timeout_stops_a_hung_sleep);
	CU_add_test(s, "exec__sigkill_follows_when_sigterm_is_ignored",
	            exec__sigkill_follows_when_sigterm_is_ignored);
	CU_add_test(s, "exec__timeout_kills_the_whole_group", exec__timeout_kills_the_whole_group);
	CU_add_test(s, "exec__background_child_dies_with_the_leader",
	            exec__background_child_dies_with_the_leader);
	CU_add_test(s, "exec__stop_ends_a_running_client", exec__stop_ends_a_running_client);
	CU_add_test(s, "exec__expand_replaces_every_placeholder_quoted",
	            exec__expand_replaces_every_placeholder_quoted);
	CU_add_test(s, "exec__expand_gives_unset_values_as_empty_words_and_keeps_unknown_ones",
	            exec__expand_gives_unset_values_as_empty_words_and_keeps_unknown_ones);
	CU_add_test(s, "exec__vars_env_names_every_value_set",
	            exec__vars_env_names_every_value_set);
	CU_add_test(s, "exec__bare_name_unsets_an_inherited_variable",
	            exec__bare_name_unsets_an_inherited_variable);
	CU_add_test(s, "exec__wait_any_wakes_when_a_client_ends",
	            exec__wait_any_wakes_when_a_client_ends);
	CU_add_test(s, "exec__headers_file_has_one_line_per_header",
	            exec__headers_file_has_one_line_per_header);
	CU_add_test(s, "exec__client_task_carries_budget_timeout_pacing_and_headers",
	            exec__client_task_carries_budget_timeout_pacing_and_headers);
	CU_add_test(s,
	            "exec__client_reads_the_task_from_env_and_placeholders_never_the_key_in_argv",
	            exec__client_reads_the_task_from_env_and_placeholders_never_the_key_in_argv);
}
