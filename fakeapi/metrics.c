/* metrics.c -- the provider's counters and gauges, in the Prometheus text format. */
#include "metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* One family: what its "# HELP" and "# TYPE" lines say, and its labels. */
struct family {
	const char *name;                          /* the metric name, counters with _total */
	const char *type;                          /* "counter" or "gauge" */
	const char *help;                          /* one line, no trailing period */
	size_t n_labels;                           /* 0..FA_METRICS_MAX_LABELS */
	const char *labels[FA_METRICS_MAX_LABELS]; /* label names, in the series' order */
};

/* Indexed by enum fa_metric; docs/internals.md ("Metrics") lists the same. */
static const struct family families[FA_METRIC_COUNT] = {
	[FA_METRIC_ATTEMPTS] = {
		.name = "fakeapi_attempts_total",
		.type = "counter",
		.help = "Attempts journaled, by the route that answered (\"\" for none), the status "
		        "sent (0 for none) and the fault done",
		.n_labels = 3,
		.labels = { "route", "status", "fault" },
	},
	[FA_METRIC_STREAMS] = {
		.name = "fakeapi_streams_total",
		.type = "counter",
		.help = "Streamed answers (text/event-stream) by how they ended: done, error_frame, "
		        "cut, stall, client_gone",
		.n_labels = 1,
		.labels = { "end" },
	},
	[FA_METRIC_REFUSALS] = {
		.name = "fakeapi_rate_limit_refusals_total",
		.type = "counter",
		.help = "Requests the quota model refused, by the scope of the bucket (per-key, "
		        "per-user), the limit (requests, tokens, daily-requests, daily-tokens, "
		        "in-flight) and the status answered (429; 400 for a cost over a whole bucket)",
		.n_labels = 3,
		.labels = { "scope", "limit", "status" },
	},
	[FA_METRIC_TOKENS_RESERVED] = {
		.name = "fakeapi_tokens_reserved_total",
		.type = "counter",
		.help = "Tokens the quota model reserved for the requests it admitted (estimated "
		        "prompt tokens plus max_tokens)",
	},
	[FA_METRIC_TOKENS_REFUNDED] = {
		.name = "fakeapi_tokens_refunded_total",
		.type = "counter",
		.help = "Reserved tokens the quota model got back from answers that spend no quota "
		        "(429, 503, a stream's error frame)",
	},
	[FA_METRIC_PAUSES] = {
		.name = "fakeapi_pauses_in_force",
		.type = "gauge",
		.help = "Scopes whose announced pause (Retry-After) has not ended yet",
	},
	[FA_METRIC_IN_FLIGHT] = {
		.name = "fakeapi_requests_in_flight",
		.type = "gauge",
		.help = "Requests in flight now, by scope",
		.n_labels = 1,
		.labels = { "scope" },
	},
	[FA_METRIC_JOURNAL_ENTRIES] = {
		.name = "fakeapi_journal_entries",
		.type = "gauge",
		.help = "Journal entries kept in memory (an admin reset empties them)",
	},
	[FA_METRIC_JOURNAL_BYTES] = {
		.name = "fakeapi_journal_bytes_total",
		.type = "counter",
		.help = "Bytes of the journal lines appended, newlines included",
	},
};

/* One series: a family and its label values. Never moves once made. */
struct series {
	enum fa_metric metric; /* its family */
	uint32_t hash;         /* of metric and key (hash_of) */
	uint64_t value;        /* guarded by the table's lock */
	size_t key_len;        /* bytes of key */
	char key[];            /* each label value followed by a NUL, in label order */
};

struct fa_metrics {
	pthread_mutex_t lock; /* guards everything below and every series' value */
	struct series **slot; /* owned, cap entries: open addressing, linear probing; NULL = free */
	size_t cap;           /* a power of two, at least twice n */
	size_t n;             /* series made */
};

#define FIRST_CAP 64

/* The label values of one call, measured once. */
struct labels {
	const char *v[FA_METRICS_MAX_LABELS];
	size_t len[FA_METRICS_MAX_LABELS];
	size_t n;
};

