"""Cancel events and canaries, end to end: small one-off scenarios, shell
one-liner exec clients and a small stdio client.

What is asserted is the harness's own doing: the provider takes the key
only with its canary, a cancel stops the task (SIGTERM, then SIGKILL, in
exec mode; a cancel line in stdio mode) and keeps the scenario open for the
quiet window, the searches find the canaries, and no report ever shows a
canary or a key's secret. Timing facts come from the report or the journal.
"""
import json
import re
import textwrap
from functools import partial

from conftest import run_harness
from scenarios import key_table, one_route_scenario

PY = "/usr/bin/python3"
AUTH = '-H "Authorization: Bearer $FAKEAPI_KEY"'
KEY_CANARY = re.compile(r"kc[0-9a-f]{24}")
BODY_CANARY = re.compile(r"canary\.[0-9a-f]{16}@example\.invalid")
SECRETS = ("sk-e2e-k1", "sk-e2e-k2")



KEYS = key_table(("k1", "sk-e2e-k1", "u1"), ("k2", "sk-e2e-k2", "u1"))
# A one-route scenario (route r) of the given tasks and events.
scenario = partial(one_route_scenario, keys=KEYS, route_id="r", timeout_s=30)


def task(tid="t1", **extra):
    return dict({"id": tid, "key": "k1", "method": "GET", "path": "/v1/records/7"}, **extra)


def run(harness_bin, tmp_path, doc, *mode, extra_env=None):
    """Run one scenario with every report; returns (process, scenario report,
    every report's text, the journal's entries)."""
    path = tmp_path / f"{doc['id']}.json"
    path.write_text(json.dumps(doc, indent=1))
    report, junit, jdir = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "journals"
    proc = run_harness(harness_bin, "run", *mode, "--seed", "7", "--report-json", str(report),
                       "--junit", str(junit), "--journal-dir", str(jdir), str(path),
                       extra_env=extra_env)
    assert report.exists(), proc.stderr
    texts = [proc.stdout, proc.stderr, report.read_text(), junit.read_text()]
    journal = [json.loads(line) for line in (jdir / f"{doc['id']}.jsonl").read_text().splitlines()
               if line.strip()]
    return proc, json.loads(texts[2])["scenarios"][0], texts, journal


def assert_nothing_secret(texts):
    for text in texts:
        assert not KEY_CANARY.search(text), text
        assert not BODY_CANARY.search(text), text
        for secret in SECRETS:
            assert secret not in text, text


# --- the key canary ------------------------------------------------------------

def test_provider_takes_the_key_only_with_its_canary(harness_bin, tmp_path):
    # the plain secrets are cut from the variables: the command line is in
    # the report, and must not name them
    client = ('case "$FAKEAPI_KEY" in sk-e2e-k?.kc*) ;; *) exit 3;; esac; '
              'p=${FAKEAPI_KEY%%.kc*}; c=${FAKEAPI_KEY#"$p".}; '
              '[ ${#c} = 26 ] || exit 4; '
              '[ "$FAKEAPI_KEY_K1" = "$FAKEAPI_KEY" ] || exit 5; '
              '[ "$FAKEAPI_KEY_K2" = "${FAKEAPI_KEY_K2%%.kc*}.$c" ] || exit 6; '
              '[ "${FAKEAPI_KEY_K2%%.kc*}" != "$p" ] || exit 6; '
              f'a=$(curl -s -o /dev/null -w "%{{http_code}}" {AUTH} {{url}}); '
              'b=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $p" {url}); '
              'd=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $p.kc0" {url}); '
              '[ "$a$b$d" = 200401401 ] || exit 7')
    doc = scenario("cc-key", [{"status": 200, "body": {"id": "{id}"}}], [task()],
                   [{"at_ms": 0, "send": ["t1"]}])
    proc, s, texts, journal = run(harness_bin, tmp_path, doc, "--exec", client)
    assert s["tasks"][0]["exit_code"] == 0, (s["tasks"], proc.stdout)
    assert [(e["status"], e["key"]) for e in journal] == [(200, "k1"), (401, None), (401, None)]
    assert s["canary_hits"] == []
    assert s["canary_bytes_searched"] == 0  # the client printed nothing
    assert_nothing_secret(texts)


