/* suite.c -- scenario and suite files as the harness loads them: the provider's loader, then
 * $.harness.expect against the check registry. */
#include "suite.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "expect.h"

enum fa_rc hx_suite_load(const char *path, struct fa_suite **out, struct fa_err *err)
{
	struct stat st;
	enum fa_rc rc;

	/* a suite's folder stands for its suite.json */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t n = strlen(path);
		char *file = fa_xasprintf("%.*s/suite.json",
		                          (int)(n > 1 && path[n - 1] == '/' ? n - 1 : n), path);

		if (access(file, F_OK) != 0) {
			*out = NULL;
			fa_err_set(err,
			           "%s: a folder without suite.json: give a suite.json, a "
			           "suite's folder or a scenario file",
			           path);
			free(file);
			return FA_EINVAL;
		}
		rc = hx_suite_load(file, out, err);
		free(file);
		return rc;
	}
	rc = fa_suite_load(path, out, err);

	for (size_t i = 0; rc == FA_OK && i < (*out)->n_scenarios; i++)
		rc = hx_expect_validate((*out)->scenarios[i], err);
	if (rc != FA_OK) {
		fa_suite_free(*out);
		*out = NULL;
	}
	return rc;
}

enum fa_rc hx_suite_scenario_parse(const char *text, size_t len, const char *name,
                                   struct fa_scenario **out, struct fa_err *err)
{
	enum fa_rc rc = fa_scenario_parse(text, len, name, out, err);

	if (rc == FA_OK && hx_expect_validate(*out, err) != FA_OK) {
		fa_scenario_free(*out);
		*out = NULL;
		rc = FA_EINVAL;
	}
	return rc;
}
