"""The OpenAI-compatible endpoint over HTTP: completions, streams, a shape as the last
frame, a stream cut short, the model list and the 400 for a bad request."""
import http.client
import json
import math
import time
from urllib.parse import urlparse

import pytest

KEY = "sk-chat-app-1"
REPLY = "Hello from the fake model."
PROMPT = "Say hello, please."


@pytest.fixture
def p(provider, repo_root):
    return provider(repo_root / "scenarios/provider/chat-completions.json")


def tokens(text):
    """The documented estimate: ceil(UTF-8 bytes / 4)."""
    return math.ceil(len(text.encode()) / 4)


def chat_body(stream=False, model="gpt-test"):
    return {"model": model, "stream": stream, "max_tokens": 64,
            "messages": [{"role": "system", "content": "You are terse."},
                         {"role": "user", "content": PROMPT}]}


def frames(body):
    """The SSE frames of @body, each the text after "data: "; asserts the framing."""
    text = body.decode()
    out = []
    for event in text.split("\n\n"):
        if event == "":
            continue
        assert event.startswith("data: "), event
        out.append(event[len("data: "):])
    return out


def raw_post(p, path, body):
    """POST with http.client: (status, headers, bytes read, whether the body was whole)."""
    u = urlparse(p.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Authorization": f"Bearer {KEY}",
                              "Content-Type": "application/json"})
        resp = conn.getresponse()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        try:
            return resp.status, headers, resp.read(), True
        except http.client.IncompleteRead as e:
            return resp.status, headers, e.partial, False
    finally:
        conn.close()


def test_completion_fields_and_usage(p):
    before = int(time.time())
    status, h, body = p.request("POST", "/v1/chat/completions", key=KEY, body=chat_body())
    assert status == 200, body
    assert h["content-type"] == "application/json"
    c = json.loads(body)
    assert list(c) == ["id", "object", "created", "model", "choices", "usage"]
    assert c["id"] == "chatcmpl-1"
    assert c["object"] == "chat.completion"
    assert before <= c["created"] <= int(time.time())
    assert c["model"] == "gpt-test"
    assert c["choices"] == [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                             "finish_reason": "stop"}]
    prompt = tokens("You are terse.") + tokens(PROMPT)
    assert c["usage"] == {"prompt_tokens": prompt, "completion_tokens": tokens(REPLY),
                          "total_tokens": prompt + tokens(REPLY)}
    status, _, body = p.request("POST", "/v1/chat/completions", key=KEY, body=chat_body())
    assert json.loads(body)["id"] == "chatcmpl-2"
    e = p.journal()["entries"][0]
    assert (e["route"], e["status"], e["fault"]) == ("chat", 200, "respond")


def test_stream_chunks_reassemble_and_end_with_done(p):
    status, h, body, whole = raw_post(p, "/v1/chat/completions", chat_body(stream=True))
    assert status == 200 and whole
    assert h["content-type"] == "text/event-stream"
    f = frames(body)
    assert f[-1] == "[DONE]"
    chunks = [json.loads(x) for x in f[:-1]]
    text = ""
    for c in chunks[:-1]:
        assert list(c) == ["id", "object", "created", "model", "choices"]
        assert (c["id"], c["object"], c["model"]) == ("chatcmpl-1", "chat.completion.chunk",
                                                      "gpt-test")
        (choice,) = c["choices"]
        assert choice["index"] == 0 and choice["finish_reason"] is None
        assert list(choice["delta"]) == ["content"]
        text += choice["delta"]["content"]
    assert text == REPLY
    assert len(chunks) - 1 == len(REPLY.split())  # one chunk per word
    assert chunks[-1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    p.sent += 1
    e = p.journal()["entries"][0]
    assert (e["route"], e["status"], e["fault"]) == ("chat", 200, "respond")


def test_shape_is_the_last_frame_after_n_chunks(p):
    status, h, body, whole = raw_post(p, "/v1/pool/chat/completions", chat_body(stream=True))
    assert status == 200 and whole
    assert h["content-type"] == "text/event-stream"
    assert "retry-after" not in h  # the 200 went out before the error was known
    f = frames(body)
    assert len(f) == 4 and f[-1] == "[DONE]"
    text = "".join(json.loads(x)["choices"][0]["delta"]["content"] for x in f[:2])
    assert text == "Hello from"
    err = json.loads(f[2])
    assert list(err) == ["error"]
    assert list(err["error"]) == ["code", "type", "retryAfter"]
    assert (err["error"]["code"], err["error"]["type"]) == ("pool_exhausted", "server_error")
    assert 3 <= err["error"]["retryAfter"] <= 7
    p.sent += 1
    e = p.journal()["entries"][0]
    assert (e["route"], e["status"], e["fault"], e["retry_after"]) == ("chat-pool", 200,
                                                                       "respond", None)
    pause = e["pause_until_us"] - e["t_response_us"]
    assert (err["error"]["retryAfter"] - 0.2) * 1e6 <= pause <= err["error"]["retryAfter"] * 1e6
    # the next answer of the route is a normal stream again
    _, _, body, _ = raw_post(p, "/v1/pool/chat/completions", chat_body(stream=True))
    assert frames(body)[-1] == "[DONE]" and "error" not in body.decode()


def test_shape_without_stream_is_the_plain_answer(p):
    status, h, body = p.request("POST", "/v1/pool/chat/completions", key=KEY, body=chat_body())
    assert status == 503
    assert 3 <= int(h["retry-after"]) <= 7
    assert json.loads(body)["error"]["code"] == "pool_exhausted"


def test_stop_after_chunks_cuts_the_stream_without_done(p):
    status, h, body, whole = raw_post(p, "/v1/stop/chat/completions", chat_body(stream=True))
    assert status == 200 and not whole
    assert h["content-type"] == "text/event-stream"
    assert b"[DONE]" not in body
    f = frames(body)
    assert len(f) == 2
    assert "".join(json.loads(x)["choices"][0]["delta"]["content"] for x in f) == "Hello from"
    p.sent += 1
    e = p.journal()["entries"][0]
    assert (e["route"], e["status"], e["fault"]) == ("chat-stop", 200, "partial_body")
    # the entry after it streams whole
    _, _, body, whole = raw_post(p, "/v1/stop/chat/completions", chat_body(stream=True))
    assert whole and frames(body)[-1] == "[DONE]"


def test_models_lists_the_routes_models(p):
    status, h, body = p.request("GET", "/v1/models", key=KEY)
    assert status == 200
    assert json.loads(body) == {"object": "list", "data": [
        {"id": "fake-model-1", "object": "model", "created": 0, "owned_by": "fakeapi"},
        {"id": "fake-model-2", "object": "model", "created": 0, "owned_by": "fakeapi"}]}


@pytest.mark.parametrize("body, why", [
    (b"{not json", "not valid JSON"),
    (json.dumps({"model": "m"}).encode(), "'messages' must be a non-empty array"),
])
def test_bad_request_is_400_and_moves_no_cursor(p, body, why):
    status, h, got = p.request("POST", "/v1/stop/chat/completions", key=KEY, body=body)
    assert status == 400
    e = json.loads(got)["error"]
    assert (e["type"], e["code"]) == ("invalid_request_error", "invalid_request")
    assert why in e["message"]
    # the route's first entry (the cut stream) is still to come
    _, _, _, whole = raw_post(p, "/v1/stop/chat/completions", chat_body(stream=True))
    assert not whole


def test_unknown_key_is_401(p):
    status, _, _ = p.request("POST", "/v1/chat/completions", key="sk-wrong", body=chat_body())
    assert status == 401
