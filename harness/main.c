/* main.c -- fakeapi-harness: the command line around hx_run_suite(). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "client_log.h"
#include "clock.h"
#include "exec.h"
#include "grade.h"
#include "import.h"
#include "known_failing.h"
#include "livefeed.h"
#include "log.h"
#include "report.h"
#include "report_facts.h"
#include "result.h"
#include "run.h"
#include "scenario.h"
#include "stray.h"
#include "suggest.h"
#include "suite.h"
#include "timescale.h"
#include "validate.h"

#define PROG "fakeapi-harness"

/* Largest seed: it must survive a JSON number (a double) exactly. */
#define MAX_SEED 9007199254740991ULL

#define DEFAULT_SUITE "five-step/suite.json"

/* The default client, relative to the folder of the harness binary. */
#define DEFAULT_CLIENT "clients/reference"
/* ... and where `make install` puts it, from the program's folder */
#define DEFAULT_CLIENT_INSTALLED "../libexec/fakeapi/reference"

static const char usage_text[] =
        "NAME\n"
        "    fakeapi-harness - grade an HTTP retry client against a fake provider\n"
        "\n"
        "SYNOPSIS\n"
        "    fakeapi-harness run [--client COMMAND | --exec TEMPLATE] [OPTIONS]\n"
        "                        [SUITE_OR_SCENARIO]\n"
        "    fakeapi-harness replay SCENARIO [--client COMMAND | --exec TEMPLATE]\n"
        "                        [OPTIONS]\n"
        "    fakeapi-harness import-har [--host HOST]... [--path-prefix P]...\n"
        "                        [--id ID] [--no-harness] [-o FILE] FILE.har\n"
        "    fakeapi-harness import-journal [--path-prefix P]... [--id ID]\n"
        "                        [--no-harness] [-o FILE] FILE.jsonl\n"
        "    fakeapi-harness check FILE...\n"
        "    fakeapi-harness -h|--help | -V|--version\n"
        "\n"
        "DESCRIPTION\n"
        "    Runs each scenario of a suite (a suite.json, the folder holding one,\n"
        "    or one scenario file) against the client: a fake provider on an\n"
        "    ephemeral 127.0.0.1 port answers as the scenario says, the\n"
        "    scenario's events give the client its tasks, and every check is\n"
        "    computed from the provider's journal of attempts. Without a path it\n"
        "    runs the built-in five-step suite (scenarios/five-step/suite.json\n"
        "    of the checkout, or PREFIX/share/fakeapi/scenarios once\n"
        "    installed); without --client or --exec it runs the reference\n"
        "    client beside the program\n"
        "    (clients/reference, or PREFIX/libexec/fakeapi/reference), so\n"
        "    `fakeapi-harness run` alone grades the reference client on the\n"
        "    five-step suite.\n"
        "\n"
        "    Stdio mode (--client) starts /bin/sh -c COMMAND once per scenario,\n"
        "    in its own process group, and speaks JSON lines with it\n"
        "    (docs/client-protocol.md): the client prints hello first (within\n"
        "    10 s, or the run stops with exit 2), then reads task, cancel and\n"
        "    shutdown lines on stdin and reports action_sent, action_result,\n"
        "    retry_scheduled and result lines on stdout; stderr is its own log\n"
        "    (the report shows its tail when the client failed). A task is due\n"
        "    within its deadline_ms (the task's timeout, as below); a line the\n"
        "    harness cannot use is reported as a protocol error. When the\n"
        "    scenario is over the client gets shutdown, then SIGKILL on its\n"
        "    group 5 s later.\n"
        "\n"
        "    Exec mode (--exec) starts one process per task with /bin/sh -c\n"
        "    TEMPLATE, in its own process group. In TEMPLATE, {url} (the task's\n"
        "    URL; it carries fa_task=ID so the provider can tell tasks apart),\n"
        "    {method}, {task}, {body_file} (a file holding the task's JSON body,\n"
        "    empty when it has none), {headers_file} (one \"Name: value\" line\n"
        "    per task header, as curl -H @FILE reads it), {max_attempts},\n"
        "    {max_retries}, {max_wait_s} (the task's budget), {timeout_s} (its\n"
        "    timeout, below), {rpm}, {tpm} and {period_s} (the published\n"
        "    pacing) are replaced by shell-quoted values ('' when the task sets\n"
        "    none); any other {...} is left as written. Exit status 0 means the task\n"
        "    succeeded. stdin is /dev/null. A client that outlives its task's\n"
        "    timeout gets SIGTERM, then SIGKILL one second later; whatever is\n"
        "    left of its process group when it exits is killed.\n"
        "\n"
        "    Leaving the process group does not help: every client process\n"
        "    carries FAKEAPI_CLIENT_NONCE (a random marker) in its environment,\n"
        "    and when the client ends, every process still carrying its marker\n"
        "    (setsid, a double fork) is killed too.\n"
        "\n"
        "    A task's timeout is its timeout_s, else its budget's max_wait_s +\n"
        "    15 s, else the scenario's timeout_s. The client's environment gets\n"
        "    FAKEAPI_URL (base URL), FAKEAPI_KEY (an API key: use it from the\n"
        "    environment, never put it in a command line; in exec mode the\n"
        "    task's own), FAKEAPI_KEY_<ID> for every key of the scenario (stdio\n"
        "    mode; a task line names its variable), in exec mode the same\n"
        "    values as the placeholders: FAKEAPI_TASK, FAKEAPI_METHOD,\n"
        "    FAKEAPI_BODY_FILE, FAKEAPI_HEADERS_FILE, FAKEAPI_HEADERS (the\n"
        "    headers as a JSON object), FAKEAPI_MAX_ATTEMPTS,\n"
        "    FAKEAPI_MAX_RETRIES, FAKEAPI_MAX_WAIT_S, FAKEAPI_TIMEOUT_S,\n"
        "    FAKEAPI_RPM, FAKEAPI_TPM, FAKEAPI_PERIOD_S (unset when the task\n"
        "    sets none), CLIENT_STATE_DIR (a fresh folder per\n"
        "    scenario) and FAKEAPI_CLIENT_NONCE (above). The provider answers\n"
        "    no /_fakeapi/ endpoint to the client: such a request is an attempt\n"
        "    like any other.\n"
        "\n"
        "    A write task (POST, PUT or PATCH to a route with an effect) gets a\n"
        "    unique client reference in its JSON body, so its attempts are told\n"
        "    apart without trusting the client. A scenario's kill event SIGKILLs\n"
        "    the client (stdio mode: its process group; exec mode: the task's)\n"
        "    and reaps it, then lets the provider's held answers go ahead; with\n"
        "    restart, the client starts again with the same CLIENT_STATE_DIR and\n"
        "    gets every unfinished task again (exec mode: the killed task's\n"
        "    command runs again).\n"
        "\n"
        "    replay SCENARIO is run with the file required (a suite works too):\n"
        "    the same options and reports. import-har turns a HAR 1.2 capture,\n"
        "    import-journal a journal fakeapi recorded, into a scenario (stdout,\n"
        "    or -o FILE) that answers the same way: routes per method and path\n"
        "    template, the responses in order, a task per request sent at its\n"
        "    original offset; secret headers are dropped, credential-like query\n"
        "    parameters and body members redacted (docs/import.md).\n"
        "\n"
        "    check FILE... loads each scenario, suite.json or suite folder as run\n"
        "    does and runs nothing: \"FILE: ok (suite ID, N scenarios)\" or\n"
        "    \"FILE: ok (scenario ID)\" on stdout per good FILE, the loader's\n"
        "    message on stderr per bad one; exit 0 when all are good, else 2\n"
        "    (docs/scenario-format.md, EDITORS).\n"
        "\n"
        "OPTIONS\n"
        "    --client COMMAND\n"
        "        Stdio mode: the client program, e.g.\n"
        "        --client 'build/clients/reference'\n"
        "    --exec TEMPLATE\n"
        "        Exec mode: the command run for each task, e.g.\n"
        "        --exec 'curl -sS -f --retry 4 -H \"Authorization: Bearer $FAKEAPI_KEY\" {url}'\n"
        "        Give --client or --exec, not both.\n"
        "    --report-json FILE\n"
        "        Also write the JSON report to FILE (\"-\" = stdout; the text\n"
        "        report then goes to stderr).\n"
        "    --junit FILE\n"
        "        Also write JUnit XML: a testsuite per scenario, a testcase per\n"
        "        check (\"-\" = stdout, as above).\n"
        "    --html FILE\n"
        "        Also write an HTML page for people (\"-\" = stdout, as above):\n"
        "        the summary, why, the profile, and per scenario every check\n"
        "        with its evidence and a timeline of its attempts (a lane per\n"
        "        task, a mark per attempt coloured by status, faults in a\n"
        "        diamond, announced pauses shaded; docs/report.md). One file,\n"
        "        no script, no assets. One report at most goes to stdout.\n"
        "        Each report's folder must exist and be writable: that is\n"
        "        checked before any scenario runs.\n"
        "    --min-level L1|L2|L3|L4\n"
        "        Exit 1 unless the client reaches this level (l2 and 2 mean L2).\n"
        "    --suite PATH\n"
        "        The suite or scenario to run, as the positional\n"
        "        SUITE_OR_SCENARIO (the gate's spelling): a suite.json, the\n"
        "        folder holding one, or a scenario file.\n"
        "    --strict\n"
        "        Count recommended checks (docs/checks.md) as required: their\n"
        "        failures make the exit code 1 and they count for the level,\n"
        "        whatever a scenario's expect says.\n"
        "    --known-failing FILE\n"
        "        Checks the client is known to fail: one check id per line,\n"
        "        optionally followed by '# reason'; blank lines and lines\n"
        "        starting with '#' are comments. A listed check that fails is\n"
        "        reported as known failing and does not make the exit code 1;\n"
        "        a listed check that passes does (\"known-failing entry ID\n"
        "        passes now: remove it from FILE\"), so the list only shrinks;\n"
        "        a listed check the run did not show is fine. A known failing\n"
        "        check still keeps its level from being reached, and\n"
        "        --min-level still applies. An unknown or repeated id is exit 2\n"
        "        (FILE:LINE: unknown check \"x\").\n"
        "    --repeat N\n"
        "        Run the suite N times, 1..1000, with seeds S, S+1, ... (S from\n"
        "        --seed or the clock), a progress line per run: the reports\n"
        "        add each check's verdicts over the runs (\"wait.jitter 9/10\n"
        "        pass, 1 fail\"); the level is the lowest of the runs, the exit\n"
        "        code the worst; the scenarios shown are the last run's. A run\n"
        "        that exits 2 ends the repeat.\n"
        "    --time-scale S\n"
        "        Run on virtual time, S times faster than real time: 1 (the\n"
        "        default, real time) or 2..20. The provider's clock, everything\n"
        "        it stamps, announces (Retry-After, reset instants) and waits on,\n"
        "        and the client's clock through libfaketime (Debian's faketime\n"
        "        package) run on one timeline, so a Retry-After of 120 s takes\n"
        "        6 s at S = 20 with the same verdicts. Every time in the reports\n"
        "        is virtual. The client must follow the scaled clock: a stdio\n"
        "        client answers the clock probe (docs/client-protocol.md); an\n"
        "        exec template's program must be dynamically linked and not a Go\n"
        "        program (an interpreter is probed too). One that does not is\n"
        "        refused, exit 2. docs/time-scale.md says why 20 is the largest\n"
        "        and 2 the smallest.\n"
        "    --seed N\n"
        "        Seed of the provider's random choices, 0..2^53-1. Default: from\n"
        "        the clock; the report always prints it so a run can be replayed.\n"
        "    --jobs N\n"
        "        Scenarios run at once, 1..64 (default 2).\n"
        "    --journal-dir DIR\n"
        "        Write each scenario's journal to DIR/<scenario id>.jsonl\n"
        "        (hash-chained; check with `fakeapi verify-journal`).\n"
        "    --journal -\n"
        "        Watch the run live: every attempt of every scenario on stdout\n"
        "        as the provider completes it, one JSON line each: the\n"
        "        journal's line with a first member \"scenario\" (the scenario\n"
        "        id) put in front, {\"scenario\": ID, \"seq\": 1, ...}. Each line\n"
        "        is whole; with --jobs > 1 the scenarios' lines interleave.\n"
        "        The lines never hold the provider up: a reader of stdout that\n"
        "        falls 100000 lines (8 MiB) behind misses the newer ones (a\n"
        "        warning on stderr counts them), and at the end it gets 2 s to\n"
        "        take the rest. The text report then goes to stderr; not with\n"
        "        a report on stdout (-). --journal-dir files and the\n"
        "        report are the same with or without it.\n"
        "    --follow\n"
        "        As --journal -, but one line of text per attempt, the\n"
        "        scenario id in brackets first:\n"
        "        [ID] +ARRIVAL  #SEQ  TASK  METHOD PATH  STATUS  FAULT ...\n"
        "        then the quota decision, `pause until +T (scope S)` after an\n"
        "        answer that announced a pause, and how it was delivered\n"
        "        (times in seconds since the scenario's provider started).\n"
        "    -q, --quiet\n"
        "        No progress lines on stderr.\n"
        "    -v, --verbose\n"
        "        List the N/A checks in the text report too, each with why it\n"
        "        was not judged (by default they are counted, not listed; the\n"
        "        JSON and JUnit reports are the same either way).\n"
        "    -h, --help\n"
        "        This text.\n"
        "    --version\n"
        "        Print the version.\n"
        "\n"
        "EXIT STATUS\n"
        "    0  no required check failed (but those --known-failing lists) and\n"
        "       at least one passed (and the level asked with --min-level was\n"
        "       reached); with --repeat, in every run\n"
        "    1  a check failed, a --known-failing entry passes now, none\n"
        "       passed, or the level was not reached\n"
        "    2  usage, scenario or client-start error (no hello, a protocol\n"
        "       version the harness does not know), a report that cannot be\n"
        "       written, or the run was interrupted (SIGINT, SIGTERM: the\n"
        "       scenarios cut short are not graded); the message names the cause\n"
        "\n"
        "ENVIRONMENT\n"
        "    FAKEAPI_SCENARIOS  folder holding five-step/suite.json, the default\n"
        "                       suite (otherwise found next to the program,\n"
        "                       built or installed)\n"
        "    FAKEAPI_LOG        error|warn|info|debug: the harness's own log level\n"
        "    FAKEAPI_PROGRESS_S  seconds between the progress lines of a scenario\n"
        "                       that runs long (\"[3/19] ID: waiting for t1\n"
        "                       (Retry-After 120 s, ...)\"), 0.1..3600, default 10\n"
        "    FAKEAPI_LIBFAKETIME  the libfaketime library --time-scale preloads into\n"
        "                       clients (default: Debian's libfaketimeMT.so.1)\n";

