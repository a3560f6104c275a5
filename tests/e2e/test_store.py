"""The store over HTTP: records, idempotency keys (payment and ietf
profiles), expiry, reconciliation reads, the admin state and the journal."""
import json
import threading
import time

from conftest import wait_for
from scenarios import key_table, provider_scenario

KEY = "sk-test-store-1"
AUTH = {"Authorization": f"Bearer {KEY}"}
KEYS = key_table(("ops-1", KEY, "ops-team"))


def scenario(responses=None, idempotency=None, reconciliation=None, route_extra=None,
             routes_after=()):
    """The store-e2e scenario: a create-payment route, then @routes_after."""
    route = {"id": "create-payment", "method": "POST", "path": "/v1/accounts/{account}/payments",
             "effect": "create",
             "responses": responses or [{"status": 201, "headers": {"Location": "/v1/x"},
                                         "body": {"id": "{provider_id}", "account": "{account}"}}]}
    route.update(route_extra or {})
    return provider_scenario("store-e2e", KEYS, [route, *routes_after],
                             idempotency=idempotency, reconciliation=reconciliation)


PAYMENT = {"profile": "payment", "retention_s": 3600}
PATH = "/v1/accounts/7/payments"


def post(p, body, key=None, task=None, **kw):
    headers = {}
    if key is not None:
        headers["Idempotency-Key"] = key
    path = PATH + (f"?fa_task={task}" if task else "")
    return p.request("POST", path, key=KEY, body=body, headers=headers, **kw)


def by_arrival(journal):
    return sorted(journal["entries"], key=lambda e: e["t_arrival_us"])


def state(p):
    status, _, body = p.request("GET", "/_fakeapi/state")
    assert status == 200, body
    return json.loads(body)


def test_writes_without_a_key_each_create_a_record(provider):
    p = provider(scenario(idempotency=PAYMENT))
    a = post(p, {"client_reference": "ref-1", "amount": 10})
    b = post(p, {"client_reference": "ref-1", "amount": 10})
    assert (a[0], json.loads(a[2])) == (201, {"id": "rec_1", "account": "7"})
    assert (b[0], json.loads(b[2])) == (201, {"id": "rec_2", "account": "7"})
    assert "idempotent-replayed" not in b[1]
    records = state(p)["store"]["records"]
    assert [(r["id"], r["client_reference"], r["idempotency_key"], r["status"], r["route"])
            for r in records] == [("rec_1", "ref-1", None, 201, "create-payment"),
                                  ("rec_2", "ref-1", None, 201, "create-payment")]
    assert records[0]["body"] == {"id": "rec_1", "account": "7"}
    entries = by_arrival(p.journal())
    assert [(e["fault"], e["committed"], e["client_reference"], e["idempotency_key"])
            for e in entries] == [("respond", True, "ref-1", None)] * 2


