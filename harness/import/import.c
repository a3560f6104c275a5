/* import.c -- the import-har and import-journal command lines, and the printer every imported
 * scenario goes through. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "draft.h"
#include "har.h"
#include "import.h"
#include "jsontext.h"
#include "recording.h"
#include "scenario.h"
#include "schema.h"
#include "suite.h"

#define PROG "fakeapi-harness"

/* Most --host and --path-prefix options kept. */
#define MAX_FILTERS 64

/* Growing text for the printer below. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	fa_xappend(&t->s, &t->len, &t->cap, s, n, 4096);
}

static void put_compact(struct text *t, const cJSON *v)
{
	char *c = fa_xcheck(cJSON_PrintUnformatted(v), "imported scenario");

	put(t, c, strlen(c));
	free(c);
}

/* Whether @v is an array or object holding only scalars (printed on one line). */
static bool flat(const cJSON *v)
{
	if (!cJSON_IsArray(v))
		return !cJSON_IsObject(v) || v->child == NULL;
	for (const cJSON *c = v->child; c != NULL; c = c->next)
		if (cJSON_IsArray(c) || cJSON_IsObject(c))
			return false;
	return true;
}

/* @v as JSON indented by two spaces per level, members in their order;
 * arrays of scalars and empty objects on one line. */
static void put_pretty(struct text *t, const cJSON *v, int depth)
{
	bool obj = cJSON_IsObject(v);

	if (flat(v)) {
		put_compact(t, v);
		return;
	}
	put(t, obj ? "{" : "[", 1);
	for (const cJSON *c = v->child; c != NULL; c = c->next) {
		put(t, "\n", 1);
		for (int i = 0; i <= depth; i++)
			put(t, "  ", 2);
		if (obj) {
			cJSON *key = fa_xcheck(cJSON_CreateString(c->string), "imported scenario");

			put_compact(t, key);
			put(t, ": ", 2);
			cJSON_Delete(key);
		}
		put_pretty(t, c, depth + 1);
		if (c->next != NULL)
			put(t, ",", 1);
	}
	put(t, "\n", 1);
	for (int i = 0; i < depth; i++)
		put(t, "  ", 2);
	put(t, obj ? "}" : "]", 1);
}

enum fa_rc hx_import_render(const cJSON *sc, const char *name, char **text, struct fa_err *err)
{
	struct fa_scenario *loaded = NULL;
	struct fa_err inner = { { 0 } };
	struct text t = { 0 };
	char *s;

	put_pretty(&t, sc, 0);
	s = t.s;

	*text = NULL;
	if (hx_suite_scenario_parse(s, strlen(s), name, &loaded, &inner) != FA_OK) {
		fa_err_set(err, "%s: internal error: the scenario made does not load: %s", name,
		           inner.msg);
		free(s);
		return FA_EINVAL;
	}
	fa_scenario_free(loaded);
	*text = s;
	return FA_OK;
}

static const char import_usage[] =
        "usage: " PROG " import-har [--host HOST]... [--path-prefix P]... [--id ID]\n"
        "                           [--no-harness] [-o FILE] FILE.har\n"
        "       " PROG " import-journal [--path-prefix P]... [--id ID] [--no-harness]\n"
        "                               [-o FILE] FILE.jsonl\n"
        "\n"
        "Turn an incident into a scenario (docs/scenario-format.md) that answers\n"
        "the same way, printed as JSON: import-har reads a HAR 1.2 capture (browser\n"
        "developer tools, mitmproxy, HTTP proxies), import-journal a journal fakeapi\n"
        "recorded (--journal FILE, or the harness's --journal-dir). Requests become\n"
        "routes by method and path template (numeric and UUID-like segments become\n"
        "{id}); each route answers in the order of the capture; with a harness block\n"
        "of one task per request, sent at its original offset. Secrets (Authorization,\n"
        "Cookie, Set-Cookie, API-key headers) and hop-by-hop headers are dropped;\n"
        "credential-like body members and query parameters read \"redacted\". Dot\n"
        "segments are resolved and a path is templated as the provider decodes it;\n"
        "one no route could answer (%00) is skipped. The scenario is validated\n"
        "before it is written; its comment says where it came from. Grade a client\n"
        "on it with `" PROG " replay FILE --client CMD` (or run).\n"
        "\n"
        "  --host HOST         import-har: keep only this host (repeatable)\n"
        "  --path-prefix P     keep only paths starting with P (repeatable)\n"
        "  --id ID             the scenario's id (default: from the file name)\n"
        "  --no-harness        routes only, for fakeapi --scenario\n"
        "  -o, --output FILE   write to FILE instead of stdout\n"
        "  -h, --help          this text\n"
        "\n"
        "Exit status: 0 written (warnings on stderr: a body or attempt left out);\n"
        "2 a usage error, or a file that cannot be read or imported, with a message\n"
        "naming the entry or line. Full reference: docs/import.md.\n";

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG " %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see " PROG " --help)\n", stderr);
	return 2;
}

