"""The Anthropic-compatible Messages endpoint over HTTP: Messages, event streams exactly
as the API frames them, an error event after the first text delta, a stream cut short,
paced and stalling streams and how the journal says each ended, errors in Anthropic's
shape with request-id and x-should-retry, and the quota model's rate_limit_error with
Anthropic's rate-limit headers."""
import json
import math
import time
from datetime import datetime, timezone

import pytest

from conftest import estimate_tokens as tokens, post_whole_or_not

KEY = "sk-ant-2b9e61f0"
REPLY = "Hello from the fake model."
PROMPT = "Say hello, please."
SYSTEM = "You are terse."


@pytest.fixture
def p(provider, repo_root):
    return provider(repo_root / "scenarios/provider/messages.json")


def body(stream=False, model="claude-test-1", max_tokens=64):
    b = {"model": model, "max_tokens": max_tokens, "system": SYSTEM,
         "messages": [{"role": "user", "content": PROMPT}]}
    if stream:
        b["stream"] = True
    return b


def post(p, path, payload, key=KEY):
    """POST as the SDK sends it (x-api-key): (status, headers lower-cased,
    bytes read, whether the body was whole)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    p.sent += 1
    return post_whole_or_not(p, path, data, {"x-api-key": key,
                                              "anthropic-version": "2023-06-01",
                                              "Content-Type": "application/json"})


def events(raw):
    """The SSE events of @raw as (name, data); asserts the framing."""
    out = []
    for frame in raw.decode().split("\n\n"):
        if frame == "":
            continue
        lines = frame.split("\n")
        assert len(lines) == 2, frame
        assert lines[0].startswith("event: ") and lines[1].startswith("data: "), frame
        name, data = lines[0][len("event: "):], json.loads(lines[1][len("data: "):])
        assert data["type"] == name
        out.append((name, data))
    return out


def entry(p):
    return p.journal()["entries"][-1]


def span_ms(e):
    return (e["t_done_us"] - e["t_response_us"]) / 1000


def test_message_fields_usage_and_request_id(p):
    status, h, raw, _ = post(p, "/v1/messages", body())
    assert status == 200, raw
    assert h["content-type"] == "application/json"
    assert h["request-id"].startswith("req_") and len(h["request-id"]) == 28
    assert "x-should-retry" not in h
    m = json.loads(raw)
    assert list(m) == ["id", "type", "role", "model", "content", "stop_reason",
                       "stop_sequence", "usage"]
    assert (m["id"], m["type"], m["role"], m["model"]) == ("msg_1", "message", "assistant",
                                                           "claude-test-1")
    assert m["content"] == [{"type": "text", "text": REPLY}]
    assert (m["stop_reason"], m["stop_sequence"]) == ("end_turn", None)
    prompt = tokens(SYSTEM) + tokens(PROMPT)
    assert m["usage"] == {"input_tokens": prompt, "output_tokens": tokens(REPLY)}
    e = entry(p)
    assert (e["route"], e["status"], e["fault"]) == ("messages", 200, "respond")
    # the LLM rate-limit guide's cost: the prompt (system included) and max_tokens
    assert e["tokens"] == prompt + 64
    assert (e["stream_chunks"], e["stream_end"]) == (None, None)
    # each answer has a request id of its own
    _, h2, raw2, _ = post(p, "/v1/messages", body())
    assert json.loads(raw2)["id"] == "msg_2" and h2["request-id"] != h["request-id"]


def test_stream_events_come_as_the_api_frames_them(p):
    status, h, raw, whole = post(p, "/v1/messages", body(stream=True))
    assert status == 200 and whole
    assert h["content-type"] == "text/event-stream"
    ev = events(raw)
    names = [n for n, _ in ev]
    pieces = len(REPLY.split())
    assert names == (["message_start", "content_block_start", "ping"]
                     + ["content_block_delta"] * pieces
                     + ["content_block_stop", "message_delta", "message_stop"])
    start = ev[0][1]["message"]
    assert (start["id"], start["content"], start["stop_reason"]) == ("msg_1", [], None)
    assert start["usage"] == {"input_tokens": tokens(SYSTEM) + tokens(PROMPT), "output_tokens": 1}
    assert ev[1][1] == {"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}
    assert ev[2][1] == {"type": "ping"}
    text = ""
    for _, d in ev[3:3 + pieces]:
        assert list(d) == ["type", "index", "delta"] and d["index"] == 0
        assert d["delta"]["type"] == "text_delta"
        text += d["delta"]["text"]
    assert text == REPLY
    assert ev[-3][1] == {"type": "content_block_stop", "index": 0}
    assert ev[-2][1] == {"type": "message_delta",
                         "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                         "usage": {"output_tokens": tokens(REPLY)}}
    assert ev[-1][1] == {"type": "message_stop"}
    e = entry(p)
    # the journal counts the text deltas, not the events around them
    assert (e["stream_chunks"], e["stream_end"]) == (pieces, "done")
    assert int(h["content-length"]) == len(raw)


def test_error_event_after_the_first_text_delta(p):
    status, h, raw, whole = post(p, "/err/v1/messages", body(stream=True))
    assert status == 200 and whole
    assert "retry-after" not in h and "x-should-retry" not in h
    ev = events(raw)
    assert [n for n, _ in ev] == ["message_start", "content_block_start", "ping",
                                  "content_block_delta", "error"]
    assert ev[3][1]["delta"]["text"] == "Hello"
    assert ev[4][1] == {"type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"}}
    e = entry(p)
    assert (e["route"], e["status"], e["fault"], e["retry_after"]) == (
        "messages-err", 200, "respond", None)
    assert (e["stream_chunks"], e["stream_end"]) == (1, "error_frame")
    assert e["pause_until_us"] is None  # an error event names no pause
    # the next entry of the route streams whole
    _, _, raw, _ = post(p, "/err/v1/messages", body(stream=True))
    assert events(raw)[-1][0] == "message_stop"


def test_error_status_to_a_plain_request_is_the_plain_error(provider):
    sc = {"id": "messages-529", "provider": {"keys": {"app-1": {"secret": KEY, "user": "u"}}},
          "routes": [{"id": "m", "kind": "messages", "method": "POST", "path": "/v1/messages",
                      "responses": [{"status": 529, "error_after_chunks": 1}]}]}
    q = provider(sc)
    status, h, raw, _ = post(q, "/v1/messages", body())
    assert status == 529
    assert h["x-should-retry"] == "true"
    assert json.loads(raw) == {"type": "error", "error": {"type": "overloaded_error",
                                                          "message": "Overloaded"},
                               "request_id": h["request-id"]}


def test_stop_after_chunks_cuts_the_stream_before_message_stop(p):
    status, _, raw, whole = post(p, "/stop/v1/messages", body(stream=True))
    assert status == 200 and not whole
    ev = events(raw)
    assert [n for n, _ in ev] == ["message_start", "content_block_start", "ping",
                                  "content_block_delta", "content_block_delta"]
    e = entry(p)
    assert (e["route"], e["status"], e["fault"], e["delivered"]) == (
        "messages-stop", 200, "partial_body", "dropped")
    assert (e["stream_chunks"], e["stream_end"]) == (2, "cut")


@pytest.mark.parametrize("payload, message", [
    (b"{not json", "the request body is not valid JSON"),
    (json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode(),
     "max_tokens: Field required"),
    (json.dumps({"model": "m", "max_tokens": 5, "messages": []}).encode(),
     "messages: at least one message is required"),
    (json.dumps({"model": "m", "max_tokens": 5,
                 "messages": [{"role": "system", "content": "x"}]}).encode(),
     "messages.0.role: Input should be 'user' or 'assistant'"),
])
def test_malformed_request_is_an_invalid_request_error_not_to_retry(p, payload, message):
    status, h, raw, _ = post(p, "/stop/v1/messages", payload)
    assert status == 400
    assert h["x-should-retry"] == "false"
    assert json.loads(raw) == {"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": message},
                               "request_id": h["request-id"]}
    e = entry(p)
    assert (e["route"], e["status"], e["fault"], e["tokens"]) == ("messages-stop", 400,
                                                                  "respond", None)
    # no cursor moved: the route's first entry (the cut stream) is still to come
    _, _, _, whole = post(p, "/stop/v1/messages", body(stream=True))
    assert not whole


def test_unknown_key_is_an_authentication_error(p):
    status, h, raw, _ = post(p, "/v1/messages", body(), key="sk-wrong")
    assert status == 401
    assert h["x-should-retry"] == "false"
    err = json.loads(raw)["error"]
    assert err["type"] == "authentication_error"
    assert entry(p)["fault"] == "unauthorized"


def test_scripted_errors_answer_in_anthropics_shape(p):
    status, h, raw, _ = post(p, "/denied/v1/messages", body())
    assert status == 403 and h["x-should-retry"] == "false"
    assert json.loads(raw)["error"] == {"type": "permission_error",
                                        "message": "Permission denied"}
    # a body and an x-should-retry the scenario wrote go as written
    status, h, raw, _ = post(p, "/written/v1/messages", body())
    assert status == 400 and h["x-should-retry"] == "true"
    assert json.loads(raw) == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum"}}


def test_overloaded_with_retry_after_is_an_announced_pause(p):
    status, h, raw, _ = post(p, "/overloaded/v1/messages", body())
    assert status == 529
    assert (h["retry-after"], h["x-should-retry"]) == ("1", "true")
    assert json.loads(raw)["error"]["type"] == "overloaded_error"
    e = entry(p)
    assert (e["status"], e["retry_after"]) == (529, "1")
    assert e["t_arrival_us"] + 1e6 <= e["pause_until_us"] <= e["t_response_us"] + 1e6


def test_paced_stream_sends_the_lead_events_at_once(p):
    status, h, raw, whole = post(p, "/paced/v1/messages", body(stream=True))
    assert status == 200 and whole
    assert h.get("transfer-encoding") == "chunked"
    assert "".join(d["delta"]["text"] for n, d in events(raw)
                   if n == "content_block_delta") == "one two three four"
    e = entry(p)
    assert (e["stream_chunks"], e["stream_end"]) == (4, "done")
    # the three lead events and the first delta at once, then six more
    # events (three deltas, content_block_stop, message_delta,
    # message_stop) 200 ms apart
    assert 6 * 200 - 20 <= span_ms(e) < 6 * 200 + 2000


def test_stall_ends_with_an_overloaded_error_event_and_no_pause(p):
    status, h, raw, whole = post(p, "/stall/v1/messages", body(stream=True))
    assert status == 200 and whole
    ev = events(raw)
    assert [n for n, _ in ev] == ["message_start", "content_block_start", "ping",
                                  "content_block_delta", "error"]
    assert ev[-1][1]["error"]["type"] == "overloaded_error"
    e = entry(p)
    assert (e["stream_chunks"], e["stream_end"]) == (1, "stall")
    assert 1000 - 20 <= span_ms(e) < 1000 + 2000
    assert e["pause_until_us"] is None and e["retry_after"] is None


def rfc3339(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def test_quota_429_is_a_rate_limit_error_with_anthropic_headers(provider):
    q = provider({"id": "messages-quota",
                  "provider": {"keys": {"app-1": {"secret": KEY, "user": "app-team"}},
                               "scope": "key",
                               "quota": {"per_key": 2, "per_user": 10, "period_s": 3600,
                                         "tpm_per_key": 1000, "headers": "anthropic"},
                               "retry_after_ms": True},
                  "routes": [{"id": "m", "kind": "messages", "method": "POST",
                              "path": "/v1/messages", "responses": [{"status": 200}]}]})
    cost = tokens(SYSTEM) + tokens(PROMPT) + 64
    before = time.time()
    status, h, _, _ = post(q, "/v1/messages", body())
    assert status == 200
    assert h["anthropic-ratelimit-requests-limit"] == "2"
    assert h["anthropic-ratelimit-requests-remaining"] == "1"
    for kind in ("tokens", "input-tokens", "output-tokens"):
        assert h[f"anthropic-ratelimit-{kind}-limit"] == "1000"
        assert h[f"anthropic-ratelimit-{kind}-remaining"] == str(1000 - cost)
    # the reset is the instant the bucket is full again: one request's
    # refill, 1800 s, after now
    reset = rfc3339(h["anthropic-ratelimit-requests-reset"])
    assert before + 1800 - 1 <= reset <= time.time() + 1800 + 1
    post(q, "/v1/messages", body())
    status, h, raw, _ = post(q, "/v1/messages", body())
    assert status == 429
    assert h["x-should-retry"] == "true"
    assert h["anthropic-ratelimit-requests-remaining"] == "0"
    ra, ra_ms = int(h["retry-after"]), int(h["retry-after-ms"])
    assert 1790 <= ra <= 1800 and (ra - 1) * 1000 < ra_ms <= ra * 1000
    err = json.loads(raw)
    assert err["type"] == "error" and err["request_id"] == h["request-id"]
    assert err["error"]["type"] == "rate_limit_error"
    assert err["error"]["message"].startswith("Rate limit exceeded (per-key). Limit: 2 per")
    e = entry(q)
    assert (e["status"], e["fault"], e["quota"]) == (429, "quota", "limited per-key replica 1")
    # the exact pause retry-after-ms names, from the decision (between
    # arrival and response)
    assert e["t_arrival_us"] + ra_ms * 1000 <= e["pause_until_us"] <= e["t_response_us"] + ra_ms * 1000


# The graded suite for the Anthropic SDK (scenarios/provider/anthropic/): each
# scenario's first answer is what its title says, whatever client asks.

SUITE = "scenarios/provider/anthropic"


def suite_first_answer(provider, repo_root, name, n=1):
    """The @n-th answer to the first task of scenario @name, sent @n times."""
    sc = json.loads((repo_root / SUITE / name).read_text())
    key = sc["provider"]["keys"][sc["harness"]["tasks"][0]["key"]]["secret"]
    q = provider(repo_root / SUITE / name)
    for _ in range(n):
        got = post(q, "/v1/messages", sc["harness"]["tasks"][0]["body"], key=key)
    return q, got


@pytest.mark.parametrize("name, status, error_type, should_retry, retry_after", [
    ("1-429-retry-after-2.json", 429, "rate_limit_error", "true", "2"),
    ("2-529-overloaded.json", 529, "overloaded_error", "true", None),
    ("4-400-no-retry.json", 400, "invalid_request_error", "false", None),
    ("5-429-retry-after-past-date.json", 429, "rate_limit_error", "true",
     "Wed, 21 Oct 2015 07:28:00 GMT"),
    ("6-529-should-retry-false.json", 529, "overloaded_error", "false", None),
])
def test_suite_scenarios_answer_as_their_titles_say(provider, repo_root, name, status,
                                                    error_type, should_retry, retry_after):
    q, (got, h, raw, _) = suite_first_answer(provider, repo_root, name)
    assert got == status
    assert json.loads(raw)["error"]["type"] == error_type
    assert h["x-should-retry"] == should_retry
    assert h.get("retry-after") == retry_after
    e = entry(q)
    if retry_after == "2":
        assert e["t_arrival_us"] + 2e6 <= e["pause_until_us"] <= e["t_response_us"] + 2e6


def test_suite_stream_gets_one_delta_then_the_error_event(provider, repo_root):
    _, (got, _, raw, whole) = suite_first_answer(provider, repo_root,
                                                 "3-stream-error-event.json")
    assert got == 200 and whole
    names = [n for n, _ in events(raw)]
    assert names == ["message_start", "content_block_start", "ping", "content_block_delta",
                     "error"]


def test_suite_quota_429_carries_retry_after_ms_and_anthropic_headers(provider, repo_root):
    q, (got, h, raw, _) = suite_first_answer(provider, repo_root,
                                             "7-quota-retry-after-ms.json", n=3)
    assert got == 429
    assert json.loads(raw)["error"]["type"] == "rate_limit_error"
    assert h["anthropic-ratelimit-requests-remaining"] == "0"
    ra_ms = int(h["retry-after-ms"])
    assert int(h["retry-after"]) == math.ceil(ra_ms / 1000)
    assert entry(q)["pause_until_us"] is not None
