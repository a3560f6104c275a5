/* server.h -- glue between libmicrohttpd and the provider. */
#ifndef FA_SERVER_H
#define FA_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "provider.h"
#include "rc.h"

/* Memory libmicrohttpd may use per connection for the request line,
 * headers, parsed query and body buffer, bytes. It clears all of it after
 * every request, so it costs CPU in proportion (docs/internals.md). */
#define FA_SERVER_CONN_MEMORY (64 * 1024)

/* How to listen. */
struct fa_server_opts {
	const char *bind; /* IPv4 or IPv6 address or "localhost"; NULL = "127.0.0.1" */
	unsigned port;    /* 0 = an ephemeral port */
	unsigned threads; /* thread-pool size, >= 2; 0 = default (4) */
};

struct fa_server;

/*
 * Start serving @p (borrowed; it must outlive the server) in background
 * threads. On failure returns FA_EIO/FA_EINVAL with "cannot listen on
 * ADDR:PORT: reason" in @err. Raises RLIMIT_NOFILE to the hard limit.
 */
enum fa_rc fa_server_start(struct fa_provider *p, const struct fa_server_opts *opts,
                           struct fa_server **out, struct fa_err *err);

/* The port actually bound (useful with port 0). */
unsigned fa_server_port(const struct fa_server *s);

/*
 * Answers held by a response with "hold" (scenario-format: the provider
 * has committed the write and keeps the answer): how many are held now for
 * task @task (the attempt's fa_task; NULL = any task). Thread-safe.
 */
size_t fa_server_held(struct fa_server *s, const char *task);

/*
 * Let the held answers of @task (NULL = all) go ahead now: each applies its
 * fault (drop, reset, ...) or answers, after its delay_ms if it has one
 * (it no longer counts as held then). Returns how many were released.
 * Thread-safe. Used by the harness to kill a client while its write is
 * committed but unanswered, and only then break the connection.
 */
size_t fa_server_release(struct fa_server *s, const char *task);

/*
 * What is on its way to the journal at one instant (fa_server_load). A
 * request counts from the moment its headers were read until its attempt
 * is in the journal; a connection from its accept until its close.
 */
struct fa_server_load {
	bool queued;        /* a connection waits in the listen queue, not yet accepted */
	size_t connections; /* open connections, parked ones included */
	size_t requests;    /* requests read (their headers at least), not yet journaled */
	size_t parked;      /* connections suspended on the timer list: a hold, a delay,
	                       a paced stream between frames; a parked connection does
	                       not notice its client leaving (fa_server_stop journals it) */
	uint64_t opened;    /* connections accepted since the start */
	uint64_t started;   /* requests read since the start */
};

/*
 * Fill @out: the listen queue looked at first (poll), then the counts in
 * one consistent look. Thread-safe. A connection the server takes from the
 * queue shows in neither for the few µs before it is counted: to know that
 * nothing is on its way, look twice and compare ->opened and ->started.
 */
void fa_server_load(struct fa_server *s, struct fa_server_load *out);

/* Resume every held connection, stop the daemon, join its threads; every
 * attempt has reached the journal when it returns. NULL accepted. */
void fa_server_stop(struct fa_server *s);

#endif
