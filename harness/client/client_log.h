/* client_log.h -- what a client printed: parsed and judged, searched for canaries, scrubbed. */
#ifndef HX_CLIENT_LOG_H
#define HX_CLIENT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "result.h"

/* Longest line read from a client, bytes without the newline; a longer one
 * is cut and counted as malformed. */
#define HX_CLIENT_LOG_MAX_LINE (1024 * 1024)

/* Protocol errors of lines kept per session; the rest are only counted
 * (the errors that say how the process ended are always kept). */
#define HX_CLIENT_LOG_MAX_ERRORS 100

/* Valid lines kept per session; later ones, a result aside, are protocol
 * errors. */
#define HX_CLIENT_LOG_MAX_MSGS 65536

/*
 * The lines a client printed, parsed (docs/client-protocol.md, "Client →
 * harness" and "Malformed lines"). Needs no process: feed it lines. The
 * first line must be a hello; after it every line must be a JSON object
 * with a known "type" naming, in "task", a task the client was given
 * (hx_client_log_task) and that has not reported its result yet.
 */
struct hx_client_log {
	size_t n_lines;             /* lines read so far, 1-based numbering */
	bool greeted;               /* the hello was read (stays true after a move) */
	size_t hello_line;          /* the line the hello was read on (1 unless a
	                               malformed line came first); 0 = none yet */
	cJSON *hello;               /* owned: the hello object, once read; NULL before */
	struct hx_client_msg *msgs; /* owned: the valid lines after hello, in order */
	size_t n_msgs;
	size_t cap_msgs;
	char **errors; /* owned: "line N: message" or "client ...", in order */
	size_t n_errors;
	size_t cap_errors;
	size_t n_line_errors; /* entries of errors[] that are a line's */
	size_t n_dropped;     /* line errors past HX_CLIENT_LOG_MAX_ERRORS, counted only */
	size_t dropped_at;    /* errors[] index at the first of those (valid when
	                         n_dropped > 0) */
	char **tasks;         /* owned: ids of the tasks the client was given */
	bool *has_result;     /* per tasks[] entry: its result line was read */
	size_t n_tasks;
	size_t cap_tasks;
	char key_canary[33]; /* the canaries each parsed line is searched for
	                        (hx_client_log_canaries); "" = no search */
	char body_canary[64];
	struct hx_canary_hit *hits; /* owned: what that search found, n_hits */
	size_t n_hits;
	size_t searched;      /* bytes it searched */
	bool clock_asked;     /* the harness sent {"type": "clock"} and waits for
	                         the answer (the clock probe of a time scale) */
	bool clock_read;      /* that answer was read: its wall_ms is clock_wall_ms */
	double clock_wall_ms; /* the client's wall clock in the answer, ms since
	                         the epoch */
	bool raw_cut;         /* set by the reader: the lines read from now on may
	                         be missing from the stdout bytes searched later
	                         (past the capture's bound), so a canary a line
	                         holds as printed is reported here too */
};

/* What one line turned out to be. */
enum hx_client_line {
	HX_CLIENT_LINE_HELLO = 0, /* the client's hello: now in ->hello */
	HX_CLIENT_LINE_MSG,       /* a valid message: appended to ->msgs */
	HX_CLIENT_LINE_ERROR,     /* malformed: recorded in ->errors (or counted) */
	HX_CLIENT_LINE_CLOCK,     /* the answer to the clock probe: ->clock_wall_ms */
};

/* An empty log. */
void hx_client_log_init(struct hx_client_log *l);

/* Release what @l owns and zero it. NULL accepted. */
void hx_client_log_release(struct hx_client_log *l);

/*
 * Search every line parsed from now on for @key_canary and @body_canary
 * (copied; canary.h; NULL or "" for none): each line that parses as a
 * JSON object, valid message or not, is printed again as compact JSON,
 * which decodes what the client \u-escaped, and a canary found there but
 * not in the line's own bytes (the search of stdout finds those; with
 * ->raw_cut set, found there at all) is a hit "stdout line N" (its task
 * when the line names one the client was given). A line refused for a \u0000 is searched too, each
 * \u0000 read as U+FFFD. Without a key canary nothing is searched.
 */
void hx_client_log_canaries(struct hx_client_log *l, const char *key_canary,
                            const char *body_canary);

/* The client was given task @id (copied): lines may name it from now on. */
void hx_client_log_task(struct hx_client_log *l, const char *id);

