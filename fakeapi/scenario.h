/* scenario.h -- scenario and suite files: load, validate, hold. */
#ifndef FA_SCENARIO_H
#define FA_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "header.h"
#include "key.h"
#include "quota.h"
#include "rc.h"
#include "retry_after.h"
#include "shape.h"

/* How a route's response sequence advances. */
enum fa_cursor_kind {
	FA_CURSOR_SHARED = 0, /* one cursor for every caller */
	FA_CURSOR_SCOPE,      /* one cursor per scope (see fa_scope_kind) */
};

/* What a "scope" is: the set of requests that share a pause, a cursor
 * (FA_CURSOR_SCOPE) and, later, a budget. The retry-safety guide: an account scope. */
enum fa_scope_kind {
	FA_SCOPE_USER = 0, /* scope "user:<user>": every key of one account */
	FA_SCOPE_KEY,      /* scope "key:<key id>" */
};

/*
 * What happens to the connection instead of (or around) a plain answer
 * ($.routes[i].responses[j].fault). On a route with an effect, every
 * fault but FA_RESP_DROP_BEFORE_COMMIT and FA_RESP_CLOSE_IDLE commits the
 * side effect first: the client cannot know whether its write happened.
 */
enum fa_resp_fault {
	FA_RESP_RESPOND = 0,        /* "respond": the scripted answer (default) */
	FA_RESP_DROP_BEFORE_COMMIT, /* "drop_before_commit": close with a clean EOF, nothing committed */
	FA_RESP_DROP_AFTER_COMMIT,  /* "drop_after_commit": commit, then close with a clean EOF, no response */
	FA_RESP_RESET,              /* "reset": commit, then a true TCP RST, no response */
	FA_RESP_PARTIAL_BODY,       /* "partial_body": commit, send the headers and the first
	                               fault_bytes of the body (Content-Length of the whole), close */
	FA_RESP_CLOSE_IDLE,         /* "close_idle": on a reused keep-alive connection, close it
	                               when this request arrives, before reading it further and
	                               without committing; on a fresh connection, answer as respond */
};

/* One entry of a response sequence ($.routes[i].responses[j]), or the
 * provider's during_pause answer. */
struct fa_response_spec {
	int times;                  /* consecutive answers it gives, >= 1; 0 = for ever (last entry only) */
	int status;                 /* 100..599 */
	struct fa_header *headers;  /* owned, n_headers entries */
	size_t n_headers;
	cJSON *body;                /* owned; NULL = empty body; sent as compact JSON */
	bool has_retry_after;       /* "retry_after" given: the provider writes the header */
	enum fa_ra_form ra_form;    /* its form */
	int64_t ra_seconds;         /* pause asked, s; negative only for date forms (a past date) */
	int delay_ms;               /* wait before the headers go out, 0..600000 ms; on an
	                               effect route the commit happens before the wait */
	enum fa_resp_fault fault;   /* "fault", default FA_RESP_RESPOND */
	int fault_bytes;            /* partial_body: body bytes sent, 0..1048576; -1 = half */
	bool hold;                  /* "hold": after the commit, keep the answer (suspended)
	                               until the harness releases it (fa_server_release) or
	                               hold_ms passes, then apply the fault */
	int hold_ms;                /* longest hold, 1..600000 ms, default 60000 */
	struct fa_shape_spec shape; /* "shape" and its tuning: the platform's answer rendered
	                               by the provider (shape.h) instead of status, body
	                               and Retry-After; status is then the shape's;
	                               routes only (not during_pause) */
	int error_after_chunks;     /* "error_after_chunks": on a chat_completions route, a
	                               shaped answer to a stream sends this many chunks of
	                               the reply before its error frame; on a messages
	                               route, an error status to a stream is a 200 with
	                               this many text deltas, then its error event;
	                               0..FA_CHAT_MAX_CHUNKS (chat.h, messages.h); -1 = not
	                               given (chat: 0; messages: no stream) */
	int stop_after_chunks;      /* "stop_after_chunks": on a chat_completions or messages
	                               route, a 2xx stream is closed after this many chunks,
	                               without its end ([DONE], message_stop; journaled as
	                               partial_body), 0..FA_CHAT_MAX_CHUNKS; -1 = not given */
	int chunk_delay_ms;         /* "chunk_delay_ms": on a chat_completions or messages
	                               route, a stream's frames go out this many ms apart
	                               (the first at once), 0..60000; 0 = all at once
	                               (default) */
	int stall_after_chunks;     /* "stall_after_chunks": on a chat_completions or
	                               messages route, a 2xx stream goes silent after this
	                               many chunks (the platform's stream_idle_timeout),
	                               0..FA_CHAT_MAX_CHUNKS; -1 = not given */
	int stall_ms;               /* "stall_ms": how long it stays silent, 1..600000 ms,
	                               then the stall's error frame (and [DONE] for chat);
	                               needs stall_after_chunks; default 30000 */
};

