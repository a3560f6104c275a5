"""The stdio adapters for hashicorp/go-retryablehttp, OkHttp and Guzzle.

client-under-test/adapters/{go,java,php}/ run each library with its
documented retry switched on and otherwise as shipped (README.md, "Real
SDKs"). `make test-adapters` builds them from Debian's packages
(`ci/install-deps adapters`) and runs this file; `make test` does not
build them, and the tests of an adapter that is not built are skipped.

The suite scenarios/adapters/ is run once per adapter; each test reads
one fact from the report or from the provider's journal. What a library
does is recorded as it is, failures included, each with the line of its
source that does it: a test here fails when the library's behaviour (or
the harness's verdict on it) changes, not when the library breaks a rule.
"""
import pytest

from conftest import BUILD, REPO, graded_run

SUITE = REPO / "scenarios" / "adapters" / "suite.json"
ADAPTERS = {"go-retryablehttp": "go", "okhttp": "java", "guzzle": "php"}
# one graded run per adapter (~20-40 s each): one test worker does them
pytestmark = pytest.mark.xdist_group("adapters-go-java-php")
if not any((BUILD / "adapters" / name).exists() for name in ADAPTERS):
    pytest.skip(f"no adapter built in {BUILD / 'adapters'}: run `make test-adapters`",
                allow_module_level=True)

_runs = {}


def graded(name, harness_bin, tmp_path_factory):
    """Run the suite once with adapter @name: (report, {scenario id: journal})."""
    if name not in _runs:
        client = BUILD / "adapters" / name
        if not client.exists():
            pytest.skip(f"{client} not built: run `make test-adapters`")
        _runs[name] = graded_run(harness_bin,
                                 ["--jobs", "2", "--seed", "7", "--client", str(client)],
                                 SUITE, tmp_path_factory.mktemp(name), timeout=300)
    return _runs[name]


@pytest.fixture(params=sorted(ADAPTERS))
def adapter(request, harness_bin, tmp_path_factory):
    return request.param, graded(request.param, harness_bin, tmp_path_factory)


@pytest.fixture
def go(harness_bin, tmp_path_factory):
    return graded("go-retryablehttp", harness_bin, tmp_path_factory)


@pytest.fixture
def okhttp(harness_bin, tmp_path_factory):
    return graded("okhttp", harness_bin, tmp_path_factory)


@pytest.fixture
def guzzle(harness_bin, tmp_path_factory):
    return graded("guzzle", harness_bin, tmp_path_factory)


def verdicts(report, scenario_id):
    s = next(s for s in report["scenarios"] if s["id"] == scenario_id)
    return {c["id"]: c["verdict"] for c in s["checks"]}


def by_task(entries, task):
    return sorted((e for e in entries if e["task"] == task), key=lambda e: e["t_arrival_us"])


def test_hello_reports_the_library_and_every_scenario_runs_clean(adapter):
    name, (report, _, proc) = adapter
    hello = report["client"]["hello"]
    assert hello["protocol"] == 1 and hello["features"] == ["cancel"]
    c = hello["client"]
    assert c["name"] == name
    assert c["version"] not in ("", "unknown") and c["version"][0].isdigit(), c
    assert c["adapter"] == f"{ADAPTERS[name]} stdio adapter 1"
    assert c["config"]
    for s in report["scenarios"]:
        assert s["error"] is None, s["error"]
        assert not s.get("protocol_errors"), s["protocol_errors"]
    # every library breaks some rule here: a graded run that fails
    assert report["exit_code"] == 1 and proc.returncode == 1, proc.stdout
    assert report["level"] == "L0"


# Checks every adapter gets the same verdict on, whatever the library.
COMMON = {
    # no library keeps one pause for every task of the account
    ("step-1-3-shared-read", "wait.scope_pause"): "fail",
    # none adds an Idempotency-Key or reads the write's status
    ("write-drop-reused-connection", "write.no_duplicate"): "fail",
    ("write-drop-reused-connection", "write.reconcile_first"): "fail",
}