enum {
	OPT_EXEC = 256,
	OPT_CLIENT,
	OPT_REPORT_JSON,
	OPT_JUNIT,
	OPT_HTML,
	OPT_MIN_LEVEL,
	OPT_SUITE,
	OPT_SEED,
	OPT_JOBS,
	OPT_JOURNAL_DIR,
	OPT_VERSION,
	OPT_STRICT,
	OPT_KNOWN_FAILING,
	OPT_REPEAT,
	OPT_JOURNAL,
	OPT_FOLLOW,
	OPT_TIME_SCALE,
};

/* What the command line asked for. */
struct cli {
	const char *exec_template;
	const char *client_cmd;
	const char *report_json;
	const char *junit;
	const char *html;
	const char *journal_dir;
	bool journal_stdout; /* --journal -: live JSONL on stdout */
	bool follow;         /* --follow: live text on stdout */
	const char *path;
	const char *known_failing; /* --known-failing FILE, or NULL */
	int min_level;
	unsigned repeat; /* --repeat N, 0 = not given */
	bool strict;
	uint64_t seed;
	bool has_seed;
	unsigned jobs;
	bool quiet;
	bool verbose;      /* -v: the text report lists N/A checks */
	double time_scale; /* --time-scale S; 1 = real time */
	char *clock_check; /* owned: how the client's clock was checked */
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see " PROG " --help)\n", stderr);
	return 2;
}