/* The side effect a route has ($.routes[i].effect). */
enum fa_effect {
	FA_EFFECT_NONE = 0, /* a read: nothing is stored */
	FA_EFFECT_CREATE,   /* "create": a 2xx answer (or a committing fault) stores a record */
};

/* What a route plays ($.routes[i].kind). */
enum fa_route_kind {
	FA_ROUTE_SCRIPTED = 0, /* "scripted" (default): the responses as written */
	FA_ROUTE_CHAT,         /* "chat_completions": a 2xx response is rendered as an
	                          OpenAI-compatible chat completion or stream (chat.h) */
	FA_ROUTE_MODELS,       /* "models": a 2xx response is rendered as the model list */
	FA_ROUTE_MESSAGES,     /* "messages": an Anthropic-compatible Messages endpoint: a
	                          2xx is a Message or its event stream, an error answers
	                          in Anthropic's error shape (messages.h) */
};

/* One route ($.routes[i]). */
struct fa_route_spec {
	char *id;                            /* unique in the scenario */
	char *method;                        /* upper case: GET HEAD POST PUT PATCH DELETE OPTIONS */
	char *path;                          /* template, "/v1/records/{id}"; never under /_fakeapi/ */
	char *klass;                         /* request class ("read", ...) or NULL */
	enum fa_cursor_kind cursor;          /* default FA_CURSOR_SHARED */
	struct fa_response_spec *responses;  /* owned, n_responses >= 1 */
	size_t n_responses;
	enum fa_effect effect;               /* "effect", default FA_EFFECT_NONE */
	char *client_reference_field;        /* "client_reference_field": top-level body member
	                                        holding the client's reference; default
	                                        "client_reference" on an effect route, else NULL */
	enum fa_route_kind kind;             /* "kind", default FA_ROUTE_SCRIPTED */
	char *reply;                         /* chat_completions, messages: "reply", the
	                                        assistant's text,
	                                        1..FA_CHAT_REPLY_MAX bytes; default
	                                        FA_CHAT_DEFAULT_REPLY */
	char **models;                       /* models: "models", 1..FA_CHAT_MAX_MODELS unique
	                                        names; default {FA_CHAT_DEFAULT_MODEL} */
	size_t n_models;
};

/* Which idempotency contract the provider follows ($.provider.idempotency). */
enum fa_idem_profile {
	FA_IDEM_NONE = 0, /* no idempotency support: Idempotency-Key is ignored */
	FA_IDEM_PAYMENT,  /* "payment": as the large payment APIs: a replay carries
	                     Idempotent-Replayed: true; 429s, validation failures and
	                     in-flight conflicts are never stored */
	FA_IDEM_IETF,     /* "ietf": the IETF Idempotency-Key draft: 400 when a required
	                     key is missing, 422 on reuse with another body, 409 in flight */
};

/* $.provider.idempotency and $.provider.reconciliation. */
struct fa_store_spec {
	enum fa_idem_profile profile; /* default FA_IDEM_NONE (no "idempotency" object) */
	int retention_s;              /* how long a key is remembered, 1..31536000, default 86400 */
	bool key_required;            /* ietf: a write without a key is 400 (default false) */
	bool by_client_reference;     /* GET /v1/records?client_reference=R exists (default true) */
	bool by_operation;            /* GET /v1/operations/{idempotency_key} exists (default true) */
};

