"""plain_requests.py -- one attempt through requests, for the retry decorators.

tenacity, backoff and retrying retry an application's function; here that
function makes one request through a requests.Session shared by every
thread, with requests' default of no retries of its own (HTTPAdapter's
max_retries=0: urllib3's Retry(0, read=False), which never resends), so
every call of it is exactly one attempt on the wire and the decorator is
the only layer that retries. Each call is reported by Task.attempt():
`action_sent` before it, `action_result` once the whole answer is in (or
the transport error). The request timeout is the one requests asks
production code to set: (5, 10) s.

RETRY_STATUSES is the set an application retries on with these
libraries (none of them knows HTTP): the statuses urllib3's documentation
puts in status_forcelist and curl's --retry calls transient, less 408.
"""
import requests

import fakeapi_stdio

TIMEOUT = (5, 10)
RETRY_STATUSES = (429, 500, 502, 503, 504)


def _request(task):
    session = fakeapi_stdio.shared("plain-session", requests.Session)
    return session.request(task.method, task.url, headers=task.headers, data=task.body,
                           timeout=TIMEOUT)


def call(task):
    """One attempt of @task, reported; the Response, or requests' exception."""
    return task.attempt(_request, task)


def retryable(resp):
    """Whether the application retries this Response."""
    return resp.status_code in RETRY_STATUSES
