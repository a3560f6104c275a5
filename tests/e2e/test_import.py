"""import-har, import-journal and replay (docs/import.md).

The HAR fixture (tests/data/har/capture.har) and the bad files beside it
are made by hand: example.test hosts, no real person, no real secret. The
journal is recorded here, by running fakeapi on a small scenario and
sending it a fixed sequence of requests.
"""
import http.client
import json
import os
import subprocess

import pytest

from conftest import REPO, start_provider

HAR = REPO / "tests" / "data" / "har"
JOURNAL = REPO / "tests" / "data" / "journal"
BAD = sorted((HAR / "bad").glob("*.har"))
KEY = "sk-imported-placeholder"


def harness(harness_bin, *args, timeout=120):
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return subprocess.run([harness_bin, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def errors(stderr):
    """stderr without its warning lines."""
    return "".join(l + "\n" for l in stderr.splitlines() if ": warning: " not in l)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_a_bad_har_gives_its_exact_message(harness_bin, path):
    r = harness(harness_bin, "import-har", str(path.relative_to(REPO)))
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert errors(r.stderr) == path.with_suffix(".err").read_text()


def test_a_har_becomes_a_scenario_that_fakeapi_serves(harness_bin, provider, tmp_path):
    out = tmp_path / "capture.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(HAR / "capture.har"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    # the two bodies that are not JSON are named, by entry
    assert "$.log.entries[2].response.content.text: the body is not JSON" in r.stderr
    assert "$.log.entries[6].response.content.text: the body is not JSON" in r.stderr
    sc = json.loads(out.read_text())
    assert sc["id"] == "capture"
    assert sc["comment"].startswith(
        "imported from capture.har (7 entries, 4 routes, 4 tasks) by fakeapi-harness import-har")
    text = out.read_text()
    for secret in ("sk-not-a-real-secret", "sid=fake", "tok-fake-1", "tok-fake-2"):
        assert secret not in text
    routes = {r["id"]: r for r in sc["routes"]}
    assert routes["get-v1-records-id"]["path"] == "/v1/records/{id}"
    assert [x.get("times", 1) for x in routes["post-v1-orders"]["responses"]] == [2, 1]
    assert routes["get-v1-users-id-avatar"]["path"] == "/v1/users/{id}/avatar"
    assert [e["at_ms"] for e in sc["harness"]["events"]] == [0, 250, 600, 1700]

    p = provider(out)
    status, headers, body = p.request("GET", "/v1/records/42?full=1", key=KEY)
    assert (status, headers["retry-after"]) == (429, "1")
    assert "set-cookie" not in headers
    assert json.loads(body) == {"error": {"code": "rate_limit_exceeded", "retryAfter": 1}}
    status, _, body = p.request("GET", "/v1/records/7", key=KEY)
    assert (status, json.loads(body)) == (200, {"id": "42", "access_token": "redacted"})
    statuses = [p.request("POST", "/v1/orders", key=KEY, body={"item": "book-7"})[0]
                for _ in range(4)]
    assert statuses == [503, 503, 201, 201]


def test_host_and_path_filters_and_stdout(harness_bin):
    r = harness(harness_bin, "import-har", "--host", "api.example.test", "--path-prefix",
                "/v1/orders", "--id", "orders-only", "--no-harness", str(HAR / "capture.har"))
    assert r.returncode == 0, r.stderr
    sc = json.loads(r.stdout)
    assert sc["id"] == "orders-only"
    assert [x["id"] for x in sc["routes"]] == ["post-v1-orders"]
    assert "harness" not in sc
    r = harness(harness_bin, "import-har", "--host", "nowhere.example.test",
                str(HAR / "capture.har"))
    assert r.returncode == 2
    assert errors(r.stderr).endswith(
        "capture.har: $.log.entries: no entry to import (7 read, 7 left out by --host, "
        "--path-prefix or their scheme, 0 without a final response, 0 with a path no route "
        "can answer)\n")


def test_replay_of_an_imported_har_grades_the_reference_client(harness_bin, tmp_path):
    out = tmp_path / "capture.json"
    report = tmp_path / "report.json"
    r = harness(harness_bin, "import-har", "--host", "api.example.test", "-o", str(out),
                str(HAR / "capture.har"))
    assert r.returncode == 0, r.stderr
    r = harness(harness_bin, "replay", str(out), "--seed", "1", "--report-json", str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "scenario capture" in r.stdout
    rep = json.loads(report.read_text())
    verdicts = {c["id"]: c["verdict"] for c in rep["scenarios"][0]["checks"]}
    assert verdicts["wait.retry_after"] == "pass"


SECRET = "SECRETZZ9"


def har_entry(method, url, status=200, headers=(), body=None, req_body=None, t=0):
    entry = {
        "startedDateTime": f"2026-03-01T10:00:{t:02d}.000Z",
        "request": {"method": method, "url": url, "headers": []},
        "response": {"status": status,
                     "headers": [{"name": n, "value": v} for n, v in headers]
                     + [{"name": "Content-Type", "value": "application/json"}],
                     "content": {"mimeType": "application/json",
                                 "text": json.dumps(body if body is not None else {"ok": True})}},
        "timings": {"wait": 1}}
    if req_body is not None:
        entry["request"]["postData"] = {"mimeType": "application/json",
                                        "text": json.dumps(req_body)}
    return entry


def write_har(path, entries):
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))


def raw_headers(p, path):
    """(status, [(name lower-cased, value)...] as sent, in order) of GET @path."""
    host, port = p.url.split("//", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {KEY}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status, [(n.lower(), v) for n, v in resp.getheaders()]
    finally:
        conn.close()


def test_import_har_keeps_repeated_headers_and_fakeapi_sends_each(harness_bin, provider,
                                                                     tmp_path):
    har = tmp_path / "repeat.har"
    write_har(har, [har_entry("GET", "https://api.example.test/v1/a", headers=[
        ("Vary", "Accept"), ("Link", "<https://api.example.test/v1/a?p=2>; rel=next"),
        ("vary", "Origin"), ("Retry-After", "5"), ("Retry-After", "7"),
        ("Link", "<https://api.example.test/v1/a?p=9>; rel=last"), ("Vary", "Cookie")])])
    out = tmp_path / "repeat.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(har))
    assert r.returncode == 0, r.stderr
    assert ("$.log.entries[0].response.headers[4]: a second Retry-After left out (it has "
            "one value, RFC 9110 §10.2.3)") in r.stderr
    sc = json.loads(out.read_text())
    assert sc["routes"][0]["responses"][0]["headers"] == {
        "Vary": ["Accept", "Origin", "Cookie"],
        "Link": ["<https://api.example.test/v1/a?p=2>; rel=next",
                 "<https://api.example.test/v1/a?p=9>; rel=last"],
        "Retry-After": "5",
        "Content-Type": "application/json"}
    status, headers = raw_headers(provider(out), "/v1/a")
    assert status == 200
    assert [v for n, v in headers if n == "vary"] == ["Accept", "Origin", "Cookie"]
    assert [v for n, v in headers if n == "link"] == [
        "<https://api.example.test/v1/a?p=2>; rel=next",
        "<https://api.example.test/v1/a?p=9>; rel=last"]
    assert [v for n, v in headers if n == "retry-after"] == ["5"]


def test_import_har_writes_no_credential_anywhere(harness_bin, tmp_path):
    api = "https://api.example.test"
    har = tmp_path / "secrets.har"
    write_har(har, [
        har_entry("GET", f"{api}/v1/a?api_key={SECRET}&x=1&access_token={SECRET}&key={SECRET}"
                  f"&sig={SECRET}&code={SECRET}&session={SECRET}&pwd={SECRET}#t={SECRET}",
                  headers=[("WWW-Authenticate", f"Bearer realm={SECRET}"),
                           ("Authentication", SECRET), ("X-Auth", SECRET),
                           ("X-Session", SECRET), ("X-Amz-Security-Token", SECRET),
                           ("X-Goog-Api-Key", SECRET), ("Private-Token", SECRET),
                           ("Location", f"https://u:{SECRET}@x.example.test/?code={SECRET}")]),
        har_entry("POST", f"https://u:{SECRET}@api.example.test/login",
                  req_body={"password": SECRET, "nested": {"list": [{"refresh_token": SECRET}]},
                            "token": 987654321, "max_tokens": 5},
                  body={"Authorization": f"Bearer {SECRET}", "bearer": SECRET, "key": SECRET,
                        "credentials": {"value": SECRET}, "id_token": [SECRET],
                        "error": {"code": "expired"}}, t=1),
    ])
    out = tmp_path / "secrets.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(har))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    for secret in (SECRET, "987654321"):
        assert secret not in text
        assert secret not in r.stderr
    assert ("secrets.har: $.log.entries[0].request.url: the value of query parameters "
            "api_key, access_token, key, sig, code, session, pwd redacted (a credential's "
            "name)") in r.stderr
    sc = json.loads(text)
    assert "credential-like query parameter values redacted" in sc["comment"]
    tasks = sc["harness"]["tasks"]
    assert tasks[0]["path"] == ("/v1/a?api_key=redacted&x=1&access_token=redacted&key=redacted"
                                "&sig=redacted&code=redacted&session=redacted&pwd=redacted")
    assert tasks[1]["body"]["max_tokens"] == 5
    assert sc["routes"][0]["responses"][0]["headers"] == {
        "Location": "https://x.example.test/?code=redacted",
        "Content-Type": "application/json"}
    assert sc["routes"][1]["responses"][0]["body"]["error"] == {"code": "expired"}



JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I6DjWpaOX2fk0")


def test_import_har_redacts_credentials_by_their_shape(harness_bin, provider, tmp_path):
    har = tmp_path / "shaped.har"
    uuid = "550e8400-e29b-41d4-a716-446655440000"
    write_har(har, [
        har_entry("GET", "https://api.example.test/v1/keys/sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                  body={"note": f"token {JWT} issued", "id": uuid}),
        har_entry("GET", "https://api.example.test/v1/cart;jsessionid=0AB1C2D3E4F5/items"
                  "?x=AKIAIOSFODNN7EXAMPLE", t=1,
                  headers=[("Location", "https://x.example.test/u/AKIAIOSFODNN7EXAMPLE")]),
        har_entry("GET", "https://api.example.test/v1/keys/sk_live_9zzC39HqLyjWDarjtT1zdpQQ",
                  t=2)])
    out = tmp_path / "shaped.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(har))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    for secret in ("sk_live_", "AKIAIOSFODNN7EXAMPLE", "0AB1C2D3E4F5", JWT[:20]):
        assert secret not in text and secret not in r.stderr, secret
    sc = json.loads(text)
    assert sc["comment"].endswith("; redacted: 2 path segments, 1 matrix parameter, "
                                  "1 query value, 1 header value, 1 value in bodies")
    routes = {x["id"]: x for x in sc["routes"]}
    assert routes["get-v1-cart-jsessionid-redacted-items"]["path"] == \
        "/v1/cart;jsessionid=redacted/items"
    assert routes["get-v1-keys-id"]["responses"][0]["body"] == {
        "note": "token redacted issued", "id": uuid}
    paths = [t["path"] for t in sc["harness"]["tasks"]]
    assert paths[1] == "/v1/cart;jsessionid=redacted/items?x=redacted"
    # one placeholder per secret: the two keys stay two tasks
    assert paths[0].startswith("/v1/keys/redacted-") and paths[2].startswith("/v1/keys/redacted-")
    assert paths[0] != paths[2]
    p = provider(out)
    assert p.request("GET", paths[1], key=KEY)[0] == 200
    assert p.request("GET", paths[0], key=KEY)[0] == 200


def test_import_har_keeps_ordinary_members_and_words_decide(harness_bin, tmp_path):
    """Credential names are judged on their words: author, tokenizer,
    token_budget, a logprobs token stay; tokenString, jwt, sid, a
    name/value pair, a Bearer in text and a form string do not."""
    api = "https://api.example.test"
    s = "SECRETQQ7"
    legit = {"author": "Jane Austen", "authority": "x", "authored_at": "2020",
             "oauth_provider": "github", "tokenizer": "cl100k", "token_budget": 500,
             "session_count": 3, "pagination_token": "p2", "max_tokens": 100,
             "keys": ["name", "age"], "sort_key": "ts", "code": "E42"}
    answer = {"author": {"name": "Jane"}, "usage": {"total_tokens": 7},
              "logprobs": {"content": [{"token": "Hello", "logprob": -0.1}]}}
    secrets = {"tokenString": s, "refresh_tokens": [s], "access_tokens": s, "Tokens": s,
               "TOKENS": s, "jwt": s, "passphrase": s, "client_assertion": s, "sid": s,
               "otp": s, "pin": s, "hmac": s, "nonce": s, "keys": [s], "x": {"privateKey": s},
               "headers": [{"name": "Authorization", "value": "Bearer " + s}],
               "message": "Authorization: Bearer " + s, "note": "sent Bearer " + s,
               "form": "user=a&password=" + s}
    har = tmp_path / "words.har"
    write_har(har, [
        har_entry("POST", f"{api}/v1/chat/completions", req_body=legit, body=answer),
        har_entry("POST", f"{api}/v1/sec", req_body=secrets, body=secrets, t=1),
        har_entry("GET", f"{api}/v1/q?sid={s}&jwt={s}&tokens={s}&max_tokens=9",
                  headers=[("X-Access-Tokens", s), ("X-Jwt", s),
                           ("X-RateLimit-Remaining-Tokens", "900"),
                           ("Link", f"<{api}/v1/q?page=2>; rel=next; token={s}")], t=2),
    ])
    out = tmp_path / "words.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(har))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert s not in text
    assert s not in r.stderr
    sc = json.loads(text)
    tasks = sc["harness"]["tasks"]
    assert tasks[0]["body"] == legit
    assert sc["routes"][0]["responses"][0]["body"] == answer
    sec = tasks[1]["body"]
    for name in ("tokenString", "refresh_tokens", "jwt", "sid", "pin"):
        assert sec[name] == "redacted", name
    assert sec["keys"] == ["redacted"]
    assert sec["headers"] == [{"name": "Authorization", "value": "redacted"}]
    assert sec["message"] == "Authorization: redacted"
    assert sec["note"] == "sent Bearer redacted"
    assert sec["form"] == "user=a&password=redacted"
    assert tasks[2]["path"] == "/v1/q?sid=redacted&jwt=redacted&tokens=redacted&max_tokens=9"
    hdrs = sc["routes"][2]["responses"][0]["headers"]
    assert "X-Access-Tokens" not in hdrs and "X-Jwt" not in hdrs
    assert hdrs["X-RateLimit-Remaining-Tokens"] == "900"

def test_odd_paths_replay_without_a_404_no_route(harness_bin, tmp_path):
    """%2F, %3F, blanks, a bad escape and dot segments are routed as the
    provider decodes them; a %00 or an encoded dot segment is skipped."""
    api = "https://api.example.test"
    urls = ["/v1/files/a%2Fb", "/v1/q/a%3Fb", "/v1/s/a%20b", "/v1/p/100%25", "/v1/z/a%zz",
            "/v1/../../etc/passwd", "/v1/./x/.", "/_fakeapi/../v1/y", "/v1/caf%C3%A9/7",
            "/v1/n/a%00b", "/v1/%2e%2e/w"]
    har = tmp_path / "paths.har"
    write_har(har, [har_entry("GET", api + u, t=i) for i, u in enumerate(urls)])
    out = tmp_path / "paths.json"
    r = harness(harness_bin, "import-har", "-o", str(out), str(har))
    assert r.returncode == 0, r.stderr
    warnings = [l for l in r.stderr.splitlines() if ": warning: " in l]
    assert sum("skipped" in w for w in warnings) == 2
    assert any("entries[9].request.url: the path holds a %00" in w for w in warnings)
    assert any("entries[10].request.url: the path holds a \".\" or \"..\"" in w
               for w in warnings)
    assert any("/v1/../../etc/passwd is sent as /etc/passwd" in w for w in warnings)
    sc = json.loads(out.read_text())
    assert len(sc["harness"]["tasks"]) == 9
    journals = tmp_path / "journals"
    r = harness(harness_bin, "replay", str(out), "--seed", "1", "--journal-dir", str(journals))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(l) for l in (journals / "paths.jsonl").read_text().splitlines()]
    assert len(lines) == 9
    assert [a for a in lines if a["fault"] == "no_route" or a["status"] == 404] == []
    assert {a["route"] for a in lines} == {x["id"] for x in sc["routes"]}


def test_replay_takes_a_suite_too(harness_bin, tmp_path):
    """replay is run with the file required: a suite runs as run runs it."""
    out = tmp_path / "capture.json"
    r = harness(harness_bin, "import-har", "--host", "api.example.test", "-o", str(out),
                str(HAR / "capture.har"))
    assert r.returncode == 0, r.stderr
    (tmp_path / "suite.json").write_text(json.dumps(
        {"id": "incidents", "version": "1", "scenarios": ["capture.json"]}))
    r = harness(harness_bin, "replay", str(tmp_path / "suite.json"), "--seed", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "suite incidents (version 1), 1 scenario" in r.stderr
    assert "scenario capture" in r.stdout


def test_import_journal_names_a_status_no_answer_has(harness_bin, tmp_path):
    lines = (JOURNAL / "recorded.jsonl").read_text().splitlines()[:3]
    bad = json.loads(lines[1])
    bad["status"] = 999
    lines[1] = json.dumps(bad, separators=(",", ":"))
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = harness(harness_bin, "import-journal", str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    assert errors(r.stderr) == (f"fakeapi-harness import-journal: {path}:2: $.status: "
                                "expected integer 100..599, got 999\n")


def test_import_journal_names_a_retry_after_that_is_not_utf8(harness_bin, tmp_path):
    lines = (JOURNAL / "recorded.jsonl").read_bytes().splitlines()[:2]
    assert b'"retry_after":"1"' in lines[0]
    lines[0] = lines[0].replace(b'"retry_after":"1"', b'"retry_after":"1\xff"')
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    r = harness(harness_bin, "import-journal", str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    assert errors(r.stderr) == (f"fakeapi-harness import-journal: {path}:1: $.retry_after: "
                                "expected UTF-8 text, got a string that is not UTF-8\n")


def test_import_journal_renames_key_ids_that_share_a_variable(harness_bin, tmp_path):
    first = json.loads((JOURNAL / "recorded.jsonl").read_text().splitlines()[0])
    lines = []
    for i, key in enumerate(["ops.2", "ops-2", "oPs-2"]):
        line = dict(first, seq=i + 1, key=key, task=f"k{i + 1}", t_arrival_us=1000 * (i + 1))
        lines.append(json.dumps(line, separators=(",", ":")))
    path = tmp_path / "keys.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "keys.json"
    r = harness(harness_bin, "import-journal", "-o", str(out), str(path))
    assert r.returncode == 0, r.stderr
    sc = json.loads(out.read_text())
    assert list(sc["provider"]["keys"]) == ["ops.2", "ops-2-2", "oPs-2-3"]
    assert [t["key"] for t in sc["harness"]["tasks"]] == ["ops.2", "ops-2-2", "oPs-2-3"]
    assert sc["comment"].endswith("; key ids that name one FAKEAPI_KEY_<ID> variable "
                                  "renamed: ops-2 as ops-2-2, oPs-2 as oPs-2-3")
    assert (f"fakeapi-harness import-journal: warning: {path}:3: $.key: key id \"oPs-2\" "
            "is imported as \"oPs-2-3\"") in r.stderr


def test_replay_needs_its_scenario(harness_bin):
    r = harness(harness_bin, "replay", "--seed", "1")
    assert r.returncode == 2
    assert r.stderr == ("fakeapi-harness: replay: which scenario? expected SCENARIO "
                        "(see fakeapi-harness --help)\n")


ORIGINAL = {
    "id": "recorded",
    "provider": {"keys": {"ops-1": {"secret": "sk-test-rt-1", "user": "ops"}}},
    "routes": [
        {"id": "read", "method": "GET", "path": "/v1/records/{id}", "responses": [
            {"status": 503, "retry_after": 1},
            {"status": 429, "headers": {"Retry-After": "soon"}},
            {"status": 200, "body": {"id": "{id}"}}]},
        {"id": "create", "method": "POST", "path": "/v1/records", "effect": "create",
         "responses": [
             {"status": 201, "fault": "drop_after_commit"},
             {"status": 201, "delay_ms": 300, "body": {"id": "{provider_id}"}}]}],
}

# (method, path, task, with the key?) sent in this order, twice
SEQUENCE = [("GET", "/v1/records/42", "t1", True), ("GET", "/v1/records/42", "t1", True),
            ("GET", "/v1/records/43", "t2", True), ("POST", "/v1/records", "w1", True),
            ("POST", "/v1/records", "w1", True), ("GET", "/v1/nothing", "t3", True),
            ("GET", "/v1/records/44", None, False)]


def play(p, key):
    for method, path, task, keyed in SEQUENCE:
        url = path + (f"?fa_task={task}" if task else "")
        body = {"client_reference": "ref-1"} if method == "POST" else None
        try:
            p.request(method, url, key=key if keyed else None, body=body)
        except (http.client.HTTPException, ConnectionError):
            pass  # the dropped answer


def journal_lines(path):
    """The journal's entries in order of arrival (seq counts completions)."""
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    return sorted(lines, key=lambda l: (l["t_arrival_us"], l["seq"]))


def test_a_recorded_journal_replays_the_same_statuses(harness_bin, fakeapi_bin, tmp_path):
    first = tmp_path / "first"
    second = tmp_path / "second"
    first.mkdir()
    second.mkdir()
    p = start_provider(fakeapi_bin, ORIGINAL, first)
    play(p, "sk-test-rt-1")
    code, err = p.stop()
    assert code == 0, err
    recorded = journal_lines(first / "journal.jsonl")
    assert len(recorded) == len(SEQUENCE)

    out = tmp_path / "recorded.json"
    r = harness(harness_bin, "import-journal", "-o", str(out), str(first / "journal.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "seq 7: GET /v1/records/44: unauthorized, left out" in r.stderr
    sc = json.loads(out.read_text())
    assert sc["comment"].startswith(
        "imported from journal.jsonl (6 attempts, 3 routes, 4 tasks) by fakeapi-harness "
        "import-journal; a journal keeps no bodies")
    assert sc["provider"]["keys"] == {"ops-1": {"secret": "sk-imported-ops-1", "user": "ops"}}
    assert [t["id"] for t in sc["harness"]["tasks"]] == ["t1", "t2", "w1", "t3"]

    p = start_provider(fakeapi_bin, out, second)
    play(p, "sk-imported-ops-1")
    code, err = p.stop()
    assert code == 0, err
    replayed = journal_lines(second / "journal.jsonl")

    def story(lines):
        return [(l["method"], l["path"], l["status"],
                 "respond" if l["fault"] == "no_route" else l["fault"]) for l in lines]

    assert story(replayed) == story(recorded)
    # the committed write was a write: the imported route has the effect
    assert [l["committed"] for l in replayed] == [l["committed"] for l in recorded]
    # a delta-seconds Retry-After is written again, a malformed one as it was
    assert [l["retry_after"] for l in replayed] == [l["retry_after"] for l in recorded]
    assert recorded[1]["retry_after"] == "soon"


def test_an_imported_journal_replays_under_the_harness(harness_bin, fakeapi_bin, tmp_path):
    p = start_provider(fakeapi_bin, ORIGINAL, tmp_path)
    play(p, "sk-test-rt-1")
    code, err = p.stop()
    assert code == 0, err
    out = tmp_path / "recorded.json"
    r = harness(harness_bin, "import-journal", "-o", str(out), str(tmp_path / "journal.jsonl"))
    assert r.returncode == 0, r.stderr
    jdir = tmp_path / "journals"
    jdir.mkdir()
    client = 'curl -s -o /dev/null -X {method} -H "Authorization: Bearer $FAKEAPI_KEY" {url}'
    r = harness(harness_bin, "replay", str(out), "--exec", client, "--seed", "1",
                "--journal-dir", str(jdir))
    assert r.returncode in (0, 1), r.stderr
    assert "scenario journal" in r.stdout
    statuses = {l["task"]: [] for l in journal_lines(jdir / "journal.jsonl")}
    for l in journal_lines(jdir / "journal.jsonl"):
        statuses[l["task"]].append(l["status"])
    # one attempt per task: the sequence starts as recorded
    assert statuses["t2"][0] in (503, 429, 200)
    assert statuses["t3"] == [404]


@pytest.mark.parametrize("command,source,expected", [
    ("import-har", HAR / "capture.har", HAR / "capture.expected.json"),
    ("import-journal", JOURNAL / "recorded.jsonl", JOURNAL / "recorded.expected.json"),
], ids=["har", "journal"])
def test_a_fixture_imports_as_expected(harness_bin, provider, command, source, expected):
    r = harness(harness_bin, command, str(source.relative_to(REPO)))
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected.read_text()
    provider(expected)  # fakeapi serves it


# the requests recorded.jsonl holds, by key id (the file's recorded-from.json says how)
FIXTURE_SEQUENCE = [
    ("GET", "/v1/records/42?fa_task=t1", "ops-1"), ("GET", "/v1/records/42?fa_task=t1", "ops-1"),
    ("GET", "/v1/records/43?fa_task=t2", "ops-2"), ("POST", "/v1/records?fa_task=w1", "ops-1"),
    ("POST", "/v1/records?fa_task=w1", "ops-1"), ("GET", "/v1/nothing?fa_task=t3", "ops-2"),
    ("GET", "/v1/records/44", None), ("GET", "/v1/ping", "ops-2"), ("GET", "/v1/ping", "ops-2")]


def test_the_recorded_fixture_replays_the_same_statuses(fakeapi_bin, tmp_path):
    p = start_provider(fakeapi_bin, JOURNAL / "recorded.expected.json", tmp_path)
    for method, path, key in FIXTURE_SEQUENCE:
        body = {"client_reference": "ref-1"} if method == "POST" else None
        try:
            p.request(method, path, key=f"sk-imported-{key}" if key else None, body=body)
        except (http.client.HTTPException, ConnectionError):
            pass  # the dropped and the reset answers
    code, err = p.stop()
    assert code == 0, err

    def story(lines):
        return [(l["method"], l["path"], l["task"], l["key"], l["status"],
                 "respond" if l["fault"] == "no_route" else l["fault"], l["committed"])
                for l in lines]

    assert story(journal_lines(tmp_path / "journal.jsonl")) == \
        story(journal_lines(JOURNAL / "recorded.jsonl"))


def test_a_bad_journal_line_is_named(harness_bin, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1}\n')
    r = harness(harness_bin, "import-journal", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith(f"fakeapi-harness import-journal: {bad}:1: $.")
    r = harness(harness_bin, "import-journal", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2
    assert r.stderr == (f"fakeapi-harness import-journal: {tmp_path}/missing.jsonl: cannot "
                        "read: No such file or directory\n")


def test_import_journal_keeps_users_that_differ_only_in_case(harness_bin, tmp_path):
    """User names "opS" and "ops" are two users: the scenario made names
    both (a lookup in any letter case lost one, and the loader refused the
    scenario with an internal error)."""
    lines = [json.loads(l) for l in (JOURNAL / "recorded.jsonl").read_text().splitlines()[:3]]
    lines[0]["user"] = "opS"
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in lines))
    out = tmp_path / "s.json"
    r = harness(harness_bin, "import-journal", "-o", str(out), str(path))
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr
    users = json.loads(out.read_text())["provider"]["users"]
    assert {"opS", "ops"} <= set(users), users
