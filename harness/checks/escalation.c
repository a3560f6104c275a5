/* escalation.c -- escalation records: their required fields, and escalation.sanitised. */
#include "escalation.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "evidence.h"
#include "schema.h"

/* A string value quoted in a message only up to this many bytes: longer
 * ones are client text that may hold a secret or a canary, so a message
 * gives their length instead. */
#define QUOTE_MAX 24
/* Canary hits named one by one in a detail; the rest are counted. */
#define HITS_SHOWN 3

/* ---- the record's shape (docs/escalation.schema.json) ------------------ */

/* What a member must be. */
enum kind {
	K_TEXT,    /* string of min..max characters (code points) */
	K_PATTERN, /* string the rule's own test accepts */
	K_INT,     /* integer lo..hi */
	K_NUMBER,  /* number >= lo */
	K_ENUM,    /* one of the rule's strings */
	K_STRMAP,  /* object whose members are strings */
	K_OPTIONS, /* non-empty array of unique strings from the rule's list */
	K_OBJECT,  /* object checked by the rule's own rules */
	K_ARRAY,   /* array whose items are objects checked by the rule's rules */
};

/* One member of an object and what it must be. */
struct rule {
	const char *name;          /* member name */
	enum kind kind;            /* what its value must be */
	bool required;             /* in the schema's "required" list */
	bool nullable;             /* null is allowed too */
	double lo, hi;             /* K_TEXT: length; K_INT: range; K_NUMBER: lo */
	bool (*ok)(const char *s); /* K_PATTERN: the test */
	const char *what;          /* K_PATTERN: what the test wants, for messages */
	const char *const *one_of; /* K_ENUM, K_OPTIONS: the values, NULL-terminated */
	const struct rule *sub;    /* K_OBJECT, K_ARRAY: the item's rules */
	size_t n_sub;
};

#define N(a)    (sizeof(a) / sizeof((a)[0]))
#define ANY_LEN 1e9                /* K_TEXT without an upper bound */
#define ANY_INT 9007199254740992.0 /* K_INT without an upper bound (2^53) */

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ^[a-z][a-z0-9_]{0,63}$ */
static bool ok_reason(const char *s)
{
	size_t n = 0;

	if (!is_lower(s[0]))
		return false;
	for (n = 1; s[n] != '\0'; n++)
		if (!is_lower(s[n]) && !is_digit(s[n]) && s[n] != '_')
			return false;
	return n <= 64;
}

/* ^/ */
static bool ok_endpoint(const char *s)
{
	return s[0] == '/';
}

/* ^[A-Z]+$ */
static bool ok_method(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (*s < 'A' || *s > 'Z')
			return false;
	return true;
}

/* ^sha256:[0-9a-f]{64}$ */
static bool ok_fingerprint(const char *s)
{
	size_t n = 0;

	if (strncmp(s, "sha256:", 7) != 0)
		return false;
	for (s += 7; s[n] != '\0'; n++)
		if (!is_digit(s[n]) && !(s[n] >= 'a' && s[n] <= 'f'))
			return false;
	return n == 64;
}

static const char *const sents[] = { "yes", "no", "unknown", NULL };
static const char *const options[] = {
	"wait",        "query_status", "retry_same_key", "raise_quota",
	"change_plan", "cancel",       "submit_new",     NULL,
};

/* $.record.attempts[i] */
static const struct rule attempt_rules[] = {
	{ .name = "attempt", .kind = K_INT, .required = true, .lo = 1, .hi = ANY_INT },
	{ .name = "at", .kind = K_TEXT, .required = true, .lo = 20, .hi = ANY_LEN },
	{ .name = "status", .kind = K_INT, .required = true, .lo = 0, .hi = 599 },
	{ .name = "retry_after",
	  .kind = K_TEXT,
	  .required = true,
	  .nullable = true,
	  .lo = 0,
	  .hi = ANY_LEN },
	{ .name = "ratelimit", .kind = K_STRMAP, .required = true, .nullable = true },
};

/* $.record.budget */
static const struct rule budget_rules[] = {
	{ .name = "max_attempts",
	  .kind = K_INT,
	  .required = true,
	  .nullable = true,
	  .lo = 1,
	  .hi = ANY_INT },
	{ .name = "max_wait_s", .kind = K_NUMBER, .required = true, .nullable = true, .lo = 0 },
	{ .name = "attempts_used", .kind = K_INT, .required = true, .lo = 0, .hi = ANY_INT },
	{ .name = "waited_ms", .kind = K_INT, .required = true, .lo = 0, .hi = ANY_INT },
};

/* $.record, in the order of the schema's "required" list, then the
 * optional members */
