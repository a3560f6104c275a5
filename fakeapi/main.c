/* main.c -- the fakeapi program: serve a scenario, or verify a journal. */
#include <getopt.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "clock.h"
#include "follow.h"
#include "journal.h"
#include "livefeed.h"
#include "log.h"
#include "provider.h"
#include "scenario.h"
#include "server.h"

#define FAKEAPI_VERSION "0.1.0"

static const char usage[] =
        "usage: fakeapi [--scenario] FILE [--port N] [--bind ADDR] [--journal FILE|-]\n"
        "               [--follow] [--threads N] [--seed N]\n"
        "       fakeapi verify-journal FILE\n"
        "       fakeapi -h|--help | -V|--version\n"
        "\n"
        "Serve FILE's routes as a fault-injecting fake API provider. The first\n"
        "line on stdout is `listening http://HOST:PORT`; SIGINT or SIGTERM stops\n"
        "the server cleanly with the journal flushed.\n"
        "\n"
        "  -s, --scenario FILE   scenario to play (JSON; docs/scenario-format.md);\n"
        "                        FILE alone after the options says the same\n"
        "  -p, --port N          TCP port, 0 = ephemeral (default 0)\n"
        "  -b, --bind ADDR       address to listen on (default 127.0.0.1)\n"
        "  -j, --journal FILE    also write the hash-chained JSONL journal to FILE;\n"
        "                        `-` streams it to stdout after the first line,\n"
        "                        one line per attempt as it completes\n"
        "  -f, --follow          print each attempt on stdout as it completes, as\n"
        "                        one line of text instead of JSON:\n"
        "                        +ARRIVAL  #SEQ  TASK  METHOD PATH  STATUS  FAULT\n"
        "                        then [QUOTA], `pause until +T (scope S)`, delivery\n"
        "                        and stream end where they apply (times in s since\n"
        "                        start; `-` or `---` = none). With --journal - the\n"
        "                        text replaces the JSONL on stdout; with --journal\n"
        "                        FILE the file still gets the JSONL\n"
        "                        Live lines never hold the server up: a reader of\n"
        "                        stdout that falls 100000 lines (8 MiB) behind\n"
        "                        misses the newer ones (a warning on stderr counts\n"
        "                        them; the journal file and GET /_fakeapi/journal\n"
        "                        keep all)\n"
        "  -t, --threads N       server threads, 2..64 (default 4)\n"
        "      --admin-token TOKEN  every admin request must present\n"
        "                        `Authorization: Bearer TOKEN` (or set\n"
        "                        FAKEAPI_ADMIN_TOKEN); required with a --bind\n"
        "                        address that is not loopback\n"
        "      --seed N          seed for random choices, 0..2^53-1 (default 1)\n"
        "\n"
        "verify-journal FILE checks a JSONL journal's hash chain and prints the\n"
        "line count and head (`ok N lines head H`); exit 1 names the first broken\n"
        "line; exit 3 (`cut N lines head H`) when the chain holds up to a last\n"
        "line cut short without its newline, as a provider killed mid-write\n"
        "leaves it.\n"
        "\n"
        "Admin endpoints (never journaled; on loopback only for requests whose Host\n"
        "is a loopback name; never cross-origin; POST with a JSON body):\n"
        "GET /_fakeapi/health,\n"
        "GET /_fakeapi/journal[?since=SEQ], GET /_fakeapi/metrics (the Prometheus text\n"
        "format), POST /_fakeapi/reset, GET /_fakeapi/state.\n"
        "Exit status: 0 clean stop, 1 runtime error (a journal file that could not\n"
        "be written included), 2 usage or scenario error.\n";

/* Parse a decimal in [lo, hi]; false on anything else. */
static bool parse_uint(const char *s, unsigned long long lo, unsigned long long hi,
                       unsigned long long *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0' && *out >= lo && *out <= hi;
}

static int verify_journal(int argc, char **argv)
{
	struct fa_err err = { 0 };
	struct fa_journal_tail tail;
	size_t n = 0;
	char head[65];

	if (argc != 3) {
		fprintf(stderr, "fakeapi: verify-journal takes one FILE\n%s", usage);
		return 2;
	}
	if (fa_journal_verify(argv[2], &n, head, &tail, &err) != FA_OK) {
		fprintf(stderr, "fakeapi: %s\n", err.msg);
		return 1;
	}
	if (tail.line > 0) {
		printf("cut %zu lines head %s\n", n, head);
		fprintf(stderr,
		        "fakeapi: %s:%zu: the last line is cut short (%zu bytes, no newline): "
		        "the provider stopped in the middle of a write; the %zu lines before it "
		        "verify\n",
		        argv[2], tail.line, tail.bytes, n);
		return 3;
	}
	printf("ok %zu lines head %s\n", n, head);
	return 0;
}

/* After the server stopped: say how many attempts the journal's file
 * misses, if a write to it failed; true then (the exit status is 1). */
static bool journal_missing(struct fa_journal *j, const char *path)
{
	uint64_t missing = 0, in_file = 0;
	int err = 0;

	if (!fa_journal_file_failed(j, &missing, &in_file, &err))
		return false;
	fprintf(stderr,
	        "fakeapi: %s: %llu attempt%s missing from the journal file (a write "
	        "failed: %s); it ends at seq %llu and verifies up to there\n",
	        path, (unsigned long long)missing, missing == 1 ? " is" : "s are", strerror(err),
	        (unsigned long long)in_file);
	return true;
}

