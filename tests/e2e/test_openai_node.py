"""The official openai SDK for Node.js, graded through its exec adapter.

client-under-test/adapters/openai-node runs one chat completion per task
with the SDK as shipped (major 6, pinned by its lockfile; `make test`
installs it with `npm ci`). The suite scenarios/provider/openai-node is
run once for the module; each test then reads one fact from the report or
from the provider's journal of that scenario. What the SDK does is
recorded as it is, failures included: a test here fails when the SDK's
behaviour (or the harness's verdict on it) changes, not when the SDK
breaks a rule.
"""
import re
import shutil

import pytest

from conftest import REPO, graded_run

ADAPTER = REPO / "client-under-test" / "adapters" / "openai-node"
SUITE = REPO / "scenarios" / "provider" / "openai-node" / "suite.json"
TOLERANCE_US = 50_000  # wait.retry_after's default tolerance
# the graded run takes ~60 s: one test worker does it once (make test
# distributes with --dist loadgroup)
pytestmark = pytest.mark.xdist_group("openai-node")


@pytest.fixture(scope="module")
def graded(harness_bin, tmp_path_factory):
    """Run the suite once: (report, {scenario id: [journal entries]})."""
    assert shutil.which("node"), "node missing: ci/install-deps installs it"
    assert (ADAPTER / "node_modules" / "openai").is_dir(), \
        "the openai SDK is not installed: run `make sdk-deps`"
    out = tmp_path_factory.mktemp("openai-node")
    return graded_run(harness_bin,
                      ["--jobs", "4", "--seed", "11",
                       "--exec", f"node {ADAPTER / 'adapter.mjs'} {{body_file}}"],
                      SUITE, out, timeout=300)


def verdicts(report, scenario_id):
    s = next(s for s in report["scenarios"] if s["id"] == scenario_id)
    return {c["id"]: c for c in s["checks"]}


def retry_gap_us(entries):
    """The first retry's arrival minus the first answer's, µs."""
    assert len(entries) >= 2, entries
    return entries[1]["t_arrival_us"] - entries[0]["t_response_us"]


def test_the_sdk_counts_its_retries_in_x_stainless_retry_count(graded):
    _, journals, _ = graded
    entries = journals["openai-node-429-retry-after-2"]
    counts = [e["attempt_headers"]["x-stainless-retry-count"] for e in entries]
    assert counts == ["0", "1"], counts
    assert [e["status"] for e in entries] == [429, 200]


@pytest.mark.parametrize("scenario,pause_s", [
    ("openai-node-429-retry-after-2", 2),
    ("openai-node-429-retry-after-60", 60),
])
def test_the_sdk_waits_the_whole_retry_after(graded, scenario, pause_s):
    report, journals, _ = graded
    entries = journals[scenario]
    assert entries[0]["status"] == 429 and entries[0]["retry_after"] == str(pause_s)
    assert retry_gap_us(entries) >= pause_s * 1_000_000 - TOLERANCE_US
    assert verdicts(report, scenario)["wait.retry_after"]["verdict"] == "pass"


def test_the_sdk_waits_a_503s_seeded_retry_after(graded):
    report, journals, _ = graded
    entries = journals["openai-node-503-pool-exhausted"]
    assert entries[0]["status"] == 503
    pause_s = int(entries[0]["retry_after"])
    assert 3 <= pause_s <= 7  # the platform's rate-limit contract: drawn from 3..7 s
    assert retry_gap_us(entries) >= pause_s * 1_000_000 - TOLERANCE_US
    assert entries[-1]["status"] == 200


def test_the_sdk_does_not_retry_a_stream_that_ended_in_an_error_frame(graded):
    _, journals, _ = graded
    entries = journals["openai-node-stream-error-frame"]
    assert len(entries) == 1, entries
    assert entries[0]["status"] == 200


