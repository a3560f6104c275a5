"""Connection faults on the wire, seen through a raw socket.

For each response fault (docs/scenario-format.md, "fault" and "hold"):
what a client reads (a clean end of file, a TCP reset, headers and a body
cut short), and what the journal records (fault, committed, delivered).
Loopback only; every read is bounded by a socket timeout, and timing is
asserted from the journal's own timestamps, never from sleeps.
"""
import http.client
import json
import socket

import pytest

from conftest import wait_for

KEY = "sk-test-faults"
TIMEOUT_S = 10
BODY = {"id": "rec-1", "note": "0123456789abcdefghijklmnopqrstuvwxyz"}
BODY_BYTES = json.dumps(BODY, separators=(",", ":")).encode()
# larger than the socket buffers: the cut comes after many writes
BIG = {"blob": "x" * 400_000}
BIG_BYTES = json.dumps(BIG, separators=(",", ":")).encode()


def route(rid, method, path, *responses, effect=True):
    r = {"id": rid, "method": method, "path": path, "responses": list(responses)}
    if effect:
        r["effect"] = "create"
    return r


ROUTES = [
    route("drop-before", "POST", "/v1/drop-before",
          {"status": 201, "body": BODY, "fault": "drop_before_commit"}),
    route("drop-after", "POST", "/v1/drop-after",
          {"status": 201, "body": BODY, "fault": "drop_after_commit"}),
    route("reset", "POST", "/v1/reset", {"status": 201, "body": BODY, "fault": "reset"}),
    route("partial", "POST", "/v1/partial",
          {"status": 201, "body": BODY, "fault": "partial_body", "fault_bytes": 10}),
    route("partial-half", "POST", "/v1/partial-half",
          {"status": 201, "body": BODY, "fault": "partial_body"}),
    route("partial-big", "POST", "/v1/partial-big",
          {"status": 201, "body": BIG, "fault": "partial_body", "fault_bytes": 300_001}),
    route("close-idle", "GET", "/v1/idle",
          {"status": 200, "body": BODY, "fault": "close_idle"}, effect=False),
    route("delay", "POST", "/v1/delay", {"status": 201, "body": BODY, "delay_ms": 300}),
    route("delay-drop", "POST", "/v1/delay-drop",
          {"status": 201, "body": BODY, "delay_ms": 300, "fault": "drop_after_commit"}),
    route("hold-drop", "POST", "/v1/hold-drop",
          {"status": 201, "body": BODY, "hold": True, "hold_ms": 400,
           "fault": "drop_after_commit"}),
    route("hold-answer", "POST", "/v1/hold-answer",
          {"status": 201, "body": BODY, "hold": True, "hold_ms": 400}),
    route("rate-limited-drop", "POST", "/v1/rate-limited-drop",
          {"status": 429, "retry_after": 30, "body": BODY, "fault": "drop_before_commit"}),
]

SCENARIO = {
    "id": "faults-e2e",
    "provider": {"keys": {"ops-1": {"secret": KEY, "user": "ops-team"}}},
    "routes": ROUTES,
}


def request_bytes(method, path, task, body=b"", close=False):
    head = (f"{method} {path}?fa_task={task} HTTP/1.1\r\nHost: fakeapi\r\n"
            f"Authorization: Bearer {KEY}\r\n")
    if close:
        head += "Connection: close\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


def connect(p):
    host, port = p.url[len("http://"):].split(":")
    return socket.create_connection((host, int(port)), timeout=TIMEOUT_S)


def read_to_end(sock):
    """Everything the server sends until it closes: ("eof", bytes) for a
    clean close, ("rst", bytes) for a reset."""
    got = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return "rst", got
        if not chunk:
            return "eof", got
        got += chunk


def exchange(p, method, path, task, body=b'{"client_reference": "ref-1"}'):
    """One request on a fresh connection (asking the server to close it
    after a whole answer); how the connection ended and every byte that
    came back."""
    with connect(p) as s:
        s.sendall(request_bytes(method, path, task, body, close=True))
        return read_to_end(s)