/* Write @text to @path ("-" or NULL: stdout). */
static bool write_out(const char *cmd, const char *path, const char *text)
{
	FILE *f = stdout;
	bool ok;

	if (path != NULL && strcmp(path, "-") != 0 && (f = fopen(path, "w")) == NULL) {
		fprintf(stderr, PROG " %s: %s: cannot write: %s\n", cmd, path, strerror(errno));
		return false;
	}
	ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	ok = (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
	if (!ok)
		fprintf(stderr, PROG " %s: %s: cannot write: %s\n", cmd,
		        path != NULL ? path : "stdout", strerror(errno));
	return ok;
}

int hx_import_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "path-prefix", required_argument, NULL, 'P' },
		{ "id", required_argument, NULL, 'i' },
		{ "no-harness", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *hosts[MAX_FILTERS], *prefixes[MAX_FILTERS];
	const char *out_path = NULL, *file;
	bool har = strcmp(cmd, "import-har") == 0;
	struct hx_draft_opts opts = { .hosts = hosts, .prefixes = prefixes };
	struct hx_draft_warnings warn = { 0 };
	struct fa_err err = { { 0 } };
	cJSON *sc = NULL;
	char *text = NULL, *data = NULL;
	size_t len = 0;
	int ch, code = 2;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			if (!har)
				return usage_error(cmd, "--host: a journal has no host");
			if (optarg[0] == '\0' || opts.n_hosts == MAX_FILTERS)
				return usage_error(cmd, "--host: expected a host name, at most %d",
				                   MAX_FILTERS);
			hosts[opts.n_hosts++] = optarg;
			break;
		case 'P':
			if (optarg[0] != '/' || opts.n_prefixes == MAX_FILTERS)
				return usage_error(cmd,
				                   "--path-prefix: expected a path starting "
				                   "with \"/\", at most %d",
				                   MAX_FILTERS);
			prefixes[opts.n_prefixes++] = optarg;
			break;
		case 'i':
			if (!fa_schema_charset_ok(optarg, "._-", 64))
				return usage_error(cmd,
				                   "--id: expected [A-Za-z0-9._-]{1,64}, "
				                   "got '%s'",
				                   optarg);
			opts.id = optarg;
			break;
		case 'n': opts.no_harness = true; break;
		case 'o': out_path = optarg; break;
		case 'h': fputs(import_usage, stdout); return 0;
		case ':': return usage_error(cmd, "%s: missing its argument", argv[optind - 1]);
		default:
			if (optopt != 0)
				return usage_error(cmd, "unknown option '-%c'", optopt);
			return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error(cmd, "which file? expected %s", har ? "FILE.har" : "FILE.jsonl");
	file = argv[optind++];
	if (optind < argc)
		return usage_error(cmd, "one file at a time, got also '%s'", argv[optind]);
	if (har) {
		if (fa_jsontext_read(file, &data, &len, &err) != FA_OK ||
		    hx_har_convert(data, len, file, &opts, &sc, &warn, &err) != FA_OK)
			goto out;
	} else if (hx_recording_convert(file, &opts, &sc, &warn, &err) != FA_OK) {
		goto out;
	}
	if (hx_import_render(sc,
	                     out_path != NULL && strcmp(out_path, "-") != 0 ? out_path : "stdout",
	                     &text, &err) != FA_OK)
		goto out;
	if (write_out(cmd, out_path, text))
		code = 0;
out:
	for (size_t i = 0; i < warn.n; i++)
		fprintf(stderr, PROG " %s: warning: %s\n", cmd, warn.msg[i]);
	if (err.msg[0] != '\0')
		fprintf(stderr, PROG " %s: %s\n", cmd, err.msg);
	hx_draft_warnings_release(&warn);
	cJSON_Delete(sc);
	free(text);
	free(data);
	return code;
}
