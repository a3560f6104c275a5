"""The quota model over HTTP: seed 002's platform 429, refunds, RateLimit headers."""
import json
import time

import pytest

KEY = "sk-quota-ops-1"
KEY2 = "sk-quota-ops-2"


def scenario(quota, routes=None):
    return {
        "id": "quota-e2e",
        "provider": {"keys": {"ops-1": {"secret": KEY, "user": "ops-team"},
                              "ops-2": {"secret": KEY2, "user": "ops-team"}},
                     "quota": quota},
        "routes": routes or [
            {"id": "read", "method": "GET", "path": "/v1/records/{id}",
             "responses": [{"status": 200, "body": {"id": "{id}"}}]},
            {"id": "busy", "method": "GET", "path": "/v1/busy",
             "responses": [{"status": 503, "body": {"error": {"code": "pool_exhausted"}}}]},
        ],
    }


def by_arrival(journal):
    return sorted(journal["entries"], key=lambda e: e["t_arrival_us"])


RATE_HEADERS = {
    "x": ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"),
    "legacy": ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"),
    "ietf": ("ratelimit-policy", "ratelimit"),
}
ALL_RATE_HEADERS = {h for names in RATE_HEADERS.values() for h in names}


def test_fourth_request_gets_the_seed_429_and_a_401_spends_nothing(provider):
    p = provider(scenario({"per_key": 3, "per_user": 100, "period_s": 2}))
    status, headers, _ = p.request("GET", "/v1/records/1?fa_task=t0", key="sk-wrong")
    assert status == 401
    assert not ALL_RATE_HEADERS & headers.keys()
    got = [p.request("GET", f"/v1/records/{i}?fa_task=t{i}", key=KEY) for i in range(1, 5)]
    assert [g[0] for g in got[:3]] == [200, 200, 200], "the 401 spent a token"
    assert [g[1]["x-ratelimit-remaining"] for g in got[:3]] == ["2", "1", "0"]
    assert {g[1]["x-ratelimit-limit"] for g in got[:3]} == {"3"}
    # the reset is when the bucket has a token again: now, until it is empty
    assert [g[1]["x-ratelimit-reset"] for g in got[:3]] == ["0", "0", "1"]
    status, headers, body = got[3]
    assert status == 429
    # 3 per 2 s: the next token is 2/3 s away, said as a whole second
    assert headers["retry-after"] == "1"
    assert headers["x-ratelimit-scope"] == "per-key"
    assert headers["x-ratelimit-limit"] == "3"
    assert headers["x-ratelimit-remaining"] == "0"
    assert headers["x-ratelimit-reset"] == "1"
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": {
        "type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
        "message": "Rate limit exceeded (per-key). Limit: 3 per 2 seconds. Retry after 1 seconds.",
        "scope": "per-key", "limit": 3, "retryAfter": 1}}
    # seed 002's member order, as the page prints it
    assert list(json.loads(body)["error"]) == [
        "type", "code", "message", "scope", "limit", "retryAfter"]

    entries = by_arrival(p.journal())
    assert [e["status"] for e in entries] == [401, 200, 200, 200, 429]
    assert entries[0]["quota"] is None and entries[0]["fault"] == "unauthorized"
    assert [e["quota"] for e in entries[1:4]] == ["admitted replica 1"] * 3
    limited = entries[4]
    assert limited["quota"] == "limited per-key replica 1"
    assert limited["fault"] == "quota"
    assert limited["route"] is None and limited["response_index"] == -1, "a cursor moved"
    assert limited["retry_after"] == "1"
    pause = limited["pause_until_us"] - limited["t_response_us"]
    assert 900_000 <= pause <= 1_000_000

    # the pause the server named is enough: the key is admitted again
    time.sleep(int(headers["retry-after"]))
    status, headers, _ = p.request("GET", "/v1/records/5?fa_task=t5", key=KEY)
    assert status == 200
    assert headers["x-ratelimit-remaining"] in ("0", "1")
    assert by_arrival(p.journal())[-1]["quota"] == "admitted replica 1"


