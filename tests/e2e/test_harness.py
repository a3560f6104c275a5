"""fakeapi-harness in exec mode: command line, scenario runs, reports.

Every timing fact is read from the report or the journal the harness wrote,
never from a wall-clock sleep here. The fine-grained cases write their own
scenario files into tmp_path and keep Retry-After at 1-2 s.
"""
import collections
import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import uuid
import xml.etree.ElementTree as ET
from functools import partial

import pytest

from conftest import run_harness, wait_for
from scenarios import key_table, one_route_scenario

WRITE_CHECKS = ("write.key_stable", "write.body_stable", "write.no_duplicate",
                "write.reconcile_first", "ambiguity.preserved")
STEP5_CHECKS = ("wait.concurrency", "budget.escalates", "escalation.sanitised", "cancel.quiet",
                "classify.circuit")
# the LLM rate-limit guide's checks (test_stream_pacing.py): published limits, broken streams
LLM_CHECKS = ("wait.pacing", "stream.no_silent_retry")
CHECKS = {"attempts.bounded", "wait.retry_after", "classify.no_retry_4xx", "outcome.expected",
          "wait.scope_pause", "wait.jitter", "attempts.hidden", *WRITE_CHECKS, *STEP5_CHECKS,
          *LLM_CHECKS}
# a scenario without a write task: the write checks have nothing to judge
NO_WRITE = dict.fromkeys(WRITE_CHECKS, "n/a")
# a scenario that expects no cap, budget, cancel or circuit, and no escalation,
# publishes no pacing and streams nothing
NO_STEP5 = dict.fromkeys(STEP5_CHECKS + LLM_CHECKS, "n/a")

AUTH = '-H "Authorization: Bearer $FAKEAPI_KEY"'
CURL = f"curl -sS -f --retry 4 {AUTH} {{url}}"
# Retries at once, three times: ignores Retry-After.
IMPATIENT = (f'for i in 1 2 3; do curl -s -o /dev/null -w "%{{http_code}}" {AUTH} {{url}}'
             " | grep -q 200 && exit 0; done; exit 1")
# Tries twice whatever the answer: retries a 400.
STUBBORN = f"for i in 1 2; do curl -s -o /dev/null {AUTH} {{url}}; done; exit 1"
# Sleeps the delta-seconds of a 429's Retry-After, then retries once.
PATIENT = (
    'h="$CLIENT_STATE_DIR/$FAKEAPI_TASK.headers"; '
    f'code=$(curl -s -o /dev/null -D "$h" -w "%{{http_code}}" {AUTH} {{url}}); '
    'if [ "$code" = 429 ]; then '
    "ra=$(sed -n 's/^[Rr]etry-[Aa]fter: *\\([0-9]*\\).*/\\1/p' \"$h\"); "
    'sleep "${ra:-1}"; '
    f'code=$(curl -s -o /dev/null -w "%{{http_code}}" {AUTH} {{url}}); '
    'fi; [ "$code" = 200 ]'
)



def read_jsonl(path):
    with open(path, "rb") as f:
        return [line.rstrip(b"\n") for line in f if line.strip()]


KEYS = key_table(("k1", "sk-e2e-k1", "u1"), ("k2", "sk-e2e-k2", "u1"))
# A one-route scenario; by default one task t1 sent at the start.
scenario = partial(one_route_scenario, keys=KEYS)


def write(tmp_path, doc, name=None):
    path = tmp_path / (name or f"{doc['id']}.json")
    path.write_text(json.dumps(doc, indent=1))
    return path


def run_scenario(harness_bin, tmp_path, doc, client, *extra):
    """Run one scenario file; returns (process, report dict)."""
    path = write(tmp_path, doc)
    report = tmp_path / "report.json"
    proc = run_harness(harness_bin, "run", "-q", "--exec", client, "--seed", "7",
                       "--report-json", str(report), *extra, str(path))
    assert report.exists(), proc.stderr
    return proc, json.loads(report.read_text())


def verdicts(scenario_report):
    return {c["id"]: c["verdict"] for c in scenario_report["checks"]}


