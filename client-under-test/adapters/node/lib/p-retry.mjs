// p-retry (7.x, pinned in ../package.json; 8 and later need Node.js 22)
// around Node.js's fetch.
//
// Retry as the p-retry README shows it
// (https://github.com/sindresorhus/p-retry#usage): `pRetry(run, {retries})`
// where `run` fetches and throws to ask for a retry. The README's examples
// throw `new AbortError(response.statusText)` on a 404 ("Abort retrying if
// the resource doesn't exist") and `new Error(response.statusText)` when
// `!response.ok`; run does exactly that, so every other non-2xx status is
// retried (p-retry knows nothing of HTTP: 400 and 422 included). fetch's
// network errors (TypeError "fetch failed", "terminated") are retried too
// (is-network-error); other TypeErrors are not. Defaults kept: factor 2,
// minTimeout 1000 ms, no randomize. The budget sets `retries`
// (max_attempts - 1) and `maxRetryTime` (max_wait_s: "the maximum time (in
// milliseconds) that the retried operation is allowed to run", from the
// first attempt, the attempts' own time included).
//
// Attempts: the attempt function itself (p-retry calls `input(attemptNumber)`
// once per attempt) reports action_sent, live, before its fetch; the
// onFailedAttempt hook reports each failed attempt's action_result, live,
// before the delay ("Callback invoked on each failure", index.js:
// `await options.onFailedAttempt(context);` comes before the setTimeout);
// AbortError (the 404) skips the hook ("No callbacks functions will be
// called"), so that attempt's outcome, like a success, is what pRetry
// returns or throws.
//
// Cancel: the task's AbortSignal as p-retry's `signal` (it rejects the
// pending delay: `reject(options.signal.reason)`) and as fetch's.
//
// Retry-After: p-retry does not read it. Neither does fetch.
//
// Outcomes: the response p-retry resolved with -> its status; the error it
// rejected with carries the status run saw (HTTP errors) -> that status;
// fetch's TypeError -> transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let pRetry;
let AbortError;

export const library = 'p-retry';
export const config = 'pRetry(run, {retries: max_attempts-1, maxRetryTime: max_wait_s*1000, onFailedAttempt, signal}); run = fetch, throw AbortError on 404 and Error on !response.ok (the README examples)';

class StatusError extends Error {
	constructor(response, body) {
		super(response.statusText || `HTTP ${response.status}`);
		this.status = response.status;
		this.headers = response.headers;
		this.body = body;
	}
}

export async function create() {
	({ default: pRetry, AbortError } = await import('p-retry'));
	return { fetch: globalThis.fetch };
}

export async function run(client, t) {
	const attempt = async () => {
		t.sent();
		const response = await client.fetch(t.url, t.options());
		const body = await response.text();
		if (response.status === 404)
			throw new AbortError(new StatusError(response, body));
		if (!response.ok)
			throw new StatusError(response, body);
		return { status: response.status, body };
	};
	const opts = {
		signal: t.signal,
		onFailedAttempt: ({ error }) => t.saw({ status: error.status ?? 0, headers: error.headers, error }),
		...t.knobs({ retries: t.retries, maxRetryTime: t.maxWaitMs }),
	};
	try {
		return await pRetry(attempt, opts);
	} catch (err) {
		if (err instanceof StatusError)
			return { status: err.status, body: err.body, headers: err.headers };
		throw err;
	}
}

export function statusOf(err) {
	return err?.status ?? null;
}