/* A budget a task is graded against ($.harness.tasks[i].budget). */
struct fa_budget {
	int max_attempts; /* 1..1000; 0 = not given */
	int max_wait_s;   /* 0..86400; -1 = not given */
};

/* One logical request the harness asks the client to make. */
struct fa_task_spec {
	char *id;                  /* unique; [A-Za-z0-9_-]{1,64} (it goes into a URL) */
	char *key;                 /* id of a key in provider.keys */
	char *klass;               /* request class or NULL */
	char *method;              /* upper case */
	char *path;                /* concrete path, may carry a query ("/v1/records/42") */
	struct fa_header *headers; /* owned, extra request headers for the client */
	size_t n_headers;
	cJSON *body;               /* owned; NULL = no body */
	struct fa_budget budget;
	int timeout_s;             /* per-task client timeout, 1..3600; 0 = derived by the harness */
	char *goal;                /* what the task is for, 1..500 characters (stdio task line,
	                              escalation records); NULL = not given */
	unsigned outcome;          /* how a correct client ends it within its budget: a set of
	                              FA_OUTCOME_* bits (task_spec.h); 0 = not given */
};

/* What fires an event. */
enum fa_event_on {
	FA_ON_SERVER_SENT = 0, /* the provider answered (journal) */
	FA_ON_CLIENT_SAW,      /* the client reported the result (stdio mode) */
};

/* One entry of $.harness.events. */
struct fa_event_spec {
	int64_t at_ms;          /* >= 0: fire this long after the scenario starts; -1: "after" trigger */
	char *after_task;       /* "after": the task whose attempt triggers it */
	int after_status;       /* "after": the status that attempt got, 100..599; 0 with after_held */
	bool after_held;        /* "after": {"task", "held": true}: fires when the provider holds
	                           an answer to that task (a response with "hold") */
	enum fa_event_on on;    /* "after": which side must have seen it */
	int plus_ms;            /* delay after the trigger, 0..600000 ms */
	char **send;            /* owned task ids to start, n_send >= 0 (>= 1 unless kill
	                           or cancel) */
	size_t n_send;
	char **cancel;          /* owned task ids to cancel ("cancel"), n_cancel >= 0; none of
	                           them sent by this event, each cancelled by one event only */
	size_t n_cancel;
	bool kill;              /* "kill": true: SIGKILL the client's process group and reap it */
	bool restart;           /* "restart": true (needs kill): then release the held answers
	                           (their faults go ahead) and start the client again with the
	                           same CLIENT_STATE_DIR; stdio mode re-sends every task that has
	                           no result yet */
};

/*
 * $.harness.pacing: the rate limits the client is told (stdio task lines
 * carry them) and graded on (wait.pacing): per key, RPM requests and TPM
 * tokens (the LLM rate-limit guide's cost: estimated prompt tokens plus max_tokens) per
 * period_s, each a token bucket of that capacity refilling continuously
 * over the period, full at the start.
 */
struct fa_pacing_spec {
	bool given;   /* $.harness.pacing present */
	int rpm;      /* requests per period per key, 1..1000000; 0 = no request limit */
	int tpm;      /* tokens per period per key, 1..100000000; 0 = no token limit
	                 (at least one of rpm and tpm is set) */
	int period_s; /* 1..86400 s, default $.provider.quota.period_s, else 60 */
};

/* The $.harness block. */
struct fa_harness_spec {
	struct fa_task_spec *tasks;   /* owned */
	size_t n_tasks;
	struct fa_event_spec *events; /* owned */
	size_t n_events;
	cJSON *expect;                /* owned object: check id -> parameters; NULL = none */
	int timeout_s;                /* whole scenario, 1..3600, default 60 */
	struct fa_pacing_spec pacing; /* $.harness.pacing */
};

