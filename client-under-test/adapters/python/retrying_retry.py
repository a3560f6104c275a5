"""retrying_retry.py -- stdio adapter: retrying's @retry around requests.

Library: retrying 1.3 (Debian 12's python3-retrying 1.3.3, the last
release, 2014; tenacity is its maintained fork), retrying one requests
call (plain_requests.py: a shared Session without retries of its own).

Retry configuration, from retrying's README
(https://github.com/rholder/retrying#readme): the @retry decorator,
applied to the call at run time with the task's budget:
stop_max_attempt_number = max_attempts, stop_max_delay = max_wait_s in
ms (checked after an attempt, so the wait that follows may run past it),
and the README's exponential backoff, wait_exponential_multiplier=1000,
wait_exponential_max=10000 ("Wait 2^x * 1000 milliseconds between each
retry, up to 10 seconds, then 10 seconds afterwards": 2 s after the first
failure, 4 s, 8 s, 10 s ...), without jitter (wait_jitter_max is not in
the README). What is retried: retry_on_exception for a
requests.exceptions.RequestException, retry_on_result for a status in
429, 500, 502, 503, 504 (the README's retry_if_io_error /
retry_if_result_none shapes). retrying never reads Retry-After and
retries a POST like any call.

Hook: retrying has no callback of any kind, but it calls the decorated
function once per attempt, so each call is reported by Task.attempt()
(live, before and after it). No `retry_scheduled`: the wait it draws is
not exposed.

Cancel: none (retrying sleeps with time.sleep and has no stop signal): the
call runs on to its end, what it still sends counts in `attempts`, and
`cancelled` is reported then (fakeapi_stdio.py).

Outcome: a Response by its status; RetryError (it stopped on a retried
status) is unwrapped to its last Response, failed with its status; a
requests exception is re-raised by retrying as it was (wrap_exception
False), a transport error: failed, sent unknown.
"""
import sys

import requests
import retrying

import fakeapi_stdio
import plain_requests

NAME = "retrying"
DIST = "retrying"
CONFIG = ("@retry(stop_max_attempt_number=max_attempts, stop_max_delay=max_wait_s*1000, "
          "wait_exponential_multiplier=1000, wait_exponential_max=10000, "
          "retry_on_exception=RequestException, "
          "retry_on_result=status in (429, 500, 502, 503, 504)) "
          "around one requests call (Session, no retries, timeout=(5, 10))")
HOOKED = True


def _transport_error(exc):
    return isinstance(exc, requests.exceptions.RequestException)


def gave_up_on_status(exc):
    """Never raised: a RetryError on a status is unwrapped in run()."""
    return False


def run(task):
    kw = {}
    if task.max_attempts is not None:
        kw["stop_max_attempt_number"] = task.max_attempts
    if task.max_wait_s is not None:
        kw["stop_max_delay"] = task.max_wait_s * 1000
    decorate = retrying.retry(wait_exponential_multiplier=1000, wait_exponential_max=10000,
                              retry_on_exception=_transport_error,
                              retry_on_result=plain_requests.retryable, **kw)
    try:
        return decorate(plain_requests.call)(task)
    except retrying.RetryError as e:
        return e.last_attempt.value  # the last Response


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
