"""httpx_transport.py -- stdio adapter: httpx with its transport's retries.

Library: httpx 0.23 (Debian 12's python3-httpx 0.23.3, on httpcore
0.16.3).

Retry configuration: httpx's only built-in retry is the transport's
`retries` (https://www.python-httpx.org/advanced/#usage_1, "Using
advanced httpcore configuration, with connection retries":
`httpx.HTTPTransport(retries=1)`). It retries establishing the
connection only: httpcore's HTTPConnection._connect() retries on
ConnectError and ConnectTimeout, with 0 s, 0.5 s, 1 s, ... between tries
(httpcore/_sync/connection.py, RETRIES_BACKOFF_FACTOR). A request that
reached the server is never retried, whatever its status: a 429, a 503 or
a dropped answer comes straight back to the application, and Retry-After
is never read. From the task's budget: retries = max_attempts - 1; httpx
has no wait knob, so max_wait_s is not mapped. One Client per budget
(the transport is fixed when the Client is made), shared by every thread
("It can be shared between threads", httpx.Client's docstring), with its
default timeout (5 s, every phase).

Hook: the Client's event hooks (https://www.python-httpx.org/advanced/#event-hooks),
live: "request" before each request is sent (`action_sent`), "response"
once its status and headers are in (`action_result`). A connection retry
happens inside the transport, below the hooks, but it never reaches the
server, so the journal holds one attempt per hooked request.

Cancel: none (httpx's sync Client cannot be stopped from another
thread): the call runs on to its end and `cancelled` is reported then
(fakeapi_stdio.py).

Outcome: a returned Response by its status; an httpx.TransportError
(a refused or dropped connection, a timeout) is failed, sent unknown.
"""
import sys

import httpx

import fakeapi_stdio

NAME = "httpx"
DIST = "httpx"
CONFIG = ("Client(transport=HTTPTransport(retries=max_attempts-1), event_hooks=request/response), "
          "one per budget; default timeout 5 s; no status retries (httpx has none)")
HOOKED = True


def _on_request(request):
    task = fakeapi_stdio.current()
    if task is not None:
        task.sent()


def _on_response(response):
    task = fakeapi_stdio.current()
    if task is not None:
        task.got(response.status_code, response.headers.get("Retry-After"))


def _client(task):
    retries = max(0, task.max_attempts - 1) if task.max_attempts is not None else 0
    return httpx.Client(transport=httpx.HTTPTransport(retries=retries),
                        event_hooks={"request": [_on_request], "response": [_on_response]})


def gave_up_on_status(exc):
    """Never: httpx returns every status it gets."""
    return False


def run(task):
    client = fakeapi_stdio.shared(("client", task.max_attempts), lambda: _client(task))
    return client.request(task.method, task.url, headers=task.headers, content=task.body)


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