def test_a_printed_key_is_found_and_never_reported(harness_bin, tmp_path):
    # exit 127 without an attempt: the report quotes the last stderr line
    client = 'echo "key is $FAKEAPI_KEY, k2 is $FAKEAPI_KEY_K2" >&2; exit 127'
    doc = scenario("cc-print", [{"status": 200}], [task()], [{"at_ms": 0, "send": ["t1"]}])
    proc, s, texts, _ = run(harness_bin, tmp_path, doc, "--exec", client)
    assert s["tasks"][0]["error"] == ("client could not start: exit 127, no attempt made: key is "
                                      "[key secret].[key canary], k2 is [key secret].[key canary]")
    assert "[key secret].[key canary]" in s["error"]
    assert s["canary_hits"] == [{"kind": "key", "where": "stderr of task t1", "task": "t1"}]
    assert s["canary_bytes_searched"] > 0
    assert proc.returncode == 2
    assert_nothing_secret(texts)


# --- cancel in exec mode ---------------------------------------------------------

def test_cancel_sigterms_the_exec_client_and_waits_out_the_quiet_window(harness_bin, tmp_path):
    # the loop's next attempt is 5 s away: the cancel, 300 ms after the
    # first answer, comes long before it however late a loaded machine is
    client = f"while :; do curl -s -o /dev/null {AUTH} {{url}}; sleep 5; done"
    doc = scenario("cc-cancel", [{"status": 503, "retry_after": 1}], [task()],
                   [{"at_ms": 0, "send": ["t1"]},
                    {"after": {"task": "t1", "status": 503}, "plus_ms": 300, "cancel": ["t1"]}])
    proc, s, texts, journal = run(harness_bin, tmp_path, doc, "--exec", client)
    t = s["tasks"][0]
    assert t["signal"] == 15 and t["timed_out"] is False and t["exit_code"] is None
    first = journal[0]
    cancelled_us = t["cancelled_at_ms"] * 1000
    assert cancelled_us >= first["t_response_us"] + 300000
    assert all(e["t_arrival_us"] < cancelled_us for e in journal)
    assert len(journal) == 1
    # open until the pause the 503 announced, plus the 1000 ms margin
    assert s["duration_ms"] >= (first["pause_until_us"] + 1000000) / 1000
    assert s["duration_ms"] < 10000
    assert "cancelled at" in proc.stdout
    assert_nothing_secret(texts)


def test_cancel_kills_a_client_that_ignores_sigterm(harness_bin, tmp_path):
    client = f"trap '' TERM; curl -s -o /dev/null {AUTH} {{url}}; while :; do sleep 0.1; done"
    doc = scenario("cc-ignore", [{"status": 200}], [task()],
                   [{"at_ms": 0, "send": ["t1"]},
                    {"at_ms": 500, "cancel": ["t1"]}],
                   expect={"cancel.quiet": {"margin_ms": 0}})
    _, s, _, _ = run(harness_bin, tmp_path, doc, "--exec", client)
    t = s["tasks"][0]
    assert t["signal"] == 9 and t["timed_out"] is False
    assert t["cancelled_at_ms"] >= 500
    assert s["duration_ms"] >= t["cancelled_at_ms"] + 900  # the 1 s grace
    assert s["duration_ms"] < 10000


def test_cancel_of_a_finished_task_is_a_no_op(harness_bin, tmp_path):
    # the cancel comes 1.5 s after t1's answer (its curl has ended by then
    # however late a loaded machine runs it), before t2 is even sent
    doc = scenario("cc-noop", [{"status": 200}], [task(), task("t2")],
                   [{"at_ms": 0, "send": ["t1"]},
                    {"after": {"task": "t1", "status": 200}, "plus_ms": 1500,
                     "cancel": ["t1", "t2"]},
                    {"after": {"task": "t1", "status": 200}, "plus_ms": 2000, "send": ["t2"]}],
                   expect={"cancel.quiet": {"margin_ms": 5000}})
    _, s, _, journal = run(harness_bin, tmp_path, doc, "--exec",
                           f"curl -s -o /dev/null {AUTH} {{url}}")
    assert [t["cancelled_at_ms"] for t in s["tasks"]] == [None, None]
    assert [t["exit_code"] for t in s["tasks"]] == [0, 0]
    assert [e["task"] for e in journal] == ["t1", "t2"]
    # t2's answer ~2 s in: no 5 s quiet window (6.5 s at least) was kept open
    assert s["duration_ms"] < 5000


