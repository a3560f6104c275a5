<?php
// stdio.php -- the generic part of the PHP stdio adapter
// (docs/client-protocol.md, protocol 1): hello (with its wall_ms), task
// lines read without blocking (stream_select on STDIN) in one loop with the
// library's own event loop, the clock probe answered in that loop as soon as
// its line is read (microtime(true), which PHP reads through the C library:
// libfaketime's clock under --time-scale), cancel and shutdown plumbing, and
// the result built mechanically from what the library's hooks reported. PHP has no threads: a library part
// (here guzzle.php) starts each task as an asynchronous request and
// advances its transfers in tick(), which the loop calls between reads.
//
// Never printed: the key (read from the task's key_env and handed to the
// library only) and the request body.
declare(strict_types=1);

/** One task line (the members an adapter uses). */
final class Task
{
    public string $id;
    public string $class;
    public string $method;
    public string $url;
    public ?string $body;
    public string $keyEnv;
    /** @var array<string,string> */
    public array $headers;
    public ?int $maxAttempts;
    public ?float $maxWaitS;
    public bool $stream;

    public function __construct(array $m)
    {
        $this->id = (string) ($m['id'] ?? '');
        $this->class = (string) ($m['class'] ?? '');
        $this->method = (string) ($m['method'] ?? 'GET');
        $this->url = (string) ($m['url'] ?? '');
        $this->body = isset($m['body']) ? (string) $m['body'] : null;
        $this->keyEnv = (string) ($m['key_env'] ?? '');
        $this->headers = array_map('strval', is_array($m['headers'] ?? null) ? $m['headers'] : []);
        $b = is_array($m['budget'] ?? null) ? $m['budget'] : [];
        $this->maxAttempts = is_int($b['max_attempts'] ?? null) ? $b['max_attempts'] : null;
        $this->maxWaitS = is_numeric($b['max_wait_s'] ?? null) ? (float) $b['max_wait_s'] : null;
        $this->stream = ($m['stream'] ?? false) === true;
    }

    /** The task's secret, from the environment variable it names. */
    public function key(): string
    {
        $k = $this->keyEnv === '' ? false : getenv($this->keyEnv);
        return $k === false ? '' : $k;
    }

    /** Whether the task creates something (its provider_id is the answer's "id"). */
    public function isWrite(): bool
    {
        return str_contains($this->class, 'write');
    }
}

/** One task's attempts as the library's hooks report them. */
final class Reporter
{
    private int $attempts = 0;
    private int $lastStatus = 0;
    private bool $answered = false;
    private bool $pending = false;
    private bool $cancelled = false;
    private bool $finished = false;
    private ?float $lastEnd = null;
    private float $waited = 0.0;
    /** @var callable */
    private $abort;

    public function __construct(private Task $task)
    {
        $this->abort = static function (): void {
        };
    }

    public function isFinished(): bool
    {
        return $this->finished;
    }

    /** Whether an attempt is on the wire without its action_result yet. */
    public function isPending(): bool
    {
        return $this->pending;
    }

    /** Attempt n+1 is about to go on the wire. */
    public function sent(): void
    {
        if ($this->finished) {
            // the protocol allows no line after the result: a note on stderr
            $this->pending = true;
            fwrite(STDERR, "adapter: task {$this->task->id}: the library sent an attempt after its result\n");
            return;
        }
        if ($this->lastEnd !== null) {
            $this->waited += microtime(true) - $this->lastEnd;
            $this->lastEnd = null;
        }
        $this->attempts++;
        $this->pending = true;
        emit(['type' => 'action_sent', 'task' => $this->task->id, 'attempt' => $this->attempts,
              'idempotency_key' => $this->task->headers['Idempotency-Key'] ?? null]);
    }

    /** The current attempt's outcome: a status and its raw Retry-After (or
     *  null), or status 0 and a transport error. */
    public function result(int $status, ?string $retryAfter, ?string $error): void
    {
        if (!$this->pending) {
            return;
        }
        $this->pending = false;
        if ($this->finished) {
            return;
        }
        $this->lastEnd = microtime(true);
        $this->lastStatus = $status;
        $this->answered = $this->answered || $status > 0;
        emit(['type' => 'action_result', 'task' => $this->task->id, 'attempt' => $this->attempts,
              'status' => $status, 'retry_after' => $retryAfter, 'error' => $error]);
    }

    /** How the library aborts this task (called on a cancel or shutdown). */
    public function onCancel(callable $abort): void
    {
        $this->abort = $abort;
    }

    public function cancel(): bool
    {
        if ($this->finished) {
            return false;
        }
        $this->cancelled = true;
        ($this->abort)();
        return true;
    }

