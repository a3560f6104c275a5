// fakeapi-stdio.mjs -- the generic Node.js stdio adapter: grades one Node.js
// retry library the way an application uses it (docs/client-protocol.md,
// "stdio mode"; the adapters are described in docs/adapters-node.md).
//
//     fakeapi-harness run --client 'node client-under-test/adapters/node/fakeapi-stdio.mjs LIBRARY' SUITE
//
// LIBRARY names a file lib/LIBRARY.mjs beside this one (got, ky, axios,
// p-retry, fetch-retry, undici, openai, anthropic). This part does what every
// library shares: the hello (the library's version read from its installed
// package.json at run time, and `wall_ms`, Date.now()), reading the
// harness's lines with readline, the clock probe (a `{"type": "clock"}` line
// is answered at once, from the line handler, with Date.now() as `wall_ms`:
// under --time-scale that is libfaketime's clock, which the harness checks),
// one async function per task, all of them running concurrently on ONE client
// object that the library file builds once per process, an AbortController
// per task (its signal goes to the library wherever the library takes one),
// cancel, shutdown, the outcome mapping and the result lines.
//
// A library file exports:
//   library   the npm package whose version the hello reports
//   config    one line: the library configuration used
//   create(registry) -> Promise<client>   called once, before the hello
//             (it loads the library); registry.find(url) gives the
//             Tracker of the task whose fa_task the URL carries, for hooks
//             that see only a request; registry.observe(fetch) wraps a
//             fetch function so that each call reports one attempt
//   run(client, tracker) -> {status, body, headers}   one task; resolves
//             with the answer the library returned, rejects with what it
//             raised
//   statusOf(error) -> number|null   the HTTP status of an error the
//             library raised with one, null for a transport error
//
// The library file reports attempts through the tracker, from the library's
// own hooks: tracker.sent() when an attempt goes out, tracker.saw({status,
// headers, error, at}) when its outcome is known. Whatever attempt is still
// open when the library returns or raises gets its action_result here, from
// that return or error (the last attempt, which no retry hook sees).
//
// Outcomes, mechanically: 2xx -> succeeded (provider_id: the JSON body's id
// for a write task, else null); the library returned or raised with another
// status -> failed, sent "yes"; it raised without one (nothing, or part of
// an answer came back) -> failed, sent "unknown"; a cancel -> cancelled at
// once, whatever the library still does with the aborted request. The
// deadline is not enforced here: a library that never gives up is graded so.
//
// The key comes from process.env[task.key_env] and goes out as
// `Authorization: Bearer KEY` (the SDK files let the SDK send it). Nothing
// here prints a key or a request body: stderr gets one-line notes only
// (an error's code and message, never its request), and every line written
// is scrubbed of the keys in the environment as a second guard.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const LIBRARIES = ['got', 'ky', 'axios', 'p-retry', 'fetch-retry', 'undici', 'openai', 'anthropic'];

const SECRETS = Object.entries(process.env)
	.filter(([k, v]) => (k === 'FAKEAPI_KEY' || k.startsWith('FAKEAPI_KEY_')) && v && v.length >= 8)
	.map(([, v]) => v);

/** @s with every key secret of the environment replaced. */
function scrub(s) {
	for (const k of SECRETS)
		s = s.split(k).join('[key]');
	return s;
}

function note(msg) {
	process.stderr.write(`fakeapi-stdio: ${scrub(String(msg)).replace(/\n/g, ' ')}\n`);
}

/** One protocol line on stdout (pipes are written synchronously on Linux). */
function emit(obj) {
	process.stdout.write(scrub(JSON.stringify(obj)) + '\n');
}

/** A short description of an error, never its request: code and message. */
export function describe(err) {
	if (err == null)
		return null;
	const code = err.code ?? err.cause?.code;
	const msg = err.message ?? String(err);
	return (code && !msg.includes(code) ? `${code}: ` : '') + msg.slice(0, 200);
}

/** The raw Retry-After of @headers (a Headers, a plain object, or null). */
function retryAfterOf(headers) {
	if (headers == null)
		return null;
	if (typeof headers.get === 'function')
		return headers.get('retry-after') ?? null;
	for (const [k, v] of Object.entries(headers))
		if (k.toLowerCase() === 'retry-after')
			return Array.isArray(v) ? v.join(', ') : String(v);
	return null;
}

