"""The platform's 429 and 503 answer shapes over HTTP: bodies, headers, pauses, no quota spent."""
import json
import time

from scenarios import key_table, provider_scenario

KEY = "sk-shapes-ops-1"
KEYS = key_table(("ops-1", KEY, "ops-team"))


def by_arrival(journal):
    return sorted(journal["entries"], key=lambda e: e["t_arrival_us"])


def one_route(responses, quota=None):
    """The shapes-e2e scenario: one route r playing @responses."""
    route = {"id": "r", "method": "GET", "path": "/v1/x/{id}", "responses": responses}
    return provider_scenario("shapes-e2e", KEYS, [route], quota=quota)


def check_pause(entry, seconds):
    """The journal's pause is the instant Retry-After names: @seconds after
    the decision, which lies between the attempt's arrival and its response
    (a late response stamp widens the window, never moves the pause)."""
    assert entry["retry_after"] == str(seconds)
    until, us = entry["pause_until_us"], seconds * 1_000_000
    assert entry["t_arrival_us"] + us <= until <= entry["t_response_us"] + us, entry


def test_each_shape_of_the_scenario_field_by_field(provider, repo_root):
    p = provider(repo_root / "scenarios/provider/platform-shapes.json")

    status, h, body = p.request("GET", "/v1/cluster/1?fa_task=c", key=KEY)
    assert status == 429
    assert h["retry-after"] == "1"
    assert "x-ratelimit-scope" not in h and "x-ai-admission" not in h
    e = json.loads(body)["error"]
    assert list(e) == ["type", "code", "message", "providerStatusCode", "retryAfter"]
    assert (e["type"], e["code"], e["providerStatusCode"], e["retryAfter"]) == (
        "rate_limit_exceeded", "rate_limit_exceeded", 429, 1)
    assert isinstance(e["message"], str) and e["message"]

    status, h, body = p.request("GET", "/v1/congested/1?fa_task=g", key=KEY)
    assert status == 429
    assert h["retry-after"] == "1" and h["x-ai-admission"] == "shed"
    assert "x-ratelimit-scope" not in h
    e = json.loads(body)["error"]
    assert list(e) == ["code", "message", "retryAfter"]
    assert (e["code"], e["retryAfter"]) == ("ai_congested", 1)

    before = time.time()
    status, h, body = p.request("GET", "/v1/pacing/1?fa_task=p", key=KEY)
    assert status == 429
    assert h["retry-after"] == "2"
    assert "x-ai-admission" not in h and "x-ratelimit-scope" not in h
    b = json.loads(body)
    assert list(b) == ["success", "error"] and b["success"] is False
    e = b["error"]
    assert list(e) == ["code", "message", "reason", "overageDenied", "resetAt"]
    assert (e["code"], e["reason"], e["overageDenied"]) == (
        "ai_pacing_limited", "daily_window_exceeded", True)
    reset = time.mktime(time.strptime(e["resetAt"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert before + 2 - 1 <= reset <= time.time() + 2 + 1

    status, h, body = p.request("GET", "/v1/cooldown/1?fa_task=k", key=KEY)
    assert status == 429
    assert h["retry-after"] == "1"
    assert "x-ai-admission" not in h and "x-ratelimit-scope" not in h
    e = json.loads(body)["error"]
    assert list(e) == ["code", "message", "retryAfter"]
    assert (e["code"], e["retryAfter"]) == ("ai_provider_cooldown", 1)

    status, h, body = p.request("POST", "/v1/deadline?fa_task=d", key=KEY, body={},
                                headers={"X-AI-Deadline-Ms": "2500"})
    assert status == 429
    assert h["retry-after"] == "1" and h["x-ai-deadline-ms"] == "2500"
    e = json.loads(body)["error"]
    assert list(e) == ["type", "code", "message", "retryAfter"]
    assert (e["type"], e["code"], e["retryAfter"]) == (
        "rate_limit_exceeded", "ai_deadline_exceeded", 1)

    drawn = {}
    for name, code in (("pool", "pool_exhausted"), ("db", "db_transient")):
        status, h, body = p.request("GET", f"/v1/{name}/1?fa_task={name}", key=KEY)
        assert status == 503
        assert h["content-type"] == "application/json"
        n = int(h["retry-after"])
        assert 3 <= n <= 7 and h["retry-after"] == str(n)
        assert json.loads(body) == {"error": {"code": code, "type": "server_error",
                                              "retryAfter": n}}
        assert list(json.loads(body)["error"]) == ["code", "type", "retryAfter"]
        drawn[name] = n

    entries = by_arrival(p.journal())
    assert [e["status"] for e in entries] == [429] * 5 + [503] * 2
    # the platform's rate-limit contract: none of them spends quota
    assert {e["quota"] for e in entries} == {"refunded replica 1"}
    for e, secs in zip(entries, [1, 1, 2, 1, 1, drawn["pool"], drawn["db"]]):
        check_pause(e, secs)
    # the cursor moved on: the next answer is the route's 200
    time.sleep(2.1)
    status, h, _ = p.request("GET", "/v1/cluster/2", key=KEY)
    assert status == 200
    # the bucket is as full as before the seven shaped answers
    assert h["x-ratelimit-remaining"] == "599", "a shape spent a token"
    for path in ("/v1/pacing/2", "/v1/pool/2"):
        assert p.request("GET", path, key=KEY)[0] == 200, path


def test_cooldown_grows_while_it_repeats_up_to_four_times(provider):
    p = provider(one_route([{"shape": "ai_provider_cooldown", "cooldown_s": 1}]))
    got = []

    def ask():
        status, h, body = p.request("GET", "/v1/x/1", key=KEY)
        assert status == 429
        assert json.loads(body)["error"]["retryAfter"] == int(h["retry-after"])
        got.append(int(h["retry-after"]))
        return got[-1]

    assert ask() == 1
    time.sleep(1.05)
    assert ask() == 2
    assert ask() == 2  # still running: what is left, rounded up
    time.sleep(2.05)
    assert ask() == 4
    time.sleep(4.05)
    assert ask() == 4  # the cap: four times the first
    entries = by_arrival(p.journal())
    for e, secs in zip(entries, [1, 2, 2, 4, 4]):
        assert e["retry_after"] == str(secs)
        assert e["pause_until_us"] - e["t_response_us"] <= secs * 1_000_000
    # the third answer came during the second cooldown: it names its end,
    # rounded up to whole seconds from the third's decision (between its
    # arrival and its response), not a cooldown of its own
    e1, e2 = entries[1], entries[2]
    left_lo = e1["pause_until_us"] - e2["t_response_us"]
    left_hi = e1["pause_until_us"] - e2["t_arrival_us"]
    assert 0 < left_lo and left_hi <= 2_000_000, (e1, e2)
    assert -(-left_lo // 1_000_000) <= int(e2["retry_after"]) <= -(-left_hi // 1_000_000)
    # both pauses are 2 s from their decisions: they differ by the time between
    diff = e2["pause_until_us"] - e1["pause_until_us"]
    assert e2["t_arrival_us"] - e1["t_response_us"] <= diff, (e1, e2)
    assert diff <= e2["t_response_us"] - e1["t_arrival_us"], (e1, e2)
    assert 0 <= diff < 1_000_000, diff


def test_cooldown_streak_ends_when_the_cluster_answers(provider):
    p = provider(one_route([{"shape": "ai_provider_cooldown", "cooldown_s": 1, "times": 2},
                            {"status": 200, "times": 1},
                            {"shape": "ai_provider_cooldown", "cooldown_s": 1}]))
    assert p.request("GET", "/v1/x/1", key=KEY)[1]["retry-after"] == "1"
    time.sleep(1.05)
    assert p.request("GET", "/v1/x/1", key=KEY)[1]["retry-after"] == "2"
    time.sleep(2.05)
    assert p.request("GET", "/v1/x/1", key=KEY)[0] == 200
    status, h, _ = p.request("GET", "/v1/x/1", key=KEY)
    assert status == 429 and h["retry-after"] == "1"


def test_own_deadline_only_shortens_and_bad_values_are_ignored(provider):
    p = provider(one_route([{"shape": "ai_deadline_exceeded", "deadline_ms": 8000}]))
    cases = [(None, "8000"), ("2500", "2500"), ("7999", "7999"), ("8000", "8000"),
             ("9000", "8000"), ("0", "8000"), ("-3", "8000"), ("abc", "8000"),
             ("1.5", "8000"), ("", "8000")]
    for sent, want in cases:
        headers = {} if sent is None else {"X-AI-Deadline-Ms": sent}
        status, h, body = p.request("GET", "/v1/x/1", key=KEY, headers=headers)
        assert status == 429, sent  # never rejected as a bad request
        assert h["x-ai-deadline-ms"] == want, sent
        assert h["retry-after"] == "5"  # the documented default
        assert json.loads(body)["error"]["code"] == "ai_deadline_exceeded"
    p2 = provider(one_route([{"shape": "ai_deadline_exceeded"}]))
    assert p2.request("GET", "/v1/x/1", key=KEY)[1]["x-ai-deadline-ms"] == "60000"


def test_fixed_pause_defaults(provider):
    p = provider({"id": "defaults", "provider": {"keys": {"ops-1": {"secret": KEY, "user": "u"}}},
                  "routes": [{"id": s, "method": "GET", "path": f"/{s}",
                              "responses": [{"shape": s}]}
                             for s in ("rate_limit_cluster", "ai_congested", "ai_pacing_limited")]})
    assert p.request("GET", "/rate_limit_cluster", key=KEY)[1]["retry-after"] == "12"
    assert p.request("GET", "/ai_congested", key=KEY)[1]["retry-after"] == "5"
    assert p.request("GET", "/ai_pacing_limited", key=KEY)[1]["retry-after"] == "60"
    entries = by_arrival(p.journal())
    for e, secs in zip(entries, [12, 5, 60]):
        check_pause(e, secs)


def draws(provider, seed, n=20):
    p = provider(one_route([{"shape": "pool_exhausted"}]), extra=("--seed", str(seed)))
    out = [int(p.request("GET", "/v1/x/1", key=KEY)[1]["retry-after"]) for _ in range(n)]
    p.request("POST", "/_fakeapi/reset")
    again = [int(p.request("GET", "/v1/x/1", key=KEY)[1]["retry-after"]) for _ in range(n)]
    assert again == out, "a reset did not replay the draws"
    return out


def test_503_pauses_are_drawn_3_to_7_and_replay_by_seed(provider):
    a = draws(provider, 9)
    b = draws(provider, 9)
    c = draws(provider, 10)
    assert a == b
    assert a != c
    assert all(3 <= x <= 7 for x in a + c)
    assert len(set(a)) > 1
