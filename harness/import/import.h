/* import.h -- the import-har and import-journal command lines, and the printer every imported
 * scenario goes through. */
#ifndef HX_IMPORT_H
#define HX_IMPORT_H

#include <cJSON.h>

#include "rc.h"

/*
 * Print @sc as pretty JSON into *@text (a new string, the caller frees)
 * and check that the harness loads it (hx_suite_scenario_parse) under the
 * name @name. A
 * conversion that produced a file the loader refuses is a bug: FA_EINVAL
 * with "NAME: internal error: the scenario made does not load: ...".
 */
enum fa_rc hx_import_render(const cJSON *sc, const char *name, char **text, struct fa_err *err);

/*
 * The `import-har` and `import-journal` commands: @argv[0] is the command
 * name, the rest its options and FILE (docs/import.md). Prints the
 * scenario to stdout or -o FILE, warnings and errors to stderr. Returns
 * the exit code: 0 written, 2 a usage, input or output error.
 */
int hx_import_main(int argc, char **argv);

#endif
