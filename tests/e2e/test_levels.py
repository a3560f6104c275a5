"""Levels over covered checks, and the profile, on a client in exec mode.

An exec client reports no attempt count, so attempts.hidden is not covered
there: the client reaches L2 on what the suite can judge, and the profile
says which checks were judged. A level whose every check is not covered
(L3 here: no task writes) is not reached.
"""
import json
import os

from test_harness import run_harness

# A shell-free exec client in Python: one process per task, the scope's
# pause shared through a file in CLIENT_STATE_DIR (read before every
# attempt, the first one included), full jitter on the return, no retry
# of a 4xx, the budget from the environment.
CLIENT = r'''
import email.utils, fcntl, os, random, sys, time, urllib.error, urllib.request

url = sys.argv[1]
state = os.environ["CLIENT_STATE_DIR"]
pause = os.path.join(state, "scope-pause")
max_attempts = int(os.environ.get("FAKEAPI_MAX_ATTEMPTS", "4"))


def next_allowed():
    try:
        with open(pause) as f:
            return float(f.read())
    except (OSError, ValueError):
        return 0.0


def extend(until):
    with open(pause + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if until > next_allowed():
            tmp = "%s.%d" % (pause, os.getpid())
            with open(tmp, "w") as f:
                f.write(repr(until))
            os.replace(tmp, pause)


def delay_of(value):
    if value is None:
        return None
    try:
        return float(int(value.strip()))
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


for attempt in range(max_attempts):
    wait = next_allowed() - time.time()
    if wait > 0:
        time.sleep(wait + random.uniform(0.0, 1.5))
    req = urllib.request.Request(url, headers={
        "Authorization": "Bearer " + os.environ["FAKEAPI_KEY"]})
    try:
        with urllib.request.urlopen(req, timeout=10):
            sys.exit(0)
    except urllib.error.HTTPError as e:
        status, ra = e.code, e.headers.get("Retry-After")
    except OSError:
        status, ra = 0, None
    if status in (400, 401, 403, 404, 422):
        sys.exit(1)
    delay = delay_of(ra)
    if delay is not None and delay > 0:
        extend(time.time() + delay)
    else:
        time.sleep(random.uniform(0.2, 1.0) * 2 ** attempt)
sys.exit(1)
'''

SCENARIOS = ("1-step-1-3-shared-read", "2-retry-after-http-date", "4-no-retry-400",
             "6-step-3-spread")


def test_exec_client_reaches_l2_without_attempts_hidden(harness_bin, repo_root, tmp_path):
    client = tmp_path / "client.py"
    client.write_text(CLIENT)
    fast = repo_root / "scenarios" / "five-step-fast"
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({
        "id": "levels-exec", "version": "1",
        "scenarios": [os.path.relpath(fast / f"{n}.json", tmp_path) for n in SCENARIOS]}))
    report = tmp_path / "report.json"
    proc = run_harness(harness_bin, "run", "--exec", f"/usr/bin/python3 {client} {{url}}",
                       "--seed", "3", "--report-json", str(report), str(suite))
    assert report.exists(), proc.stderr
    r = json.loads(report.read_text())
    profile = r["profile"]
    assert profile["attempts.hidden"] == {"value": "not_covered", "pass": 0, "fail": 0,
                                          "n/a": 0, "not_covered": 4}
    for cid in ("attempts.bounded", "wait.retry_after", "classify.no_retry_4xx",
                "wait.scope_pause", "wait.jitter"):
        assert profile[cid]["value"] == "pass", (cid, profile[cid], proc.stdout)
    # only step 1-3 and step 3 release a task of a shared scope after the first
    assert profile["wait.scope_pause"]["not_covered"] == 2
    # no task writes: the whole of L3 is not covered, and not reached
    for cid in ("write.key_stable", "write.no_duplicate", "write.reconcile_first",
                "ambiguity.preserved"):
        assert profile[cid]["value"] == "not_covered"
    assert r["level"] == "L2", proc.stdout
    assert r["exit_code"] == 0 and proc.returncode == 0
    rows = {c["id"]: c for c in r["checks"]}
    assert rows["attempts.hidden"]["covered"] is False
    assert rows["attempts.hidden"]["verdict"] == "n/a"
    assert rows["wait.scope_pause"]["covered"] is True
    for s in r["scenarios"]:
        hidden = next(c for c in s["checks"] if c["id"] == "attempts.hidden")
        assert hidden["covered"] is False
        assert hidden["detail"] == "not judged here: an exec client reports no attempt count"
    assert r["summary"]["not_covered"] == sum(p["not_covered"] for p in profile.values())
    # the text report's last screen
    assert "profile (P pass, F fail, ? n/a, - not covered):\n" in proc.stdout
    assert "  L2  wait.scope_pause P  wait.jitter P  attempts.hidden -" in proc.stdout
    # n/a checks are counted, not listed, unless -v
    assert "  N/A   attempts.hidden" not in proc.stdout
    assert " checks had nothing to judge in any scenario (-v lists them)\n" in proc.stdout
    assert "level reached: L2\n" in proc.stdout
