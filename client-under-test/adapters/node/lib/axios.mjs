// axios (1.x) with axios-retry (4.x), both pinned in ../package.json.
//
// Retry as the axios-retry README configures it
// (https://github.com/softonic/axios-retry#usage): `axiosRetry(client,
// {retries, retryDelay: axiosRetry.exponentialDelay})` on an axios.create()
// instance, `retries` overridden per request with `{'axios-retry':
// {retries}}` as the README's "request-specific configuration" shows. The
// default retryCondition, isNetworkOrIdempotentRequestError, is kept: "it
// retries if it is a network error or a 5xx error on an idempotent request
// (GET, HEAD, OPTIONS, PUT or DELETE)" (README; the source's
// isRetryableError also takes 429). A network error is retried whatever the
// method, POST included (isNetworkError checks no method). exponentialDelay:
// `2 ** retryNumber * 100` ms, at least the Retry-After, plus 0-20 %.
// axios-retry has no knob for the longest wait: only `retries` comes from
// the budget (max_attempts - 1). axios has no timeout by default.
//
// Attempts: axios-retry's onRetry, "a callback to notify when a retry is
// about to occur", reports the failed attempt's action_result live: it is
// awaited in handleRetry BEFORE the delay (dist/esm/index.js: `await
// onRetry(currentState.retryCount, error, config);` then `setTimeout(() =>
// resolve(axiosInstance(config)), delay)`). The attempts themselves
// (action_sent) come from an axios request interceptor on the same
// instance: axios-retry sends each retry back through axiosInstance(config),
// so the interceptor sees every attempt as it goes out (one whose signal is
// already aborted is not counted: axios refuses to send it). The last
// attempt's outcome is what axios returns or throws.
//
// Cancel: the task's AbortSignal as axios's `signal`. In flight, axios
// aborts the request (CanceledError). During the delay, axios-retry's abort
// listener resolves at once with `axiosInstance(config)`, which axios
// rejects before sending because the signal is aborted.
//
// Retry-After (dist/esm/index.js, retryAfter()): `let retryAfterMs =
// (Number(retryAfterHeader) || 0) * 1000;` then for a date `retryAfterMs =
// (new Date(retryAfterHeader).valueOf() || 0) - Date.now();` and `return
// Math.max(0, retryAfterMs);`; exponentialDelay takes `Math.max(calculatedDelay,
// retryAfter(error))` and adds `delay * 0.2 * Math.random()`.
//
// Outcomes: the AxiosError settle() raises for a status outside
// validateStatus (lib/core/settle.js: 'Request failed with status code ' +
// response.status) -> that status; every other AxiosError -> transport:
// ECONNRESET and "socket hang up" carry no response, and a body cut short
// ("stream has been aborted", lib/adapters/http.js) carries the response's
// status and headers although the answer never arrived whole.
// The library is loaded in create(), after the hello: loading it can take
// seconds on a busy machine, and the harness waits 10 s for the hello.
let axios;
let axiosRetry;

export const library = 'axios-retry';
export const config = "axiosRetry(axios.create(), {retryDelay: axiosRetry.exponentialDelay, onRetry}); per request {'axios-retry': {retries: max_attempts-1}}, signal; retryCondition default (isNetworkOrIdempotentRequestError)";

export async function create(registry) {
	({ default: axios } = await import('axios'));
	({ default: axiosRetry } = await import('axios-retry'));
	const client = axios.create();
	axiosRetry(client, {
		retryDelay: axiosRetry.exponentialDelay,
		onRetry: (retryCount, error, requestConfig) => {
			registry.find(requestConfig.url)?.saw({ status: statusOf(error) ?? 0,
				headers: error.response?.headers, error });
		},
	});
	client.interceptors.request.use((cfg) => {
		if (!cfg.signal?.aborted)
			registry.find(cfg.url)?.sent();
		return cfg;
	});
	return client;
}

export async function run(client, t) {
	const { body, ...opts } = t.options();
	const res = await client.request({ ...opts, url: t.url, data: body,
		...(t.retries === undefined ? {} : { 'axios-retry': { retries: t.retries } }) });
	return { status: res.status, body: res.data };
}

export function statusOf(err) {
	const status = err?.response?.status;
	return Number.isInteger(status) && err.message === `Request failed with status code ${status}` ? status : null;
}
