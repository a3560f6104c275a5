"""requests_retry.py -- stdio adapter: requests with urllib3's Retry mounted.

Library: requests 2.x (Debian 12's python3-requests 2.28.1) on urllib3
1.26; its own retries are urllib3's.

Retry configuration, as requests documents it: "max_retries: The maximum
number of retries each connection should attempt ... If you need granular
control over the conditions under which we retry a request, import
urllib3's Retry class and pass that instead"
(https://requests.readthedocs.io/en/latest/api/#requests.adapters.HTTPAdapter),
mounted on a Session (https://requests.readthedocs.io/en/latest/user/advanced/#transport-adapters):
HTTPAdapter(max_retries=Retry(total=max_attempts-1, backoff_factor=0.5,
status_forcelist=(429, 500, 502, 503, 504))) on a Session shared by every
thread. A mounted Retry is fixed when the Session is made, so the process
keeps one Session per budget (the suites' scenarios mostly have one; the
budget scenario has a read of 6 attempts and a write of 3). Retry's
defaults otherwise (Retry-After honoured on 413, 429 and 503 without a
cap, POST never retried, no jitter, no total-wait knob: max_wait_s is not
mapped; see urllib3_retry.py). The timeout requests asks production code
to set ("Nearly all production code should use this parameter in nearly
all requests", https://requests.readthedocs.io/en/latest/user/quickstart/#timeouts):
timeout=(5, 10).

Hook: the same HookedRetry as urllib3_retry.py (increment() and sleep()
of the mounted Retry, live; requests' response hooks fire once per call,
not per retry: psf/requests#4514). The first attempt is announced before
the call.

Cancel: none (a requests call cannot be stopped from another thread): the
call runs on to its end, its retries counted in `attempts`, and
`cancelled` is reported then (fakeapi_stdio.py).

Outcome: a returned Response by its status; requests' RetryError (urllib3
ran out of retries on a status) is failed with the last status the hook
saw; a ConnectionError or Timeout is failed, sent unknown.
"""
import sys

import requests
from requests.adapters import HTTPAdapter

import fakeapi_stdio
from urllib3_retry import retry_for

NAME = "requests"
DIST = "requests"
TIMEOUT = (5, 10)
CONFIG = ("Session with HTTPAdapter(max_retries=Retry(total=max_attempts-1, backoff_factor=0.5, "
          "status_forcelist=(429, 500, 502, 503, 504))) mounted, one per budget; "
          "timeout=(5, 10)")
HOOKED = True


def _session(task):
    s = requests.Session()
    adapter = HTTPAdapter(max_retries=retry_for(task))
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


def gave_up_on_status(exc):
    """requests' RetryError: urllib3 ran out of retries on a status."""
    return isinstance(exc, requests.exceptions.RetryError)


def run(task):
    session = fakeapi_stdio.shared(("session", task.max_attempts), lambda: _session(task))
    task.sent()
    return session.request(task.method, task.url, headers=task.headers, data=task.body,
                           timeout=TIMEOUT)


if __name__ == "__main__":
    fakeapi_stdio.serve(sys.modules[__name__])
