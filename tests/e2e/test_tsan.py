"""The threaded provider under ThreadSanitizer (make tsan: build/tsan/fakeapi).

A short concurrent load that reaches every thread the provider has: its
server pool (keep-alive and fresh connections), the timer thread (delayed
answers, paced streams, a stall), faults that drop the connection, a
scope pause, and admin traffic reading the journal and health while the
attempts are being appended. ThreadSanitizer halts the process with exit
66 on the first data race or lock-order inversion; the test needs a clean
exit, no report on stderr, and every completed request in the journal.
Bounded: 8 workers for 2 s, loopback only.
"""
import http.client
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import REPO, start_provider

TSAN_BIN = REPO / "build" / "tsan" / "fakeapi"
KEY = "sk-tsan"
WORKERS = 8
SECONDS = 2.0
CHAT = {"model": "fake-model-1", "stream": True, "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}]}

SCENARIO = {
    "id": "tsan",
    "provider": {"keys": {"k": {"secret": KEY, "user": "u"}}, "scope": "key"},
    "routes": [
        {"id": "ping", "method": "GET", "path": "/v1/ping",
         "responses": [{"status": 200, "body": {"ok": True}}]},
        {"id": "slow", "method": "GET", "path": "/v1/slow",
         "responses": [{"status": 200, "body": {"ok": True}, "delay_ms": 30}]},
        {"id": "drop", "method": "GET", "path": "/v1/drop",
         "responses": [{"status": 200, "body": {"ok": True}, "fault": "drop_before_commit"}]},
        {"id": "limited", "method": "GET", "path": "/v1/limited",
         "responses": [{"status": 429, "retry_after": 1, "body": {"error": "slow down"}}]},
        {"id": "paced", "kind": "chat_completions", "method": "POST",
         "path": "/v1/paced/chat/completions", "reply": "one two three four",
         "responses": [{"status": 200, "chunk_delay_ms": 20}]},
        {"id": "stall", "kind": "chat_completions", "method": "POST",
         "path": "/v1/stall/chat/completions", "reply": "one two three four",
         "responses": [{"status": 200, "stall_after_chunks": 1, "stall_ms": 150}]},
    ],
}

CALLS = [("GET", "/v1/ping", None), ("GET", "/v1/slow", None), ("GET", "/v1/drop", None),
         ("GET", "/v1/limited", None), ("POST", "/v1/paced/chat/completions", CHAT),
         ("POST", "/v1/stall/chat/completions", CHAT)]


def worker(host, port, until, n, counts, lock):
    """Cycle through CALLS on one keep-alive connection, reconnecting
    after each dropped one; count the requests that got an answer."""
    conn, done, k = None, 0, n
    while time.monotonic() < until:
        method, path, body = CALLS[k % len(CALLS)]
        k += 1
        if conn is None:
            conn = http.client.HTTPConnection(host, port, timeout=10)
        try:
            conn.request(method, f"{path}?fa_task=w{n}", body=json.dumps(body) if body else None,
                         headers={"Authorization": f"Bearer {KEY}",
                                  "Content-Type": "application/json"})
            conn.getresponse().read()
            done += 1
        except (http.client.HTTPException, OSError):
            conn.close()
            conn = None  # the dropped answer: a fresh connection next
    if conn is not None:
        conn.close()
    with lock:
        counts.append(done)


def admin(url, until, seen):
    """Read the journal and health while the load runs; every answer must
    be whole (a streamed journal cut short is recorded, not lost in a
    thread's exception)."""
    host, port = url.split("//")[1].split(":")
    while time.monotonic() < until:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        for path in ("/_fakeapi/journal?since=1", "/_fakeapi/health"):
            try:
                conn.request("GET", path)
                resp = conn.getresponse()
                doc = json.loads(resp.read())
                whole = "entries" not in doc or len(doc["entries"]) == doc["count"]
                seen.append(resp.status if whole else f"{path}: count differs")
            except (OSError, http.client.HTTPException, ValueError) as e:
                seen.append(f"{path}: {e!r}")
                break
        conn.close()


def test_provider_under_concurrent_load_has_no_data_race(tmp_path, monkeypatch):
    if not TSAN_BIN.exists():
        pytest.fail(f"{TSAN_BIN} missing: `make tsan` builds it (make test does)")
    # the binary really is instrumented: its runtime answers for itself
    probe = subprocess.run([str(TSAN_BIN), "--version"], capture_output=True, text=True,
                           timeout=30, env=dict(os.environ, TSAN_OPTIONS="help=1"))
    assert "Available flags for ThreadSanitizer" in probe.stderr, probe.stderr[:500]
    monkeypatch.setenv("TSAN_OPTIONS", "halt_on_error=1:exitcode=66:second_deadlock_stack=1")
    p = start_provider(str(TSAN_BIN), SCENARIO, tmp_path, extra=("--threads", "4"))
    host, port = p.url.split("//")[1].split(":")
    until = time.monotonic() + SECONDS
    counts, seen, lock = [], [], threading.Lock()
    threads = [threading.Thread(target=worker, args=(host, int(port), until, i, counts, lock))
               for i in range(WORKERS)]
    threads.append(threading.Thread(target=admin, args=(p.url, until, seen)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    try:
        journal = p.journal(wait=False)
    except OSError:  # halted by a report: the stderr below says why
        journal = None
    code, stderr = p.stop()
    assert "ThreadSanitizer" not in stderr, stderr
    assert code == 0 and journal is not None, stderr
    assert len(counts) == WORKERS and sum(counts) > 0
    assert seen and set(seen) == {200}
    # every answered request (and every dropped one) was journaled, and the
    # load reached every route: streams, the stall, the delay, the drop
    assert journal["count"] >= sum(counts)
    assert {e["route"] for e in journal["entries"]} == {r["id"] for r in SCENARIO["routes"]}
