"""fakeapi-harness check: scenario and suite files validated as run loads them, never run."""
import json
import os
import subprocess

import pytest

from conftest import run_harness
from scenarios import key_table, provider_scenario

BAD = "tests/data/bad"


def check(harness_bin, *files, cwd=None):
    """`fakeapi-harness check FILES` in @cwd, its output captured."""
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return subprocess.run([harness_bin, "check", *map(str, files)], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL, cwd=cwd)


def bad_cases(repo_root):
    return sorted(p.stem for p in (repo_root / BAD).glob("*.json"))


def test_every_shipped_suite_and_scenario_is_ok(harness_bin, repo_root):
    files = sorted(p.relative_to(repo_root).as_posix()
                   for p in (repo_root / "scenarios").rglob("*.json"))
    proc = check(harness_bin, *files, cwd=repo_root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert [line.split(": ok (")[0] for line in lines] == files
    for f, line in zip(files, lines):
        doc = json.loads((repo_root / f).read_text())
        if "scenarios" in doc:
            n = len(doc["scenarios"])
            assert line == f"{f}: ok (suite {doc['id']}, {n} scenario{'s' * (n != 1)})"
        elif "harness" in doc:
            assert line == f"{f}: ok (scenario {doc['id']})"
        else:
            # scenarios/provider/: for fakeapi --scenario alone
            assert line == f"{f}: ok (scenario {doc['id']}, provider only: no harness block)"


def test_a_suite_folder_is_checked_as_its_suite_json(harness_bin, repo_root):
    proc = check(harness_bin, "scenarios/five-step", cwd=repo_root)
    suite = json.loads((repo_root / "scenarios/five-step/suite.json").read_text())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"scenarios/five-step: ok (suite five-step, "
                           f"{len(suite['scenarios'])} scenarios)\n")


@pytest.mark.parametrize("case", ["unknown-key", "unknown-check", "syntax-trailing-comma",
                                  "syntax-comment-line", "unknown-key-ref",
                                  "expect-budget-unknown-task", "schema-member-nested"])
def test_a_bad_file_gets_the_loaders_exact_message(harness_bin, repo_root, case):
    # expect cases included: check validates them as run does
    want = (repo_root / BAD / f"{case}.err").read_text()
    proc = check(harness_bin, f"{BAD}/{case}.json", cwd=repo_root)
    assert proc.returncode == 2
    assert proc.stderr == want
    assert proc.stdout == ""


def test_every_bad_file_is_refused_with_its_message(harness_bin, repo_root):
    # one command for the whole corpus: a line on stderr per file, in order
    cases = bad_cases(repo_root)
    proc = check(harness_bin, *(f"{BAD}/{c}.json" for c in cases), cwd=repo_root)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "".join((repo_root / BAD / f"{c}.err").read_text() for c in cases)


def test_good_and_bad_files_each_get_their_line_and_any_bad_one_is_exit_2(harness_bin,
                                                                          repo_root):
    proc = check(harness_bin, "tests/data/good/example.json", f"{BAD}/unknown-key.json",
                 "tests/data/good/full.json", cwd=repo_root)
    assert proc.returncode == 2
    assert proc.stdout == ("tests/data/good/example.json: ok (scenario five-step-2)\n"
                           "tests/data/good/full.json: ok (scenario full-1.0_x)\n")
    assert proc.stderr == (repo_root / BAD / "unknown-key.err").read_text()


def test_a_scenario_without_harness_is_ok_for_the_provider_only(harness_bin, tmp_path):
    doc = provider_scenario("bare", key_table(("k1", "sk-1", "u1")),
                            [{"id": "r", "method": "GET", "path": "/a",
                              "responses": [{"status": 200}]}])
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(doc))
    proc = check(harness_bin, path)
    assert proc.returncode == 0
    assert proc.stdout == f"{path}: ok (scenario bare, provider only: no harness block)\n"


def test_a_suite_naming_a_missing_file_names_the_suite_and_the_entry(harness_bin, repo_root,
                                                                    tmp_path):
    example = (repo_root / "tests/data/good/example.json").read_text()
    (tmp_path / "a.json").write_text(example)
    (tmp_path / "suite.json").write_text(json.dumps(
        {"id": "mine", "version": "1", "scenarios": ["a.json", "b.json"]}))
    proc = check(harness_bin, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"{tmp_path}/suite.json: $.scenarios[1]: {tmp_path}/b.json: "
                           "cannot read: No such file or directory\n")
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr == (f"fakeapi-harness: {tmp_path}/suite.json: $.scenarios[1]: "
                           f"{tmp_path}/b.json: cannot read: No such file or directory\n")


def test_a_fifo_is_refused_at_once_by_check_and_run(harness_bin, tmp_path):
    # nobody writes to it: a plain open or read would wait for ever
    fifo = tmp_path / "scenario.json"
    os.mkfifo(fifo)
    proc = check(harness_bin, fifo)
    assert proc.returncode == 2
    assert proc.stderr == f"{fifo}: not a regular file\n"
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true", str(fifo), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-harness: {fifo}: not a regular file\n"


def test_a_folder_without_suite_json_is_the_loaders_message(harness_bin, tmp_path):
    proc = check(harness_bin, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"{tmp_path}: a folder without suite.json: give a suite.json, a "
                           "suite's folder or a scenario file\n")


def test_usage_errors_exit_2(harness_bin):
    proc = check(harness_bin)
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness check: which files? expected FILE... "
                           "(see fakeapi-harness check --help)\n")
    proc = check(harness_bin, "--bogus", "x.json")
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness check: unknown option '--bogus' "
                           "(see fakeapi-harness check --help)\n")
    proc = run_harness(harness_bin, "chek", "x.json")
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness: unknown command 'chek', expected 'run', 'replay', "
                           "'check', 'import-har' or 'import-journal'; did you mean 'check'? "
                           "(see fakeapi-harness --help)\n")


def test_help_names_the_command(harness_bin):
    proc = run_harness(harness_bin, "--help")
    assert "    fakeapi-harness check FILE...\n" in proc.stdout
    proc = check(harness_bin, "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: fakeapi-harness check FILE...\n")


def test_a_known_failing_typo_gets_a_hint(harness_bin, repo_root, tmp_path):
    kf = tmp_path / "known-failing.txt"
    kf.write_text("wait.jitter\nwait.jiter # typo\n")
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true", "--known-failing", str(kf),
                       str(repo_root / "tests/data/good/example.json"))
    assert proc.returncode == 2
    assert proc.stderr == (f"fakeapi-harness: {kf}:2: unknown check \"wait.jiter\", "
                           "did you mean \"wait.jitter\"?\n")
