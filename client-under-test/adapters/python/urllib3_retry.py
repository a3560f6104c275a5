"""urllib3_retry.py -- stdio adapter: urllib3's Retry on one shared PoolManager.

Library: urllib3 1.26 (Debian 12's python3-urllib3 1.26.12), written
against its Retry class.

Retry configuration, as urllib3's user guide shows it
(https://urllib3.readthedocs.io/en/1.26.x/user-guide.html#retrying-requests
and the Retry reference,
https://urllib3.readthedocs.io/en/1.26.x/reference/urllib3.util.html#urllib3.util.Retry):
a Retry object passed per request (`http.request(..., retries=Retry(...))`)
on one PoolManager shared by every thread (urllib3's pools are
thread-safe). From the task's budget: total = max_attempts - 1 (Retry
counts retries, the budget attempts). Otherwise:
backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504), and the
defaults: respect_retry_after_header=True (Retry-After is honoured on
413, 429 and 503, in both its forms, for as long as it says: 1.26 has no
cap on it), allowed_methods = the idempotent methods (a POST is never
retried), raise_on_status=True. urllib3 1.26 has no knob for a total wait
(its backoff is capped per wait at Retry.DEFAULT_BACKOFF_MAX, 120 s), so
max_wait_s is not mapped. 1.26 adds no jitter to its backoff (2.x's
backoff_jitter is not in 1.26). The request timeout follows the user
guide's advice to set one: Timeout(connect=5, read=10).

Hook: urllib3 has no retry callback (urllib3 declined one: PR #1676); the
application sees its retries through the Retry object, which urllib3 calls
back on every failed attempt: increment() with the response or the error
(the Retry's `history` grows there), then sleep() before the next one
(requests' own hooks see only the final response: psf/requests#4514).
HookedRetry reports from those two calls, live: increment() gives the
attempt's `action_result`, sleep() the `retry_scheduled` (the wait from
Retry's own get_retry_after() / get_backoff_time()) and, once it has
slept, the next `action_sent`. The first attempt is announced before the
request call. A response urllib3 does not retry (a 2xx, a 400) reaches no
hook: its outcome is reported from what request() returned. MaxRetryError
carries no history (urllib3#2096), so only these live calls count every
attempt.

Cancel: none. urllib3 has no way to stop a request or its sleep from
another thread: the call runs on to its end (a retry it still sends
shows in the journal and counts in `attempts`), and `cancelled` is
reported then (fakeapi_stdio.py).

Outcome: a returned response by its status; MaxRetryError after retried
statuses ("too many 503 error responses") is failed with the last status
the hook saw (sent yes); a transport error is failed, sent unknown.
"""
import sys

import urllib3
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

import fakeapi_stdio

NAME = "urllib3"
DIST = "urllib3"
RETRY_STATUSES = (429, 500, 502, 503, 504)
TIMEOUT = urllib3.Timeout(connect=5, read=10)
CONFIG = ("Retry(total=max_attempts-1, backoff_factor=0.5, "
          "status_forcelist=(429, 500, 502, 503, 504), respect_retry_after_header=True) "
          "per request on one PoolManager(timeout=Timeout(connect=5, read=10))")
HOOKED = True


class HookedRetry(Retry):
    """Retry that reports each attempt to the task of the calling thread."""

    def increment(self, method=None, url=None, response=None, error=None,
                  _pool=None, _stacktrace=None):
        task = fakeapi_stdio.current()
        if task is not None:
            if response is not None:
                task.got(response.status, response.headers.get("Retry-After"))
            else:
                task.got(0, error=f"{type(error).__name__}: {error}")
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def sleep(self, response=None):
        task = fakeapi_stdio.current()
        if task is not None:
            due, reason = None, "backoff"
            if self.respect_retry_after_header and response is not None:
                try:
                    due = self.get_retry_after(response)
                except Exception:  # sleep() below raises the same error
                    due = None
                reason = "retry_after" if due else "backoff"
            task.scheduled(due if due else self.get_backoff_time(), reason)
        super().sleep(response)
        if task is not None:
            task.sent()


def retry_for(task):
    """The Retry an application would build from @task's budget."""
    kw = {}
    if task.max_attempts is not None:
        kw["total"] = max(0, task.max_attempts - 1)
    return HookedRetry(backoff_factor=0.5, status_forcelist=RETRY_STATUSES, **kw)


def gave_up_on_status(exc):
    """MaxRetryError("too many 503 error responses"): out of retries on a status."""
    return isinstance(exc, MaxRetryError) and isinstance(exc.reason, ResponseError)


def run(task):
    http = fakeapi_stdio.shared("pool", lambda: urllib3.PoolManager(timeout=TIMEOUT))
    task.sent()
    return http.request(task.method, task.url, body=task.body, headers=task.headers,
                        retries=retry_for(task))


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
