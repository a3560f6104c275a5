/* interruption.c -- stream.no_silent_retry: no retry after the first streamed token without a
 * report. */
#include "interruption.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"

#define REPORT "stream_interrupted"

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static double ms(int64_t us)
{
	return (double)us / 1000.0;
}

/* A streamed answer that broke after its first token reached the wire. */
static bool interrupted(const struct fa_attempt *a)
{
	return a->stream_end != NULL && strcmp(a->stream_end, "done") != 0 && a->stream_chunks >= 1;
}

/* When @a's stream broke: the connection was done with it, else its
 * answer went out, else its arrival. */
static int64_t broke_at(const struct fa_attempt *a)
{
	return a->t_done_us >= 0       ? a->t_done_us
	       : a->t_response_us >= 0 ? a->t_response_us
	                               : a->t_arrival_us;
}

/*
 * The first stream_interrupted line of @task the harness read after
 * @from_us (the interrupted attempt's arrival: no line before it can be
 * about it) and, when @by_us >= 0, no later than @by_us; NULL when none.
 */
static const struct hx_client_msg *report_of(const struct hx_check_input *in, const char *task,
                                             int64_t from_us, int64_t by_us)
{
	for (size_t i = 0; i < in->n_msgs; i++) {
		const struct hx_client_msg *m = &in->msgs[i];

		if (same(m->type, REPORT) && same(m->task, task) && m->t_us > from_us &&
		    (by_us < 0 || m->t_us <= by_us))
			return m;
	}
	return NULL;
}

/* "3 chunks (error_frame)" */
static char *break_text(const struct fa_attempt *a)
{
	return fa_xasprintf("%d chunk%s (%s)", a->stream_chunks, a->stream_chunks == 1 ? "" : "s",
	                    a->stream_end);
}

void hx_interruption_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	const struct fa_attempt *const *att = c->att;
	const struct fa_attempt *bad_i = NULL, *bad_r = NULL, *ok_i = NULL, *ok_r = NULL;
	const struct fa_attempt *first_i = NULL;
	const struct hx_client_msg *late = NULL, *ok_m = NULL;
	struct hx_evidence bad = { 0 }, good = { 0 };
	size_t n = c->n, streams = 0, broken = 0, retries = 0, silent = 0;
	char *brk;

	for (size_t k = 0; k < n; k++) {
		const struct fa_attempt *a = att[k], *i_at = NULL;
		const struct hx_client_msg *m;

		streams += a->stream_end != NULL;
		if (interrupted(a)) {
			broken++;
			hx_evidence_add(&good, a->seq);
			if (first_i == NULL)
				first_i = a;
		}
		/* the task's latest interruption before this attempt */
		for (size_t j = k; j-- > 0 && i_at == NULL;)
			if (same(att[j]->task, a->task) && interrupted(att[j]))
				i_at = att[j];
		if (i_at == NULL)
			continue;
		retries++;
		m = in->mode == HX_MODE_STDIO
		            ? report_of(in, a->task, i_at->t_arrival_us,
		                        a->t_arrival_us + HX_INTERRUPTION_READ_LAG_US)
		            : NULL;
		if (m != NULL) {
			hx_evidence_add(&good, a->seq);
			if (ok_r == NULL) {
				ok_i = i_at;
				ok_r = a;
				ok_m = m;
			}
			continue;
		}
		silent++;
		hx_evidence_add(&bad, i_at->seq);
		hx_evidence_add(&bad, a->seq);
		if (bad_r == NULL) {
			bad_i = i_at;
			bad_r = a;
			if (in->mode == HX_MODE_STDIO)
				late = report_of(in, a->task, i_at->t_arrival_us, -1);
		}
	}

	if (broken == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("no streamed answer broke after its first token (%zu "
		                         "stream%s, none cut past a chunk)",
		                         streams, streams == 1 ? "" : "s");
	} else if (silent > 0) {
		char *why;

		brk = break_text(bad_i);
		if (in->mode != HX_MODE_STDIO)
			why = fa_xstrdup(" (exec mode: a client cannot report, so a retry there "
			                 "is always silent)");
		else if (late != NULL)
			why = fa_xasprintf(" first (its report was read %.1f ms after the retry "
			                   "arrived)",
			                   ms(late->t_us - bad_r->t_arrival_us));
		else
			why = fa_xstrdup("");
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf(
		        "task %s retried %.1f ms after its stream broke after %s "
		        "without reporting " REPORT "%s: seq %llu, then seq %llu%s",
		        bad_r->task, ms(bad_r->t_arrival_us - broke_at(bad_i)), brk, why,
		        (unsigned long long)bad_i->seq, (unsigned long long)bad_r->seq,
		        silent > 1 ? "; more silent retries followed" : "");
		free(why);
		free(brk);
		hx_evidence_give(&bad, r);
	} else if (retries > 0) {
		brk = break_text(ok_i);
		r->verdict = HX_PASS;
		r->detail =
		        fa_xasprintf("task %s reported " REPORT " before retrying: its stream "
		                     "broke after %s at seq %llu, the report was read at +%.1f "
		                     "ms, the retry seq %llu arrived at +%.1f ms%s",
		                     ok_r->task, brk, (unsigned long long)ok_i->seq, ms(ok_m->t_us),
		                     (unsigned long long)ok_r->seq, ms(ok_r->t_arrival_us),
		                     retries > 1 ? "; every other retry was reported too" : "");
		free(brk);
		hx_evidence_give(&good, r);
	} else {
		brk = break_text(first_i);
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%stask %s's stream broke after %s at seq %llu and the "
		                         "task was not retried%s",
		                         broken > 1 ? "first: " : "", first_i->task, brk,
		                         (unsigned long long)first_i->seq,
		                         broken > 1 ? "; no other broken stream was either" : "");
		free(brk);
		hx_evidence_give(&good, r);
	}
	hx_evidence_release(&bad);
	hx_evidence_release(&good);
}
