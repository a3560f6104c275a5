// retryablehttp.go -- the library part of the Go stdio adapter:
// hashicorp/go-retryablehttp 0.7.x (built from Debian's
// golang-github-hashicorp-go-retryablehttp-dev, 0.7.1).
//
// Configuration, as the package documentation
// (https://pkg.go.dev/github.com/hashicorp/go-retryablehttp, README
// "retryablehttp.NewClient()") gives it: retryablehttp.NewClient() with its
// defaults -- CheckRetry = DefaultRetryPolicy (retry a connection error, a
// 429, and any 5xx but 501), Backoff = DefaultBackoff (RetryWaitMin 1 s
// doubling per retry up to RetryWaitMax; on a 429 or 503 only, a
// Retry-After holding an integer of seconds replaces it, whatever
// RetryWaitMax says; an HTTP-date is not read; no jitter), its pooled
// net/http client from go-cleanhttp (no overall timeout) -- and the two knobs
// an application sets from its budget: RetryMax = max_attempts - 1,
// RetryWaitMax = max_wait_s (the longest single wait: the library has no
// total-wait budget). Both are fields of the Client, not of a request, so
// the adapter keeps one Client per distinct budget, all sharing one
// *http.Client (one connection pool); the library keeps no other state
// across requests.
//
// Attempts: RequestLogHook ("called before each retry", with the retry
// number, 0 for the first request) prints action_sent, live, just before the
// attempt goes on the wire; ResponseLogHook ("invoked at the end of every
// HTTP request executed") prints action_result for every attempt that got an
// answer. A transport error reaches no hook: CheckRetry is wrapped to see it
// (and returns DefaultRetryPolicy's decision unchanged), so its
// action_result is live too. Below every hook, net/http's transport itself
// resends a GET (any replayable request) whose reused keep-alive connection
// broke before an answer (transport.go, shouldRetryRequest): that attempt
// is not reported, and attempts.hidden counts it.
//
// Cancel: the request's context (NewRequestWithContext); the library stops
// its pending wait ("case <-req.Context().Done()") or the request in flight.
//
// Outcome: Do returns the response when CheckRetry does not retry it (2xx,
// 4xx, 501); after the last retry of a retryable answer or error it returns
// only an error ("giving up after N attempt(s)"), the status being then the
// one the hooks saw on the last attempt.
package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// libVersion is the installed package's version, set at build time
// (-ldflags "-X main.libVersion=..." from dpkg, see the Makefile).
var libVersion = "unknown"

const libConfig = "retryablehttp.NewClient() defaults (DefaultRetryPolicy, DefaultBackoff, " +
	"RetryWaitMin 1s), RetryMax=max_attempts-1, RetryWaitMax=max_wait_s"

func libHello() map[string]any {
	return map[string]any{"name": "go-retryablehttp", "version": libVersion,
		"adapter": "go stdio adapter 1", "config": libConfig}
}

var (
	sharedHTTP = cleanhttp.DefaultPooledClient()
	clientsMu  sync.Mutex
	clients    = map[[2]int64]*retryablehttp.Client{}
)

// clientFor gives the Client configured for budget b (made at first use).
func clientFor(b Budget) *retryablehttp.Client {
	key := [2]int64{-1, -1}
	if b.MaxAttempts != nil {
		key[0] = int64(*b.MaxAttempts)
	}
	if b.MaxWaitS != nil {
		key[1] = int64(*b.MaxWaitS * 1000)
	}
	clientsMu.Lock()
	defer clientsMu.Unlock()
	if c := clients[key]; c != nil {
		return c
	}
	c := retryablehttp.NewClient()
	c.HTTPClient = sharedHTTP
	if b.MaxAttempts != nil {
		c.RetryMax = *b.MaxAttempts - 1
	}
	if b.MaxWaitS != nil {
		c.RetryWaitMax = time.Duration(key[1]) * time.Millisecond
	}
	c.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, retry int) {
		if r := ReporterOf(req.Context()); r != nil {
			r.Sent(retry + 1)
		}
	}
	c.ResponseLogHook = func(_ retryablehttp.Logger, resp *http.Response) {
		if r := ReporterOf(resp.Request.Context()); r != nil {
			r.Result(resp.StatusCode, resp.Header.Get("Retry-After"), nil)
		}
	}
	c.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if r := ReporterOf(ctx); r != nil && err != nil {
			r.Result(0, "", err)
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	clients[key] = c
	return c
}

func libRun(ctx context.Context, t *Task) Outcome {
	var body any
	if t.Body != nil {
		body = []byte(*t.Body)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, t.Method, t.URL, body)
	if err != nil {
		return Outcome{Err: err}
	}
	for k, v := range t.Headers {
		req.Header.Set(k, v)
	}
	if t.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+t.Key())
	resp, err := clientFor(t.Budget).Do(req)
	if err != nil {
		return Outcome{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Outcome{Status: resp.StatusCode, Err: err, Partial: true}
	}
	return Outcome{Status: resp.StatusCode, Body: bytes.TrimSpace(b)}
}
