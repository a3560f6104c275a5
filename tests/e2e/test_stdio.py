"""fakeapi-harness in stdio mode: small Python clients speak the JSON-line
protocol of docs/client-protocol.md, well or badly.

Each client is a script written into tmp_path and run with /usr/bin/python3.
Timing facts are read from the journal the harness wrote or from what the
client recorded, never from a sleep here; pauses are 1 s.
"""
import datetime
import json
import os
import shlex
import shutil
import subprocess
import signal
import textwrap
import time
import uuid
from functools import partial

import pytest

from conftest import run_harness, wait_for
from scenarios import key_table, one_route_scenario

PY = "/usr/bin/python3"

# What every test client shares: printing lines, one attempt, the pause.
COMMON = r'''
import email.utils, http.client, json, os, random, sys, threading, time, urllib.error, urllib.request

LOCK = threading.Lock()
PAUSES = {}


def say(obj):
    with LOCK:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def hello(name="py-good", protocol=1):
    say({"type": "hello", "protocol": protocol,
         "client": {"name": name, "version": "1.0"}, "features": []})


def seconds(value):
    """Retry-After as seconds from now: delta-seconds or an HTTP-date."""
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 1.0


def attempt(task, n):
    """One attempt, reported; returns (status, retry_after)."""
    say({"type": "action_sent", "task": task["id"], "attempt": n, "idempotency_key": None})
    body = task["body"].encode() if task["body"] is not None else None
    headers = dict(task["headers"], Authorization="Bearer " + os.environ[task["key_env"]])
    req = urllib.request.Request(task["url"], data=body, method=task["method"], headers=headers)
    ra = err = None
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status = r.status
            r.read()
    except urllib.error.HTTPError as e:
        status, ra = e.code, e.headers.get("Retry-After")
        e.read()
    except (OSError, http.client.HTTPException) as e:  # a body cut short too
        status, err = 0, str(e)
    if ra is not None:
        with LOCK:
            PAUSES[task["scope"]] = max(PAUSES.get(task["scope"], 0),
                                        time.monotonic() + seconds(ra))
    return status, ra, err


def report(task, n, status, ra, err):
    say({"type": "action_result", "task": task["id"], "attempt": n, "status": status,
         "retry_after": ra, "error": err})


def finish(task, outcome, attempts, status, waited=0.0):
    say({"type": "result", "task": task["id"], "outcome": outcome, "attempts": attempts,
         "waited_ms": int(waited * 1000), "sent": "yes", "status": status,
         "provider_id": None})
'''

# Honours Retry-After and the scope's pause (with jitter), retries 429/5xx
# within the budget, reports everything. --delay S holds back the report of
# a non-2xx answer; --record F appends (task, status, wall time) just before
# each action_result it prints.
GOOD = COMMON + r'''
ARGS = sys.argv[1:]
DELAY = float(ARGS[ARGS.index("--delay") + 1]) if "--delay" in ARGS else 0.0
RECORD = ARGS[ARGS.index("--record") + 1] if "--record" in ARGS else None


def run(task):
    limit = task["budget"]["max_attempts"] or 4
    n, waited, status = 0, 0.0, 0
    while True:
        with LOCK:
            delay = PAUSES.get(task["scope"], 0) - time.monotonic()
        if delay > 0:
            delay += random.random() * 0.3
            time.sleep(delay)
            waited += delay
        n += 1
        status, ra, err = attempt(task, n)
        if not 200 <= status < 300 and DELAY:
            time.sleep(DELAY)
        if RECORD:  # before the line goes out: the harness reads it later
            with LOCK, open(RECORD, "a") as f:
                f.write(json.dumps([task["id"], status, time.time()]) + "\n")
        report(task, n, status, ra, err)
        if 200 <= status < 300:
            return finish(task, "succeeded", n, status, waited)
        if status not in (0, 429, 500, 502, 503, 504) or n >= limit:
            return finish(task, "failed", n, status, waited)
        due = seconds(ra) if ra is not None else 0.1
        say({"type": "retry_scheduled", "task": task["id"], "attempt": n + 1,
             "due_in_ms": int(due * 1000), "reason": "retry_after" if ra else "backoff"})
        if ra is None:
            time.sleep(due)
            waited += due


hello()
threads = []
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "task":
        threads.append(threading.Thread(target=run, args=(msg,)))
        threads[-1].start()
    elif msg["type"] == "shutdown":
        break
for t in threads:
    t.join()
'''