/*
 * Parse one line (@len bytes at @line, without the newline; need not be
 * NUL-terminated) read at @t_us (provider µs since start). @cut: the line
 * was longer than HX_CLIENT_LOG_MAX_LINE and this is its beginning. A valid
 * message becomes an hx_client_msg stamped @t_us; a malformed line becomes
 * "line N: message" in ->errors: not a JSON object, a string holding the
 * escape \u0000 (cJSON would end the string there and hide the rest: "a
 * string holds \u0000 (NUL), which the protocol does not allow"; a raw
 * NUL byte makes it not a JSON object), no "type", unknown
 * type, no "task", unknown task, a line after the task's result, a second
 * hello, an "action_result" whose "status" is not an integer 0..999, a
 * "result" whose "outcome" is not one of the four, a "stream_interrupted"
 * without an integer "attempt" and "chunks" >= 1, a "reason" of
 * error_frame, cut, stall or transport and an "error_code" string or null
 * (such a line is no report of the break), a cut line, and any
 * message but a result once HX_CLIENT_LOG_MAX_MSGS are held ("more than
 * 65536 messages, ignored"). Before the hello, anything but a hello with
 * an integer "protocol" is an error ("expected hello ..."). Past
 * HX_CLIENT_LOG_MAX_ERRORS line errors, the next are only counted. Each
 * line is searched for the canaries as hx_client_log_canaries() says.
 * Never fails otherwise.
 */
enum hx_client_line hx_client_log_line(struct hx_client_log *l, const char *line, size_t len,
                                       bool cut, int64_t t_us);

/* Record a printf-formatted protocol error that belongs to no line (how
 * the process ended: "client ...", at most two per process), whatever
 * the cap. */
void hx_client_log_error(struct hx_client_log *l, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * A copy of the @len bytes at @s (what a client printed: a stderr line,
 * say) safe to print on a terminal: each control character (below 0x20,
 * and 0x7f: ESC and its escape sequences among them) and each byte that
 * is not part of valid UTF-8 becomes '?', as the text report shows them.
 * Returns a new string the caller frees.
 */
char *hx_client_log_plain(const char *s, size_t len);

/*
 * Move the hello, the messages and the protocol errors (one more entry,
 * "N more protocol errors not listed", where the first was only counted,
 * before the errors of the session that follow it) into @out's hello,
 * msgs and protocol_errors, appended to what they already hold (a
 * restarted client's session after the killed one's; a hello is moved
 * only when @out has none yet, else dropped), and add every protocol
 * error, listed or counted, to @out->n_protocol_errors_seen; the hits of
 * the lines' canary search are appended to @out->canary_hits and the
 * bytes it searched added to @out->canary_bytes_searched. @l keeps its
 * line count, tasks and canaries, and goes on with an empty record.
 */
void hx_client_log_move(struct hx_client_log *l, struct hx_scenario_result *out);

/* One stream of what a client printed, for hx_client_log_search(). All
 * borrowed. */
struct hx_client_text {
	const char *buf; /* the bytes, not NUL-terminated; or NULL and: */
	size_t len;
	const char *path;  /* the file they are in (exec mode's output files) */
	const char *where; /* "stdout", "stderr of task t1", ... */
	const char *task;  /* the task it belongs to, or NULL */
};

/*
 * Search what a client printed for @out's canaries (@out->key_canary and
 * ->body_canary; canary.h): the @n @texts (of the files, the first
 * @file_max bytes in all are read; one that does not exist is skipped as
 * empty; a canary found in a place @out already names for it, or in two
 * texts of the same place, is named once), then the record of every `escalation` line in @out->msgs
 * whose "record" is an object (a line without one holds no record; its bytes are searched as
 * stdout's all the same), serialised as compact JSON, as "escalation record of task T". The hits
 * are appended to
 * @out->canary_hits and the bytes searched added to
 * @out->canary_bytes_searched; @out->canary_search_incomplete is set when
 * a file held more than its share of @file_max or could not be read.
 * Nothing happens when the key canary is "".
 */
void hx_client_log_search(struct hx_scenario_result *out, const struct hx_client_text *texts,
                          size_t n, size_t file_max);

/*
 * Make what @out keeps of the client safe to report: in its error, the
 * stderr tail, the protocol errors, the hello, every message's JSON
 * (names and strings), the tasks' errors, the checks' details and the
 * canary hits' places, hide (hx_canary_redact) each secret of @sc's keys
 * followed by "." and the key canary as "[key secret].[key canary]", the
 * key canary as "[key canary]", the body canary as "[body canary]", and
 * each secret of 8 characters or more as "[key secret]" (a shorter one
 * would match ordinary words); and, as those, every prefix or suffix of
 * them 8 characters long or longer wherever it appears: what the harness
 * keeps of the client is often cut (excerpts, the stderr tail, the
 * checks' quotes), and a cut secret is still a secret. Call it once the
 * checks are done: they read the client's words as printed. Nothing
 * happens when the key canary is "".
 */
void hx_client_log_scrub(struct hx_scenario_result *out, const struct fa_scenario *sc);

#endif
