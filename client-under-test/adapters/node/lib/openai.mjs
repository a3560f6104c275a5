// openai, the official SDK for Node.js (6.x, pinned in ../package.json, the
// same version as the exec adapter in ../openai-node/; 7.x needs Node.js 22),
// as a stdio adapter: one OpenAI client for all tasks.
//
// Retry as documented (https://github.com/openai/openai-node#retries):
// "Connection errors ..., 408 Request Timeout, 409 Conflict, 429 Rate
// Limit, and >=500 Internal errors will all be retried by default", 2
// times; "configure per-request: ... { maxRetries: 5 }". The budget sets
// the per-request `maxRetries` (max_attempts - 1); the SDK has no knob for
// the longest wait (`timeout`, 10 min by default, bounds one attempt).
// Chat completions at /v1/chat/completions go through
// client.chat.completions.create; every other task through the documented
// "undocumented endpoints" methods (client.get, client.post, ...: "Options
// on the client, such as retries, will be respected"), with the task's URL
// as the path; a chat completion under another path (…/chat/completions)
// is posted with `stream` as the task says, parsed by the same Stream
// class chat.completions.create uses.
//
// Attempts: the client's `fetch` option ("Customizing the fetch client" in
// the README), a wrapper around Node.js's fetch that the SDK calls once per
// attempt (client.mjs fetchWithTimeout: `this.fetch.call(undefined, url,
// fetchOptions)`): action_sent just before, action_result when the headers
// arrive or fetch fails, both live.
//
// Streams: the adapter, as the application, counts content chunks
// (choices[0].delta.content non-empty). When the stream breaks after one
// (the SDK throws APIError on an error frame: core/streaming.mjs `if (data
// && data.error) { throw new APIError(undefined, data.error, ...) }`; fetch
// throws on a cut body), it reports stream_interrupted, then the result.
// A stream that simply ends before [DONE] is not an error to the SDK.
//
// Cancel: the task's AbortSignal as the request's `signal`. In flight the
// SDK aborts fetch; during a retry wait its `await sleep(timeoutMillis)`
// takes no signal, but makeRequest checks `options.signal?.aborted` before
// the next fetch and throws APIUserAbortError, so nothing more is sent.
//
// Retry-After (client.mjs retryRequest): `retry-after-ms` first
// (`parseFloat`), else `const timeoutSeconds = parseFloat(retryAfterHeader)`
// ... `timeoutMillis = timeoutSeconds * 1000;` or `Date.parse(retryAfterHeader)
// - Date.now()`; no header: 0.5 s * 2^n, at most 8 s, minus up to 25 %
// jitter. The value is slept as it is (a past date: no wait).
//
// Key: the client's apiKey is FAKEAPI_KEY; each request overrides the
// `Authorization` header with the task's own key (per-request `headers`).
// Outcomes: APIError with a status -> that status; APIConnectionError, an
// error frame or a cut stream -> transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let OpenAI;

export const library = 'openai';
export const config = 'new OpenAI({baseURL, fetch: observed}); per request {maxRetries: max_attempts-1, signal, headers}; other options default (timeout 10 min)';

export async function create(registry) {
	({ default: OpenAI } = await import('openai'));
	return new OpenAI({
		apiKey: process.env.FAKEAPI_KEY ?? '',
		baseURL: `${process.env.FAKEAPI_URL}/v1`,
		organization: null,
		project: null,
		fetch: registry.observe(globalThis.fetch),
	});
}

export async function run(client, t) {
	const u = new URL(t.url);
	const chat = t.method === 'POST' && u.pathname.endsWith('/chat/completions');
	const call = chat && u.pathname === '/v1/chat/completions'
		? client.chat.completions.create(t.json, t.sdkOptions({ query: Object.fromEntries(u.searchParams) }))
		: client[t.method.toLowerCase()](t.url, t.sdkOptions({ body: t.json, stream: chat && t.stream }));
	return t.sdkAnswer(call, chat && t.stream, (chunk) => chunk?.choices?.[0]?.delta?.content,
		(err) => (err instanceof OpenAI.APIError ? (err.code ?? null) : undefined));
}

export function statusOf(err) {
	return Number.isInteger(err?.status) ? err.status : null;
}
