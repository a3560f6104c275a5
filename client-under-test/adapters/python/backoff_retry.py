"""backoff_retry.py -- stdio adapter: backoff.on_exception around requests.

Library: backoff 2.x (Debian 12's python3-backoff 2.2.1), retrying one
requests call (plain_requests.py: a shared Session without retries of
its own) that raises for a status with raise_for_status().

Retry configuration, from backoff's README
(https://github.com/litl/backoff#readme, /usr/share/doc/python3-backoff):
@backoff.on_exception(backoff.expo, requests.exceptions.RequestException,
max_tries=..., max_time=..., giveup=...), applied to the call at run time
with the task's budget: max_tries = max_attempts ("the maximum number of
calls to make to the target function before giving up"), max_time =
max_wait_s ("the maximum amount of total time in seconds that can elapse
before giving up"; backoff also cuts a wait short at what is left of it).
The README's giveup example gives up on every 4xx (`400 <=
e.response.status_code < 500`), 429 included; here giveup is the
README's shape with the application's retry set: give up on an HTTP
status other than 429, 500, 502, 503 and 504. Default jitter, full_jitter
("the 'Full Jitter' algorithm": a wait uniform in 0..1, 0..2, 0..4 s ...).
on_exception never reads Retry-After: the README's Retry-After example is
a separate @on_predicate(backoff.runtime, ...) decorator with its own
counts (and an int() that fails on the HTTP-date form), so it is not
stacked here.

Hook: backoff calls the decorated function once per attempt, so each
call is reported by Task.attempt() (live, before and after it);
on_backoff ("wait: seconds to wait") reports `retry_scheduled`, live,
before backoff sleeps.

Cancel: none (backoff sleeps with time.sleep and has no stop signal): the
call runs on to its end, what it still sends counts in `attempts`, and
`cancelled` is reported then (fakeapi_stdio.py).

Outcome: a Response by its status; the HTTPError backoff re-raises when it
gives up on a status is failed with that status; any other requests
exception is a transport error (failed, sent unknown).
"""
import sys

import backoff
import requests

import fakeapi_stdio
import plain_requests

NAME = "backoff"
DIST = "backoff"
CONFIG = ("on_exception(expo, RequestException, max_tries=max_attempts, max_time=max_wait_s, "
          "giveup=status not in (429, 500, 502, 503, 504), on_backoff=hook) "
          "around one requests call with raise_for_status() (Session, no retries, "
          "timeout=(5, 10))")
HOOKED = True


def _giveup(exc):
    resp = getattr(exc, "response", None)
    return resp is not None and not plain_requests.retryable(resp)


def _on_backoff(details):
    task = fakeapi_stdio.current()
    if task is not None:
        task.scheduled(details["wait"])


def _once(task):
    resp = plain_requests.call(task)
    resp.raise_for_status()
    return resp


def gave_up_on_status(exc):
    """The HTTPError of raise_for_status(), re-raised when backoff gives up."""
    return isinstance(exc, requests.exceptions.HTTPError) and exc.response is not None


def run(task):
    decorate = backoff.on_exception(backoff.expo, requests.exceptions.RequestException,
                                    max_tries=task.max_attempts, max_time=task.max_wait_s,
                                    giveup=_giveup, on_backoff=_on_backoff)
    return decorate(_once)(task)


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