def live_with_token(token):
    """Pids of live (non-zombie) processes whose command line holds @token."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if token.encode() in cmdline and stat[stat.rindex(")") + 2] not in "ZX":
            found.append(int(entry))
    return found


OK_200 = [{"status": 200, "body": {"id": "{id}"}}]


# --- the command line -------------------------------------------------------

def test_help_prints_usage_and_exits_0(harness_bin):
    for args in (["--help"], ["-h"], ["run", "--help"]):
        proc = run_harness(harness_bin, *args)
        assert proc.returncode == 0, proc.stderr
        assert "SYNOPSIS" in proc.stdout
        assert "--exec TEMPLATE" in proc.stdout
        assert "EXIT STATUS" in proc.stdout


def test_version_names_the_program(harness_bin):
    proc = run_harness(harness_bin, "--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("fakeapi-harness ")


def test_exec_and_client_together_are_a_usage_error(harness_bin, repo_root):
    proc = run_harness(harness_bin, "run", "--exec", "true", "--client", "true",
                       str(repo_root / "scenarios/five-step-fast/suite.json"))
    assert proc.returncode == 2
    assert "--exec" in proc.stderr and "--client" in proc.stderr


@pytest.mark.parametrize("args, cause", [
    (["run", "--exec", "true", "--jobs", "0"], "--jobs: expected an integer 1..64, got '0'"),
    (["run", "--exec", "true", "--min-level", "L5"], "--min-level: expected L1..L4, got 'L5'"),
    (["run", "--exec", "true", "--seed", "x1"], "--seed: expected an integer"),
    (["run", "--exec", "true", "--frobnicate"], "unknown option '--frobnicate'"),
    (["run", "--exec"], "--exec: missing its argument"),
    (["run", "--exec", "true", "a.json", "b.json"], "one suite or scenario at a time"),
    (["walk"], "unknown command 'walk'"),
])
def test_usage_errors_exit_2_naming_the_cause(harness_bin, args, cause):
    proc = run_harness(harness_bin, *args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("fakeapi-harness: ")
    assert cause in proc.stderr


def test_broken_scenario_exits_2_naming_its_path(harness_bin, tmp_path):
    doc = scenario("broken", [{"status": "200"}])
    path = write(tmp_path, doc)
    proc = run_harness(harness_bin, "run", "--exec", "true", str(path))
    assert proc.returncode == 2
    assert str(path) in proc.stderr
    assert "$.routes[0].responses[0].status" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("command", ["run", "replay"])
@pytest.mark.parametrize("case", ["expect-cancel-margin", "unknown-check"])
def test_bad_expect_exits_2_with_the_loader_message(harness_bin, repo_root, command, case):
    # the provider keeps $.harness.expect as it is; the harness checks it
    # when it loads the scenario, with the corpus's exact message
    bad = repo_root / "tests" / "data" / "bad"
    want = (bad / f"{case}.err").read_text().rstrip("\n")
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    # the message names the file as given: relative to the repository
    proc = subprocess.run([harness_bin, command, "-q", "--exec", "true",
                           f"tests/data/bad/{case}.json"], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL, cwd=repo_root)
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-harness: {want}\n"
    assert proc.stdout == ""


def test_scenario_without_tasks_exits_2_naming_its_path(harness_bin, tmp_path):
    doc = scenario("no-harness", [{"status": 200}])
    del doc["harness"]
    path = write(tmp_path, doc)
    proc = run_harness(harness_bin, "run", "-q", "--exec", "true", str(path))
    assert proc.returncode == 2
    assert proc.stderr == (f"fakeapi-harness: {path}: $.harness: expected tasks for the "
                           "client to run, got none\n")


def test_missing_suite_exits_2_naming_its_path(harness_bin, tmp_path):
    path = tmp_path / "nowhere" / "suite.json"
    proc = run_harness(harness_bin, "run", "--exec", "true", str(path))
    assert proc.returncode == 2
    assert f"{path}: cannot read" in proc.stderr


def test_client_that_cannot_start_exits_2(harness_bin, tmp_path):
    doc = scenario("no-client", [{"status": 200, "body": {"id": "{id}"}}])
    proc, report = run_scenario(harness_bin, tmp_path, doc, "./no-such-client {url}")
    assert proc.returncode == 2, proc.stderr
    task = report["scenarios"][0]["tasks"][0]
    assert task["exit_code"] == 127
    assert task["error"].startswith("client could not start: exit 127, no attempt made")
    assert "no-such-client" in task["error"]
    assert "task t1: client could not start" in report["scenarios"][0]["error"]
    assert "task t1: client could not start" in proc.stderr
    # a scenario that could not run judges nothing: no check, and the last
    # screen blames the error, not an n/a
    assert report["scenarios"][0]["checks"] == []
    why = proc.stdout[proc.stdout.index("\nwhy ("):]
    assert why.startswith("\nwhy (no check failed, but not every scenario ran):\n"
                          "  ERROR  could not run no-client: task t1: client could not start")


def test_failed_task_shows_its_stderr_tail_scrubbed(harness_bin, tmp_path):
    """An exec client that fails says why on stderr: the text report shows
    the last lines under the task, the JSON report keeps the tail, JUnit
    puts it in <system-err>; the key it printed is never shown."""
    doc = scenario("says-why", [{"status": 503, "body": {"error": {"code": "overloaded"}}}])
    client = ('for i in $(seq 1 20); do echo "filler line $i" >&2; done; '
              'echo "giving up with key $FAKEAPI_KEY" >&2; '
              'curl -s -o /dev/null -H "Authorization: Bearer $FAKEAPI_KEY" {url}; exit 3')
    junit = tmp_path / "junit.xml"
    proc, report = run_scenario(harness_bin, tmp_path, doc, client, "--junit", str(junit))
    sc = report["scenarios"][0]
    tail = sc["tasks"][0]["stderr_tail"]
    assert tail.endswith("giving up with key [key secret].[key canary]"), tail
    assert "filler line 1\n" in tail and sc["client_stderr"] is None
    out = proc.stdout
    assert "  task t1: exit 3\n    stderr (its last lines):\n      | (9 earlier lines in the JSON " \
           "report)\n      | filler line 10\n" in out
    assert "      | giving up with key [key secret].[key canary]\n" in out
    key = doc["provider"]["keys"]["k1"]["secret"]
    assert key not in out and key not in junit.read_text() and key not in json.dumps(report)
    err = ET.parse(junit).getroot().find("./testsuite[@name='says-why']/system-err").text
    assert err.startswith("task t1 stderr (its last lines):\nfiller line 1\n")
    assert err.endswith("giving up with key [key secret].[key canary]")


def test_long_wait_says_what_it_waits_for(harness_bin, tmp_path):
    """A scenario that runs long prints, every FAKEAPI_PROGRESS_S, which
    task it waits for and on what, one whole line each, two jobs' lines
    never run together."""
    pause = [{"times": 1, "status": 429, "headers": {"Retry-After": "3"},
              "body": {"error": {"code": "rate_limit_exceeded"}}},
             {"status": 200, "body": {"id": "{id}"}}]
    for sid in ("long-a", "long-b"):
        write(tmp_path, scenario(sid, pause))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"id": "long", "version": "1",
                                 "scenarios": ["long-a.json", "long-b.json"]}))
    client = 'curl -sS -f -o /dev/null --retry 1 -H "Authorization: Bearer $FAKEAPI_KEY" {url}'
    proc = run_harness(harness_bin, "run", "--jobs", "2", "--exec", client, str(suite),
                       extra_env={"FAKEAPI_PROGRESS_S": "0.5"})
    assert proc.returncode in (0, 1), proc.stderr
    waits = [ln for ln in proc.stderr.splitlines() if ": waiting for " in ln]
    assert waits, proc.stderr
    line = re.compile(r"\[[12]/2\] long-[ab]: waiting for t1 \(Retry-After 3 s, \d+ s left, "
                      r"task timeout \d+ s, running \d+ s\)$")
    assert any(line.match(w) for w in waits), waits
    for ln in proc.stderr.splitlines():
        assert re.match(r"(fakeapi-harness: |\[[12]/2\] long-[ab](:| \.\.\.))", ln), ln


# --- the clients' behaviour, graded -------------------------------------------

RETRY_AFTER_1 = [
    {"times": 1, "status": 429, "retry_after": 1,
     "body": {"error": {"code": "rate_limit_exceeded", "retryAfter": 1}}},
    {"status": 200, "body": {"id": "{id}"}},
]


def test_immediate_retries_fail_wait_retry_after(harness_bin, tmp_path):
    # a pause of 3 s, not 1: the client's immediate retry lands inside it
    # however late a loaded machine starts that curl (the client never
    # waits, so the longer pause costs nothing)
    doc = scenario("impatient", [
        dict(RETRY_AFTER_1[0], retry_after=3,
             body={"error": {"code": "rate_limit_exceeded", "retryAfter": 3}}),
        RETRY_AFTER_1[1]])
    proc, report = run_scenario(harness_bin, tmp_path, doc, IMPATIENT)
    s = report["scenarios"][0]
    assert verdicts(s) == {"attempts.bounded": "pass", "wait.retry_after": "fail",
                           "classify.no_retry_4xx": "n/a", "wait.scope_pause": "n/a",
                           "wait.jitter": "n/a", "attempts.hidden": "n/a", "outcome.expected": "n/a",
                           **NO_WRITE, **NO_STEP5}
    assert proc.returncode == 1
    assert report["exit_code"] == 1
    assert s["attempts"] == 2
    assert s["tasks"][0]["exit_code"] == 0
    bad = next(c for c in s["checks"] if c["id"] == "wait.retry_after")
    first, second = bad["evidence"]
    assert first["status"] == 429 and first["retry_after"] == "3"
    assert second["t_arrival_us"] < first["pause_until_us"] - 50000


@pytest.mark.parametrize("value", ["99999999999", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_immediate_retry_after_a_retry_after_past_2_31_s_fails_wait_retry_after(
        harness_bin, tmp_path, value):
    # RFC 9111 1.2.2: more delta-seconds than a recipient can hold is 2^31 s,
    # and a date farther ahead counts as that far: a pause all the same
    doc = scenario("huge-pause", [
        {"times": 1, "status": 429, "headers": {"Retry-After": value},
         "body": {"error": {"code": "rate_limit_exceeded"}}},
        RETRY_AFTER_1[1]])
    proc, report = run_scenario(harness_bin, tmp_path, doc, IMPATIENT)
    s = report["scenarios"][0]
    assert verdicts(s)["wait.retry_after"] == "fail", proc.stdout + proc.stderr
    assert proc.returncode == 1
    bad = next(c for c in s["checks"] if c["id"] == "wait.retry_after")
    first, second = bad["evidence"]
    assert first["retry_after"] == value
    pause_us = first["pause_until_us"] - first["t_arrival_us"]
    assert 2**31 * 10**6 - 10**6 <= pause_us <= 2**31 * 10**6 + 10**6
    assert second["t_arrival_us"] < first["pause_until_us"]


def test_retries_past_the_budget_fail_attempts_bounded(harness_bin, tmp_path):
    # a client that keeps trying 503s, one second apart, past max_attempts 2
    doc = scenario("spendthrift", [{"status": 503, "body": {"error": {"code": "pool_exhausted"}}}])
    doc["harness"]["tasks"][0]["budget"] = {"max_attempts": 2}
    client = (f"for i in 1 2 3 4; do curl -s -o /dev/null {AUTH} {{url}}; sleep 0.2; done; exit 1")
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    s = report["scenarios"][0]
    assert verdicts(s)["attempts.bounded"] == "fail"
    assert s["attempts"] == 4
    bounded = next(c for c in s["checks"] if c["id"] == "attempts.bounded")
    assert "task t1 made 4 attempts, budget max_attempts 2" in bounded["detail"]
    assert [e["seq"] for e in bounded["evidence"]] == sorted(e["seq"] for e in bounded["evidence"])
    assert len(bounded["evidence"]) == 2
    assert proc.returncode == 1


def test_retried_400_fails_classify_no_retry_4xx(harness_bin, tmp_path):
    doc = scenario("stubborn", [{"status": 400, "body": {"error": {"code": "invalid_request"}}}])
    proc, report = run_scenario(harness_bin, tmp_path, doc, STUBBORN)
    s = report["scenarios"][0]
    assert verdicts(s) == {"attempts.bounded": "pass", "wait.retry_after": "n/a",
                           "classify.no_retry_4xx": "fail", "wait.scope_pause": "n/a",
                           "wait.jitter": "n/a", "attempts.hidden": "n/a", "outcome.expected": "n/a",
                           **NO_WRITE, **NO_STEP5}
    assert proc.returncode == 1
    assert s["attempts"] == 2
    assert s["tasks"][0]["exit_code"] == 1


def test_sleeping_the_retry_after_passes(harness_bin, tmp_path):
    doc = scenario("patient", RETRY_AFTER_1)
    proc, report = run_scenario(harness_bin, tmp_path, doc, PATIENT)
    s = report["scenarios"][0]
    assert verdicts(s) == {"attempts.bounded": "pass", "wait.retry_after": "pass",
                           "classify.no_retry_4xx": "n/a", "wait.scope_pause": "n/a",
                           "wait.jitter": "n/a", "attempts.hidden": "n/a", "outcome.expected": "n/a",
                           **NO_WRITE, **NO_STEP5}
    assert proc.returncode == 0, proc.stdout
    assert s["attempts"] == 2
    assert s["tasks"][0]["exit_code"] == 0
    good = next(c for c in s["checks"] if c["id"] == "wait.retry_after")
    told, retry = good["evidence"]
    assert retry["t_arrival_us"] >= told["pause_until_us"]


def test_second_task_inside_the_scope_pause_fails_wait_scope_pause(harness_bin, tmp_path):
    tasks = [{"id": t, "key": k, "method": "GET", "path": "/v1/records/7",
              "budget": {"max_attempts": 4, "max_wait_s": 5}}
             for t, k in (("t1", "k1"), ("t2", "k2"))]
    events = [{"at_ms": 0, "send": ["t1"]},
              {"after": {"task": "t1", "status": 429}, "plus_ms": 0, "send": ["t2"]}]
    doc = scenario("two-keys", [dict(RETRY_AFTER_1[0], retry_after=2), RETRY_AFTER_1[1]],
                   tasks=tasks, events=events,
                   during_pause={"status": 429, "body": {"error": {"code": "rate_limit_exceeded"}}})
    proc, report = run_scenario(harness_bin, tmp_path, doc, PATIENT)
    s = report["scenarios"][0]
    assert verdicts(s) == {"attempts.bounded": "pass", "wait.retry_after": "pass",
                           "classify.no_retry_4xx": "n/a", "wait.scope_pause": "fail",
                           "wait.jitter": "n/a", "attempts.hidden": "n/a", "outcome.expected": "n/a",
                           **NO_WRITE, **NO_STEP5}
    assert proc.returncode == 1
    sent = {t["id"]: t["sent"] for t in s["tasks"]}
    assert sent == {"t1": True, "t2": True}


def test_hung_client_is_stopped_by_the_task_timeout(harness_bin, tmp_path):
    doc = scenario("hung", [{"status": 200, "body": {"id": "{id}"}}], timeout_s=30)
    doc["harness"]["tasks"][0]["timeout_s"] = 1
    proc, report = run_scenario(harness_bin, tmp_path, doc,
                                f"curl -s -o /dev/null {AUTH} {{url}}; sleep 60 & sleep 60")
    s = report["scenarios"][0]
    assert s["tasks"][0]["timed_out"] is True
    assert s["tasks"][0]["exit_code"] is None
    assert s["attempts"] == 1
    assert s["duration_ms"] < 10000
    assert "timed out" in proc.stdout
    assert verdicts(s)["attempts.bounded"] == "fail"
    bounded = next(c for c in s["checks"] if c["id"] == "attempts.bounded")
    assert bounded["detail"].startswith("task t1 hung: its client was killed by its "), bounded
    assert "timeout, after 1 attempt (the last at +" in bounded["detail"]
    assert proc.returncode == 1


# --- outcome.expected in exec mode: the exit status is the task's end ------

RETRYABLE_503 = [{"times": 1, "status": 503, "retry_after": 0}, *OK_200]


@pytest.mark.parametrize("client, verdict, detail", [
    # gives up at the first answer: curl -f exits 22 on the 503
    (f"curl -sS -f -o /dev/null {AUTH} {{url}}", "fail",
     "task t1 ended failed (exit 22) after 1 attempt; a correct client succeeds within its "
     "budget of 4 attempts and 5 s of waiting: the 503 with Retry-After: 0 (seq 1) is "
     "retryable"),
    # retries the 503 as its budget allows, then exits 0
    (f"curl -sS -f -o /dev/null --retry 3 {AUTH} {{url}}", "pass",
     "1 task ended as a correct client ends it (t1 succeeded); exec mode: read from exit "
     "statuses"),
    # waits far beyond the announced pause: stopped at its timeout, no outcome
    (f"curl -s -o /dev/null {AUTH} {{url}}; sleep 60 & sleep 60", "fail",
     "task t1 timed out after 2 s with no outcome after 1 attempt; a correct client succeeds "
     "within its budget of 4 attempts and 5 s of waiting: the 503 with Retry-After: 0 (seq 1) "
     "is retryable"),
])
def test_outcome_expected_reads_an_exec_clients_exit_status(harness_bin, tmp_path, client,
                                                            verdict, detail):
    doc = scenario("outcome-exec", RETRYABLE_503, timeout_s=30)
    doc["harness"]["tasks"][0].update(outcome="succeeded", timeout_s=2)
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    s = report["scenarios"][0]
    got = next(c for c in s["checks"] if c["id"] == "outcome.expected")
    assert (got["verdict"], got["detail"]) == (verdict, detail), proc.stdout
    assert got["required"] is True and got["level"] == 1
    assert [e["seq"] for e in got["evidence"]] == list(range(1, s["attempts"] + 1))
    assert proc.returncode == (0 if verdict == "pass" else 1), proc.stdout


def test_outcome_expected_maps_a_cancel_and_accepts_failed_for_escalated(harness_bin, tmp_path):
    """Exec mode: a process ended after the harness cancelled it is cancelled;
    an exec client cannot say escalated, so its non-zero exit meets it."""
    tasks = [{"id": "t1", "key": "k1", "method": "GET", "path": "/v1/records/7",
              "budget": {"max_attempts": 4, "max_wait_s": 5}, "outcome": "cancelled"},
             {"id": "t2", "key": "k1", "method": "GET", "path": "/v1/records/8",
              "budget": {"max_attempts": 4, "max_wait_s": 5}, "outcome": "escalated"}]
    events = [{"at_ms": 0, "send": ["t1", "t2"]},
              {"after": {"task": "t1", "status": 200}, "plus_ms": 300, "cancel": ["t1"]}]
    doc = scenario("outcome-cancel", OK_200, tasks=tasks, events=events, timeout_s=30)
    client = (f'curl -s -o /dev/null {AUTH} {{url}}; '
              'if [ "$FAKEAPI_TASK" = t1 ]; then sleep 20; else exit 3; fi')
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    s = report["scenarios"][0]
    got = next(c for c in s["checks"] if c["id"] == "outcome.expected")
    assert got["verdict"] == "pass", got["detail"]
    assert got["detail"].startswith("2 tasks ended as a correct client ends them "
                                    "(t1 cancelled, t2 failed)")


@pytest.mark.parametrize("client", ["false", "exit 1"])
def test_a_client_that_sends_nothing_does_not_pass_by_failing(harness_bin, tmp_path, client):
    """A task whose correct ending is "failed" (a 400) is not met by a
    client that never sent: no answer led to its exit 1. It is n/a, and with
    nothing else judged the run exits 1 (no required check passed)."""
    doc = scenario("no-send", [{"status": 400, "body": {"error": {"code": "bad_request"}}}])
    doc["harness"]["tasks"][0]["outcome"] = "failed"
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    got = next(c for c in report["scenarios"][0]["checks"] if c["id"] == "outcome.expected")
    assert got["verdict"] == "n/a", got
    assert got["detail"].startswith("task t1 ended failed (exit 1) without sending an attempt")
    assert proc.returncode == 1 and report["exit_reason"] == "no required check passed"
    # the same client where the task should succeed fails, attempt or not
    doc["harness"]["tasks"][0]["outcome"] = "succeeded"
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    got = next(c for c in report["scenarios"][0]["checks"] if c["id"] == "outcome.expected")
    assert got["verdict"] == "fail", got


def test_scenario_without_outcomes_leaves_outcome_expected_na(harness_bin, tmp_path):
    doc = scenario("outcome-none", OK_200)
    _, report = run_scenario(harness_bin, tmp_path, doc, CURL)
    got = next(c for c in report["scenarios"][0]["checks"] if c["id"] == "outcome.expected")
    assert (got["verdict"], got["detail"]) == (
        "n/a", "not judged here: no task says how a correct client ends it "
               "($.harness.tasks[i].outcome)")


def test_event_whose_trigger_never_comes_is_dropped(harness_bin, tmp_path):
    tasks = [{"id": t, "key": "k1", "method": "GET", "path": "/v1/records/7",
              "budget": {"max_attempts": 4}} for t in ("t1", "t2")]
    events = [{"at_ms": 0, "send": ["t1"]},
              {"after": {"task": "t1", "status": 429}, "plus_ms": 0, "send": ["t2"]}]
    doc = scenario("no-trigger", [{"status": 200, "body": {"id": "{id}"}}],
                   tasks=tasks, events=events, timeout_s=60)
    proc, report = run_scenario(harness_bin, tmp_path, doc, CURL)
    s = report["scenarios"][0]
    assert [(t["id"], t["sent"]) for t in s["tasks"]] == [("t1", True), ("t2", False)]
    assert s["attempts"] == 1
    assert s["duration_ms"] < 10000  # ended when t1 did, not at the timeout
    assert proc.returncode == 0


def test_after_event_fires_on_the_status_it_names(harness_bin, tmp_path):
    tasks = [{"id": t, "key": "k1", "method": "GET", "path": "/v1/records/7",
              "budget": {"max_attempts": 4}} for t in ("t1", "t2")]
    events = [{"at_ms": 0, "send": ["t1"]},
              {"after": {"task": "t1", "status": 200, "on": "client_saw"}, "plus_ms": 0,
               "send": ["t2"]}]
    doc = scenario("chain", [{"status": 200, "body": {"id": "{id}"}}], tasks=tasks, events=events)
    journal_dir = tmp_path / "journals"
    proc, report = run_scenario(harness_bin, tmp_path, doc, CURL,
                                "--journal-dir", str(journal_dir))
    assert proc.returncode == 0, proc.stdout
    lines = [json.loads(b) for b in read_jsonl(journal_dir / "chain.jsonl")]
    assert [e["task"] for e in lines] == ["t1", "t2"]
    # exec mode cannot see the client's view: client_saw waits >= 200 ms
    assert lines[1]["t_arrival_us"] >= lines[0]["t_response_us"] + 200000


# --- curl over the fast five-step suite ----------------------------------------

# the run behind these tests takes ~25 s: one test worker does it once
CURL_FAST_GROUP = pytest.mark.xdist_group("curl-fast")


@pytest.fixture(scope="module")
def curl_fast(harness_bin, repo_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("curl-fast")
    report, junit, journals = out / "report.json", out / "junit.xml", out / "journals"
    proc = run_harness(harness_bin, "run", "--exec", CURL, "--seed", "42",
                       "--report-json", str(report), "--junit", str(junit),
                       "--journal-dir", str(journals),
                       str(repo_root / "scenarios/five-step-fast/suite.json"))
    assert report.exists(), proc.stderr
    return proc, json.loads(report.read_text()), junit, journals


@CURL_FAST_GROUP
def test_curl_fast_report_has_a_verdict_for_every_check(curl_fast):
    proc, report, _, _ = curl_fast
    assert proc.returncode == report["exit_code"]
    assert report["suite"] == "five-step-fast" and report["suite_version"] == "5"
    assert report["seed"] == 42 and report["mode"] == "exec"
    assert report["client"]["command"] == CURL
    assert [s["id"] for s in report["scenarios"]] == [
        "step-1-3-shared-read", "retry-after-http-date", "retry-after-past-date",
        "no-retry-400", "no-retry-422", "step-3-spread", "hidden-retry-503",
        "step-4-write-drop-after-commit", "write-drop-before-commit", "write-reset-after-commit",
        "write-partial-body", "write-timeout-after-commit", "write-client-reference-only",
        "write-no-reconciliation", "step-5-budget-long-retry-after", "step-5-budget-503-forever",
        "step-5-cancel-pending-retry", "step-5-circuit-422", "scope-concurrency-cap"]
    assert {c["id"] for c in report["checks"]} == CHECKS
    for s in report["scenarios"]:
        assert s["error"] is None, s["error"]
        assert set(verdicts(s)) == CHECKS
        assert set(verdicts(s).values()) <= {"pass", "fail", "n/a"}
        assert all(c["detail"] for c in s["checks"])
    assert "seed: 42" in proc.stdout
    assert "[19/19] " in proc.stderr


@CURL_FAST_GROUP
def test_curl_fast_evidence_matches_the_journal(curl_fast, fakeapi_bin):
    _, report, _, journals = curl_fast
    for s in report["scenarios"]:
        path = journals / f"{s['id']}.jsonl"
        raw = read_jsonl(path)
        lines = {e["seq"]: e for e in map(json.loads, raw)}
        assert s["attempts"] == len(raw)
        assert s["journal_head"] == hashlib.sha256(raw[-1]).hexdigest()
        verify = subprocess.run([fakeapi_bin, "verify-journal", str(path)],
                                capture_output=True, text=True)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        for c in s["checks"]:
            for ev in c["evidence"]:
                line = lines[ev["seq"]]
                for field in ("task", "status", "t_arrival_us", "retry_after", "scope"):
                    assert ev[field] == line[field], (s["id"], c["id"], field)
        # a passing budget check cites every attempt of every budgeted task
        # (all of them are, in this suite): its counts are the journal's
        journal_counts = collections.Counter(e["task"] for e in lines.values())
        assert set(journal_counts) <= {t["id"] for t in s["tasks"] if t["sent"]}
        bounded = next(c for c in s["checks"] if c["id"] == "attempts.bounded")
        if bounded["verdict"] == "pass":
            per_task = collections.Counter(ev["task"] for ev in bounded["evidence"])
            assert per_task == journal_counts
            doc = json.loads(pathlib.Path(s["file"]).read_text())
            budget = {t["id"]: t["budget"]["max_attempts"] for t in doc["harness"]["tasks"]}
            assert all(n <= budget[t] for t, n in per_task.items()), (s["id"], per_task)


@CURL_FAST_GROUP
def test_curl_fast_verdicts(curl_fast):
    _, report, _, _ = curl_fast
    by_id = {s["id"]: verdicts(s) for s in report["scenarios"]}
    # curl honours a delta-seconds Retry-After but knows nothing of scopes:
    # t2 and t3 start inside the pause told to t1
    assert by_id["step-1-3-shared-read"]["wait.retry_after"] == "pass"
    assert by_id["step-1-3-shared-read"]["wait.scope_pause"] == "fail"
    assert by_id["retry-after-http-date"]["wait.retry_after"] == "pass"
    assert by_id["no-retry-400"]["classify.no_retry_4xx"] == "pass"
    assert by_id["no-retry-422"]["classify.no_retry_4xx"] == "pass"
    # curl 7.88 sleeps for ever on a Retry-After date in the past: the task
    # timeout kills it, and a hung client fails the budget check
    assert by_id["retry-after-past-date"]["attempts.bounded"] == "fail"
    assert report["exit_code"] == 1


@CURL_FAST_GROUP
def test_curl_fast_junit_is_parseable(curl_fast):
    _, report, junit, _ = curl_fast
    root = ET.parse(junit).getroot()
    *suites, grade = root.findall(".//testsuite")
    assert [ts.get("name") for ts in suites] == [s["id"] for s in report["scenarios"]]
    skipped = 0
    for ts, s in zip(suites, report["scenarios"]):
        # a testcase per judged check; the n/a ones are named in not_judged
        judged = [c["id"] for c in s["checks"] if c["verdict"] != "n/a"]
        na = [c["id"] for c in s["checks"] if c["verdict"] == "n/a"]
        # a failure that does not count (recommended) is skipped, not red
        forgiven = [c["id"] for c in s["checks"] if c["verdict"] == "fail" and not c["required"]]
        assert [tc.get("name") for tc in ts.findall("testcase")] == judged
        assert int(ts.get("tests")) == len(judged) and int(ts.get("skipped")) == len(forgiven)
        assert [tc.get("name") for tc in ts.findall("testcase") if tc.find("skipped") is not None] \
            == forgiven
        skipped += len(forgiven)
        prop = ts.find("./properties/property[@name='not_judged']").get("value")
        assert prop.split() == na and len(judged) + len(na) == len(CHECKS)
    failures = sum(len(ts.findall("testcase/failure")) for ts in suites)
    assert failures == report["summary"]["fail"] - skipped > 0
    # the grade: the failures above already make the page red
    assert grade.get("name") == "grade" and grade.get("failures") == "0"
    assert grade.find("testcase/system-out").text.endswith(f"exit code 1: {report['exit_reason']}")


@CURL_FAST_GROUP
def test_curl_fast_report_follows_the_published_schema(curl_fast, repo_root):
    import jsonschema
    _, report, _, _ = curl_fast
    schema = json.loads((repo_root / "docs" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    broken = dict(report)
    del broken["summary"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    # per-task attempt counts are the journal's
    for s in report["scenarios"]:
        assert sum(t["attempts"] for t in s["tasks"]) == s["attempts"] - s["unattributed_attempts"]


# --- a client cannot escape the grading ----------------------------------------

def test_client_cannot_reset_the_journal_it_is_graded_on(harness_bin, tmp_path):
    # five attempts at a 400 with a budget of one, a reset, one more attempt
    doc = scenario("reset", [{"status": 400, "body": {"error": {"code": "invalid_request"}}}])
    doc["harness"]["tasks"][0]["budget"] = {"max_attempts": 1}
    client = (f"for i in 1 2 3 4 5; do curl -s -o /dev/null {AUTH} {{url}}; done; "
              f'curl -s -o /dev/null -X POST {AUTH} "$FAKEAPI_URL/_fakeapi/reset"; '
              f"curl -s -o /dev/null {AUTH} {{url}}; exit 1")
    journals = tmp_path / "journals"
    proc, report = run_scenario(harness_bin, tmp_path, doc, client, "--journal-dir", str(journals))
    s = report["scenarios"][0]
    assert s["attempts"] == 7
    assert s["unattributed_attempts"] == 1  # the reset itself
    assert s["tasks"][0]["attempts"] == 6
    lines = [json.loads(b) for b in read_jsonl(journals / "reset.jsonl")]
    assert [(e["method"], e["path"], e["status"]) for e in lines][5] == \
        ("POST", "/_fakeapi/reset", 404)
    assert verdicts(s)["attempts.bounded"] == "fail"
    assert verdicts(s)["classify.no_retry_4xx"] == "fail"
    assert "attempts seen: 7 (1 unattributed" in proc.stdout
    assert proc.returncode == 1


def test_client_that_leaves_its_group_is_killed_when_it_ends(harness_bin, tmp_path):
    token = f"stray-{uuid.uuid4().hex}"
    # the loop marks its first attempt done, and the client ends only then:
    # however late the loop starts, at least one attempt is in
    marker = tmp_path / "first-attempt-done"
    loop = ("for i in $(seq 1 40); do curl -s -m 1 -o /dev/null \"$0\"; "
            "touch \"$2\"; sleep 0.1; done")
    client = (f"setsid sh -c '{loop}' {{url}} {token} '{marker}' & "
              f"while [ ! -e '{marker}' ]; do sleep 0.05; done; exit 0")
    doc = scenario("stray", OK_200, timeout_s=30)
    journals = tmp_path / "journals"
    try:
        proc, report = run_scenario(harness_bin, tmp_path, doc, client,
                                    "--journal-dir", str(journals))
        survivors = live_with_token(token)
    finally:
        for pid in live_with_token(token):  # only ever the ones this test started
            os.kill(pid, signal.SIGKILL)
    assert survivors == []
    s = report["scenarios"][0]
    assert s["error"] is None
    assert s["tasks"][0]["exit_code"] == 0
    # the loop would have gone on for 40 attempts and 4 s: it was cut off
    # when its client ended, and the scenario did not wait for it
    lines = [json.loads(b) for b in read_jsonl(journals / "stray.jsonl")]
    assert 1 <= len(lines) < 20
    assert s["attempts"] == len(lines)
    assert s["duration_ms"] < 4000


def test_scenario_ends_soon_after_its_last_client_not_after_a_fixed_settle(harness_bin,
                                                                          tmp_path):
    doc = scenario("quick", OK_200)
    journals = tmp_path / "journals"
    proc, report = run_scenario(harness_bin, tmp_path, doc, CURL,
                                "--journal-dir", str(journals))
    s = report["scenarios"][0]
    assert s["tasks"][0]["exit_code"] == 0
    (line,) = read_jsonl(journals / "quick.jsonl")
    # the run ends once the provider has nothing left: a fixed settle
    # alone took 300 ms after the client's exit
    after_ms = s["duration_ms"] - json.loads(line)["t_done_us"] / 1000
    assert after_ms < 200, after_ms
    assert proc.returncode == 0, proc.stdout


# --- report files ---------------------------------------------------------------

def test_unwritable_report_path_exits_2_before_anything_runs(harness_bin, tmp_path):
    path = write(tmp_path, scenario("never", OK_200))
    ran = tmp_path / "ran"
    proc = run_harness(harness_bin, "run", "--exec", f"touch '{ran}'", "--report-json",
                       "/nonexistent/r.json", str(path))
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness: --report-json: cannot write /nonexistent/r.json: "
                           "No such file or directory\n")
    assert proc.stdout == ""
    assert not ran.exists()
    proc = run_harness(harness_bin, "run", "--exec", f"touch '{ran}'", "--junit",
                       str(tmp_path), str(path))
    assert proc.returncode == 2
    assert proc.stderr == f"fakeapi-harness: --junit: cannot write {tmp_path}: Is a directory\n"
    assert not ran.exists()


def test_two_reports_on_stdout_are_a_usage_error(harness_bin, tmp_path):
    path = write(tmp_path, scenario("never", OK_200))
    proc = run_harness(harness_bin, "run", "--exec", "true", "--report-json", "-",
                       "--junit", "-", str(path))
    assert proc.returncode == 2
    assert proc.stderr.startswith("fakeapi-harness: --report-json - and --junit -: ")
    assert proc.stdout == ""


def test_report_on_stdout_sends_the_text_report_to_stderr(harness_bin, tmp_path):
    path = write(tmp_path, scenario("json-out", OK_200))
    proc = run_harness(harness_bin, "run", "-q", "--exec", CURL, "--report-json", "-", str(path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # nothing else on stdout
    assert report["exit_code"] == 0
    assert "scenario json-out" in proc.stderr
    assert "exit code 0: " in proc.stderr
    proc = run_harness(harness_bin, "run", "-q", "--exec", CURL, "--junit", "-", str(path))
    assert ET.fromstring(proc.stdout).tag == "testsuites"
    assert "exit code 0: " in proc.stderr


def test_help_says_where_the_text_report_goes(harness_bin):
    proc = run_harness(harness_bin, "--help")
    assert "the text\n        report then goes to stderr" in proc.stdout
    assert "FAKEAPI_CLIENT_NONCE" in proc.stdout


# --- interruption -----------------------------------------------------------------

def test_interrupted_run_is_not_graded_and_exits_2(harness_bin, tmp_path):
    doc = scenario("long", OK_200, timeout_s=60)
    path = write(tmp_path, doc)
    journals = tmp_path / "journals"
    report = tmp_path / "report.json"
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    proc = subprocess.Popen(
        [harness_bin, "run", "-q", "--exec", f"curl -s -o /dev/null {AUTH} {{url}}; sleep 60",
         "--journal-dir", str(journals), "--report-json", str(report), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        stdin=subprocess.DEVNULL)
    try:
        journal = journals / "long.jsonl"
        wait_for(lambda: journal.exists() and read_jsonl(journal), timeout=30)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, err
    assert err == f"fakeapi-harness: {path}: interrupted\nfakeapi-harness: interrupted\n"
    r = json.loads(report.read_text())
    assert r["exit_code"] == 2 and r["exit_reason"] == "interrupted"
    s = r["scenarios"][0]
    assert s["error"] == f"{path}: interrupted"
    assert s["attempts"] == 1
    assert {c["id"] for c in s["checks"]} == CHECKS
    for c in s["checks"]:
        assert (c["verdict"], c["detail"], c["evidence"]) == \
            ("n/a", "not run to the end: interrupted", [])
    task = s["tasks"][0]
    assert task["timed_out"] is False
    assert task["exit_code"] is None and task["signal"] == signal.SIGTERM
    assert "timed out" not in out
    assert "task t1: killed by signal 15 (SIGTERM)" in out
    assert "exit code 2: interrupted" in out


# --- report polish -----------------------------------------------------------------

def test_client_killed_by_a_signal_says_which(harness_bin, tmp_path, repo_root):
    import jsonschema
    doc = scenario("killed", OK_200)
    proc, report = run_scenario(harness_bin, tmp_path, doc,
                                f"curl -s -o /dev/null {AUTH} {{url}}; kill -9 $$")
    task = report["scenarios"][0]["tasks"][0]
    assert task["exit_code"] is None
    assert task["signal"] == 9
    assert task["timed_out"] is False
    assert "task t1: killed by signal 9 (SIGKILL)\n" in proc.stdout
    assert "no exit status" not in proc.stdout
    schema = json.loads((repo_root / "docs" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_control_bytes_of_a_client_never_reach_the_harness_stderr(harness_bin, tmp_path):
    doc = scenario("escape", OK_200)
    client = r"printf '\033[31mboom\033[0m \007bell\n' >&2; exit 127"
    proc, report = run_scenario(harness_bin, tmp_path, doc, client)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "no attempt made: ?[31mboom?[0m ?bell\n" in proc.stderr
    assert report["scenarios"][0]["tasks"][0]["error"].endswith("?[31mboom?[0m ?bell")
    assert "\x1b" not in proc.stdout


@CURL_FAST_GROUP
def test_curl_fast_past_retry_after_reads_as_in_the_past(curl_fast):
    proc, _, _, _ = curl_fast
    # retry-after-past-date: curl hangs, and the 429 is the evidence
    assert "ms: in the past)" in proc.stdout
    assert "(until +-" not in proc.stdout


# --- what an exec client is told ---------------------------------------------

# An exec client that writes what it got, from its environment and its
# command line, into a file of the test's folder (never its stdout, which
# the harness keeps), then sends the task once with curl reading the
# headers file, so the journal shows the headers reached the provider.
DUMP_CLIENT = r'''
import json, os, subprocess, sys
names = ["FAKEAPI_TASK", "FAKEAPI_METHOD", "FAKEAPI_BODY_FILE", "FAKEAPI_HEADERS_FILE",
         "FAKEAPI_HEADERS", "FAKEAPI_MAX_ATTEMPTS", "FAKEAPI_MAX_RETRIES",
         "FAKEAPI_MAX_WAIT_S", "FAKEAPI_TIMEOUT_S", "FAKEAPI_RPM", "FAKEAPI_TPM",
         "FAKEAPI_PERIOD_S"]
out, args = sys.argv[1], sys.argv[2:]
key = os.environ["FAKEAPI_KEY"]
got = {"env": {n: os.environ.get(n) for n in names},
       "args": args,
       "key_in_argv": any(key in a for a in sys.argv),
       "headers_file": open(os.environ["FAKEAPI_HEADERS_FILE"]).read(),
       "body_file": open(os.environ["FAKEAPI_BODY_FILE"]).read()}
got["key_in_files"] = key in got["headers_file"] or key in got["body_file"]
with open(os.path.join(out, os.environ["FAKEAPI_TASK"] + ".json"), "w") as f:
    json.dump(got, f)
subprocess.run(["curl", "-s", "-o", "/dev/null", "-X", os.environ["FAKEAPI_METHOD"],
                "-H", "@" + os.environ["FAKEAPI_HEADERS_FILE"],
                "-H", "Authorization: Bearer " + key, args[-1]], check=True)
'''


def test_exec_client_is_told_budget_timeout_pacing_and_headers(harness_bin, tmp_path):
    client = tmp_path / "dump.py"
    client.write_text(DUMP_CLIENT)
    got_dir = tmp_path / "got"
    got_dir.mkdir()
    tasks = [{"id": "t1", "key": "k1", "method": "GET", "path": "/v1/records/7",
              "headers": {"Idempotency-Key": "idem-1", "X-Trace": "it's a trace"},
              "budget": {"max_attempts": 3, "max_wait_s": 4}},
             {"id": "t2", "key": "k2", "method": "GET", "path": "/v1/records/8",
              "timeout_s": 9}]
    doc = scenario("told", OK_200, tasks=tasks,
                   events=[{"at_ms": 0, "send": ["t1", "t2"]}])
    doc["harness"]["pacing"] = {"rpm": 120, "period_s": 30}
    template = (f"/usr/bin/python3 '{client}' '{got_dir}' {{task}} {{max_attempts}} "
                "{max_retries} {max_wait_s} {timeout_s} {rpm} {tpm} {period_s} "
                "{headers_file} {body_file} {method} {url}")
    journals = tmp_path / "journal"
    journals.mkdir()
    proc, report = run_scenario(harness_bin, tmp_path, doc, template,
                                "--journal-dir", str(journals))
    assert [t["exit_code"] for t in report["scenarios"][0]["tasks"]] == [0, 0], proc.stderr
    t1 = json.loads((got_dir / "t1.json").read_text())
    t2 = json.loads((got_dir / "t2.json").read_text())
    assert t1["env"] == {
        "FAKEAPI_TASK": "t1", "FAKEAPI_METHOD": "GET",
        "FAKEAPI_BODY_FILE": t1["env"]["FAKEAPI_BODY_FILE"],
        "FAKEAPI_HEADERS_FILE": t1["env"]["FAKEAPI_HEADERS_FILE"],
        "FAKEAPI_HEADERS": '{"Idempotency-Key":"idem-1","X-Trace":"it\'s a trace"}',
        "FAKEAPI_MAX_ATTEMPTS": "3", "FAKEAPI_MAX_RETRIES": "2", "FAKEAPI_MAX_WAIT_S": "4",
        "FAKEAPI_TIMEOUT_S": "19",  # max_wait_s + 15
        "FAKEAPI_RPM": "120", "FAKEAPI_TPM": None, "FAKEAPI_PERIOD_S": "30"}
    assert t1["args"][:8] == ["t1", "3", "2", "4", "19", "120", "", "30"]
    assert t1["args"][8:10] == [t1["env"]["FAKEAPI_HEADERS_FILE"], t1["env"]["FAKEAPI_BODY_FILE"]]
    assert t1["args"][10] == "GET" and t1["args"][11].endswith("/v1/records/7?fa_task=t1")
    assert t1["headers_file"] == "Idempotency-Key: idem-1\nX-Trace: it's a trace\n"
    assert t1["body_file"] == ""
    # what the task does not set is unset, and '' on the command line
    assert t2["env"]["FAKEAPI_MAX_ATTEMPTS"] is None and t2["env"]["FAKEAPI_MAX_RETRIES"] is None
    assert t2["env"]["FAKEAPI_MAX_WAIT_S"] is None and t2["env"]["FAKEAPI_TIMEOUT_S"] == "9"
    assert t2["env"]["FAKEAPI_HEADERS"] == "{}" and t2["headers_file"] == ""
    assert t2["args"][:8] == ["t2", "", "", "", "9", "120", "", "30"]
    assert not t1["key_in_argv"] and not t2["key_in_argv"]
    assert not t1["key_in_files"] and not t2["key_in_files"]
    # the headers went out as the file says
    journal = [json.loads(line) for line in read_jsonl(journals / "told.jsonl")]
    by_task = {a["task"]: a for a in journal}
    assert by_task["t1"]["idempotency_key"] == "idem-1"
    assert by_task["t2"]["idempotency_key"] is None


def test_a_journal_dir_that_fills_up_is_an_error_not_a_grade(harness_bin, tmp_path):
    """--journal-dir on a 4 KiB tmpfs: the provider refuses what it cannot
    record (503 journal_unavailable), so the scenario is an error that says
    why, with no check judged, and the file it left verifies."""
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(small)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        doc = scenario("many", OK_200, timeout_s=30)
        path = write(tmp_path, doc)
        report = tmp_path / "report.json"
        loop = f"for i in $(seq 40); do curl -s -o /dev/null {AUTH} {{url}}; done"
        r = run_harness(harness_bin, "run", "-q", "--exec", loop, "--journal-dir", str(small),
                        "--report-json", str(report), str(path))
        assert r.returncode == 2, r.stderr
        s = json.loads(report.read_text())["scenarios"][0]
        m = re.fullmatch(re.escape(f"{path}: the journal file in --journal-dir could not be "
                                   "written (No space left on device): ") +
                         r"(\d+) attempts are missing from it \(it ends at seq (\d+)\), and "
                         r"the provider refused them; not graded", s["error"])
        assert m, s["error"]
        assert int(m.group(1)) + int(m.group(2)) == 40 and int(m.group(2)) >= 1
        assert s["checks"] == []
        v = subprocess.run([str(pathlib.Path(harness_bin).with_name("fakeapi")), "verify-journal",
                            str(small / "many.jsonl")], capture_output=True, text=True)
        assert v.returncode == 0 and v.stdout.startswith(f"ok {m.group(2)} lines "), v
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)


def test_reports_replace_a_planted_symlink_and_leave_no_part(harness_bin, tmp_path):
    """Each report goes to a temporary file beside it, renamed over the
    path: a symlink planted there is replaced, never written through, and
    no temporary file is left behind."""
    doc = scenario("planted", OK_200)
    path = write(tmp_path, doc)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    for name in ("report.json", "junit.xml", "report.html"):
        (out / name).symlink_to(victim)
    r = run_harness(harness_bin, "run", "-q", "--exec", f"curl -s -o /dev/null {AUTH} {{url}}",
                    "--report-json", str(out / "report.json"), "--junit",
                    str(out / "junit.xml"), "--html", str(out / "report.html"), str(path))
    assert r.returncode in (0, 1), r.stderr
    assert victim.read_text() == "keep me\n"
    for name in ("report.json", "junit.xml", "report.html"):
        assert not (out / name).is_symlink() and (out / name).is_file(), name
    assert json.loads((out / "report.json").read_text())["scenarios"][0]["id"] == "planted"
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "report.html", "report.json"]


@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "orphan-sweep"])
def test_a_client_that_escapes_its_group_and_environment_does_not_outlive_the_run(
        harness_bin, tmp_path, cgroup):
    """setsid, env -i and a renamed argv: nothing the marker sweep can see.
    The escapee is in the client's cgroup (or, without one, an orphan the
    subreaper harness adopted) and is killed before grading."""
    doc = scenario("escape", OK_200)
    path = write(tmp_path, doc)
    pidfile = tmp_path / "escapee.pid"
    report = tmp_path / "report.json"
    escape = (f"setsid env -i /bin/bash -c 'echo $$ > {pidfile}; "
              f"exec -a innocent sleep 30' </dev/null >/dev/null 2>&1 &")
    extra = {} if cgroup else {"FAKEAPI_NO_CGROUP": "1"}
    r = run_harness(harness_bin, "run", "-q", "--exec",
                    f"{escape} while [ ! -s {pidfile} ]; do sleep 0.01; done; "
                    f"curl -s -o /dev/null {AUTH} {{url}}",
                    "--report-json", str(report), str(path), extra_env=extra)
    assert r.returncode == 0, r.stderr
    pid = int(pidfile.read_text())
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            alive = f.read().startswith(b"innocent")
    except FileNotFoundError:
        alive = False
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "the escaped process outlived the harness"
    assert json.loads(report.read_text())["scenarios"][0]["id"] == "escape"
    for d in pathlib.Path("/sys/fs/cgroup/unified").glob("fakeapi-harness-*"):
        # another test's harness may be running; a folder of a dead one is a leak
        assert pathlib.Path("/proc", d.name.rsplit("-", 1)[1]).exists(), f"{d} left behind"
