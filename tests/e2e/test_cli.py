"""The three programs are one family on the command line: the same
spelling for the same thing, --version and -V everywhere, and an unknown
option gives one line and a hint to --help (git and curl are the models)."""
import subprocess

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def programs(fakeapi_bin, harness_bin):
    return {"fakeapi": [fakeapi_bin], "fakeapi-harness": [harness_bin],
            "fakeapi-gate": ["/bin/sh", str(REPO / "ci" / "fakeapi-gate")]}


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, **kw)


def test_every_program_says_one_version(programs):
    seen = set()
    for name, argv in programs.items():
        for flag in ("--version", "-V"):
            proc = run([*argv, flag])
            assert proc.returncode == 0, (name, flag, proc.stderr)
            words = proc.stdout.split()
            assert words[0] == name and len(words) == 2, (name, proc.stdout)
            seen.add(words[1])
    assert len(seen) == 1, seen


@pytest.mark.parametrize("extra", [["--bogus"], ["-x"]])
def test_unknown_option_is_one_line_and_a_hint(programs, extra):
    for name, argv in programs.items():
        args = [*argv, "run", *extra] if name == "fakeapi-harness" else [*argv, *extra]
        proc = run(args)
        assert proc.returncode == 2, (name, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and proc.stdout == "", (name, proc.stderr)
        assert lines[0].startswith(f"{name}: unknown option '{extra[0]}'"), lines
        assert lines[0].endswith(f"(see {name} --help)"), lines


def test_a_suite_is_spelt_alike(harness_bin, tmp_path):
    """--suite, the positional path and a suite's folder are one thing to
    the harness, as to the gate."""
    client = 'curl -sS -f -o /dev/null -H "Authorization: Bearer $FAKEAPI_KEY" {url}'
    folder = REPO / "scenarios" / "five-step-fast"
    one = folder / "4-no-retry-400.json"
    for where in (["--suite", str(one)], [str(one)]):
        proc = run([harness_bin, "run", "-q", "--exec", client, "--min-level", "l1", *where])
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    proc = run([harness_bin, "run", "--exec", client, "--suite", str(one), str(one)])
    assert proc.returncode == 2 and "one suite or scenario at a time" in proc.stderr
    proc = run([harness_bin, "run", "--exec", client, str(REPO / "scenarios")])
    assert proc.returncode == 2
    assert "a folder without suite.json" in proc.stderr, proc.stderr


@pytest.mark.parametrize("level", ["L2", "l2", "2"])
def test_min_level_takes_any_spelling(harness_bin, level):
    client = 'curl -sS -f -o /dev/null -H "Authorization: Bearer $FAKEAPI_KEY" {url}'
    one = REPO / "scenarios" / "five-step-fast" / "4-no-retry-400.json"
    proc = run([harness_bin, "run", "-q", "--exec", client, "--min-level", level, str(one)])
    assert "(minimum L2)" in proc.stdout, proc.stdout[-2000:] + proc.stderr


def test_provider_takes_its_scenario_as_the_harness_does(fakeapi_bin):
    one = REPO / "scenarios" / "five-step-fast" / "4-no-retry-400.json"
    proc = subprocess.Popen([fakeapi_bin, str(one)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout.readline().startswith("listening http://127.0.0.1:")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert proc.returncode == 0
    proc = run([fakeapi_bin, str(one), str(one)])
    assert proc.returncode == 2 and "one scenario at a time" in proc.stderr
