"""GET /_fakeapi/metrics: the Prometheus text exposition format 0.0.4.

The whole text is read twice: by the grammar of the format, line by line
(names, labels, escaping, HELP then TYPE then the samples of one family,
no series twice, a line feed at the end), and by the Prometheus client
library's own parser (Debian's python3-prometheus-client); both must read
the same samples. The figures are checked against what the test sent and
against the journal, which counts the same attempts by another path.
"""
import collections
import http.client
import json
import re
from urllib.parse import urlparse

from prometheus_client.parser import text_string_to_metric_families

from conftest import estimate_tokens, post_whole_or_not, run_harness, wait_for
from scenarios import key_table, one_route_scenario, provider_scenario

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# --- the format's grammar ---------------------------------------------------------

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(rf"(?P<name>{NAME})(?:\{{(?P<labels>(?:{LABEL})(?:,(?:{LABEL}))*)?\}})?"
                    rf" (?P<value>\S+)")
HELP = re.compile(rf"# HELP ({NAME}) ((?:[^\\\n]|\\[\\n])*)")
TYPE = re.compile(rf"# TYPE ({NAME}) (counter|gauge|histogram|summary|untyped)")
UNESCAPE = {"\\": "\\", '"': '"', "n": "\n"}


def unescape(s):
    return re.sub(r'\\(.)', lambda m: UNESCAPE[m.group(1)], s)


def read_strictly(text):
    """The families of @text as the format's grammar reads them:
    {name: {"help", "type", "labels", "samples": {frozenset(labels): value}}},
    "labels" the label names of its series in their order (all its series
    have the same, our own rule). Fails naming the line that breaks a rule."""
    assert text.endswith("\n"), "the last line must end with a line feed"
    families, name = {}, None
    for n, line in enumerate(text[:-1].split("\n"), 1):
        where = f"line {n}: {line!r}"
        if m := HELP.fullmatch(line):
            name = m.group(1)
            assert name not in families, f"{where}: a second family {name}"
            families[name] = {"help": unescape(m.group(2)), "type": None, "labels": (),
                              "samples": {}}
        elif m := TYPE.fullmatch(line):
            assert m.group(1) == name and families[name]["type"] is None, \
                f"{where}: TYPE must follow its family's HELP, once"
            families[name]["type"] = m.group(2)
        else:
            m = SAMPLE.fullmatch(line)
            assert m, f"{where}: not a sample line"
            assert m["name"] == name and families[name]["type"] is not None, \
                f"{where}: a sample outside its family"
            block = m["labels"] or ""
            pairs = re.findall(LABEL, block)
            assert ",".join(f'{k}="{v}"' for k, v in pairs) == block, where
            labels = {k: unescape(v) for k, v in pairs}
            assert len(labels) == len(pairs), f"{where}: a label twice"
            if not families[name]["samples"]:
                families[name]["labels"] = tuple(labels)
            assert tuple(labels) == families[name]["labels"], f"{where}: other labels"
            key = frozenset(labels.items())
            assert key not in families[name]["samples"], f"{where}: a series twice"
            families[name]["samples"][key] = float(m["value"])
    return families


def scrape(p):
    """GET /_fakeapi/metrics on @p, read by the grammar and by the client
    library, which must agree: {name: {frozenset(labels): value}}, and the
    families as read_strictly() gives them."""
    status, headers, body = p.request("GET", "/_fakeapi/metrics")
    assert status == 200, body
    assert headers["content-type"] == CONTENT_TYPE
    text = body.decode("utf-8")
    strict = read_strictly(text)
    for name, fam in strict.items():
        # Prometheus naming: our prefix, counters and only counters in _total
        assert name.startswith("fakeapi_"), name
        assert name.endswith("_total") == (fam["type"] == "counter"), name
        assert fam["help"] and fam["type"] in ("counter", "gauge"), name
    parsed = {}
    for fam in text_string_to_metric_families(text):
        assert fam.type in ("counter", "gauge"), f"{fam.name}: read as {fam.type}"
        for s in fam.samples:
            assert strict[s.name]["help"] == fam.documentation
            parsed.setdefault(s.name, {})[frozenset(s.labels.items())] = s.value
    assert parsed == {k: v["samples"] for k, v in strict.items() if v["samples"]}
    return {k: v["samples"] for k, v in strict.items()}, strict


def series(metrics, name):
    """The samples of @name as {tuple of label values in label-name order: value}."""
    return {tuple(v for _, v in sorted(labels)): value
            for labels, value in metrics[name].items()}


