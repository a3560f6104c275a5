"""The provider over HTTP: scripted sequences, keys, pauses, delays, journal."""
import email.utils
import json
import os
import socket
import subprocess
import time

import pytest
from functools import partial

from conftest import wait_for
from scenarios import key_table, provider_scenario

KEY = "sk-test-ops-1"
KEYS = key_table(("ops-1", KEY, "ops-team"), ("ops-2", "sk-test-ops-2", "ops-team"),
                 ("other", "sk-test-other", "other-team"))


def by_arrival(journal):
    """Entries in arrival order: seq is completion order, which a request
    that finished later than the next one arrived can reorder."""
    return sorted(journal["entries"], key=lambda e: e["t_arrival_us"])


# scenario(routes, **provider_extra): the provider-e2e scenario of KEYS.
scenario = partial(provider_scenario, "provider-e2e", KEYS)


RECORDS = {"id": "read-record", "method": "GET", "path": "/v1/records/{id}",
           "responses": [{"times": 2, "status": 429, "retry_after": 1,
                          "body": {"error": {"code": "rate_limit_exceeded"}}},
                         {"status": 200, "body": {"id": "{id}"}}]}


def test_scripted_sequence_is_played_in_order_and_journaled(provider):
    p = provider(scenario([RECORDS]))
    got = [p.request("GET", "/v1/records/42?fa_task=t1", key=KEY) for _ in range(4)]
    assert [g[0] for g in got] == [429, 429, 200, 200]
    assert got[0][1]["retry-after"] == "1"
    assert json.loads(got[2][2]) == {"id": "42"}
    p.request("GET", "/_fakeapi/health")
    j = p.journal()
    assert j["count"] == 4, "admin traffic must not be journaled"
    entries = by_arrival(j)
    assert sorted(e["seq"] for e in entries) == [1, 2, 3, 4]
    assert [e["status"] for e in entries] == [429, 429, 200, 200]
    assert {e["task"] for e in entries} == {"t1"}
    assert {e["key"] for e in entries} == {"ops-1"}
    assert all(KEY not in json.dumps(e) for e in entries), "the secret leaked into the journal"
    assert entries[0]["scope"] == "user:ops-team"
    assert entries[0]["route"] == "read-record" and entries[0]["response_index"] == 0
    assert entries[2]["response_index"] == 1
    e = entries[0]
    assert e["retry_after"] == "1"
    # 1 s from the decision, which lies between arrival and response
    assert e["t_arrival_us"] + 1_000_000 <= e["pause_until_us"] <= e["t_response_us"] + 1_000_000
    assert e["t_arrival_us"] <= e["t_response_us"] <= e["t_done_us"]
    assert e["delivered"] == "complete"


def test_missing_or_unknown_key_is_401_and_moves_no_cursor(provider):
    p = provider(scenario([RECORDS]))
    assert p.request("GET", "/v1/records/1")[0] == 401
    assert p.request("GET", "/v1/records/1", key="sk-wrong")[0] == 401
    assert p.request("GET", "/v1/records/1", headers={"X-Api-Key": KEY})[0] == 429
    entries = by_arrival(p.journal())
    assert [(e["status"], e["key"], e["fault"]) for e in entries] == [
        (401, None, "unauthorized"), (401, None, "unauthorized"), (429, "ops-1", "respond")]


def test_task_attribution_by_query_or_header(provider):
    p = provider(scenario([RECORDS]))
    p.request("GET", "/v1/records/1?fa_task=a", key=KEY)
    p.request("GET", "/v1/records/1", key=KEY, headers={"X-Fakeapi-Task": "b"})
    p.request("GET", "/v1/records/1", key=KEY)
    assert [e["task"] for e in by_arrival(p.journal())] == ["a", "b", None]


