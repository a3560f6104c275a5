"""The quota model over HTTP: the platform's 429, refunds, RateLimit headers."""
import json
import time

import pytest

from scenarios import key_table, provider_scenario

KEY = "sk-quota-ops-1"
KEY2 = "sk-quota-ops-2"
KEYS = key_table(("ops-1", KEY, "ops-team"), ("ops-2", KEY2, "ops-team"))


def scenario(quota, routes=None):
    """The quota-e2e scenario under @quota; by default a read route and a busy one."""
    return provider_scenario("quota-e2e", KEYS, routes or [
        {"id": "read", "method": "GET", "path": "/v1/records/{id}",
         "responses": [{"status": 200, "body": {"id": "{id}"}}]},
        {"id": "busy", "method": "GET", "path": "/v1/busy",
         "responses": [{"status": 503, "body": {"error": {"code": "pool_exhausted"}}}]},
    ], quota=quota)


def by_arrival(journal):
    return sorted(journal["entries"], key=lambda e: e["t_arrival_us"])


def decided_apart(a, b):
    """Bounds, in µs, on the time between the quota decisions of journal
    entries @a and @b: each is decided between its arrival and its response,
    so lateness widens the bounds and never breaks them."""
    return b["t_arrival_us"] - a["t_response_us"], b["t_response_us"] - a["t_arrival_us"]


