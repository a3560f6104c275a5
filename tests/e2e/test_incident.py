"""docs/incidents.md runs as written: the LLM rate-limit guide's retry waves in miniature.

The harness commands are taken from the page itself (every line of a
```sh block that starts with build/fakeapi-harness), so the walkthrough
cannot drift from what works. `build/` in them is the build under test
(FAKEAPI_BUILD). The faulty client must fail wait.jitter with a wave in
the evidence; the reference client must pass it with none.
"""
import json
import os
import re
import shlex
import subprocess

import pytest

from conftest import BUILD, REPO

DOC = REPO / "docs" / "incidents.md"
SCENARIO_ID = "fixed-retry-waves"
FOLLOW = re.compile(r"^\[fixed-retry-waves\] \+(\d+)\.(\d{3})s  #(\d+)  (w\d)  POST /v1/chat/completions"
                    r"  (\d{3})  (\S+)")


def doc_commands():
    """The harness command lines of the walkthrough, in page order."""
    cmds, in_sh = [], False
    for line in DOC.read_text().splitlines():
        if line.startswith("```"):
            in_sh = line.strip() == "```sh" and not in_sh
            continue
        if in_sh and line.startswith("build/fakeapi-harness "):
            cmds.append(line)
    return cmds


def run_doc_command(line):
    argv = [str(BUILD / tok[len("build/"):]) if tok.startswith("build/") else tok
            for tok in shlex.split(line)]
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120,
                          env=env, stdin=subprocess.DEVNULL)


def command(client, mode):
    found = [c for c in doc_commands()
             if f"--client build/clients/{client} " in c and f" {mode} " in c]
    assert len(found) == 1, f"docs/incidents.md: one `{client}` command with {mode}, got {found}"
    assert (BUILD / "clients" / client).exists(), f"{BUILD}/clients/{client} missing: build it"
    return found[0]


def jitter_block(report):
    """The wait.jitter line of the text report and its evidence lines."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^  (PASS|FAIL|N/A) +wait\.jitter ", line):
            ev = []
            for nxt in lines[i + 1:]:
                if not nxt.startswith("        seq "):
                    break
                ev.append(nxt)
            return line, ev
    raise AssertionError(f"no wait.jitter line in the report:\n{report}")


def follow_lines(stdout):
    out = []
    for line in stdout.splitlines():
        m = FOLLOW.match(line)
        assert m, f"not a follow line: {line!r}"
        out.append((int(m.group(1)) * 1000 + int(m.group(2)), int(m.group(3)), m.group(4),
                    int(m.group(5)), m.group(6)))
    return out


def largest_burst(attempts, start_ms, window_ms=200):
    """Most attempts arriving within @window_ms of one another, after @start_ms."""
    times = sorted(t for t, *_ in attempts if t >= start_ms)
    return max((sum(1 for u in times if t <= u < t + window_ms) for t in times), default=0)


def test_walkthrough_lists_its_commands():
    cmds = doc_commands()
    assert len(cmds) == 3, cmds
    assert all("scenarios/incidents/suite.json" in c for c in cmds), cmds


def test_faulty_client_comes_back_in_waves():
    r = run_doc_command(command("fixeddelay", "--follow"))
    assert r.returncode == 1, r.stderr
    line, evidence = jitter_block(r.stderr)
    assert line.startswith("  FAIL  wait.jitter"), line
    assert re.search(r"one wave: (all 8|7 of 8) returns within [0-9.]+ ms of each other", line), line
    assert "held by the pause of scope key:workers" in line, line
    # the evidence: the pause, then the eight returns of the wave
    seqs = [int(re.match(r"^        seq (\d+) ", e).group(1)) for e in evidence]
    assert len(seqs) == 9, evidence
    assert all("task w" in e for e in evidence), evidence
    assert "exit code 1: a required check failed" in r.stderr
    # the live lines show the same waves: eight together after the first second
    attempts = follow_lines(r.stdout)
    pause_end = attempts[0][0] + 900
    assert largest_burst(attempts, pause_end) >= 8, r.stdout
    assert [a[1] for a in attempts] == list(range(1, len(attempts) + 1))
    # the returns named as evidence are the attempts of the burst
    by_seq = {a[1]: a for a in attempts}
    returns = [by_seq[s][0] for s in seqs[1:]]
    assert max(returns) - min(returns) < 200, (returns, r.stdout)
    # and the bucket refused part of the wave: the waves go on
    assert any(a[4] == "quota" for a in attempts), r.stdout


def test_faulty_client_journal_stdout_is_jsonl():
    r = run_doc_command(command("fixeddelay", "--journal -"))
    assert r.returncode == 1, r.stderr
    entries = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(entries) >= 16, r.stdout
    assert {e["scenario"] for e in entries} == {SCENARIO_ID}
    assert sorted(e["seq"] for e in entries) == list(range(1, len(entries) + 1))
    assert any(e["fault"] == "quota" for e in entries)
    assert "FAIL  wait.jitter" in r.stderr


def test_reference_client_shows_no_wave():
    r = run_doc_command(command("reference", "--follow"))
    assert r.returncode == 0, r.stderr
    line, evidence = jitter_block(r.stderr)
    assert line.startswith("  PASS  wait.jitter"), line
    assert "spread out: 8 returns span " in line, line
    assert "held by the pause of scope key:workers" in line, line
    assert "one wave:" not in r.stderr
    m = re.search(r"span ([0-9.]+) ms, any 7 of them at least ([0-9.]+) ms", line)
    assert float(m.group(1)) >= 200.0 and float(m.group(2)) >= 80.0, line
    assert "exit code 0" in r.stderr
    attempts = follow_lines(r.stdout)
    assert largest_burst(attempts, attempts[0][0] + 900) < 8, r.stdout


@pytest.mark.parametrize("name", ["suite.json", "fixed-retry-waves.json"])
def test_incident_files_are_in_place(name):
    assert (REPO / "scenarios" / "incidents" / name).is_file()
