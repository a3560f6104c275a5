"""The OpenAI-compatible endpoint over HTTP: completions, streams, a shape as the last
frame, a stream cut short, paced and stalling streams and how the journal says each
stream ended, the model list and the 400 for a bad request."""
import json
import socket
import threading
import time
from urllib.parse import urlparse

import pytest

from conftest import estimate_tokens as tokens, post_whole_or_not
from scenarios import key_table, provider_scenario

KEY = "sk-chat-app-1"
REPLY = "Hello from the fake model."
PROMPT = "Say hello, please."


@pytest.fixture
def p(provider, repo_root):
    return provider(repo_root / "scenarios/provider/chat-completions.json")


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
    return post_whole_or_not(p, path, json.dumps(body).encode(),
                             {"Authorization": f"Bearer {KEY}",
                              "Content-Type": "application/json"})


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
    assert (e["stream_chunks"], e["stream_end"]) == (len(REPLY.split()), "done")
    # at once: one body with its length
    assert int(h["content-length"]) == len(body)


def test_a_completion_is_no_stream_in_the_journal(p):
    status, _, _ = p.request("POST", "/v1/chat/completions", key=KEY, body=chat_body())
    assert status == 200
    e = p.journal()["entries"][0]
    assert (e["stream_chunks"], e["stream_end"]) == (None, None)


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
    assert (e["stream_chunks"], e["stream_end"]) == (2, "error_frame")
    # the pause runs retryAfter from the decision, which lies between the
    # arrival and the response's stamp (however late either comes)
    ra_us = err["error"]["retryAfter"] * 1e6
    assert e["pause_until_us"] - e["t_arrival_us"] >= ra_us, e
    assert e["pause_until_us"] - e["t_response_us"] <= ra_us, e
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
    assert (e["stream_chunks"], e["stream_end"]) == (2, "cut")
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
    # valid JSON, but no string the provider's JSON reader holds can carry them
    (b'{"messages": [{"role": "user", "content": "a\\u0000b"}]}',
     "the request body is JSON fakeapi cannot read: a string holds \\u0000"),
    (b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
     "the request body is JSON fakeapi cannot read: a string holds an unpaired surrogate"),
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


# Paced and stalling streams (scenarios/provider/chat-stream-faults.json). Every
# timing is read from the journal, never from the test's own clock.

STREAM_REPLY = "one two three four"


@pytest.fixture
def sp(provider, repo_root):
    return provider(repo_root / "scenarios/provider/chat-stream-faults.json")


def content(f):
    """The reply text carried by SSE frames @f (JSON chunks)."""
    return "".join(json.loads(x)["choices"][0]["delta"].get("content", "")
                   for x in f if x != "[DONE]" and "choices" in json.loads(x))


def span_ms(e):
    return (e["t_done_us"] - e["t_response_us"]) / 1000


def test_paced_stream_spaces_its_frames_and_goes_chunked(sp):
    status, h, body, whole = raw_post(sp, "/v1/paced/chat/completions", chat_body(stream=True))
    assert status == 200 and whole
    assert h["content-type"] == "text/event-stream"
    assert h.get("transfer-encoding") == "chunked" and "content-length" not in h
    f = frames(body)
    assert f[-1] == "[DONE]" and content(f) == STREAM_REPLY
    sp.sent += 1
    e = sp.journal()["entries"][0]
    assert (e["status"], e["fault"], e["delivered"]) == (200, "respond", "complete")
    assert (e["stream_chunks"], e["stream_end"]) == (4, "done")
    # four chunks and the stop chunk ([DONE] goes with it): five frames, 200 ms apart
    assert 4 * 200 - 20 <= span_ms(e) < 4 * 200 + 2000