# None hands a task over to a person: the hellos list no "escalation"
# feature, so budget.escalates judges the budget alone. go-retryablehttp
# waits out Retry-After: 8 past its 2 s budget (fail); OkHttp does not
# retry the 429 and Guzzle gives up within the budget: nothing to fault,
# and a partly judged check is n/a, never pass.
ESCALATES = {"go-retryablehttp": "fail", "okhttp": "n/a", "guzzle": "n/a"}


@pytest.mark.parametrize("scenario,check", sorted(COMMON))
def test_common_verdicts(adapter, scenario, check):
    _, (report, _, _) = adapter
    assert verdicts(report, scenario)[check] == COMMON[(scenario, check)]


def test_budget_alone_judges_a_client_without_escalation(adapter):
    name, (report, _, _) = adapter
    v = verdicts(report, "step-5-budget-long-retry-after")["budget.escalates"]
    assert v == ESCALATES[name]


# A GET whose reused keep-alive connection closes without a byte is resent
# at once on a new connection by every library's HTTP layer: net/http's
# transport (shouldRetryRequest) and libcurl below the hooks of
# go-retryablehttp and Guzzle, OkHttp above its network interceptor.
CLOSE_IDLE_SEEN = {"go-retryablehttp": False, "okhttp": True, "guzzle": False}


def test_resend_on_a_closed_reused_connection(adapter):
    name, (report, journals, _) = adapter
    r2 = by_task(journals["read-close-idle-reused-connection"], "r2")
    assert [(e["fault"], e["conn_reuse"]) for e in r2] == [("close_idle", 1), ("respond", 0)]
    assert r2[1]["t_arrival_us"] - r2[0]["t_done_us"] < 500_000
    hidden = verdicts(report, "read-close-idle-reused-connection")["attempts.hidden"]
    assert hidden == ("pass" if CLOSE_IDLE_SEEN[name] else "fail")


# ---- hashicorp/go-retryablehttp 0.7.1 ---------------------------------------

def test_go_honours_integer_retry_after_past_retry_wait_max(go):
    """DefaultBackoff returns a 429/503's Retry-After seconds before it
    applies RetryWaitMax (client.go, DefaultBackoff): Retry-After: 8 is
    waited out although the task's max_wait_s (RetryWaitMax) is 2."""
    report, journals, _ = go
    v = verdicts(report, "step-5-budget-long-retry-after")
    assert v["wait.retry_after"] == "pass" and v["budget.escalates"] == "fail"
    e = by_task(journals["step-5-budget-long-retry-after"], "t1")
    assert len(e) == 2 and e[1]["t_arrival_us"] >= e[0]["pause_until_us"] - 50_000
    assert verdicts(report, "step-1-3-shared-read")["wait.retry_after"] == "pass"


def test_go_does_not_read_an_http_date(go):
    """strconv.ParseInt fails on an HTTP-date, so DefaultBackoff falls back
    to RetryWaitMin: the retry comes 1 s after the answer, whatever the date
    says. (The date names ceil(now) + 1 s, 1-2 s ahead, so the verdict is
    wait.retry_after's fail in ~95% of runs; in the rest the second happens
    to be long enough.)"""
    _, journals, _ = go
    e = by_task(journals["retry-after-http-date"], "t1")
    gap = e[1]["t_arrival_us"] - e[0]["t_response_us"]
    assert 900_000 <= gap <= 1_500_000, gap


def test_go_resends_a_post_whose_answer_was_lost(go):
    """DefaultRetryPolicy retries any transport error, whatever the method:
    the write is committed twice, each attempt reported by the hooks."""
    report, _, _ = go
    for sid in ("write-no-reconciliation", "write-drop-reused-connection"):
        v = verdicts(report, sid)
        assert v["write.no_duplicate"] == "fail" and v["attempts.hidden"] == "pass", sid


def test_go_cancel_stops_the_pending_wait(go):
    """Do selects on req.Context().Done() while it waits: nothing after the cancel."""
    report, _, _ = go
    v = verdicts(report, "step-5-cancel-pending-retry")
    assert v["cancel.quiet"] == "pass" and v["attempts.hidden"] == "pass"


