"""docs/scenario.schema.json says what the loader says.

Three ways: every good file (tests/data/good, every scenario and suite of
scenarios/) is valid; every bad file of tests/data/bad is refused, by a
strict JSON reader (syntax, duplicate keys) or by the schema at the place
the loader names, but for the few CROSS_REFERENCES no schema can express;
and probes made from the schema itself (an unknown member in each kind of
object, a null for each member) get from `fakeapi-harness check` the
allowed keys, ranges and values the schema has, in the loader's order.
"""
import copy
import json
import os
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO

SCHEMA_FILE = REPO / "docs" / "scenario.schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
DEFS = SCHEMA["$defs"]
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
BAD = REPO / "tests" / "data" / "bad"

# Bad files the loader refuses for what no JSON Schema can say: a name
# that must be found elsewhere in the file, or a value unique across
# objects. The test fails when the schema refuses one (then remove it).
CROSS_REFERENCES = {
    "duplicate-route-id": "route ids unique across routes",
    "duplicate-secret": "secrets unique across keys",
    "duplicate-task-id": "task ids unique across tasks",
    "key-env-collision": "two key ids that map to one FAKEAPI_KEY_<ID>",
    "user-not-listed": "a key's user must be in $.provider.users",
    "unknown-key-ref": "a task's key must be in $.provider.keys",
    "quota-key-limits-unknown-key": "key_limits names keys of $.provider.keys",
    "task-matches-no-route": "a task must reach a route, as the provider routes",
    "unknown-task-ref": "an event sends tasks of $.harness.tasks",
    "unknown-after-task": "an event waits for a task of $.harness.tasks",
    "event-cancel-unknown-task": "an event cancels tasks of $.harness.tasks",
    "expect-budget-unknown-task": "budget.escalates names tasks of $.harness.tasks",
    "task-never-sent": "every task is sent by an event",
    "task-sent-twice": "no task is sent by two events",
    "event-cancel-twice": "no task is cancelled by two events",
    "event-cancel-same-event": "an event cannot cancel what it sends",
    "event-cycle": "after events that wait on each other in a loop",
}


def strict_json(path):
    """@path read as the loader reads JSON text, as far as Python can:
    a leading byte order mark skipped, no duplicate key, no NaN."""
    def pairs(members):
        seen = {}
        for k, v in members:
            if k in seen:
                raise ValueError(f"duplicate key {k!r}")
            seen[k] = v
        return seen

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(Path(path).read_bytes().decode("utf-8-sig"), object_pairs_hook=pairs,
                      parse_constant=constant)


def json_path(text):
    """The loader's "$.routes[0].responses[1]" as ["routes", 0, "responses", 1]."""
    out = []
    for m in re.finditer(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]', text):
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(int(m.group(2)))
        else:
            out.append(json.loads(f'"{m.group(3)}"'))
    return out


def loader_path(seg):
    """The loader's way to write member @seg of a path."""
    if isinstance(seg, int):
        return f"[{seg}]"
    return f".{seg}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", seg) else f"[{json.dumps(seg)}]"


def all_errors(errors):
    for e in errors:
        yield e
        yield from all_errors(e.context)


def good_files():
    files = sorted((REPO / "tests" / "data" / "good").glob("*.json"))
    files += sorted((REPO / "scenarios").rglob("*.json"))
    return [f.relative_to(REPO).as_posix() for f in files]


def bad_cases():
    return sorted(p.stem for p in BAD.glob("*.json"))


def test_the_schema_is_a_draft_2020_12_schema():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", good_files())
def test_a_good_file_is_valid(path):
    errors = sorted(VALIDATOR.iter_errors(strict_json(REPO / path)), key=str)
    assert not errors, f"{path}: {list(errors[0].absolute_path)}: {errors[0].message}"


@pytest.mark.parametrize("case", bad_cases())
def test_a_bad_file_is_refused_where_the_loader_says(case):
    want = (BAD / f"{case}.err").read_text().rstrip("\n")
    where = want[len(f"tests/data/bad/{case}.json"):]
    try:
        doc = strict_json(BAD / f"{case}.json")
    except ValueError as e:
        # not JSON as the loader reads it: no schema gets to see it
        assert re.match(r":\d+:\d+: ", where) or "duplicate key" in where, (case, e, want)
        return
    assert where.startswith(": $"), f"{case}: a message without a JSON path: {want}"
    errors = list(all_errors(VALIDATOR.iter_errors(doc)))
    if case in CROSS_REFERENCES:
        assert not errors, (f"{case}: the schema refuses it now ({errors[0].message}): "
                            "remove it from CROSS_REFERENCES")
        return
    assert errors, f"{case}: the schema accepts what the loader refuses: {want}"
    # at the loader's place, or one member or element from it (a rule
    # between members is the object's; a type the member's)
    at = json_path(where[2:].split(": ", 1)[0])
    near = [list(e.absolute_path) for e in errors]
    assert any(p[:len(at)] == at and len(p) - len(at) <= 1 or
               at[:len(p)] == p and len(at) - len(p) <= 1 for p in near), \
        f"{case}: the loader says {want}\nthe schema refuses it at {sorted(map(tuple, near))}"


