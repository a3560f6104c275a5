// adapter.mjs -- exec-mode adapter: one chat completion through the official
// `openai` SDK for Node.js (major 6, pinned in package.json and its lockfile).
//
// What is graded is the SDK as shipped: its own backoff and its reading of
// Retry-After / retry-after-ms, its timeouts. The one knob set is the one
// an application sets from its budget: `maxRetries` from the task's
// FAKEAPI_MAX_RETRIES when the harness gives one (else the SDK's default,
// 2). The harness runs, once per task:
//
//     node client-under-test/adapters/openai-node/adapter.mjs {body_file}
//
// Argument: BODY_FILE, the chat request as JSON (docs/scenario-format.md,
// "Chat completions"). Environment: FAKEAPI_URL (base URL, no trailing
// slash), FAKEAPI_KEY (the task's key, sent as Authorization: Bearer by the
// SDK, never printed), FAKEAPI_TASK (sent as X-Fakeapi-Task, since the SDK
// builds its own URL and cannot carry fa_task).
//
// Prints one line on stdout. Exit 0: a completion (or a whole stream) came
// back; 1: the SDK gave up with an API error (a status it did not retry or
// ran out of retries on, or an error frame inside a stream); 2: anything
// else (bad arguments, a transport error, a stream cut short).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

function fail(code, what) {
	// Only the status, the error code and the SDK's message: never the key.
	console.log(`error: ${what}`);
	process.exit(code);
}

async function main() {
	const bodyFile = process.argv[2];
	if (!bodyFile)
		fail(2, 'usage: adapter.mjs BODY_FILE');
	if (!process.env.FAKEAPI_URL || !process.env.FAKEAPI_KEY)
		fail(2, 'FAKEAPI_URL and FAKEAPI_KEY must be set');

	let body;
	try {
		body = JSON.parse(readFileSync(bodyFile, 'utf8'));
	} catch (e) {
		fail(2, `cannot read the request body: ${e.message}`);
	}

	const retries = Number.parseInt(process.env.FAKEAPI_MAX_RETRIES ?? '', 10);
	const client = new OpenAI({
		...(Number.isInteger(retries) && retries >= 0 ? { maxRetries: retries } : {}),
		apiKey: process.env.FAKEAPI_KEY,
		baseURL: process.env.FAKEAPI_URL + '/v1',
		defaultHeaders: { 'X-Fakeapi-Task': process.env.FAKEAPI_TASK ?? '' },
	});

	try {
		if (body.stream === true) {
			const stream = await client.chat.completions.create(body);
			let text = '';
			let chunks = 0;
			for await (const chunk of stream) {
				chunks++;
				text += chunk.choices?.[0]?.delta?.content ?? '';
			}
			console.log(`ok: stream of ${chunks} chunks: ${JSON.stringify(text)}`);
		} else {
			const c = await client.chat.completions.create(body);
			const text = c.choices?.[0]?.message?.content ?? '';
			console.log(`ok: ${c.id}: ${JSON.stringify(text)} ` +
				`(${c.usage?.total_tokens ?? '?'} tokens)`);
		}
	} catch (e) {
		if (e instanceof OpenAI.APIConnectionError)
			fail(2, `${e.constructor.name}: ${e.message}`);
		if (e instanceof OpenAI.APIError)
			fail(1, `${e.constructor.name} status ${e.status ?? 'none'} ` +
				`code ${e.code ?? 'none'}: ${e.message}`);
		fail(2, `${e?.constructor?.name ?? 'error'}: ${e?.message ?? e}`);
	}
	process.exit(0);
}

main();
