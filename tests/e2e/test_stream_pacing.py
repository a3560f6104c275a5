"""The LLM rate-limit guide's checks end to end: stream.no_silent_retry and wait.pacing,
and the task-line fields behind them (stream, tokens, pacing).

One-line exec clients (curl) show each check failing and passing; small
stdio clients (Python scripts run with /usr/bin/python3) show what a task
line carries and that a reported interruption may be retried. Timing
facts are read from the report the harness wrote, never from a sleep
here.
"""
import json
import math
import re
import textwrap

from conftest import run_harness

PY = "/usr/bin/python3"
AUTH = '-H "Authorization: Bearer $FAKEAPI_KEY"'
POST = (f'curl -s -o /dev/null -X POST {AUTH} -H "Content-Type: application/json" '
        '--data-binary @{body_file} {url}')
GET = f"curl -s -o /dev/null {AUTH} {{url}}"
REPLY = "one two three four five"



def run(harness_bin, tmp_path, doc, *client):
    """Run one scenario (client: "--exec", TEMPLATE or "--client", CMD);
    returns (process, the scenario's report, its checks by id)."""
    path = tmp_path / f"{doc['id']}.json"
    path.write_text(json.dumps(doc, indent=1))
    report = tmp_path / "report.json"
    proc = run_harness(harness_bin, "run", "-q", *client, "--seed", "7",
                       "--report-json", str(report), str(path))
    assert report.exists(), proc.stderr
    s = json.loads(report.read_text())["scenarios"][0]
    assert s["error"] is None, s["error"]
    return proc, s, {c["id"]: c for c in s["checks"]}