static const struct rule record_rules[] = {
	{ .name = "reason",
	  .kind = K_PATTERN,
	  .required = true,
	  .ok = ok_reason,
	  .what = "a string matching ^[a-z][a-z0-9_]{0,63}$" },
	{ .name = "goal", .kind = K_TEXT, .required = true, .lo = 1, .hi = 500 },
	{ .name = "action", .kind = K_TEXT, .required = true, .lo = 1, .hi = 500 },
	{ .name = "provider", .kind = K_TEXT, .required = true, .lo = 1, .hi = ANY_LEN },
	{ .name = "endpoint",
	  .kind = K_PATTERN,
	  .required = true,
	  .ok = ok_endpoint,
	  .what = "a string starting with \"/\"" },
	{ .name = "method",
	  .kind = K_PATTERN,
	  .required = true,
	  .ok = ok_method,
	  .what = "a string of upper-case letters" },
	{ .name = "scope", .kind = K_TEXT, .required = true, .lo = 1, .hi = ANY_LEN },
	{ .name = "fingerprint",
	  .kind = K_PATTERN,
	  .required = true,
	  .ok = ok_fingerprint,
	  .what = "\"sha256:\" and 64 lower-case hex digits" },
	{ .name = "attempts",
	  .kind = K_ARRAY,
	  .required = true,
	  .sub = attempt_rules,
	  .n_sub = N(attempt_rules) },
	{ .name = "budget",
	  .kind = K_OBJECT,
	  .required = true,
	  .sub = budget_rules,
	  .n_sub = N(budget_rules) },
	{ .name = "idempotency_key",
	  .kind = K_TEXT,
	  .required = true,
	  .nullable = true,
	  .lo = 0,
	  .hi = ANY_LEN },
	{ .name = "provider_operation_id",
	  .kind = K_TEXT,
	  .required = true,
	  .nullable = true,
	  .lo = 0,
	  .hi = ANY_LEN },
	{ .name = "sent", .kind = K_ENUM, .required = true, .one_of = sents },
	{ .name = "options", .kind = K_OPTIONS, .required = true, .one_of = options },
	{ .name = "client_reference", .kind = K_TEXT, .nullable = true, .lo = 0, .hi = ANY_LEN },
	{ .name = "wait_requested_s", .kind = K_NUMBER, .nullable = true, .lo = 0 },
};

static const struct rule *part_rules(enum hx_escalation_part part, size_t *n)
{
	switch (part) {
	case HX_ESCALATION_RECORD: *n = N(record_rules); return record_rules;
	case HX_ESCALATION_ATTEMPT: *n = N(attempt_rules); return attempt_rules;
	case HX_ESCALATION_BUDGET: *n = N(budget_rules); return budget_rules;
	}
	*n = 0;
	return NULL;
}

size_t hx_escalation_required(enum hx_escalation_part part, const char **names, size_t cap)
{
	size_t n, k = 0;
	const struct rule *rules = part_rules(part, &n);

	for (size_t i = 0; i < n; i++) {
		if (!rules[i].required)
			continue;
		if (k < cap)
			names[k] = rules[i].name;
		k++;
	}
	return k;
}

/* ---- checking a record -------------------------------------------------- */

/* Characters (code points) of the UTF-8 string @s. */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* How @v is named after "got": as fa_schema_describe(), but a long
 * string only by its length (see QUOTE_MAX). */
static void describe(const cJSON *v, char *buf, size_t len)
{
	if (cJSON_IsString(v) && strlen(v->valuestring) > QUOTE_MAX)
		snprintf(buf, len, "a string of %zu characters", chars(v->valuestring));
	else
		fa_schema_describe(v, buf, len);
}

