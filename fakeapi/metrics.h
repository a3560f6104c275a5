/* metrics.h -- the provider's counters and gauges, in the Prometheus text format. */
#ifndef FA_METRICS_H
#define FA_METRICS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The families of GET /_fakeapi/metrics, in the order they are written
 * (docs/internals.md, "Metrics", says what each counts). A series is one
 * family with one value per label of the family, in the order given here.
 */
enum fa_metric {
	FA_METRIC_ATTEMPTS = 0, /* counter fakeapi_attempts_total{route,status,fault} */
	FA_METRIC_STREAMS,      /* counter fakeapi_streams_total{end} */
	FA_METRIC_REFUSALS,     /* counter fakeapi_rate_limit_refusals_total{scope,limit,status} */
	FA_METRIC_TOKENS_RESERVED, /* counter fakeapi_tokens_reserved_total */
	FA_METRIC_TOKENS_REFUNDED, /* counter fakeapi_tokens_refunded_total */
	FA_METRIC_PAUSES,          /* gauge fakeapi_pauses_in_force */
	FA_METRIC_IN_FLIGHT,       /* gauge fakeapi_requests_in_flight{scope} */
	FA_METRIC_JOURNAL_ENTRIES, /* gauge fakeapi_journal_entries */
	FA_METRIC_JOURNAL_BYTES,   /* counter fakeapi_journal_bytes_total */
	FA_METRIC_COUNT
};

/* Most labels a family has. */
#define FA_METRICS_MAX_LABELS 3

/* The Content-Type of fa_metrics_text(): the text exposition format 0.0.4. */
#define FA_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * A table of series: a hash table keyed by family and label values, one
 * mutex. A series is created at its first use (the label values are
 * copied then, once) and never removed; the families without labels have
 * their one series, at 0, from the start. Every call is thread-safe.
 */
struct fa_metrics;

struct fa_metrics *fa_metrics_new(void);

/* NULL accepted. */
void fa_metrics_free(struct fa_metrics *m);

/*
 * Add @n to the series of @metric with label values @labels (as many as
 * the family has labels, any UTF-8, borrowed; NULL for a family without
 * labels; a NULL value is ""). No allocation once the series exists.
 */
void fa_metrics_add(struct fa_metrics *m, enum fa_metric metric, const char *const *labels,
                    uint64_t n);

/* Set that series to @value: a gauge, or a counter whose owner keeps the
 * count itself (the journal's bytes), read at scrape time. */
void fa_metrics_set(struct fa_metrics *m, enum fa_metric metric, const char *const *labels,
                    uint64_t value);

/* The value of that series; 0 when it does not exist. */
uint64_t fa_metrics_get(struct fa_metrics *m, enum fa_metric metric, const char *const *labels);

/*
 * Every family in the Prometheus text exposition format 0.0.4: "# HELP"
 * and "# TYPE" lines, then its series sorted by label values, each line
 * ending in "\n"; label values escaped as the format says (backslash,
 * double quote, line feed). A string the caller frees; its length in
 * *@len when @len is not NULL.
 */
char *fa_metrics_text(struct fa_metrics *m, size_t *len);

#endif
