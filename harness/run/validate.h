/* validate.h -- the check command: scenario and suite files loaded as run loads them, and not
 * run. */
#ifndef HX_VALIDATE_H
#define HX_VALIDATE_H

/*
 * `fakeapi-harness check FILE...`: @argv[0] is the command name, the rest
 * its options and FILEs, each a scenario, a suite.json or a suite's folder.
 * Each FILE is loaded with hx_suite_load(), as run loads it, and not run:
 * stdout gets "FILE: ok (suite ID, N scenarios)" or "FILE: ok (scenario
 * ID)" per good one, stderr the loader's message, exactly, per bad one.
 * Returns the exit code: 0 every FILE is good, 2 a FILE is bad or the
 * command line is (docs/scenario-format.md, EDITORS).
 */
int hx_validate_main(int argc, char **argv);

#endif
