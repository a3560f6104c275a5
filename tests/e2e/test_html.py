"""The HTML report (--html): a real run rendered in headless Chromium.

Each case grades curl in exec mode on a short one-off scenario (a 429
with a 1 s Retry-After for two tasks of one account, and an attempt that
names no task), writes the page, and reads it back: the raw bytes are
parsed as HTML5 with every parse error fatal, and Chromium (Debian's
chromium package, installed by ci/install-deps) renders it; the rendered
DOM must carry the summary, a section per scenario and exactly as many
attempt marks in each timeline as the JSON report counts attempts.
Chromium gets its own profile folder and a deadline, and its process
group is killed when the deadline passes, so it cannot hang the suite.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
from html.parser import HTMLParser

import pytest

from scenarios import READ_TASK, key_table, one_route_scenario

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian's chromium package; ci/install-deps installs it)")
CHROMIUM_TIMEOUT_S = 90

AUTH = '-H "Authorization: Bearer $FAKEAPI_KEY"'
# curl's own retries, which wait out a Retry-After in delta-seconds, then
# one attempt that names no task; the exit status is the first curl's.
CLIENT = (f"curl -sS -f --retry 3 -o /dev/null {AUTH} {{url}}; rc=$?; "
          f'curl -s -o /dev/null {AUTH} "$FAKEAPI_URL/v1/records/7"; exit $rc')
ONE_429 = [{"times": 1, "status": 429, "headers": {"Retry-After": "1"},
            "body": {"error": {"code": "rate_limit_exceeded"}}},
           {"status": 200, "body": {"id": "{id}"}}]
TASKS = [dict(READ_TASK), dict(READ_TASK, id="t2")]


def env():
    full = dict(os.environ)
    full.pop("FAKEAPI_LOG", None)
    return full


def grade(harness_bin, tmp_path, *extra, sid="html-429"):
    """Grade CLIENT on the scenario: (process, JSON report, page path)."""
    doc = one_route_scenario(sid, ONE_429, tasks=[dict(t) for t in TASKS],
                             keys=key_table(("k1", "sk-html-k1", "u1")))
    path = tmp_path / f"{sid}.json"
    path.write_text(json.dumps(doc, indent=1))
    page, report = tmp_path / "report.html", tmp_path / "report.json"
    proc = subprocess.run(
        [harness_bin, "run", "-q", "--exec", CLIENT, "--seed", "3",
         "--journal-dir", str(tmp_path / "journals"),
         "--report-json", str(report), "--html", str(page), *extra, str(path)],
        capture_output=True, text=True, timeout=120, env=env(), stdin=subprocess.DEVNULL)
    assert report.exists() and page.exists(), proc.stdout + proc.stderr
    return proc, json.loads(report.read_text()), page


def chromium(tmp_path, *args):
    """Run headless Chromium with @args and a profile of its own under
    @tmp_path; its stdout. The whole process group is killed past the
    deadline."""
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            env=dict(env(), HOME=str(tmp_path)))
    try:
        out, err = proc.communicate(timeout=CHROMIUM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group we started, and only it
        proc.communicate()
        raise AssertionError(f"chromium did not finish within {CHROMIUM_TIMEOUT_S} s")
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    return out.decode()


class Page(HTMLParser):
    """What the tests read of a rendered page: the ids and tags seen, each
    scenario section's attempt marks and timelines."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.tags = set()
        self.scenarios = {}  # data-scenario -> {"seqs": [...], "svgs": n, "checks": [...]}
        self.current = None
        self.summary_text = []
        self.in_summary = False
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for name in ("href", "src"):
            if name in a:
                self.links.append(a[name])
        classes = (a.get("class") or "").split()
        if tag == "header" and a.get("id") == "summary":
            self.in_summary = True
        if self.in_summary and tag in ("p", "tr", "th", "td"):
            self.summary_text.append(" ")  # a cell ends a word
        if tag == "section" and "scenario" in classes:
            self.current = self.scenarios.setdefault(
                a["data-scenario"], {"seqs": [], "svgs": 0, "checks": []})
        if self.current is None:
            return
        if tag == "svg":
            self.current["svgs"] += 1
        if tag == "circle" and "attempt" in classes:
            self.current["seqs"].append(int(a["data-seq"]))
        if tag == "tr" and "check" in classes:
            self.current["checks"].append((a["data-check"], classes[1]))

    def handle_endtag(self, tag):
        if tag == "section":
            self.current = None
        if tag == "header":
            self.in_summary = False

    def handle_data(self, data):
        if self.in_summary:
            self.summary_text.append(data)


def read_page(text):
    p = Page()
    p.feed(text)
    p.close()
    return p