# --- stdio mode ------------------------------------------------------------------

STDIO_CLIENT = r'''
import json, os, sys, urllib.error, urllib.request

def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

say({"type": "hello", "protocol": 1, "client": {"name": "cc", "version": "1"}, "features": ["cancel"]})
# what a careless client does: its key in its state dir, on stdout, its body on stderr
key = os.environ["FAKEAPI_KEY_K1"]
with open(os.path.join(os.environ["CLIENT_STATE_DIR"], "key.txt"), "w") as f:
    f.write(key)
print("debug: key " + key, flush=True)
tasks = {}
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] == "task":
        t = tasks[msg["id"]] = msg
        sys.stderr.write("body " + str(t["body"]) + "\n")
        say({"type": "action_sent", "task": t["id"], "attempt": 1, "idempotency_key": None})
        req = urllib.request.Request(t["url"], data=t["body"].encode(), method=t["method"],
                                     headers=dict(t["headers"], Authorization="Bearer " + key))
        try:
            status = urllib.request.urlopen(req, timeout=10).status
        except urllib.error.HTTPError as e:
            status = e.code
        say({"type": "action_result", "task": t["id"], "attempt": 1, "status": status,
             "retry_after": None, "error": None})
        say({"type": "retry_scheduled", "task": t["id"], "attempt": 2, "due_in_ms": 2000,
             "reason": "backoff"})
    elif msg["type"] == "cancel":
        t = tasks[msg["id"]]
        body = json.loads(t["body"])
        ok = (t["goal"] == "find the customer" and "{body_canary}" not in t["body"]
              and body["email"].startswith("canary.") and body["n"] == 1
              and key.startswith("sk-e2e-k1.kc") and set(msg) == {"type", "id"})
        say({"type": "result", "task": t["id"], "outcome": "cancelled" if ok else "failed",
             "attempts": 1, "waited_ms": 0, "sent": "yes", "status": 503, "provider_id": None})
'''


def test_stdio_cancel_line_goal_body_canary_and_the_searches(harness_bin, tmp_path):
    client = tmp_path / "client.py"
    client.write_text(textwrap.dedent(STDIO_CLIENT))
    doc = scenario("cc-stdio", [{"status": 503, "retry_after": 1}],
                   [task(method="POST", path="/v1/search", goal="find the customer",
                         headers={"Content-Type": "application/json"},
                         body={"email": "{body_canary}", "n": 1})],
                   [{"at_ms": 0, "send": ["t1"]},
                    {"after": {"task": "t1", "status": 503, "on": "client_saw"},
                     "plus_ms": 200, "cancel": ["t1"]}],
                   method="POST", path="/v1/search",
                   expect={"cancel.quiet": {"margin_ms": 500}})
    proc, s, texts, journal = run(harness_bin, tmp_path, doc, "--client", f"{PY} {client}")
    t = s["tasks"][0]
    assert t["outcome"] == "cancelled", (t, s["protocol_errors"])
    assert t["cancelled_at_ms"] is not None
    assert len(journal) == 1
    # kept open until the retry the client had scheduled, plus the margin
    assert s["duration_ms"] >= t["cancelled_at_ms"] + 2000 + 500
    hits = {(h["kind"], h["where"]) for h in s["canary_hits"]}
    assert hits == {("key", "stdout"), ("body", "stderr"), ("key", "state dir file key.txt")}
    assert s["canary_search_incomplete"] is False
    assert "canary search incomplete" not in proc.stdout
    assert any("debug: key [key secret].[key canary]" in e for e in s["protocol_errors"])
    assert_nothing_secret(texts)


# --- what a hostile client does with its key ---------------------------------------

LONG_SECRET = "sk-e2e-long-0123456789ABCDEFGHIJKLMNOPQRSTUV"