static void measure(enum fa_metric metric, const char *const *labels, struct labels *out)
{
	out->n = families[metric].n_labels;
	for (size_t i = 0; i < out->n; i++) {
		out->v[i] = labels != NULL && labels[i] != NULL ? labels[i] : "";
		out->len[i] = strlen(out->v[i]);
	}
}

/* FNV-1a over the family and each value with its NUL, as the key is laid out. */
static uint32_t hash_of(enum fa_metric metric, const struct labels *l)
{
	uint32_t h = 2166136261u;

	h = (h ^ (uint32_t)metric) * 16777619u;
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->len[i]; k++)
			h = (h ^ (unsigned char)l->v[i][k]) * 16777619u;
		h *= 16777619u; /* the NUL: h ^ 0 */
	}
	return h;
}

static bool same(const struct series *s, enum fa_metric metric, uint32_t hash,
                 const struct labels *l)
{
	size_t at = 0;

	if (s->metric != metric || s->hash != hash)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		if (at + l->len[i] >= s->key_len || memcmp(s->key + at, l->v[i], l->len[i]) != 0 ||
		    s->key[at + l->len[i]] != '\0')
			return false;
		at += l->len[i] + 1;
	}
	return at == s->key_len;
}

/* The slot of the series, or the free slot where it would go. */
static struct series **probe(struct series **slot, size_t cap, enum fa_metric metric, uint32_t hash,
                             const struct labels *l)
{
	size_t i = hash & (cap - 1);

	while (slot[i] != NULL && !same(slot[i], metric, hash, l))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static void grow(struct fa_metrics *m)
{
	size_t cap = m->cap * 2;
	struct series **slot = fa_xcalloc(cap, sizeof(*slot));

	for (size_t i = 0; i < m->cap; i++) {
		size_t k;

		if (m->slot[i] == NULL)
			continue;
		k = m->slot[i]->hash & (cap - 1);
		while (slot[k] != NULL)
			k = (k + 1) & (cap - 1);
		slot[k] = m->slot[i];
	}
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
}

/* The series of @metric and @l, made when new. Caller holds m->lock. */
static struct series *get(struct fa_metrics *m, enum fa_metric metric, const struct labels *l)
{
	uint32_t hash = hash_of(metric, l);
	struct series **at = probe(m->slot, m->cap, metric, hash, l);
	struct series *s;
	size_t key_len = 0;

	if (*at != NULL)
		return *at;
	for (size_t i = 0; i < l->n; i++)
		key_len += l->len[i] + 1;
	s = fa_xcalloc(1, sizeof(*s) + key_len + 1);
	s->metric = metric;
	s->hash = hash;
	s->key_len = key_len;
	key_len = 0;
	for (size_t i = 0; i < l->n; i++) {
		memcpy(s->key + key_len, l->v[i], l->len[i]);
		key_len += l->len[i] + 1; /* the NUL is calloc's */
	}
	*at = s;
	if (++m->n * 2 > m->cap)
		grow(m);
	return s;
}

struct fa_metrics *fa_metrics_new(void)
{
	struct fa_metrics *m = fa_xcalloc(1, sizeof(*m));
	struct labels none = { .n = 0 };

	pthread_mutex_init(&m->lock, NULL);
	m->cap = FIRST_CAP;
	m->slot = fa_xcalloc(m->cap, sizeof(*m->slot));
	/* a family without labels reads 0 before its first count, not nothing */
	for (int f = 0; f < FA_METRIC_COUNT; f++)
		if (families[f].n_labels == 0)
			get(m, (enum fa_metric)f, &none);
	return m;
}

void fa_metrics_free(struct fa_metrics *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i]);
	free(m->slot);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void fa_metrics_add(struct fa_metrics *m, enum fa_metric metric, const char *const *labels,
                    uint64_t n)
{
	struct labels l;

	measure(metric, labels, &l);
	pthread_mutex_lock(&m->lock);
	get(m, metric, &l)->value += n;
	pthread_mutex_unlock(&m->lock);
}

