"""Watching a run live: `fakeapi --journal - --follow` and `fakeapi-harness
run --journal -` / `--follow`.

Liveness is shown by order, not by sleeping: each attempt's line is read
from the provider's stdout before the next request is sent.
"""
import hashlib
import json
import os
import re
import select
import signal
import subprocess
import time
import urllib.error
import urllib.request

from conftest import run_harness

SCENARIO = {
    "id": "follow-live",
    "title": "a 429 with Retry-After 2, then records",
    "provider": {"keys": {"ops-1": {"secret": "sk-follow-ops-1", "user": "ops-team"}},
                 "scope": "key"},
    "routes": [{
        "id": "read-record", "method": "GET", "path": "/v1/records/{id}",
        "cursor": "shared",
        "responses": [
            {"times": 1, "status": 429, "retry_after": 2,
             "body": {"error": {"code": "rate_limit_exceeded"}}},
            {"status": 200, "body": {"id": "{id}"}},
        ],
    }],
}

# +ARRIVAL  #SEQ  TASK  METHOD PATH  STATUS  FAULT  [extras]
LINE = re.compile(r"^\+(\d+)\.(\d{3})s  #(\d+)  (\S+)  (\S+) (\S+)  (\d{3}|---)  (\S+)(.*)$")

# The harness's own small scenario for exec mode: two tasks, one pause.
HX_SCENARIO = {
    "id": "follow-harness",
    "title": "two reads, the first answer pauses the account for 1 s",
    "provider": {"keys": {"ops-1": {"secret": "sk-follow-hx-1", "user": "ops-team"}}},
    "routes": [{
        "id": "read-record", "method": "GET", "path": "/v1/records/{id}",
        "cursor": "shared",
        "responses": [
            {"times": 1, "status": 429, "retry_after": 1,
             "body": {"error": {"code": "rate_limit_exceeded"}}},
            {"status": 200, "body": {"id": "{id}"}},
        ],
    }],
    "harness": {
        "tasks": [
            {"id": "t1", "key": "ops-1", "class": "read", "method": "GET", "path": "/v1/records/1"},
            {"id": "t2", "key": "ops-1", "class": "read", "method": "GET", "path": "/v1/records/2"},
        ],
        "events": [{"at_ms": 0, "send": ["t1", "t2"]}],
        "timeout_s": 30,
    },
}
CURL = 'curl -sS -f --retry 4 -H "Authorization: Bearer $FAKEAPI_KEY" {url}'


