/* validate.c -- the check command: scenario and suite files loaded as run loads them, and not
 * run. */
#include "validate.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"
#include "suite.h"

#define PROG "fakeapi-harness"

static const char usage_text[] =
        "usage: " PROG " check FILE...\n"
        "\n"
        "Load each FILE (a scenario, a suite.json or a suite's folder) as run\n"
        "does, and run nothing: the provider's checks of every member and\n"
        "reference, then each expect against the check registry. Prints\n"
        "\"FILE: ok (suite ID, N scenarios)\" or \"FILE: ok (scenario ID)\" on\n"
        "stdout for each good FILE and the loader's message, exactly as run\n"
        "would stop on it, on stderr for each bad one\n"
        "(docs/scenario-format.md, ERRORS).\n"
        "\n"
        "Exit status: 0 every FILE is good, 2 one is not or the command line\n"
        "is wrong.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG " check: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see " PROG " check --help)\n", stderr);
	return 2;
}

/* Scenarios of @su without a harness block: the provider plays them, run
 * has no task to give a client. */
static size_t provider_only(const struct fa_suite *su)
{
	size_t n = 0;

	for (size_t i = 0; i < su->n_scenarios; i++)
		n += !su->scenarios[i]->has_harness;
	return n;
}

/* Check one FILE: true when it loads. */
static bool check_one(const char *path)
{
	struct fa_suite *su = NULL;
	struct fa_err err = { { 0 } };
	size_t bare;

	if (hx_suite_load(path, &su, &err) != FA_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return false;
	}
	bare = provider_only(su);
	/* fa_suite_load gives a lone scenario an empty version; a suite
	 * file's is required non-empty */
	if (su->version[0] == '\0')
		printf("%s: ok (scenario %s%s)\n", path, su->id,
		       bare ? ", provider only: no harness block" : "");
	else if (bare == 0)
		printf("%s: ok (suite %s, %zu scenario%s)\n", path, su->id, su->n_scenarios,
		       su->n_scenarios == 1 ? "" : "s");
	else
		printf("%s: ok (suite %s, %zu scenario%s, %zu provider only: no harness block)\n",
		       path, su->id, su->n_scenarios, su->n_scenarios == 1 ? "" : "s", bare);
	/* in the order of the messages on stderr when both go to one place */
	fflush(stdout);
	fa_suite_free(su);
	return true;
}

int hx_validate_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool all_ok = true;
	int ch;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			if (optopt != 0)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("which files? expected FILE...");
	for (int i = optind; i < argc; i++)
		all_ok = check_one(argv[i]) && all_ok;
	return all_ok ? 0 : 2;
}
