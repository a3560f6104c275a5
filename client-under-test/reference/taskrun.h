/* taskrun.h -- what task.c shares with write.c: the task's fields and the one-attempt machinery. */
#ifndef REF_TASKRUN_H
#define REF_TASKRUN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "circuit.h"
#include "http.h"
#include "pace.h"
#include "policy.h"
#include "registry.h"
#include "slot.h"
#include "state.h"

/* Not a public contract: the task (task.h) is. These are the parts of it
 * that the task message (taskmsg.c), the write path (write.c) and the
 * escalation record (escalate.c) share. */

struct ref_task {
	char *id;                    /* the harness's task id */
	char *method;                /* "GET", ... */
	char *url;                   /* used as given (carries fa_task) */
	char **headers;              /* "Name: value" lines */
	size_t nheaders;             /* entries in headers */
	char **read_headers;         /* the same without Content-*: for status reads */
	size_t nread_headers;        /* entries in read_headers */
	char *body;                  /* request body, or NULL */
	size_t body_len;             /* bytes of body */
	char *key_env;               /* variable holding the key, or NULL */
	char *goal;                  /* what the task is for (the task's "goal"), or NULL */
	char *scope;                 /* the task's scope, else "key:<key>", else "default":
	                                its shared-scope budget (slot.h) and the scope an
	                                escalation record names */
	char *reg_scope;             /* the registry key this task uses */
	char *endpoint;              /* url's endpoint template (fingerprint.h) */
	const struct ref_class *cls; /* the task's class (static) */
	int max_attempts;            /* the class's, or the task's budget when lower */
	int64_t max_wait_us;         /* the same, for total waiting */
	int64_t deadline_us;         /* monotonic: result due; 0 = none */
	struct ref_registry *reg;    /* shared by all tasks (borrowed) */
	struct ref_slots *slots;     /* shared by all tasks (borrowed) */
	struct ref_circuit *circuit; /* shared by all tasks (borrowed) */
	struct ref_pace *pace;       /* shared by all tasks (borrowed) */
	char *pace_key;              /* the task's key id, whose buckets it uses
	                                ("" when the task names none) */
	struct ref_pace_spec pacing; /* the task line's pacing; given = false: none */
	int64_t tokens;              /* the task line's tokens, >= 0 (null: 0) */
	bool stream;                 /* the task line's stream: the answer is read as
	                                server-sent events (stream.h) */
	int idle_s;                  /* a stream's idle timeout, s */
	bool write;                  /* a write: runs ref_write_run() */
	struct ref_state *state;     /* where operations are saved (borrowed) */
	struct ref_op *op;           /* a write's operation, owned; NULL for a read */
	bool resumed;                /* op was saved by an earlier process */
	bool unknown_past;           /* CLIENT_STATE_DIR holds a file for this task that
	                                cannot be used: an earlier process may have sent
	                                the write under a key nobody can read back */
	bool persist;                /* op is saved in state at every change */
	pthread_t thread;            /* runs task_main() */
	bool started;                /* thread is valid and must be joined */
	pthread_mutex_t mu;          /* with cv: cancellable sleeps */
	pthread_cond_t cv;           /* signalled by ref_task_cancel() */
	atomic_bool cancel;          /* set once, never cleared */
};

/* One attempt on the wire, as an escalation record shows it. */
struct ref_attempt_log {
	int attempt;                    /* 1, 2, ... within this process */
	int64_t at_wall_us;             /* when it was sent, wall clock µs */
	long status;                    /* HTTP status, 0 for a transport error */
	char *retry_after;              /* raw Retry-After received, owned; NULL = none */
	struct ref_http_hdr *ratelimit; /* rate-limit fields received, owned array */
	size_t n_ratelimit;             /* entries in ratelimit */
};

/* Why ref_task_send() made no attempt (REF_OUT_OF_BUDGET, REF_REFUSED). */
enum ref_stop {
	REF_STOP_NONE = 0, /* it did make one */
	REF_STOP_ATTEMPTS, /* max_attempts are used up */
	REF_STOP_WAIT,     /* the next wait does not fit in the wait budget left */
	REF_STOP_DEADLINE, /* the deadline leaves no time for another attempt */
	REF_STOP_QUEUE,    /* max_delayed_requests tasks of the scope already wait */
	REF_STOP_CIRCUIT,  /* the circuit of the method and endpoint is open */
	REF_STOP_SETUP,    /* the attempt could not be set up (libcurl refused) */
	REF_STOP_PACE,     /* its cost exceeds the key's token limit (pace.h): it
	                      can never be sent */
};