/* "PATH: expected WHAT, got ..." as a new string. */
static char *expected(const char *path, const cJSON *got, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static char *expected(const char *path, const cJSON *got, const char *fmt, ...)
{
	char what[256], desc[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	describe(got, desc, sizeof(desc));
	return fa_xasprintf("%s: expected %s, got %s", path, what, desc);
}

/* "a, b or c": the values of @list, written into @buf (@len bytes). */
static const char *join(const char *const *list, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; list[i] != NULL && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s",
		                      i == 0                ? ""
		                      : list[i + 1] == NULL ? " or "
		                                            : ", ",
		                      list[i]);
	return buf;
}

static const char *or_null(const struct rule *r)
{
	return r->nullable ? " or null" : "";
}

static char *check_rules(const char *path, const cJSON *obj, const struct rule *rules, size_t n);

/* The fault of value @v of member rule @r at @path, or NULL. */
static char *check_value(const char *path, const cJSON *v, const struct rule *r)
{
	char *sub, *fault = NULL, vals[160];
	size_t i = 0;

	if (r->nullable && cJSON_IsNull(v))
		return NULL;
	switch (r->kind) {
	case K_TEXT:
		if (!cJSON_IsString(v) || chars(v->valuestring) < r->lo ||
		    chars(v->valuestring) > r->hi) {
			if (r->hi >= ANY_LEN && r->lo <= 0)
				return expected(path, v, "string%s", or_null(r));
			if (r->hi >= ANY_LEN)
				return expected(path, v, "string of at least %.0f characters%s",
				                r->lo, or_null(r));
			return expected(path, v, "string of %.0f..%.0f characters%s", r->lo, r->hi,
			                or_null(r));
		}
		return NULL;
	case K_PATTERN:
		if (!cJSON_IsString(v) || !r->ok(v->valuestring))
			return expected(path, v, "%s%s", r->what, or_null(r));
		return NULL;
	case K_INT:
		if (!fa_schema_is_integer(v) || v->valuedouble < r->lo || v->valuedouble > r->hi) {
			if (r->hi >= ANY_INT)
				return expected(path, v, "integer >= %.0f%s", r->lo, or_null(r));
			return expected(path, v, "integer %.0f..%.0f%s", r->lo, r->hi, or_null(r));
		}
		return NULL;
	case K_NUMBER:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < r->lo)
			return expected(path, v, "number >= %.0f%s", r->lo, or_null(r));
		return NULL;
	case K_ENUM:
		for (i = 0; cJSON_IsString(v) && r->one_of[i] != NULL; i++)
			if (strcmp(v->valuestring, r->one_of[i]) == 0)
				return NULL;
		return expected(path, v, "one of %s", join(r->one_of, vals, sizeof(vals)));
	case K_STRMAP:
		if (!cJSON_IsObject(v))
			return expected(path, v, "object%s", or_null(r));
		for (const cJSON *m = v->child; m != NULL; m = m->next) {
			if (cJSON_IsString(m))
				continue;
			sub = fa_xasprintf("%s[%s]", path, fa_schema_quote(m->string).s);
			fault = expected(sub, m, "string");
			free(sub);
			return fault;
		}
		return NULL;
	case K_OPTIONS:
		if (!cJSON_IsArray(v) || v->child == NULL)
			return expected(path, v, "non-empty array of options");
		for (const cJSON *o = v->child; o != NULL && fault == NULL; o = o->next, i++) {
			const cJSON *p;
			size_t k = 0;

			while (cJSON_IsString(o) && r->one_of[k] != NULL &&
			       strcmp(o->valuestring, r->one_of[k]) != 0)
				k++;
			sub = fa_xasprintf("%s[%zu]", path, i);
			if (!cJSON_IsString(o) || r->one_of[k] == NULL)
				fault = expected(sub, o, "one of %s",
				                 join(r->one_of, vals, sizeof(vals)));
			for (p = v->child; fault == NULL && p != o; p = p->next)
				if (strcmp(p->valuestring, o->valuestring) == 0)
					fault = fa_xasprintf("%s: \"%s\" listed twice", sub,
					                     o->valuestring);
			free(sub);
		}
		return fault;
	case K_OBJECT:
		if (!cJSON_IsObject(v))
			return expected(path, v, "object%s", or_null(r));
		return check_rules(path, v, r->sub, r->n_sub);
	case K_ARRAY:
		if (!cJSON_IsArray(v))
			return expected(path, v, "array%s", or_null(r));
		for (const cJSON *it = v->child; it != NULL && fault == NULL; it = it->next, i++) {
			sub = fa_xasprintf("%s[%zu]", path, i);
			fault = cJSON_IsObject(it) ? check_rules(sub, it, r->sub, r->n_sub)
			                           : expected(sub, it, "object");
			free(sub);
		}
		return fault;
	}
	return NULL;
}

/* The first fault of object @obj at @path against @rules, or NULL. */
static char *check_rules(const char *path, const cJSON *obj, const struct rule *rules, size_t n)
{
	char *fault = NULL, *sub;

	for (size_t i = 0; i < n && fault == NULL; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, rules[i].name);

		if (v == NULL) {
			if (rules[i].required)
				fault = fa_xasprintf("%s: missing member \"%s\"", path,
				                     rules[i].name);
			continue;
		}
		sub = fa_xasprintf("%s.%s", path, rules[i].name);
		fault = check_value(sub, v, &rules[i]);
		free(sub);
	}
	return fault;
}

