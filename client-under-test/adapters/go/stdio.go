// stdio.go -- the generic part of the Go stdio adapter (docs/client-protocol.md,
// protocol 1): hello (with its wall_ms), task lines read without waiting for
// running tasks, the clock probe answered at once by the reading loop, one
// goroutine per task, cancel through the task's context, shutdown, and the
// result built mechanically from what the library's hooks reported. The
// library part (here retryablehttp.go) provides libHello and libRun.
//
// The wall clock is time.Now(), which Go reads from the kernel (vDSO), not
// through the C library: under --time-scale libfaketime cannot reach it, so
// this adapter reports the real clock and the harness's clock probe refuses
// it, as it should.
//
// Never printed: the key (it is read from the task's key_env and handed to
// the library only) and the request body.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Budget is a task's budget; either member may be null.
type Budget struct {
	MaxAttempts *int     `json:"max_attempts"`
	MaxWaitS    *float64 `json:"max_wait_s"`
}

// Task is one task line (only the members an adapter uses).
type Task struct {
	ID      string            `json:"id"`
	Class   string            `json:"class"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
	KeyEnv  string            `json:"key_env"`
	Budget  Budget            `json:"budget"`
	Stream  bool              `json:"stream"`
}

// Key is the task's secret, from the environment variable the task names.
func (t *Task) Key() string { return os.Getenv(t.KeyEnv) }

// IsWrite tells whether the task creates something (its provider_id is
// then the answer's "id").
func (t *Task) IsWrite() bool { return strings.Contains(t.Class, "write") }

// Outcome is what the library handed back for a task: the final answer's
// status and body when it returned one (Status 0 otherwise), the error it
// returned, if any, and whether that error cut the answer's body short.
type Outcome struct {
	Status  int
	Body    []byte
	Err     error
	Partial bool
}

var outMu sync.Mutex

// wallMs is the wall clock (CLOCK_REALTIME) in ms since the Unix epoch.
func wallMs() float64 { return float64(time.Now().UnixMicro()) / 1000 }

// emit prints one protocol line of type typ about task (none when empty),
// "type" and "task" first; lines of concurrent tasks never interleave.
func emit(typ, task string, fields map[string]any) {
	head, _ := json.Marshal(typ)
	line := append([]byte(`{"type":`), head...)
	if task != "" {
		t, _ := json.Marshal(task)
		line = append(append(line, `,"task":`...), t...)
	}
	if len(fields) > 0 {
		rest, err := json.Marshal(fields)
		if err != nil {
			fmt.Fprintf(os.Stderr, "adapter: cannot encode a %s line: %v\n", typ, err)
			return
		}
		line = append(append(line, ','), rest[1:]...)
	} else {
		line = append(line, '}')
	}
	outMu.Lock()
	os.Stdout.Write(append(line, '\n'))
	outMu.Unlock()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Reporter keeps one task's attempts as the library's hooks report them.
// The hooks run on the goroutine that called the library, one at a time.
type Reporter struct {
	task       *Task
	ctx        context.Context
	attempts   int       // attempts announced with action_sent
	lastStatus int       // status of the last action_result (0: transport error)
	answered   bool      // some attempt got an HTTP status
	pending    bool      // the current attempt has no action_result yet
	lastEnd    time.Time // when the last attempt ended
	waited     time.Duration
}

// Sent reports attempt n (1, 2, ...) just before it goes on the wire.
func (r *Reporter) Sent(n int) {
	if !r.lastEnd.IsZero() {
		r.waited += time.Since(r.lastEnd)
		r.lastEnd = time.Time{}
	}
	r.attempts = n
	r.pending = true
	emit("action_sent", r.task.ID, map[string]any{"attempt": n,
		"idempotency_key": nullable(r.task.Headers["Idempotency-Key"])})
}

// Result reports the current attempt's outcome: an HTTP status with its raw
// Retry-After (empty: none), or status 0 and a transport error.
func (r *Reporter) Result(status int, retryAfter string, err error) {
	if !r.pending {
		return
	}
	r.pending = false
	r.lastEnd = time.Now()
	r.lastStatus = status
	if status > 0 {
		r.answered = true
	}
	var e any
	if err != nil {
		e = err.Error()
	}
	emit("action_result", r.task.ID, map[string]any{"attempt": r.attempts,
		"status": status, "retry_after": nullable(retryAfter), "error": e})
}

// finish prints the task's result, mapped mechanically (never smarter than
// the library): cancelled when its context was cancelled; a 2xx answer is
// succeeded; the library gave up with an HTTP status known (returned, or seen
// by the hooks on the last attempt) is failed with sent "yes"; a transport
// error, or a body cut short, is failed with sent "unknown".
func (r *Reporter) finish(o Outcome) {
	status := o.Status
	if status == 0 && !r.pending {
		status = r.lastStatus
	}
	outcome, sent := "failed", "no"
	var pid any
	switch {
	case r.ctx.Err() != nil:
		outcome = "cancelled"
		if !r.lastEnd.IsZero() { // the wait the cancel cut short
			r.waited += time.Since(r.lastEnd)
		}
		if r.answered {
			sent = "yes"
		} else if r.attempts > 0 {
			sent = "unknown"
		}
	case o.Partial:
		sent = "unknown"
	case o.Err == nil && status >= 200 && status < 300:
		outcome, sent = "succeeded", "yes"
		if r.task.IsWrite() {
			var v struct {
				ID *string `json:"id"`
			}
			if json.Unmarshal(o.Body, &v) == nil && v.ID != nil {
				pid = *v.ID
			}
		}
	case status > 0:
		sent = "yes"
	case r.attempts > 0:
		sent = "unknown"
	}
	if o.Err != nil {
		fmt.Fprintf(os.Stderr, "adapter: task %s: %s: %v\n", r.task.ID, outcome, o.Err)
	}
	emit("result", r.task.ID, map[string]any{"outcome": outcome,
		"attempts": r.attempts, "waited_ms": r.waited.Milliseconds(), "sent": sent,
		"status": status, "provider_id": pid})
}

type reporterKey struct{}

// ReporterOf finds the task's reporter in a request's context (the library's
// hooks get the request, and through it the task).
func ReporterOf(ctx context.Context) *Reporter {
	r, _ := ctx.Value(reporterKey{}).(*Reporter)
	return r
}

func main() {
	emit("hello", "", map[string]any{"protocol": 1, "client": libHello(),
		"features": []string{"cancel"}, "wall_ms": wallMs()})
	var wg sync.WaitGroup
	cancels := map[string]context.CancelFunc{}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for lineno := 1; ; lineno++ {
		line, err := in.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var m struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			var t Task
			if json.Unmarshal([]byte(line), &m) != nil || json.Unmarshal([]byte(line), &t) != nil {
				fmt.Fprintf(os.Stderr, "adapter: line %d: not a protocol message, ignored\n", lineno)
			} else if m.Type == "task" {
				ctx, cancel := context.WithCancel(context.Background())
				r := &Reporter{task: &t, ctx: ctx}
				cancels[t.ID] = cancel
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.finish(libRun(context.WithValue(ctx, reporterKey{}, r), &t))
				}()
			} else if m.Type == "cancel" {
				if c, ok := cancels[m.ID]; ok {
					c()
				} else {
					fmt.Fprintf(os.Stderr, "adapter: line %d: cancel of unknown task, ignored\n", lineno)
				}
			} else if m.Type == "clock" {
				emit("clock", "", map[string]any{"wall_ms": wallMs()})
			} else if m.Type == "shutdown" {
				break
			} else {
				fmt.Fprintf(os.Stderr, "adapter: line %d: unknown type %q, ignored\n", lineno, m.Type)
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "adapter: reading stdin: %v\n", err)
			break
		}
	}
	// shutdown (or end of input): cancel what is still running, report it
	for _, c := range cancels {
		c()
	}
	wg.Wait()
	os.Exit(0)
}
