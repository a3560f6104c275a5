"""The Python stdio adapters and the curl and wget exec adapters.

client-under-test/adapters/python/fakeapi_stdio.py speaks the stdio
protocol for a real retry library (one file per library beside it);
client-under-test/adapters/cli/ wraps curl and wget for exec mode. These
tests run the adapters directly (the protocol plumbing) and with the
harness on a few fast scenarios, and assert what the adapters report and
what the journal shows of each library's documented retry behaviour:
a test here fails when an adapter, a library's behaviour or the
harness's verdict on it changes, not when a library breaks a rule.
"""
import json
import os
import select
import socket
import subprocess
import time

import pytest

from conftest import REPO, graded_run
from scenarios import report_scenario

PY = "/usr/bin/python3"
ADAPTERS = REPO / "client-under-test" / "adapters"
PYTHON_ADAPTERS = {
    "urllib3": "urllib3_retry.py",
    "requests": "requests_retry.py",
    "httpx": "httpx_transport.py",
    "tenacity": "tenacity_retry.py",
    "backoff": "backoff_retry.py",
    "retrying": "retrying_retry.py",
}
FAST = REPO / "scenarios" / "five-step-fast"
# the tests that share a graded run (a module fixture) run on one test
# worker each (make test distributes with --dist loadgroup)
URLLIB3_GROUP = pytest.mark.xdist_group("python-adapters-urllib3")
CLI_GROUP = pytest.mark.xdist_group("python-adapters-cli")


def client_cmd(library):
    return f"{PY} {ADAPTERS / 'python' / PYTHON_ADAPTERS[library]}"


def exec_cmd(tool):
    return f"{ADAPTERS / 'cli' / (tool + '_retry.sh')} {{method}} {{url}} {{body_file}}"


def run_suite(harness_bin, tmp_path, scenarios, *, client=None, exec_template=None):
    """Run the fast scenarios named by file stem as one suite:
    (report, {scenario id: [journal entries]})."""
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({
        "id": "python-adapters", "version": "1", "title": "fast scenarios for an adapter",
        "scenarios": [os.path.relpath(FAST / f"{s}.json", tmp_path) for s in scenarios]}))
    mode = ["--client", client] if client else ["--exec", exec_template]
    report, journals, _ = graded_run(harness_bin, ["--jobs", "2", "--seed", "5", *mode],
                                     suite, tmp_path, timeout=240)
    return report, journals


def verdicts(report, scenario_id):
    return {c["id"]: c for c in report_scenario(report, scenario_id)["checks"]}


def task_of(report, scenario_id, task_id):
    return next(t for t in report_scenario(report, scenario_id)["tasks"] if t["id"] == task_id)


# -- the protocol plumbing, without the harness ------------------------------

class Adapter:
    """An adapter process with pipes, read line by line with a timeout."""

    def __init__(self, library, env=None):
        self.proc = subprocess.Popen(
            client_cmd(library).split(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, **(env or {})})

    def send(self, obj_or_text):
        text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def line(self, timeout=10):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no line from the adapter"
        return json.loads(self.proc.stdout.readline())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def adapter():
    made = []

    def start(library, env=None):
        made.append(Adapter(library, env))
        return made[-1]
    yield start
    for a in made:
        a.close()


@pytest.mark.parametrize("library", sorted(PYTHON_ADAPTERS))
def test_hello_names_the_library_its_version_and_config(adapter, library):
    a = adapter(library)
    hello = a.line()
    assert hello["type"] == "hello" and hello["protocol"] == 1
    client = hello["client"]
    assert client["name"] == library
    assert client["version"][0].isdigit(), client
    assert client["adapter"] == "python stdio adapter 1"
    assert client["config"] and "\n" not in client["config"]
    assert hello["features"] == ["cancel"]
    a.send({"type": "shutdown"})
    assert a.proc.wait(timeout=10) == 0