/* A whole decimal number in @lo..@hi. */
static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* --time-scale's value: 1, or a number in [FA_CLOCK_SCALE_MIN, FA_CLOCK_SCALE_MAX]. */
static bool parse_scale(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 ||
	    !(v == 1.0 || (v >= FA_CLOCK_SCALE_MIN && v <= FA_CLOCK_SCALE_MAX)))
		return false;
	*out = v;
	return true;
}

/* Why a number past the largest scale is refused (docs/time-scale.md). */
static const char *scale_why(const char *s)
{
	double v = strtod(s, NULL);

	if (v > FA_CLOCK_SCALE_MAX)
		return ": a larger scale would multiply the scheduler's wake-up error past "
		       "the timing checks' tolerances (docs/time-scale.md)";
	if (v > 1.0 && v < FA_CLOCK_SCALE_MIN)
		return ": below 2 the clock check cannot tell a scaled sleep from a real "
		       "one (docs/time-scale.md)";
	return "";
}

/* The report options of @c, in the order their reports are written. */
static const char *const report_opts[] = { "--report-json", "--junit", "--html" };

static const char *report_path(const struct cli *c, size_t k)
{
	const char *paths[] = { c->report_json, c->junit, c->html };

	return paths[k];
}

static bool on_stdout(const char *path)
{
	return path != NULL && strcmp(path, "-") == 0;
}