def journal_seqs(tmp_path, sid):
    lines = (tmp_path / "journals" / f"{sid}.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["seq"] for line in lines if line.strip())


def test_page_is_valid_html5_and_self_contained(harness_bin, tmp_path):
    import html5lib

    proc, report, page = grade(harness_bin, tmp_path)
    raw = page.read_bytes()
    raw.decode("utf-8")  # strict: every byte UTF-8
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(raw)  # raises on the first parse error
    text = raw.decode()
    assert text.startswith("<!DOCTYPE html>\n")
    assert "<script" not in text.lower() and "@import" not in text and "url(" not in text
    p = read_page(text)
    assert all(link.startswith("#") for link in p.links), p.links  # no asset, no remote
    assert p.ids >= {"summary", "why", "profile", "scenario-1"}


@needs_chromium
def test_rendered_page_has_the_summary_and_a_mark_per_attempt(harness_bin, tmp_path):
    proc, report, page = grade(harness_bin, tmp_path)
    assert proc.returncode == report["exit_code"] == 1, proc.stderr  # the stray attempt
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    p = read_page(dom)

    summary = " ".join("".join(p.summary_text).split())
    assert "fakeapi-harness report: html-429" in summary
    assert "seed 3" in summary and "mode exec" in summary
    assert f"level reached: {report['level']}" in summary
    assert f"exit code {report['exit_code']}: {report['exit_reason']}" in summary
    assert "curl -s -o /dev/null" in summary
    assert {"header", "main", "section", "svg", "circle", "details"} <= p.tags

    assert set(p.scenarios) == {s["id"] for s in report["scenarios"]}
    for s in report["scenarios"]:
        got = p.scenarios[s["id"]]
        assert got["svgs"] == 1
        # exactly one mark per attempt the JSON report counts, one per journal entry
        assert len(got["seqs"]) == s["attempts"] == len(journal_seqs(tmp_path, s["id"]))
        assert sorted(got["seqs"]) == journal_seqs(tmp_path, s["id"])
        assert s["unattributed_attempts"] == 2
        # every check, with the JSON report's verdict
        want = [(c["id"], {"pass": "pass", "fail": "fail", "n/a": "na"}[c["verdict"]])
                for c in s["checks"]]
        assert sorted(got["checks"]) == sorted(want)


@needs_chromium
def test_screenshot_renders_at_the_window_size(harness_bin, tmp_path):
    _, _, page = grade(harness_bin, tmp_path)
    shot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri())
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (1200, 900)
    assert len(png) > 20000  # drawn, not a blank page


def test_html_on_stdout_moves_the_text_report_to_stderr(harness_bin, tmp_path):
    doc = one_route_scenario("html-stdout", [{"status": 200, "body": {"id": "{id}"}}],
                             keys=key_table(("k1", "sk-html-k1", "u1")))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    proc = subprocess.run(
        [harness_bin, "run", "-q", "--exec", f"curl -sS -f -o /dev/null {AUTH} {{url}}",
         "--html", "-", str(path)],
        capture_output=True, text=True, timeout=120, env=env(), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>\n") and proc.stdout.endswith("</html>\n")
    assert proc.stdout.count('<circle class="attempt ') == 1
    assert "exit code 0: " in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--html", "{tmp}/no-such-dir/r.html"],
     "fakeapi-harness: --html: cannot write {tmp}/no-such-dir/r.html: No such file or directory\n"),
    (["--html", "-", "--junit", "-"],
     "fakeapi-harness: --junit - and --html -: one report on stdout at a time, give the "
     "other a file (see fakeapi-harness --help)\n"),
])
def test_bad_html_option_exits_2_before_anything_runs(harness_bin, tmp_path, args, message):
    doc = one_route_scenario("html-bad", [{"status": 200}],
                             keys=key_table(("k1", "sk-html-k1", "u1")))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    marker = tmp_path / "ran"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([harness_bin, "run", "-q", "--exec", f"touch {marker}", *args,
                           str(path)],
                          capture_output=True, text=True, timeout=60, env=env(),
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr == message.replace("{tmp}", str(tmp_path))
    assert not marker.exists()


def test_gate_passes_html_on(harness_bin, repo_root, tmp_path):
    doc = one_route_scenario("html-gate", [{"status": 200, "body": {"id": "{id}"}}],
                             keys=key_table(("k1", "sk-html-k1", "u1")))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    page = tmp_path / "gate.html"
    proc = subprocess.run(
        ["/bin/sh", str(repo_root / "ci" / "fakeapi-gate"), "--suite", str(path),
         "--html", str(page), "--exec", f"curl -sS -f -o /dev/null {AUTH} {{url}}"],
        capture_output=True, text=True, timeout=120,
        env=dict(env(), FAKEAPI_HARNESS=harness_bin), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.endswith(f"fakeapi-gate: HTML report in {page}\n")
    assert page.read_text().count('<circle class="attempt ') == 1
