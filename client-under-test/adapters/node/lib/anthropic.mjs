// @anthropic-ai/sdk, the official Anthropic SDK for TypeScript/Node.js (1.x,
// pinned in ../package.json), as a stdio adapter: one Anthropic client for
// all tasks. Written against the real Messages API's shape (POST
// /v1/messages, JSON or an SSE stream of message_start, content_block_delta,
// ..., message_stop events, `event: error` frames); not yet graded against
// the provider's Anthropic-compatible endpoint.
//
// Retry as documented: "Certain errors will be automatically retried 2
// times by default" (the SDK's README, https://github.com/anthropics/
// anthropic-sdk-typescript#retries); client.d.ts: maxRetries is "The
// maximum number of times that the client will retry a request in case of
// a temporary failure, like a network error or a 5XX error from the
// server", default 2, per client or per request; shouldRetry (client.mjs)
// takes x-should-retry, 408, 409, 429 and >= 500, and connection errors.
// The budget sets the per-request `maxRetries` (max_attempts - 1); the SDK
// has no knob for the longest wait. Messages at /v1/messages go through
// client.messages.create; a task for another path ending in /messages is
// posted with `stream` as the task says (the same Stream class parses it);
// every other task goes through client.get/post/... with the task's URL as
// the path and its answer read as JSON or text, never as a stream (the
// SDK's Stream only knows Anthropic's named events).
//
// Attempts: the client's `fetch` option ("Specify a custom fetch function
// implementation", client.d.ts), a wrapper around Node.js's fetch the SDK
// calls once per attempt: action_sent just before, action_result when the
// headers arrive or fetch fails, both live. (The SDK's `middleware` option,
// "runs per HTTP attempt, including retries", would see the same.)
//
// Streams: the adapter, as the application, counts content chunks
// (content_block_delta events with a non-empty delta.text). When the stream
// breaks after one (an `event: error` frame: core/streaming.mjs `throw new
// APIError(undefined, body, undefined, response.headers, type)`; a cut body),
// it reports stream_interrupted (error_code: the error's type), then the
// result. A stream that ends before message_stop is not an error to the SDK.
//
// Cancel: the task's AbortSignal as the request's `signal`: it aborts fetch
// in flight and the retry wait (`await sleep(timeoutMillis, options.signal)`
// resolves at once, then makeRequest throws APIUserAbortError).
//
// Retry-After (client.mjs retryRequest): `retry-after-ms` first, else
// `parseFloat(retryAfterHeader) * 1000` or `Date.parse(retryAfterHeader) -
// Date.now()`, used "as long as it's a positive delay that one timer can
// represent": `if (timeoutMillis === undefined || !(timeoutMillis > 0 &&
// timeoutMillis <= 2 ** 31 - 1))` the default backoff applies (0.5 s * 2^n,
// at most 8 s, minus up to 25 % jitter), so a past date or "0" backs off.
//
// Key: the client's apiKey is FAKEAPI_KEY, which this SDK sends as
// `Authorization: Bearer` (client.mjs apiKeyAuth: `buildHeaders([{
// Authorization: `Bearer ${this.apiKey}` }])`); each request overrides
// `Authorization` with the task's own key (per-request `headers`).
// Outcomes: APIError with a status -> that status; APIConnectionError, an
// error frame or a cut stream -> transport.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let Anthropic;

export const library = '@anthropic-ai/sdk';
export const config = 'new Anthropic({baseURL, fetch: observed}); per request {maxRetries: max_attempts-1, signal, headers}; other options default (timeout 10 min)';

export async function create(registry) {
	({ default: Anthropic } = await import('@anthropic-ai/sdk'));
	return new Anthropic({
		apiKey: process.env.FAKEAPI_KEY ?? '',
		authToken: null,
		baseURL: process.env.FAKEAPI_URL,
		fetch: registry.observe(globalThis.fetch),
	});
}

export async function run(client, t) {
	const u = new URL(t.url);
	const messages = t.method === 'POST' && u.pathname.endsWith('/messages');
	const call = messages && u.pathname === '/v1/messages'
		? client.messages.create(t.json, t.sdkOptions({ query: Object.fromEntries(u.searchParams) }))
		: client[t.method.toLowerCase()](t.url, t.sdkOptions({ body: t.json, stream: messages && t.stream }));
	return t.sdkAnswer(call, messages && t.stream,
		(event) => (event?.type === 'content_block_delta' ? event.delta?.text : null),
		(err) => (err instanceof Anthropic.APIError ? (err.type ?? null) : undefined));
}

export function statusOf(err) {
	return Number.isInteger(err?.status) ? err.status : null;
}