/* How many reports @c sends to stdout; *@first names the first one's
 * option. */
static size_t stdout_reports(const struct cli *c, const char **first)
{
	size_t n = 0;

	*first = NULL;
	for (size_t k = 0; k < sizeof(report_opts) / sizeof(report_opts[0]); k++) {
		if (!on_stdout(report_path(c, k)))
			continue;
		if (n++ == 0)
			*first = report_opts[k];
	}
	return n;
}

/* The option of the report on stdout after the one of option @first. */
static const char *stdout_report_after(const struct cli *c, const char *first)
{
	bool seen = false;

	for (size_t k = 0; k < sizeof(report_opts) / sizeof(report_opts[0]); k++) {
		if (seen && on_stdout(report_path(c, k)))
			return report_opts[k];
		seen = seen || strcmp(report_opts[k], first) == 0;
	}
	return "?";
}

static int parse_args(int argc, char **argv, struct cli *c)
{
	static const struct option longopts[] = {
		{ "exec", required_argument, NULL, OPT_EXEC },
		{ "client", required_argument, NULL, OPT_CLIENT },
		{ "report-json", required_argument, NULL, OPT_REPORT_JSON },
		{ "junit", required_argument, NULL, OPT_JUNIT },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "min-level", required_argument, NULL, OPT_MIN_LEVEL },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "journal-dir", required_argument, NULL, OPT_JOURNAL_DIR },
		{ "journal", required_argument, NULL, OPT_JOURNAL },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "known-failing", required_argument, NULL, OPT_KNOWN_FAILING },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "time-scale", required_argument, NULL, OPT_TIME_SCALE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ NULL, 0, NULL, 0 },
	};
	const char *first;
	uint64_t v;
	int ch;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":qhvV", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_EXEC:
			if (optarg[0] == '\0')
				return usage_error("--exec: the template is empty");
			c->exec_template = optarg;
			break;
		case OPT_CLIENT:
			if (optarg[0] == '\0')
				return usage_error("--client: the command is empty");
			c->client_cmd = optarg;
			break;
		case OPT_REPORT_JSON: c->report_json = optarg; break;
		case OPT_JUNIT: c->junit = optarg; break;
		case OPT_HTML: c->html = optarg; break;
		case OPT_JOURNAL_DIR: c->journal_dir = optarg; break;
		case OPT_JOURNAL:
			if (strcmp(optarg, "-") != 0)
				return usage_error("--journal: expected - (stdout), got '%s'; "
				                   "for files give --journal-dir DIR",
				                   optarg);
			c->journal_stdout = true;
			break;
		case OPT_FOLLOW: c->follow = true; break;
		case OPT_MIN_LEVEL:
			/* L2, l2 and 2 alike */
			if (!parse_u64(optarg[0] == 'L' || optarg[0] == 'l' ? optarg + 1 : optarg,
			               1, 4, &v))
				return usage_error("--min-level: expected L1..L4, got '%s'",
				                   optarg);
			c->min_level = (int)v;
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, 0, MAX_SEED, &v))
				return usage_error("--seed: expected an integer "
				                   "0..%llu, got '%s'",
				                   MAX_SEED, optarg);
			c->seed = v;
			c->has_seed = true;
			break;
		case OPT_JOBS:
			if (!parse_u64(optarg, 1, 64, &v))
				return usage_error("--jobs: expected an integer 1..64, "
				                   "got '%s'",
				                   optarg);
			c->jobs = (unsigned)v;
			break;
		case OPT_STRICT: c->strict = true; break;
		case OPT_KNOWN_FAILING:
			if (optarg[0] == '\0')
				return usage_error("--known-failing: the file name is empty");
			c->known_failing = optarg;
			break;
		case OPT_REPEAT:
			if (!parse_u64(optarg, 1, HX_REPEAT_MAX, &v))
				return usage_error("--repeat: expected an integer 1..%d, got '%s'",
				                   HX_REPEAT_MAX, optarg);
			c->repeat = (unsigned)v;
			break;
		case OPT_TIME_SCALE:
			if (!parse_scale(optarg, &c->time_scale))
				return usage_error("--time-scale: expected 1 or a number %g..%g, "
				                   "got '%s'%s",
				                   FA_CLOCK_SCALE_MIN, FA_CLOCK_SCALE_MAX, optarg,
				                   scale_why(optarg));
			break;
		case 'q': c->quiet = true; break;
		case 'v': c->verbose = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		case 'V':
		case OPT_VERSION: printf("%s %s\n", PROG, HX_VERSION); return 0;
		case OPT_SUITE:
			if (optarg[0] == '\0')
				return usage_error("--suite: the path is empty");
			c->path = optarg;
			break;
		case ':': return usage_error("%s: missing its argument", argv[optind - 1]);
		default:
			if (optopt != 0)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc && c->path != NULL)
		return usage_error("one suite or scenario at a time: --suite %s and '%s'", c->path,
		                   argv[optind]);
	if (optind < argc)
		c->path = argv[optind++];
	if (optind < argc)
		return usage_error("one suite or scenario at a time, got also '%s'", argv[optind]);
	if (c->client_cmd != NULL && c->exec_template != NULL)
		return usage_error("--client and --exec: one client at a time, "
		                   "stdio or exec");
	if (c->has_seed && c->repeat > 1 && c->seed > MAX_SEED - (c->repeat - 1))
		return usage_error("--repeat %u from --seed %llu: the last seed would pass %llu",
		                   c->repeat, (unsigned long long)c->seed, MAX_SEED);
	if (stdout_reports(c, &first) > 1)
		return usage_error("%s - and %s -: one report on stdout at a time, give the "
		                   "other a file",
		                   first, stdout_report_after(c, first));
	if ((c->journal_stdout || c->follow) && stdout_reports(c, &first) > 0)
		return usage_error("%s and a report on stdout: the live lines keep stdout, "
		                   "give the report a file",
		                   c->follow ? "--follow" : "--journal -");
	return -1;
}