def test_paced_shape_ends_with_its_error_frame(sp):
    status, _, body, whole = raw_post(sp, "/v1/paced-pool/chat/completions",
                                      chat_body(stream=True))
    assert status == 200 and whole
    f = frames(body)
    assert len(f) == 4 and f[-1] == "[DONE]"
    assert json.loads(f[2])["error"]["code"] == "pool_exhausted"
    sp.sent += 1
    e = sp.journal()["entries"][0]
    assert (e["stream_chunks"], e["stream_end"]) == (2, "error_frame")
    # two chunks, then the error frame with [DONE]: two gaps of 150 ms
    assert 2 * 150 - 20 <= span_ms(e) < 2 * 150 + 2000


def open_stream(sp, path):
    """Send a streaming request on a raw socket; returns the socket."""
    u = urlparse(sp.url)
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    body = json.dumps(chat_body(stream=True)).encode()
    s.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n"
              b"Authorization: Bearer " + KEY.encode() + b"\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    sp.sent += 1
    return s


def test_client_that_gives_up_during_a_stall_is_journaled_gone(sp):
    s = open_stream(sp, "/v1/stall/chat/completions")
    got = b""
    try:
        while got.count(b'"content":') < 2:
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        # then nothing: the client's read timeout fires and it closes
        s.settimeout(0.3)
        with pytest.raises(socket.timeout):
            while True:
                chunk = s.recv(65536)
                assert chunk, got
                got += chunk
    finally:
        s.close()
    assert b"stream_idle_timeout" not in got and b"[DONE]" not in got
    assert got.count(b'"content":') == 2
    e = sp.journal()["entries"][0]
    assert (e["status"], e["delivered"]) == (200, "client_gone")
    assert (e["stream_chunks"], e["stream_end"]) == (2, "client_gone")
    assert e["pause_until_us"] is None  # the idle-timeout frame never went out
    # noticed no later than the end of the 1.5 s silence
    assert span_ms(e) < 1500 + 1000


LONG_WORDS = 20  # chunks of the long paced stream, 200 ms apart


def test_client_that_leaves_a_paced_stream_is_noticed_at_the_next_frame(provider):
    # a 4 s stream, so that a close however late (within seconds) still
    # comes before its end
    lp = provider({"id": "chat-paced-long",
                   "provider": {"keys": {"app-1": {"secret": KEY, "user": "app-team"}},
                                "scope": "key"},
                   "routes": [{"id": "paced", "kind": "chat_completions", "method": "POST",
                               "path": "/v1/paced/chat/completions",
                               "reply": " ".join(["word"] * LONG_WORDS),
                               "responses": [{"status": 200, "chunk_delay_ms": 200}]}]})
    s = open_stream(lp, "/v1/paced/chat/completions")
    got = b""
    try:
        while b'"content":' not in got:
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
    finally:
        s.close()
    lp.sent += 1
    e = lp.journal()["entries"][0]
    assert (e["delivered"], e["stream_end"]) == ("client_gone", "client_gone")
    assert 1 <= e["stream_chunks"] < LONG_WORDS
    # not the whole stream (its stop frame comes LONG_WORDS x 200 ms after
    # the first): gone by the frame after the close
    assert span_ms(e) < LONG_WORDS * 200 - 100


def test_half_closed_client_is_taken_for_gone_at_the_first_wait(sp):
    """docs/internals.md: a peek cannot tell shutdown(SHUT_WR) from a close,
    so a half-closed client gets the frames before the first wait only."""
    s = open_stream(sp, "/v1/paced/chat/completions")
    got = b""
    try:
        s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        s.close()
    assert got.count(b'"content":') == 1 and b"[DONE]" not in got
    e = sp.journal()["entries"][0]
    assert (e["delivered"], e["stream_end"], e["stream_chunks"]) == (
        "client_gone", "client_gone", 1)