# ---- OkHttp 3.13.1 -----------------------------------------------------------

def test_okhttp_never_retries_a_429_or_503(okhttp):
    """RetryAndFollowUpInterceptor.followUpRequest retries no 429, and a 503
    only when its Retry-After is exactly 0: one attempt per task."""
    report, journals, _ = okhttp
    for sid in ("step-1-3-shared-read", "step-5-cancel-pending-retry",
                "step-5-budget-long-retry-after"):
        tasks = {e["task"] for e in journals[sid]}
        assert len(journals[sid]) == len(tasks), sid
    assert verdicts(report, "step-1-3-shared-read")["wait.retry_after"] == "n/a"
    # the 503's result came before the cancel: there was nothing to cancel
    assert verdicts(report, "step-5-cancel-pending-retry")["cancel.quiet"] == "n/a"


def test_okhttp_resends_a_post_only_on_a_reused_connection(okhttp):
    """retryOnConnectionFailure: StreamAllocation.streamFailed forgets the
    route of a connection that never carried an exchange, so a fresh
    connection's failure is not retried (one address, no route left); on a
    pooled keep-alive connection it is, at once, POST included. The
    network interceptor sees the resend."""
    report, journals, _ = okhttp
    fresh = verdicts(report, "write-no-reconciliation")
    assert fresh["write.no_duplicate"] == "pass" and fresh["ambiguity.preserved"] == "pass"
    assert len(journals["write-no-reconciliation"]) == 1
    reused = verdicts(report, "write-drop-reused-connection")
    assert reused["write.no_duplicate"] == "fail" and reused["attempts.hidden"] == "pass"
    w = by_task(journals["write-drop-reused-connection"], "w1")
    assert [e["conn_reuse"] for e in w] == [1, 0]
    assert w[1]["t_arrival_us"] - w[0]["t_done_us"] < 500_000


# ---- Guzzle 7.4.5 ------------------------------------------------------------

def test_guzzle_ignores_retry_after(guzzle):
    """RetryMiddleware::exponentialDelay(retries) is 2^(retries-1) s and never
    looks at the response: the first retry comes 1 s after a Retry-After: 2."""
    report, journals, _ = guzzle
    for sid in ("step-1-3-shared-read", "step-5-budget-long-retry-after"):
        assert verdicts(report, sid)["wait.retry_after"] == "fail", sid
    e = by_task(journals["step-1-3-shared-read"], "t1")
    gap = e[1]["t_arrival_us"] - e[0]["t_response_us"]
    assert 950_000 <= gap <= 1_500_000, gap


def test_guzzle_cancel_does_not_reach_a_scheduled_retry(guzzle):
    """Once the retry middleware resolved the call's promise with its
    retry's, Promise::cancel no longer reaches it: the delayed retry goes
    out after the cancel, and the ones after it."""
    report, journals, _ = guzzle
    v = verdicts(report, "step-5-cancel-pending-retry")
    assert v["cancel.quiet"] == "fail" and v["attempts.hidden"] == "fail"
    assert len(journals["step-5-cancel-pending-retry"]) >= 2


def test_guzzle_resends_posts_after_an_empty_reply(guzzle):
    """curl's 'empty reply' (errno 52) becomes a ConnectException
    (CurlFactory::createRejection), which the decider retries: a POST too.
    On a reused connection libcurl itself resends first, on a fresh
    connection, where neither progress nor on_stats sees it."""
    report, journals, _ = guzzle
    fresh = verdicts(report, "write-no-reconciliation")
    assert fresh["write.no_duplicate"] == "fail" and fresh["attempts.hidden"] == "pass"
    reused = verdicts(report, "write-drop-reused-connection")
    assert reused["attempts.hidden"] == "fail"
    w = by_task(journals["write-drop-reused-connection"], "w1")
    assert [e["conn_reuse"] for e in w] == [1, 0]
    assert w[1]["t_arrival_us"] - w[0]["t_done_us"] < 500_000