def test_same_key_same_body_replays_the_stored_answer(provider):
    p = provider(scenario(idempotency=PAYMENT, responses=[
        {"times": 1, "status": 201, "body": {"id": "{provider_id}"}},
        {"status": 202, "body": {"id": "{provider_id}", "second": True}}]))
    body = {"client_reference": "ref-1", "amount": 10}
    first = post(p, body, key="k-1", task="w1")
    again = post(p, body, key="k-1", task="w1")
    assert first[0] == 201 and json.loads(first[2]) == {"id": "rec_1"}
    assert again[0] == 201
    assert again[2] == first[2], "a replay sends the stored body byte for byte"
    assert again[1]["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first[1]
    # the replay moved no cursor: a new key gets the second entry
    other = post(p, body, key="k-2")
    assert other[0] == 202 and json.loads(other[2]) == {"id": "rec_2", "second": True}
    entries = by_arrival(p.journal())
    assert [(e["fault"], e["status"], e["committed"], e["response_index"], e["idempotency_key"])
            for e in entries] == [("respond", 201, True, 0, "k-1"),
                                  ("replay", 201, False, -1, "k-1"),
                                  ("respond", 202, True, 1, "k-2")]
    assert entries[1]["route"] == "create-payment"
    assert entries[1]["client_reference"] == "ref-1"
    assert entries[0]["body_sha256"] == entries[1]["body_sha256"]
    assert len(state(p)["store"]["records"]) == 2


def test_same_key_other_body_is_422_and_not_stored(provider):
    p = provider(scenario(idempotency=PAYMENT))
    assert post(p, {"client_reference": "ref-1", "amount": 10}, key="k-1")[0] == 201
    status, headers, body = post(p, {"client_reference": "ref-1", "amount": 11}, key="k-1")
    assert status == 422
    assert json.loads(body)["error"]["code"] == "idempotency_key_reused"
    assert "idempotent-replayed" not in headers
    # the refusal was not stored: the original body still replays
    again = post(p, {"client_reference": "ref-1", "amount": 10}, key="k-1")
    assert again[0] == 201 and again[1]["idempotent-replayed"] == "true"
    assert [(e["fault"], e["status"], e["committed"]) for e in by_arrival(p.journal())] == [
        ("respond", 201, True), ("idempotency_reused", 422, False), ("replay", 201, False)]
    assert len(state(p)["store"]["records"]) == 1


def test_same_key_while_in_flight_is_409(provider):
    p = provider(scenario(idempotency=PAYMENT, responses=[
        # 2 s in flight: time enough for the two conflicts on a loaded machine
        {"status": 201, "delay_ms": 2000, "body": {"id": "{provider_id}"}}]))
    body = {"client_reference": "ref-1", "amount": 10}
    first = {}

    def send_first():
        first["answer"] = post(p, body, key="k-1", task="slow")

    t = threading.Thread(target=send_first)
    t.start()
    try:
        fl = wait_for(lambda: state(p)["store"]["in_flight"])
        # a delayed answer commits before it waits
        assert fl[0]["idempotency_key"] == "k-1" and fl[0]["record"] == "rec_1"
        status, _, raw = post(p, body, key="k-1", task="eager")
        assert status == 409
        assert json.loads(raw)["error"]["code"] == "idempotency_in_flight"
        # another body is still "in flight", not "reused"
        assert post(p, {"client_reference": "ref-1", "amount": 99}, key="k-1")[0] == 409
    finally:
        t.join()
    assert first["answer"][0] == 201
    assert json.loads(first["answer"][2]) == {"id": "rec_1"}
    # a delayed write stays in flight until its connection is done with it,
    # which can be just after the client read the answer
    wait_for(lambda: not state(p)["store"]["in_flight"])
    replay = post(p, body, key="k-1")
    assert replay[0] == 201 and replay[2] == first["answer"][2]
    s = state(p)["store"]
    assert s["in_flight"] == [] and [k["idempotency_key"] for k in s["keys"]] == ["k-1"]
    assert len(s["records"]) == 1
    entries = by_arrival(p.journal())
    assert [(e["task"], e["fault"], e["status"], e["committed"]) for e in entries] == [
        ("slow", "delay", 201, True), ("eager", "idempotency_conflict", 409, False),
        (None, "idempotency_conflict", 409, False), (None, "replay", 201, False)]


def test_a_scripted_429_is_never_stored(provider):
    p = provider(scenario(idempotency=PAYMENT, responses=[
        {"times": 1, "status": 429, "retry_after": 0, "body": {"error": {"code": "rate_limit_exceeded"}}},
        {"status": 201, "body": {"id": "{provider_id}"}}]))
    body = {"client_reference": "ref-1"}
    assert post(p, body, key="k-1")[0] == 429
    retry = post(p, body, key="k-1")
    assert retry[0] == 201 and "idempotent-replayed" not in retry[1]
    assert [(e["fault"], e["committed"]) for e in by_arrival(p.journal())] == [
        ("respond", False), ("respond", True)]
    assert [r["id"] for r in state(p)["store"]["records"]] == ["rec_1"]


def test_keys_expire_after_retention(provider):
    # 2 s: the replay right after the first write comes well inside it even
    # on a loaded machine; the sleep starts after the replay, so the key has
    # expired by its end however late the requests were
    p = provider(scenario(idempotency={"profile": "payment", "retention_s": 2}))
    body = {"client_reference": "ref-1"}
    assert json.loads(post(p, body, key="k-1")[2]) == {"id": "rec_1", "account": "7"}
    assert post(p, body, key="k-1")[1].get("idempotent-replayed") == "true"
    time.sleep(2.2)
    assert state(p)["store"]["keys"] == []
    late = post(p, body, key="k-1")
    assert late[0] == 201 and "idempotent-replayed" not in late[1]
    assert json.loads(late[2])["id"] == "rec_2"
    assert [e["fault"] for e in by_arrival(p.journal())] == ["respond", "replay", "respond"]


def test_without_a_profile_the_key_is_recorded_and_ignored(provider):
    p = provider(scenario())
    body = {"client_reference": "ref-1"}
    assert json.loads(post(p, body, key="k-1")[2])["id"] == "rec_1"
    assert json.loads(post(p, body, key="k-1")[2])["id"] == "rec_2"
    s = state(p)["store"]
    assert s["profile"] == "none" and s["keys"] == [] and s["in_flight"] == []
    assert [r["idempotency_key"] for r in s["records"]] == ["k-1", "k-1"]
    assert [e["idempotency_key"] for e in by_arrival(p.journal())] == ["k-1", "k-1"]


def test_ietf_profile_requires_a_key_and_replays_without_the_header(provider):
    p = provider(scenario(idempotency={"profile": "ietf", "required": True}))
    body = {"client_reference": "ref-1"}
    status, _, raw = post(p, body)
    assert status == 400
    assert json.loads(raw)["error"]["code"] == "idempotency_key_missing"
    first = post(p, body, key="k-1")
    again = post(p, body, key="k-1")
    assert first[0] == again[0] == 201 and again[2] == first[2]
    assert "idempotent-replayed" not in again[1]
    assert post(p, {"client_reference": "ref-2"}, key="k-1")[0] == 422
    assert [(e["fault"], e["status"], e["committed"]) for e in by_arrival(p.journal())] == [
        ("idempotency_missing", 400, False), ("respond", 201, True),
        ("replay", 201, False), ("idempotency_reused", 422, False)]
    assert state(p)["store"]["profile"] == "ietf"
    assert len(state(p)["store"]["records"]) == 1


def test_reconciliation_reads_find_the_record(provider):
    p = provider(scenario(idempotency=PAYMENT))
    post(p, {"client_reference": "ref-1", "amount": 10}, key="k-1")
    cursor_before = state(p)["routes"]

    status, _, raw = p.request("GET", "/v1/records?client_reference=ref-1&fa_task=w1", key=KEY)
    assert status == 200
    records = json.loads(raw)["records"]
    assert [(r["id"], r["client_reference"], r["idempotency_key"], r["status"]) for r in records] == [
        ("rec_1", "ref-1", "k-1", 201)]
    assert records[0]["body"] == {"id": "rec_1", "account": "7"}
    status, _, raw = p.request("GET", "/v1/records?client_reference=ref-9", key=KEY)
    assert (status, json.loads(raw)) == (200, {"records": []})

    status, _, raw = p.request("GET", "/v1/operations/k-1", key=KEY)
    assert status == 200
    op = json.loads(raw)
    assert (op["idempotency_key"], op["status"], op["record"]["id"]) == ("k-1", "completed", "rec_1")
    status, _, raw = p.request("GET", "/v1/operations/k-9", key=KEY)
    assert status == 404
    assert json.loads(raw)["error"]["code"] == "operation_not_found"
    # authenticated like any other request
    assert p.request("GET", "/v1/operations/k-1")[0] == 401

    assert state(p)["routes"] == cursor_before, "a reconciliation read moved a cursor"
    entries = by_arrival(p.journal())[1:]
    assert [(e["route"], e["status"], e["fault"], e["client_reference"], e["response_index"])
            for e in entries] == [
        ("_reconcile_records", 200, "respond", "ref-1", -1),
        ("_reconcile_records", 200, "respond", "ref-9", -1),
        ("_reconcile_operation", 200, "respond", None, -1),
        ("_reconcile_operation", 404, "respond", None, -1),
        (None, 401, "unauthorized", None, -1)]
    assert entries[0]["task"] == "w1"
    assert not any(e["committed"] for e in entries)


def test_reconciliation_reads_switched_off_are_ordinary_requests(provider):
    ops_route = {"id": "ops", "method": "GET", "path": "/v1/operations/{key}",
                 "responses": [{"status": 410, "body": {"gone": "{key}"}}]}
    p = provider(scenario(idempotency=PAYMENT,
                          reconciliation={"by_client_reference": False, "by_operation": False},
                          routes_after=[ops_route]))
    post(p, {"client_reference": "ref-1"}, key="k-1")
    status, _, raw = p.request("GET", "/v1/records?client_reference=ref-1", key=KEY)
    assert status == 404 and json.loads(raw)["error"]["code"] == "not_found"
    status, _, raw = p.request("GET", "/v1/operations/k-1", key=KEY)
    assert (status, json.loads(raw)) == (410, {"gone": "k-1"})
    assert [(e["route"], e["fault"]) for e in by_arrival(p.journal())[1:]] == [
        (None, "no_route"), ("ops", "respond")]


def test_reconciliation_by_operation_alone(provider):
    p = provider(scenario(idempotency=PAYMENT, reconciliation={"by_client_reference": False}))
    post(p, {"client_reference": "ref-1"}, key="k-1")
    assert p.request("GET", "/v1/records?client_reference=ref-1", key=KEY)[0] == 404
    assert p.request("GET", "/v1/operations/k-1", key=KEY)[0] == 200


def test_client_reference_comes_from_the_named_field_of_a_json_body(provider):
    p = provider(scenario(route_extra={"client_reference_field": "merchant_ref"}))
    post(p, {"merchant_ref": "m-1", "client_reference": "ignored"})
    post(p, {"merchant_ref": 42})
    post(p, b"{not json")
    post(p, b'["merchant_ref"]')
    entries = by_arrival(p.journal())
    assert [e["client_reference"] for e in entries] == ["m-1", None, None, None]
    assert all(e["committed"] for e in entries), "the body's shape does not stop the write"
    assert [r["client_reference"] for r in state(p)["store"]["records"]] == ["m-1", None, None, None]


def test_state_shows_the_store_and_reset_clears_it(provider):
    p = provider(scenario(idempotency=PAYMENT))
    post(p, {"client_reference": "ref-1"}, key="k-1")
    s = state(p)["store"]
    assert (s["profile"], s["retention_s"]) == ("payment", 3600)
    assert [r["id"] for r in s["records"]] == ["rec_1"]
    k = s["keys"][0]
    assert (k["idempotency_key"], k["record"]) == ("k-1", "rec_1")
    assert k["expires_us"] - k["completed_us"] == 3600 * 1_000_000
    assert s["in_flight"] == []
    assert p.request("POST", "/_fakeapi/reset")[0] == 200
    s = state(p)["store"]
    assert (s["records"], s["keys"], s["in_flight"]) == ([], [], [])
    # the key is forgotten, and provider ids are never handed out twice
    again = post(p, {"client_reference": "ref-1"}, key="k-1")
    assert again[0] == 201 and "idempotent-replayed" not in again[1]
    assert json.loads(again[2])["id"] == "rec_2"


def test_keys_outside_printable_ascii_are_refused_not_folded_together(provider):
    import socket
    p = provider(scenario(idempotency=PAYMENT))
    host, port = p.url[len("http://"):].split(":")
    statuses = []
    for key in (b"key-\xff", b"key-\xfe", b"key-\xef\xbf\xbd", b"k" * 256):
        body = b'{"client_reference": "A"}'
        req = (b"POST " + PATH.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               b"Authorization: Bearer " + KEY.encode() + b"\r\nIdempotency-Key: " + key +
               b"\r\nContent-Type: application/json\r\nContent-Length: " +
               str(len(body)).encode() + b"\r\n\r\n" + body)
        with socket.create_connection((host, int(port))) as s:
            s.sendall(req)
            got = b""
            while chunk := s.recv(4096):
                got += chunk
        statuses.append(int(got.split(b" ", 2)[1]))
        assert b"idempotency_key_invalid" in got
    p.sent += 4
    assert statuses == [400, 400, 400, 400]
    assert state(p)["store"]["records"] == []
    assert {e["fault"] for e in p.journal()["entries"]} == {"idempotency_invalid"}
    # a printable key of 255 characters is fine
    assert post(p, {"client_reference": "A"}, key="k" * 255)[0] == 201