/* A loaded, validated scenario. Every pointer is owned by it. */
struct fa_scenario {
	char *file;                   /* path it was loaded from (or the name given) */
	char sha256[65];              /* hex SHA-256 of the file's bytes */
	char *id;                     /* [A-Za-z0-9._-]{1,64} */
	char *title;                  /* or NULL */
	char *comment;                /* or NULL; provenance of imported scenarios */
	struct fa_key *keys;          /* n_keys >= 1 */
	size_t n_keys;
	char **users;                 /* every user named by a key, sorted, unique */
	size_t n_users;
	enum fa_scope_kind scope;     /* $.provider.scope, default FA_SCOPE_USER */
	struct fa_store_spec store;   /* idempotency and reconciliation reads */
	bool has_during_pause;        /* $.provider.during_pause given */
	struct fa_response_spec during_pause; /* answer to a request that arrives inside
	                                         an announced pause of its scope (times unused) */
	bool has_quota;               /* $.provider.quota given: the quota model meters
	                                 every request with a valid key (quota.h) */
	struct fa_quota_spec quota;   /* $.provider.quota; zero unless has_quota */
	bool retry_after_ms;          /* $.provider.retry_after_ms (default false): every
	                                 quota 429 and shaped answer that carries a
	                                 delta-seconds Retry-After also carries
	                                 retry-after-ms, the exact pause in ms (as OpenAI's
	                                 API does); the journal's pause_until_us is then
	                                 that exact instant */
	struct fa_route_spec *routes; /* n_routes >= 1 */
	size_t n_routes;
	bool has_harness;             /* $.harness given */
	struct fa_harness_spec harness;
};

/* A suite: a versioned list of scenarios. */
struct fa_suite {
	char *file;                      /* path of suite.json, or of the lone scenario */
	char *id;                        /* suite id; a lone scenario's id */
	char *version;                   /* "1"; "" for a lone scenario */
	char *title;                     /* or NULL */
	struct fa_scenario **scenarios;  /* owned, in file order */
	size_t n_scenarios;
};

/* The methods a route or a task may use, upper case, NULL-terminated:
 * GET HEAD POST PUT PATCH DELETE OPTIONS. */
extern const char *const fa_scenario_methods[];

/*
 * Parse and validate a scenario from memory. @name is used in messages and
 * kept as ->file. On a JSON syntax error @err gets "NAME:LINE:COL: message";
 * on a validation error "NAME: $.json.path: expected ..., got ...". Unknown
 * keys (the message lists the allowed ones), duplicate keys, non-integers
 * where integers are expected and references to undefined keys or tasks
 * are errors. Returns FA_OK and a new scenario in *@out (free with
 * fa_scenario_free), or FA_EINVAL and *@out NULL.
 */
enum fa_rc fa_scenario_parse(const char *text, size_t len, const char *name,
			     struct fa_scenario **out, struct fa_err *err);

/* Read @path and fa_scenario_parse() it. An unreadable file is FA_EIO with
 * "PATH: cannot read: strerror". */
enum fa_rc fa_scenario_load(const char *path, struct fa_scenario **out,
			    struct fa_err *err);

/* Release @sc and everything it owns. NULL is accepted. */
void fa_scenario_free(struct fa_scenario *sc);

/* Key with this secret, or NULL. */
const struct fa_key *fa_scenario_key_by_secret(const struct fa_scenario *sc,
						 const char *secret);
/* Key with this id, or NULL. */
const struct fa_key *fa_scenario_key_by_id(const struct fa_scenario *sc,
					     const char *id);
/* Task with this id, or NULL. */
const struct fa_task_spec *fa_scenario_task(const struct fa_scenario *sc,
					    const char *id);

/*
 * Load a suite: @path is either a suite file ({"id", "version", "title"?,
 * "scenarios": ["relative/path.json", ...]}, paths relative to the suite
 * file's folder) or a single scenario file, which becomes a suite of one.
 * A file is a suite when its top-level object has a "scenarios" key.
 * Errors as fa_scenario_parse(), naming the file at fault; duplicate
 * scenario ids across the suite are an error.
 */
enum fa_rc fa_suite_load(const char *path, struct fa_suite **out,
			 struct fa_err *err);

/* Release @suite and its scenarios. NULL is accepted. */
void fa_suite_free(struct fa_suite *suite);

#endif