/** One task: what the library file needs to run it and report its attempts. */
export class Tracker {
	constructor(line) {
		this.id = line.id;
		this.line = line;
		this.method = String(line.method ?? 'GET').toUpperCase();
		this.url = line.url;
		this.body = line.body ?? null;
		/** The body as JSON where it parses (the SDKs take objects), else as given. */
		this.json = undefined;
		if (this.body != null) {
			try {
				this.json = JSON.parse(this.body);
			} catch {
				this.json = this.body;
			}
		}
		this.stream = line.stream === true;
		this.write = /write/.test(String(line.class ?? ''));
		this.kind = this.write ? 'write' : 'read';
		this.key = process.env[line.key_env] ?? process.env.FAKEAPI_KEY ?? '';
		const b = line.budget ?? {};
		/** The library's retry count: max_attempts - 1, or undefined (its default). */
		this.retries = Number.isInteger(b.max_attempts) ? Math.max(0, b.max_attempts - 1) : undefined;
		/** max_wait_s in ms, or undefined. */
		this.maxWaitMs = Number.isInteger(b.max_wait_s) ? b.max_wait_s * 1000 : undefined;
		/** The task's headers without the key (for SDKs that send the key themselves). */
		this.extraHeaders = { ...(line.headers ?? {}) };
		if (this.body != null && !Object.keys(this.extraHeaders).some(h => h.toLowerCase() === 'content-type'))
			this.extraHeaders['Content-Type'] = 'application/json';
		/** Every request header, the key included. */
		this.headers = { ...this.extraHeaders, Authorization: `Bearer ${this.key}` };
		this.controller = new AbortController();
		this.signal = this.controller.signal;
		this.attempts = 0;
		this.open = false;       // an attempt sent whose outcome is not reported yet
		this.lastStatus = 0;
		this.lastEnd = null;     // when the last reported attempt ended (ms)
		this.waitedMs = 0;
		this.done = false;
	}

	/** An attempt goes on the wire. */
	sent() {
		if (this.done)
			return;
		const now = performance.now();
		if (this.lastEnd != null)
			this.waitedMs += Math.max(0, now - this.lastEnd);
		this.attempts++;
		this.open = true;
		emit({ type: 'action_sent', task: this.id, attempt: this.attempts, kind: this.kind,
			idempotency_key: null });
	}

	/**
	 * The outcome of the open attempt: @status (0 for a transport error),
	 * the response @headers (for Retry-After), the transport @error, and
	 * @at, when the attempt ended (performance.now() ms) where the library
	 * tells it later than it happened.
	 */
	saw({ status = 0, headers = null, error = null, at = null } = {}) {
		if (this.done)
			return;
		if (!this.open && this.attempts === 0)
			this.sent();
		this.open = false;
		this.lastStatus = status;
		this.lastEnd = at ?? performance.now();
		emit({ type: 'action_result', task: this.id, attempt: this.attempts, kind: this.kind,
			status, retry_after: retryAfterOf(headers),
			error: status === 0 ? (describe(error) ?? 'transport error') : null });
	}

	/** A failed attempt, reported by a hook that fires as its retry goes out. */
	retried(outcome) {
		this.saw(outcome);
		this.sent();
	}

	/** The request options nearly every library takes under these names. */
	options() {
		return { method: this.method, headers: this.headers, body: this.body ?? undefined,
			signal: this.signal };
	}

	/**
	 * The per-request options of the two SDKs (openai, @anthropic-ai/sdk,
	 * both generated by Stainless): the signal, the task's headers with its
	 * own key as `Authorization: Bearer` (over the client's), `maxRetries`.
	 */
	sdkOptions(more = {}) {
		return { signal: this.signal,
			headers: { ...this.extraHeaders, Authorization: `Bearer ${this.key}` },
			...this.knobs({ maxRetries: this.retries }), ...more };
	}

	/**
	 * The answer of an SDK @call (an APIPromise): its status and parsed
	 * body, or, when @streamed, the stream read to its end by consume().
	 */
	async sdkAnswer(call, streamed, contentOf, frameCodeOf) {
		const { data, response } = await call.withResponse();
		if (streamed && data && typeof data[Symbol.asyncIterator] === 'function') {
			await this.consume(data, contentOf, frameCodeOf);
			return { status: response.status, body: null };
		}
		return { status: response.status, body: data };
	}

	/** @knobs without the members whose value is undefined (the budget's absent parts). */
	knobs(knobs) {
		return Object.fromEntries(Object.entries(knobs).filter(([, v]) => v !== undefined));
	}

	/**
	 * Read a parsed server-sent event @stream to its end, as an application
	 * would: count the events contentOf(event) gives a non-empty string for;
	 * when the stream throws after one, report stream_interrupted (reason
	 * error_frame when frameCodeOf(error) is not undefined, with that code,
	 * else cut), then throw on.
	 */
	async consume(stream, contentOf, frameCodeOf) {
		let chunks = 0;
		try {
			for await (const event of stream) {
				const c = contentOf(event);
				if (typeof c === 'string' && c.length > 0)
					chunks++;
			}
		} catch (err) {
			if (chunks > 0) {
				const code = frameCodeOf(err);
				this.interrupted(chunks, code === undefined ? 'cut' : 'error_frame', code ?? null);
			}
			throw err;
		}
	}

	/** A stream broke after @chunks content chunks (the LLM rate-limit guide). */
	interrupted(chunks, reason, errorCode = null) {
		if (this.done)
			return;
		emit({ type: 'stream_interrupted', task: this.id, attempt: Math.max(1, this.attempts),
			chunks, reason, error_code: errorCode });
	}