def read_line(proc, timeout=10):
    """One line of @proc's stdout, waiting at most @timeout s for it."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no line on stdout within the deadline"
    return proc.stdout.readline().decode()


def test_fakeapi_follow_prints_each_attempt_before_the_next(provider):
    p = provider(SCENARIO, extra=("--journal", "-", "--follow"))
    lines = []
    for i in range(1, 4):
        status, _, _ = p.request("GET", f"/v1/records/{i}?fa_task=t{i}", key="sk-follow-ops-1")
        assert status == (429 if i == 1 else 200)
        # the line is there before the next request is even made
        lines.append(read_line(p.proc))
    m = [LINE.match(line.rstrip("\n")) for line in lines]
    assert all(m), lines
    assert [x.group(3) for x in m] == ["1", "2", "3"]
    assert [x.group(4) for x in m] == ["t1", "t2", "t3"]
    assert [x.group(5) + " " + x.group(6) for x in m] == [
        "GET /v1/records/1", "GET /v1/records/2", "GET /v1/records/3"]
    assert [x.group(7) for x in m] == ["429", "200", "200"]
    assert [x.group(8) for x in m] == ["respond", "respond", "respond"]
    # the pause in force after the 429: its instant on the same clock, 2 s on
    pause = re.fullmatch(r"  pause until \+(\d+)\.(\d{3})s \(scope key:ops-1\)", m[0].group(9))
    assert pause, lines[0]
    arrival_ms = int(m[0].group(1)) * 1000 + int(m[0].group(2))
    until_ms = int(pause.group(1)) * 1000 + int(pause.group(2))
    # the line shows the journal's own instants, to the ms ...
    first = min(p.journal()["entries"], key=lambda e: e["t_arrival_us"])
    assert (arrival_ms, until_ms) == (first["t_arrival_us"] // 1000,
                                      first["pause_until_us"] // 1000), (lines[0], first)
    # ... and the pause is 2 s from the decision, made between the arrival
    # and the response (a late response stamp widens this, never breaks it)
    assert (first["t_arrival_us"] + 2_000_000 <= first["pause_until_us"]
            <= first["t_response_us"] + 2_000_000), first
    assert m[1].group(9) == "" and m[2].group(9) == ""
    # a request naming no task, without a key: dashes and the provider's 401
    status, _, _ = p.request("GET", "/v1/records/9")
    assert status == 401
    last = LINE.match(read_line(p.proc).rstrip("\n"))
    assert last and last.group(3) == "4" and last.group(4) == "-" and last.group(7) == "401"
    assert last.group(8) == "unauthorized"


def test_fakeapi_follow_with_journal_file_keeps_jsonl_in_the_file(provider, fakeapi_bin):
    # the fixture's --journal FILE stays: the file gets JSONL, stdout the text
    p = provider(SCENARIO, extra=("--follow",))
    for i in range(1, 3):
        p.request("GET", f"/v1/records/{i}?fa_task=t{i}", key="sk-follow-ops-1")
        assert LINE.match(read_line(p.proc).rstrip("\n"))
    code, err = p.stop()
    assert code == 0, err
    entries = [json.loads(line) for line in p.journal_path.read_text().splitlines()]
    assert [e["seq"] for e in entries] == [1, 2]
    assert [e["task"] for e in entries] == ["t1", "t2"]
    verify = subprocess.run([fakeapi_bin, "verify-journal", str(p.journal_path)],
                            capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stdout.startswith("ok 2 lines"), verify


def test_fakeapi_journal_stdout_streams_jsonl_live(provider):
    p = provider(SCENARIO, extra=("--journal", "-"))
    prev = "0" * 64
    for i in range(1, 3):
        p.request("GET", f"/v1/records/{i}?fa_task=t{i}", key="sk-follow-ops-1")
        line = read_line(p.proc).rstrip("\n")
        entry = json.loads(line)
        assert entry["seq"] == i and entry["task"] == f"t{i}"
        assert entry["prev"] == prev  # the hash chain, as in a journal file
        prev = hashlib.sha256(line.encode()).hexdigest()


def test_fakeapi_help_documents_follow(fakeapi_bin):
    out = subprocess.run([fakeapi_bin, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "--follow" in out.stdout and "+ARRIVAL  #SEQ  TASK  METHOD PATH  STATUS  FAULT" in out.stdout



def test_harness_journal_stdout_is_jsonl_with_scenario_id(harness_bin, tmp_path):
    # two scenarios at once: their lines interleave, each stays whole
    ids = ["follow-harness", "follow-harness-2"]
    for sid in ids:
        (tmp_path / f"{sid}.json").write_text(json.dumps(dict(HX_SCENARIO, id=sid)))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"id": "follow", "version": "1",
                                 "scenarios": [f"{sid}.json" for sid in ids]}))
    jdir = tmp_path / "journals"
    jdir.mkdir()
    r = run_harness(harness_bin, "run", "--exec", CURL, "--seed", "1", "--jobs", "2",
                    "--journal", "-", "--journal-dir", str(jdir), str(suite))
    assert r.returncode == 0, r.stderr
    raw = r.stdout.splitlines()
    entries = [json.loads(line) for line in raw]
    assert all(list(e)[0] == "scenario" for e in entries)
    assert {e["scenario"] for e in entries} == set(ids)
    for sid in ids:
        mine = [line for line, e in zip(raw, entries) if e["scenario"] == sid]
        assert len(mine) >= 3  # two tasks, one of them retried
        assert [json.loads(line)["seq"] for line in mine] == list(range(1, len(mine) + 1))
        assert {json.loads(line)["task"] for line in mine} == {"t1", "t2"}
        # without its scenario member each line is the journal's line, byte for byte
        prefix = '{"scenario":"%s",' % sid
        assert all(line.startswith(prefix) for line in mine)
        file_lines = (jdir / f"{sid}.jsonl").read_text().splitlines()
        assert ["{" + line[len(prefix):] for line in mine] == file_lines
    # the text report went to stderr
    assert "scenario follow-harness " in r.stderr and "exit code 0" in r.stderr


def test_harness_follow_prints_text_lines_with_scenario_prefix(harness_bin, tmp_path):
    scen = tmp_path / "follow-harness.json"
    scen.write_text(json.dumps(HX_SCENARIO))
    r = run_harness(harness_bin, "run", "--exec", CURL, "--seed", "1", "--follow", "-q", str(scen))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) >= 3
    for line in lines:
        assert line.startswith("[follow-harness] "), line
        assert LINE.match(line[len("[follow-harness] "):]), line
    assert any("429  respond  pause until +" in line for line in lines), lines
    assert "level reached" in r.stderr


def test_harness_journal_option_usage_errors(harness_bin, tmp_path):
    r = run_harness(harness_bin, "run", "--journal", str(tmp_path / "x.jsonl"))
    assert r.returncode == 2
    assert "--journal: expected - (stdout)" in r.stderr and "--journal-dir DIR" in r.stderr
    r = run_harness(harness_bin, "run", "--journal", "-", "--report-json", "-")
    assert r.returncode == 2
    assert "--journal - and a report on stdout" in r.stderr
    r = run_harness(harness_bin, "run", "--follow", "--junit", "-")
    assert r.returncode == 2
    assert "--follow and a report on stdout" in r.stderr


def test_harness_help_documents_live_options(harness_bin):
    out = subprocess.run([harness_bin, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "--journal -" in out.stdout and "--follow" in out.stdout


def test_fakeapi_with_stdout_closed_keeps_the_journal_file_clean(fakeapi_bin, tmp_path):
    # stdout closed: the journal file must not take its fd and get its lines
    scen = tmp_path / "follow-live.json"
    scen.write_text(json.dumps(SCENARIO))
    journal = tmp_path / "closed.jsonl"
    env = dict(os.environ, FAKEAPI_LOG="info")
    proc = subprocess.Popen(
        ["sh", "-c", 'exec "$0" "$@" >&-', fakeapi_bin, "--scenario", str(scen),
         "--port", "0", "--journal", str(journal), "--follow"],
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        port = None
        while port is None:
            line = proc.stderr.readline().decode()
            assert line, "fakeapi ended before listening"
            m = re.search(r"event=listen .*port=(\d+)", line)
            port = m and int(m.group(1))
        for i in range(1, 3):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/records/{i}?fa_task=t{i}",
                                         headers={"Authorization": "Bearer sk-follow-ops-1"})
            try:
                urllib.request.urlopen(req, timeout=10).read()
            except urllib.error.HTTPError as e:
                assert e.code == 429
        # the journal line of the second is appended as its connection ends
        deadline = time.monotonic() + 10
        while len(journal.read_text().splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err.decode()
    lines = journal.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2], lines
    verify = subprocess.run([fakeapi_bin, "verify-journal", str(journal)],
                            capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stdout.startswith("ok 2 lines"), verify


def test_harness_with_stdout_closed_keeps_journal_dir_clean(harness_bin, fakeapi_bin, tmp_path):
    scen = tmp_path / "follow-harness.json"
    scen.write_text(json.dumps(HX_SCENARIO))
    jdir = tmp_path / "journals"
    jdir.mkdir()
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    r = subprocess.run(["sh", "-c", 'exec "$0" "$@" >&-', harness_bin, "run", "--exec", CURL,
                        "--seed", "1", "--follow", "-q", "--journal-dir", str(jdir), str(scen)],
                       stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    lines = (jdir / "follow-harness.jsonl").read_text().splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("{") for line in lines), lines  # no "[follow-harness] +..."
    verify = subprocess.run([fakeapi_bin, "verify-journal", str(jdir / "follow-harness.jsonl")],
                            capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stdout.startswith(f"ok {len(lines)} lines"), verify


def test_fakeapi_stuck_stdout_reader_never_stalls_the_provider(provider, monkeypatch):
    # a queue of 20 lines (the test knob) and long lines: the pipe and the
    # queue are full after a few dozen attempts, and nobody reads after the
    # first line
    monkeypatch.setenv("FAKEAPI_LIVE_QUEUE_LINES", "20")
    p = provider(SCENARIO, extra=("--follow",))
    pad = "x" * 1000
    for i in range(200):
        status, _, _ = p.request("GET", f"/v1/records/{i}?fa_task={pad}{i}",
                                 key="sk-follow-ops-1", timeout=5)
        assert status in (200, 429)
    assert p.journal()["count"] == 200
    t0 = time.monotonic()
    code, err = p.stop()
    # the writer gets 2 s to drain, then the provider exits anyway
    assert time.monotonic() - t0 < 6, err
    assert code == 0, err
    assert ("fakeapi: live journal: the reader of stdout is too slow; 1 line not shown; "
            "the journal file and GET /_fakeapi/journal are complete") in err
    m = re.search(r"fakeapi: live journal: (\d+) lines not shown \(the reader of stdout was "
                  r"too slow or gone\)", err)
    assert m and int(m.group(1)) > 100, err
    # the journal file misses nothing
    lines = p.journal_path.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, 201))


def fill_pipe(w):
    """Fill the pipe whose write end is @w, so that its next write waits."""
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"." * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)


def test_harness_stuck_stdout_reader_never_changes_the_verdicts(harness_bin, tmp_path):
    scen = tmp_path / "follow-harness.json"
    scen.write_text(json.dumps(HX_SCENARIO))
    env = dict(os.environ, FAKEAPI_LIVE_QUEUE_LINES="2")
    env.pop("FAKEAPI_LOG", None)
    r, w = os.pipe()
    try:
        fill_pipe(w)  # the very first live line waits for a reader that never comes
        t0 = time.monotonic()
        run = subprocess.run([harness_bin, "run", "--exec", CURL, "--seed", "1", "--journal", "-",
                              "-q", str(scen)],
                             stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE,
                             text=True, timeout=60, env=env)
        elapsed = time.monotonic() - t0
    finally:
        os.close(w)
        os.close(r)
    assert run.returncode == 0, run.stderr
    assert "exit code 0" in run.stderr
    assert not [line for line in run.stderr.splitlines() if line.lstrip().startswith("FAIL")]
    assert elapsed < 30, elapsed
    assert ("fakeapi-harness: live journal: the reader of stdout is too slow; 1 line not shown; "
            "the report is complete") in run.stderr
    assert re.search(r"live journal: \d+ lines? not shown \(the reader of stdout was too slow "
                     r"or gone\)", run.stderr), run.stderr
