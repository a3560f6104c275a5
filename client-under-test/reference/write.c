/* write.c -- a write under ambiguity: a stable key, the saved operation, status reads, escalation.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "defect.h"
#include "emit.h"
#include "escalate.h"
#include "log.h"
#include "reconcile.h"
#include "state.h"
#include "taskrun.h"

/*
 * The retry-safety guide: the most dangerous retry bug is a duplicated side effect. The
 * provider committed the write, the connection dropped before the answer,
 * and the client sent the write again as new. So a write:
 *
 *   1. gets an idempotency key before its first send, saved with the
 *      operation in CLIENT_STATE_DIR (state.c), and carries that same key
 *      on every attempt, after a restart too;
 *   2. treats an outcome that leaves it unknown whether the provider acted
 *      (a transport error after request bytes left: EOF, reset, a cut-short
 *      body, a timeout) as ambiguous: it says so (reconciliation_required)
 *      and asks the provider before anything else, by key
 *      (GET /v1/operations/{key}), else by client reference
 *      (GET /v1/records?client_reference=R);
 *   3. found: done, with the record's id; not found: sends the write again
 *      with the same key; still in flight: waits and asks again;
 *   4. when neither read exists (or the budget runs out first) it cannot
 *      know, and says so: an escalation record and outcome `escalated`,
 *      `sent: unknown`; never `failed` (the write may have happened), never
 *      a fresh create (the same for a write the provider keeps refusing
 *      with a retryable status until the budget ends, with the `sent` its
 *      answers give);
 *   5. when CLIENT_STATE_DIR holds a file for the task that cannot be used
 *      (corrupt, or several files claim the task), an earlier process may
 *      have sent the write under a key nobody can read back: it asks by
 *      client reference before anything, and only a "not found" lets it
 *      start over with a fresh key.
 */

/* What an ambiguous outcome leads to. */
enum after_ambiguous {
	AMB_RECONCILE,     /* read the write's status first (the reference) */
	AMB_RESEND,        /* send the write again as it is */
	AMB_REPORT_FAILED, /* give up and report that nothing was sent */
};

/* How this client treats a write. The reference follows every rule; each
 * write defect breaks one, here and nowhere else. */
struct write_rules {
	bool send_key;              /* send an Idempotency-Key */
	bool key_per_attempt;       /* a fresh key for every write attempt */
	bool persist;               /* save the operation in CLIENT_STATE_DIR */
	bool body_once;             /* the body goes out with the first attempt only */
	enum after_ambiguous after; /* what an ambiguous outcome leads to */
};

static struct write_rules write_rules(void)
{
	struct write_rules w = {
		.send_key = true,
		.key_per_attempt = false,
		.persist = true,
		.after = AMB_RECONCILE,
	};

	/* DEFECT newkey: every write attempt after the first carries a key
	 * of its own, so the provider cannot tell a replay from a new
	 * write. */
	if (defect_is("newkey"))
		w.key_per_attempt = true;
	/* DEFECT blindpost: no key, nothing saved, no status read: after an
	 * ambiguous outcome the write is simply sent again. */
	if (defect_is("blindpost")) {
		w.send_key = false;
		w.persist = false;
		w.after = AMB_RESEND;
	}
	/* DEFECT failreport: an ambiguous outcome is reported as a failure
	 * that sent nothing, though the provider may hold the record. */
	if (defect_is("failreport"))
		w.after = AMB_REPORT_FAILED;
	/* DEFECT memkey: the key lives only in memory: a restarted client
	 * finds nothing and starts the write over with a fresh key. */
	if (defect_is("memkey"))
		w.persist = false;
	/* DEFECT newbody: the body is read like a stream that the first send
	 * consumed: every later write attempt goes out with an empty body,
	 * under the same key. */
	if (defect_is("newbody"))
		w.body_once = true;
	return w;
}

bool ref_write_persists(void)
{
	return write_rules().persist;
}

/* Where the write stands within this run. */
struct write {
	struct ref_task *t;       /* the task (borrowed) */
	struct ref_run *run;      /* its progress (borrowed) */
	struct ref_op *op;        /* t->op */
	struct write_rules rules; /* write_rules() */
	bool reconcile;           /* the next request is a status read */
	bool ops_gone;            /* GET /v1/operations/{key} does not exist */
	bool refs_gone;           /* GET /v1/records?client_reference= does not exist */
	bool start_over;          /* the task's saved state was unusable: a "not
	                             found" starts the write over with a fresh key */
	bool persist_later;       /* t->persist, held back until it starts over */
	bool over;                /* run->outcome is final */
};

/* Save the operation; a failure after the first save only costs a
 * restarted process the latest state, the key being already saved. */
static void save(struct write *w)
{
	struct fa_err err = { "" };

	if (w->t->persist && ref_state_save(w->t->state, w->op, &err) != FA_OK)
		FA_LOG(FA_LOG_WARN, "client", "task=%s event=state_save error=\"%s\"", w->t->id,
		       err.msg);
}

