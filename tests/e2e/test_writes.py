"""Writes under ambiguity: the client reference in a write's body, the held
answer, the kill and restart, and the level-3 write checks on real clients.

Scenarios are the shipped step-4 ones (scenarios/five-step-fast/) or small
variants written into tmp_path. Facts come from the JSON report and the
journal the harness wrote, never from a sleep here.
"""
import json
import os
import subprocess
import textwrap

from conftest import BUILD, REPO

PY = "/usr/bin/python3"
FAST = REPO / "scenarios" / "five-step-fast"
STEP4 = FAST / "8-step-4-write-drop-after-commit.json"
WRITE_CHECKS = ("write.key_stable", "write.no_duplicate", "write.reconcile_first",
                "ambiguity.preserved")

CURL = ('curl -sS -f --retry 3 --retry-all-errors -X POST -H "Authorization: Bearer $FAKEAPI_KEY" '
        "-H 'Content-Type: application/json' --data @{body_file} {url}")
URLLIB3 = f"{PY} {REPO / 'client-under-test' / 'adapters' / 'urllib3_post.py'} {{method}} {{url}} {{body_file}}"


def run(harness_bin, tmp_path, scenario, *args, name="report"):
    """Run the harness on @scenario (a path or a dict); returns (proc, report)."""
    if isinstance(scenario, dict):
        path = tmp_path / f"{scenario['id']}.json"
        path.write_text(json.dumps(scenario))
        scenario = path
    report = tmp_path / f"{name}.json"
    journals = tmp_path / f"{name}-journals"
    proc = subprocess.run([harness_bin, "run", *args, "--seed", "3", "--report-json", str(report),
                           "--journal-dir", str(journals), str(scenario)],
                          capture_output=True, text=True, timeout=120)
    assert report.exists(), proc.stdout + proc.stderr
    return proc, json.loads(report.read_text())


def verdicts(s):
    return {c["id"]: c["verdict"] for c in s["checks"]}


def check(s, cid):
    return next(c for c in s["checks"] if c["id"] == cid)


def journal(tmp_path, s, name="report"):
    path = tmp_path / f"{name}-journals" / f"{s['id']}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def step4(**change):
    """The step-4 scenario as a dict, its harness block changed as asked."""
    doc = json.loads(STEP4.read_text())
    doc["harness"].update(change)
    return doc


def exec_variant():
    """Step 4 for an exec client: the drop after the commit goes ahead at
    once (no hold, no kill: curl and urllib3 are not restarted)."""
    doc = json.loads(STEP4.read_text())
    doc["id"] = "exec-write-drop-after-commit"
    first = doc["routes"][0]["responses"][0]
    del first["hold"], first["hold_ms"]
    doc["harness"]["events"] = [{"at_ms": 0, "send": ["w1"]}]
    return doc