/* Whether a report can be written at @path ("-" always can): not a
 * folder, in a folder that exists and takes files (a report is renamed
 * into place from a temporary file beside it, so the folder must take
 * one). Says why not on stderr, naming the option @opt. Checked before
 * the run, so that a typo costs no suite run. */
static bool report_writable(const char *opt, const char *path)
{
	struct stat st;
	char *copy, *dir;
	int e = 0;

	if (strcmp(path, "-") == 0)
		return true;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			e = EISDIR;
	} else if (errno != ENOENT && lstat(path, &st) != 0) {
		e = errno; /* a dangling symlink is fine: it is replaced */
	}
	if (e == 0) {
		copy = fa_xstrdup(path);
		dir = dirname(copy);
		if (stat(dir, &st) != 0)
			e = errno;
		else if (!S_ISDIR(st.st_mode))
			e = ENOTDIR;
		else if (access(dir, W_OK | X_OK) != 0)
			e = errno;
		free(copy);
	}
	if (e != 0)
		fprintf(stderr, PROG ": %s: cannot write %s: %s\n", opt, path, strerror(e));
	return e == 0;
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The folder of the running program, or NULL. A new string. */
static char *exe_dir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	return fa_xstrdup(exe);
}

/* The reference client beside the program: built (build/clients/reference
 * next to build/fakeapi-harness) or installed (PREFIX/libexec/fakeapi/reference
 * for PREFIX/bin/fakeapi-harness), as a command for sh -c; NULL when it is
 * in neither place. A new string. */