def chat_body(content="hi", stream=True, max_tokens=16):
    return {"model": "fake-model-1", "stream": stream, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": content}]}


def stream_scenario(sid):
    """One streamed chat task whose first answer breaks after 2 chunks
    with the platform's pool_exhausted frame; the next answer is whole."""
    return {
        "id": sid,
        "provider": {"keys": {"k1": {"secret": "sk-e2e-k1", "user": "u1"}}},
        "routes": [{"id": "chat", "kind": "chat_completions", "method": "POST",
                    "path": "/v1/chat/completions", "reply": REPLY,
                    "responses": [{"shape": "pool_exhausted", "error_after_chunks": 2},
                                  {"status": 200}]}],
        "harness": {
            "tasks": [{"id": "c1", "key": "k1", "method": "POST",
                       "path": "/v1/chat/completions", "body": chat_body(),
                       "budget": {"max_attempts": 3}}],
            "events": [{"at_ms": 0, "send": ["c1"]}],
            "expect": {"stream.no_silent_retry": {"required": True}},
            "timeout_s": 20,
        },
    }


def pacing_scenario(sid, at_ms, pacing, route=None, body=None):
    """Tasks p1.. of key k1, task i sent at @at_ms[i], under @pacing."""
    route = route or {"id": "read", "method": "GET", "path": "/v1/records/{id}",
                      "responses": [{"status": 200, "body": {"id": "{id}"}}]}
    tasks = [{"id": f"p{i + 1}", "key": "k1", "method": route["method"],
              "path": route["path"].replace("{id}", str(i + 1)),
              **({"body": body} if body is not None else {})} for i in range(len(at_ms))]
    events = {}
    for i, t in enumerate(at_ms):
        events.setdefault(t, []).append(f"p{i + 1}")
    return {
        "id": sid,
        "provider": {"keys": {"k1": {"secret": "sk-e2e-k1", "user": "u1"}}},
        "routes": [route],
        "harness": {
            "tasks": tasks,
            "events": [{"at_ms": t, "send": ids} for t, ids in sorted(events.items())],
            "pacing": pacing,
            "expect": {"wait.pacing": {"required": True}},
            "timeout_s": 30,
        },
    }


# --- stream.no_silent_retry ---------------------------------------------------

def test_exec_client_that_resends_a_broken_stream_fails_no_silent_retry(harness_bin, tmp_path):
    doc = stream_scenario("stream-twice")
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", f"{POST}; {POST}")
    c = checks["stream.no_silent_retry"]
    assert c["verdict"] == "fail", c
    assert c["required"] is True
    assert c["detail"].startswith("task c1 retried ")
    assert ("ms after its stream broke after 2 chunks (error_frame) without reporting "
            "stream_interrupted (exec mode: a client cannot report, so a retry there is "
            "always silent): seq 1, then seq 2") in c["detail"]
    assert [e["seq"] for e in c["evidence"]] == [1, 2]
    assert s["attempts"] == 2
    assert proc.returncode == 1, proc.stdout


def test_exec_client_that_sends_once_passes_no_silent_retry(harness_bin, tmp_path):
    doc = stream_scenario("stream-once")
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", POST)
    c = checks["stream.no_silent_retry"]
    assert c["verdict"] == "pass", c
    assert c["detail"] == ("task c1's stream broke after 2 chunks (error_frame) at seq 1 "
                           "and the task was not retried")
    assert [e["seq"] for e in c["evidence"]] == [1]
    assert checks["wait.pacing"]["verdict"] == "n/a"
    assert s["attempts"] == 1


# A stdio client that streams its task, reads the frames, and retries a
# stream that broke after content arrived; with REPORT it says so first
# ("bad-report": in a line the protocol refuses, with "chunks": 0).
STREAMER = r'''
import json, os, sys, time, urllib.request

REPORT = sys.argv[1] in ("report", "bad-report")
BAD = sys.argv[1] == "bad-report"


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stream(task, n):
    say({"type": "action_sent", "task": task["id"], "attempt": n, "idempotency_key": None})
    req = urllib.request.Request(task["url"], data=task["body"].encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + os.environ[task["key_env"]]})
    chunks, error = 0, None
    with urllib.request.urlopen(req, timeout=10) as resp:
        for event in resp.read().decode().split("\n\n"):
            data = event[len("data: "):] if event.startswith("data: ") else None
            if data is None or data == "[DONE]":
                continue
            frame = json.loads(data)
            if "error" in frame:
                error = frame["error"].get("code")
            elif frame["choices"][0]["delta"].get("content"):
                chunks += 1
        say({"type": "action_result", "task": task["id"], "attempt": n,
             "status": resp.status, "retry_after": None, "error": None})
    return chunks, error


say({"type": "hello", "protocol": 1, "client": {"name": "streamer", "version": "1"},
     "features": []})
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] != "task":
        continue
    n = 1
    chunks, error = stream(msg, n)
    if error is not None and chunks >= 1:
        if REPORT:
            say({"type": "stream_interrupted", "task": msg["id"], "attempt": n,
                 "chunks": 0 if BAD else chunks, "reason": "error_frame",
                 "error_code": error})
        time.sleep(0.2)  # keeps a busy test host from reading the report late
        n += 1
        stream(msg, n)
    say({"type": "result", "task": msg["id"], "outcome": "succeeded", "attempts": n,
         "waited_ms": 0, "sent": "yes", "status": 200, "provider_id": None})
'''


def stdio_client(tmp_path, name, source, *args):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return " ".join([PY, str(path), *map(str, args)])


def test_stdio_client_that_reports_the_interruption_may_retry(harness_bin, tmp_path):
    doc = stream_scenario("stream-reported")
    proc, s, checks = run(harness_bin, tmp_path, doc,
                          "--client", stdio_client(tmp_path, "streamer", STREAMER, "report"))
    assert not s.get("protocol_errors"), s["protocol_errors"]
    c = checks["stream.no_silent_retry"]
    assert c["verdict"] == "pass", c
    assert c["detail"].startswith("task c1 reported stream_interrupted before retrying: its "
                                  "stream broke after 2 chunks (error_frame) at seq 1")
    assert [e["seq"] for e in c["evidence"]] == [1, 2]
    assert checks["attempts.hidden"]["verdict"] == "pass"


def test_stdio_client_that_retries_silently_fails(harness_bin, tmp_path):
    doc = stream_scenario("stream-silent")
    proc, s, checks = run(harness_bin, tmp_path, doc,
                          "--client", stdio_client(tmp_path, "streamer", STREAMER, "silent"))
    c = checks["stream.no_silent_retry"]
    assert c["verdict"] == "fail", c
    assert c["detail"].endswith("without reporting stream_interrupted: seq 1, then seq 2")
    assert proc.returncode == 1, proc.stdout


def test_malformed_interruption_report_is_a_protocol_error_and_no_report(harness_bin,
                                                                         tmp_path):
    # "chunks": 0 breaks docs/client-protocol.md (an integer >= 1): the
    # line is refused, so the retry after it is silent
    doc = stream_scenario("stream-bad-report")
    proc, s, checks = run(harness_bin, tmp_path, doc,
                          "--client", stdio_client(tmp_path, "streamer", STREAMER, "bad-report"))
    errors = [e for e in s["protocol_errors"] if "stream_interrupted" in e]
    assert len(errors) == 1, s["protocol_errors"]
    assert errors[0].endswith(': stream_interrupted: "chunks" must be an integer >= 1')
    c = checks["stream.no_silent_retry"]
    assert c["verdict"] == "fail", c
    assert c["detail"].endswith("without reporting stream_interrupted: seq 1, then seq 2")
    assert proc.returncode == 1, proc.stdout


# --- wait.pacing ------------------------------------------------------------------

def test_tasks_sent_all_at_once_over_the_rpm_fail_wait_pacing(harness_bin, tmp_path):
    # rpm 2 per hour: the third request of the burst finds the bucket empty,
    # and stays at "0.0" however late it comes (a tenth refills in 3 min)
    doc = pacing_scenario("burst", [0, 0, 0, 0], {"rpm": 2, "period_s": 3600})
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", GET)
    c = checks["wait.pacing"]
    assert c["verdict"] == "fail", c
    assert c["detail"].startswith("key k1: seq ")
    assert " arrived with 0.0 of 1 request token left (rpm 2 per 3600 s, tolerance 50 ms)" \
        in c["detail"]
    assert c["detail"].endswith("; 0 quota 429s")
    assert len(c["evidence"]) == 1
    assert s["attempts"] == 4
    assert proc.returncode == 1, proc.stdout


def test_tasks_spread_by_at_ms_events_pass_wait_pacing(harness_bin, tmp_path):
    # rpm 2 per 1 s: one token each half second; the third, sent 1.5 s after
    # the first two, finds the one it needs even if those two were sent up
    # to a second late; a bucket that did not refill would fail it
    doc = pacing_scenario("spread", [0, 0, 1500, 3000], {"rpm": 2, "period_s": 1})
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", GET)
    c = checks["wait.pacing"]
    assert c["verdict"] == "pass", c
    assert c["detail"].startswith("4 attempts of 1 key kept the pace (rpm 2 per 1 s, "
                                  "tolerance 50 ms); closest: key k1, seq ")
    assert proc.returncode == 0, proc.stdout


def test_token_cost_over_the_tpm_fails_wait_pacing(harness_bin, tmp_path):
    # each request costs ceil(8 / 4) + 40 = 42 tokens: two fit in 100, three do not
    route = {"id": "chat", "kind": "chat_completions", "method": "POST",
             "path": "/v1/chat/completions", "reply": REPLY, "responses": [{"status": 200}]}
    body = chat_body("12345678", stream=False, max_tokens=40)
    doc = pacing_scenario("tokens", [0, 0, 0], {"tpm": 100, "period_s": 3600}, route, body)
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", POST)
    c = checks["wait.pacing"]
    assert c["verdict"] == "fail", c
    # 100 - 2 x 42 = 16 left, plus what refilled (100 per hour) while the
    # three exec processes started: a whole token would take 36 s
    m = re.search(r" needed 42 tokens with (\d+\.\d) left \(tpm 100 per 3600 s, tolerance 50 ms\)",
                  c["detail"])
    assert m and 16.0 <= float(m.group(1)) < 17.0, c["detail"]


def test_only_tpm_and_no_chat_request_is_na_for_wait_pacing(harness_bin, tmp_path):
    # GETs cost no tokens: with no rpm nothing could break the pace
    doc = pacing_scenario("tpm-no-chat", [0, 0], {"tpm": 100})
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", GET)
    c = checks["wait.pacing"]
    assert c["verdict"] == "n/a", c
    assert c["detail"] == ("no attempt of a key had a token cost to judge (tpm 100 per 60 s; "
                           "2 attempts, none a chat completion or Messages request)")
    assert s["attempts"] == 2
    # an rpm beside it judges the same requests
    doc = pacing_scenario("rpm-no-chat", [0, 0], {"rpm": 5, "tpm": 100})
    proc, s, checks = run(harness_bin, tmp_path, doc, "--exec", GET)
    assert checks["wait.pacing"]["verdict"] == "pass", checks["wait.pacing"]


# --- the task line ------------------------------------------------------------

# Echoes every task line into the file named by argv[1], answers each task.
ECHO = r'''
import json, sys

out = open(sys.argv[1], "a")


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


say({"type": "hello", "protocol": 1, "client": {"name": "echo", "version": "1"}, "features": []})
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] != "task":
        continue
    out.write(line)
    out.flush()
    say({"type": "result", "task": msg["id"], "outcome": "failed", "attempts": 0,
         "waited_ms": 0, "sent": "no", "status": 0, "provider_id": None})
'''


def test_task_lines_carry_stream_tokens_and_pacing(harness_bin, tmp_path):
    system, prompt = "be brief", "abcdefghi"
    tasks = [
        {"id": "s1", "key": "k1", "method": "POST", "path": "/v1/chat/completions",
         "body": {"model": "m", "stream": True, "max_tokens": 20,
                  "messages": [{"role": "system", "content": system},
                               {"role": "user", "content": prompt}]}},
        {"id": "n1", "key": "k1", "method": "POST", "path": "/v1/chat/completions",
         "body": {"messages": [{"role": "user", "content": "{body_canary}"}]}},
        {"id": "r1", "key": "k1", "method": "GET", "path": "/v1/records/1"},
        {"id": "x1", "key": "k1", "method": "POST", "path": "/v1/chat/completions",
         "body": {"stream": True, "prompt": "not a chat request"}},
    ]
    doc = {
        "id": "task-lines",
        "provider": {"keys": {"k1": {"secret": "sk-e2e-k1", "user": "u1"}},
                     "quota": {"per_key": 100, "period_s": 3}},
        "routes": [{"id": "chat", "kind": "chat_completions", "method": "POST",
                    "path": "/v1/chat/completions", "responses": [{"status": 200}]},
                   {"id": "read", "method": "GET", "path": "/v1/records/{id}",
                    "responses": [{"status": 200}]}],
        "harness": {"tasks": tasks,
                    "events": [{"at_ms": 0, "send": [t["id"] for t in tasks]}],
                    "pacing": {"rpm": 5, "tpm": 1000},
                    "timeout_s": 20},
    }
    lines_file = tmp_path / "lines.jsonl"
    proc, s, checks = run(harness_bin, tmp_path, doc,
                          "--client", stdio_client(tmp_path, "echo", ECHO, lines_file))
    assert not s.get("protocol_errors"), s["protocol_errors"]
    got = {t["id"]: t for t in map(json.loads, lines_file.read_text().splitlines())}
    assert set(got) == {"s1", "n1", "r1", "x1"}
    # the period is the provider's quota period; rpm and tpm as published
    for t in got.values():
        assert t["pacing"] == {"rpm": 5, "tpm": 1000, "period_s": 3}
        assert list(t)[-3:] == ["stream", "tokens", "pacing"]
    # the LLM rate-limit guide's cost: ceil(bytes / 4) per message text, plus max_tokens
    assert got["s1"]["stream"] is True
    assert got["s1"]["tokens"] == math.ceil(len(system) / 4) + math.ceil(len(prompt) / 4) + 20
    # the body canary in the body sent: "canary." + 16 hex digits + "@example.invalid"
    assert got["n1"]["stream"] is False
    canary = json.loads(got["n1"]["body"])["messages"][0]["content"]
    assert canary.startswith("canary.") and len(canary) == 7 + 16 + 16
    assert got["n1"]["tokens"] == math.ceil(39 / 4)
    assert (got["r1"]["stream"], got["r1"]["tokens"], got["r1"]["body"]) == (False, None, None)
    assert (got["x1"]["stream"], got["x1"]["tokens"]) == (True, None)
    # nothing was sent: pacing has no attempt to judge
    assert checks["wait.pacing"]["verdict"] == "n/a"


def test_task_line_pacing_is_null_without_pacing(harness_bin, tmp_path):
    doc = stream_scenario("no-pacing")
    lines_file = tmp_path / "lines.jsonl"
    proc, s, checks = run(harness_bin, tmp_path, doc,
                          "--client", stdio_client(tmp_path, "echo", ECHO, lines_file))
    (t,) = map(json.loads, lines_file.read_text().splitlines())
    assert (t["stream"], t["tokens"], t["pacing"]) == (True, math.ceil(2 / 4) + 16, None)
    assert checks["wait.pacing"]["verdict"] == "n/a"