def test_a_past_retry_after_date_makes_the_sdk_resend_at_once(graded):
    """Given the budget's 3 retries (maxRetries), the SDK sleeps
    Date.parse(date) - Date.now() on a past date, a negative time, and
    resends at once (client.js retryRequest): four attempts within a few
    ms, a tight loop attempts.bounded names; it does reach the 200."""
    report, journals, _ = graded
    sid = "openai-node-429-retry-after-past-date"
    entries = journals[sid]
    assert len(entries) == 4, [e["seq"] for e in entries]
    assert entries[-1]["t_arrival_us"] - entries[0]["t_arrival_us"] < 100_000
    bounded = verdicts(report, sid)["attempts.bounded"]
    assert bounded["verdict"] == "fail"
    assert "sent 3 attempts within 100 ms after the Retry-After" in bounded["detail"], bounded
    assert verdicts(report, sid)["outcome.expected"]["verdict"] == "pass"


def test_eight_sdk_workers_come_back_as_one_wave(graded):
    """The SDK honours Retry-After to the millisecond and adds no jitter of
    its own, so eight processes told the same pause retry together: the
    report says so with the wave as evidence (the platform's rate-limit contract asks clients for
    100-1000 ms of their own jitter on top)."""
    report, journals, _ = graded
    checks = verdicts(report, "openai-node-eight-workers-one-pause")
    jitter = checks["wait.jitter"]
    assert jitter["verdict"] == "fail", jitter
    assert re.search(r"one wave: (all 8|7 of 8) returns within", jitter["detail"]), jitter
    assert len(jitter["evidence"]) >= 8
    assert checks["wait.retry_after"]["verdict"] == "pass"
    entries = journals["openai-node-eight-workers-one-pause"]
    assert sorted(e["status"] for e in entries) == [200] * 8 + [429] * 8


def test_the_sdk_does_not_retry_a_422(graded):
    report, journals, _ = graded
    entries = journals["openai-node-422-no-retry"]
    assert [e["status"] for e in entries] == [422]
    assert verdicts(report, "openai-node-422-no-retry")[
        "classify.no_retry_4xx"]["verdict"] == "pass"


def test_the_sdk_reads_retry_after_ms_before_retry_after(graded):
    """Three workers of one key start together; the bucket holds two and
    refills one per 2.5 s, so the last to arrive gets the quota's 429 with
    Retry-After: 3 and retry-after-ms with the exact refill time (2.5 s less
    the lag between the first and the last arrival). The SDK comes back
    after the latter: no earlier than the journal's exact pause, and before
    any client that went by Retry-After could (its whole seconds after the
    answer went out; 0.5 s or more later, room for a late timer)."""
    report, journals, _ = graded
    entries = journals["openai-node-retry-after-ms"]
    refused = next(e for e in entries if e["status"] == 429)
    retry = next(e for e in entries if e["seq"] > refused["seq"] and e["task"] == refused["task"])
    assert refused["quota"].startswith("limited per-key") and refused["retry_after"] == "3"
    exact_us = refused["pause_until_us"] - refused["t_response_us"]
    assert 2_000_000 < exact_us <= 2_500_000, exact_us
    # the pause is retry-after-ms from the decision, between arrival and answer
    ms_us = int(refused["retry_after_ms"]) * 1000
    assert exact_us <= ms_us <= refused["pause_until_us"] - refused["t_arrival_us"]
    assert retry["t_arrival_us"] >= refused["pause_until_us"] - TOLERANCE_US
    assert retry["t_arrival_us"] < refused["t_response_us"] + int(refused["retry_after"]) * 1_000_000
    assert retry["attempt_headers"]["x-stainless-retry-count"] == "1"
    judged = verdicts(report, "openai-node-retry-after-ms")["wait.retry_after"]
    assert judged["verdict"] == "pass"
    # the detail names the header the SDK went by, beside the whole seconds
    assert f'the retry-after-ms "{refused["retry_after_ms"]}" (Retry-After "3")' in judged["detail"]


def test_the_report_grades_the_sdk_and_says_why_it_failed(graded):
    report, _, proc = graded
    assert report["mode"] == "exec"
    by_id = {c["id"]: c["verdict"] for c in report["checks"]}
    assert by_id["wait.jitter"] == "fail"
    assert by_id["attempts.bounded"] == "fail"  # the past date: resent at once
    assert by_id["wait.retry_after"] == "pass"
    assert by_id["classify.no_retry_4xx"] == "pass"
    assert by_id["outcome.expected"] == "pass"
    assert report["level"] == "L0"  # and L2 fails on wait.jitter
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a required check failed