/* One line on stderr, then the hint to --help; returns 2 (usage). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("fakeapi: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see fakeapi --help)\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "journal", required_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "follow", no_argument, NULL, 'f' },
		{ "admin-token", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *scenario_path = NULL, *journal_path = NULL, *bind = "127.0.0.1";
	const char *admin_token = getenv("FAKEAPI_ADMIN_TOKEN");
	unsigned long long port = 0, threads = 4, seed = 1;
	struct fa_scenario *sc = NULL;
	struct fa_journal *journal = NULL;
	struct fa_follow follow = { .feed = NULL, .text = true, .scenario = NULL };
	bool follow_on = false, live = false;
	struct fa_provider *p = NULL;
	struct fa_server *srv = NULL;
	struct fa_err err = { 0 };
	sigset_t set;
	enum fa_rc rc;
	int sig, opt, status = 2;

	if (!fa_livefeed_std_fds_open())
		return 1;
	fa_log_init();
	if (argc >= 2 && strcmp(argv[1], "verify-journal") == 0)
		return verify_journal(argc, argv);
	opterr = 0; /* one line of our own, then the hint */
	while ((opt = getopt_long(argc, argv, ":s:p:b:j:t:fhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': scenario_path = optarg; break;
		case 'b': bind = optarg; break;
		case 'j': journal_path = optarg; break;
		case 'f': follow_on = true; break;
		case 'A': admin_token = optarg; break;
		case 'p':
			if (!parse_uint(optarg, 0, 65535, &port)) {
				return usage_error("--port: expected 0..65535, got \"%s\"", optarg);
			}
			break;
		case 't':
			if (!parse_uint(optarg, 2, 64, &threads)) {
				return usage_error("--threads: expected 2..64, got \"%s\"", optarg);
			}
			break;
		case 'S':
			if (!parse_uint(optarg, 0, 9007199254740991ULL, &seed)) {
				return usage_error(
				        "--seed: expected an integer 0..2^53-1, got \"%s\"",
				        optarg);
			}
			break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("fakeapi %s\n", FAKEAPI_VERSION); return 0;
		case ':': return usage_error("%s: missing its argument", argv[optind - 1]);
		default:
			if (optopt != 0)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc && scenario_path == NULL)
		scenario_path = argv[optind++];
	if (optind < argc)
		return usage_error("one scenario at a time, got also '%s'", argv[optind]);
	if (scenario_path == NULL)
		return usage_error("no scenario: give FILE or --scenario FILE");
	if (admin_token != NULL && admin_token[0] == '\0')
		admin_token = NULL;
	if (!fa_admin_loopback_name(bind) && admin_token == NULL)
		return usage_error("--bind %s would open the admin API (/_fakeapi/reset, "
		                   "/_fakeapi/journal, ...) to the network: give --admin-token "
		                   "TOKEN or set FAKEAPI_ADMIN_TOKEN",
		                   bind);
	if (fa_scenario_load(scenario_path, &sc, &err) != FA_OK) {
		fprintf(stderr, "fakeapi: %s\n", err.msg);
		goto out;
	}
	/* stdout's JSONL (--journal -) or text (--follow) comes from a sink:
	 * the journal itself never waits for a reader */
	if (journal_path != NULL && strcmp(journal_path, "-") == 0) {
		journal_path = NULL;
		live = true;
		follow.text = follow_on;
	}
	live = live || follow_on;
	if (fa_journal_new(journal_path, &journal, &err) != FA_OK) {
		fprintf(stderr, "fakeapi: %s\n", err.msg);
		goto out;
	}
	/* Block the stop signals before any thread starts, so every thread
	 * inherits the mask and only sigwait() below sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (live) {
		follow.feed = fa_livefeed_new(
		        STDOUT_FILENO, 0, 0, "fakeapi",
		        journal_path != NULL
		                ? "the journal file and GET /_fakeapi/journal are complete"
		                : "GET /_fakeapi/journal is complete");
		fa_journal_set_sink(journal, fa_follow_sink, &follow);
	}
	p = fa_provider_new(sc, journal, seed, fa_clock_mono_us());
	fa_provider_set_admin_guard(p, admin_token, fa_admin_loopback_name(bind));
	rc = fa_server_start(p,
	                     &(struct fa_server_opts){ .bind = bind,
	                                               .port = (unsigned)port,
	                                               .threads = (unsigned)threads },
	                     &srv, &err);
	if (rc != FA_OK) {
		fprintf(stderr, "fakeapi: %s\n", err.msg);
		status = rc == FA_EINVAL ? 2 : 1; /* a bad --bind is a usage error */
		goto out;
	}
	printf("listening http://%s%s%s:%u\n", strchr(bind, ':') ? "[" : "", bind,
	       strchr(bind, ':') ? "]" : "", fa_server_port(srv));
	fflush(stdout);
	sigwait(&set, &sig);
	FA_LOG(FA_LOG_INFO, "main", "event=stop signal=%d", sig);
	status = 0;
out:
	fa_server_stop(srv);
	fa_provider_free(p);
	if (journal != NULL && journal_missing(journal, journal_path))
		status = 1;
	fa_journal_free(journal);
	/* what a stuck reader has not taken within the drain time is lost */
	fa_livefeed_free(follow.feed);
	fa_scenario_free(sc);
	return status;
}
