"""The five-step suite's pauses of minutes and hours (scenarios 20-22).

A one-minute Retry-After, the platform's growing cooldown (60, 120, 240 s)
and a daily AI-quota reset six hours away: real pauses, affordable only on
a scaled clock, so they are in scenarios/five-step/ alone, never in the
fast suites `make test` runs. Here their design is pinned from the files
(the budget of the cooldown holds two pauses and never the third), and
the one that ends at once, the daily reset, is run for real: the
reference client escalates at its first answer and curl stops there.
"""
import json
import os
import subprocess

from conftest import BUILD, REPO

FIVE_STEP = REPO / "scenarios" / "five-step"
LONG = ["20-retry-after-one-minute.json", "21-ai-provider-cooldown.json",
        "22-ai-quota-daily-reset.json"]
CURL = "client-under-test/adapters/cli/curl_retry.sh {method} {url} {body_file}"
# The platform's rate-limit contract as the provider plays it
# (docs/scenario-format.md, "The platform's answer shapes"): the first
# cooldown, and the longest, four times the first.
COOLDOWN_S = [60, 120, 240]
# The reference client's widest jitter window (docs/reference-client.md).
JITTER_MAX_S = 30


def load(name):
    return json.loads((FIVE_STEP / name).read_text())


def run(harness_bin, tmp_path, *client):
    report = tmp_path / "report.json"
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    proc = subprocess.run([harness_bin, "run", "-q", *client, "--seed", "7",
                           "--report-json", str(report), str(FIVE_STEP / LONG[2])],
                          capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL, cwd=REPO)
    assert report.exists(), proc.stderr
    return proc, json.loads(report.read_text())["scenarios"][0]


def verdicts(s):
    return {c["id"]: c["verdict"] for c in s["checks"]}


def test_the_long_pauses_end_the_default_suite_and_stay_out_of_the_fast_ones():
    suite = json.loads((FIVE_STEP / "suite.json").read_text())
    assert suite["version"] == "6"
    assert len(suite["scenarios"]) == 22 and suite["scenarios"][-3:] == LONG
    for fast in ("five-step-fast", "conformance-fast", "matrix-fast", "adapters"):
        listed = json.loads((REPO / "scenarios" / fast / "suite.json").read_text())["scenarios"]
        assert not any(name.endswith(tuple(LONG)) for name in listed), fast


def test_the_one_minute_retry_after_fits_the_read_budget():
    doc = load(LONG[0])
    first = doc["routes"][0]["responses"][0]
    task = doc["harness"]["tasks"][0]
    assert (first["status"], first["retry_after"], first["body"]["error"]["retryAfter"]) == (
        429, 60, 60)
    # room for the whole minute and the jitter on top of it, none for a cap
    # at 30 s to go unnoticed: an early retry is refused again
    assert task["budget"] == {"max_attempts": 4, "max_wait_s": 90}
    assert task["outcome"] == "succeeded" and doc["provider"]["during_pause"]["status"] == 429


def test_the_cooldown_budget_holds_two_pauses_and_never_the_third():
    doc = load(LONG[1])
    assert doc["routes"][0]["responses"] == [{"shape": "ai_provider_cooldown"}]
    task = doc["harness"]["tasks"][0]
    wait = task["budget"]["max_wait_s"]
    # 60 and 120 fit even with a full jitter window after each; 240 after
    # them never does, so a client that reads each header escalates there
    assert sum(COOLDOWN_S[:2]) + 2 * JITTER_MAX_S <= wait < sum(COOLDOWN_S)
    assert task["budget"]["max_attempts"] > len(COOLDOWN_S)
    assert task["outcome"] == "escalated"
    assert doc["harness"]["expect"]["budget.escalates"]["tasks"] == ["t1"]
    assert doc["harness"]["timeout_s"] > wait + 15  # the task's own timeout fits


def test_daily_reset_reference_escalates_at_its_first_answer(harness_bin, tmp_path):
    proc, s = run(harness_bin, tmp_path, "--client", str(BUILD / "clients" / "reference"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = verdicts(s)
    for check in ("attempts.bounded", "outcome.expected", "budget.escalates",
                  "escalation.sanitised"):
        assert v[check] == "pass", (check, s["checks"])
    assert v["wait.retry_after"] == "n/a"  # nothing was retried
    (t1,) = s["tasks"]
    assert (t1["outcome"], t1["attempts"], s["attempts"]) == ("escalated", 1, 1)
    record = t1["escalation"]
    assert (record["reason"], record["wait_requested_s"]) == ("wait_exceeds_budget", 21600)
    assert record["attempts"][0]["retry_after"] == "21600"


def test_daily_reset_curl_stops_where_retry_after_exceeds_its_max_time(harness_bin, tmp_path):
    # man curl, --retry and --retry-max-time: curl 7.66+ complies with
    # Retry-After, and gives up when that wait would run past the max time
    proc, s = run(harness_bin, tmp_path, "--exec", CURL)
    v = verdicts(s)
    assert (v["attempts.bounded"], v["outcome.expected"]) == ("pass", "pass")
    assert (v["wait.retry_after"], v["budget.escalates"]) == ("n/a", "n/a")
    (t1,) = s["tasks"]
    assert (t1["exit_code"], t1["attempts"], t1["timed_out"]) == (22, 1, False)
