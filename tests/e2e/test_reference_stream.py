"""The reference client's streams and pace, driven directly over stdio.

The client (build/clients/<variant>) is started by hand with the
environment docs/client-protocol.md gives it, fed task lines with the
`stream`, `tokens` and `pacing` fields, and its JSON lines are read back;
what reached the provider is read from the provider's journal
(GET /_fakeapi/journal). The LLM rate-limit guide: once a stream's first token has come,
no silent retry; RPM and TPM kept by token buckets per key. Timing
facts come from the journal's arrival times, never from a sleep here.
"""
import http.server
import json
import os
import queue
import socketserver
import subprocess
import threading
import time
import uuid

import pytest

from conftest import BUILD, wait_for
from scenarios import key_table, provider_scenario

KEY_ID = "app-1"
SECRET = "sk-stream-app-1"
REPLY = "One two three four five six."
CHAT_BODY = {"model": "fake-model-1", "stream": True,
             "messages": [{"role": "user", "content": "hi"}]}


class Client:
    """A reference client process: task lines in, JSON lines out."""

    def __init__(self, variant, url, tmp_path, env=None):
        path = BUILD / "clients" / variant
        assert path.exists(), f"{path} missing: run `make asan`"
        state = tmp_path / f"state-{variant}-{uuid.uuid4().hex[:6]}"
        state.mkdir()
        full = {k: v for k, v in os.environ.items() if not k.startswith("FAKEAPI_")}
        full.update({"FAKEAPI_URL": url, "FAKEAPI_KEY": SECRET,
                     "FAKEAPI_KEY_APP_1": SECRET, "CLIENT_STATE_DIR": str(state),
                     "FAKEAPI_CLIENT_NONCE": uuid.uuid4().hex, "FAKEAPI_SEED": "7"})
        full.update(env or {})
        self.proc = subprocess.Popen([str(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=full, text=True)
        self.lines = []
        self.q = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        hello = self.next_line()
        assert hello["type"] == "hello" and hello["protocol"] == 1, hello

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def next_line(self, timeout=20):
        msg = self.q.get(timeout=timeout)
        assert msg is not None, "the client closed its output"
        self.lines.append(msg)
        return msg

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def result(self, task, timeout=20):
        """Read lines until @task's result; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.lines:
                if m["type"] == "result" and m["task"] == task:
                    return m
            self.next_line(max(0.1, deadline - time.monotonic()))

    def of(self, task, kind=None):
        return [m for m in self.lines if m.get("task") == task and kind in (None, m["type"])]

    def close(self):
        """Shutdown; the client must exit 0 (the sanitizer build fails
        otherwise) and report nothing after its results."""
        self.send({"type": "shutdown"})
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the client did not exit within 20 s of shutdown")
        self.reader.join(5)
        while True:
            m = self.q.get_nowait() if not self.q.empty() else None
            if m is None:
                break
            self.lines.append(m)
        err = self.proc.stderr.read()
        assert code == 0, f"client exited {code}: {err}"
        return err


def task(url, tid, *, stream=True, body=CHAT_BODY, tokens=None, pacing=None, cls="read",
         budget=None, deadline_ms=30000, method="POST", path="/v1/chat/completions"):
    return {"type": "task", "id": tid, "class": cls, "method": method,
            "url": f"{url}{path}?fa_task={tid}", "headers": {},
            "body": json.dumps(body) if body is not None else None, "goal": None,
            "key": KEY_ID, "key_env": "FAKEAPI_KEY_APP_1", "scope": f"key:{KEY_ID}",
            "budget": budget or {"max_attempts": 3, "max_wait_s": 20},
            "deadline_ms": deadline_ms, "stream": stream, "tokens": tokens, "pacing": pacing}


def chat_scenario(sid, responses):
    """One chat route replying REPLY through @responses."""
    return provider_scenario(sid, key_table((KEY_ID, SECRET, "app-team")),
                             [{"id": "chat", "kind": "chat_completions", "method": "POST",
                               "path": "/v1/chat/completions", "reply": REPLY,
                               "responses": responses}])


def attempts(p, n=None, timeout=10):
    """The journal's attempts (not admin traffic), once there are @n."""
    def get():
        entries = p.journal(wait=False)["entries"]
        return entries if n is None or len(entries) >= n else None
    return wait_for(get, timeout) if n is not None else get()


# ---- streams ---------------------------------------------------------------

def test_whole_stream_succeeds_with_one_attempt(provider, tmp_path):
    p = provider(chat_scenario("stream-ok", [{"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    assert (r["outcome"], r["attempts"], r["sent"], r["status"]) == ("succeeded", 1, "yes", 200)
    assert c.of("t1", "stream_interrupted") == []
    (ar,) = c.of("t1", "action_result")
    assert ar["status"] == 200 and ar["error"] is None
    assert len(attempts(p, 1)) == 1


def test_error_frame_before_any_token_is_retried_after_its_retry_after(provider, tmp_path):
    # the platform's rate-limit contract: in a stream the pause comes in the
    # error frame's retryAfter
    p = provider(chat_scenario("stream-err0", [
        {"shape": "ai_congested", "retry_after_s": 1, "error_after_chunks": 0},
        {"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    assert (r["outcome"], r["attempts"], r["status"]) == ("succeeded", 2, 200)
    assert c.of("t1", "stream_interrupted") == []
    first = c.of("t1", "action_result")[0]
    assert first["status"] == 200 and first["retry_after"] == "1", first
    (sched,) = c.of("t1", "retry_scheduled")
    assert sched["reason"] == "retry_after" and sched["due_in_ms"] >= 900, sched
    a1, a2 = sorted(attempts(p, 2), key=lambda e: e["t_arrival_us"])
    assert a1["pause_until_us"] is not None
    assert a2["t_arrival_us"] >= a1["pause_until_us"], (a1, a2)


def test_error_frame_after_tokens_is_reported_and_never_retried(provider, tmp_path):
    p = provider(chat_scenario("stream-err2", [
        {"shape": "pool_exhausted", "error_after_chunks": 2}, {"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    (si,) = c.of("t1", "stream_interrupted")
    assert si == {"type": "stream_interrupted", "task": "t1", "attempt": 1, "chunks": 2,
                  "reason": "error_frame", "error_code": "pool_exhausted"}
    kinds = [m["type"] for m in c.of("t1")]
    assert kinds == ["action_sent", "action_result", "stream_interrupted", "result"], kinds
    assert (r["outcome"], r["attempts"], r["sent"], r["status"]) == ("failed", 1, "yes", 200)
    assert len(attempts(p)) == 1


def test_silentretry_variant_retries_the_broken_stream_unreported(provider, tmp_path):
    p = provider(chat_scenario("stream-err2-silent", [
        {"shape": "pool_exhausted", "error_after_chunks": 2}, {"status": 200}]))
    c = Client("silentretry", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    assert c.of("t1", "stream_interrupted") == []
    assert (r["outcome"], r["attempts"]) == ("succeeded", 2)
    assert len(attempts(p, 2)) == 2


def test_stream_cut_after_tokens_is_reported_as_cut(provider, tmp_path):
    p = provider(chat_scenario("stream-cut2", [{"status": 200, "stop_after_chunks": 2},
                                               {"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    (si,) = c.of("t1", "stream_interrupted")
    assert (si["attempt"], si["chunks"], si["reason"], si["error_code"]) == (1, 2, "cut", None)
    (ar,) = c.of("t1", "action_result")
    assert ar["status"] == 200 and ar["error"], ar
    assert (r["outcome"], r["attempts"], r["sent"], r["status"]) == ("failed", 1, "yes", 200)
    assert len(attempts(p)) == 1


def test_stream_cut_before_any_token_is_retried_like_a_transport_error(provider, tmp_path):
    p = provider(chat_scenario("stream-cut0", [{"status": 200, "stop_after_chunks": 0},
                                               {"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1"))
    r = c.result("t1")
    c.close()
    assert c.of("t1", "stream_interrupted") == []
    assert (r["outcome"], r["attempts"], r["status"]) == ("succeeded", 2, 200)
    assert c.of("t1", "retry_scheduled")[0]["reason"] == "backoff"
    assert len(attempts(p, 2)) == 2


class StallingHandler(http.server.BaseHTTPRequestHandler):
    """Two content chunks, then silence until the client leaves."""
    protocol_version = "HTTP/1.1"
    hits = 0

    def do_POST(self):
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for word in ("Hello", " there"):
            frame = {"choices": [{"index": 0, "delta": {"content": word}}]}
            self.wfile.write(f"data: {json.dumps(frame)}\n\n".encode())
            self.wfile.flush()
        self.rfile.read(1)  # returns when the client closes

    def log_message(self, *args):
        pass


class OddFramesHandler(http.server.BaseHTTPRequestHandler):
    """A whole stream in SSE's other spellings: CRLF and CR line ends, a
    comment, an event field, a frame split across writes, an empty
    content and a role-only delta (neither counts), then an error frame
    with a fractional retryAfter and [DONE]."""
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = lambda text: json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})
        parts = [": keep-alive\r\n\r\n",
                 "event: message\r\ndata: " + json.dumps({"choices": [{"delta": {"role": "assistant"}}]}) + "\r\n\r\n",
                 "data: " + chunk("") + "\n\n",
                 "data: " + chunk("Hel")[:20], chunk("Hel")[20:] + "\r\r",
                 "data:" + chunk("lo") + "\n\n",
                 "data: " + json.dumps({"error": {"code": "ai_congested", "retryAfter": 0.4}}) + "\n\n",
                 "data: " + chunk("late") + "\n\n",
                 "data: [DONE]\n\n"]
        for part in parts:
            self.wfile.write(part.encode())
            self.wfile.flush()
            time.sleep(0.02)

    def log_message(self, *args):
        pass


def serve(handler):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def test_sse_reader_counts_only_content_chunks_in_any_spelling(tmp_path):
    server, url = serve(OddFramesHandler)
    try:
        c = Client("reference", url, tmp_path)
        c.send(task(url, "t1"))
        r = c.result("t1")
        c.close()
    finally:
        server.shutdown()
        server.server_close()
    (si,) = c.of("t1", "stream_interrupted")
    assert (si["chunks"], si["reason"], si["error_code"]) == (2, "error_frame", "ai_congested"), si
    (ar,) = c.of("t1", "action_result")
    assert ar["retry_after"] == "1", ar  # 0.4 s, rounded up: never shorter than asked
    assert r["outcome"] == "failed", r


def test_stream_silent_past_the_idle_timeout_is_reported_as_stall(tmp_path):
    server, url = serve(StallingHandler)
    try:
        c = Client("reference", url, tmp_path, env={"FAKEAPI_STREAM_IDLE_S": "1"})
        started = time.monotonic()
        c.send(task(url, "t1"))
        r = c.result("t1")
        took = time.monotonic() - started
        c.close()
    finally:
        server.shutdown()
        server.server_close()
    (si,) = c.of("t1", "stream_interrupted")
    assert (si["chunks"], si["reason"]) == (2, "stall"), si
    assert (r["outcome"], r["attempts"], r["status"]) == ("failed", 1, 200)
    assert StallingHandler.hits == 1
    assert took < 4, took  # the 1 s idle timeout, not the attempt's 30 s
    (ar,) = c.of("t1", "action_result")
    assert ar["status"] == 200 and "idle timeout" in ar["error"], ar


# ---- pacing ----------------------------------------------------------------

def arrivals(p, n):
    return sorted(e["t_arrival_us"] / 1e6 for e in attempts(p, n))


# How late the first attempt may reach the provider after the client took
# its tokens, s. The client's buckets start full no later than that take,
# the bounds below (and replay's bucket) at the first arrival: a first
# arrival held this long on a loaded host makes every later one look this
# much early. Every later arrival's own lateness is given back by the
# next gap (the client's bucket refills on its clock), so the bounds are
# taken from the first arrival, never between neighbours.
FIRST_LATE_S = 0.15


def replay(times, capacity, per_s, cost=1.0):
    """Replay arrival times through a bucket full at the first one; the
    deepest deficit, in units (above 0, give or take the clocks' slack,
    means the pace was exceeded)."""
    level, last, worst = capacity, times[0], 0.0
    for t in times:
        level = min(capacity, level + (t - last) * per_s)
        last = t
        level -= cost
        worst = min(worst, level)
    return -worst


def send_six(p, c, pacing, tokens=None):
    for i in range(6):
        c.send(task(p.url, f"t{i}", pacing=pacing, tokens=tokens))
    rs = [c.result(f"t{i}") for i in range(6)]
    assert all(r["outcome"] == "succeeded" for r in rs), rs
    return arrivals(p, 6)


def test_rpm_pacing_spaces_attempts_by_the_refill_time(provider, tmp_path):
    p = provider(chat_scenario("pace-rpm", [{"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    ts = send_six(p, c, {"rpm": 3, "tpm": None, "period_s": 2})
    c.close()
    rel = [t - ts[0] for t in ts]
    # three at once: the bucket starts full (one that started empty would
    # hold the second 0.67 s)
    assert rel[2] < 0.6, rel
    for k in (3, 4, 5):  # then one per 2/3 s (2% slower, by design)
        # a late first arrival shifts every bound by at most FIRST_LATE_S;
        # refilling twice as fast would send the 4th at 0.33 s, waiting out
        # the whole 2 s period would send it at 2 s
        assert (k - 2) * 2 / 3 - FIRST_LATE_S <= rel[k] <= (k - 2) * 0.68 + 1.0, rel
    # the deficit a late first arrival can show (4 at once would be 1)
    assert replay(ts, 3, 1.5) <= 1.5 * FIRST_LATE_S, rel


def test_nopace_variant_sends_all_six_at_once(provider, tmp_path):
    p = provider(chat_scenario("pace-nopace", [{"status": 200}]))
    c = Client("nopace", p.url, tmp_path)
    ts = send_six(p, c, {"rpm": 3, "tpm": None, "period_s": 2})
    c.close()
    # a pacing client sends the 6th 2 s after the first (less that one's lateness)
    assert ts[-1] - ts[0] < 2.0 - FIRST_LATE_S, ts
    assert replay(ts, 3, 1.5) >= 1, ts


def test_tpm_pacing_counts_each_task_s_tokens(provider, tmp_path):
    # 100 tokens per 2 s, 40 each: two at once, then one per 0.8 s
    p = provider(chat_scenario("pace-tpm", [{"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    ts = send_six(p, c, {"rpm": None, "tpm": 100, "period_s": 2}, tokens=40)
    c.close()
    rel = [t - ts[0] for t in ts]
    # two at once (a bucket that started empty would hold the second
    # 0.8 s); the third waits for 20 tokens, each later one for 40; all
    # from the first arrival (see FIRST_LATE_S): the gap between
    # neighbours shrinks by whatever lateness the earlier one had
    assert rel[1] < 0.6, rel
    for k in (2, 3, 4, 5):
        assert rel[k] >= 0.4 + (k - 2) * 0.8 - FIRST_LATE_S, rel
    assert rel[5] <= 0.41 + 3 * 0.82 + 1.0, rel
    # the deficit a late first arrival can show (3 at once would be 20)
    assert replay(ts, 100, 50, cost=40) <= 50 * FIRST_LATE_S, rel


def test_cost_above_the_token_limit_escalates_without_sending(provider, tmp_path):
    p = provider(chat_scenario("pace-over", [{"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    c.send(task(p.url, "t1", tokens=150, pacing={"rpm": 10, "tpm": 100, "period_s": 60}))
    r = c.result("t1")
    c.close()
    (esc,) = c.of("t1", "escalation")
    assert esc["record"]["reason"] == "over_token_limit", esc
    assert esc["record"]["attempts"] == [] and esc["record"]["sent"] == "no"
    assert (r["outcome"], r["attempts"], r["sent"]) == ("escalated", 0, "no")
    assert c.of("t1", "action_sent") == []
    assert attempts(p) == []


def test_waiting_for_the_pace_ends_at_a_cancel_and_at_the_deadline(provider, tmp_path):
    p = provider(chat_scenario("pace-cancel", [{"status": 200}]))
    c = Client("reference", p.url, tmp_path)
    slow = {"rpm": 1, "tpm": None, "period_s": 60}
    c.send(task(p.url, "t1", pacing=slow))
    assert c.result("t1")["outcome"] == "succeeded"
    c.send(task(p.url, "t2", pacing=slow, deadline_ms=120000))
    c.send(task(p.url, "t3", pacing=slow, deadline_ms=1500))
    started = time.monotonic()
    r3 = c.result("t3")  # 40 s away from room: it does not start that wait
    c.send({"type": "cancel", "id": "t2"})
    r2 = c.result("t2")
    took = time.monotonic() - started
    c.close()
    assert r2["outcome"] == "cancelled" and r2["attempts"] == 0, r2
    assert r3["outcome"] == "escalated" and r3["attempts"] == 0, r3
    assert c.of("t3", "escalation")[0]["record"]["reason"] == "deadline"
    assert took < 5, took
    assert len(attempts(p)) == 1


# ---- fixed one-second retries ------------------------------------------------

def test_fixeddelay_variant_retries_after_one_second_whatever_retry_after_says(provider,
                                                                               tmp_path):
    scenario = {"id": "fixed-delay",
                "provider": {"keys": {KEY_ID: {"secret": SECRET, "user": "app-team"}}},
                "routes": [{"id": "read", "method": "GET", "path": "/v1/records/{id}",
                            "responses": [{"times": 1, "status": 429, "retry_after": 3},
                                          {"status": 200, "body": {"id": "{id}"}}]}]}
    p = provider(scenario)
    c = Client("fixeddelay", p.url, tmp_path)
    c.send(task(p.url, "t1", stream=False, body=None, method="GET", path="/v1/records/1"))
    r = c.result("t1")
    c.close()
    assert (r["outcome"], r["attempts"]) == ("succeeded", 2), r
    a1, a2 = sorted(attempts(p, 2), key=lambda e: e["t_arrival_us"])
    gap = (a2["t_arrival_us"] - a1["t_arrival_us"]) / 1e6
    # the second comes after one second, not after the Retry-After: inside
    # the 3 s pause (no upper bound on the gap: a late retry is lateness)
    assert gap >= 0.95, gap
    assert a2["t_arrival_us"] < a1["pause_until_us"]
