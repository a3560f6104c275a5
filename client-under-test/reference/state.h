/* state.h -- the saved operations in CLIENT_STATE_DIR: one file per write, replaced atomically. */
#ifndef REF_STATE_H
#define REF_STATE_H

#include <stdbool.h>

#include "rc.h"

/*
 * The retry-safety guide: a write that may have happened must survive the process that
 * sent it. Before the first byte of a write goes out, the client saves
 * the operation (its idempotency key above all) in CLIENT_STATE_DIR; a
 * client killed mid-write and started again finds it there and resumes it
 * with the same key instead of creating the record a second time.
 *
 * One JSON file per task, `op-<task id>.json` (docs/reference-client.md
 * gives the format), written as a temporary file, fsync()ed, renamed over
 * the old one, and the folder fsync()ed: a kill at any moment leaves the
 * old version or the new one, never half of either.
 */

/* Where a write stands. */
enum ref_op_state {
	REF_OP_PENDING = 0, /* "pending": saved, sent or about to be; outcome not known */
	REF_OP_AMBIGUOUS,   /* "ambiguous": an attempt ended after the request may have
	                       been acted on; reconcile before anything else */
	REF_OP_DONE,        /* "done": the provider holds the record (provider_id) */
};

/* One logical write, as saved. Every string is owned; free with
 * ref_op_free(). */
struct ref_op {
	char *task;              /* the harness's task id */
	char *key;               /* idempotency key, "idk_" + 32 hex digits; NULL = none */
	char *method;            /* "POST", ... */
	char *url;               /* the task's url, as first sent */
	char *body;              /* the request body, NULL = none */
	char *client_reference;  /* the body's "client_reference" member, NULL = none */
	enum ref_op_state state; /* where it stands */
	char *provider_id;       /* the record's id once done, else NULL */
	int attempts;            /* attempts made for the task so far, by every process */
};

/* The folder and the operations found in it at start. */
struct ref_state;

/*
 * Open @dir (CLIENT_STATE_DIR) and read every saved operation in it; NULL
 * or "" keeps operations in memory only (nothing survives the process).
 * The folder is created (0700) when missing. Never fails and never
 * blocks: only regular files are opened (a FIFO, a device, a folder or a
 * symbolic link named op-*.json is skipped unopened). A file that cannot
 * be read or is not a usable saved operation (see ref_state_take()) is
 * reported on stderr (event=state_skip) and skipped; if the folder itself
 * is unusable, every later ref_state_save() fails and says why. Free with
 * ref_state_free().
 */
struct ref_state *ref_state_open(const char *dir);

/* True when operations are saved to a folder (not memory only). */
bool ref_state_persistent(const struct ref_state *st);

/* Free @st and every operation nobody took; NULL is accepted. */
void ref_state_free(struct ref_state *st);

/* What the folder held for one task when it was opened. */
enum ref_saved {
	REF_SAVED_NONE = 0, /* no file for the task */
	REF_SAVED_OP,       /* exactly one usable saved operation */
	REF_SAVED_UNUSABLE  /* a file for the task exists but cannot be used:
	                       an earlier process may have sent the write under a
	                       key nobody can read back */
};

/*
 * What @st found for task @task when it was opened. A file is the task's
 * when its name is the task's file name or its "task" member names the
 * task. REF_SAVED_OP hands the one usable operation over in *@out (the
 * caller owns it, ref_op_free()); a second call for the same task then
 * says REF_SAVED_NONE. REF_SAVED_UNUSABLE (*@out NULL) when any of the
 * task's files was skipped: not a regular file, unreadable, not JSON, a
 * member missing or of the wrong type, an idempotency key that is null,
 * empty, longer than 255 bytes or has a byte outside [A-Za-z0-9_-]; or
 * when several files claim the task (none of them is guessed to win). A
 * usable "done" operation without a provider id is handed over as
 * "ambiguous" (success without the record's name is no evidence). Not
 * thread-safe: main() calls it when a task arrives, before the task's
 * thread starts.
 */
enum ref_saved ref_state_take(struct ref_state *st, const char *task, struct ref_op **out);

/*
 * Save @op (replacing its earlier version) and make it durable before
 * returning. Thread-safe for different tasks (one file each). A memory-only
 * @st does nothing. On FA_EIO @err names the file and the errno; the old
 * version, if any, is still in place.
 */
enum fa_rc ref_state_save(const struct ref_state *st, const struct ref_op *op, struct fa_err *err);

/* A new operation for @task with no key, state pending, no attempts; the
 * strings are copied (@body and @client_reference may be NULL). */
struct ref_op *ref_op_new(const char *task, const char *method, const char *url, const char *body,
                          const char *client_reference);

/* Free @op; NULL is accepted. */
void ref_op_free(struct ref_op *op);

/*
 * A fresh idempotency key in *@out (owned): "idk_" and 128 bits from the
 * kernel's random source as 32 lowercase hex digits, never from the
 * jitter generator (FAKEAPI_SEED would make a restarted process draw the
 * same keys again). FA_EIO with @err set when no random bytes can be had.
 */
enum fa_rc ref_op_new_key(char **out, struct fa_err *err);

/* "pending", "ambiguous" or "done". */
const char *ref_op_state_str(enum ref_op_state s);

#endif
