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
import subprocess

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
    assert 1990 <= until_ms - arrival_ms <= 2200, lines[0]
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


def run_harness(harness_bin, *args, timeout=120):
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return subprocess.run([harness_bin, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


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