def test_the_cross_reference_list_names_bad_files():
    assert set(CROSS_REFERENCES) <= set(bad_cases())


# ---- probes: what the loader allows, as the schema has it ----

def resolve(node):
    """@node without its $ref, description and default; the first of an
    allOf (task headers: the header object, then a rule of its own)."""
    while True:
        if "$ref" in node:
            node = {**DEFS[node["$ref"].rsplit("/", 1)[1]],
                    **{k: v for k, v in node.items() if k != "$ref"}}
        elif "allOf" in node and "type" not in node and "enum" not in node:
            node = node["allOf"][0]
        else:
            return {k: v for k, v in node.items() if k not in ("description", "default")}


# what the loader calls a value the schema describes so, where the
# general rules below would not find it (docs/scenario-format.md, ERRORS)
SPECIAL_WHAT = {
    ("task", "goal"): "string of 1..500 characters",
    ("task", "outcome"): "one of succeeded, failed, escalated, cancelled, unknown",
    ("response", "retry_after"): "integer 0..2147483648 or object",
    ("during_pause", "retry_after"): "integer 0..2147483648 or object",
}


def what(node):
    """The loader's "expected WHAT" for a value the schema @node describes."""
    n = resolve(node)
    if "enum" in n:
        return "one of " + "|".join(n["enum"])
    if n.get("const") is True:
        return "true or false"  # "held": the type comes first, then "expected true"
    kind = n.get("type")
    if kind == "integer":
        return f"integer {n['minimum']}..{n['maximum']}"
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        m = re.fullmatch(r"\^\[A-Za-z0-9(.*)\]\{1,(\d+)\}\$", n.get("pattern", ""))
        if m:
            return f"string matching [A-Za-z0-9{m.group(1)}]{{1,{m.group(2)}}}"
        return "non-empty string" if n.get("minLength") == 1 else "string"
    if kind == "object":
        return "non-empty object" if n.get("minProperties") == 1 else "object"
    if kind == "array":
        return "non-empty array" if n.get("minItems") == 1 else "array"
    raise AssertionError(f"no loader word for {node}")


def base_scenario():
    """A scenario that reaches every kind of object the schema has."""
    return {
        "id": "probe",
        "provider": {
            "keys": {"k1": {"secret": "sk-1", "user": "u1"}},
            "users": {"u1": {}},
            "during_pause": {"status": 429},
            "idempotency": {"profile": "ietf"},
            "reconciliation": {},
            "quota": {},
        },
        "routes": [{"id": "r", "method": "GET", "path": "/a",
                    "responses": [{"status": 429, "retry_after": {"seconds": 1}},
                                  {"status": 200}]}],
        "harness": {
            "tasks": [{"id": "t1", "key": "k1", "method": "GET", "path": "/a",
                       "budget": {}}],
            "events": [{"at_ms": 0, "send": ["t1"]},
                       {"after": {"task": "t1", "status": 429}, "cancel": ["t1"]}],
            "expect": {check: {} for check in DEFS["expect"]["properties"]},
            "pacing": {"rpm": 10},
        },
    }


# (the object's place in base_scenario(), its name, its schema)
OBJECTS = [
    ([], "scenario", DEFS["scenario"]),
    (["provider"], "provider", DEFS["provider"]),
    (["provider", "keys", "k1"], "key", DEFS["key"]),
    (["provider", "during_pause"], "during_pause", DEFS["during_pause"]),
    (["provider", "idempotency"], "idempotency", DEFS["idempotency"]),
    (["provider", "reconciliation"], "reconciliation", DEFS["reconciliation"]),
    (["provider", "quota"], "quota", DEFS["quota"]),
    (["routes", 0], "route", DEFS["route"]),
    (["routes", 0, "responses", 0], "response", DEFS["response"]),
    (["routes", 0, "responses", 0, "retry_after"], "retry_after", DEFS["retry_after"]["anyOf"][1]),
    (["harness"], "harness", DEFS["harness"]),
    (["harness", "tasks", 0], "task", DEFS["task"]),
    (["harness", "tasks", 0, "budget"], "budget", DEFS["task"]["properties"]["budget"]),
    (["harness", "events", 1], "event", DEFS["event"]),
    (["harness", "events", 1, "after"], "after", DEFS["event"]["properties"]["after"]),
    (["harness", "pacing"], "pacing", DEFS["harness"]["properties"]["pacing"]),
] + [(["harness", "expect", check], check, node)
     for check, node in DEFS["expect"]["properties"].items()]