def test_param_is_json_escaped_inside_strings(provider):
    p = provider(scenario([{"id": "r", "method": "GET", "path": "/v1/records/{id}",
                            "responses": [{"status": 200, "body": {"id": "{id}", "n": 1}}]}]))
    status, _, body = p.request("GET", "/v1/records/a%22b%5Cc", key=KEY)
    assert status == 200
    assert json.loads(body) == {"id": 'a"b\\c', "n": 1}


def test_scope_cursor_gives_each_scope_its_own_sequence(provider):
    route = dict(RECORDS, cursor="scope")
    route["responses"] = [{"status": 429, "retry_after": 1}, {"status": 200}]
    p = provider(scenario([route]))
    assert p.request("GET", "/v1/records/1", key=KEY)[0] == 429
    assert p.request("GET", "/v1/records/1", key="sk-test-other")[0] == 429
    assert p.request("GET", "/v1/records/1", key="sk-test-ops-2")[0] == 200


def test_during_pause_answers_429_with_the_rest_of_the_pause(provider):
    route = dict(RECORDS)
    route["responses"] = [{"status": 429, "retry_after": 2}, {"status": 200}]
    p = provider(scenario([route], during_pause={"status": 429, "body": {"error": {"code": "rate_limit_exceeded"}}}))
    assert p.request("GET", "/v1/records/1", key=KEY)[0] == 429
    status, headers, _ = p.request("GET", "/v1/records/1", key="sk-test-ops-2")
    assert status == 429 and headers["retry-after"] in ("1", "2")
    # another account is not paused
    assert p.request("GET", "/v1/records/1", key="sk-test-other")[0] == 200
    entries = by_arrival(p.journal())
    assert entries[1]["fault"] == "during_pause" and entries[1]["route"] is None
    # the during-pause answer does not extend the pause announced first
    assert entries[1]["pause_until_us"] >= entries[0]["pause_until_us"] - 1
    state = json.loads(p.request("GET", "/_fakeapi/state")[2])
    scope = [s for s in state["scopes"] if s["scope"] == "user:ops-team"][0]
    assert scope["pause_until_us"] == entries[0]["pause_until_us"]


def test_http_date_is_ceil_now_plus_n_and_graded_on_the_instant_it_names(provider):
    route = dict(RECORDS)
    route["responses"] = [{"status": 429, "retry_after": {"seconds": 3, "form": "imf-fixdate"}}]
    p = provider(scenario([route]))
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert status == 429
    named = email.utils.parsedate_to_datetime(headers["retry-after"]).timestamp()
    e = p.journal()["entries"][0]
    from datetime import datetime
    wall_arrival = datetime.fromisoformat(e["wall"]).timestamp()
    wall_sent = wall_arrival + (e["t_response_us"] - e["t_arrival_us"]) / 1e6
    # named at least 3 s after the decision (after the arrival), at most 4 s
    # after it (before the response was stamped)
    assert 3.0 <= named - wall_arrival and named - wall_sent <= 4.05
    assert headers["retry-after"].endswith(" GMT")
    # the pause lasts until the named instant, never shorter than 3 s
    assert e["pause_until_us"] - e["t_arrival_us"] >= 3_000_000
    assert e["pause_until_us"] - e["t_response_us"] <= 4_000_000


def test_literal_retry_after_header_is_sent_verbatim(provider):
    route = dict(RECORDS)
    route["responses"] = [{"status": 503, "headers": {"Retry-After": "soon"}}]
    p = provider(scenario([route]))
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert status == 503 and headers["retry-after"] == "soon"
    e = p.journal()["entries"][0]
    assert e["retry_after"] == "soon" and e["pause_until_us"] is None