char *hx_escalation_invalid(const cJSON *record)
{
	if (record == NULL)
		return fa_xstrdup("$.record: missing");
	if (!cJSON_IsObject(record))
		return expected("$.record", record, "object");
	return check_rules("$.record", record, record_rules, N(record_rules));
}

/* ---- the client's records ----------------------------------------------- */

static bool same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

const struct hx_client_msg *hx_escalation_line_of(const struct hx_check_input *in, const char *task)
{
	const struct hx_client_msg *last = NULL;

	for (size_t i = 0; i < in->n_msgs; i++)
		if (same(in->msgs[i].type, "escalation") && same(in->msgs[i].task, task))
			last = &in->msgs[i];
	return last;
}

const cJSON *hx_escalation_of(const struct hx_check_input *in, const char *task)
{
	const struct hx_client_msg *m = hx_escalation_line_of(in, task);

	return m != NULL ? cJSON_GetObjectItemCaseSensitive(m->json, "record") : NULL;
}

/* ---- escalation.sanitised ----------------------------------------------- */

static const char *canary_name(enum hx_canary_kind k)
{
	return k == HX_CANARY_KEY ? "the key canary" : "the body canary";
}

/* The attempts of task @task go into @e. */
static void add_task(const struct hx_check_input *in, const char *task, struct hx_evidence *e)
{
	for (size_t i = 0; task != NULL && i < in->n_attempts; i++)
		if (same(in->attempts[i].task, task))
			hx_evidence_add(e, in->attempts[i].seq);
}

void hx_escalation_sanitised_check(const struct hx_check_ctx *c, struct hx_check_result *r)
{
	const struct hx_check_input *in = c->in;
	struct hx_evidence ev = { 0 };
	size_t n_records = 0;
	const char *first_task = NULL;
	char *list = NULL, *more;

	for (size_t i = 0; i < in->n_msgs; i++) {
		/* a line without an object to hand over is no record */
		if (!same(in->msgs[i].type, "escalation") ||
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(in->msgs[i].json, "record")))
			continue;
		if (n_records++ == 0)
			first_task = in->msgs[i].task;
		add_task(in, in->msgs[i].task, &ev);
	}
	if (in->n_canary_hits > 0) {
		hx_evidence_release(&ev);
		for (size_t i = 0; i < in->n_canary_hits; i++) {
			const struct hx_canary_hit *h = &in->canary_hits[i];

			add_task(in, h->task, &ev);
			if (i >= HITS_SHOWN)
				continue;
			more = fa_xasprintf("%s%s%s in %s", list ? list : "", list ? "; " : "",
			                    canary_name(h->kind), h->where ? h->where : "?");
			free(list);
			list = more;
		}
		r->verdict = HX_FAIL;
		if (in->n_canary_hits > HITS_SHOWN)
			r->detail = fa_xasprintf("%s; and %zu more place%s", list,
			                         in->n_canary_hits - HITS_SHOWN,
			                         in->n_canary_hits - HITS_SHOWN == 1 ? "" : "s");
		else
			r->detail = fa_xstrdup(list);
		free(list);
		hx_evidence_give(&ev, r);
	} else if (in->mode != HX_MODE_STDIO) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup(
		        in->canary_bytes_searched > 0
		                ? "exec mode: no canary in the client's output, but an exec client "
		                  "prints no escalation record to judge"
		                : "exec mode: an exec client prints no escalation record, and no "
		                  "search for the canaries ran");
	} else if (n_records == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xstrdup("the client printed no escalation record: nothing "
		                       "was handed to a person");
	} else if (in->canary_bytes_searched == 0) {
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("%zu escalation record%s, but no search for the "
		                         "canaries ran",
		                         n_records, n_records == 1 ? "" : "s");
	} else if (in->canary_search_incomplete) {
		/* a leak past the cut would go unseen */
		r->verdict = HX_NA;
		r->detail = fa_xasprintf("%zu escalation record%s and %zu bytes searched, but "
		                         "the search was cut short (client output over its "
		                         "bound, or a state dir too large or unreadable): a "
		                         "clean partial search proves nothing",
		                         n_records, n_records == 1 ? "" : "s",
		                         in->canary_bytes_searched);
	} else {
		r->verdict = HX_PASS;
		r->detail = fa_xasprintf(
		        "%zu escalation record%s (first: task %s) and %zu bytes of the "
		        "client's output, records and state searched: no key or body canary "
		        "(files it may have written outside CLIENT_STATE_DIR, its home or /tmp "
		        "say, were not searched)",
		        n_records, n_records == 1 ? "" : "s", first_task,
		        in->canary_bytes_searched);
		hx_evidence_give(&ev, r);
	}
	hx_evidence_release(&ev);
}