void fa_metrics_set(struct fa_metrics *m, enum fa_metric metric, const char *const *labels,
                    uint64_t value)
{
	struct labels l;

	measure(metric, labels, &l);
	pthread_mutex_lock(&m->lock);
	get(m, metric, &l)->value = value;
	pthread_mutex_unlock(&m->lock);
}

uint64_t fa_metrics_get(struct fa_metrics *m, enum fa_metric metric, const char *const *labels)
{
	struct labels l;
	struct series *s;
	uint64_t v;

	measure(metric, labels, &l);
	pthread_mutex_lock(&m->lock);
	s = *probe(m->slot, m->cap, metric, hash_of(metric, &l), &l);
	v = s != NULL ? s->value : 0;
	pthread_mutex_unlock(&m->lock);
	return v;
}

/* A series and its value as read under the lock. */
struct reading {
	const struct series *s; /* borrowed: series never move nor change their key */
	uint64_t value;
};

/* By family, then label values in order (byte order). */
static int cmp_reading(const void *a, const void *b)
{
	const struct series *x = ((const struct reading *)a)->s;
	const struct series *y = ((const struct reading *)b)->s;
	int c;

	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	c = memcmp(x->key, y->key, x->key_len < y->key_len ? x->key_len : y->key_len);
	if (c != 0)
		return c;
	return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

/* @n bytes of @s as the format escapes them: a backslash and a line feed
 * always, a double quote in a label value (@quote) only. */
static void put_escaped(FILE *out, const char *s, size_t n, bool quote)
{
	size_t from = 0;

	for (size_t i = 0; i < n; i++) {
		const char *esc = s[i] == '\\'           ? "\\\\"
		                  : s[i] == '\n'         ? "\\n"
		                  : s[i] == '"' && quote ? "\\\""
		                                         : NULL;

		if (esc == NULL)
			continue;
		fwrite(s + from, 1, i - from, out);
		fputs(esc, out);
		from = i + 1;
	}
	fwrite(s + from, 1, n - from, out);
}

static void put_family(FILE *out, const struct family *f)
{
	fprintf(out, "# HELP %s ", f->name);
	put_escaped(out, f->help, strlen(f->help), false);
	fprintf(out, "\n# TYPE %s %s\n", f->name, f->type);
}

static void put_series(FILE *out, const struct reading *r)
{
	const struct family *f = &families[r->s->metric];
	const char *v = r->s->key;

	fputs(f->name, out);
	for (size_t i = 0; i < f->n_labels; i++) {
		size_t n = strlen(v);

		fprintf(out, "%s%s=\"", i == 0 ? "{" : ",", f->labels[i]);
		put_escaped(out, v, n, true);
		fputc('"', out);
		v += n + 1;
	}
	fprintf(out, "%s %" PRIu64 "\n", f->n_labels > 0 ? "}" : "", r->value);
}

char *fa_metrics_text(struct fa_metrics *m, size_t *len)
{
	char *text = NULL;
	size_t text_len = 0, n = 0, k = 0;
	FILE *out = fa_xcheck(open_memstream(&text, &text_len), "metrics text");
	struct reading *r;

	/* read the values under the lock, write the text without it: a
	 * scrape never holds up the requests that count */
	pthread_mutex_lock(&m->lock);
	r = fa_xcalloc(m->n, sizeof(*r));
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i] != NULL)
			r[n++] = (struct reading){ .s = m->slot[i], .value = m->slot[i]->value };
	pthread_mutex_unlock(&m->lock);
	qsort(r, n, sizeof(*r), cmp_reading);
	for (int f = 0; f < FA_METRIC_COUNT; f++) {
		put_family(out, &families[f]);
		for (; k < n && r[k].s->metric == (enum fa_metric)f; k++)
			put_series(out, &r[k]);
	}
	free(r);
	/* open_memstream fails only for want of memory, as fa_x* would */
	if (fclose(out) != 0)
		fa_xcheck(NULL, "metrics text");
	if (len != NULL)
		*len = text_len;
	return text;
}