# Prints lines the harness cannot use around one well-done task.
GARBAGE = COMMON + r'''
hello("py-garbage")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "task":
        break
    print("garbage client: about to misbehave", file=sys.stderr, flush=True)
    for bad in ("not json at all", '{"type": "bogus", "task": "t1"}',
                '{"type": "action_sent", "task": "t9", "attempt": 1}', "[1, 2, 3]",
                '{"task": "t1"}'):
        sys.stdout.write(bad + "\n")
    sys.stdout.flush()
    status, ra, err = attempt(msg, 1)
    report(msg, 1, status, ra, err)
    finish(msg, "succeeded", 1, status)
    say({"type": "action_sent", "task": msg["id"], "attempt": 2})
'''

# Makes one attempt, then dies without a result.
CRASH = COMMON + r'''
hello("py-crash")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "task":
        status, ra, err = attempt(msg, 1)
        report(msg, 1, status, ra, err)
        print("crash client: giving up the ghost", file=sys.stderr, flush=True)
        os._exit(3)
'''

# Does its task, then ignores shutdown, end of input and SIGTERM, with a
# child of its own in its process group; writes its group and the child's
# pid to the file named by its argument.
DEAF = COMMON + r'''
import signal, subprocess
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "60"])
with open(sys.argv[1], "w") as f:
    json.dump({"pgid": os.getpgrp(), "child": child.pid}, f)
hello("py-deaf")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "task":
        status, ra, err = attempt(msg, 1)
        report(msg, 1, status, ra, err)
        finish(msg, "succeeded" if status == 200 else "failed", 1, status)
while True:
    time.sleep(1)
'''

# Takes tasks and never reports on them; leaves on shutdown.
MUTE = COMMON + r'''
hello("py-mute")
for line in sys.stdin:
    if json.loads(line)["type"] == "shutdown":
        break
'''

# Makes one attempt per task and reports it, never a result; leaves on
# shutdown.
HALF = COMMON + r'''
hello("py-half")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] == "task":
        status, ra, err = attempt(msg, 1)
        report(msg, 1, status, ra, err)
'''

# Starts a process that leaves its group (setsid) and loops on the task's
# URL, then does the task well; its argument is a token put in that
# process's command line.
ESCAPER = COMMON + r'''
import subprocess
TOKEN = sys.argv[1]
hello("py-escaper")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] == "task":
        loop = 'for i in $(seq 1 100); do curl -s -m 1 -o /dev/null "$0"; sleep 0.1; done'
        subprocess.Popen(["setsid", "sh", "-c", loop, msg["url"], TOKEN],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        status, ra, err = attempt(msg, 1)
        report(msg, 1, status, ra, err)
        finish(msg, "succeeded" if status == 200 else "failed", 1, status)
'''

# Opens a connection to the provider from a process that leaves both the
# client's group and its marker (setsid, FAKEAPI_CLIENT_NONCE dropped), then
# does its task well; on shutdown it tells that process (the file named by
# its second argument) and exits. Half a second after that, the process
# sends one request on its connection, for the task "late", and leaves.
# Its first argument is a token put in that process's command line.
LATE_SENDER = COMMON + r'''
import subprocess
TOKEN, GONE = sys.argv[1], sys.argv[2]
SENDER = r"""
import http.client, os, sys, time, urllib.parse
url = urllib.parse.urlsplit(os.environ["FAKEAPI_URL"])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
conn.connect()
open(sys.argv[2] + ".open", "w").close()
end = time.monotonic() + 20
while not os.path.exists(sys.argv[2]) and time.monotonic() < end:
    time.sleep(0.01)
time.sleep(0.5)
conn.request("GET", "/v1/records/9?fa_task=late",
             headers={"Authorization": "Bearer " + os.environ["FAKEAPI_KEY"]})
conn.getresponse().read()
conn.close()
"""
env = {k: v for k, v in os.environ.items() if k != "FAKEAPI_CLIENT_NONCE"}
hello("py-late")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] == "task":
        subprocess.Popen(["setsid", sys.executable, "-c", SENDER, TOKEN, GONE], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        while not os.path.exists(GONE + ".open"):
            time.sleep(0.01)
        status, ra, err = attempt(msg, 1)
        report(msg, 1, status, ra, err)
        finish(msg, "succeeded" if status == 200 else "failed", 1, status)
open(GONE, "w").close()
'''

