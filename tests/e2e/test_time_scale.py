"""--time-scale: the provider and the client on one virtual timeline.

What is pinned here: a scaled run states its scale in the journal and
the reports, the journal still verifies and its pauses are the announced
ones in virtual seconds, and a client whose clock does not follow the
scale is refused (exit 2) with the reason, never graded. That the
verdicts at scale equal the ones at scale 1 on real clients is
test_time_scale_verdicts.py's business.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import BUILD, REPO

SCALE = "20"
SHARED_READ = str(REPO / "scenarios/five-step/1-step-1-3-shared-read.json")
NO_RETRY = str(REPO / "scenarios/five-step/4-no-retry-400.json")

# A stdio client that says hello (with its clock unless told not to),
# answers the clock probe, and reports every task as failed at once.
TINY = textwrap.dedent("""\
    import json, sys, time
    def emit(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    hello = {"type": "hello", "protocol": 1, "client": {"name": "tiny", "version": "0"}}
    if "--no-wall" not in sys.argv:
        hello["wall_ms"] = time.time() * 1000
    if "--text-wall" in sys.argv:
        hello["wall_ms"] = str(time.time() * 1000)
    emit(hello)
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "clock" and "--garbage-clock" in sys.argv:
            sys.stdout.write("clock? what clock\\n"); sys.stdout.flush()
        elif m["type"] == "clock":
            emit({"type": "clock", "wall_ms": time.time() * 1000})
        elif m["type"] == "task":
            emit({"type": "result", "task": m["id"], "outcome": "failed", "attempts": 0,
                  "waited_ms": 0, "sent": "no", "status": 0, "provider_id": None})
        elif m["type"] == "shutdown":
            break
    """)


def harness(harness_bin, *args, timeout=120):
    return subprocess.run([harness_bin, "run", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny") / "tiny.py"
    path.write_text(TINY)
    return path


def test_a_scale_past_the_largest_is_refused_with_the_reason(harness_bin):
    proc = harness(harness_bin, "--time-scale", "50", NO_RETRY)
    assert proc.returncode == 2
    assert "--time-scale: expected 1 or a number 2..20, got '50': a larger scale would " \
           "multiply the scheduler's wake-up error" in proc.stderr
    proc = harness(harness_bin, "--time-scale", "0.5", NO_RETRY)
    assert proc.returncode == 2
    assert "expected 1 or a number 2..20, got '0.5'" in proc.stderr


def test_a_scale_too_close_to_1_to_check_is_refused_with_the_reason(harness_bin):
    proc = harness(harness_bin, "--time-scale", "1.5", NO_RETRY)
    assert proc.returncode == 2
    assert "--time-scale: expected 1 or a number 2..20, got '1.5': below 2 the clock " \
           "check cannot tell a scaled sleep from a real one" in proc.stderr


@pytest.mark.parametrize("lib", ["/bin/true", "/dev/null", "directory"])
def test_a_library_that_does_not_scale_is_blamed_not_the_client(harness_bin, lib, tmp_path):
    """A preloaded file that is no libfaketime leaves the probe's sleep at
    1 s of real time: the harness names it before any client runs."""
    lib = str(tmp_path) if lib == "directory" else lib
    env = dict(os.environ, FAKEAPI_LIBFAKETIME=lib)
    proc = subprocess.run([harness_bin, "run", "--time-scale", SCALE, NO_RETRY],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert ("--time-scale: the probe `sh -c 'date; sleep 1; date'` does not run on the "
            "virtual clock, under %s (FAKEAPI_LIBFAKETIME names it: point it at "
            "libfaketimeMT.so.1 or unset it): libfaketime's sleep does not follow "
            "--time-scale 20: a 1 s sleep took 1." % lib) in proc.stderr
    assert "client" not in proc.stderr


def test_scaled_journal_is_virtual_states_its_scale_and_verifies(harness_bin, fakeapi_bin,
                                                                 tmp_path):
    rep = tmp_path / "r.json"
    proc = harness(harness_bin, "--time-scale", SCALE, "--journal-dir", str(tmp_path),
                   "--report-json", str(rep), SHARED_READ)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "time scale: 20 (every time below is virtual" in proc.stdout
    report = json.loads(rep.read_text())
    assert report["time_scale"] == 20
    assert "clock probe" in report["clock_check"]
    jpath = tmp_path / "step-1-3-shared-read.jsonl"
    lines = [json.loads(l) for l in jpath.read_text().splitlines()]
    assert lines and all(l["time_scale"] == 20 for l in lines)
    # the 429's Retry-After: 10 names an instant 10 virtual seconds on
    first = lines[0]
    assert first["retry_after"] == "10"
    # (the instant is taken as the answer is built, a few virtual µs before
    # it is stamped as handed out)
    assert abs(first["pause_until_us"] - first["t_response_us"] - 10_000_000) < 50_000
    # the retry honoured it on the virtual clock: never before, and well
    # inside the scenario, though the whole run took a fraction of that
    retry = next(l for l in lines[1:] if l["task"] == first["task"])
    assert retry["t_arrival_us"] >= first["pause_until_us"] - 50_000
    ok = subprocess.run([fakeapi_bin, "verify-journal", str(jpath)], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr


def test_a_stdio_client_without_its_clock_in_hello_is_refused(harness_bin, tiny):
    proc = harness(harness_bin, "--time-scale", SCALE, "--client",
                   f"/usr/bin/python3 {tiny} --no-wall", NO_RETRY)
    assert proc.returncode == 2
    assert "client's hello carries no wall_ms: under --time-scale the client must " \
           "report its clock" in proc.stderr


def test_a_hello_whose_clock_is_no_number_is_refused_as_such(harness_bin, tiny):
    proc = harness(harness_bin, "--time-scale", SCALE, "--client",
                   f"/usr/bin/python3 {tiny} --text-wall", NO_RETRY)
    assert proc.returncode == 2
    assert "client's hello has a wall_ms that is not a number: under --time-scale" \
        in proc.stderr


def test_an_unreadable_answer_to_the_clock_probe_is_refused_at_once(harness_bin, tiny):
    proc = harness(harness_bin, "--time-scale", SCALE, "--client",
                   f"/usr/bin/python3 {tiny} --garbage-clock", NO_RETRY)
    assert proc.returncode == 2
    assert "client answered the clock probe with line 2: " in proc.stderr
    assert "did not answer" not in proc.stderr


def test_a_stdio_client_on_the_real_clock_is_refused(harness_bin, tiny):
    # without the preloaded library the client reads real time, as a Go
    # program would
    proc = harness(harness_bin, "--time-scale", SCALE, "--client",
                   f"env -u LD_PRELOAD /usr/bin/python3 {tiny}", NO_RETRY)
    assert proc.returncode == 2
    assert "client's clock does not follow --time-scale 20" in proc.stderr


def test_a_stdio_client_on_the_timeline_is_graded(harness_bin, tiny, tmp_path):
    rep = tmp_path / "r.json"
    proc = harness(harness_bin, "--time-scale", SCALE, "--client", f"/usr/bin/python3 {tiny}",
                   "--report-json", str(rep), NO_RETRY)
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(rep.read_text())["scenarios"][0]["error"] is None


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("bins")
    (d / "s.c").write_text("int main(void) { return 0; }\n")
    (d / "g.c").write_text('const char go[] __attribute__((used)) = "\\xff Go buildinf:x";\n'
                           "int main(void) { return 0; }\n")
    subprocess.run(["cc", "-static", "-o", str(d / "static"), str(d / "s.c")], check=True)
    subprocess.run(["cc", "-o", str(d / "gofake"), str(d / "g.c")], check=True)
    (d / "wrapped.sh").write_text(f"#!/usr/bin/env {d / 'static'}\n")
    (d / "wrapped.sh").chmod(0o755)
    return d


@pytest.mark.parametrize("template, message", [
    ("{bins}/static {url}", "{bins}/static is statically linked: libfaketime cannot reach "
                            "its clock"),
    ("{bins}/gofake {url}", "{bins}/gofake is a Go program: Go reads its clock without "
                            "the C library"),
    ("{bins}/wrapped.sh {url}", "{bins}/wrapped.sh, a script for {bins}/static is "
                                "statically linked"),
    ("$CLIENT {url}", "cannot tell which program the exec template runs (its first "
                      "word: '$CLIENT')"),
    ("no-such-client {url}", "'no-such-client': no such program on PATH"),
])
def test_an_exec_client_that_cannot_follow_is_refused(harness_bin, binaries, template,
                                                      message):
    proc = harness(harness_bin, "--time-scale", SCALE, "--exec",
                   template.format(bins=binaries, url="{url}"), NO_RETRY)
    assert proc.returncode == 2
    assert message.format(bins=binaries) in proc.stderr
    assert "[1/1]" not in proc.stderr  # refused before any scenario ran


def test_an_exec_interpreter_is_probed_and_the_report_says_so(harness_bin, tmp_path):
    rep = tmp_path / "r.json"
    proc = harness(harness_bin, "--time-scale", SCALE, "--report-json", str(rep), "--exec",
                   "/usr/bin/python3 -c 'import sys; sys.exit(1)' {url}", NO_RETRY)
    assert proc.returncode in (0, 1), proc.stderr
    check = json.loads(rep.read_text())["clock_check"]
    assert "dynamically linked, not Go, probed: its clock and sleep follow the scale" in check
    # what the check cannot see is in the report, not only in the docs
    assert "only this first program is checked: a program it starts that does not " \
           "follow the scale (statically linked, Go, or run without LD_PRELOAD) waits " \
           "20 times too long and is graded as if it chose to" in check


def test_the_gate_passes_the_scale_on(harness_bin, tmp_path):
    env = dict(os.environ, FAKEAPI_HARNESS=harness_bin)
    proc = subprocess.run(["sh", str(REPO / "ci/fakeapi-gate"), "--time-scale", SCALE,
                           "--suite", SHARED_READ, "--", str(BUILD / "clients/reference")],
                          capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "time scale: 20" in proc.stdout


@pytest.mark.parametrize("form", [["--time-scale", ""], ["--time-scale="]])
def test_the_gate_refuses_an_empty_scale_rather_than_run_unscaled(harness_bin, form):
    env = dict(os.environ, FAKEAPI_HARNESS=harness_bin)
    proc = subprocess.run(["sh", str(REPO / "ci/fakeapi-gate"), *form, "--suite", NO_RETRY,
                           "--", str(BUILD / "clients/reference")],
                          capture_output=True, text=True, timeout=60, cwd=REPO, env=env)
    assert proc.returncode == 2
    assert proc.stderr == ("fakeapi-gate: --time-scale: empty argument "
                           "(see fakeapi-gate --help)\n")


def test_a_run_sweeps_what_a_killed_run_left_in_dev_shm(harness_bin):
    """SIGKILL leaves the shared start behind; the next scaled run removes
    it, since its process is gone."""
    proc = subprocess.Popen([harness_bin, "run", "-q", "--time-scale", SCALE, SHARED_READ],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=REPO, start_new_session=True)
    left = ["/dev/shm/fakeapi-faketime-shm-%d" % proc.pid,
            "/dev/shm/sem.fakeapi-faketime-sem-%d" % proc.pid]
    try:
        deadline = time.monotonic() + 30
        while not all(os.path.exists(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(os.path.exists(p) for p in left)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert all(os.path.exists(p) for p in left)
    again = harness(harness_bin, "-q", "--time-scale", SCALE, NO_RETRY)
    assert again.returncode in (0, 1), again.stderr
    assert not any(os.path.exists(p) for p in left)
