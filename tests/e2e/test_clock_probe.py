"""The clock probe of the stdio protocol, answered by every stdio client we ship.

docs/client-protocol.md, "The clock probe": the hello carries `wall_ms`,
and a `{"type": "clock"}` line is answered at once with the wall clock
read then. Each client is started by hand under libfaketime at 10x (as
the harness starts it under --time-scale 10), its hello is read, and a
clock line is sent half a second later: the difference of the two
readings must be ten times the real time between them, within what the
real instants around each reading allow. The Go adapter reads its clock
without the C library, so it must report the real clock instead, which
is what makes the harness refuse it at a scale. Adapters that are not
built or installed here (`make test-adapters`, `make sdk-deps`) are skipped.
"""
import glob
import json
import os
import queue
import subprocess
import threading
import time

import pytest

from conftest import BUILD, REPO

SCALE = 10
GAP_S = 0.5        # real time between the hello and the clock line
SLACK_MS = 30      # clock granularity and scheduling around each reading
FAKETIME_LIB = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))), None)
ADAPTERS = REPO / "client-under-test" / "adapters"

# id -> (argv, what it needs to exist, whether its clock follows libfaketime)
CLIENTS = {
    "reference": ([str(BUILD / "clients" / "reference")], BUILD / "clients" / "reference", True),
    "storm": ([str(BUILD / "clients" / "storm")], BUILD / "clients" / "storm", True),
    "python-urllib3": (["/usr/bin/python3", str(ADAPTERS / "python" / "urllib3_retry.py")],
                       ADAPTERS / "python" / "urllib3_retry.py", True),
    "node-got": (["node", str(ADAPTERS / "node" / "fakeapi-stdio.mjs"), "got"],
                 ADAPTERS / "node" / "node_modules" / "got", True),
    "java-okhttp": ([str(BUILD / "adapters" / "okhttp")],
                    BUILD / "adapters" / "okhttp", True),
    "php-guzzle": ([str(BUILD / "adapters" / "guzzle")],
                   BUILD / "adapters" / "guzzle", True),
    "go-retryablehttp": ([str(BUILD / "adapters" / "go-retryablehttp")],
                         BUILD / "adapters" / "go-retryablehttp", False),
}


class Lines:
    """A started client's stdout, line by line, with a deadline per line."""

    def __init__(self, proc):
        self.q = queue.Queue()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc):
        for line in proc.stdout:
            self.q.put((time.monotonic(), line))
        self.q.put((time.monotonic(), None))

    def next(self, timeout=20):
        """(the real instant it was read, the JSON object)."""
        t, line = self.q.get(timeout=timeout)
        assert line is not None, "the client closed its output"
        return t, json.loads(line)


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_hello_and_clock_line_carry_the_wall_clock_on_the_client_timeline(name, tmp_path):
    argv, needs, follows = CLIENTS[name]
    if FAKETIME_LIB is None:
        pytest.fail("libfaketime is missing: ci/install-deps installs Debian's faketime")
    if not needs.exists():
        pytest.skip(f"{needs} is not there (make test-adapters / make sdk-deps)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKEAPI_")}
    env.update({"FAKETIME": f"+0 x{SCALE}", "LD_PRELOAD": FAKETIME_LIB,
                "CLIENT_STATE_DIR": str(tmp_path),
                # an ASan build must not insist on being first in the link order
                "ASAN_OPTIONS": "verify_asan_link_order=0:" + env.get("ASAN_OPTIONS", "")})
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True, cwd=REPO)
    try:
        lines = Lines(proc)
        hello_read, hello = lines.next()
        assert hello["type"] == "hello", hello
        assert isinstance(hello["wall_ms"], (int, float)), hello
        time.sleep(GAP_S)
        asked = time.monotonic()
        proc.stdin.write('{"type": "clock"}\n')
        proc.stdin.flush()
        answered, clock = lines.next()
        proc.stdin.write('{"type": "shutdown"}\n')
        proc.stdin.flush()
        assert proc.wait(timeout=20) == 0
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert set(clock) == {"type", "wall_ms"} and clock["type"] == "clock", clock
    assert err == "", err  # a clock line is no unknown line
    # The hello was read between the start and the hello's arrival, the
    # clock between the clock line's sending and the answer's arrival.
    low_ms = (asked - hello_read) * 1000 - SLACK_MS
    high_ms = (answered - started) * 1000 + SLACK_MS
    rate = SCALE if follows else 1
    real_ms = (clock["wall_ms"] - hello["wall_ms"]) / rate
    assert low_ms <= real_ms <= high_ms, (
        f"{name}: the readings are {clock['wall_ms'] - hello['wall_ms']:.1f} ms apart, "
        f"expected {rate} x {low_ms:.0f}..{high_ms:.0f} ms")
