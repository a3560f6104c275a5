"""CI gating: --known-failing, --strict and --repeat of fakeapi-harness, and ci/fakeapi-gate.

Each case writes a short one-off scenario into tmp_path (a 429 with a 1 s
Retry-After at most) and grades a one-line exec client, or a tiny stdio
client, on it. Verdicts and exit codes are read from the reports.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from functools import partial

import pytest

from scenarios import READ_TASK, key_table, one_route_scenario

AUTH = '-H "Authorization: Bearer $FAKEAPI_KEY"'
# One attempt; succeeds on a 200.
ONCE = f"curl -sS -f -o /dev/null {AUTH} {{url}}"
# Retries at once, three times: ignores Retry-After (fails wait.retry_after).
IMPATIENT = (f'for i in 1 2 3; do curl -s -o /dev/null -w "%{{http_code}}" {AUTH} {{url}}'
             " | grep -q 200 && exit 0; done; exit 1")

OK_200 = [{"status": 200, "body": {"id": "{id}"}}]
# A pause of 3 s: IMPATIENT's immediate retry lands inside it however late a
# loaded machine starts that curl; IMPATIENT never waits, so it costs nothing.
ONE_429 = [{"times": 1, "status": 429, "headers": {"Retry-After": "3"},
            "body": {"error": {"code": "rate_limit_exceeded"}}}] + OK_200


KEYS = key_table(("k1", "sk-gate-k1", "u1"))
# A one-route scenario; by default one task t1 sent at the start.
scenario = partial(one_route_scenario, keys=KEYS)


def write(tmp_path, doc):
    path = tmp_path / f"{doc['id']}.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def harness_env():
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return env


def run_harness(harness_bin, *args, timeout=300):
    return subprocess.run([harness_bin, *args], capture_output=True, text=True,
                          timeout=timeout, env=harness_env(), stdin=subprocess.DEVNULL)


def grade(harness_bin, tmp_path, doc, client, *extra):
    """Run one scenario in exec mode; returns (process, report dict)."""
    path = write(tmp_path, doc)
    report = tmp_path / "report.json"
    if report.exists():
        report.unlink()
    proc = run_harness(harness_bin, "run", "-q", "--exec", client, "--seed", "7",
                       "--report-json", str(report), *extra, str(path))
    assert report.exists(), proc.stderr
    return proc, json.loads(report.read_text())


@pytest.fixture(scope="module")
def schema(repo_root):
    return json.loads((repo_root / "docs" / "report.schema.json").read_text())


def validate(report, schema):
    import jsonschema
    jsonschema.validate(report, schema)


def row(report, check_id):
    return next(c for c in report["checks"] if c["id"] == check_id)


# --- --known-failing ----------------------------------------------------------

def test_known_failing_check_that_fails_exits_0_and_says_so(harness_bin, tmp_path, schema):
    doc = scenario("kf-fails", ONE_429)
    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT)
    assert proc.returncode == 1, proc.stdout
    assert row(report, "wait.retry_after")["verdict"] == "fail"

    kf = tmp_path / "known-failing.txt"
    kf.write_text("# this client ignores Retry-After for now\n"
                  "\n"
                  "wait.retry_after   # sleeps nothing, see issue 12\n"
                  "cancel.quiet\n")
    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT, "--known-failing", str(kf))
    assert proc.returncode == 0, proc.stdout
    validate(report, schema)
    assert report["exit_code"] == 0
    assert report["exit_reason"] == ("no required check failed but 1 known failing, "
                                     "and at least one passed")
    assert report["level"] == "L0"  # the level stays honest
    assert report["known_failing"] == {
        "file": str(kf),
        "entries": [
            {"id": "wait.retry_after", "line": 3, "reason": "sleeps nothing, see issue 12",
             "state": "failing"},
            {"id": "cancel.quiet", "line": 4, "reason": None, "state": "n/a"},
        ]}
    assert row(report, "wait.retry_after")["known_failing"] is True
    assert row(report, "attempts.bounded")["known_failing"] is False
    assert f"known failing: {kf} (2 entries)" in proc.stdout
    assert "FAIL  wait.retry_after       (L1) known failing: sleeps nothing" in proc.stdout

    # --min-level still applies
    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT, "--known-failing", str(kf),
                         "--min-level", "L1")
    assert proc.returncode == 1
    assert report["exit_reason"] == "level L0 is below the minimum L1"


def test_known_failing_entry_that_passes_now_exits_1(harness_bin, tmp_path, schema):
    doc = scenario("kf-passes", OK_200)
    kf = tmp_path / "kf.txt"
    kf.write_text("attempts.bounded # made too many attempts once\n")
    proc, report = grade(harness_bin, tmp_path, doc, ONCE, "--known-failing", str(kf))
    assert proc.returncode == 1, proc.stdout
    validate(report, schema)
    why = f"known-failing entry attempts.bounded passes now: remove it from {kf}"
    assert report["exit_reason"] == why
    assert f"exit code 1: {why}\n" in proc.stdout
    assert report["known_failing"]["entries"][0]["state"] == "passes_now"


@pytest.mark.parametrize("text, message", [
    ("wait.jitter\nwait.jiter # typo\n",
     ':2: unknown check "wait.jiter", did you mean "wait.jitter"?'),
    ("attempts.hidden\n# x\nattempts.hidden\n",
     ':3: duplicate check "attempts.hidden" (first on line 1)'),
    ("wait.jitter attempts.hidden\n",
     ':1: expected a check id and an optional "# reason", got "wait.jitter attempts.hidden"'),
])
def test_bad_known_failing_list_exits_2_before_anything_runs(harness_bin, tmp_path, text,
                                                             message):
    path = write(tmp_path, scenario("kf-bad", OK_200))
    kf = tmp_path / "kf.txt"
    kf.write_text(text)
    marker = tmp_path / "ran"
    proc = run_harness(harness_bin, "run", "-q", "--exec", f"touch {marker}",
                       "--known-failing", str(kf), str(path))
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-harness: {kf}{message}\n"
    assert proc.stdout == ""
    assert not marker.exists()


def test_missing_known_failing_list_exits_2(harness_bin, tmp_path):
    path = write(tmp_path, scenario("kf-missing", OK_200))
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true",
                       "--known-failing", str(tmp_path / "nope.txt"), str(path))
    assert proc.returncode == 2
    assert f"{tmp_path / 'nope.txt'}: cannot read: No such file or directory" in proc.stderr


def test_known_failing_list_may_start_with_a_byte_order_mark(harness_bin, tmp_path, schema):
    doc = scenario("kf-bom", ONE_429)
    kf = tmp_path / "kf.txt"
    kf.write_bytes("\ufeffwait.retry_after # saved by an editor that marks UTF-8\n".encode())
    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT, "--known-failing", str(kf))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    validate(report, schema)
    assert row(report, "wait.retry_after")["known_failing"] is True


def test_known_failing_fifo_is_refused_at_once(harness_bin, tmp_path):
    path = write(tmp_path, scenario("kf-fifo", OK_200))
    fifo = tmp_path / "kf.fifo"
    os.mkfifo(fifo)
    # nobody ever writes to it: reading it would wait for good
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true",
                       "--known-failing", str(fifo), str(path), timeout=30)
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-harness: {fifo}: not a regular file\n"
    assert proc.stdout == ""


# --- --strict -----------------------------------------------------------------

def test_strict_counts_a_check_the_scenario_made_recommended(harness_bin, tmp_path, schema):
    doc = scenario("strict-expect", ONE_429, expect={"wait.retry_after": {"required": False}})
    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT)
    assert proc.returncode == 0, proc.stdout
    assert report["strict"] is False
    sc_row = report["scenarios"][0]["checks"][1]
    assert (sc_row["id"], sc_row["verdict"], sc_row["required"]) == \
        ("wait.retry_after", "fail", False)
    assert sc_row["default"] == "required"
    assert "strict: no\n" in proc.stdout

    proc, report = grade(harness_bin, tmp_path, doc, IMPATIENT, "--strict")
    assert proc.returncode == 1, proc.stdout
    validate(report, schema)
    assert report["strict"] is True
    assert report["exit_reason"] == "a required check failed"
    assert report["scenarios"][0]["checks"][1]["required"] is True
    assert "strict: yes (recommended checks count as required)\n" in proc.stdout


def test_recap_marks_a_failure_that_did_not_count(harness_bin, tmp_path):
    """wait.retry_after counts in a scenario that sends no Retry-After (n/a
    there) and is recommended in one where the client ignores it (fail):
    the last screen says the failure did not count, and that the n/a is what
    kept L1 from being reached."""
    # the 429 is scripted (the check is covered) but never reached
    quiet = scenario("plain-read", [dict(OK_200[0], times=1)] + ONE_429)
    loud = scenario("ignored-pause", ONE_429, expect={"wait.retry_after": {"required": False}})
    for doc in (quiet, loud):
        write(tmp_path, doc)
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"id": "recap", "version": "1",
                                 "scenarios": ["plain-read.json", "ignored-pause.json"]}))
    proc = run_harness(harness_bin, "run", "--exec", IMPATIENT, "--seed", "7", str(suite))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    why = proc.stdout[proc.stdout.index("\nwhy ("):]
    assert "\n  FAIL  wait.retry_after       (L1) recommended, not counted  ignored-pause: " in why
    assert ("\n  N/A   wait.retry_after       (L1) not judged where it counts, so L1 is not "
            "reached  plain-read: ") in why
    assert ("\n  N/A   wait.retry_after       (L1); failed in 1 scenario where it was not "
            "counted\n") in proc.stdout
    assert "level reached: L0" in why
    assert "exit code 0: " in why


def test_strict_counts_a_check_recommended_by_default(harness_bin, tmp_path, schema):
    """wait.concurrency is recommended: five parallel reads over a cap of 1
    fail it, which only --strict turns into exit 1."""
    # five reads of 500 ms each: they miss each other only if a loaded
    # machine starts each more than 500 ms after the one before (2 s in all)
    tasks = [dict(READ_TASK, id=f"t{i}", path=f"/v1/records/{i}") for i in range(1, 6)]
    slow = [{"status": 200, "delay_ms": 500, "body": {"id": "{id}"}}]
    doc = scenario("strict-default", slow, tasks=tasks,
                   expect={"wait.concurrency": {"max_concurrent_requests": 1}})
    proc, report = grade(harness_bin, tmp_path, doc, ONCE)
    c = row(report, "wait.concurrency")
    assert (c["verdict"], c["required"], c["default"]) == ("fail", False, "recommended")
    assert proc.returncode == 0, proc.stdout

    proc, report = grade(harness_bin, tmp_path, doc, ONCE, "--strict")
    validate(report, schema)
    c = row(report, "wait.concurrency")
    assert (c["verdict"], c["required"], c["default"]) == ("fail", True, "recommended")
    assert proc.returncode == 1, proc.stdout

    # listed but not counted: shown, and the summary says both facts apart
    kf = tmp_path / "kf.txt"
    kf.write_text("wait.concurrency # one at a time is coming\n")
    proc, report = grade(harness_bin, tmp_path, doc, ONCE, "--known-failing", str(kf))
    assert proc.returncode == 0, proc.stdout
    assert report["known_failing"]["entries"][0]["state"] == "n/a"
    assert ("  FAIL  wait.concurrency       (L2) not counted; known failing: one at a time "
            "is coming\n") in proc.stdout
    assert "not shown" not in proc.stdout


# --- --repeat -----------------------------------------------------------------

def test_repeat_tallies_each_check_over_the_runs(harness_bin, tmp_path, schema):
    doc = scenario("repeat-3", OK_200)
    path = write(tmp_path, doc)
    report_path = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    proc = run_harness(harness_bin, "run", "--exec", ONCE, "--seed", "40", "--repeat", "3",
                       "--report-json", str(report_path), "--junit", str(junit), str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # a 200 and nothing else: only attempts.bounded of L1 is covered, and
    # it passes; L2's scope and wave checks are not covered, and
    # attempts.hidden (not covered in exec mode) neither: L1
    for k, seed in ((1, 40), (2, 41), (3, 42)):
        assert f"fakeapi-harness: run {k} of 3, seed {seed}\n" in proc.stderr
        assert f"fakeapi-harness: run {k} of 3: level L1, exit code 0\n" in proc.stderr
    report = json.loads(report_path.read_text())
    validate(report, schema)
    rep = report["repeat"]
    assert (rep["runs"], rep["planned"], rep["first_seed"]) == (3, 3, 40)
    assert rep["levels"] == ["L1", "L1", "L1"]
    assert rep["exit_codes"] == [0, 0, 0]
    assert rep["checks"]["attempts.bounded"] == {"pass": 3, "fail": 0, "n/a": 0,
                                                 "pass_rate": 1, "counted": True}
    assert rep["checks"]["wait.jitter"]["n/a"] == 3
    assert set(rep["checks"]) == {c["id"] for c in report["checks"]}
    # the rest describes the last run
    assert report["seed"] == 42
    assert report["exit_reason"] == ("in each of 3 runs: no required check failed and at "
                                     "least one passed")
    assert "attempts.bounded       3/3 pass\n" in proc.stdout
    assert "levels: L1 L1 L1\n" in proc.stdout
    assert "level reached: L1 (lowest of 3 runs)\n" in proc.stdout
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    assert suites["repeat"].get("failures") == "0"


def test_repeat_exit_code_is_the_worst_run(harness_bin, tmp_path, schema):
    """The client fails only when the seed's run is the second: the exit code
    and the reason name that run."""
    # a pause of 2 s: the patient run waits it out, the impatient run's
    # retry lands inside it even when a loaded machine starts it late
    doc = scenario("repeat-worst", [dict(ONE_429[0], headers={"Retry-After": "2"})] + OK_200)
    path = write(tmp_path, doc)
    report_path = tmp_path / "report.json"
    state = tmp_path / "count"
    # first run patient (sleeps the pause), then impatient
    client = (f'n=$(cat {state} 2>/dev/null || echo 0); echo $((n + 1)) > {state}; '
              f'if [ "$n" = 0 ]; then curl -s -o /dev/null {AUTH} {{url}}; sleep 2.2; '
              f'curl -sS -f -o /dev/null {AUTH} {{url}}; else {IMPATIENT}; fi')
    proc = run_harness(harness_bin, "run", "-q", "--exec", client, "--seed", "5",
                       "--repeat", "2", "--report-json", str(report_path), str(path))
    report = json.loads(report_path.read_text())
    validate(report, schema)
    assert proc.returncode == 1, proc.stdout
    assert report["repeat"]["exit_codes"] == [0, 1]
    assert report["repeat"]["checks"]["wait.retry_after"]["pass"] == 1
    assert report["repeat"]["checks"]["wait.retry_after"]["fail"] == 1
    assert report["repeat"]["checks"]["wait.retry_after"]["pass_rate"] == 0.5
    assert report["exit_code"] == 1
    assert report["exit_reason"] == "run 2 of 2 (seed 6): a required check failed"
    assert "wait.retry_after       1/2 pass, 1 fail\n" in proc.stdout


def test_interrupted_repeat_stops_and_exits_2(harness_bin, tmp_path, schema):
    path = write(tmp_path, scenario("repeat-stop", OK_200))
    report_path = tmp_path / "report.json"
    proc = subprocess.Popen([harness_bin, "run", "--exec", ONCE, "--repeat", "200",
                             "--report-json", str(report_path), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=harness_env(), stdin=subprocess.DEVNULL)
    # wait for the second run to start, then stop the repeat
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if ": run 2 of 200, seed " in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, "".join(lines) + err
    assert "fakeapi-harness: interrupted\n" in err
    report = json.loads(report_path.read_text())
    validate(report, schema)
    assert 1 <= report["repeat"]["runs"] < 200
    assert report["exit_code"] == 2
    assert report["exit_reason"] == "interrupted"
    assert "exit code 2: interrupted\n" in out


@pytest.mark.parametrize("args, cause", [
    (["--repeat", "0"], "--repeat: expected an integer 1..1000, got '0'"),
    (["--repeat", "1001"], "--repeat: expected an integer 1..1000, got '1001'"),
    (["--repeat", "2", "--seed", "9007199254740991"], "the last seed would pass"),
    (["--known-failing", ""], "--known-failing: the file name is empty"),
])
def test_repeat_and_known_failing_usage_errors(harness_bin, args, cause):
    proc = run_harness(harness_bin, "run", "--exec", "true", *args)
    assert proc.returncode == 2
    assert cause in proc.stderr


def test_help_documents_the_gating_options(harness_bin):
    proc = run_harness(harness_bin, "run", "--help")
    assert proc.returncode == 0
    for opt in ("--strict", "--known-failing FILE", "--repeat N", "--min-level",
                "--junit FILE", "--report-json FILE", "--seed N", "--jobs N",
                "--journal-dir DIR", "--quiet"):
        assert opt in proc.stdout, opt


# --- ci/fakeapi-gate ----------------------------------------------------------

@pytest.fixture(scope="module")
def gate(repo_root):
    return str(repo_root / "ci" / "fakeapi-gate")


def run_gate(gate, harness_bin, *args, path_harness=True, timeout=300):
    env = harness_env()
    if path_harness:
        env["FAKEAPI_HARNESS"] = harness_bin
    else:
        env.pop("FAKEAPI_HARNESS", None)
    return subprocess.run(["/bin/sh", gate, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def test_gate_exec_client_writes_junit_and_passes_the_exit_code(gate, harness_bin, tmp_path,
                                                                schema):
    path = write(tmp_path, scenario("gate-exec", ONE_429))
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    report = tmp_path / "out" / "report.json"
    proc = run_gate(gate, harness_bin, "--suite", str(path), "--junit", str(junit),
                    "--report-json", str(report), "--seed", "3", "--exec", IMPATIENT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL  wait.retry_after" in proc.stdout
    assert proc.stdout.endswith(
        "fakeapi-gate: failed: level L0, exit code 1: a required check failed\n"
        f"fakeapi-gate: JUnit XML in {junit}\n"
        f"fakeapi-gate: JSON report in {report}\n")
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    case = root.find("./testsuite[@name='gate-exec']/testcase[@name='wait.retry_after']")
    assert case.find("failure") is not None
    validate(json.loads(report.read_text()), schema)
    # only judged checks are testcases; the n/a ones are named, not skipped
    suite = root.find("./testsuite[@name='gate-exec']")
    judged = [c for c in json.loads(report.read_text())["scenarios"][0]["checks"]
              if c["verdict"] != "n/a"]
    assert int(suite.get("tests")) == len(judged) and suite.get("skipped") == "0"
    assert root.find(".//skipped") is None
    not_judged = suite.find("./properties/property[@name='not_judged']").get("value").split()
    assert "write.key_stable" in not_judged and "wait.retry_after" not in not_judged
    # the text report's last screen says why; the n/a lines are only counted
    why = proc.stdout[proc.stdout.index("\nwhy (each failed check once"):]
    assert "\n  FAIL  wait.retry_after       (L1)  gate-exec: task t1 retried" in why
    assert why.index("profile (") < why.index("level reached: L0") < why.index("exit code 1")
    assert "N/A   write.key_stable" not in proc.stdout
    assert re.search(r"\n  N/A   \d+ checks had nothing to judge here(, \d+ of them not covered)? "
                     r"\(-v lists each with why\)\n", proc.stdout)
    proc = run_gate(gate, harness_bin, "--suite", str(path), "--seed", "3", "-v",
                    "--exec", IMPATIENT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "  N/A   write.key_stable       (L3)  " in proc.stdout
    assert "-v lists them" not in proc.stdout

    # the same client with its failure listed passes the gate
    kf = tmp_path / "kf.txt"
    kf.write_text("wait.retry_after # being fixed\n")
    proc = run_gate(gate, harness_bin, "--suite", str(path), "--junit", str(junit),
                    "--known-failing", str(kf), "--exec", IMPATIENT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fakeapi-gate: passed: level L0, exit code 0: no required check failed but 1 " \
           "known failing, and at least one passed\n" in proc.stdout
    root = ET.parse(junit).getroot()
    case = root.find("./testsuite[@name='gate-exec']/testcase[@name='wait.retry_after']")
    assert case.find("failure") is None
    assert case.find("skipped").get("message").startswith("known failing: ")


STDIO_CLIENT = r'''
import json, os, sys, urllib.error, urllib.request

def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

assert sys.argv[1:] == ["it's", "a b", "$HOME"], sys.argv
say({"type": "hello", "protocol": 1, "client": {"name": "gate-py", "version": "1"},
     "features": []})
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] != "task":
        continue
    say({"type": "action_sent", "task": msg["id"], "attempt": 1, "idempotency_key": None})
    req = urllib.request.Request(msg["url"], method=msg["method"], headers=dict(
        msg["headers"], Authorization="Bearer " + os.environ[msg["key_env"]]))
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    say({"type": "action_result", "task": msg["id"], "attempt": 1, "status": status,
         "retry_after": None})
    say({"type": "result", "task": msg["id"], "outcome": "succeeded" if status == 200
         else "failed", "attempts": 1, "waited_ms": 0, "sent": "yes", "provider_id": None})
'''


def test_gate_stdio_client_words_are_quoted_for_the_shell(gate, harness_bin, tmp_path):
    client_dir = tmp_path / "my client"
    client_dir.mkdir()
    script = client_dir / "adapter.py"
    script.write_text(textwrap.dedent(STDIO_CLIENT))
    path = write(tmp_path, scenario("gate-stdio", OK_200))
    junit = tmp_path / "junit.xml"
    proc = run_gate(gate, harness_bin, "--suite", str(path), "--junit", str(junit), "--",
                    "/usr/bin/python3", str(script), "it's", "a b", "$HOME")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mode: stdio" in proc.stdout
    assert "task t1: result succeeded" in proc.stdout
    assert "fakeapi-gate: passed: level " in proc.stdout
    ET.parse(junit)


def test_gate_suite_folder_means_its_suite_json(gate, harness_bin, tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    write(folder, scenario("gate-folder", OK_200))
    (folder / "suite.json").write_text(json.dumps(
        {"id": "gate-suite", "version": "1", "scenarios": ["gate-folder.json"]}))
    proc = run_gate(gate, harness_bin, "--suite", str(folder) + "/", "--exec", ONCE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "suite: gate-suite version 1\n" in proc.stdout


def test_gate_finds_the_harness_on_path(gate, harness_bin, tmp_path):
    path = write(tmp_path, scenario("gate-path", OK_200))
    env = harness_env()
    env.pop("FAKEAPI_HARNESS", None)
    env["PATH"] = os.path.dirname(os.path.abspath(harness_bin)) + os.pathsep + env["PATH"]
    proc = subprocess.run(["/bin/sh", gate, "--suite", str(path), "--exec", ONCE],
                          capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fakeapi-gate: passed" in proc.stdout


@pytest.mark.parametrize("args, cause", [
    ([], "no client: give -- CLIENT-COMMAND or --exec TEMPLATE"),
    (["--exec", "true", "--", "x"], "--exec and -- CLIENT-COMMAND: one client at a time"),
    (["--frobnicate", "--exec", "true"], "unknown option '--frobnicate'"),
    (["--junit"], "--junit: missing its argument"),
    (["--junit", "-", "--exec", "true"], "give a file"),
    (["client", "--exec", "true"], "expected options, then -- CLIENT-COMMAND; got 'client'"),
])
def test_gate_usage_errors_exit_2(gate, harness_bin, args, cause):
    proc = run_gate(gate, harness_bin, *args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("fakeapi-gate: ")
    assert cause in proc.stderr


def test_gate_without_a_harness_exits_2(gate, harness_bin, tmp_path):
    """A gate copied into a pipeline, with no harness beside it or on PATH."""
    env = harness_env()
    env.pop("FAKEAPI_HARNESS", None)
    env["PATH"] = str(tmp_path)  # no fakeapi-harness here; sh is run by path
    (tmp_path / "ci").mkdir()
    copied = shutil.copy(gate, tmp_path / "ci" / "fakeapi-gate")
    proc = subprocess.run(["/bin/sh", copied, "--exec", "true"], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "fakeapi-harness not found: put it on PATH or set FAKEAPI_HARNESS" in proc.stderr


def test_gate_of_a_checkout_finds_its_build(gate, harness_bin, tmp_path):
    """ci/fakeapi-gate beside a build/ runs that build's harness, PATH or not."""
    (tmp_path / "ci").mkdir()
    (tmp_path / "build").mkdir()
    os.symlink(harness_bin, tmp_path / "build" / "fakeapi-harness")
    copied = shutil.copy(gate, tmp_path / "ci" / "fakeapi-gate")
    env = harness_env()
    env.pop("FAKEAPI_HARNESS", None)
    env["PATH"] = "/usr/bin:/bin"
    path = write(tmp_path, scenario("gate-build", OK_200))
    proc = subprocess.run(["/bin/sh", copied, "--suite", str(path), "--exec", ONCE],
                          capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fakeapi-gate: passed: " in proc.stdout
    proc = subprocess.run(["/bin/sh", copied, "--version"], capture_output=True, text=True)
    version = subprocess.run([harness_bin, "--version"], capture_output=True, text=True).stdout
    assert proc.stdout.split() == ["fakeapi-gate", version.split()[-1]]


@pytest.mark.parametrize("what", ["directory", "plain file"])
def test_gate_harness_that_is_no_program_exits_2(gate, harness_bin, tmp_path, what):
    if what == "directory":
        target = tmp_path / "bin dir"
        target.mkdir()
        cause = f"FAKEAPI_HARNESS: {target} is a directory, not the fakeapi-harness program"
    else:
        target = tmp_path / "notes.txt"
        target.write_text("not a program\n")
        cause = f"FAKEAPI_HARNESS: {target} is not an executable file"
    env = harness_env()
    env["FAKEAPI_HARNESS"] = str(target)
    proc = subprocess.run(["/bin/sh", gate, "--exec", "true"], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-gate: {cause} (see fakeapi-gate --help)\n"
    assert proc.stdout == ""


def test_gate_passes_a_harness_usage_error_on(gate, harness_bin, tmp_path):
    path = write(tmp_path, scenario("gate-usage", OK_200))
    proc = run_gate(gate, harness_bin, "--suite", str(path), "--min-level", "L9",
                    "--exec", "true")
    assert proc.returncode == 2
    assert "--min-level: expected L1..L4, got 'L9'" in proc.stderr
    assert "fakeapi-gate: could not grade: level none, exit code 2" in proc.stdout


def test_gate_help_lists_its_options(gate, harness_bin):
    proc = run_gate(gate, harness_bin, "--help")
    assert proc.returncode == 0
    for opt in ("--min-level", "--known-failing FILE", "--strict", "--suite", "--junit FILE",
                "--report-json FILE", "--exec TEMPLATE", "FAKEAPI_HARNESS"):
        assert opt in proc.stdout, opt


def test_gate_is_posix_sh(gate):
    dash = shutil.which("dash")
    if dash is None:
        pytest.skip("no second POSIX shell to parse it with")
    proc = subprocess.run([dash, "-n", gate], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_ci_examples_run_the_gate_and_publish_junit(repo_root):
    examples = repo_root / "ci" / "examples"
    gh = (examples / "github-actions.yml").read_text()
    gl = (examples / "gitlab-ci.yml").read_text()
    jk = (examples / "Jenkinsfile").read_text()
    for text in (gh, gl, jk):
        assert "fakeapi-gate" in text
        assert "--junit fakeapi-junit.xml" in text
    assert "actions/upload-artifact" in gh and "reporter: java-junit" in gh
    assert "junit: fakeapi-junit.xml" in gl
    assert "junit " in jk and "fakeapi-junit.xml" in jk
    try:
        import yaml
    except ImportError:
        return
    assert yaml.safe_load(gh)["jobs"]
    assert yaml.safe_load(gl)
