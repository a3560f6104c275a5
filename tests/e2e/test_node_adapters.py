"""The Node.js stdio adapters (client-under-test/adapters/node), one harness
run per library on the scenarios that pin the generic part: the hello
names the library and its installed version, every attempt the library
makes is reported from its hooks (attempts.hidden), a cancel stops it
(cancel.quiet, outcome cancelled), and a write whose body was cut short is
reported as sent "unknown" (ambiguity.preserved). What each library does
beyond that (docs/adapters-node.md) is its own behaviour, not pinned here.
"""
import json
import shutil

import pytest

from conftest import REPO, graded_run
from scenarios import report_scenario

ADAPTERS = REPO / "client-under-test" / "adapters" / "node"
FAST = REPO / "scenarios" / "five-step-fast"
SCENARIOS = ["7-hidden-retry-503.json", "17-step-5-cancel-pending-retry.json",
             "11-write-partial-body.json"]
PACKAGES = {"got": "got", "ky": "ky", "axios": "axios-retry", "p-retry": "p-retry",
            "fetch-retry": "fetch-retry", "undici": "undici", "openai": "openai",
            "anthropic": "@anthropic-ai/sdk"}
# eight short runs, ~50 s in all, on the test worker that also grades the
# openai SDK (tests/e2e/test_openai_node.py; make test distributes with
# --dist loadgroup): run side by side, their Node.js processes slowed each
# other enough to spread the SDK's one wave of retries over 500 ms
pytestmark = pytest.mark.xdist_group("openai-node")


def adapter_cmd(lib):
    return f"node {ADAPTERS / 'fakeapi-stdio.mjs'} {lib}"


def run(harness_bin, out, lib, files):
    """Run the adapter of @lib on the scenario @files (one suite):
    (report, {scenario id: [journal entries]})."""
    assert shutil.which("node"), "node missing: ci/install-deps installs it"
    assert (ADAPTERS / "node_modules" / "got").is_dir(), \
        "the Node.js adapters' libraries are not installed: run `make sdk-deps`"
    names = []
    for f in files:  # a suite names its scenarios relative to its folder
        if f.parent != out:
            shutil.copy(f, out / f.name)
        names.append(f.name)
    suite = out / "suite.json"
    suite.write_text(json.dumps({"id": f"node-{lib}", "version": "1",
                                 "title": f"the {lib} adapter's checks", "scenarios": names}))
    report, journals, _ = graded_run(harness_bin, ["--jobs", "2", "--client", adapter_cmd(lib)],
                                     suite, out, timeout=180)
    return report, journals


@pytest.fixture(scope="module", params=sorted(PACKAGES))
def graded(request, harness_bin, tmp_path_factory):
    lib = request.param
    out = tmp_path_factory.mktemp(f"node-{lib}")
    report, journals = run(harness_bin, out, lib, [FAST / f for f in SCENARIOS])
    return lib, report, journals


def verdict(report, sid, check):
    return next(c for c in report_scenario(report, sid)["checks"] if c["id"] == check)


def test_the_hello_names_the_library_and_its_installed_version(graded):
    lib, report, _ = graded
    pkg = PACKAGES[lib]
    installed = json.loads((ADAPTERS / "node_modules" / pkg / "package.json").read_text())
    client = report["client"]["hello"]["client"]
    assert client["name"] == pkg
    assert client["version"] == installed["version"]
    assert client["adapter"] == "node stdio adapter 1"
    assert client["config"]


def test_no_protocol_error_and_no_key_printed(graded):
    _, report, _ = graded
    for s in report["scenarios"]:
        assert s["protocol_errors"] == [], (s["id"], s["protocol_errors"])
        assert s["canary_hits"] == [], (s["id"], s["canary_hits"])


def test_the_hooks_count_the_librarys_own_retry(graded):
    _, report, journals = graded
    entries = journals["hidden-retry-503"]
    assert [e["status"] for e in entries] == [503, 200]
    assert verdict(report, "hidden-retry-503", "attempts.hidden")["verdict"] == "pass"
    assert report_scenario(report, "hidden-retry-503")["tasks"][0]["outcome"] == "succeeded"


def test_a_cancel_stops_the_pending_retry(graded):
    _, report, _ = graded
    sid = "step-5-cancel-pending-retry"
    assert verdict(report, sid, "cancel.quiet")["verdict"] == "pass"
    assert verdict(report, sid, "attempts.hidden")["verdict"] == "pass"
    assert report_scenario(report, sid)["tasks"][0]["outcome"] == "cancelled"


def test_a_write_cut_short_is_reported_as_unknown(graded):
    """The libraries raise a transport error for a 201 whose body was cut
    (axios's carries the response's status too): failed with sent
    "unknown", never "yes" (p-retry retries it, and the retry's answer is
    whole)."""
    _, report, _ = graded
    assert verdict(report, "write-partial-body", "ambiguity.preserved")["verdict"] == "pass"


ANTHROPIC = REPO / "scenarios" / "provider" / "anthropic"


def test_the_anthropic_sdk_on_the_messages_endpoint(harness_bin, tmp_path):
    """messages.create against the provider's Anthropic-compatible
    endpoint: the SDK waits out a 429's retry-after and succeeds, and
    neither a 400 nor a 529 with x-should-retry: false is sent again."""
    files = [ANTHROPIC / f for f in ("1-429-retry-after-2.json", "4-400-no-retry.json",
                                     "6-529-should-retry-false.json")]
    report, journals = run(harness_bin, tmp_path, "anthropic", files)
    got = {sid: [e["status"] for e in sorted(j, key=lambda e: e["t_arrival_us"])]
           for sid, j in journals.items()}
    assert got == {"anthropic-429-retry-after-2": [429, 200], "anthropic-400-no-retry": [400],
                   "anthropic-529-should-retry-false": [529]}, got
    outcome = {sid: report_scenario(report, sid)["tasks"][0]["outcome"] for sid in got}
    assert outcome == {"anthropic-429-retry-after-2": "succeeded",
                       "anthropic-400-no-retry": "failed",
                       "anthropic-529-should-retry-false": "failed"}, outcome
    assert verdict(report, "anthropic-429-retry-after-2", "wait.retry_after")["verdict"] == "pass"
    assert verdict(report, "anthropic-400-no-retry", "classify.no_retry_4xx")["verdict"] == "pass"
    for sid in got:
        assert verdict(report, sid, "attempts.hidden")["verdict"] == "pass", sid