# Prints its key where the harness keeps only a cut piece of what it said,
# hides it behind a \u0000 and in \u escapes; writes it to KEY_FILE so the
# test knows the canary.
HOSTILE_CLIENT = r'''
import json, os, sys, urllib.error, urllib.request

def say(obj=None, raw=None):
    sys.stdout.write(raw if raw is not None else json.dumps(obj) + "\n")
    sys.stdout.flush()

key = os.environ["FAKEAPI_KEY"]
open(os.environ["KEY_FILE"], "w").write(key)
esc = "".join("\\u%04x" % ord(c) for c in key)
say({"type": "hello", "protocol": 1, "client": {"name": "hostile", "version": "1"},
     "features": ["escalation"]})
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "shutdown":
        break
    if msg["type"] != "task":
        continue
    t = msg["id"]
    say({"type": "action_sent", "task": t, "attempt": 1, "idempotency_key": None})
    req = urllib.request.Request(msg["url"], headers={"Authorization": "Bearer " + key})
    try:
        status = urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        status = e.code
    say({"type": "action_result", "task": t, "attempt": 1, "status": status,
         "retry_after": None, "error": None})
    # cut pieces (lines 4-6): a 60-byte excerpt, a quoted type, a record's
    # member name
    say(raw="x" * 30 + " " + key + "\n")
    say({"type": key, "task": t})
    rec = {"reason": "attempts_exhausted", "goal": "g", "action": "stopped",
           "provider": "http://127.0.0.1", "endpoint": "/v1/records/{id}", "method": "GET",
           "scope": msg["scope"], "fingerprint": "sha256:" + "0" * 64,
           "attempts": [{"attempt": 1, "at": "2025-01-07T10:15:02.114Z", "status": status,
                         "retry_after": None, "ratelimit": {key: 5}}],
           "budget": {"max_attempts": 1, "max_wait_s": 1, "attempts_used": 1, "waited_ms": 0},
           "idempotency_key": None, "provider_operation_id": None, "sent": "yes",
           "options": ["cancel"]}
    say({"type": "escalation", "task": t, "record": rec})
    # hidden: behind a NUL (line 7), and escaped in a valid line (line 8)
    say(raw='{"type":"action_sent","task":"%s","attempt":2,"note":"a\\u0000 %s"}\n' % (t, esc))
    say(raw='{"type":"result","task":"%s","outcome":"escalated","attempts":1,"waited_ms":0,'
            '"sent":"yes","status":%d,"provider_id":null,"note":"%s"}\n' % (t, status, esc))
    # the stderr tail starts 30 bytes into the key
    sys.stderr.write("key " + key + "E" * (4096 - 30))
    sys.stderr.flush()
'''


def fragments(text, n=8):
    return {text[i:i + n] for i in range(len(text) - n + 1)}


def test_no_piece_of_a_key_reaches_a_report_however_it_was_cut(harness_bin, tmp_path):
    client = tmp_path / "hostile.py"
    client.write_text(textwrap.dedent(HOSTILE_CLIENT))
    key_file = tmp_path / "key"
    doc = scenario("cc-hostile", [{"status": 503}], [task(budget={"max_attempts": 1, "max_wait_s": 5})],
                   [{"at_ms": 0, "send": ["t1"]}])
    doc["provider"]["keys"]["k1"]["secret"] = LONG_SECRET
    proc, s, texts, _ = run(harness_bin, tmp_path, doc, "--client", f"{PY} {client}",
                            extra_env={"KEY_FILE": str(key_file)})
    key = key_file.read_text()
    assert key.startswith(LONG_SECRET + ".kc"), key
    # no 8 characters in a row of the key, its secret or its canary anywhere
    for text in texts:
        for piece in fragments(key):
            assert piece not in text, (piece, text)
    assert_nothing_secret(texts)
    errors = s["protocol_errors"]
    assert errors == [
        "line 4: not a JSON object: " + "x" * 30 + " [key secret]...",
        'line 5: unknown type "[key secret].[key canary]..."',
        "line 7: a string holds \\u0000 (NUL), which the protocol does not allow"]
    assert "[key secret].[key canary]EEEE" in proc.stdout  # the stderr tail
    # the escaped key is found where it was hidden, the NUL line included
    hits = [(h["kind"], h["where"]) for h in s["canary_hits"]]
    assert sorted(hits) == [("key", "escalation record of task t1"), ("key", "stderr"),
                            ("key", "stdout"), ("key", "stdout line 7"),
                            ("key", "stdout line 8")], hits
    sanitised = next(c for c in s["checks"] if c["id"] == "escalation.sanitised")
    assert sanitised["verdict"] == "fail"


