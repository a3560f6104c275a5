// fetch-retry (6.x, pinned in ../package.json) around Node.js's fetch.
//
// Retry as the fetch-retry README configures it
// (https://github.com/jonbern/fetch-retry#example): `fetchRetry(fetch)` once,
// then per call `retries`, `retryDelay` and `retryOn`. retries: max_attempts
// - 1 (the README's default is 3). retryDelay: the README's "Exponential
// backoff" example, `Math.pow(2, attempt) * 1000` (1 s, 2 s, 4 s). retryOn:
// the statuses [429, 500, 502, 503, 504] (the README's example retries on
// [503]; by default fetch-retry retries "only on network errors"). With
// retryOn an array, a network error is retried too, whatever the method,
// POST included (index.js: `} else if (attempt < retries) { retry(attempt,
// error, null); }`). fetch-retry has no knob for the longest wait.
//
// Attempts: the fetch function handed to fetchRetry, which fetch-retry calls
// once per attempt (index.js `fetch(_input, init)` in wrappedFetch):
// action_sent just before it, action_result when fetch resolves with the
// headers or rejects, both live. A call whose signal is already aborted
// puts nothing on the wire (fetch rejects it at once) and is not counted.
//
// Cancel: the task's AbortSignal in fetch's init, which fetch-retry passes
// on to every attempt. fetch-retry itself takes no signal: a retry timer
// already armed still fires after the cancel; its fetch then rejects at
// once without sending, and fetch-retry goes on "retrying" such rejections
// until its retries are spent, with nothing on the wire.
//
// Retry-After: fetch-retry does not read it (retryDelay gets the response,
// the README's example ignores it). A response whose status is not in
// retryOn, or the last one, is resolved as it is.
//
// Outcomes: the response fetch-retry resolved with -> its status; a
// rejection (fetch's TypeError, a body cut short) -> transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let fetchRetry;

export const library = 'fetch-retry';
export const config = 'fetchRetry(fetch); per call {retries: max_attempts-1, retryOn: [429, 500, 502, 503, 504], retryDelay: attempt => 2 ** attempt * 1000, signal}';

export async function create(registry) {
	({ default: fetchRetry } = await import('fetch-retry'));
	return fetchRetry(registry.observe(globalThis.fetch));
}

export async function run(client, t) {
	const res = await client(t.url, {
		...t.options(),
		retryOn: [429, 500, 502, 503, 504],
		retryDelay: (attempt) => Math.pow(2, attempt) * 1000,
		...t.knobs({ retries: t.retries }),
	});
	return { status: res.status, body: await res.text() };
}

export function statusOf() {
	return null;
}