def test_lines_it_does_not_understand_are_logged_and_ignored(adapter):
    a = adapter("urllib3")
    assert a.line()["type"] == "hello"
    a.send("not json at all")
    a.send({"type": "bogus"})
    a.send({"type": "cancel", "id": "nobody"})
    a.send({"no": "type"})
    a.proc.stdin.close()  # end of input means shutdown
    assert a.proc.wait(timeout=10) == 0
    assert a.proc.stdout.read() == b""
    err = a.proc.stderr.read().decode()
    assert err.count("ignored") == 3, err


def test_shutdown_reports_a_task_in_flight_cancelled_at_once(adapter):
    """A provider that accepts the connection and never answers: urllib3
    would wait out its 10 s read timeout; shutdown reports the task
    cancelled (its attempt in flight: sent unknown) and exits at once."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        a = adapter("urllib3", {"FAKEAPI_KEY_K": "sk-test.kc000"})
        assert a.line()["type"] == "hello"
        a.send({"type": "task", "id": "t1", "class": "read", "method": "GET",
                "url": f"http://127.0.0.1:{port}/v1/x?fa_task=t1", "headers": {},
                "body": None, "key": "k", "key_env": "FAKEAPI_KEY_K",
                "budget": {"max_attempts": 2, "max_wait_s": 5}, "deadline_ms": 20000})
        sent = a.line()
        assert sent == {"type": "action_sent", "task": "t1", "attempt": 1, "kind": "read",
                        "idempotency_key": None}
        t0 = time.monotonic()
        a.send({"type": "shutdown"})
        result = a.line(timeout=5)
        assert a.proc.wait(timeout=5) == 0
        assert time.monotonic() - t0 < 3
    assert result == {"type": "result", "task": "t1", "outcome": "cancelled", "attempts": 1,
                      "waited_ms": 0, "sent": "unknown", "status": 0, "provider_id": None}


# -- with the harness -------------------------------------------------------

@pytest.mark.parametrize("library", sorted(PYTHON_ADAPTERS))
def test_each_library_reports_every_attempt_the_provider_saw(harness_bin, tmp_path, library):
    """Three tasks of one scope, the first told Retry-After: 2, and a 400:
    whatever each library does with them, its hooks count every attempt
    that reached the provider, and none of them retries the 400."""
    report, journals = run_suite(harness_bin, tmp_path,
                                 ["1-step-1-3-shared-read", "4-no-retry-400"],
                                 client=client_cmd(library))
    assert report["client"]["hello"]["client"]["name"] == library
    shared = verdicts(report, "step-1-3-shared-read")
    assert shared["attempts.hidden"]["verdict"] == "pass", shared["attempts.hidden"]
    assert verdicts(report, "no-retry-400")["classify.no_retry_4xx"]["verdict"] == "pass"
    t1 = task_of(report, "no-retry-400", "t1")
    assert t1["outcome"] == "failed" and t1["attempts"] == 1
    # no library shares a pause across tasks: the other two ran into it
    assert shared["wait.scope_pause"]["verdict"] == "fail"
    assert [e["status"] for e in journals["no-retry-400"]] == [400]


@pytest.fixture(scope="module")
def urllib3_graded(harness_bin, tmp_path_factory):
    return run_suite(harness_bin, tmp_path_factory.mktemp("urllib3"),
                     ["1-step-1-3-shared-read", "7-hidden-retry-503",
                      "17-step-5-cancel-pending-retry"],
                     client=client_cmd("urllib3"))


@URLLIB3_GROUP
def test_urllib3_waits_the_whole_retry_after(urllib3_graded):
    report, journals = urllib3_graded
    assert verdicts(report, "step-1-3-shared-read")["wait.retry_after"]["verdict"] == "pass"
    assert sorted(e["status"] for e in journals["step-1-3-shared-read"]) == [200] * 3 + [429] * 3


@URLLIB3_GROUP
def test_urllib3_retries_a_503_at_once_and_counts_it(urllib3_graded):
    """Retry's backoff is 0 for the first retry (get_backoff_time() starts
    after two consecutive errors), and its history shows the retry."""
    report, journals = urllib3_graded
    entries = journals["hidden-retry-503"]
    assert [e["status"] for e in entries] == [503, 200]
    assert entries[1]["t_arrival_us"] - entries[0]["t_response_us"] < 500_000
    assert verdicts(report, "hidden-retry-503")["attempts.hidden"]["verdict"] == "pass"
    assert task_of(report, "hidden-retry-503", "t1")["outcome"] == "succeeded"


@URLLIB3_GROUP
def test_urllib3_cannot_be_cancelled_and_the_adapter_says_so(urllib3_graded):
    """urllib3 has no way to stop its sleep: after the cancel its retry
    still goes out (cancel.quiet fails), and the result, reported when the
    call ends, is cancelled and counts every attempt (attempts.hidden
    passes)."""
    report, journals = urllib3_graded
    checks = verdicts(report, "step-5-cancel-pending-retry")
    assert checks["cancel.quiet"]["verdict"] == "fail"
    assert "still sent" in checks["cancel.quiet"]["detail"]
    assert checks["attempts.hidden"]["verdict"] == "pass"
    t1 = task_of(report, "step-5-cancel-pending-retry", "t1")
    assert t1["outcome"] == "cancelled"
    assert t1["attempts"] == len(journals["step-5-cancel-pending-retry"]) == 4


def test_tenacity_stops_on_its_event_after_one_more_attempt(harness_bin, tmp_path):
    """stop_when_event_set is a stop condition: tenacity checks it after an
    attempt, so it stops with the first attempt that ends after the
    cancel, and the result comes back cancelled with every attempt."""
    report, journals = run_suite(harness_bin, tmp_path, ["17-step-5-cancel-pending-retry"],
                                 client=client_cmd("tenacity"))
    sid = "step-5-cancel-pending-retry"
    t1 = task_of(report, sid, "t1")
    assert t1["outcome"] == "cancelled"
    assert verdicts(report, sid)["attempts.hidden"]["verdict"] == "pass"
    entries = journals[sid]
    cancel_us = t1["cancelled_at_ms"] * 1000
    after = [e for e in entries if e["t_arrival_us"] > cancel_us]
    assert len(after) <= 1, [e["seq"] for e in entries]
    # how many went out before the cancel depends on when a loaded machine
    # ran the cancel event (2 or 3 seen); the cancelled outcome, not the
    # count, says the event stopped it rather than the budget of 4
    assert t1["attempts"] == len(entries) <= 4


@pytest.fixture(scope="module")
def cli_graded(harness_bin, tmp_path_factory):
    out = {}
    for tool in ("curl", "wget"):
        out[tool] = run_suite(harness_bin, tmp_path_factory.mktemp(tool),
                              ["1-step-1-3-shared-read", "7-hidden-retry-503"],
                              exec_template=exec_cmd(tool))
    return out


@CLI_GROUP
def test_curl_honours_retry_after_and_retries_a_503(cli_graded):
    report, journals = cli_graded["curl"]
    assert verdicts(report, "step-1-3-shared-read")["wait.retry_after"]["verdict"] == "pass"
    assert [e["status"] for e in journals["hidden-retry-503"]] == [503, 200]
    # its first wait without Retry-After is 1 s (man curl, --retry)
    e = journals["hidden-retry-503"]
    assert e[1]["t_arrival_us"] - e[0]["t_response_us"] >= 950_000
    assert all(t["exit_code"] == 0 for s in report["scenarios"] for t in s["tasks"])


@CLI_GROUP
def test_wget_ignores_retry_after_and_waits_one_second(cli_graded):
    """wget has no Retry-After: its linear backoff retries 1 s after the
    429 that asked for 2 s, so wait.retry_after fails, by design."""
    report, journals = cli_graded["wget"]
    checks = verdicts(report, "step-1-3-shared-read")
    assert checks["wait.retry_after"]["verdict"] == "fail"
    t1 = [e for e in journals["step-1-3-shared-read"] if e["task"] == "t1"]
    assert t1[0]["status"] == 429 and t1[0]["retry_after"] == "2"
    gap_us = t1[1]["t_arrival_us"] - t1[0]["t_response_us"]
    assert 950_000 <= gap_us < 1_900_000, gap_us
    assert [e["status"] for e in journals["hidden-retry-503"]] == [503, 200]