def test_delay_does_not_block_other_requests(provider):
    p = provider(scenario([
        {"id": "slow", "method": "GET", "path": "/slow", "responses": [{"status": 200, "delay_ms": 1500}]},
        {"id": "fast", "method": "GET", "path": "/fast", "responses": [{"status": 200}]}]))
    import threading
    t = threading.Thread(target=p.request, args=("GET", "/slow"), kwargs={"key": KEY})
    t.start()
    wait_for(lambda: json.loads(p.request("GET", "/_fakeapi/state")[2])["scopes"])
    for _ in range(5):
        assert p.request("GET", "/fast", key=KEY)[0] == 200
    t.join()
    entries = by_arrival(p.journal())
    slow = [e for e in entries if e["route"] == "slow"][0]
    fast = [e for e in entries if e["route"] == "fast"]
    assert len(fast) == 5
    assert slow["fault"] == "delay"
    assert slow["t_response_us"] - slow["t_arrival_us"] >= 1_500_000
    # the first fast request, sent as soon as the slow one was in, was
    # answered while the slow one waited (the later ones only show that the
    # server kept answering: a loaded machine may send them late)
    assert fast[0]["t_done_us"] < slow["t_response_us"], "a delay blocked a server thread"


def test_no_route_is_404_and_journaled(provider):
    p = provider(scenario([RECORDS]))
    assert p.request("POST", "/v1/records/1", key=KEY, body={})[0] == 404
    assert p.journal()["entries"][0]["fault"] == "no_route"


def test_body_too_large_is_413(provider):
    p = provider(scenario([{"id": "w", "method": "POST", "path": "/v1/records", "responses": [{"status": 201}]}]))
    status, _, _ = p.request("POST", "/v1/records", key=KEY, body=b"x" * (1024 * 1024 + 10))
    assert status == 413
    assert p.journal()["entries"][0]["fault"] == "too_large"


def test_body_sha256_and_attempt_headers_are_recorded(provider):
    import hashlib
    p = provider(scenario([{"id": "w", "method": "POST", "path": "/v1/records", "responses": [{"status": 201}]}]))
    body = b'{"amount": 10}'
    p.request("POST", "/v1/records", key=KEY, body=body,
              headers={"Idempotency-Key": "k-1", "x-stainless-retry-count": "2",
                       "amz-sdk-request": "attempt=2; max=3"})
    e = p.journal()["entries"][0]
    assert e["body_sha256"] == hashlib.sha256(body).hexdigest()
    assert e["idempotency_key"] == "k-1"
    assert e["attempt_headers"]["x-stainless-retry-count"] == "2"
    assert e["attempt_headers"]["amz-sdk-request"] == "attempt=2; max=3"
    assert e["attempt_headers"]["grpc-previous-rpc-attempts"] is None


def test_keep_alive_connection_reuse_is_recorded(provider):
    p = provider(scenario([RECORDS]))
    host, port = p.url[len("http://"):].split(":")
    with socket.create_connection((host, int(port))) as s:
        for _ in range(3):
            s.sendall(f"GET /v1/records/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n\r\n".encode())
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += s.recv(4096)
            head, rest = buf.split(b"\r\n\r\n", 1)
            length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
            while len(rest) < length:
                rest += s.recv(4096)
    entries = wait_for(lambda: p.journal()["entries"] if p.journal()["count"] == 3 else None)
    assert len({e["conn_id"] for e in entries}) == 1
    assert sorted(e["conn_reuse"] for e in entries) == [0, 1, 2]


def test_garbage_and_half_requests_never_crash_the_server(provider):
    p = provider(scenario([RECORDS]))
    host, port = p.url[len("http://"):].split(":")
    for junk in [b"\x00\xff garbage\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET /v1/records/1 HTTP/1.1\r\nHost: x\r\n",
                 b"POST /v1/records/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"]:
        with socket.create_connection((host, int(port))) as s:
            s.sendall(junk)
            s.settimeout(0.5)
            try:
                s.recv(4096)
            except socket.timeout:
                pass
    assert p.request("GET", "/_fakeapi/health")[0] == 200
    # the half-sent POST reached the handler: it is journaled, not lost
    entries = wait_for(lambda: p.journal()["entries"] or None)
    assert any(e["fault"] == "incomplete_request" for e in entries)


