/* bad_corpus.c -- the bad-file corpus, tests/data/bad/: each NAME.json beside NAME.err, its exact
 * message. */
#include "bad_corpus.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "alloc.h"
#include "jsontext.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

size_t fx_bad_corpus(void (*each)(const char *json, const char *want))
{
	DIR *dir = opendir(FX_BAD_DIR);
	struct dirent *de;
	size_t cases = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	while ((de = readdir(dir)) != NULL) {
		struct fa_err err = { { 0 } };
		char *json, *errf, *want = NULL;
		size_t stem, n = 0;

		if (has_suffix(de->d_name, ".err")) {
			stem = strlen(de->d_name) - 4;
			json = fa_xasprintf(FX_BAD_DIR "/%.*s.json", (int)stem, de->d_name);
			if (access(json, R_OK) != 0)
				FX_FAILF("%s/%s: no .json beside it", FX_BAD_DIR, de->d_name);
			free(json);
			continue;
		}
		if (!has_suffix(de->d_name, ".json"))
			continue;
		cases++;
		stem = strlen(de->d_name) - 5;
		json = fa_xasprintf(FX_BAD_DIR "/%s", de->d_name);
		errf = fa_xasprintf(FX_BAD_DIR "/%.*s.err", (int)stem, de->d_name);
		if (fa_jsontext_read(errf, &want, &n, &err) != FA_OK) {
			FX_FAILF("%s: no readable %s beside it", json, errf);
		} else {
			while (n > 0 && (want[n - 1] == '\n' || want[n - 1] == '\r'))
				want[--n] = '\0';
			each(json, want);
		}
		free(want);
		free(errf);
		free(json);
	}
	closedir(dir);
	return cases;
}

void fx_bad_case(const char *json, const char *want, bool loaded, const char *got)
{
	if (loaded) {
		FX_FAILF("%s: loaded, expected: %s", json, want);
	} else if (strcmp(got, want) != 0) {
		FX_FAILF("%s:\n  expected: %s\n  got:      %s", json, want, got);
	} else {
		CU_PASS("message matches");
	}
}