def test_the_grammar_check_refuses_what_the_format_refuses():
    good = '# HELP a_total x\n# TYPE a_total counter\na_total{r="q\\"\\\\\\n"} 1\n'
    assert read_strictly(good)["a_total"]["samples"] == {frozenset({("r", 'q"\\\n')}): 1.0}
    for bad in (good[:-1],                                        # no final line feed
                good.replace('\\"', '"'),                         # a quote unescaped
                good.replace('r="q', 'r="\\q'),                   # a lone backslash
                good.replace("# HELP a_total x\n", ""),           # TYPE without HELP
                good + 'a_total{r="q\\"\\\\\\n"} 2\n',            # a series twice
                good + "b_total 1\n",                             # outside its family
                good.replace("a_total{", "a-total{")):            # not a metric name
        try:
            read_strictly(bad)
        except AssertionError:
            continue
        raise AssertionError(f"accepted {bad!r}")


# --- the figures ------------------------------------------------------------------

# A route id the text must escape: a double quote, a backslash, a line feed.
ODD = 'odd "route" \\ with\na line feed'
K1, K2 = "sk-metrics-1", "sk-metrics-2"
CHAT = "/v1/chat/completions"
# Three requests per key per minute, 1000 tokens per key per minute.
SCENARIO = provider_scenario(
    "metrics", key_table(("k1", K1, "u1"), ("k2", K2, "u2")),
    [{"id": "records", "method": "GET", "path": "/v1/records/{id}",
      "responses": [{"times": 1, "status": 429, "retry_after": 30},
                    {"status": 200, "body": {"id": "{id}"}}]},
     {"id": ODD, "method": "GET", "path": "/v1/odd", "responses": [{"status": 200}]},
     {"id": "chat", "kind": "chat_completions", "method": "POST", "path": CHAT,
      "reply": "one two three four",
      "responses": [{"times": 1, "status": 200, "chunk_delay_ms": 300},
                    {"times": 1, "status": 200, "stop_after_chunks": 1},
                    {"shape": "ai_congested", "retry_after_s": 60, "error_after_chunks": 2}]}],
    scope="key", quota={"per_key": 3, "tpm_per_key": 1000, "period_s": 60})


