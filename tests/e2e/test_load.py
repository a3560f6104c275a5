"""Load: many keep-alive connections must not stall the server.

DESIGN.md: libmicrohttpd's single-thread epoll mode stalls for good at
128-1024 keep-alive connections, so the chosen mode is trusted only if the
journal counts exactly the requests the load generator completed at 128,
256 and 1024 connections. Bounded in count and time; loopback only.
"""
import asyncio
import resource

import pytest

KEY = "sk-load"
REQUESTS_PER_CONN = 4

SCENARIO = {
    "id": "load",
    "provider": {"keys": {"load": {"secret": KEY, "user": "load"}}},
    "routes": [{"id": "ok", "method": "GET", "path": "/v1/ping",
                "responses": [{"status": 200, "body": {"ok": True}}]}],
}


async def one_connection(host, port, n):
    reader, writer = await asyncio.open_connection(host, port)
    done = 0
    try:
        for i in range(n):
            writer.write(f"GET /v1/ping?fa_task=c HTTP/1.1\r\nHost: {host}\r\n"
                         f"Authorization: Bearer {KEY}\r\n\r\n".encode())
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            assert head.startswith(b"HTTP/1.1 200"), head
            done += 1
    finally:
        writer.close()
    return done


async def load(host, port, conns):
    # open every connection first so they are all alive at once
    return await asyncio.wait_for(
        asyncio.gather(*(one_connection(host, port, REQUESTS_PER_CONN) for _ in range(conns))),
        timeout=90)


@pytest.mark.parametrize("conns", [128, 256, 1024])
def test_journal_counts_every_completed_request(provider, conns):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < conns + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, conns * 2 + 256), hard))
    p = provider(SCENARIO, extra=("--threads", "4"))
    host, port = p.url[len("http://"):].split(":")
    completed = sum(asyncio.run(load(host, int(port), conns)))
    assert completed == conns * REQUESTS_PER_CONN
    # every completed request is journaled exactly once (the journal
    # appends at completion: poll until the late finishers are in)
    import time
    deadline = time.monotonic() + 10
    while p.journal()["count"] < completed and time.monotonic() < deadline:
        time.sleep(0.05)
    j = p.journal()
    assert j["count"] == completed
    assert len({e["seq"] for e in j["entries"]}) == completed
    assert len({e["conn_id"] for e in j["entries"]}) == conns