def read_response(sock):
    """One whole response from a keep-alive connection: (head, body)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before the headers: {buf!r}"
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    length = int(headers_of(head)[b"content-length"])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside the body"
        body += chunk
    return head, body


def headers_of(head):
    out = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        out[name.strip().lower()] = value.strip()
    return out


def entries(p, n):
    """The journal once it holds @n attempts (each is appended when its
    connection is done with it), keyed by task."""
    j = wait_for(lambda: (lambda j: j if j["count"] >= n else None)(p.journal(wait=False)))
    assert j["count"] == n, j
    return {e["task"]: e for e in j["entries"]}


@pytest.fixture
def p(provider):
    return provider(SCENARIO)


def test_drop_before_commit_is_a_clean_eof_and_commits_nothing(p):
    assert exchange(p, "POST", "/v1/drop-before", "db") == ("eof", b"")
    e = entries(p, 1)["db"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "drop_before_commit", False, "dropped", 0)
    assert e["t_response_us"] == -1
    assert e["client_reference"] == "ref-1"


def test_drop_after_commit_is_the_same_clean_eof_after_the_commit(p):
    assert exchange(p, "POST", "/v1/drop-after", "da") == ("eof", b"")
    e = entries(p, 1)["da"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "drop_after_commit", True, "dropped", 0)
    assert e["t_response_us"] == -1


def test_reset_is_a_tcp_rst_not_an_eof(p):
    assert exchange(p, "POST", "/v1/reset", "rs") == ("rst", b"")
    e = entries(p, 1)["rs"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "reset", True, "dropped", 0)


@pytest.mark.parametrize("path,whole,sent", [
    ("/v1/partial", BODY_BYTES, 10),
    ("/v1/partial-half", BODY_BYTES, len(BODY_BYTES) // 2),
    ("/v1/partial-big", BIG_BYTES, 300_001)], ids=["fixed", "half", "big"])
def test_partial_body_sends_the_headers_and_part_of_the_body(p, path, whole, sent):
    how, got = exchange(p, "POST", path, "pb")
    assert how == "eof"
    head, sep, body = got.partition(b"\r\n\r\n")
    assert sep, f"no complete header block: {got[:200]!r}"
    assert head.startswith(b"HTTP/1.1 201 "), head
    assert int(headers_of(head)[b"content-length"]) == len(whole)
    assert len(body) == sent and body == whole[:sent]
    e = entries(p, 1)["pb"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "partial_body", True, "dropped", 201)
    assert e["t_response_us"] >= e["t_arrival_us"]


def test_partial_body_is_an_incomplete_read_for_http_client(p):
    host, port = p.url[len("http://"):].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT_S)
    try:
        conn.request("POST", "/v1/partial?fa_task=hc", body=b"{}",
                     headers={"Authorization": f"Bearer {KEY}"})
        resp = conn.getresponse()
        assert resp.status == 201
        with pytest.raises(http.client.IncompleteRead) as err:
            resp.read()
        assert err.value.partial == BODY_BYTES[:10]
    finally:
        conn.close()
    entries(p, 1)


def test_close_idle_closes_a_reused_connection_only(p):
    with connect(p) as s:
        s.sendall(request_bytes("GET", "/v1/idle", "first"))
        head, body = read_response(s)
        assert head.startswith(b"HTTP/1.1 200 ") and body == BODY_BYTES
        s.sendall(request_bytes("GET", "/v1/idle", "reused"))
        assert read_to_end(s) == ("eof", b"")
    how, got = exchange(p, "GET", "/v1/idle", "fresh", body=b"")
    assert how == "eof" and got.startswith(b"HTTP/1.1 200 ") and got.endswith(BODY_BYTES)
    es = entries(p, 3)
    assert [(es[t]["fault"], es[t]["status"], es[t]["delivered"], es[t]["conn_reuse"])
            for t in ("first", "reused", "fresh")] == [
        ("respond", 200, "complete", 0),
        ("close_idle", 0, "dropped", 1),
        ("respond", 200, "complete", 0)]
    assert es["first"]["conn_id"] == es["reused"]["conn_id"] != es["fresh"]["conn_id"]
    assert not any(e["committed"] for e in es.values())


def test_delay_answers_after_the_commit(p):
    how, got = exchange(p, "POST", "/v1/delay", "dl")
    assert how == "eof"
    assert got.startswith(b"HTTP/1.1 201 ") and got.endswith(BODY_BYTES)
    e = entries(p, 1)["dl"]
    assert (e["fault"], e["committed"], e["delivered"]) == ("delay", True, "complete")
    assert e["t_response_us"] - e["t_arrival_us"] >= 300_000


@pytest.mark.parametrize("path,task", [("/v1/delay", "hc-delay"), ("/v1/hold-answer", "hc-hold")])
def test_half_closed_client_gets_no_answer_that_waits(p, path, task):
    """docs/internals.md: after a delay or hold the server reads the
    connection again before it answers, finds the FIN of shutdown(SHUT_WR)
    and closes: the attempt is kept, as committed and client_gone."""
    with connect(p) as s:
        s.sendall(request_bytes("POST", path, task, b'{"client_reference": "ref-1"}',
                                close=True))
        s.shutdown(socket.SHUT_WR)
        assert read_to_end(s) == ("eof", b"")
    e = entries(p, 1)[task]
    assert (e["status"], e["committed"], e["delivered"], e["t_response_us"]) == (
        0, True, "client_gone", -1)
    assert e["t_done_us"] - e["t_arrival_us"] >= 300_000


def test_delay_before_a_drop_delays_the_close(p):
    assert exchange(p, "POST", "/v1/delay-drop", "dd") == ("eof", b"")
    e = entries(p, 1)["dd"]
    assert (e["fault"], e["committed"], e["delivered"]) == ("drop_after_commit", True, "dropped")
    assert e["t_done_us"] - e["t_arrival_us"] >= 300_000


def test_hold_ms_expires_then_the_fault_applies(p):
    assert exchange(p, "POST", "/v1/hold-drop", "hd") == ("eof", b"")
    e = entries(p, 1)["hd"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "drop_after_commit", True, "dropped", 0)
    assert e["route"] == "hold-drop" and e["response_index"] == 0
    assert e["t_response_us"] == -1
    assert 400_000 <= e["t_done_us"] - e["t_arrival_us"] < TIMEOUT_S * 1_000_000


def test_hold_ms_expires_then_a_plain_answer_goes_out(p):
    how, got = exchange(p, "POST", "/v1/hold-answer", "ha")
    assert how == "eof"
    assert got.startswith(b"HTTP/1.1 201 ") and got.endswith(BODY_BYTES)
    e = entries(p, 1)["ha"]
    assert (e["fault"], e["committed"], e["delivered"], e["status"]) == (
        "respond", True, "complete", 201)
    assert e["t_response_us"] - e["t_arrival_us"] >= 400_000


def test_dropped_answer_announces_no_pause(p):
    assert exchange(p, "POST", "/v1/rate-limited-drop", "rl") == ("eof", b"")
    e = entries(p, 1)["rl"]
    assert (e["fault"], e["status"], e["retry_after"], e["pause_until_us"]) == (
        "drop_before_commit", 0, None, None)


def test_faults_on_a_route_without_effect_commit_nothing(provider):
    p = provider({**SCENARIO, "routes": [
        route("plain-drop", "GET", "/v1/plain", {"status": 200, "body": BODY,
                                                 "fault": "drop_after_commit"}, effect=False)]})
    assert exchange(p, "GET", "/v1/plain", "pl", body=b"") == ("eof", b"")
    e = entries(p, 1)["pl"]
    assert (e["fault"], e["committed"], e["delivered"]) == ("drop_after_commit", False, "dropped")


def test_the_store_holds_a_record_for_each_committing_fault_only(p):
    for path, ref in [("/v1/drop-before", "ref-db"), ("/v1/drop-after", "ref-da"),
                      ("/v1/reset", "ref-rs"), ("/v1/partial", "ref-pb")]:
        exchange(p, "POST", path, ref, body=json.dumps({"client_reference": ref}).encode())
    es = entries(p, 4)
    assert {t for t, e in es.items() if e["committed"]} == {"ref-da", "ref-rs", "ref-pb"}
    status, _, body = p.request("GET", "/_fakeapi/state")
    assert status == 200
    records = json.loads(body)["store"]["records"]
    assert sorted(r["client_reference"] for r in records) == ["ref-da", "ref-pb", "ref-rs"]