# Gives up on its one attempt after --timeout S, reports it failed, and
# leaves on shutdown.
IMPATIENT = COMMON + r'''
import urllib.request
TIMEOUT = float(sys.argv[sys.argv.index("--timeout") + 1])
hello("py-impatient")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] == "task":
        say({"type": "action_sent", "task": msg["id"], "attempt": 1, "idempotency_key": None})
        req = urllib.request.Request(
            msg["url"], headers={"Authorization": "Bearer " + os.environ[msg["key_env"]]})
        try:
            urllib.request.urlopen(req, timeout=TIMEOUT).read()
            status = 200
        except OSError:
            status = 0
        report(msg, 1, status, None, None if status else "timed out")
        finish(msg, "succeeded" if status == 200 else "failed", 1, status)
'''

# Does its task with one attempt, but prints --flood N action_sent lines
# before its result, or --garbage N unparseable lines and then exits 3
# before any result; --attempts X reports X (JSON text) as its result's
# attempts; --hello J says hello with the JSON object J.
NOISY = COMMON + r'''
ARGS = sys.argv[1:]


def arg(name, default=None):
    return ARGS[ARGS.index(name) + 1] if name in ARGS else default


if arg("--hello"):
    say(json.loads(arg("--hello")))
else:
    hello("py-noisy")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "task":
        break
    status, ra, err = attempt(msg, 1)
    report(msg, 1, status, ra, err)
    if arg("--garbage"):
        sys.stdout.write("garbage\n" * int(arg("--garbage")))
        sys.stdout.flush()
        os._exit(3)
    if arg("--flood"):
        sent = json.dumps({"type": "action_sent", "task": msg["id"], "attempt": 1}) + "\n"
        sys.stdout.write(sent * int(arg("--flood")))
        sys.stdout.flush()
    sys.stdout.write('{"type": "result", "task": "%s", "outcome": "succeeded", '
                     '"attempts": %s, "sent": "yes", "status": %d}\n'
                     % (msg["id"], arg("--attempts", "1"), status))
    sys.stdout.flush()
'''

OK_200 = [{"status": 200, "body": {"id": "{id}"}}]
RETRY_AFTER_1 = [
    {"times": 1, "status": 429, "retry_after": 1,
     "body": {"error": {"code": "rate_limit_exceeded", "retryAfter": 1}}},
    {"status": 200, "body": {"id": "{id}"}},
]



KEYS = key_table(("k1", "sk-e2e-k1", "u1"), ("k2", "sk-e2e-k2", "u2"))
# A one-route scenario; by default one task t1 sent at the start.
scenario = partial(one_route_scenario, keys=KEYS)


def client(tmp_path, name, source, *args):
    """Write a client script; returns the --client command that runs it."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return " ".join([PY, str(path), *map(str, args)])


def run_stdio(harness_bin, tmp_path, doc, command, *extra):
    """Run one scenario in stdio mode; returns (process, report dict)."""
    path = tmp_path / f"{doc['id']}.json"
    path.write_text(json.dumps(doc, indent=1))
    report = tmp_path / "report.json"
    proc = run_harness(harness_bin, "run", "-q", "--client", command, "--seed", "7",
                       "--report-json", str(report), *extra, str(path))
    assert report.exists(), proc.stderr
    return proc, json.loads(report.read_text())


def verdicts(scenario_report):
    return {c["id"]: c["verdict"] for c in scenario_report["checks"]}


def live_group_members(pgid):
    """Pids of live (non-zombie) processes whose process group is @pgid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            found.append(int(entry))
    return found


def running(pid):
    """@pid is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def live_with_token(token):
    """Pids of live (non-zombie) processes whose command line holds @token."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if token.encode() in cmdline and running(int(entry)):
            found.append(int(entry))
    return found


def wall_s(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


# --- the command line ---------------------------------------------------------

def test_client_and_exec_together_is_a_usage_error(harness_bin):
    proc = run_harness(harness_bin, "run", "--client", "true", "--exec", "true", "x.json")
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness: --client and --exec: one client at a time, "
                           "stdio or exec (see fakeapi-harness --help)\n")


def test_help_describes_stdio_mode(harness_bin):
    proc = run_harness(harness_bin, "run", "--help")
    assert proc.returncode == 0
    assert "--client COMMAND" in proc.stdout
    assert "clients/reference" in proc.stdout