@pytest.mark.parametrize("style", ["x", "legacy", "ietf", "none"])
def test_rate_limit_headers_in_each_style(provider, style):
    p = provider(scenario({"per_key": 3, "per_user": 100, "period_s": 2, "headers": style}))
    ok = [p.request("GET", "/v1/records/1", key=KEY) for _ in range(3)]
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert [o[0] for o in ok] == [200, 200, 200] and status == 429
    # seed 002's own 429 headers come in every style
    assert headers["retry-after"] == "1" and headers["x-ratelimit-scope"] == "per-key"
    first = ok[0][1]
    others = ALL_RATE_HEADERS - set(RATE_HEADERS.get(style, ()))
    assert not others & first.keys()
    assert not others & headers.keys()
    if style == "ietf":
        assert first["ratelimit-policy"] == '"per-key";q=3;w=2'
        assert first["ratelimit"] == '"per-key";r=2;t=0'
        assert headers["ratelimit-policy"] == '"per-key";q=3;w=2'
        assert headers["ratelimit"] == '"per-key";r=0;t=1'
    elif style != "none":
        limit, remaining, reset = RATE_HEADERS[style]
        assert (first[limit], first[remaining], first[reset]) == ("3", "2", "0")
        assert (headers[limit], headers[remaining], headers[reset]) == ("3", "0", "1")


def test_a_scripted_503_spends_no_quota(provider):
    p = provider(scenario({"per_key": 2, "per_user": 100, "period_s": 60}))
    for _ in range(4):
        status, headers, _ = p.request("GET", "/v1/busy", key=KEY)
        assert status == 503
        assert headers["x-ratelimit-remaining"] == "2"
    assert [p.request("GET", "/v1/records/1", key=KEY)[0] for _ in range(3)] == [200, 200, 429]
    assert {e["quota"] for e in p.journal()["entries"] if e["status"] == 503} == {
        "refunded replica 1"}


def test_per_user_bucket_stops_a_second_key_of_the_same_account(provider, repo_root):
    p = provider(repo_root / "scenarios/provider/quota-per-user-two-keys.json")
    ops1, ops2, batch = "sk-provider-ops-1", "sk-provider-ops-2", "sk-provider-batch"
    assert [p.request("GET", "/v1/records/1", key=ops1)[0] for _ in range(3)] == [200] * 3
    status, headers, body = p.request("GET", "/v1/records/1", key=ops1)
    assert status == 429 and headers["x-ratelimit-scope"] == "per-key"
    assert json.loads(body)["error"]["limit"] == 3
    assert p.request("GET", "/v1/records/1", key=ops2)[0] == 200
    # ops-2 still has two tokens of its own; the account has none
    status, headers, body = p.request("GET", "/v1/records/1", key=ops2)
    assert status == 429 and headers["x-ratelimit-scope"] == "per-user"
    err = json.loads(body)["error"]
    assert (err["scope"], err["limit"], err["retryAfter"]) == ("per-user", 4, 1)
    assert err["message"] == ("Rate limit exceeded (per-user). Limit: 4 per 4 seconds. "
                              "Retry after 1 seconds.")
    assert headers["x-ratelimit-limit"] == "4"
    # the raised key of another account goes past the default 3, and its
    # account's limit still holds
    got = [p.request("GET", "/v1/records/1", key=batch) for _ in range(5)]
    assert [g[0] for g in got] == [200] * 4 + [429]
    assert got[0][1]["x-ratelimit-limit"] == "10"
    assert got[4][1]["x-ratelimit-scope"] == "per-user"
    quotas = [e["quota"] for e in by_arrival(p.journal())]
    assert quotas[3] == "limited per-key replica 1"
    assert quotas[5] == "limited per-user replica 1"


def test_three_replicas_divide_the_seed_limits(provider, repo_root):
    p = provider(repo_root / "scenarios/provider/quota-three-replicas.json")
    got = [p.request("GET", "/v1/records/1", key="sk-provider-ops-1") for _ in range(4)]
    assert [g[0] for g in got] == [200] * 4
    assert {g[1]["ratelimit-policy"] for g in got} == {'"per-key";q=200;w=60'}
    # round robin: replicas 1, 2, 3, then 1 again with one token fewer
    assert [g[1]["ratelimit"] for g in got] == ['"per-key";r=199;t=0'] * 3 + [
        '"per-key";r=198;t=0']
    assert [e["quota"] for e in by_arrival(p.journal())] == [
        "admitted replica 1", "admitted replica 2", "admitted replica 3", "admitted replica 1"]
