// ky (1.x, pinned in ../package.json; 2.x needs Node.js 22), on Node.js's fetch.
//
// Retry as documented (https://github.com/sindresorhus/ky#retry): on by
// default, `limit` 2, methods get put head delete options trace (POST is
// never retried: kept), statuses 408 413 429 500 502 503 504, Retry-After
// read for 413 429 503 (falling back to RateLimit-Reset, X-RateLimit-Reset
// ...), delay `0.3 * (2 ** (attemptCount - 1)) * 1000`, no jitter, no retry
// after ky's own 10 s `timeout` (retryOnTimeout false). The budget sets
// `retry.limit` (max_attempts - 1) and `retry.maxRetryAfter` (max_wait_s).
// The README: "If Retry-After header is greater than maxRetryAfter, it will
// use maxRetryAfter" (it waits that long and retries; the type comment in
// distribution/types/retry.d.ts says "the request will be canceled", which
// the code does not do).
//
// Attempts: hooks.beforeRetry on the one shared instance (ky.extend). ky
// calls it AFTER the retry delay, right before the retry (distribution/
// core/Ky.js #retry: `await delay(ms, ...)`, then `for (const hook of
// this.#options.hooks.beforeRetry)`). So a failed attempt's action_result is
// reported late, when its retry goes out; the first action_sent is the call
// itself and the last attempt's outcome is what ky returns or throws.
//
// Cancel: the task's AbortSignal as ky's `signal`: it aborts the fetch in
// flight and the retry delay (`delay(ms, {signal: userProvidedAbortSignal})`
// rejects with the abort reason), so no hook runs and no retry is sent.
//
// Retry-After (distribution/core/Ky.js): `let after = Number(retryAfter) *
// 1000; if (Number.isNaN(after)) { after = Date.parse(retryAfter) -
// Date.now(); }` ... `const max = this.#options.retry.maxRetryAfter ??
// after; return after < max ? after : max;`. A past date gives a negative
// delay: the retry goes at once; "0" gives 0.
//
// Outcomes: HTTPError -> its status; anything else ky throws (TypeError
// "fetch failed", ky's TimeoutError) -> transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let ky;
let HTTPError;

export const library = 'ky';
export const config = 'ky.extend({hooks: {beforeRetry}}); per request retry: {limit: max_attempts-1, maxRetryAfter: max_wait_s*1000}, signal; other options default (timeout 10 s)';

export async function create(registry) {
	({ default: ky, HTTPError } = await import('ky'));
	return ky.extend({
		hooks: {
			beforeRetry: [
				({ request, error }) => {
					const t = registry.find(request.url);
					if (!t)
						return;
					t.retried({ status: statusOf(error) ?? 0, headers: error?.response?.headers, error });
				},
			],
		},
	});
}

export async function run(client, t) {
	t.sent();
	const res = await client(t.url, { ...t.options(),
		retry: t.knobs({ limit: t.retries, maxRetryAfter: t.maxWaitMs }) });
	return { status: res.status, body: await res.text() };
}

export function statusOf(err) {
	return err instanceof HTTPError ? err.response.status : null;
}