/* What the previous response asked for, if anything. */
struct ref_seen {
	bool ra;           /* it carried a Retry-After naming a future instant */
	int64_t until_us;  /* that instant, monotonic */
	int64_t window_us; /* its jitter window */
};

/* A task's progress, and what its result will say. */
struct ref_run {
	int n;                       /* attempts this process put on the wire */
	int64_t waited_us;           /* time waited between attempts */
	long status;                 /* the last HTTP status, 0 = none */
	bool any_response;           /* some attempt got a response */
	bool maybe_sent;             /* some attempt may have reached the provider */
	struct ref_seen seen;        /* what the last response asked for */
	const struct ref_seen *last; /* &seen: the next attempt follows that
	                               response (backoff or its Retry-After);
	                               NULL: it may go at once */
	struct ref_http_res res;     /* the last attempt's outcome */
	const char *outcome;         /* "succeeded", "failed", "escalated", "cancelled" */
	const char *sent;            /* "yes", "no", "unknown"; NULL: from the attempts */
	const char *provider_id;     /* the record's id (borrowed from op), or NULL */
	int64_t asked_us;            /* the pause the last usable Retry-After asked
	                                for, µs; -1 = none yet */
	enum ref_stop stop;          /* why the last ref_task_send() sent nothing */
	enum ref_reason stop_wait;   /* REF_STOP_WAIT: what that wait was for
	                                (REF_REASON_NONE: a free slot) */
	int64_t stop_wait_us;        /* REF_STOP_WAIT: the shortest wait that would
	                                have done, µs */
	struct ref_attempt_log *log; /* every attempt on the wire, oldest first, owned */
	size_t nlog;                 /* entries used in log */
	size_t caplog;               /* entries allocated */
	bool reported;               /* the result line is out already */
};

/* One request to put on the wire: the task's own, or a status read. */
struct ref_wire {
	const char *kind;            /* "read", "write" or "reconcile" */
	const char *method;          /* "GET", ... */
	const char *url;             /* where */
	const char *body;            /* request body, or NULL */
	size_t body_len;             /* bytes of body */
	const char *idempotency_key; /* sent as Idempotency-Key, or NULL */
	bool status_read;            /* send read_headers rather than headers */
};

/* How ref_task_send() ended. */
enum ref_sent {
	REF_SENT = 0,      /* the attempt was made; its outcome is in run->res */
	REF_CANCELLED,     /* cancelled while waiting or in flight */
	REF_OUT_OF_BUDGET, /* attempts, waiting, the scope's queue or the deadline
	                      forbid another attempt (or it could not be set up):
	                      nothing sent; run->stop says which */
	REF_REFUSED,       /* the circuit of the task's method and endpoint is
	                      open (circuit.h): nothing sent; run->status is the
	                      failure's status */
};

/*
 * Make the task's next attempt, @w: refuse it when @w is the task's own
 * request (not a status read) and the circuit of its method and endpoint
 * is open; stop if the budget (max_attempts, counting the attempts earlier
 * processes made for a saved operation) forbids it; wait as run->last,
 * the scope registry, the wait budget and the deadline say (reporting
 * retry_scheduled); take one of the scope's in-flight slots; announce it
 * (action_sent), send it, record its outcome in @run and run->log
 * (publishing a Retry-After to the scope and the answer to the circuit
 * before the slot is given back) and report it (action_result). A saved
 * operation's attempt count is saved before the attempt goes out.
 * Afterwards run->last is NULL.
 */
enum ref_sent ref_task_send(struct ref_task *t, struct ref_run *run, const struct ref_wire *w);

/* Is the outcome in run->res worth another attempt in @t's class? */
bool ref_task_retryable(const struct ref_task *t, const struct ref_run *run);

/* What the result says of `sent`: run->sent when set, else "yes" once a
 * response came, "unknown" when an attempt may have reached the provider,
 * "no" otherwise. */
const char *ref_run_sent(const struct ref_run *run);

/* Attempts spent of max_attempts: the saved operation's count (all
 * processes) for a write, else this process's. */
int ref_task_attempts_used(const struct ref_task *t, const struct ref_run *run);

/*
 * Run a write to its end (write.c): the idempotency key, the saved
 * operation, the status reads after an ambiguous outcome, the escalation
 * when nothing can tell. Fills run->outcome, run->sent and
 * run->provider_id; task.c reports the result.
 */
void ref_write_run(struct ref_task *t, struct ref_run *run);

/* Does this client save write operations in CLIENT_STATE_DIR (and so
 * resume the ones it finds there)? ref_task_new() asks before it takes a
 * saved operation. */
bool ref_write_persists(void);

#endif
