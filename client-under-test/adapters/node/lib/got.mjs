// got (14.x, pinned in ../package.json; 15 and later need Node.js 22).
//
// Retry as documented (https://github.com/sindresorhus/got/blob/main/documentation/7-retry.md):
// got retries by default, `retry.limit` 2, only the methods GET PUT HEAD
// DELETE OPTIONS TRACE (kept: POST is never retried), the statuses 408 413
// 429 500 502 503 504 521 522 524 and the network errors ETIMEDOUT
// ECONNRESET EADDRINUSE ECONNREFUSED EPIPE ENOTFOUND ENETUNREACH EAI_AGAIN;
// delay `1000 * 2 ** (retry - 1) + noise` (noise up to 100 ms), or the
// Retry-After. The budget sets `retry.limit` (max_attempts - 1) and
// `retry.maxRetryAfter` (max_wait_s): "If Retry-After header is greater
// than maxRetryAfter, it will cancel the request" (options.d.ts). Nothing
// else is changed; got has no timeout by default.
//
// Attempts: hooks.beforeRetry, on the one shared instance (got.extend).
// got calls it AFTER the backoff sleep, right before it builds the retry
// (dist/source/core/index.js: `await new Promise(... setTimeout(resolve,
// backoff) ...)`, then `for (const hook of this.options.hooks.beforeRetry)`),
// and only when a retry really follows. So the action_result of a failed
// attempt is reported late, when its retry goes out (its end time is taken
// from got's error.timings for waited_ms); the first action_sent is the
// call itself, and the last attempt's outcome is what got returns or throws.
// An event the scenario fires on client_saw therefore waits for the retry.
//
// Cancel: the task's AbortSignal as got's `signal` option. Aborting
// destroys the request, which calls `_stopRetry()` (clears the backoff
// timer) and got checks `this.destroyed` before the hooks and the retry.
//
// Retry-After (dist/source/core/index.js): `retryAfter =
// Number(response.headers['retry-after'])`, an HTTP-date as `Date.parse(...)
// - Date.now()` with `if (retryAfter <= 0) { retryAfter = 1; }`, and in
// calculate-retry-delay.js `if (retryAfter > computedValue) { return 0; }
// return retryAfter;` where computedValue is `retryOptions.maxRetryAfter ??
// options.timeout.request ?? Number.POSITIVE_INFINITY`. "0" is falsy there:
// got then uses its own backoff.
//
// Outcomes: a response -> its status; HTTPError -> its status; any other
// RequestError (even one carrying the headers of a body cut short) ->
// transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let got;
let HTTPError;

export const library = 'got';
export const config = 'got.extend({hooks: {beforeRetry}}); per request retry: {limit: max_attempts-1, maxRetryAfter: max_wait_s*1000}, signal; other retry options default';

export async function create(registry) {
	({ default: got, HTTPError } = await import('got'));
	return got.extend({
		hooks: {
			beforeRetry: [
				(error) => {
					const t = registry.find(error.options?.url);
					if (!t)
						return;
					const timings = error.timings ?? error.response?.timings;
					const end = timings?.end ?? timings?.error ?? timings?.abort;
					// got's timings are Date.now() instants; the tracker keeps performance.now()
					const at = end ? performance.now() - (Date.now() - end) : null;
					t.retried({ status: statusOf(error) ?? 0, headers: error.response?.headers, error, at });
				},
			],
		},
	});
}

export async function run(client, t) {
	t.sent();
	const res = await client(t.url, { ...t.options(),
		retry: t.knobs({ limit: t.retries, maxRetryAfter: t.maxWaitMs }) });
	return { status: res.statusCode, body: res.body };
}

export function statusOf(err) {
	return err instanceof HTTPError ? err.response.statusCode : null;
}