static void finish(struct write *w, const char *outcome, const char *sent)
{
	w->run->outcome = outcome;
	w->run->sent = sent;
	w->over = true;
}

/* The provider holds the record @provider_id (taken; may be NULL). */
static void done(struct write *w, char *provider_id)
{
	free(w->op->provider_id);
	w->op->provider_id = provider_id;
	w->op->state = REF_OP_DONE;
	save(w);
	w->run->provider_id = w->op->provider_id;
	finish(w, "succeeded", "yes");
}

/* Give the write its key and make it durable before its first byte
 * leaves (the retry-safety guide): a write that could not be resumed after a crash is
 * not sent. False (the task failed, nothing sent) when either fails. */
static bool prepare(struct write *w)
{
	struct ref_task *t = w->t;
	struct fa_err err = { "" };

	if (w->rules.send_key && ref_op_new_key(&w->op->key, &err) != FA_OK) {
		FA_LOG(FA_LOG_ERROR, "client", "task=%s event=no_key error=\"%s\"", t->id, err.msg);
		finish(w, "failed", "no");
		return false;
	}
	if (t->persist && ref_state_save(t->state, w->op, &err) != FA_OK) {
		FA_LOG(FA_LOG_ERROR, "client", "task=%s event=state_save error=\"%s\"", t->id,
		       err.msg);
		finish(w, "failed", "no");
		return false;
	}
	return true;
}

/* Nobody can tell whether the write happened: hand it to a person. The
 * record names the write (key, client reference), never its body. */
static void escalate(struct write *w)
{
	const char *how = w->op->key != NULL ? "neither GET /v1/operations/{key} nor"
	                                     : "no key to ask by, and no";
	char *action = fa_xasprintf("%s %s may have been applied by the provider and cannot be "
	                            "confirmed: %s GET /v1/records?client_reference= answers",
	                            w->t->method, w->t->endpoint, how);

	w->run->sent = "unknown";
	ref_escalate(w->t, w->run, "ambiguous_write", action);
	free(action);
	finish(w, "escalated", "unknown");
}

/* The attempt @wire could not be made: cancelled, refused by the circuit,
 * or stopped by the budget (escalated, whatever the write's state, unless
 * it could not even be set up). */
static void stopped(struct write *w, enum ref_sent s, const struct ref_wire *wire)
{
	const char *sent = w->run->sent;
	bool unknown = sent != NULL && strcmp(sent, "unknown") == 0;

	if (s == REF_CANCELLED) {
		finish(w, "cancelled", sent);
	} else if (s == REF_OUT_OF_BUDGET && w->run->stop != REF_STOP_SETUP) {
		ref_escalate_stop(w->t, w->run, wire);
		finish(w, "escalated", sent);
	} else if (unknown) {
		escalate(w);
	} else {
		finish(w, "failed", sent);
	}
}

/* Attempt @attempt (0: a saved operation from an earlier process) left
 * the write's outcome unknown, for @reason. */
static void ambiguous(struct write *w, int attempt, const char *reason)
{
	w->op->state = REF_OP_AMBIGUOUS;
	save(w);
	w->run->sent = "unknown";
	switch (w->rules.after) {
	case AMB_RECONCILE:
		ref_emit_reconciliation_required(w->t->id, attempt, reason, w->op->key);
		w->reconcile = true;
		break;
	case AMB_RESEND:
		/* After the backoff the response asked for (if any). */
		w->reconcile = false;
		if (attempt > 0)
			w->run->last = &w->run->seen;
		break;
	case AMB_REPORT_FAILED: finish(w, "failed", "no"); break;
	}
}

/* One attempt of the write itself, and what its outcome means. */
static void send_write(struct write *w)
{
	struct ref_task *t = w->t;
	struct ref_run *run = w->run;
	const struct ref_http_res *res = &run->res;
	struct fa_err err = { "" };
	struct ref_wire wire = {
		.kind = "write",
		.method = t->method,
		.url = t->url,
		.body = t->body,
		.body_len = t->body_len,
	};
	enum ref_sent s;

	if (w->rules.key_per_attempt && w->op->attempts > 0) {
		char *key = NULL;

		if (ref_op_new_key(&key, &err) == FA_OK) {
			free(w->op->key);
			w->op->key = key;
		}
	}
	wire.idempotency_key = w->rules.send_key ? w->op->key : NULL;
	if (w->rules.body_once && w->op->attempts > 0) {
		wire.body = "";
		wire.body_len = 0;
	}
	s = ref_task_send(t, run, &wire);
	if (s == REF_CANCELLED && res->cancelled && res->maybe_sent) {
		/* Aborted in flight: the provider may have acted on it. */
		run->sent = "unknown";
	}
	if (s != REF_SENT) {
		stopped(w, s, &wire);
		return;
	}
	if (res->status >= 200 && res->status <= 299) {
		done(w, ref_reconcile_created_id(res->body, res->body_len));
		return;
	}
	if (res->status == 0) {
		if (res->maybe_sent) {
			ambiguous(w, run->n, "transport_error");
			return;
		}
		/* Nothing left this machine (refused, no route): the class
		 * decides, as for any request. */
		if (!ref_task_retryable(t, run)) {
			finish(w, "failed", run->sent);
			return;
		}
		run->last = &run->seen;
		return;
	}
	if (res->status == 409 &&
	    ref_reconcile_error_is(res->body, res->body_len, "idempotency_in_flight")) {
		/* An earlier attempt with this key is still being processed:
		 * its outcome is the one to learn, after a pause. */
		ambiguous(w, run->n, "in_flight");
		run->last = &run->seen;
		return;
	}
	run->sent = "yes";
	if (res->status == 422 &&
	    ref_reconcile_error_is(res->body, res->body_len, "idempotency_key_reused")) {
		/* The key went with another body: a bug of this client's,
		 * never something to work around with a new key. */
		FA_LOG(FA_LOG_ERROR, "client",
		       "task=%s event=key_reused key=%s the provider saw this key with another "
		       "body",
		       t->id, w->op->key != NULL ? w->op->key : "-");
		finish(w, "failed", "yes");
		return;
	}
	if (!ref_task_retryable(t, run)) {
		finish(w, "failed", "yes");
		return;
	}
	run->last = &run->seen;
}