def ceil_div(n, d):
    return -(-n // d)


def next_token_s(first, later, every_us):
    """Whole seconds from @later's decision until a bucket that was full at
    @first and has been emptied since holds a token again, @every_us (one
    token's refill) after @first's decision: the values the journal's
    bounds allow, one unless a second's boundary falls between them."""
    lo, hi = decided_apart(first, later)
    return set(range(ceil_div(every_us - hi, 1_000_000), ceil_div(every_us - lo, 1_000_000) + 1))


RATE_HEADERS = {
    "x": ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"),
    "legacy": ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"),
    "ietf": ("ratelimit-policy", "ratelimit"),
}
ALL_RATE_HEADERS = {h for names in RATE_HEADERS.values() for h in names}


def test_fourth_request_gets_the_platform_429_and_a_401_spends_nothing(provider):
    # 3 per 6 s: a token every 2 s, time enough for four requests on a
    # loaded machine (the bounds below check that it was)
    p = provider(scenario({"per_key": 3, "per_user": 100, "period_s": 6}))
    status, headers, _ = p.request("GET", "/v1/records/1?fa_task=t0", key="sk-wrong")
    assert status == 401
    assert not ALL_RATE_HEADERS & headers.keys()
    got = [p.request("GET", f"/v1/records/{i}?fa_task=t{i}", key=KEY) for i in range(1, 5)]
    assert [g[0] for g in got[:3]] == [200, 200, 200], "the 401 spent a token"
    assert [g[1]["x-ratelimit-remaining"] for g in got[:3]] == ["2", "1", "0"]
    assert {g[1]["x-ratelimit-limit"] for g in got[:3]} == {"3"}
    entries = by_arrival(p.journal())
    # the reset is when the bucket has a token again: now, until it is
    # empty; then 2 s after the first was taken, said as a whole second
    assert [g[1]["x-ratelimit-reset"] for g in got[:2]] == ["0", "0"]
    assert int(got[2][1]["x-ratelimit-reset"]) in next_token_s(entries[1], entries[3], 2_000_000)
    status, headers, body = got[3]
    assert status == 429
    # 3 per 6 s: the next token is 2 s after the first, said as a whole
    # second (2 unless a loaded machine spread the requests over 1 s)
    wait = int(headers["retry-after"])
    assert wait in next_token_s(entries[1], entries[4], 2_000_000)
    assert headers["x-ratelimit-scope"] == "per-key"
    assert headers["x-ratelimit-limit"] == "3"
    assert headers["x-ratelimit-remaining"] == "0"
    assert headers["x-ratelimit-reset"] == str(wait)
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": {
        "type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
        "message": ("Rate limit exceeded (per-key). Limit: 3 per 6 seconds. "
                    f"Retry after {wait} seconds."),
        "scope": "per-key", "limit": 3, "retryAfter": wait}}
    # the platform's member order, as the page prints it
    assert list(json.loads(body)["error"]) == [
        "type", "code", "message", "scope", "limit", "retryAfter"]

    assert [e["status"] for e in entries] == [401, 200, 200, 200, 429]
    assert entries[0]["quota"] is None and entries[0]["fault"] == "unauthorized"
    assert [e["quota"] for e in entries[1:4]] == ["admitted replica 1"] * 3
    limited = entries[4]
    assert limited["quota"] == "limited per-key replica 1"
    assert limited["fault"] == "quota"
    assert limited["route"] is None and limited["response_index"] == -1, "a cursor moved"
    assert limited["retry_after"] == str(wait)
    # @wait s from the decision, which lies between arrival and response
    assert (limited["t_arrival_us"] + wait * 1_000_000 <= limited["pause_until_us"]
            <= limited["t_response_us"] + wait * 1_000_000), limited

    # the pause the server named is enough: the key is admitted again
    time.sleep(int(headers["retry-after"]))
    status, headers, _ = p.request("GET", "/v1/records/5?fa_task=t5", key=KEY)
    assert status == 200
    entries = by_arrival(p.journal())
    assert entries[-1]["quota"] == "admitted replica 1"
    # what refilled since the first token was taken, a token every 2 s (the
    # bucket holds 3), less the one just taken
    lo, hi = decided_apart(entries[1], entries[-1])
    want = {str(min(3, n) - 1) for n in range(lo // 2_000_000, hi // 2_000_000 + 1)}
    assert headers["x-ratelimit-remaining"] in want, (want, lo, hi)


@pytest.mark.parametrize("style", ["x", "legacy", "ietf", "none"])
def test_rate_limit_headers_in_each_style(provider, style):
    # a token every 2 s: time enough for the four requests on a loaded machine
    p = provider(scenario({"per_key": 3, "per_user": 100, "period_s": 6, "headers": style}))
    ok = [p.request("GET", "/v1/records/1", key=KEY) for _ in range(3)]
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert [o[0] for o in ok] == [200, 200, 200] and status == 429
    # the platform's own 429 headers come in every style; the next token is 2 s
    # after the first was taken (2 unless the requests took over 1 s)
    entries = by_arrival(p.journal())
    wait = int(headers["retry-after"])
    assert wait in next_token_s(entries[0], entries[3], 2_000_000)
    assert headers["x-ratelimit-scope"] == "per-key"
    first = ok[0][1]
    others = ALL_RATE_HEADERS - set(RATE_HEADERS.get(style, ()))
    assert not others & first.keys()
    assert not others & headers.keys()
    if style == "ietf":
        assert first["ratelimit-policy"] == '"per-key";q=3;w=6'
        assert first["ratelimit"] == '"per-key";r=2;t=0'
        assert headers["ratelimit-policy"] == '"per-key";q=3;w=6'
        assert headers["ratelimit"] == f'"per-key";r=0;t={wait}'
    elif style != "none":
        limit, remaining, reset = RATE_HEADERS[style]
        assert (first[limit], first[remaining], first[reset]) == ("3", "2", "0")
        assert (headers[limit], headers[remaining], headers[reset]) == ("3", "0", str(wait))


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
    sc = json.loads((repo_root / "scenarios/provider/quota-per-user-two-keys.json").read_text())
    # the suite's 4 s period refills the account a token a second, which
    # six requests on a loaded machine may outlast: 40 s, a token every 10 s
    sc["provider"]["quota"]["period_s"] = 40
    p = provider(sc)
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
    entries = by_arrival(p.journal())
    # the account's next token: 10 s after its first was taken
    wait = err["retryAfter"]
    assert wait in next_token_s(entries[0], entries[5], 10_000_000)
    assert (err["scope"], err["limit"]) == ("per-user", 4)
    assert err["message"] == ("Rate limit exceeded (per-user). Limit: 4 per 40 seconds. "
                              f"Retry after {wait} seconds.")
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


def test_three_replicas_divide_the_platform_limits(provider, repo_root):
    p = provider(repo_root / "scenarios/provider/quota-three-replicas.json")
    got = [p.request("GET", "/v1/records/1", key="sk-provider-ops-1") for _ in range(4)]
    assert [g[0] for g in got] == [200] * 4
    assert {g[1]["ratelimit-policy"] for g in got} == {'"per-key";q=200;w=60'}
    # round robin: replicas 1, 2, 3, then 1 again with one token fewer
    assert [g[1]["ratelimit"] for g in got] == ['"per-key";r=199;t=0'] * 3 + [
        '"per-key";r=198;t=0']
    assert [e["quota"] for e in by_arrival(p.journal())] == [
        "admitted replica 1", "admitted replica 2", "admitted replica 3", "admitted replica 1"]


# The LLM rate-limit guide's tokens: scenarios/provider/quota-tokens-per-minute.json meters
# 6 requests and 3000 tokens per minute per key. A chat request reserves
# its estimated prompt tokens, ceil(bytes / 4), plus max_tokens.
TOKENS = "scenarios/provider/quota-tokens-per-minute.json"
CLASSIFY, DOCS = "sk-tokens-5c0e7a91", "sk-tokens-docs"
CHAT = "/v1/chat/completions"


def chat(prompt_bytes, max_tokens=None):
    body = {"model": "fake-model-1",
            "messages": [{"role": "user", "content": "x" * prompt_bytes}]}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def tokens_scenario(repo_root, **provider):
    sc = json.loads((repo_root / TOKENS).read_text())
    sc["provider"].update(provider)
    return sc


def test_many_short_prompts_run_out_of_requests_while_tokens_remain(provider, repo_root):
    p = provider(repo_root / TOKENS)
    # 40 bytes = 10 tokens, plus max_tokens 10: 20 tokens each, 140 of 3000
    got = [p.request("POST", CHAT, key=CLASSIFY, body=chat(40, 10)) for _ in range(7)]
    assert [g[0] for g in got] == [200] * 6 + [429]
    assert json.loads(got[0][2])["usage"]["prompt_tokens"] == 10
    assert [g[1]["x-ratelimit-remaining"] for g in got[:6]] == ["5", "4", "3", "2", "1", "0"]
    assert {g[1]["x-ratelimit-limit-tokens"] for g in got} == {"3000"}
    status, headers, body = got[6]
    entries = by_arrival(p.journal())
    # the seven decisions are this far apart (a loaded machine spreads them)
    lo, hi = decided_apart(entries[0], entries[6])
    # the requests ran out; 2880 tokens and what refilled since (50 a
    # second, up to the 3000 the bucket holds) remain
    left = int(headers["x-ratelimit-remaining-tokens"])
    assert min(3000, 2880 + lo * 50 // 1_000_000) <= left <= min(3000, 2880 + hi * 50 // 1_000_000)
    assert headers["x-ratelimit-reset-tokens"] == "0"
    # 6 per minute: a request every 10 s, the first 10 s after the first
    wait = int(headers["retry-after"])
    assert ceil_div(10_000_000 - hi, 1_000_000) <= wait <= ceil_div(10_000_000 - lo, 1_000_000)
    assert "retry-after-ms" not in headers
    assert json.loads(body) == {"error": {
        "type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
        "message": ("Rate limit exceeded (per-key). Limit: 6 per minute. "
                    f"Retry after {wait} seconds."),
        "scope": "per-key", "limit": 6, "retryAfter": wait}}
    assert [e["tokens"] for e in entries] == [20] * 7
    assert [e["quota"] for e in entries] == ["admitted replica 1"] * 6 + [
        "limited per-key replica 1"]
    assert entries[6]["fault"] == "quota" and entries[6]["route"] is None


def test_few_huge_prompts_run_out_of_tokens_while_requests_remain(provider, repo_root):
    p = provider(repo_root / TOKENS)
    # 3200 bytes = 800 tokens, plus max_tokens 200: 1000 tokens each
    got = [p.request("POST", CHAT, key=DOCS, body=chat(3200, 200)) for _ in range(4)]
    assert [g[0] for g in got] == [200, 200, 200, 429]
    status, headers, body = got[3]
    assert headers["x-ratelimit-remaining"] == "3", "requests are not what ran out"
    assert int(headers["x-ratelimit-remaining-tokens"]) < 1000
    # 1000 tokens at 50 per s: 20 s after the first took its 1000 (the
    # decisions are this far apart: a loaded machine spreads them)
    first, fourth = by_arrival(p.journal())[0:4:3]
    lo, hi = decided_apart(first, fourth)
    wait = int(headers["retry-after"])
    assert ceil_div(20_000_000 - hi, 1_000_000) <= wait <= ceil_div(20_000_000 - lo, 1_000_000)
    assert headers["x-ratelimit-reset-tokens"] == str(wait)
    assert headers["x-ratelimit-scope"] == "per-key"
    err = json.loads(body)["error"]
    assert err["message"] == ("Rate limit exceeded (per-key). Limit: 3000 tokens per minute. "
                              f"Retry after {wait} seconds.")
    assert (err["limit"], err["retryAfter"]) == (3000, wait)
    # more than the whole bucket: refused for good, nothing spent, no pause
    status, headers, body = p.request("POST", CHAT, key=DOCS, body=chat(12000, 1))
    assert status == 400
    assert "retry-after" not in headers
    err = json.loads(body)["error"]
    assert (err["type"], err["code"]) == ("invalid_request_error", "tokens_over_limit")
    assert "3001 tokens" in err["message"] and "3000 tokens per minute" in err["message"]
    # an unusable body is the chat endpoint's own 400 and is not metered
    status, _, body = p.request("POST", CHAT, key=DOCS, body={"messages": []})
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_request"
    # a prompt without max_tokens reserves the prompt alone
    status, _, _ = p.request("POST", CHAT, key=CLASSIFY, body=chat(401))
    assert status == 200
    entries = by_arrival(p.journal())
    assert [e["tokens"] for e in entries] == [1000] * 4 + [3001, None, 101]
    assert [e["quota"] for e in entries] == ["admitted replica 1"] * 3 + [
        "limited tokens per-key replica 1", "limited over-capacity tokens per-key replica 1",
        None, "admitted replica 1"]
    assert entries[4]["status"] == 400 and entries[4]["retry_after"] is None
    assert entries[4]["pause_until_us"] is None


@pytest.mark.parametrize("flag", [True, False])
def test_retry_after_ms_names_the_exact_pause(provider, repo_root, flag):
    p = provider(tokens_scenario(repo_root, retry_after_ms=flag))
    busy = [p.request("POST", "/v1/busy/chat/completions", key=DOCS, body=chat(40)) for _ in range(3)]
    assert [b[0] for b in busy] == [429, 503, 503]
    assert [b[1]["retry-after"] for b in busy] == ["5", "2", "2"]
    # a shape and an entry's retry_after, but never a literal header
    want = ["5000", "2000", None] if flag else [None] * 3
    assert [b[1].get("retry-after-ms") for b in busy] == want
    # none of them spent a token
    assert {b[1]["x-ratelimit-remaining-tokens"] for b in busy} == {"3000"}
    got = [p.request("POST", CHAT, key=CLASSIFY, body=chat(40, 10)) for _ in range(7)]
    assert [g[0] for g in got] == [200] * 6 + [429]
    assert all("retry-after-ms" not in g[1] for g in got[:6])
    headers = got[6][1]
    entries = by_arrival(p.journal())
    limited = entries[-1]
    # the first chat's request was taken this long before the seventh's
    # decision: the next one comes 10 s after it (a request every 10 s)
    lo, hi = decided_apart(entries[3], limited)
    # the pause runs from the decision, between arrival and response
    since = limited["pause_until_us"] - limited["t_arrival_us"]
    before = limited["pause_until_us"] - limited["t_response_us"]
    if flag:
        ms = int(headers["retry-after-ms"])
        assert ceil_div(10_000_000 - hi, 1000) <= ms <= ceil_div(10_000_000 - lo, 1000), (lo, hi)
        assert int(headers["retry-after"]) == -(-ms // 1000)
        assert before <= ms * 1000 <= since
        # the journal keeps the value sent, as it keeps Retry-After
        assert limited["retry_after_ms"] == headers["retry-after-ms"]
    else:
        assert "retry-after-ms" not in headers
        secs = int(headers["retry-after"])
        assert ceil_div(10_000_000 - hi, 1_000_000) <= secs <= ceil_div(10_000_000 - lo, 1_000_000)
        assert before <= secs * 1_000_000 <= since
        assert limited["retry_after_ms"] is None


def test_openai_header_style(provider, repo_root):
    sc = tokens_scenario(repo_root)
    sc["provider"]["quota"]["headers"] = "openai"
    p = provider(sc)
    status, headers, _ = p.request("POST", CHAT, key=DOCS, body=chat(3200, 200))
    assert status == 200
    assert headers["x-ratelimit-limit-requests"] == "6"
    assert headers["x-ratelimit-remaining-requests"] == "5"
    assert headers["x-ratelimit-limit-tokens"] == "3000"
    assert headers["x-ratelimit-remaining-tokens"] == "2000"
    # full again in 10 s (requests) and 20 s (tokens), less a moment
    assert headers["x-ratelimit-reset-requests"].endswith("s")
    assert 9.0 < float(headers["x-ratelimit-reset-requests"][:-1]) <= 10.0
    assert 19.0 < float(headers["x-ratelimit-reset-tokens"][:-1]) <= 20.0
    assert "x-ratelimit-limit" not in headers


def test_retry_after_ms_on_during_pause_names_the_rest_of_the_pause(provider):
    p = provider({
        "id": "retry-after-ms-pause",
        "provider": {"keys": {"ops-1": {"secret": KEY, "user": "ops-team"}},
                     "retry_after_ms": True,
                     "during_pause": {"status": 429, "body": {"error": "paused"}}},
        "routes": [{"id": "read", "method": "GET", "path": "/v1/records/{id}",
                    "responses": [{"status": 503, "retry_after": 2, "times": 1},
                                  {"status": 200}]}],
    })
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert (status, headers["retry-after"], headers["retry-after-ms"]) == (503, "2", "2000")
    status, headers, _ = p.request("GET", "/v1/records/1", key=KEY)
    assert status == 429 and headers["retry-after"] == "2"
    ms = int(headers["retry-after-ms"])
    assert 1000 < ms <= 2000
    first, second = by_arrival(p.journal())
    assert (first["retry_after_ms"], second["retry_after_ms"]) == ("2000", str(ms))
    # both name the same instant, the second to the ms
    assert 0 <= second["pause_until_us"] - first["pause_until_us"] < 1000
    assert second["fault"] == "during_pause"


def test_retry_after_ms_leaves_a_shape_turned_into_a_stream_frame_alone(provider):
    p = provider({
        "id": "retry-after-ms-stream",
        "provider": {"keys": {"ops-1": {"secret": KEY, "user": "ops-team"}},
                     "retry_after_ms": True},
        "routes": [{"id": "chat", "kind": "chat_completions", "method": "POST",
                    "path": CHAT, "responses": [{"shape": "ai_congested"}]}],
    })
    status, headers, body = p.request("POST", CHAT, key=KEY, body={**chat(8), "stream": True})
    assert status == 200 and b"ai_congested" in body
    assert "retry-after" not in headers and "retry-after-ms" not in headers
    status, headers, _ = p.request("POST", CHAT, key=KEY, body=chat(8))
    assert (status, headers["retry-after"], headers["retry-after-ms"]) == (429, "5", "5000")
    assert [e["tokens"] for e in by_arrival(p.journal())] == [2, 2]
