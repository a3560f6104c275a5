// undici (7.x, pinned in ../package.json: the npm package, not the copy
// inside Node.js; 8 and later need Node.js 22), its RetryAgent.
//
// Retry as documented (https://github.com/nodejs/undici/blob/main/docs/docs/api/RetryAgent.md):
// `new RetryAgent(new Agent(), options)` and `agent.request({method,
// origin, path})`. Defaults kept: methods GET HEAD OPTIONS PUT DELETE TRACE
// (POST is never retried), statuses 500 502 503 504 429, error codes
// ECONNRESET ECONNREFUSED ENOTFOUND ENETDOWN ENETUNREACH EHOSTDOWN
// EHOSTUNREACH EPIPE UND_ERR_SOCKET, minTimeout 500 ms, timeoutFactor 2,
// retryAfter true, throwOnError true. The budget sets `maxRetries`
// (max_attempts - 1) and `maxTimeout` (max_wait_s: "Maximum number of
// milliseconds to wait before retrying", which also caps a Retry-After).
// RetryAgent options are per agent, so the process keeps ONE Agent (the
// connection pool every task shares) and one RetryAgent over it per
// distinct budget, as an application with that many retry policies would.
//
// Attempts: undici has no retry hook (its `retry` option replaces the retry
// logic instead of observing it). Attempts are read from undici's
// diagnostics channels ("the preferred way to instrument Undici",
// docs/docs/api/DiagnosticsChannel.md), which see every request the
// RetryHandler dispatches: undici:request:create (action_sent, live, as the
// attempt is handed to the connection), undici:request:headers (its
// action_result, live, as the status arrives) and undici:request:error (a
// transport error before any status).
//
// Cancel: the task's AbortSignal as the request's `signal`: it aborts the
// attempt in flight. Whether a retry timer already armed by the
// RetryHandler (`setTimeout(() => cb(null), retryTimeout)` in
// lib/handler/retry-handler.js) still dispatches after the abort is
// undici's business: the journal shows it (cancel.quiet).
//
// Retry-After (lib/handler/retry-handler.js): `retryAfterHeader =
// Number(retryAfterHeader)`, a date via `new Date(retryAfter).getTime() -
// Date.now()` (0 when unparseable), `retryAfterHeader * 1e3`, then
// `retryAfterHeader > 0 ? Math.min(retryAfterHeader, maxTimeout) :
// Math.min(minTimeout * timeoutFactor ** (counter - 1), maxTimeout)`.
//
// Outcomes: a response -> its status (a status undici does not retry, and
// every status of a POST, come back as responses); RequestRetryError (the
// retries spent on a retryable status) -> its statusCode; any other error
// -> transport.
import diagnosticsChannel from 'node:diagnostics_channel';
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let Agent;
let RetryAgent;

export const library = 'undici';
export const config = 'new RetryAgent(new Agent(), {maxRetries: max_attempts-1, maxTimeout: max_wait_s*1000}), one Agent shared; agent.request({origin, path, method, headers, body, signal}); other options default';

export async function create(registry) {
	({ Agent, RetryAgent } = await import('undici'));
	const reported = new WeakSet();
	const trackerOf = (request) => registry.find(request.origin + request.path);
	diagnosticsChannel.channel('undici:request:create').subscribe(({ request }) => {
		trackerOf(request)?.sent();
	});
	diagnosticsChannel.channel('undici:request:headers').subscribe(({ request, response }) => {
		reported.add(request);
		const headers = {};
		for (let i = 0; i + 1 < response.headers.length; i += 2)
			headers[response.headers[i].toString().toLowerCase()] = response.headers[i + 1].toString();
		trackerOf(request)?.saw({ status: response.statusCode, headers });
	});
	diagnosticsChannel.channel('undici:request:error').subscribe(({ request, error }) => {
		if (reported.has(request))
			return;          // the status was reported; the body broke afterwards
		reported.add(request);
		trackerOf(request)?.saw({ status: 0, error });
	});
	return { agent: new Agent(), retryAgents: new Map() };
}

function retryAgentFor(client, t) {
	const key = `${t.retries}/${t.maxWaitMs}`;
	let ra = client.retryAgents.get(key);
	if (!ra) {
		ra = new RetryAgent(client.agent, t.knobs({ maxRetries: t.retries, maxTimeout: t.maxWaitMs }));
		client.retryAgents.set(key, ra);
	}
	return ra;
}

export async function run(client, t) {
	const u = new URL(t.url);
	const res = await retryAgentFor(client, t).request({
		...t.options(), origin: u.origin, path: u.pathname + u.search,
	});
	return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
}

export function statusOf(err) {
	return Number.isInteger(err?.statusCode) && err.statusCode > 0 ? err.statusCode : null;
}