def test_a_search_cut_short_says_so(harness_bin, tmp_path):
    # 17 MB on each stream, past the 16 MiB the capture keeps, then the key
    client = tmp_path / "loud.py"
    client.write_text(textwrap.dedent('''
        import json, os, sys
        key = os.environ["FAKEAPI_KEY"]
        print(json.dumps({"type": "hello", "protocol": 1, "features": []}), flush=True)
        for i in range(17):
            print("x" * 1000000, flush=True)
        print(json.dumps({"type": "action_sent", "task": "t9", "key": key}), flush=True)
        sys.stderr.write(("E" * 1023 + "\\n") * 17 * 1024 + "last words: " + key + "\\n")
        sys.stderr.flush()
        for line in sys.stdin:
            if json.loads(line)["type"] == "shutdown":
                break
    '''))
    doc = scenario("cc-loud", [{"status": 200}], [task()], [{"at_ms": 0, "send": ["t1"]}],
                   timeout_s=5)
    proc, s, texts, _ = run(harness_bin, tmp_path, doc, "--client", f"{PY} {client}")
    assert s["canary_search_incomplete"] is True
    assert "  canary search incomplete: " in proc.stdout
    assert s["canary_bytes_searched"] >= 16 * 1024 * 1024
    # the line past the bound is found as it was parsed, the end of stderr in its tail
    assert sorted((h["kind"], h["where"]) for h in s["canary_hits"]) == [
        ("key", "stderr"), ("key", "stdout line 19")], s["canary_hits"]
    assert_nothing_secret(texts)

    # a state dir deeper than the walk goes
    deep = "/".join(["d"] * 34)
    doc = scenario("cc-deep", [{"status": 200}], [task()], [{"at_ms": 0, "send": ["t1"]}])
    _, s, _, _ = run(harness_bin, tmp_path, doc, "--exec",
                     f'mkdir -p "$CLIENT_STATE_DIR/{deep}"; curl -s -o /dev/null {AUTH} {{url}}')
    assert s["tasks"][0]["exit_code"] == 0
    assert s["canary_search_incomplete"] is True
    doc["id"] = "cc-shallow"
    _, s, _, _ = run(harness_bin, tmp_path, doc, "--exec",
                     f'mkdir -p "$CLIENT_STATE_DIR/d/d"; curl -s -o /dev/null {AUTH} {{url}}')
    assert s["canary_search_incomplete"] is False


def test_an_escalation_line_without_a_record_is_no_record(harness_bin, tmp_path):
    client = tmp_path / "norec.py"
    client.write_text(textwrap.dedent('''
        import json, os, sys
        def say(o):
            print(json.dumps(o), flush=True)
        say({"type": "hello", "protocol": 1, "features": ["escalation"]})
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "shutdown":
                break
            if msg["type"] == "task":
                say({"type": "escalation", "task": msg["id"], "note": os.environ["FAKEAPI_KEY"]})
                say({"type": "escalation", "task": msg["id"], "record": "x"})
                say({"type": "result", "task": msg["id"], "outcome": "escalated", "attempts": 0,
                     "waited_ms": 0, "sent": "no", "status": 0, "provider_id": None})
    '''))
    doc = scenario("cc-norec", [{"status": 200}], [task()], [{"at_ms": 0, "send": ["t1"]}])
    _, s, texts, _ = run(harness_bin, tmp_path, doc, "--client", f"{PY} {client}")
    # the key is found in stdout as printed, never as an "escalation record"
    assert [(h["kind"], h["where"]) for h in s["canary_hits"]] == [("key", "stdout")]
    assert s["tasks"][0]["escalation"] is None
    assert_nothing_secret(texts)
