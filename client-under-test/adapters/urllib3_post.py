"""urllib3_post.py -- exec-mode adapter: one request through urllib3's Retry, POST allowed.

What it demonstrates: urllib3's own retry layer with the method allow-list
opened to POST (allowed_methods=None), as applications do to "make writes
reliable". urllib3 then resends the same POST after a connection that broke
before the answer -- a drop after the provider committed included -- with
no idempotency key and no status read: the provider may now hold the write
twice. The harness grades it in exec mode:

    fakeapi-harness run --exec '/usr/bin/python3 client-under-test/adapters/urllib3_post.py {method} {url} {body_file}' SUITE

Arguments: METHOD URL BODY_FILE (the body file may be empty). The key comes
from FAKEAPI_KEY, never from argv. Exit 0 on a 2xx answer, 1 on any other
answer, 2 when urllib3 gave up (retries exhausted or a transport error).
Needs Debian's python3-urllib3 (ci/install-deps).
"""
import os
import sys

import urllib3
from urllib3.util.retry import Retry


def main(argv):
    if len(argv) != 4:
        print("usage: urllib3_post.py METHOD URL BODY_FILE", file=sys.stderr)
        return 2
    method, url, body_file = argv[1], argv[2], argv[3]
    with open(body_file, "rb") as f:
        body = f.read()
    headers = {"Authorization": "Bearer " + os.environ.get("FAKEAPI_KEY", "")}
    if body:
        headers["Content-Type"] = "application/json"
    retry = Retry(
        total=3,
        allowed_methods=None,           # retry every method, POST included
        status_forcelist=(429, 500, 502, 503, 504),
        backoff_factor=0.2,
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    http = urllib3.PoolManager(retries=retry, timeout=urllib3.Timeout(connect=5, read=10))
    try:
        resp = http.request(method, url, body=body or None, headers=headers)
    except urllib3.exceptions.HTTPError as e:
        print(f"urllib3_post: {method} gave up: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(resp.data.decode("utf-8", "replace") + "\n")
    return 0 if 200 <= resp.status < 300 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