def test_without_a_client_and_no_reference_beside_it_exits_2(harness_bin, tmp_path):
    lone = tmp_path / "bin" / "fakeapi-harness"
    lone.parent.mkdir()
    shutil.copy(harness_bin, lone)
    proc = run_harness(str(lone), "run", "suite.json")
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-harness: no client: build the reference client (make) "
                           "or give --client/--exec\n")


def test_run_alone_grades_the_reference_client_on_the_default_suite(
        harness_bin, repo_root, tmp_path):
    # A harness with a stand-in reference client beside it, and the fast
    # suite standing in for the default one.
    bin_dir = tmp_path / "bin"
    (bin_dir / "clients").mkdir(parents=True)
    shutil.copy(harness_bin, bin_dir / "fakeapi-harness")
    reference = bin_dir / "clients" / "reference"
    reference.write_text(f"#!{PY}\n" + textwrap.dedent(GOOD))
    reference.chmod(0o755)
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "five-step").symlink_to(repo_root / "scenarios" / "five-step-fast")
    env = dict(os.environ, FAKEAPI_SCENARIOS=str(scenarios))
    report = tmp_path / "report.json"
    proc = run_harness(str(bin_dir / "fakeapi-harness"), "run", "--report-json", str(report),
                       env=env)
    assert proc.returncode in (0, 1), proc.stderr
    r = json.loads(report.read_text())
    assert r["mode"] == "stdio"
    assert r["suite"] == "five-step-fast"
    assert r["client"]["command"] == f"'{reference}'"
    assert r["client"]["hello"]["client"] == {"name": "py-good", "version": "1.0"}
    assert "client hello: py-good 1.0, protocol 1, features: none" in proc.stdout
    for s in r["scenarios"]:
        assert s["error"] is None, s["error"]
        assert s["protocol_errors"] == [], s["protocol_errors"]
        assert all(t["outcome"] in ("succeeded", "failed") for t in s["tasks"] if t["sent"])
        assert verdicts(s)["attempts.hidden"] in ("pass", "n/a")


# --- a good client --------------------------------------------------------------

