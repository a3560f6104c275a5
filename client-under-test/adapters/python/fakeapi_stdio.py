"""fakeapi_stdio.py -- the generic part of the Python stdio adapters.

The harness's stdio protocol (docs/client-protocol.md, version 1) for a
real Python retry library, standard library only (Python 3.11). One small
file per library (urllib3_retry.py, requests_retry.py, ...) holds what
differs and runs this module's serve() with itself:

    fakeapi-harness run --client '/usr/bin/python3 client-under-test/adapters/python/urllib3_retry.py' SUITE

What this part does, the same for every library:

- prints `hello` at once, with the library's name, its installed version
  (read at run time), this adapter's name and the library configuration
  used, and `wall_ms` (time.time() in ms), in one line;
- answers the harness's clock probe, `{"type": "clock"}`, at once on the
  main thread with `{"type": "clock", "wall_ms": ...}`, time.time() read
  then (under --time-scale it is libfaketime's clock, which the harness
  checks against its own);
- reads `task`, `cancel` and `shutdown` lines on the main thread and runs
  each task on a thread of its own, all of them sharing the library's
  client objects (one per process, or one per retry configuration where
  the library fixes its retries when the client is made);
- gives the library file a Task: method, url, headers with the key from
  os.environ[task["key_env"]] as `Authorization: Bearer`, the body, the
  budget, a threading.Event set on cancel, and the reporting calls the
  library's hooks use (sent(), got(), scheduled(), attempt()); a hook
  finds the task of its thread with current();
- builds the `result` mechanically from what the library returned or
  raised: a 2xx answer is `succeeded` (provider_id: the JSON body's `id`
  for a write), another status returned is `failed` with `sent: "yes"`,
  and so is the library giving up on a status (the library file's
  gave_up_on_status() says which exceptions those are; the status is the
  last one its hooks saw); any other exception is a transport error
  (nothing, or part of an answer, came back): `failed` with `sent:
  "unknown"`. `attempts` is what the hooks counted (null for a library
  without one), `waited_ms` the time measured between one attempt's end
  and the next one's start;
- cancel: sets the task's Event, which the library file hands to the
  library's own stop mechanism where it has one. The task's `result`
  (`cancelled`) is reported when the library's call returns, so that
  `attempts` counts whatever the library still sent after the cancel;
  a library that does not stop in time is abandoned 1 s before the
  task's deadline: its result is reported then, and what its hooks see
  later goes to stderr only (the task has its result);
- shutdown (or end of input): every task still running is reported
  `cancelled`, then the process exits 0 without waiting for the abandoned
  calls.

It never prints the key or a request body: error texts are cut from the
library's exception messages with both taken out.

A library file defines: NAME (the library), DIST (its distribution name
for importlib.metadata), CONFIG (one line: the configuration used),
HOOKED (False when the library lets the application see
no attempt: `attempts` is then null), run(task) -> the library's response
object (anything with .status or .status_code, .content or .data,
.headers), raising on a transport error or when it gives up, and
gave_up_on_status(exc) -> True for the exceptions the library raises when
it gives up on an HTTP status rather than on a transport error.
"""
import importlib.metadata
import json
import os
import sys
import threading
import time

PROTOCOL = 1
ADAPTER = "python stdio adapter 1"
ERROR_MAX = 200  # characters of an exception message kept in a line
ABANDON_MARGIN_S = 1.0  # a cancelled call still running this long before the deadline is left

_out_lock = threading.Lock()
_local = threading.local()
_shared_lock = threading.Lock()
_shared = {}


def log(msg):
    """One line on stderr, the client's own log."""
    with _out_lock:
        sys.stderr.write(f"fakeapi_stdio: {msg}\n")
        sys.stderr.flush()