def test_stall_that_runs_its_course_ends_with_stream_idle_timeout(sp):
    status, h, body, whole = raw_post(sp, "/v1/stall-ends/chat/completions",
                                      chat_body(stream=True))
    assert status == 200 and whole
    assert "retry-after" not in h
    f = frames(body)
    assert len(f) == 3 and f[-1] == "[DONE]"
    assert content(f[:1]) == "one"
    err = json.loads(f[1])["error"]
    assert list(err) == ["code", "type", "message", "retryAfter"]
    assert (err["code"], err["type"], err["retryAfter"]) == ("stream_idle_timeout",
                                                             "server_error", 2)
    sp.sent += 1
    e = sp.journal()["entries"][0]
    assert (e["status"], e["fault"], e["delivered"], e["retry_after"]) == (
        200, "respond", "complete", None)
    assert (e["stream_chunks"], e["stream_end"]) == (1, "stall")
    # one chunk at once, then 1 s of silence, then the frame
    assert 1000 - 20 <= span_ms(e) < 1000 + 2000
    # the frame's retryAfter is the pause, counted from when it went out
    assert 2e6 <= e["pause_until_us"] - e["t_response_us"] <= e["t_done_us"] - e["t_response_us"] + 2e6


def test_paced_streams_hold_no_pool_thread(sp):
    """Eight 1 s streams on the four-thread pool: more than four answered at once."""
    results = []

    def one():
        results.append(raw_post(sp, "/v1/paced-1s/chat/completions", chat_body(stream=True)))

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(r[0], r[3]) for r in results] == [(200, True)] * 8
    sp.sent += 8
    entries = sp.journal()["entries"]
    assert len(entries) == 8
    for e in entries:
        assert (e["stream_chunks"], e["stream_end"]) == (4, "done")
        assert span_ms(e) >= 4 * 250 - 20
    # a pool thread held per stream would let at most four be answering at
    # once: count the most that were (from the journal, so a request that
    # reached the provider late only narrows the overlap, by its lateness)
    edges = sorted([(e["t_response_us"], 1) for e in entries] +
                   [(e["t_done_us"], -1) for e in entries])
    most = cur = 0
    for _, d in edges:  # at equal times the end (-1) sorts first
        cur += d
        most = max(most, cur)
    assert most > 4, entries


def stall_scenario(quota=None):
    """A chat stream that stalls for 10 minutes after 2 chunks."""
    return provider_scenario(
        "chat-long-stall", key_table(("app-1", KEY, "app-team")),
        [{"id": "stall", "kind": "chat_completions", "method": "POST",
          "path": "/v1/chat/completions", "reply": STREAM_REPLY,
          "responses": [{"status": 200, "stall_after_chunks": 2, "stall_ms": 600000}]}],
        quota=quota)


def test_streams_the_server_stops_are_cut_by_the_provider(provider):
    """SIGTERM while streams sit in their silence: every one ends at once,
    journaled as the provider's doing (dropped, cut), none as client_gone."""
    sp = provider(stall_scenario())
    socks = []
    try:
        for _ in range(12):
            s = open_stream(sp, "/v1/chat/completions")
            socks.append(s)
            got = b""
            while got.count(b'"content":') < 2:
                chunk = s.recv(65536)
                assert chunk, got
                got += chunk
        code, err = sp.stop()
        assert code == 0, err
        for s in socks:  # the provider closed them; the clients were still there
            s.settimeout(10)
            rest = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                rest += chunk
            assert b"stream_idle_timeout" not in rest and b"[DONE]" not in rest
    finally:
        for s in socks:
            s.close()
    entries = [json.loads(line) for line in sp.journal_path.read_text().splitlines()]
    assert len(entries) == 12
    assert {(e["status"], e["delivered"], e["stream_end"], e["stream_chunks"])
            for e in entries} == {(200, "dropped", "cut", 2)}


def test_max_tokens_at_the_int_limit_names_the_cost_the_journal_has(provider):
    p = provider(stall_scenario({"per_key": 100, "tpm_per_key": 1000}))
    body = chat_body()
    body["max_tokens"] = 2147483647
    status, _, got = p.request("POST", "/v1/chat/completions", key=KEY, body=body)
    assert status == 400
    err = json.loads(got)["error"]
    assert err["code"] == "tokens_over_limit"
    assert "reserves 2147483647 tokens" in err["message"], err
    e = p.journal()["entries"][0]
    assert e["tokens"] == 2147483647