def test_good_client_honours_retry_after_and_reports(harness_bin, repo_root, tmp_path):
    import jsonschema
    doc = scenario("good", RETRY_AFTER_1)
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "good", GOOD))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["mode"] == "stdio"
    assert report["client"]["hello"] == {"type": "hello", "protocol": 1,
                                         "client": {"name": "py-good", "version": "1.0"},
                                         "features": []}
    s = report["scenarios"][0]
    assert s["error"] is None
    assert s["protocol_errors"] == []
    assert s["tasks"] == [{"id": "t1", "sent": True, "exit_code": 0, "signal": None,
                           "timed_out": False, "attempts": 2, "error": None,
                           "outcome": "succeeded", "stderr_tail": None,
                           "cancelled_at_ms": None, "escalation": None}]
    v = verdicts(s)
    assert v["wait.retry_after"] == "pass"
    assert v["attempts.bounded"] == "pass"
    assert v["attempts.hidden"] == "pass"  # the client's count reached the check
    assert "task t1: result succeeded" in proc.stdout
    assert "client stderr" not in proc.stdout
    schema = json.loads((repo_root / "docs" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_client_saw_event_fires_on_the_clients_report(harness_bin, tmp_path):
    tasks = [{"id": "t1", "key": "k1", "method": "GET", "path": "/v1/records/7",
              "budget": {"max_attempts": 4, "max_wait_s": 5}},
             {"id": "t2", "key": "k2", "method": "GET", "path": "/v1/records/8",
              "budget": {"max_attempts": 4, "max_wait_s": 5}}]
    events = [{"at_ms": 0, "send": ["t1"]},
              {"after": {"task": "t1", "status": 429, "on": "client_saw"}, "plus_ms": 300,
               "send": ["t2"]}]
    doc = scenario("saw", RETRY_AFTER_1, tasks=tasks, events=events)
    record = tmp_path / "record.jsonl"
    journals = tmp_path / "journals"
    command = client(tmp_path, "good", GOOD, "--delay", "0.7", "--record", record)
    proc, report = run_stdio(harness_bin, tmp_path, doc, command, "--journal-dir", str(journals))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [json.loads(b) for b in (journals / "saw.jsonl").read_bytes().splitlines()]
    told = next(e for e in lines if e["task"] == "t1" and e["status"] == 429)
    t2_first = next(e for e in lines if e["task"] == "t2")
    printed = next(w for task, status, w in map(json.loads, record.read_text().splitlines())
                   if task == "t1" and status == 429)
    # the harness read the report no earlier than the client printed it,
    # and fired plus_ms after that
    assert wall_s(t2_first["wall"]) >= printed + 0.3
    # on the provider's clock: the 0.7 s the client held its report, then 300 ms
    assert t2_first["t_arrival_us"] >= told["t_response_us"] + 1_000_000
    # ... and not much later: the event did fire on the report
    assert wall_s(t2_first["wall"]) < printed + 0.3 + 2.0


# --- clients that break the protocol ------------------------------------------

def test_garbage_lines_are_protocol_errors_and_the_run_goes_on(harness_bin, tmp_path):
    doc = scenario("garbage", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "garbage", GARBAGE))
    s = report["scenarios"][0]
    assert s["error"] is None
    assert s["protocol_errors"] == [
        "line 2: not a JSON object: not json at all",
        'line 3: unknown type "bogus"',
        'line 4: unknown task "t9"',
        "line 5: not a JSON object: [1, 2, 3]",
        'line 6: no "type"',
        'line 10: task "t1" already reported its result',
    ]
    assert s["tasks"][0]["outcome"] == "succeeded"
    assert verdicts(s)["attempts.hidden"] == "pass"  # the late line did not count
    assert proc.returncode == 0, proc.stdout
    assert "  protocol errors: 6\n    line 2: not a JSON object: not json at all\n" in proc.stdout
    assert "    | garbage client: about to misbehave\n" in proc.stdout


def with_hello(first):
    """A client's first lines: @first (a line's text), then its hello, in
    one write, so one read of the harness gets both."""
    return ("sys.stdout.write(%r + '\\n' + json.dumps({'type': 'hello', 'protocol': 1, "
            "'client': {'name': 'early', 'version': '1'}, 'features': []}) + '\\n'); "
            "sys.stdout.flush()" % first)


@pytest.mark.parametrize("first, cause", [
    ("print('hello, world', flush=True)",
     "client did not say hello: line 1: not a JSON object: hello, world"),
    # the first line decides, whatever came with it in the same read
    (with_hello("junk"), "client did not say hello: line 1: not a JSON object: junk"),
    (with_hello('{"type": "action_sent", "task": "t1", "attempt": 1}'),
     'client did not say hello: line 1: expected hello, got type "action_sent"'),
    (with_hello('{"type": "stream_interrupted", "task": "t1", "attempt": 1, "chunks": 2, '
                '"reason": "cut", "error_code": null}'),
     'client did not say hello: line 1: expected hello, got type "stream_interrupted"'),
    ("hello(protocol=2)", "client speaks protocol 2, harness knows 1"),
    ("print('cannot start', file=sys.stderr, flush=True); sys.exit(5)",
     "client exited with status 5 before saying hello: cannot start"),
])
def test_client_that_does_not_start_stops_the_run(harness_bin, tmp_path, first, cause):
    source = COMMON + first + "\ntime.sleep(30)\n"
    docs = [scenario("first", OK_200), scenario("second", OK_200), scenario("third", OK_200)]
    for d in docs:
        (tmp_path / f"{d['id']}.json").write_text(json.dumps(d))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"id": "three", "version": "1",
                                 "scenarios": ["first.json", "second.json", "third.json"]}))
    report = tmp_path / "report.json"
    t = time.monotonic()
    proc = run_harness(harness_bin, "run", "-q", "--jobs", "1", "--report-json", str(report),
                       "--client", client(tmp_path, "bad", source), str(suite))
    assert time.monotonic() - t < 9  # no wait for the hello timeout
    assert proc.returncode == 2
    first_path, second_path = tmp_path / "first.json", tmp_path / "second.json"
    # one line per cause, however many scenarios it kept from running
    assert proc.stderr == (f"fakeapi-harness: {first_path}: {cause}\n"
                           "fakeapi-harness: not run: the client failed to start "
                           f"(2 scenarios, the first {second_path})\n")
    assert ("\n  ERROR  could not run second and 1 more scenario: not run: the client "
            "failed to start\n") in proc.stdout
    r = json.loads(report.read_text())
    assert r["exit_code"] == 2
    assert r["scenarios"][0]["checks"] == []
    if cause.startswith("client did not say hello: line 1"):
        # a hello that came after a bad first line is no hello
        assert r["client"]["hello"] is None
        assert "client hello:" not in proc.stdout