    /**
     * Prints the task's result, mapped mechanically: cancelled after a
     * cancel; a 2xx answer read whole is succeeded; an HTTP status the
     * library returned or raised (or the hooks saw on the last attempt) is
     * failed, sent "yes"; a transport error or a body cut short is failed,
     * sent "unknown". $status: the final answer's (0: none); $body: its text
     * or null; $partial: its body was cut short; $error: what was raised.
     */
    public function finish(int $status, ?string $body, bool $partial, ?string $error): void
    {
        if ($this->finished) {
            return;
        }
        $this->finished = true;
        if ($status === 0 && !$this->pending) {
            $status = $this->lastStatus;
        }
        $outcome = 'failed';
        $sent = 'no';
        $pid = null;
        if ($this->cancelled) {
            $outcome = 'cancelled';
            if ($this->lastEnd !== null) { // the wait the cancel cut short
                $this->waited += microtime(true) - $this->lastEnd;
            }
            $sent = $this->answered ? 'yes' : ($this->attempts > 0 ? 'unknown' : 'no');
        } elseif ($partial) {
            $sent = 'unknown';
        } elseif ($error === null && $status >= 200 && $status < 300) {
            $outcome = 'succeeded';
            $sent = 'yes';
            if ($this->task->isWrite() && $body !== null) {
                $v = json_decode($body, true);
                $pid = is_array($v) && is_string($v['id'] ?? null) ? $v['id'] : null;
            }
        } elseif ($status > 0) {
            $sent = 'yes';
        } elseif ($this->attempts > 0) {
            $sent = 'unknown';
        }
        if ($error !== null) {
            fwrite(STDERR, "adapter: task {$this->task->id}: $outcome: $error\n");
        }
        emit(['type' => 'result', 'task' => $this->task->id, 'outcome' => $outcome,
              'attempts' => $this->attempts, 'waited_ms' => (int) round($this->waited * 1000),
              'sent' => $sent, 'status' => $status, 'provider_id' => $pid]);
    }
}

/** What a library part provides. */
interface Library
{
    /** The hello's "client" object. */
    public function hello(): array;

    /** Start task $t without blocking; report through $r, end with $r->finish(). */
    public function start(Task $t, Reporter $r): void;

    /** Advance the library's transfers a little (at most ~10 ms of waiting). */
    public function tick(): void;
}

/** The wall clock (CLOCK_REALTIME) in ms since the Unix epoch. */
function wall_ms(): float
{
    return microtime(true) * 1000;
}

/** Prints one protocol line. */
function emit(array $m): void
{
    fwrite(STDOUT, json_encode($m, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE) . "\n");
    fflush(STDOUT);
}

/** Runs the protocol with $lib until shutdown or the end of input; exits 0. */
function stdio_main(Library $lib): void
{
    emit(['type' => 'hello', 'protocol' => 1, 'client' => $lib->hello(), 'features' => ['cancel'],
          'wall_ms' => wall_ms()]);
    stream_set_blocking(STDIN, false);
    /** @var array<string,Reporter> $tasks */
    $tasks = [];
    $buf = '';
    $lineno = 0;
    $open = true;
    $deadline = null;
    while (true) {
        if ($open) {
            $r = [STDIN];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 10000) > 0) {
                $chunk = fread(STDIN, 1 << 16);
                if ($chunk === false || ($chunk === '' && feof(STDIN))) {
                    $open = false;
                } else {
                    $buf .= $chunk;
                }
            }
            while ($open && ($p = strpos($buf, "\n")) !== false) {
                $line = substr($buf, 0, $p);
                $buf = substr($buf, $p + 1);
                $lineno++;
                if (trim($line) === '') {
                    continue;
                }
                $m = json_decode($line, true);
                $type = is_array($m) ? ($m['type'] ?? null) : null;
                if ($type === 'task') {
                    $t = new Task($m);
                    $tasks[$t->id] = new Reporter($t);
                    $lib->start($t, $tasks[$t->id]);
                } elseif ($type === 'cancel') {
                    $rep = $tasks[(string) ($m['id'] ?? '')] ?? null;
                    if ($rep === null || !$rep->cancel()) {
                        fwrite(STDERR, "adapter: line $lineno: cancel of no running task, ignored\n");
                    }
                } elseif ($type === 'clock') {
                    emit(['type' => 'clock', 'wall_ms' => wall_ms()]);
                } elseif ($type === 'shutdown') {
                    $open = false;
                } else {
                    fwrite(STDERR, "adapter: line $lineno: not a protocol message, ignored\n");
                }
            }
        }
        if (!$open && $deadline === null) {
            // shutdown (or end of input): cancel what is still running, report it
            foreach ($tasks as $rep) {
                $rep->cancel();
            }
            $deadline = microtime(true) + 4.0;
        }
        $lib->tick();
        $running = array_filter($tasks, static fn (Reporter $rep): bool => !$rep->isFinished());
        if ($deadline !== null && (!$running || microtime(true) > $deadline)) {
            exit(0);
        }
        if (!$open) {
            usleep(10000);
        }
    }
}
