"""tenacity_retry.py -- stdio adapter: tenacity's Retrying around requests.

Library: tenacity 8.x (Debian 12's python3-tenacity 8.2.1), retrying one
requests call (plain_requests.py: a shared Session without retries of
its own).

Retry configuration, from tenacity's documentation
(https://tenacity.readthedocs.io/en/latest/): a Retrying object built
from the task's budget ("Changing Arguments at Run Time": "If you want to
use variables to set up the retry parameters, you don't have to use the
`retry` decorator - you can instead use `Retrying` directly"),
stop=stop_after_attempt(max_attempts) | stop_after_delay(max_wait_s)
("You can combine several stop conditions by using the `|` operator"),
and wait=wait_random_exponential(multiplier=1, max=60), the documented
choice "When multiple processes are in contention for a shared resource"
("Randomly wait up to 2^x * 1 seconds between each retry until the range
reaches 60 seconds"; its docstring names the AWS "Full Jitter"
algorithm). What
is retried ("Whether to retry"): retry_if_exception_type(
requests.exceptions.RequestException) | retry_if_result(status in 429,
500, 502, 503, 504). tenacity knows nothing of HTTP: it never reads
Retry-After, and retries a POST like any call. stop_after_delay is
checked after an attempt, so the wait that follows may run past
max_wait_s (tenacity 8.2 has no stop_before_delay).

Hook: tenacity calls the wrapped function once per attempt, so each call
is reported by Task.attempt() (action_sent before it, action_result after
it, live); before_sleep reports `retry_scheduled` with the wait tenacity
drew (retry_state.next_action.sleep), live, before it sleeps.

Cancel: stop=... | stop_when_event_set(task.cancel) ("Stop when the given
event is set", tenacity.stop). It is a stop condition, so tenacity
checks it after an attempt failed: a cancel that comes during a wait lets
the wait run out and one more attempt go out; then it stops. The result
(`cancelled`) is reported when the call returns.

Outcome: a Response by its status; RetryError (stopped after a retried
status, reraise=False, tenacity's default) is unwrapped to its last
attempt: a Response is failed with its status, an exception is raised
again (a requests exception is a transport error: failed, sent unknown).
"""
import sys

import requests
import tenacity
from tenacity import (Retrying, retry_if_exception_type, retry_if_result,
                      stop_after_attempt, stop_after_delay, stop_when_event_set,
                      wait_random_exponential)

import fakeapi_stdio
import plain_requests

NAME = "tenacity"
DIST = "tenacity"
CONFIG = ("Retrying(stop=stop_after_attempt(max_attempts) | stop_after_delay(max_wait_s) | "
          "stop_when_event_set(cancel), wait=wait_random_exponential(multiplier=1, max=60), "
          "retry=retry_if_exception_type(RequestException) | "
          "retry_if_result(status in (429, 500, 502, 503, 504)), before_sleep=hook) "
          "around one requests call (Session, no retries, timeout=(5, 10))")
HOOKED = True


def _before_sleep(retry_state):
    task = fakeapi_stdio.current()
    if task is not None:
        task.scheduled(retry_state.next_action.sleep)


def _retrying(task):
    stop = stop_when_event_set(task.cancel)
    if task.max_attempts is not None:
        stop = stop | stop_after_attempt(task.max_attempts)
    if task.max_wait_s is not None:
        stop = stop | stop_after_delay(task.max_wait_s)
    return Retrying(stop=stop, wait=wait_random_exponential(multiplier=1, max=60),
                    retry=(retry_if_exception_type(requests.exceptions.RequestException)
                           | retry_if_result(plain_requests.retryable)),
                    before_sleep=_before_sleep)


def gave_up_on_status(exc):
    """Never raised: a RetryError on a status is unwrapped in run()."""
    return False


def run(task):
    try:
        return _retrying(task)(plain_requests.call, task)
    except tenacity.RetryError as e:
        return e.last_attempt.result()  # the last Response, or its exception raised


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