def test_admin_endpoints(provider):
    p = provider(scenario([RECORDS]))
    p.request("GET", "/v1/records/1", key=KEY)
    assert json.loads(p.request("GET", "/_fakeapi/health")[2])["status"] == "ok"
    assert p.request("GET", "/_fakeapi/journal?since=abc")[0] == 400
    assert p.journal(since=1)["count"] == 0
    assert p.request("GET", "/_fakeapi/nope")[0] == 404
    assert p.request("GET", "/_fakeapi/reset")[0] == 405
    assert p.request("POST", "/_fakeapi/reset")[0] == 200
    assert p.journal()["count"] == 0
    # the cursor rewound: the first answer again
    assert p.request("GET", "/v1/records/1", key=KEY)[0] == 429
    assert p.journal()["entries"][0]["seq"] == 2, "seq keeps counting across a reset"


def test_journal_file_chain_verifies_and_detects_a_removed_line(provider, fakeapi_bin, tmp_path):
    p = provider(scenario([RECORDS]))
    for _ in range(4):
        p.request("GET", "/v1/records/1", key=KEY)
    code, err = p.stop()
    assert code == 0, err
    out = subprocess.run([fakeapi_bin, "verify-journal", str(p.journal_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok 4 lines head ")
    lines = p.journal_path.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    bad = subprocess.run([fakeapi_bin, "verify-journal", str(cut)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert f"{cut}:2:" in bad.stderr


def test_journal_to_stdout_follows_the_listening_line(fakeapi_bin, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario([RECORDS])))
    proc = subprocess.Popen([fakeapi_bin, "--scenario", str(path), "--journal", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.readline().decode()
        assert first.startswith("listening http://127.0.0.1:")
        import urllib.request
        req = urllib.request.Request(first.split()[1] + "/v1/records/1", headers={"Authorization": f"Bearer {KEY}"})
        try:
            urllib.request.urlopen(req, timeout=5)
        except Exception:
            pass
        line = json.loads(proc.stdout.readline())
        assert line["seq"] == 1 and line["status"] == 429 and line["prev"] == "0" * 64
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0


def test_bad_scenario_exits_2_naming_the_file(fakeapi_bin, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"id": "x",\n  "routes": [}')
    out = subprocess.run([fakeapi_bin, "--scenario", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.startswith(f"fakeapi: {path}:2:")


def test_a_suite_given_as_the_scenario_is_named_a_suite(fakeapi_bin, repo_root):
    # the file is fine; the program is the wrong one for it
    suite = "scenarios/five-step-fast/suite.json"
    out = subprocess.run([fakeapi_bin, "--scenario", suite], capture_output=True, text=True,
                         cwd=repo_root, stdin=subprocess.DEVNULL, timeout=30)
    assert out.returncode == 2
    assert out.stderr == (f"fakeapi: {suite}: a suite (it lists scenarios): give one of its "
                          f"scenario files, or run the suite with fakeapi-harness run {suite}\n")
    assert out.stdout == ""


def test_a_fifo_as_the_scenario_is_refused_at_once(fakeapi_bin, tmp_path):
    # nobody writes to it: reading it would wait for ever
    fifo = tmp_path / "scenario.json"
    os.mkfifo(fifo)
    out = subprocess.run([fakeapi_bin, "--scenario", str(fifo)], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=30)
    assert out.returncode == 2
    assert out.stderr == f"fakeapi: {fifo}: not a regular file\n"


def test_a_schema_member_at_the_top_is_ignored(provider, tmp_path):
    doc = {"$schema": "https://example.invalid/scenario.schema.json", **scenario([RECORDS])}
    path = tmp_path / "with-schema.json"
    path.write_text(json.dumps(doc))
    p = provider(path)
    assert p.url.startswith("http://")


def test_provider_leaves_expect_to_the_harness(provider, repo_root):
    # an unknown check id is the harness's error: the provider serves the file
    p = provider(repo_root / "tests" / "data" / "bad" / "unknown-check.json")
    assert p.url.startswith("http://")


def test_usage_errors_exit_2(fakeapi_bin):
    assert subprocess.run([fakeapi_bin], capture_output=True).returncode == 2
    assert subprocess.run([fakeapi_bin, "--port", "70000", "--scenario", "x"], capture_output=True).returncode == 2
    h = subprocess.run([fakeapi_bin, "--help"], capture_output=True, text=True)
    assert h.returncode == 0 and "--scenario" in h.stdout


def test_a_cut_last_line_is_reported_as_a_cut_tail(provider, fakeapi_bin, harness_bin, tmp_path):
    """A provider killed mid-write leaves a last line without its newline:
    verify-journal checks the lines before it and says where the cut is
    (exit 3), import-journal imports the complete lines and warns."""
    p = provider(scenario([RECORDS]))
    for _ in range(4):
        p.request("GET", "/v1/records/1", key=KEY)
    code, err = p.stop()
    assert code == 0, err
    whole = p.journal_path.read_bytes()
    lines = whole.splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:3]) + lines[3][:40])
    three = tmp_path / "three.jsonl"
    three.write_bytes(b"".join(lines[:3]))
    want = subprocess.run([fakeapi_bin, "verify-journal", str(three)], capture_output=True,
                          text=True)
    assert want.returncode == 0 and want.stdout.startswith("ok 3 lines head ")
    r = subprocess.run([fakeapi_bin, "verify-journal", str(cut)], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert r.stdout == want.stdout.replace("ok 3", "cut 3")
    assert r.stderr == (f"fakeapi: {cut}:4: the last line is cut short (40 bytes, no newline): "
                        "the provider stopped in the middle of a write; the 3 lines before "
                        "it verify\n")
    # a broken line before the end is still a break, not a cut tail
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(lines[0] + lines[1][:40] + b"\n" + b"".join(lines[2:]))
    r = subprocess.run([fakeapi_bin, "verify-journal", str(broken)], capture_output=True,
                       text=True)
    assert r.returncode == 1 and f"{broken}:2: not valid JSON" in r.stderr
    r = subprocess.run([harness_bin, "import-journal", "-o", str(tmp_path / "s.json"), str(cut)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (f"{cut}:4: the last line is cut short (40 bytes, no newline), as a provider "
            "stopped mid-write leaves it: the 3 complete lines are imported") in r.stderr
    assert "3 attempts" in json.loads((tmp_path / "s.json").read_text())["comment"]


def test_a_full_disk_stops_admission_and_keeps_the_file_verifiable(fakeapi_bin, tmp_path):
    """The journal file on a 64 KiB tmpfs: once a write fails the provider
    refuses with 503 journal_unavailable, health says degraded, the file
    is cut back to its last whole line and verifies, the journal endpoint
    still has every attempt, and the exit status says the file is short."""
    from conftest import start_provider
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    p = None
    try:
        p = start_provider(fakeapi_bin, scenario([RECORDS]), small)
        statuses = []
        for _ in range(200):
            status, _, body = p.request("GET", "/v1/records/1", key=KEY)
            statuses.append(status)
            if status == 503:
                assert json.loads(body)["error"]["code"] == "journal_unavailable"
        first_503 = statuses.index(503)
        assert first_503 > 10, statuses[:20]  # the file took some lines first
        assert set(statuses[first_503:]) == {503}, "no answer as if recorded once it failed"
        status, _, body = p.request("GET", "/_fakeapi/health")
        health = json.loads(body)
        assert health["status"] == "degraded"
        assert health["journal_file"]["error"] == "No space left on device"
        in_file = health["journal_file"]["last_seq"]
        assert health["journal_file"]["missing"] == 200 - in_file
        j = p.journal()
        assert j["count"] == 200 and [e["seq"] for e in j["entries"]] == list(range(1, 201))
        assert [e["fault"] for e in j["entries"][first_503:]] == ["journal_unavailable"] * (
            200 - first_503)
        code, err = p.stop()
        assert code == 1, err
        assert (f"fakeapi: {p.journal_path}: {200 - in_file} attempts are missing from the "
                "journal file (a write failed: No space left on device); it ends at seq "
                f"{in_file} and verifies up to there") in err
        assert err.count("event=file_failed") == 1, "one error line, not one per attempt"
        r = subprocess.run([fakeapi_bin, "verify-journal", str(p.journal_path)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"ok {in_file} lines head ")
        assert p.journal_path.read_bytes().endswith(b"\n")
    finally:
        if p is not None:
            p.stop()  # a failed assertion must not leave it holding the mount
        subprocess.run(["umount", str(small)], capture_output=True)


def test_the_admin_api_is_guarded_against_other_hosts_origins_and_form_posts(provider):
    """On loopback: a Host that names no loopback address is refused (DNS
    rebinding), so is a cross-origin request and a state-changing call
    that is not a JSON POST; every refusal has the API's error shape."""
    p = provider(scenario([RECORDS]))
    port = p.url.rsplit(":", 1)[1]

    def err(status_headers_body):
        status, _, body = status_headers_body
        return status, json.loads(body)["error"]["code"]

    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "127.8.9.10", f"[::1]:{port}",
                 "api.localhost"):
        assert p.request("GET", "/_fakeapi/health", headers={"Host": host})[0] == 200, host
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "[::2]"):
        assert err(p.request("GET", "/_fakeapi/journal", headers={"Host": host})) == (
            403, "host_not_loopback"), host
    assert err(p.request("GET", "/_fakeapi/state",
                         headers={"Origin": "http://evil.example"})) == (403, "cross_origin")
    assert p.request("GET", "/_fakeapi/state",
                     headers={"Origin": f"http://127.0.0.1:{port}"})[0] == 200
    assert err(p.request("GET", "/_fakeapi/state",
                         headers={"Sec-Fetch-Site": "cross-site"})) == (403, "cross_origin")
    # the CSRF case: a page may POST text/plain anywhere without asking
    assert err(p.request("POST", "/_fakeapi/reset", body=b"x",
                         headers={"Content-Type": "text/plain"})) == (415, "json_required")
    assert err(p.request("POST", "/_fakeapi/reset", body=b"[1]")) == (415, "json_required")
    assert p.request("POST", "/_fakeapi/reset", body=b"{}")[0] == 200
    assert err(p.request("GET", "/_fakeapi/nope")) == (404, "unknown_endpoint")
    assert err(p.request("GET", "/_fakeapi/reset")) == (405, "method_not_allowed")
    assert err(p.request("GET", "/_fakeapi/journal?since=x")) == (400, "bad_since")
    # the API itself is not the admin API's: any Host reaches the routes
    assert p.request("GET", "/v1/records/1", key=KEY, headers={"Host": "api.example"})[0] in (
        200, 429, 503)


def test_binding_beyond_loopback_needs_an_admin_token(provider, fakeapi_bin, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario([RECORDS])))
    r = subprocess.run([fakeapi_bin, "--scenario", str(path), "--bind", "0.0.0.0"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert r.stderr == ("fakeapi: --bind 0.0.0.0 would open the admin API (/_fakeapi/reset, "
                        "/_fakeapi/journal, ...) to the network: give --admin-token TOKEN or "
                        "set FAKEAPI_ADMIN_TOKEN (see fakeapi --help)\n")
    p = provider(scenario([RECORDS]), extra=("--bind", "0.0.0.0", "--admin-token", "s3cret"))
    p.url = p.url.replace("0.0.0.0", "127.0.0.1")
    status, headers, body = p.request("GET", "/_fakeapi/journal")
    assert status == 401 and json.loads(body)["error"]["code"] == "admin_token_required"
    assert headers["www-authenticate"] == 'Bearer realm="fakeapi admin"'
    assert p.request("GET", "/_fakeapi/journal", headers={"Authorization": "Bearer s3cre"})[0] \
        == 401
    assert p.request("GET", "/_fakeapi/health", headers={"Authorization": "Bearer s3cret"})[0] \
        == 200
    # with a token the Host is not checked: the token is the guard
    assert p.request("GET", "/_fakeapi/health", headers={
        "Authorization": "Bearer s3cret", "Host": "fakeapi.internal"})[0] == 200
    assert p.request("GET", "/v1/records/1", key=KEY)[0] in (200, 429, 503)


def raw_exchange(url, data, timeout=3):
    """Send @data on a new connection; the status line read back ("" when
    the connection closed without one)."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        try:
            while b"\r\n" not in got:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
        except socket.timeout:
            pass
    return got.split(b"\r\n")[0].decode()


def test_framing_and_targets_rfc_9112_calls_malformed_get_400_and_are_journaled(provider):
    """Two different Content-Length values, Content-Length with chunked,
    HTTP/1.1 without Host, %00 or a dot segment in the path, and the admin
    prefix in percent-encoding: 400 bad_request, journaled as
    malformed_request. An absolute-form target routes by its path; headers
    past the connection's pool get libmicrohttpd's 431 and are journaled."""
    p = provider(scenario([RECORDS]))
    auth = f"Authorization: Bearer {KEY}\r\n".encode()
    host = b"Host: 127.0.0.1\r\n"
    bad = {
        "two CL": b"POST /v1/records/1 HTTP/1.1\r\n" + host + auth +
                  b"Content-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
        "CL and TE": b"POST /v1/records/1 HTTP/1.1\r\n" + host + auth +
                     b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "no Host": b"GET /v1/records/1 HTTP/1.1\r\n" + auth + b"\r\n",
        "%00": b"GET /v1/records/1%00x HTTP/1.1\r\n" + host + auth + b"\r\n",
        "dot": b"GET /v1/x/../records/1 HTTP/1.1\r\n" + host + auth + b"\r\n",
        "%5F": b"GET /%5Ffakeapi/health HTTP/1.1\r\nHost: localhost\r\n\r\n",
    }
    for what, data in bad.items():
        assert raw_exchange(p.url, data) == "HTTP/1.1 400 Bad Request", what
    assert raw_exchange(p.url, b"GET /v1/records/1 HTTP/1.0\r\n" + auth + b"\r\n") \
        .split()[1] != "400"
    absolute = (f"GET {p.url}/v1/records/1 HTTP/1.1\r\n".encode() + host + auth + b"\r\n")
    assert raw_exchange(p.url, absolute).split()[1] != "400"
    big = b"GET /v1/records/1 HTTP/1.1\r\n" + host + auth + b"X-Big: " + b"a" * 70000 + b"\r\n\r\n"
    assert raw_exchange(p.url, big) == "HTTP/1.1 431 Request Header Fields Too Large"
    wait_for(lambda: p.journal(wait=False)["count"] >= 9)
    # seq counts completions; the order sent is the order of arrival
    entries = sorted(p.journal(wait=False)["entries"], key=lambda e: e["t_arrival_us"])
    assert [e["fault"] for e in entries[:6]] == ["malformed_request"] * 6
    assert all(e["status"] == 400 and e["route"] is None for e in entries[:6])
    assert entries[5]["path"] == "/_fakeapi/health"  # decoded, and no admin answer
    assert entries[7]["path"] == "/v1/records/1" and entries[7]["route"] == RECORDS["id"]
    assert (entries[8]["path"], entries[8]["status"], entries[8]["fault"]) == (
        "/v1/records/1", 0, "incomplete_request")
