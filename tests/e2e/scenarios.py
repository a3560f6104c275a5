"""Scenario builders shared by the e2e tests.

Each builder returns a new scenario document (the dict a test writes as
JSON for fakeapi or fakeapi-harness). The key table and the default task
are copied into it, so a test that edits its document (a key's secret, a
task's budget) leaves the next test's alone; what the caller passes in
(responses, routes, tasks, events) goes in as it is. Keys are inserted in
a fixed order, so the JSON text is the same on every call.
"""
import copy

# The default task of a one-route scenario: one read, a budget of 4 attempts.
READ_TASK = {"id": "t1", "key": "k1", "method": "GET", "path": "/v1/records/7",
             "budget": {"max_attempts": 4, "max_wait_s": 5}}


def key_table(*entries):
    """A provider's key table from (key id, secret, user) triples, in order."""
    return {kid: {"secret": secret, "user": user} for kid, secret, user in entries}


def one_route_scenario(sid, responses, tasks=None, events=None, *, keys, timeout_s=20,
                       route_id="read", method="GET", path="/v1/records/{id}",
                       during_pause=None, expect=None):
    """A harness scenario of one route playing @responses, with key table
    @keys: by default one task t1 (READ_TASK), and one event at 0 that sends
    every task. @during_pause and @expect are left out unless given."""
    tasks = tasks or [copy.deepcopy(READ_TASK)]
    provider = {"keys": copy.deepcopy(keys)}
    if during_pause is not None:
        provider["during_pause"] = during_pause
    harness = {"tasks": tasks,
               "events": events or [{"at_ms": 0, "send": [t["id"] for t in tasks]}],
               "timeout_s": timeout_s}
    if expect is not None:
        harness["expect"] = expect
    return {
        "id": sid,
        "provider": provider,
        "routes": [{"id": route_id, "method": method, "path": path, "responses": responses}],
        "harness": harness,
    }


def provider_scenario(sid, keys, routes, **provider_extra):
    """A scenario without a harness block: the provider's key table @keys,
    then each of @provider_extra whose value is not None, and @routes."""
    provider = {"keys": copy.deepcopy(keys)}
    provider.update((k, v) for k, v in provider_extra.items() if v is not None)
    return {"id": sid, "provider": provider, "routes": routes}


def report_scenario(report, sid):
    """The scenario @sid of a harness report (its "scenarios" list)."""
    return next(s for s in report["scenarios"] if s["id"] == sid)
