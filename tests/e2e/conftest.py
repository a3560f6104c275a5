"""Shared fixtures: the binaries under test and a fakeapi process per test.

The provider is started on port 0; the fixture reads the port from its
first line (`listening http://HOST:PORT`) and stops exactly the pid it
started. Never a fixed port, never a kill by name.
"""
import http.client
import json
import math
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FAKEAPI_BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD


@pytest.fixture(scope="session")
def repo_root():
    return REPO


@pytest.fixture(scope="session")
def fakeapi_bin():
    path = BUILD / "fakeapi"
    assert path.exists(), f"{path} missing: run `make asan` first"
    return str(path)


@pytest.fixture(scope="session")
def harness_bin():
    path = BUILD / "fakeapi-harness"
    assert path.exists(), f"{path} missing: run `make asan` first"
    return str(path)

def run_harness(harness_bin, *args, timeout=600, env=None, extra_env=None):
    """Run fakeapi-harness with @args, stdin closed, output captured as
    text. The environment is @env (default: the tests' own) without
    FAKEAPI_LOG, then @extra_env on top; @timeout (s) only bounds a hang."""
    full = dict(os.environ if env is None else env)
    full.pop("FAKEAPI_LOG", None)
    full.update(extra_env or {})
    return subprocess.run([harness_bin, *args], capture_output=True, text=True,
                          timeout=timeout, env=full, stdin=subprocess.DEVNULL)


class Provider:
    """A running fakeapi process and a tiny HTTP client for it."""

    def __init__(self, proc, url, journal_path):
        self.proc = proc
        self.url = url
        self.journal_path = journal_path
        self.sent = 0  # attempts sent through request() since the last reset

    def request(self, method, path, key=None, body=None, headers=None, timeout=10):
        """Returns (status, headers dict lower-cased, body bytes)."""
        hdrs = dict(headers or {})
        if key is not None:
            hdrs["Authorization"] = f"Bearer {key}"
        data = None
        if body is None and method == "POST" and path.startswith("/_fakeapi/"):
            body = {}  # a state-changing admin call is a JSON POST
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        if path.startswith("/_fakeapi/reset") and method == "POST":
            self.sent = 0
        elif not path.startswith("/_fakeapi/"):
            self.sent += 1
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()

    def journal(self, since=0, wait=True):
        """The admin journal. An attempt is appended when its connection is
        done with it, which can be just after the client read the answer:
        with @wait, poll until every attempt sent through request() is in."""
        deadline = time.monotonic() + 10
        while True:
            status, _, body = self.request("GET", f"/_fakeapi/journal?since={since}")
            assert status == 200, body
            j = json.loads(body)
            if not wait or since > 0 or j["count"] >= self.sent or time.monotonic() > deadline:
                return j
            time.sleep(0.01)

    def stop(self):
        """SIGTERM the pid we started; returns its exit code and stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("fakeapi did not stop within 20 s of SIGTERM")
        return self.proc.returncode, self.proc.stderr.read().decode(errors="replace")


def start_provider(fakeapi_bin, scenario, tmp_path, extra=()):
    """Start fakeapi on @scenario (a path or a dict written to tmp_path)."""
    if isinstance(scenario, dict):
        path = tmp_path / f"{scenario['id']}.json"
        path.write_text(json.dumps(scenario))
        scenario = path
    journal = tmp_path / "journal.jsonl"
    proc = subprocess.Popen(
        [fakeapi_bin, "--scenario", str(scenario), "--port", "0", "--journal", str(journal), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    if not line.startswith("listening http://"):
        proc.kill()
        proc.wait()
        raise AssertionError(f"fakeapi did not start: {line!r} {proc.stderr.read().decode()}")
    return Provider(proc, line.split()[1], journal)


@pytest.fixture
def provider(fakeapi_bin, tmp_path):
    """Factory: provider(scenario_dict_or_path) -> a started Provider.

    Every provider started is stopped at teardown, and must exit 0 (the
    sanitizer build turns leaks and memory errors into a non-zero exit).
    """
    started = []

    def start(scenario, extra=()):
        p = start_provider(fakeapi_bin, scenario, tmp_path, extra)
        started.append(p)
        return p

    yield start
    for p in started:
        code, err = p.stop()
        assert code == 0, f"fakeapi exited {code}: {err}"


def wait_for(predicate, timeout=10.0, step=0.02):
    """Poll @predicate until true; the deadline only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met within the deadline")


def estimate_tokens(text):
    """The provider's documented token estimate: ceil(UTF-8 bytes / 4)."""
    return math.ceil(len(text.encode()) / 4)


def post_whole_or_not(p, path, data, headers):
    """POST @data (bytes) to provider @p with http.client: (status, headers
    lower-cased, the bytes read, whether the body came whole). A body cut
    short (a partial body, a cut stream) is returned as far as it came."""
    u = urlparse(p.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("POST", path, body=data, headers=headers)
        resp = conn.getresponse()
        got = {k.lower(): v for k, v in resp.getheaders()}
        try:
            return resp.status, got, resp.read(), True
        except http.client.IncompleteRead as e:
            return resp.status, got, e.partial, False
    finally:
        conn.close()


def graded_run(harness_bin, client_args, target, out, timeout):
    """Run the harness on the suite or scenario @target with @client_args
    (`--exec T` or `--client C`, and any more options), keeping the JSON
    report and the journals under @out: (report, {scenario id: [journal
    entries]}, the finished process). Fails when there is no report or a
    scenario could not run."""
    report_path = out / "report.json"
    proc = subprocess.run(
        [harness_bin, "run", "-q", *client_args,
         "--journal-dir", str(out / "journals"), "--report-json", str(report_path),
         str(target)],
        capture_output=True, text=True, timeout=timeout)
    assert report_path.exists(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text())
    journals = {}
    for s in report["scenarios"]:
        assert s["error"] is None, s["error"]
        lines = (out / "journals" / f"{s['id']}.jsonl").read_text().splitlines()
        journals[s["id"]] = [json.loads(line) for line in lines]
    return report, journals, proc