static char *default_client(void)
{
	static const char *const places[] = { DEFAULT_CLIENT, DEFAULT_CLIENT_INSTALLED };
	char *dir = exe_dir(), *cmd = NULL;

	for (size_t i = 0; dir != NULL && cmd == NULL && i < sizeof(places) / sizeof(places[0]);
	     i++) {
		char *path = fa_xasprintf("%s/%s", dir, places[i]);

		if (access(path, X_OK) == 0)
			cmd = hx_exec_quote(path);
		free(path);
	}
	free(dir);
	return cmd;
}

/* The built-in suite: FAKEAPI_SCENARIOS, else the scenarios folder of the
 * checkout the program was built in (build/ or build/asan/), else the one
 * installed beside it (PREFIX/share/fakeapi/scenarios for
 * PREFIX/bin/fakeapi-harness). A new string or NULL. */
static char *default_suite(void)
{
	const char *env = getenv("FAKEAPI_SCENARIOS");
	static const char *const ups[] = { "/../scenarios/", "/../../scenarios/",
		                           "/../share/fakeapi/scenarios/" };
	char real[PATH_MAX];
	char *exe, *found = NULL;

	if (env != NULL && *env != '\0')
		return fa_xasprintf("%s/%s", env, DEFAULT_SUITE);
	exe = exe_dir();
	for (size_t i = 0; exe != NULL && found == NULL && i < sizeof(ups) / sizeof(ups[0]); i++) {
		char *p = fa_xasprintf("%s%s%s", exe, ups[i], DEFAULT_SUITE);

		if (readable(p) && realpath(p, real) != NULL)
			found = fa_xstrdup(real);
		free(p);
	}
	free(exe);
	return found;
}

