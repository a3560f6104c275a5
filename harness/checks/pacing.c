/* pacing.c -- wait.pacing: the client keeps each key's pace under the scenario's RPM and TPM. */
#include "pacing.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"

#define EPS 1e-3 /* µs of float slack: an attempt exactly at capacity passes */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A token bucket on the provider's clock: @cap tokens, refilled at @rate
 * per µs, never past @cap; @level may go below 0 (an attempt over the
 * pace still reached the provider and is still debited). */
struct bucket {
	double cap;
	double rate; /* tokens per µs */
	double level;
	int64_t t_us; /* instant @level is for */
};

static void bucket_start(struct bucket *b, int cap, int period_s, int64_t t_us)
{
	b->cap = cap;
	b->rate = (double)cap / ((double)period_s * 1e6);
	b->level = cap;
	b->t_us = t_us;
}

static void bucket_refill(struct bucket *b, int64_t t_us)
{
	if (t_us <= b->t_us)
		return;
	b->level += (double)(t_us - b->t_us) * b->rate;
	if (b->level > b->cap)
		b->level = b->cap;
	b->t_us = t_us;
}

/* What one attempt found in one bucket. */
struct seen {
	const struct fa_attempt *a;
	bool tokens;   /* the token bucket (else the request bucket) */
	double left;   /* its level on arrival, before the debit */
	double need;   /* what the attempt took from it */
	double margin; /* (left - need) / rate, µs: how early it could have come */
};

/* "rpm 10 per 2 s", "tpm 500 per 60 s", "rpm 10, tpm 500 per 60 s" */
static char *pace_text(const struct fa_pacing_spec *p)
{
	if (p->rpm > 0 && p->tpm > 0)
		return fa_xasprintf("rpm %d, tpm %d per %d s", p->rpm, p->tpm, p->period_s);
	if (p->rpm > 0)
		return fa_xasprintf("rpm %d per %d s", p->rpm, p->period_s);
	return fa_xasprintf("tpm %d per %d s", p->tpm, p->period_s);
}

/* "seq 14 arrived with 0.3 of 1 request token left" or "seq 14 needed
 * 500 tokens with 120.0 left" */
static char *seen_text(const struct seen *s)
{
	if (s->tokens)
		return fa_xasprintf("seq %llu needed %.0f token%s with %.1f left",
		                    (unsigned long long)s->a->seq, s->need, s->need == 1 ? "" : "s",
		                    s->left);
	return fa_xasprintf("seq %llu arrived with %.1f of 1 request token left",
	                    (unsigned long long)s->a->seq, s->left);
}

/* Replay the @n attempts of key @key (arrival order) through the
 * buckets of @p; the first violation goes to *@bad (when it is earlier
 * than the one there), the closest call to *@close. Returns the
 * violations counted. */
static size_t replay(const struct fa_pacing_spec *p, const struct fa_attempt **att, size_t n,
                     const char *key, int64_t tol_us, struct seen *bad, struct seen *close)
{
	struct bucket req, tok;
	size_t over = 0;
	bool started = false;

	for (size_t i = 0; i < n; i++) {
		const struct fa_attempt *a = att[i];
		struct seen s[2];
		size_t k = 0;
		bool late = false;

		if (!same(a->key, key))
			continue;
		if (!started) {
			bucket_start(&req, p->rpm, p->period_s, a->t_arrival_us);
			bucket_start(&tok, p->tpm, p->period_s, a->t_arrival_us);
			started = true;
		}
		if (p->rpm > 0) {
			bucket_refill(&req, a->t_arrival_us);
			s[k++] = (struct seen){ .a = a,
				                .left = req.level,
				                .need = 1,
				                .margin = (req.level - 1) / req.rate };
			req.level -= 1;
		}
		if (p->tpm > 0) {
			double need = a->tokens > 0 ? a->tokens : 0;

			bucket_refill(&tok, a->t_arrival_us);
			s[k++] = (struct seen){ .a = a,
				                .tokens = true,
				                .left = tok.level,
				                .need = need,
				                .margin = (tok.level - need) / tok.rate };
			tok.level -= need;
		}
		for (size_t j = 0; j < k; j++) {
			if (s[j].margin + (double)tol_us < -EPS) {
				if (!late &&
				    (bad->a == NULL || a->t_arrival_us < bad->a->t_arrival_us ||
				     (a->t_arrival_us == bad->a->t_arrival_us &&
				      a->seq < bad->a->seq)))
					*bad = s[j];
				late = true;
			} else if (close->a == NULL || s[j].margin < close->margin) {
				*close = s[j];
			}
		}
		over += late;
	}
	return over;
}