def chat(prompt_bytes, max_tokens):
    """A streaming chat request costing ceil(prompt_bytes / 4) + max_tokens."""
    return {"model": "fake-model-1", "stream": True, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": "x" * prompt_bytes}]}


def finished(p, n):
    """The journal's entries once it holds @n attempts: an attempt is
    journaled, and leaves its scope's in-flight count, when its connection
    is done with it, which can be just after the client read the answer."""
    return wait_for(lambda: (j := p.journal(wait=False))["count"] >= n and j)["entries"]


def documented(path):
    """The metrics table of @path: {name: (type, label names)}."""
    rows = re.findall(r"^\| `(fakeapi_\w+)` \| (\w+) \|([^|]*)\|", path.read_text(), re.M)
    assert len(rows) == len({name for name, _, _ in rows}), f"{path}: a metric twice"
    return {name: (typ, tuple(re.findall(r"`(\w+)`", labels))) for name, typ, labels in rows}


def test_metrics_count_routes_refusals_tokens_streams_and_the_journal(provider, repo_root):
    p = provider(SCENARIO)
    before, _ = scrape(p)
    assert before["fakeapi_attempts_total"] == {}
    assert series(before, "fakeapi_tokens_reserved_total") == {(): 0}
    # k1: a scripted 429 (refunded) pausing key:k1 for 30 s, the odd route,
    # a cost over the whole token bucket (400), no route
    assert p.request("GET", "/v1/records/1", key=K1)[0] == 429
    assert p.request("GET", "/v1/odd", key=K1)[0] == 200
    assert p.request("POST", CHAT, key=K1, body=chat(4000, 5000))[0] == 400
    assert p.request("GET", "/v1/nope", key=K1)[0] == 404
    finished(p, 4)
    # k2: a paced stream, in flight while it plays
    u = urlparse(p.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.request("POST", CHAT, body=json.dumps(chat(40, 10)),
                 headers={"Authorization": f"Bearer {K2}", "Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.readline().startswith(b"data: ")
    during, _ = scrape(p)
    assert series(during, "fakeapi_requests_in_flight") == {("key:k1",): 0, ("key:k2",): 1}
    assert resp.read().endswith(b"data: [DONE]\n\n")
    conn.close()
    # then a stream cut after its first chunk, one ending in an error frame
    # (its quota refunded), a read, and the key's 4th request refused
    status, _, _, whole = post_whole_or_not(p, CHAT, json.dumps(chat(80, 20)).encode(), {
        "Authorization": f"Bearer {K2}", "Content-Type": "application/json"})
    assert (status, whole) == (200, False)
    assert p.request("POST", CHAT, key=K2, body=chat(120, 30))[0] == 200
    assert p.request("GET", "/v1/records/2", key=K2)[0] == 200
    assert p.request("GET", "/v1/records/3", key=K2)[0] == 429
    assert p.request("GET", "/v1/records/4")[0] == 401
    entries = finished(p, 10)
    assert len(entries) == 10
    m, strict = scrape(p)

    attempts = series(m, "fakeapi_attempts_total")  # (fault, route, status)
    assert attempts[("respond", "records", "429")] == 1
    assert attempts[("respond", "records", "200")] == 1
    assert attempts[("respond", ODD, "200")] == 1
    assert attempts[("quota", "", "400")] == 1
    assert attempts[("quota", "", "429")] == 1
    assert attempts[("no_route", "", "404")] == 1
    assert attempts[("unauthorized", "", "401")] == 1
    # the paced stream and the error frame's are answers; the cut one is a partial body
    assert attempts[("respond", "chat", "200")] == 2
    assert attempts[("partial_body", "chat", "200")] == 1
    assert len(attempts) == 9
    # the journal counts the same attempts, the scrapes in neither
    assert attempts == dict(collections.Counter(
        (e["fault"], e["route"] or "", str(e["status"])) for e in entries))

    assert series(m, "fakeapi_streams_total") == {("done",): 1, ("cut",): 1,
                                                  ("error_frame",): 1}
    assert series(m, "fakeapi_rate_limit_refusals_total") == {
        ("tokens", "per-key", "400"): 1, ("requests", "per-key", "429"): 1}
    # reserved: the three streams; refunded: the one with the error frame
    costs = [estimate_tokens("x" * b) + t for b, t in ((40, 10), (80, 20), (120, 30))]
    assert costs == [20, 40, 60]
    assert series(m, "fakeapi_tokens_reserved_total") == {(): sum(costs)}
    assert series(m, "fakeapi_tokens_refunded_total") == {(): 60}
    assert sum(e["tokens"] or 0 for e in entries
               if (e["quota"] or "").startswith(("admitted", "refunded"))) == sum(costs)
    # key:k1's 30 s pause and the 60 s one key:k2's error frame announced
    state = json.loads(p.request("GET", "/_fakeapi/state")[2])
    assert sorted(s["scope"] for s in state["scopes"]
                  if (s["pause_until_us"] or 0) > state["uptime_us"]) == ["key:k1", "key:k2"]
    assert series(m, "fakeapi_pauses_in_force") == {(): 2}
    assert series(m, "fakeapi_requests_in_flight") == {("key:k1",): 0, ("key:k2",): 0}
    assert series(m, "fakeapi_journal_entries") == {(): 10}
    assert series(m, "fakeapi_journal_bytes_total") == {(): p.journal_path.stat().st_size}
    assert "route that answered" in strict["fakeapi_attempts_total"]["help"]
    # every labelled family has a series now: the docs name them all, as written
    exposed = {name: (fam["type"], fam["labels"]) for name, fam in strict.items()}
    assert documented(repo_root / "README.md") == exposed
    assert documented(repo_root / "docs" / "internals.md") == exposed

    # a reset empties the journal and ends the pauses; counters go on
    assert p.request("POST", "/_fakeapi/reset")[0] == 200
    after, _ = scrape(p)
    assert series(after, "fakeapi_journal_entries") == {(): 0}
    assert series(after, "fakeapi_pauses_in_force") == {(): 0}
    assert after["fakeapi_attempts_total"] == m["fakeapi_attempts_total"]
    assert after["fakeapi_journal_bytes_total"] == m["fakeapi_journal_bytes_total"]


def test_metrics_endpoint_is_get_only_and_named_in_the_404(provider):
    p = provider(SCENARIO)
    status, headers, _ = p.request("POST", "/_fakeapi/metrics")
    assert (status, headers["allow"]) == (405, "GET")
    status, _, body = p.request("GET", "/_fakeapi/metricz")
    assert status == 404
    assert json.loads(body) == {"error": {
        "code": "unknown_endpoint",
        "message": "unknown admin endpoint (health, journal, metrics, reset, state)"}}
    assert p.journal()["count"] == 0


def test_metrics_are_off_under_the_harness(harness_bin, tmp_path):
    got = tmp_path / "metrics-seen"
    doc = one_route_scenario("metrics-off", [{"status": 200, "body": {"id": "{id}"}}],
                             keys=key_table(("k1", "sk-metrics-off", "u1")))
    (tmp_path / "s.json").write_text(json.dumps(doc))
    auth = '-H "Authorization: Bearer $FAKEAPI_KEY"'
    client = (f'curl -s -o "{got}" -w "%{{http_code}}" {auth} "$FAKEAPI_URL/_fakeapi/metrics" '
              f'> "{got}.status"; curl -s -o /dev/null {auth} {{url}}')
    journals = tmp_path / "journals"
    proc = run_harness(harness_bin, "run", "-q", "--exec", client, "--journal-dir",
                       str(journals), str(tmp_path / "s.json"))
    assert proc.returncode in (0, 1), proc.stderr
    assert (tmp_path / "metrics-seen.status").read_text() == "404"
    assert "fakeapi_" not in got.read_text()
    lines = [json.loads(b) for b in (journals / "metrics-off.jsonl").read_text().splitlines()]
    assert [(e["path"], e["status"], e["fault"]) for e in lines][0] == \
        ("/_fakeapi/metrics", 404, "no_route")