static void on_signal(int sig)
{
	(void)sig;
	hx_run_interrupt();
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Print a scenario's error; a client's words in it are already plain, the
 * rest (file names) is made so too. */
static void print_error(const char *msg)
{
	char *plain = hx_client_log_plain(msg, strlen(msg));

	fprintf(stderr, PROG ": %s\n", plain);
	free(plain);
}

/* Print the errors of @res's scenarios, each cause once: one scenario's
 * as it is, a cause many share with how many and the first of them. */
static void print_errors(const struct hx_run_result *res)
{
	struct hx_error_group *g = fa_xcalloc(res->n_scenarios + 1, sizeof(*g));
	size_t n = hx_report_error_groups(res, g);

	for (size_t k = 0; k < n; k++) {
		const struct hx_scenario_result *first = &res->scenarios[g[k].first];
		char *msg;

		if (g[k].n == 1) {
			print_error(first->error);
			continue;
		}
		msg = fa_xasprintf("%s (%zu scenarios, the first %s)", g[k].cause, g[k].n,
		                   first->sc != NULL && first->sc->file != NULL ? first->sc->file
		                                                                : "?");
		print_error(msg);
		free(msg);
	}
	free(g);
}

/*
 * Run @suite once per repetition (once without --repeat) into *@res, which
 * gets the last run (release it with hx_run_result_release); each earlier
 * run is tallied into @rep and released. Returns false, the reason
 * printed, when a run could not start at all (then *@res holds nothing,
 * and the exit code is 2).
 */
static bool run_all(const struct cli *c, const struct fa_suite *suite,
                    const struct hx_run_opts *base, struct hx_repeat *rep,
                    struct hx_run_result *res)
{
	struct hx_run_opts opts = *base;
	struct hx_run_result next;
	struct fa_err err = { { 0 } };
	bool have = false;

	for (unsigned k = 0; k < rep->planned; k++) {
		if (k > 0 && hx_run_interrupted())
			break; /* the signal came between two runs */
		opts.seed = c->seed + k;
		if (c->repeat > 0 && !c->quiet)
			fprintf(stderr, PROG ": run %u of %u, seed %" PRIu64 "\n", k + 1,
			        rep->planned, opts.seed);
		if (hx_run_suite(suite, &opts, &next, &err) != FA_OK) {
			fprintf(stderr, PROG ": %s\n", err.msg);
			if (have)
				hx_run_result_release(res);
			return false;
		}
		print_errors(&next);
		hx_repeat_add(rep, &next);
		if (c->repeat > 0 && !c->quiet)
			fprintf(stderr, PROG ": run %u of %u: level L%d, exit code %d\n", k + 1,
			        rep->planned, next.level, next.interrupted ? 2 : next.exit_code);
		if (have)
			hx_run_result_release(res);
		*res = next;
		have = true;
		if (next.interrupted || next.exit_code == 2)
			break;
	}
	if (have && rep->runs < rep->planned && hx_run_interrupted() && !res->interrupted) {
		res->interrupted = true;
		res->exit_code = 2;
	}
	return have;
}

/* Run the suite at @path; returns the exit code. */
static int run(const struct cli *c, const char *path)
{
	struct fa_suite *suite = NULL;
	struct hx_known_failing *kf = NULL;
	struct hx_run_result res;
	struct hx_repeat rep;
	struct hx_run_opts opts = {
		.exec_template = c->exec_template,
		.client_cmd = c->client_cmd,
		.journal_dir = c->journal_dir,
		.seed = c->seed,
		.clock_check = c->clock_check,
		.jobs = c->jobs,
		.min_level = c->min_level,
		.progress = c->quiet ? NULL : stderr,
		.strict = c->strict,
		.live = NULL, /* set below, once the suite loads */
		.live_text = c->follow,
	};
	struct fa_err err = { { 0 } };
	const char *first;
	bool to_stdout = stdout_reports(c, &first) > 0 || c->journal_stdout || c->follow;
	int code = 2;

	hx_repeat_init(&rep, c->repeat > 0 ? c->repeat : 1, c->seed);
	if (c->known_failing != NULL &&
	    hx_known_failing_load(c->known_failing, &kf, &err) != FA_OK) {
		print_error(err.msg);
		goto out;
	}
	opts.known_failing = kf;
	if (hx_suite_load(path, &suite, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		goto out;
	}
	if (!c->quiet)
		fprintf(stderr,
		        PROG ": suite %s (version %s), %zu scenario%s, seed %" PRIu64 "%s\n",
		        suite->id, suite->version[0] ? suite->version : "-", suite->n_scenarios,
		        suite->n_scenarios == 1 ? "" : "s", c->seed,
		        c->repeat > 1 ? " and up" : "");
	if (!c->quiet && c->time_scale > 1.0)
		fprintf(stderr,
		        PROG ": time scale %g: the provider and the client run on "
		             "virtual time; client clock: %s\n",
		        c->time_scale, c->clock_check);
	if (c->journal_stdout || c->follow)
		opts.live = fa_livefeed_new(
		        STDOUT_FILENO, 0, 0, PROG,
		        c->journal_dir != NULL
		                ? "the --journal-dir files and the report are complete"
		                : "the report is complete");
	if (!run_all(c, suite, &opts, &rep, &res))
		goto out;
	/* the live lines end before the report: a stuck reader gets a
	 * bounded drain, then the run goes on without it */
	fa_livefeed_close(opts.live, FA_LIVEFEED_DRAIN_MS);
	if (c->repeat > 0) {
		/* the whole repeat's verdict: the lowest level, the worst code */
		res.repeat = &rep;
		res.level = rep.level;
		if (!res.interrupted)
			res.exit_code = rep.exit_code;
	}
	if (res.interrupted)
		fputs(PROG ": interrupted\n", stderr);
	/* a machine report or the live lines on stdout keep stdout to themselves */
	hx_report_text(to_stdout ? stderr : stdout, &res, c->verbose);
	fflush(stdout);
	code = res.interrupted ? 2 : res.exit_code;
	if (c->report_json != NULL && hx_report_json(c->report_json, &res, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		code = 2;
	}
	fa_err_clear(&err);
	if (c->junit != NULL && hx_report_junit(c->junit, &res, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		code = 2;
	}
	fa_err_clear(&err);
	if (c->html != NULL && hx_report_html(c->html, &res, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		code = 2;
	}
	hx_run_result_release(&res);
out:
	fa_livefeed_free(opts.live);
	hx_repeat_release(&rep);
	hx_known_failing_free(kf);
	fa_suite_free(suite);
	return code;
}

/* Put the run on @c's time scale and check that its client can follow;
 * the reason printed when not. */
static enum fa_rc start_scale(struct cli *c)
{
	struct fa_err err = { { 0 } };

	if (hx_timescale_start(c->time_scale, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return FA_EIO;
	}
	if (c->exec_template == NULL) {
		c->clock_check = fa_xstrdup("the clock probe of the stdio protocol at each hello "
		                            "(docs/client-protocol.md)");
		return FA_OK;
	}
	if (hx_timescale_check_exec(c->exec_template, &c->clock_check, &err) != FA_OK) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		hx_timescale_stop();
		return FA_EINVAL;
	}
	return FA_OK;
}

int main(int argc, char **argv)
{
	static const char *const commands[] = { "run", "replay", "check", "import-har",
		                                "import-journal" };
	struct cli c = { .jobs = 2, .time_scale = 1.0 };
	struct fa_err err = { { 0 } };
	char *path = NULL, *client = NULL;
	int code;

	if (!fa_livefeed_std_fds_open())
		return 2;
	fa_log_init();
	if (argc < 2)
		return usage_error("what to do? expected 'run'");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("%s %s\n", PROG, HX_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "import-har") == 0 || strcmp(argv[1], "import-journal") == 0)
		return hx_import_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return hx_validate_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "replay") != 0) {
		const char *near =
		        fa_suggest(argv[1], commands, sizeof(commands) / sizeof(*commands));

		return usage_error("unknown command '%s', expected 'run', 'replay', "
		                   "'check', 'import-har' or 'import-journal'%s%s%s",
		                   argv[1], near ? "; did you mean '" : "", near ? near : "",
		                   near ? "'?" : "");
	}
	code = parse_args(argc - 1, argv + 1, &c);
	if (code >= 0)
		return code;
	/* replay is run with the scenario required (an imported one, say) */
	if (strcmp(argv[1], "replay") == 0 && c.path == NULL)
		return usage_error("replay: which scenario? expected SCENARIO");
	for (size_t k = 0; k < sizeof(report_opts) / sizeof(report_opts[0]); k++)
		if (report_path(&c, k) != NULL &&
		    !report_writable(report_opts[k], report_path(&c, k)))
			return 2;
	if (c.exec_template == NULL && c.client_cmd == NULL) {
		client = default_client();
		if (client == NULL) {
			fputs(PROG ": no client: build the reference client (make) or "
			           "give --client/--exec\n",
			      stderr);
			return 2;
		}
		c.client_cmd = client;
	}
	if (!c.has_seed)
		c.seed = ((uint64_t)fa_clock_wall_us() ^ ((uint64_t)getpid() << 20)) & 0xffffffffu;
	if (c.path != NULL) {
		path = fa_xstrdup(c.path);
	} else {
		path = default_suite();
		if (path == NULL) {
			fputs(PROG ": no suite given and scenarios/" DEFAULT_SUITE
			           " not found next to the program: give a path or set "
			           "FAKEAPI_SCENARIOS\n",
			      stderr);
			free(client);
			return 2;
		}
	}
	catch_signals();
	/* orphans of the clients come to us, to be found and reaped */
	if (hx_stray_subreaper(&err) != FA_OK)
		FA_LOG(FA_LOG_WARN, "harness", "event=no_subreaper reason=\"%s\"", err.msg);
	if (c.time_scale > 1.0 && start_scale(&c) != FA_OK) {
		free(path);
		free(client);
		return 2;
	}
	code = run(&c, path);
	hx_timescale_stop();
	free(c.clock_check);
	free(path);
	free(client);
	return code;
}