def at(doc, place):
    for seg in place:
        doc = doc[seg]
    return doc


def probes(tmp_path):
    """(file, the loader's message it must get) for each probe."""
    made = []

    def write(name, doc, want):
        path = tmp_path / f"{len(made):03d}-{name}.json"
        path.write_text(json.dumps(doc))
        made.append((path, want.replace("FILE", str(path))))

    for place, name, node in OBJECTS:
        where = "$" + "".join(loader_path(s) for s in place)
        listed = [k for k in node["properties"] if k != "$schema"]
        doc = base_scenario()
        at(doc, place)["zz_probe"] = 1
        write(f"{name}-unknown", doc,
              f'FILE: {where}: unknown key "zz_probe" (allowed: {", ".join(listed)})')
        for member, sub in node["properties"].items():
            if member == "body":
                continue  # any value
            doc = base_scenario()
            at(doc, place)[member] = None
            word = SPECIAL_WHAT.get((name, member)) or what(sub)
            write(f"{name}-{member}", doc, f"FILE: {where}{loader_path(member)}: expected {word}, got null")
    doc = base_scenario()
    doc["harness"]["expect"]["zz.probe"] = {}
    checks = ", ".join(DEFS["expect"]["properties"])
    write("expect-unknown", doc, f'FILE: $.harness.expect: unknown check "zz.probe" (allowed: {checks})')
    return made


def check(harness_bin, files):
    env = dict(os.environ)
    env.pop("FAKEAPI_LOG", None)
    return subprocess.run([harness_bin, "check", *map(str, files)], capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)


def test_the_probe_base_is_good_for_both(harness_bin, tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base_scenario()))
    assert VALIDATOR.is_valid(base_scenario())
    proc = check(harness_bin, [path])
    assert proc.returncode == 0, proc.stderr


def test_members_ranges_and_values_are_the_loaders(harness_bin, tmp_path):
    made = probes(tmp_path)
    proc = check(harness_bin, [f for f, _ in made])
    got = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(got) == len(made), proc.stdout + proc.stderr
    wrong = [f"  schema: {want}\n  loader: {line}" for (_, want), line in zip(made, got)
             if line != want]
    assert not wrong, "the schema and the loader differ:\n" + "\n".join(wrong)
    # and the schema refuses each probe too
    for path, want in made:
        assert not VALIDATOR.is_valid(json.loads(path.read_text())), want


def test_a_suite_has_the_loaders_members(harness_bin, tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(base_scenario()))
    suite = {"id": "s", "version": "1", "title": "t", "scenarios": ["a.json"]}
    assert VALIDATOR.is_valid(suite)
    made = []
    for member in [None, *DEFS["suite"]["properties"]]:
        doc = copy.deepcopy(suite)
        sub = tmp_path / f"p{len(made)}"
        sub.mkdir()
        (sub / "a.json").write_text(json.dumps(base_scenario()))
        if member is None:
            doc["zz_probe"] = 1
            listed = ", ".join(k for k in DEFS["suite"]["properties"] if k != "$schema")
            want = f'$: unknown key "zz_probe" (allowed: {listed})'
        else:
            doc[member] = None
            want = f"${loader_path(member)}: expected {what(DEFS['suite']['properties'][member])}, got null"
        (sub / "suite.json").write_text(json.dumps(doc))
        assert not VALIDATOR.is_valid(doc), want
        made.append((sub / "suite.json", f"{sub}/suite.json: {want}"))
    proc = check(harness_bin, [f for f, _ in made])
    assert proc.stderr.splitlines() == [w for _, w in made]


def test_a_schema_member_points_an_editor_at_the_schema(harness_bin, tmp_path):
    # as docs/scenario-format.md shows it: the loader ignores it
    doc = {"$schema": "../docs/scenario.schema.json", **base_scenario()}
    path = tmp_path / "with-schema.json"
    path.write_text(json.dumps(doc))
    assert VALIDATOR.is_valid(doc)
    proc = check(harness_bin, [path])
    assert proc.returncode == 0, proc.stderr