/* One status read, by key while that read exists, else by client
 * reference, and what its answer means. */
static void send_status_read(struct write *w)
{
	struct ref_task *t = w->t;
	struct ref_run *run = w->run;
	const struct ref_http_res *res = &run->res;
	bool by_key = !w->ops_gone && w->op->key != NULL;
	struct ref_wire wire = { .kind = "reconcile", .method = "GET", .status_read = true };
	char *url = NULL, *id = NULL;
	size_t n_records = 0;
	enum ref_found f;
	enum ref_sent s;

	if (by_key)
		url = ref_reconcile_operation_url(t->url, w->op->key);
	else if (!w->refs_gone && w->op->client_reference != NULL)
		url = ref_reconcile_records_url(t->url, w->op->client_reference);
	if (url == NULL) {
		escalate(w);
		return;
	}
	wire.url = url;
	s = ref_task_send(t, run, &wire);
	if (s != REF_SENT)
		stopped(w, s, &wire);
	free(url);
	if (s != REF_SENT)
		return;
	if (by_key)
		f = ref_reconcile_operation(res->status, res->body, res->body_len, &id);
	else
		f = ref_reconcile_records(res->status, res->body, res->body_len,
		                          w->op->client_reference, &id, &n_records);
	FA_LOG(FA_LOG_INFO, "client", "task=%s event=reconcile by=%s status=%ld answer=%s", t->id,
	       by_key ? "key" : "client_reference", res->status, ref_found_str(f));
	switch (f) {
	case REF_FOUND:
		if (n_records > 1)
			FA_LOG(FA_LOG_WARN, "client",
			       "task=%s event=duplicates records=%zu client_reference=%s", t->id,
			       n_records, w->op->client_reference);
		done(w, id);
		return;
	case REF_NOT_FOUND:
		/* It did not happen: send it again, with the same key, after
		 * the backoff (a write that keeps dropping before its commit
		 * must not turn into a tight loop). */
		run->sent = "no";
		w->reconcile = false;
		run->last = &run->seen;
		if (w->start_over) {
			/* No earlier write holds the reference: this one
			 * starts over, with a fresh key, saved first. */
			w->start_over = false;
			t->persist = w->persist_later;
			w->op->state = REF_OP_PENDING;
			prepare(w);
		}
		break;
	case REF_IN_FLIGHT:
	case REF_TRY_AGAIN: run->last = &run->seen; break;
	case REF_UNAVAILABLE:
		if (by_key)
			w->ops_gone = true;
		else
			w->refs_gone = true;
		break;
	}
	free(id);
}

void ref_write_run(struct ref_task *t, struct ref_run *run)
{
	struct write w = { .t = t, .run = run, .op = t->op, .rules = write_rules() };

	run->outcome = "failed";
	run->sent = "no";
	if (t->resumed) {
		FA_LOG(FA_LOG_INFO, "client", "task=%s event=resume state=%s attempts=%d", t->id,
		       ref_op_state_str(w.op->state), w.op->attempts);
		if (w.op->state == REF_OP_DONE) {
			/* Done before the restart: nothing to send. */
			run->provider_id = w.op->provider_id;
			finish(&w, "succeeded", "yes");
			return;
		}
		/* The earlier process may have sent it: ask before anything. */
		ambiguous(&w, 0, "restart");
	} else if (t->unknown_past) {
		/* An earlier process may have sent it, under a key that
		 * cannot be read back: no key yet (so the only question is by
		 * client reference, and no escalation names a key that never
		 * went out), and nothing saved until the provider says "not
		 * found": the unusable file keeps telling a restarted process
		 * to ask as well. */
		w.start_over = true;
		w.persist_later = t->persist;
		t->persist = false;
		ambiguous(&w, 0, "restart");
	} else if (!prepare(&w)) {
		return;
	}
	while (!w.over) {
		if (w.reconcile)
			send_status_read(&w);
		else
			send_write(&w);
	}
}