def test_silent_client_fails_to_start_after_10_s(harness_bin, tmp_path):
    doc = scenario("silent", OK_200)
    t = time.monotonic()
    proc, report = run_stdio(harness_bin, tmp_path, doc, "exec sleep 60")
    took = time.monotonic() - t
    assert proc.returncode == 2
    path = tmp_path / "silent.json"
    assert proc.stderr == f"fakeapi-harness: {path}: client did not say hello within 10 s\n"
    assert 10 <= took < 20
    s = report["scenarios"][0]
    assert s["error"] == f"{path}: client did not say hello within 10 s"
    assert report["client"]["hello"] is None
    assert s["tasks"][0]["sent"] is False
    assert "ERROR: could not run: " in proc.stdout


def test_crash_mid_task_fails_the_task_and_still_grades(harness_bin, tmp_path):
    doc = scenario("crash", RETRY_AFTER_1)
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "crash", CRASH))
    s = report["scenarios"][0]
    assert s["error"] is None
    task = s["tasks"][0]
    assert task["error"] == "client exited with status 3 before reporting"
    assert task["outcome"] is None and task["exit_code"] is None
    assert task["timed_out"] is False
    assert task["attempts"] == 1
    assert s["protocol_errors"] == ["client exited with status 3 before shutdown"]
    assert len(s["checks"]) == len(report["checks"])  # graded all the same
    assert proc.returncode in (0, 1)
    assert "task t1: error: client exited with status 3 before reporting" in proc.stdout
    assert "    | crash client: giving up the ghost\n" in proc.stdout


def test_client_that_ignores_shutdown_is_killed_with_its_group(harness_bin, tmp_path):
    doc = scenario("deaf", OK_200)
    pids = tmp_path / "pids.json"
    t = time.monotonic()
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "deaf", DEAF, pids))
    assert time.monotonic() - t >= 5  # the grace
    s = report["scenarios"][0]
    assert s["tasks"][0]["outcome"] == "succeeded"
    assert s["protocol_errors"] == ["client still running 5 s after shutdown: killed"]
    group = json.loads(pids.read_text())
    assert live_group_members(group["pgid"]) == []
    assert not running(group["child"])


def test_task_without_result_times_out_at_its_deadline(harness_bin, tmp_path):
    doc = scenario("mute", OK_200, timeout_s=30)
    doc["harness"]["tasks"][0]["timeout_s"] = 1
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "mute", MUTE))
    s = report["scenarios"][0]
    assert s["tasks"][0]["timed_out"] is True
    assert s["tasks"][0]["outcome"] is None and s["tasks"][0]["exit_code"] is None
    assert s["duration_ms"] < 10000  # ended at the task's deadline, not the scenario's
    assert s["protocol_errors"] == []
    assert "task t1: timed out (no result within its deadline)" in proc.stdout
    assert verdicts(s)["attempts.bounded"] == "fail"
    # no client is killed at a deadline in stdio mode: the detail says so
    bounded = next(c for c in s["checks"] if c["id"] == "attempts.bounded")
    assert bounded["detail"].startswith("task t1 hung: no result within its "), bounded
    assert bounded["detail"].endswith(" s timeout, before its first attempt"), bounded
    assert proc.returncode == 1


def test_process_that_leaves_the_clients_group_dies_with_the_client(harness_bin, tmp_path):
    token = f"stray-{uuid.uuid4().hex}"
    doc = scenario("escaper", OK_200)
    try:
        proc, report = run_stdio(harness_bin, tmp_path, doc,
                                 client(tmp_path, "escaper", ESCAPER, token))
        survivors = live_with_token(token)
    finally:
        for pid in live_with_token(token):  # only ever the ones this test started
            os.kill(pid, signal.SIGKILL)
    assert survivors == []
    s = report["scenarios"][0]
    assert s["tasks"][0]["outcome"] == "succeeded"
    assert s["protocol_errors"] == []


def test_control_bytes_before_hello_are_not_copied_to_stderr(harness_bin, tmp_path):
    source = (COMMON + "print('\\033[31mcannot start\\033[0m', file=sys.stderr, flush=True)\n"
              "sys.exit(5)\n")
    doc = scenario("escape", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "escape", source))
    path = tmp_path / "escape.json"
    assert proc.returncode == 2
    assert proc.stderr == (f"fakeapi-harness: {path}: client exited with status 5 before "
                           "saying hello: ?[31mcannot start?[0m\n")
    assert "\x1b" not in proc.stdout