	/** The task's result line; nothing more is reported for it afterwards. */
	finish(outcome, sent, status, providerId = null) {
		if (this.done)
			return;
		this.done = true;
		emit({ type: 'result', task: this.id, outcome, attempts: this.attempts,
			waited_ms: Math.round(this.waitedMs), sent, status, provider_id: providerId });
	}
}

function providerIdOf(t, body) {
	if (!t.write)
		return null;
	let v = body;
	if (typeof v === 'string') {
		try {
			v = JSON.parse(v);
		} catch {
			return null;
		}
	}
	return v && typeof v === 'object' && typeof v.id === 'string' ? v.id : null;
}

async function main() {
	const name = process.argv[2];
	if (!LIBRARIES.includes(name)) {
		note(`usage: fakeapi-stdio.mjs LIBRARY (one of ${LIBRARIES.join(', ')})`);
		process.exit(2);
	}
	const lib = await import(join(HERE, 'lib', `${name}.mjs`));
	const pkg = JSON.parse(readFileSync(join(HERE, 'node_modules', lib.library, 'package.json'), 'utf8'));

	const tasks = new Map();
	const registry = {
		/** The tracker of the task named by @url's fa_task, or null. */
		find(url) {
			try {
				const u = new URL(typeof url === 'string' ? url : (url?.url ?? String(url)));
				return tasks.get(u.searchParams.get('fa_task')) ?? null;
			} catch {
				return null;
			}
		},
	};
	/**
	 * @fetchImpl wrapped so that every call reports one attempt of the task
	 * its URL names: action_sent just before, action_result when the
	 * headers arrive or the call fails. A call whose signal is already
	 * aborted puts nothing on the wire (fetch rejects it at once) and is
	 * not counted.
	 */
	registry.observe = (fetchImpl) => async (input, init) => {
		const t = registry.find(input);
		if (!t || init?.signal?.aborted)
			return fetchImpl(input, init);
		t.sent();
		try {
			const res = await fetchImpl(input, init);
			t.saw({ status: res.status, headers: res.headers });
			return res;
		} catch (err) {
			t.saw({ status: 0, error: err });
			throw err;
		}
	};
	// The library loads before the hello (which has 10 s of real time):
	// loading is work, and under --time-scale work takes S times as long
	// in virtual time, so a library still loading when the first task
	// comes would eat that task's deadline.
	let loaded;
	try {
		loaded = await lib.create(registry);
	} catch (err) {
		note(`cannot load ${lib.library}: ${describe(err)}`);
		process.exit(2);
	}
	const ready = Promise.resolve(loaded);
	emit({ type: 'hello', protocol: 1,
		client: { name: lib.library, version: pkg.version, adapter: 'node stdio adapter 1',
			config: lib.config },
		features: ['cancel'], wall_ms: Date.now() });

	async function runTask(t) {
		try {
			const client = await ready;
			if (t.done)
				return;
			const { status, body, headers } = await lib.run(client, t);
			if (t.open)
				t.saw({ status, headers });
			if (status >= 200 && status < 300)
				t.finish('succeeded', 'yes', status, providerIdOf(t, body));
			else
				t.finish('failed', 'yes', status);
		} catch (err) {
			if (t.done)
				return;
			const status = lib.statusOf(err);
			if (t.open)
				t.saw({ status: status ?? 0, headers: err?.response?.headers ?? err?.headers, error: err });
			if (status)
				t.finish('failed', 'yes', status);
			else
				t.finish('failed', t.attempts > 0 ? 'unknown' : 'no', 0);
		}
	}

	function cancel(t) {
		if (t.done)
			return;
		t.controller.abort();
		t.finish('cancelled', t.attempts === 0 ? 'no' : (t.open ? 'unknown' : 'yes'), t.lastStatus);
	}

	let closing = false;
	function shutdown() {
		if (closing)
			return;
		closing = true;
		for (const t of tasks.values())
			cancel(t);
		process.exit(0);
	}

	const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
	rl.on('line', (text) => {
		let m;
		try {
			m = JSON.parse(text);
		} catch {
			note(`ignored a line that is not JSON (${text.length} bytes)`);
			return;
		}
		if (m?.type === 'task') {
			if (tasks.has(m.id)) {
				note(`ignored a second task line for ${m.id}`);
				return;
			}
			const t = new Tracker(m);
			tasks.set(t.id, t);
			runTask(t);
		} else if (m?.type === 'cancel') {
			const t = tasks.get(m.id);
			if (t)
				cancel(t);
			else
				note(`cancel for unknown task ${m.id}`);
		} else if (m?.type === 'clock') {
			emit({ type: 'clock', wall_ms: Date.now() });
		} else if (m?.type === 'shutdown') {
			shutdown();
		} else {
			note(`ignored a line of type ${JSON.stringify(m?.type ?? null)}`);
		}
	});
	rl.on('close', shutdown);
}

process.on('unhandledRejection', (err) => note(`unhandled rejection: ${describe(err)}`));
main().catch((err) => {
	note(`cannot start: ${describe(err)}`);
	process.exit(2);
});