def script(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(f"#!{PY}\n" + textwrap.dedent(source))
    path.chmod(0o755)
    return str(path)


# --- the reference client through the kill and restart ------------------------

def test_reference_resumes_the_write_after_the_restart_and_reaches_l3(harness_bin, tmp_path):
    proc, report = run(harness_bin, tmp_path, STEP4, "--client", str(BUILD / "clients" / "reference"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = report["scenarios"][0]
    assert s["error"] is None and s["protocol_errors"] == []
    assert {c: verdicts(s)[c] for c in WRITE_CHECKS} == dict.fromkeys(WRITE_CHECKS, "pass")
    assert report["level"] == "L0"  # the lone scenario shows no L1 check passing
    task = s["tasks"][0]
    assert task["outcome"] == "succeeded"
    ref = task["client_reference"]
    assert ref.startswith("step-4-write-drop-after-commit.w1.") and len(ref.split(".")[-1]) == 8
    # one kill: the held answer let go once the client was dead, w1 re-sent
    [restart] = s["restarts"]
    assert restart["restarted"] and restart["released"] == 1
    assert restart["tasks_resent"] == ["w1"]
    assert restart["restart_t_ms"] >= restart["t_ms"] > 0
    lines = journal(tmp_path, s)
    create, status_read = lines[0], lines[1]
    assert (create["route"], create["fault"], create["committed"], create["delivered"]) == \
        ("create-record", "drop_after_commit", True, "dropped")
    assert create["client_reference"] == ref
    # the connection broke only after the kill; the read came from the new client
    assert create["t_done_us"] >= restart["t_ms"] * 1000
    assert status_read["route"] == "_reconcile_operation"
    assert status_read["path"] == "/v1/operations/" + create["idempotency_key"]
    assert status_read["t_arrival_us"] >= restart["restart_t_ms"] * 1000
    assert len(lines) == 2
    assert "kill at +" in proc.stdout and "tasks re-sent: w1" in proc.stdout
    assert f"task w1: result succeeded (client reference {ref})" in proc.stdout


def test_restarted_client_gets_the_same_task_line_and_state_dir(harness_bin, tmp_path):
    # A client that records every task line it gets and its
    # CLIENT_STATE_DIR, and sends the write with a fixed key: the first
    # process is killed while the answer is held, the second one replays.
    record = tmp_path / "seen.jsonl"
    client = script(tmp_path, "recorder", r'''
        import json, os, sys, urllib.request
        RECORD = sys.argv[1]
        def say(o):
            sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
        say({"type": "hello", "protocol": 1, "client": {"name": "rec", "version": "1"}, "features": []})
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] != "task":
                break
            with open(RECORD, "a") as f:
                f.write(json.dumps({"task": msg, "state": os.environ["CLIENT_STATE_DIR"]}) + "\n")
            say({"type": "action_sent", "task": msg["id"], "attempt": 1, "idempotency_key": "k1"})
            req = urllib.request.Request(msg["url"], data=msg["body"].encode(), method="POST",
                                         headers={"Authorization": "Bearer " + os.environ[msg["key_env"]],
                                                  "Idempotency-Key": "k1"})
            try:
                status = urllib.request.urlopen(req, timeout=10).status
            except OSError:
                status = 0  # the first process never gets here: it is killed
            say({"type": "result", "task": msg["id"], "outcome": "succeeded", "attempts": 1,
                 "waited_ms": 0, "sent": "yes", "status": status, "provider_id": "rec_1"})
    ''')
    proc, report = run(harness_bin, tmp_path, STEP4, "--client", f"{client} {record}")
    s = report["scenarios"][0]
    assert s["error"] is None, s["error"]
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(seen) == 2
    first, second = seen
    assert first["state"] == second["state"]
    for field in ("id", "method", "url", "body", "key", "class", "headers"):
        assert first["task"][field] == second["task"][field], field
    assert second["task"]["deadline_ms"] <= first["task"]["deadline_ms"]
    body = json.loads(first["task"]["body"])
    assert body["client_reference"] == s["tasks"][0]["client_reference"]
    assert body["amount"] == 1200
    # the second process replayed the key: 1 record; each counted its own attempt
    v = verdicts(s)
    assert v["write.key_stable"] == v["write.no_duplicate"] == "pass"
    assert v["attempts.hidden"] == "pass"


def test_duplicate_after_the_restart_says_the_restarted_client_made_it(harness_bin, tmp_path):
    # memkey keeps its key in memory only: the restarted client sends the
    # write again with a fresh key. Right by step 4, and the detail says why.
    proc, report = run(harness_bin, tmp_path, STEP4, "--client", str(BUILD / "clients" / "memkey"))
    s = report["scenarios"][0]
    [restart] = s["restarts"]
    dup = check(s, "write.no_duplicate")
    assert dup["verdict"] == "fail"
    first, second = [e for e in journal(tmp_path, s) if e["committed"]]
    assert dup["detail"].endswith(
        f"; the second create (seq {second['seq']}) came from the client restarted after the "
        f"kill at +{restart['t_ms']:.1f} ms, with a new idempotency key "
        f"\"{second['idempotency_key']}\" (the first create carried "
        f"\"{first['idempotency_key']}\"): a client survives a restart only if it stores "
        "the key (its operation record) before its first send"), dup["detail"]
    assert check(s, "write.body_stable")["verdict"] == "pass"


def test_write_resent_with_an_empty_body_fails_body_stable(harness_bin, tmp_path):
    # newbody replays the write after a drop before the commit, same key,
    # empty body: the provider commits a record without the client reference
    proc, report = run(harness_bin, tmp_path, FAST / "9-write-drop-before-commit.json",
                       "--client", str(BUILD / "clients" / "newbody"))
    s = report["scenarios"][0]
    ref = s["tasks"][0]["client_reference"]
    creates = [e for e in journal(tmp_path, s) if e["route"] == "create-record"]
    assert len(creates) == 2 and creates[1]["client_reference"] is None
    body = check(s, "write.body_stable")
    assert body["verdict"] == "fail"
    assert body["detail"].startswith(f"write w1 (client reference {ref}): attempt 3 (seq ")
    assert ("sha256 e3b0c44298fc.. (empty) instead of " + creates[0]["body_sha256"][:12] +
            "..; a body stream the first send consumed, resent empty?") in body["detail"]
    assert [e["seq"] for e in body["evidence"]] == [e["seq"] for e in creates]
    # the record it made lacks the reference, and is named so
    assert "record rec_1 (no client reference)" in check(s, "write.no_duplicate")["detail"]
    assert proc.returncode == 1
    proc, report = run(harness_bin, tmp_path, FAST / "9-write-drop-before-commit.json",
                       "--client", str(BUILD / "clients" / "reference"), name="ref")
    body = check(report["scenarios"][0], "write.body_stable")
    assert body["verdict"] == "pass" and "2 creates, each with the body sha256" in body["detail"]


def test_client_that_cannot_start_again_is_a_scenario_error(harness_bin, tmp_path):
    client = script(tmp_path, "once", r'''
        import json, os, sys, time
        marker = os.path.join(os.environ["CLIENT_STATE_DIR"], "started")
        if os.path.exists(marker):
            print("state says no", file=sys.stderr)
            sys.exit(3)
        open(marker, "w").close()
        print(json.dumps({"type": "hello", "protocol": 1, "client": {"name": "once", "version": "1"}}), flush=True)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "task":
                import urllib.request
                req = urllib.request.Request(msg["url"], data=msg["body"].encode(), method="POST",
                                             headers={"Authorization": "Bearer " + os.environ[msg["key_env"]]})
                urllib.request.urlopen(req, timeout=30)
    ''')
    proc, report = run(harness_bin, tmp_path, STEP4, "--client", client)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    s = report["scenarios"][0]
    assert s["error"] == (f"{STEP4}: restart: client exited with status 3 before saying "
                          "hello: state says no")
    assert s["tasks"][0]["error"] == "client could not be started again before reporting"
    [restart] = s["restarts"]
    assert not restart["restarted"] and restart["restart_t_ms"] is None and restart["released"] == 1


def test_kill_without_restart_ends_the_client(harness_bin, tmp_path):
    doc = step4(events=[{"at_ms": 0, "send": ["w1"]},
                        {"after": {"task": "w1", "held": True}, "kill": True}])
    proc, report = run(harness_bin, tmp_path, doc, "--client", str(BUILD / "clients" / "reference"))
    s = report["scenarios"][0]
    assert s["error"] is None and s["protocol_errors"] == []
    task = s["tasks"][0]
    assert (task["outcome"], task["timed_out"], task["error"], task["signal"]) == \
        (None, False, None, 9)
    [restart] = s["restarts"]
    assert not restart["restarted"] and restart["tasks_resent"] == [] and restart["released"] == 1
    assert verdicts(s)["attempts.bounded"] == "pass"  # a kill is no hang
    assert verdicts(s)["ambiguity.preserved"] == "n/a"  # no result to judge
    assert "not restarted" in proc.stdout


# --- exec mode -------------------------------------------------------------------

def test_exec_client_killed_and_run_again_keeps_its_key(harness_bin, tmp_path):
    # One process per task: it saves its key in CLIENT_STATE_DIR before
    # sending, and a rerun reads the operation's status by that key.
    client = script(tmp_path, "keeper", r'''
        import json, os, sys, urllib.error, urllib.request, uuid
        url, body_file = sys.argv[1], sys.argv[2]
        state = os.path.join(os.environ["CLIENT_STATE_DIR"], os.environ["FAKEAPI_TASK"] + ".key")
        auth = {"Authorization": "Bearer " + os.environ["FAKEAPI_KEY"]}
        if os.path.exists(state):
            key = open(state).read()
            base, _, query = url.partition("/v1/records?")
            with urllib.request.urlopen(urllib.request.Request(
                    base + "/v1/operations/" + key + "?" + query, headers=auth), timeout=10) as r:
                sys.exit(0 if json.load(r)["status"] == "completed" else 1)
        key = "idk_" + uuid.uuid4().hex
        with open(state, "w") as f:
            f.write(key)
        req = urllib.request.Request(url, data=open(body_file, "rb").read(), method="POST",
                                     headers=dict(auth, **{"Idempotency-Key": key}))
        urllib.request.urlopen(req, timeout=30)
    ''')
    proc, report = run(harness_bin, tmp_path, STEP4, "--exec", f"{client} {{url}} {{body_file}}")
    assert report["mode"] == "exec"
    s = report["scenarios"][0]
    assert s["error"] is None, s["error"]
    assert s["tasks"][0]["exit_code"] == 0
    [restart] = s["restarts"]
    assert restart["restarted"] and restart["tasks_resent"] == ["w1"] and restart["released"] == 1
    v = verdicts(s)
    assert v["write.key_stable"] == v["write.no_duplicate"] == "pass"
    # exec mode cannot judge these (docs/checks.md)
    assert v["write.reconcile_first"] == v["ambiguity.preserved"] == "n/a"
    assert [e["route"] for e in journal(tmp_path, s)] == ["create-record", "_reconcile_operation"]
    assert "tasks run again: w1" in proc.stdout


def test_curl_retry_duplicates_the_write(harness_bin, tmp_path):
    proc, report = run(harness_bin, tmp_path, exec_variant(), "--exec", CURL)
    assert proc.returncode == 1
    s = report["scenarios"][0]
    assert s["error"] is None, s["error"]
    dup = check(s, "write.no_duplicate")
    assert dup["verdict"] == "fail"
    ref = s["tasks"][0]["client_reference"]
    assert dup["detail"] == (f"write w1 (client reference {ref}) was committed 2 times: "
                             "records rec_1, rec_2 (seq 1, 2); the second create (seq 2) "
                             "went out without an idempotency key, like the first")
    # the two records as evidence: the dropped create and the resent one
    assert [(e["seq"], e["committed"], e["fault"], e["client_reference"]) for e in dup["evidence"]] == \
        [(1, True, "drop_after_commit", ref), (2, True, "respond", ref)]
    assert check(s, "write.key_stable")["detail"].endswith("create seq 1 carried no Idempotency-Key")
    assert verdicts(s)["write.reconcile_first"] == "n/a"
    line = next(l for l in proc.stdout.splitlines() if "FAIL  write.no_duplicate" in l)
    print(line)  # the report line, for the record


def test_urllib3_retry_with_post_allowed_duplicates_the_write(harness_bin, tmp_path):
    proc, report = run(harness_bin, tmp_path, exec_variant(), "--exec", URLLIB3)
    s = report["scenarios"][0]
    assert s["error"] is None, s["error"]
    assert s["tasks"][0]["exit_code"] == 0, s["tasks"]
    dup = check(s, "write.no_duplicate")
    assert dup["verdict"] == "fail", dup
    assert [e["seq"] for e in dup["evidence"]] == [1, 2]
    assert "records rec_1, rec_2" in dup["detail"]
    assert check(s, "write.key_stable")["verdict"] == "fail"


def test_a_task_body_that_is_no_object_carries_no_reference(harness_bin, tmp_path):
    doc = exec_variant()
    doc["harness"]["tasks"][0]["body"] = [1, 2]
    proc, report = run(harness_bin, tmp_path, doc, "--exec", CURL)
    s = report["scenarios"][0]
    assert "client_reference" not in s["tasks"][0]
    # the task's id still attributes the write: the duplicate is caught
    assert verdicts(s)["write.no_duplicate"] == "fail"
    assert all(e["client_reference"] is None for e in check(s, "write.no_duplicate")["evidence"])


def test_report_with_restarts_follows_the_schema(harness_bin, tmp_path):
    import jsonschema
    _, report = run(harness_bin, tmp_path, STEP4, "--client", str(BUILD / "clients" / "reference"))
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert os.path.exists(tmp_path / "report-journals")