def test_interrupted_scenario_is_not_graded_and_its_tasks_not_timed_out(harness_bin, tmp_path):
    doc = scenario("half", OK_200, timeout_s=60)
    path = tmp_path / "half.json"
    path.write_text(json.dumps(doc))
    journals = tmp_path / "journals"
    report = tmp_path / "report.json"
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    proc = subprocess.Popen(
        [harness_bin, "run", "-q", "--client", client(tmp_path, "half", HALF),
         "--journal-dir", str(journals), "--report-json", str(report), str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        stdin=subprocess.DEVNULL)
    try:
        journal = journals / "half.jsonl"
        wait_for(lambda: journal.exists() and journal.read_bytes().strip(), timeout=30)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, err
    assert err == f"fakeapi-harness: {path}: interrupted\nfakeapi-harness: interrupted\n"
    r = json.loads(report.read_text())
    assert r["exit_reason"] == "interrupted"
    s = r["scenarios"][0]
    assert s["error"] == f"{path}: interrupted"
    assert s["protocol_errors"] == []  # it left on shutdown, as it should
    assert all(c["verdict"] == "n/a" and c["detail"] == "not run to the end: interrupted"
               for c in s["checks"])
    task = s["tasks"][0]
    assert (task["timed_out"], task["outcome"], task["error"]) == (False, None, None)
    assert "task t1: no result\n" in out
    assert "timed out" not in out


# The harness keeps HX_CLIENT_LOG_MAX_MSGS messages per client process.
MAX_MSGS = 65536


def test_a_flood_of_messages_does_not_cost_the_task_its_result(harness_bin, tmp_path):
    flood = 100_000
    doc = scenario("flood", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "noisy", NOISY, "--flood", flood))
    s = report["scenarios"][0]
    task = s["tasks"][0]
    assert (task["outcome"], task["timed_out"], task["error"]) == ("succeeded", False, None)
    v = verdicts(s)
    assert v["attempts.bounded"] == "pass"
    assert v["attempts.hidden"] == "pass"  # the result's count, kept past the cap
    # action_sent and action_result before the flood; all but the result
    # past the cap are errors
    errors = flood + 2 - MAX_MSGS
    assert len(s["protocol_errors"]) == 101
    assert s["protocol_errors"][0] == (f"line {MAX_MSGS + 2}: more than {MAX_MSGS} "
                                       "messages, ignored")
    assert s["protocol_errors"][100] == f"{errors - 100} more protocol errors not listed"
    assert f"  protocol errors: {errors}\n" in proc.stdout
    assert "task t1: result succeeded" in proc.stdout
    assert proc.returncode == 0, proc.stdout


def test_how_the_client_ended_is_listed_past_the_error_cap(harness_bin, tmp_path):
    doc = scenario("garbage-exit", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "noisy", NOISY, "--garbage", 150))
    s = report["scenarios"][0]
    # hello, action_sent and action_result first; the end may be seen
    # before the last lines are read, so only the counts are fixed
    ended = "client exited with status 3 before shutdown"
    assert len(s["protocol_errors"]) == 102
    assert s["protocol_errors"].count(ended) == 1
    lines = [e for e in s["protocol_errors"] if e != ended]
    assert lines[:2] == ["line 4: not a JSON object: garbage",
                         "line 5: not a JSON object: garbage"]
    assert lines[99:] == ["line 103: not a JSON object: garbage",
                          "50 more protocol errors not listed"]
    assert s["tasks"][0]["error"] == "client exited with status 3 before reporting"
    assert "  protocol errors: 151\n" in proc.stdout
    assert f"    {ended}\n" in proc.stdout


@pytest.mark.parametrize("attempts, shown", [
    ("1e300", "1e+300"), ("9.3e18", "9.3e+18"), ("1.9", "1.9"), ("-1", "-1"),
    ('"1"', '"1"'),
])
def test_result_attempts_that_are_no_count_fail_attempts_hidden(harness_bin, tmp_path,
                                                                attempts, shown):
    doc = scenario("badcount", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "noisy", NOISY, "--attempts",
                                    shlex.quote(attempts)))
    s = report["scenarios"][0]
    task = s["tasks"][0]
    # the result still ended the task ...
    assert (task["outcome"], task["timed_out"], task["error"]) == ("succeeded", False, None)
    assert s["protocol_errors"] == []
    # ... but its count cannot be compared
    hidden = next(c for c in s["checks"] if c["id"] == "attempts.hidden")
    assert hidden["verdict"] == "fail"
    assert hidden["detail"] == f"task t1: the client reported attempts {shown}, not a count"
    assert [e["seq"] for e in hidden["evidence"]] == [1]
    assert verdicts(s)["attempts.bounded"] == "pass"
    assert proc.returncode == 1, proc.stdout