void hx_pacing_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	const struct fa_pacing_spec *p = in->sc != NULL ? &in->sc->harness.pacing : NULL;
	const struct fa_attempt **att;
	const char **keys;
	struct seen bad = { 0 }, close = { 0 };
	struct hx_evidence ev = { 0 };
	size_t n = 0, n_keys = 0, over = 0, limited = 0, costed = 0;
	int64_t tol_us;
	char *pace, *what;

	if (p == NULL || !p->given) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the scenario publishes no pacing ($.harness.pacing)");
		return;
	}
	tol_us = hx_check_param(c, "tolerance_ms")->i * 1000;
	/* attributed attempts with a key, arrival order: the unattributed
	 * are attempts.bounded's business, an unknown key has no pace */
	att = fa_xcalloc(c->n + 1, sizeof(*att));
	for (size_t i = 0; i < c->n; i++) {
		const struct fa_attempt *a = c->att[i];

		if (a->key == NULL)
			continue;
		att[n++] = a;
		costed += a->tokens > 0;
		if (a->quota != NULL && strncmp(a->quota, "limited", 7) == 0)
			limited++;
	}
	/* the keys in journal order: on a tie the closest call named is
	 * the first key's */
	keys = fa_xcalloc(in->n_attempts + 1, sizeof(*keys));
	for (size_t i = 0; i < in->n_attempts; i++) {
		const struct fa_attempt *a = &in->attempts[i];
		size_t k = 0;

		if (a->key == NULL || !hx_check_attributed(in, a))
			continue;
		while (k < n_keys && !same(keys[k], a->key))
			k++;
		if (k == n_keys)
			keys[n_keys++] = a->key;
	}
	for (size_t k = 0; k < n_keys; k++)
		over += replay(p, att, n, keys[k], tol_us, &bad, &close);

	pace = pace_text(p);
	if (n == 0) {
		r->verdict = HX_NA;
		r->detail =
		        fa_xasprintf("no attempt named a key of the scenario to pace (%s)", pace);
	} else if (p->rpm <= 0 && costed == 0) {
		/* a token bucket only, and nothing that took from it: no
		 * attempt could have broken the pace, so none kept it */
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("no attempt of a key had a token cost to judge (%s; %zu "
		                         "attempt%s, none a chat completion or Messages request)",
		                         pace, n, n == 1 ? "" : "s");
	} else if (over > 0) {
		what = seen_text(&bad);
		r->verdict = HX_FAIL;
		r->detail = fa_xasprintf("key %s: %s (%s, tolerance %lld ms)%s; %zu quota 429%s",
		                         bad.a->key, what, pace, (long long)(tol_us / 1000),
		                         over > 1 ? "; more attempts over the pace followed" : "",
		                         limited, limited == 1 ? "" : "s");
		hx_evidence_add(&ev, bad.a->seq);
		free(what);
	} else {
		what = seen_text(&close);
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf("%zu attempt%s of %zu key%s kept the pace (%s, tolerance "
		                         "%lld ms); closest: key %s, %s; %zu quota 429%s",
		                         n, n == 1 ? "" : "s", n_keys, n_keys == 1 ? "" : "s", pace,
		                         (long long)(tol_us / 1000), close.a->key, what, limited,
		                         limited == 1 ? "" : "s");
		hx_evidence_add(&ev, close.a->seq);
		free(what);
	}
	hx_evidence_give(&ev, r);
	hx_evidence_release(&ev);
	free(pace);
	free(att);
	free(keys);
}
