"""The checks that keep the structure honest: ci/unit-suites (no CUnit test
file silently left out or listed without its file) and ci/include-graph
(include circles and client includes of provider headers), each shown
failing on a copy with the defect and passing on the tree."""

import os
import shutil
import subprocess

from conftest import REPO

UNIT_SUITES = os.path.join(REPO, "ci", "unit-suites")
INCLUDE_GRAPH = os.path.join(REPO, "ci", "include-graph")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)


def unit_copy(tmp_path):
    d = tmp_path / "unit"
    shutil.copytree(os.path.join(REPO, "tests", "unit"), d)
    return d


def test_unit_suites_accepts_the_tree():
    r = run([UNIT_SUITES, os.path.join(REPO, "tests", "unit")])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_unit_suites_names_a_test_file_the_list_leaves_out(tmp_path):
    d = unit_copy(tmp_path)
    shutil.copy(d / "test_clock.c", d / "test_new_module.c")
    r = run([UNIT_SUITES, str(d)])
    assert r.returncode == 1
    assert r.stderr == ("%s/test_new_module.c: not listed in %s/main.c (TEST_MODULES):"
                        " its tests would never run\n" % (d, d))


def test_unit_suites_names_a_listed_suite_without_its_file(tmp_path):
    d = unit_copy(tmp_path)
    os.remove(d / "test_clock.c")
    r = run([UNIT_SUITES, str(d)])
    assert r.returncode == 1
    assert r.stderr == ("%s/main.c: lists clock, but %s/test_clock.c does not exist\n"
                        % (d, d))


def test_unit_suites_names_a_suite_listed_twice(tmp_path):
    d = unit_copy(tmp_path)
    main = (d / "main.c").read_text()
    (d / "main.c").write_text(main.replace("\tX(clock)", "\tX(clock) \\\n\tX(clock)"))
    r = run([UNIT_SUITES, str(d)])
    assert r.returncode == 1
    assert "clock is listed 2 times in TEST_MODULES" in r.stderr


def graph_copy(tmp_path):
    """A tree with ci/include-graph and two small folders of modules."""
    root = tmp_path / "tree"
    (root / "ci").mkdir(parents=True)
    shutil.copy(INCLUDE_GRAPH, root / "ci" / "include-graph")
    for folder in ("fakeapi", "harness", "client-under-test/c"):
        (root / folder).mkdir(parents=True)
    def module(folder, name, *incs):
        (root / folder / (name + ".h")).write_text(
            "".join('#include "%s.h"\n' % i for i in incs))
        (root / folder / (name + ".c")).write_text('#include "%s.h"\n' % name)
    module("fakeapi", "a", "b")
    module("fakeapi", "b")
    module("harness", "x")
    module("client-under-test/c", "main")
    return root, module


def test_include_graph_passes_a_tree_without_circles(tmp_path):
    root, _ = graph_copy(tmp_path)
    r = run([str(root / "ci" / "include-graph")])
    assert r.returncode == 0, r.stdout
    assert "fakeapi/: 2 modules, 0 include circles" in r.stdout


def test_include_graph_names_a_circle_and_a_client_include(tmp_path):
    root, module = graph_copy(tmp_path)
    module("fakeapi", "b", "c")
    module("fakeapi", "c", "a")
    module("client-under-test/c", "main", "b")
    r = run([str(root / "ci" / "include-graph")])
    assert r.returncode == 1
    assert "  circle of 3: a b c\n" in r.stdout
    assert 'client-under-test/c/main.h includes "b.h"' in r.stdout


def test_include_graph_prints_layers_bottom_up(tmp_path):
    root, module = graph_copy(tmp_path)
    module("fakeapi", "c", "a", "b")
    r = run([str(root / "ci" / "include-graph"), "--layers"])
    assert r.returncode == 0, r.stderr
    assert "fakeapi/:\n   0  b\n   1  a\n   2  c\n" in r.stdout


def test_the_tree_has_no_include_circle():
    """The rule make lint holds the tree to: no circle, no client include."""
    r = run([INCLUDE_GRAPH])
    assert r.returncode == 0, r.stdout
    assert "fakeapi/: " in r.stdout and ", 0 include circles" in r.stdout


FAILING_ASSERTS = r'''
#include <stddef.h>
#include <CUnit/Basic.h>
static int calls;
static int next(void) { return ++calls; }
static void t(void)
{
	size_t n = 4;
	const char *s = "ab", *none = NULL;
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(next(), 1); /* evaluated once: passes */
	CU_ASSERT_NOT_EQUAL(-2, -2);
	CU_ASSERT_EQUAL(0.5, 0.25);
	CU_ASSERT_STRING_EQUAL(s, "abc");
	CU_ASSERT_STRING_EQUAL(none, "x");
	CU_ASSERT_STRING_NOT_EQUAL(s, "ab");
	CU_ASSERT_EQUAL_FATAL(calls, 2);
	CU_ASSERT_EQUAL(1, 1); /* not reached */
}
int main(void)
{
	CU_initialize_registry();
	CU_add_test(CU_add_suite("s", NULL, NULL), "t", t);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	printf("failures %u\n", CU_get_number_of_failures());
	CU_cleanup_registry();
	return 0;
}
'''


def test_unit_assertions_print_what_they_got_and_wanted(tmp_path):
    src = tmp_path / "t.c"
    src.write_text(FAILING_ASSERTS)
    exe = tmp_path / "t"
    cc = run(["cc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
              "-include", os.path.join(REPO, "tests", "unit", "unit_assert.h"),
              str(src), "-o", str(exe), "-lcunit"])
    assert cc.returncode == 0, cc.stderr
    out = run([str(exe)]).stdout
    for line in ("CU_ASSERT_EQUAL(n, 3): got 4, want 3",
                 "CU_ASSERT_NOT_EQUAL(-2, -2): got -2, want not -2",
                 "CU_ASSERT_EQUAL(0.5, 0.25): got 0.5, want 0.25",
                 'CU_ASSERT_STRING_EQUAL(s, "abc"): got "ab", want "abc"',
                 'CU_ASSERT_STRING_EQUAL(none, "x"): got (null), want "x"',
                 'CU_ASSERT_STRING_NOT_EQUAL(s, "ab"): got "ab", want not "ab"',
                 "CU_ASSERT_EQUAL_FATAL(calls, 2): got 1, want 2"):
        assert line in out, out
    assert "next()" not in out
    assert "failures 7" in out