def test_result_attempts_null_on_one_attempt_is_na(harness_bin, tmp_path):
    # null: the client cannot observe its attempts; one on the wire hides none
    doc = scenario("nullcount", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "noisy", NOISY, "--attempts", "null"))
    s = report["scenarios"][0]
    hidden = next(c for c in s["checks"] if c["id"] == "attempts.hidden")
    assert hidden["verdict"] == "n/a"
    assert hidden["detail"] == ("the client cannot observe its attempts (\"attempts\": null) "
                                "and the provider saw at most one per task (1 task): no retry "
                                "to hide")


def test_hello_without_name_or_version_says_so(harness_bin, tmp_path):
    doc = scenario("anonymous", OK_200)
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "noisy", NOISY, "--hello",
                                    shlex.quote('{"type": "hello", "protocol": 1}')))
    assert report["client"]["hello"] == {"type": "hello", "protocol": 1}
    assert "client hello: (no name) (no version), protocol 1, features: none\n" in proc.stdout
    assert proc.returncode == 0, proc.stdout


# --- the end of a scenario ------------------------------------------------------

def journal_of(journals, sid):
    return [json.loads(line) for line in (journals / f"{sid}.jsonl").read_text().splitlines()]


def test_scenario_ends_soon_after_its_client_not_after_a_fixed_settle(harness_bin, tmp_path):
    doc = scenario("quick", OK_200)
    journals = tmp_path / "journals"
    proc, report = run_stdio(harness_bin, tmp_path, doc, client(tmp_path, "good", GOOD),
                             "--journal-dir", str(journals))
    s = report["scenarios"][0]
    assert s["tasks"][0]["outcome"] == "succeeded"
    (entry,) = journal_of(journals, "quick")
    # the run ends once the provider has nothing left: a fixed settle took
    # 300 ms before the shutdown and 300 ms after the client's end
    after_ms = s["duration_ms"] - entry["t_done_us"] / 1000
    assert after_ms < 300, after_ms
    assert proc.returncode == 0, proc.stdout


def test_a_process_left_holding_a_connection_dies_with_its_client(harness_bin, tmp_path):
    """A client leaves a setsid process without its marker holding an open
    connection, to send a request half a second after the client's end:
    the process is killed with its client (its cgroup, or as an orphan),
    so the late request never arrives and nothing of it outlives the run."""
    token = f"late-{uuid.uuid4().hex}"
    gone = tmp_path / "client-gone"
    doc = scenario("late", OK_200)
    journals = tmp_path / "journals"
    try:
        proc, report = run_stdio(harness_bin, tmp_path, doc,
                                 client(tmp_path, "late", LATE_SENDER, token, gone),
                                 "--journal-dir", str(journals))
        left = live_with_token(token)
    finally:
        for pid in live_with_token(token):  # only ever the one this test started
            os.kill(pid, signal.SIGKILL)
    assert left == [], "the process the client left outlived the run"
    s = report["scenarios"][0]
    assert s["tasks"][0]["outcome"] == "succeeded"
    (first,) = journal_of(journals, "late")
    assert first["task"] == "t1"
    assert (s["attempts"], s["unattributed_attempts"]) == (1, 0)


def test_answer_parked_when_the_client_leaves_is_kept_without_waiting_it_out(harness_bin,
                                                                             tmp_path):
    doc = scenario("parked", [{"status": 200, "delay_ms": 5000, "body": {"id": "{id}"}}])
    journals = tmp_path / "journals"
    proc, report = run_stdio(harness_bin, tmp_path, doc,
                             client(tmp_path, "impatient", IMPATIENT, "--timeout", "0.2"),
                             "--journal-dir", str(journals))
    s = report["scenarios"][0]
    assert s["tasks"][0]["outcome"] == "failed"
    (entry,) = journal_of(journals, "parked")
    # journaled when the provider stopped, long before the 5 s delay
    # ended: 300 ms at most for a parked answer before the shutdown, and
    # as long again once the client is gone
    assert entry["delivered"] == "client_gone"
    assert entry["t_done_us"] < 3_000_000
    assert s["duration_ms"] < 3000