def emit(obj):
    """One protocol line on stdout."""
    line = json.dumps(obj, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def wall_ms():
    """The wall clock (CLOCK_REALTIME) in ms since the Unix epoch."""
    return time.time() * 1000


def current():
    """The Task the calling thread runs, or None (a hook on another thread)."""
    return getattr(_local, "task", None)


def shared(key, factory):
    """The process's one client object for @key, made by factory() once."""
    with _shared_lock:
        if key not in _shared:
            _shared[key] = factory()
        return _shared[key]


def _safe_method(method):
    return method in ("GET", "HEAD", "OPTIONS")


def _is_write(msg):
    if msg.get("stream"):
        return False
    return msg["method"] in ("POST", "PUT", "PATCH") or \
        msg.get("class") in ("idempotent_write", "uncertain_write")


def status_of(resp):
    """The HTTP status of a library's response object."""
    for attr in ("status_code", "status"):
        v = getattr(resp, attr, None)
        if isinstance(v, int):
            return v
    return 0


def header_of(resp, name):
    """A response header's value, or None."""
    headers = getattr(resp, "headers", None)
    if headers is None:
        return None
    try:
        return headers.get(name)
    except Exception:  # a headers object without get()
        return None


def body_of(resp):
    """A library response object's body, bytes."""
    for attr in ("content", "data"):
        v = getattr(resp, attr, None)
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
    return b""


class Task:
    """One task line and what its attempts did so far.

    The reporting calls are safe from any thread and do nothing (but
    count, on stderr) once the task has its result."""

    def __init__(self, msg):
        self.id = msg["id"]
        self.method = msg["method"]
        self.url = msg["url"]
        self.stream = bool(msg.get("stream"))
        self.write = _is_write(msg)
        budget = msg.get("budget") or {}
        self.max_attempts = budget.get("max_attempts")
        self.max_wait_s = budget.get("max_wait_s")
        self.deadline_ms = msg.get("deadline_ms")
        self.received = time.monotonic()
        key_env = msg.get("key_env") or "FAKEAPI_KEY"
        self._key = os.environ.get(key_env, "")
        if not self._key:
            log(f"task {self.id}: {key_env} is not set")
        self.headers = dict(msg.get("headers") or {})
        self.headers["Authorization"] = "Bearer " + self._key
        body = msg.get("body")
        self.body = body.encode("utf-8") if isinstance(body, str) else None
        self.cancel = threading.Event()
        self.attempts = 0
        self.last_status = None  # of the last attempt with a known outcome
        self.waited_s = 0.0
        self._lock = threading.Lock()
        self._open = False  # an attempt was sent and has no outcome yet
        self._last_end = None
        self.done = False

    # -- reporting, for the library's hooks -------------------------------

    def scrub(self, text):
        """@text without the key or the body, cut to ERROR_MAX characters."""
        text = str(text)
        if self._key:
            text = text.replace(self._key, "[key]")
        if self.body:
            text = text.replace(self.body.decode("utf-8", "replace"), "[body]")
        return text[:ERROR_MAX]

    def sent(self):
        """An attempt goes on the wire now: `action_sent`."""
        with self._lock:
            self.attempts += 1
            if self._last_end is not None:
                self.waited_s += time.monotonic() - self._last_end
                self._last_end = None
            self._open = True
            if self.done:
                log(f"task {self.id}: attempt {self.attempts} sent after its result")
                return
            emit({"type": "action_sent", "task": self.id, "attempt": self.attempts,
                  "kind": "read" if _safe_method(self.method) else "write",
                  "idempotency_key": self.headers.get("Idempotency-Key")})

    def got(self, status, retry_after=None, error=None):
        """The open attempt's outcome: `action_result` (status 0: transport error)."""
        with self._lock:
            if not self._open:
                return
            self._open = False
            self.last_status = status
            self._last_end = time.monotonic()
            if self.done:
                return
            emit({"type": "action_result", "task": self.id, "attempt": self.attempts,
                  "kind": "read" if _safe_method(self.method) else "write",
                  "status": status, "retry_after": retry_after,
                  "error": self.scrub(error) if error is not None else None})

    def scheduled(self, due_s, reason="backoff"):
        """The library will retry in @due_s seconds: `retry_scheduled`."""
        with self._lock:
            if self.done:
                return
            emit({"type": "retry_scheduled", "task": self.id, "attempt": self.attempts + 1,
                  "due_in_ms": max(0, int(due_s * 1000)), "reason": reason})

    def attempt(self, fn, *args, **kwargs):
        """Run one attempt fn(...) between sent() and got(): for libraries
        that retry the application's own function (tenacity, backoff,
        retrying), where every call of it is one attempt."""
        self.sent()
        try:
            resp = fn(*args, **kwargs)
        except BaseException as e:
            self.got(0, error=f"{type(e).__name__}: {e}")
            raise
        self.got(status_of(resp), header_of(resp, "Retry-After"))
        return resp

    # -- the result --------------------------------------------------------

    def finish(self, outcome, sent, status, provider_id=None, attempts=True):
        """Print the task's `result` (once)."""
        with self._lock:
            if self.done:
                return
            self.done = True
            emit({"type": "result", "task": self.id, "outcome": outcome,
                  "attempts": self.attempts if attempts else None,
                  "waited_ms": int(self.waited_s * 1000), "sent": sent,
                  "status": status, "provider_id": provider_id})


def _provider_id(task, resp):
    if not task.write:
        return None
    try:
        doc = json.loads(body_of(resp))
    except ValueError:
        return None
    pid = doc.get("id") if isinstance(doc, dict) else None
    return pid if isinstance(pid, str) else None


def _run_task(lib, task):
    _local.task = task
    resp, error = None, None
    try:
        resp = lib.run(task)
    except Exception as e:  # the library gave up or failed: mapped below
        error = e
    if error is None:
        task.got(status_of(resp), header_of(resp, "Retry-After"))
    else:
        task.got(0, error=f"{type(error).__name__}: {error}")
        log(f"task {task.id}: {task.scrub(type(error).__name__ + ': ' + str(error))}")
    if task.cancel.is_set():
        _cancelled(lib, task)
    elif error is None:
        status = status_of(resp)
        task.finish("succeeded" if 200 <= status < 300 else "failed", "yes", status,
                    _provider_id(task, resp) if 200 <= status < 300 else None, lib.HOOKED)
    elif lib.gave_up_on_status(error) and task.last_status:
        task.finish("failed", "yes", task.last_status, attempts=lib.HOOKED)
    else:  # a transport error: nothing, or part of an answer, came back
        task.finish("failed", "unknown", 0, attempts=lib.HOOKED)


def _cancelled(lib, task):
    """Report @task cancelled, with what its attempts so far say of `sent`."""
    with task._lock:
        if task._open or (task.attempts > 0 and not task.last_status):
            sent = "unknown"  # in flight, or the last one broke
        else:
            sent = "yes" if task.attempts > 0 else "no"
    task.finish("cancelled", sent, task.last_status or 0, attempts=lib.HOOKED)


def _hello(lib):
    try:
        version = importlib.metadata.version(lib.DIST)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    emit({"type": "hello", "protocol": PROTOCOL,
          "client": {"name": lib.NAME, "version": version, "adapter": ADAPTER,
                     "config": lib.CONFIG},
          "features": ["cancel"], "wall_ms": wall_ms()})


def _stop_all(lib, tasks):
    for task in list(tasks.values()):
        task.cancel.set()
        _cancelled(lib, task)


def serve(lib):
    """Speak the protocol for library module @lib until shutdown; exits 0."""
    _hello(lib)
    tasks = {}
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace").strip()
        try:
            msg = json.loads(line)
            kind = msg["type"]
        except (ValueError, TypeError, KeyError):
            log(f"ignored a line that is no protocol message: {line[:60]!r}")
            continue
        if kind == "task":
            try:
                task = Task(msg)
            except (KeyError, TypeError, AttributeError) as e:
                log(f"ignored a task line without {e}")
                continue
            tasks[task.id] = task
            threading.Thread(target=_run_task, args=(lib, task), daemon=True,
                             name=f"task-{task.id}").start()
        elif kind == "cancel":
            task = tasks.get(msg.get("id"))
            if task is None or task.done:
                continue
            task.cancel.set()
            if task.deadline_ms is not None:
                left = task.received + task.deadline_ms / 1000 - ABANDON_MARGIN_S - time.monotonic()
                timer = threading.Timer(max(0.0, left), _cancelled, args=(lib, task))
                timer.daemon = True
                timer.start()
        elif kind == "clock":
            emit({"type": "clock", "wall_ms": wall_ms()})
        elif kind == "shutdown":
            break
        else:
            log(f"ignored a line of unknown type {str(kind)[:40]!r}")
    _stop_all(lib, tasks)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
