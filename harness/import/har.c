/* har.c -- a HAR 1.2 capture (browser developer tools, proxies) turned into a scenario. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "alloc.h"
#include "har.h"
#include "draft.h"
#include "route.h"
#include "jsontext.h"
#include "redact.h"
#include "retry_after.h"
#include "scenario.h"
#include "schema.h"

/* One entry kept: what its route and its task need. */
struct entry {
	size_t index;     /* in $.log.entries */
	char *method;     /* "GET" */
	char *tmpl;       /* route template */
	char *task_path;  /* path and query for a task, fa_task removed */
	char *request;    /* method, URL and body: what makes one logical request */
	cJSON *req_body;  /* the request's JSON body, or NULL */
	int64_t start_us; /* startedDateTime, µs since the epoch */
	cJSON *response;  /* the scenario response, without "times" */
};

/* What a conversion gathers. */
struct har {
	struct fa_schema s;
	const struct hx_draft_opts *opts;
	struct hx_draft_warnings *warn;
	struct entry *e;
	size_t n, cap;
	size_t filtered;            /* entries --host or --path-prefix left out */
	size_t no_response;         /* entries with status 0, skipped */
	size_t dropped;             /* non-JSON bodies dropped */
	size_t unfit;               /* entries whose path no route can answer, skipped */
	size_t query_redacted;      /* task query parameter values redacted */
	struct hx_redact_stats red; /* body members and strings redacted */
	struct hx_redact_stats hdr; /* header values redacted */
	struct hx_redact_stats pth; /* path segments and matrix parameters redacted */
	struct hx_redact_stats qry; /* query values redacted */
};

/* Headers never copied: hop-by-hop ones (RFC 9110 §7.6.1) and those the
 * server writes itself; those that carry credentials (Authorization,
 * Cookie, X-Api-Key, WWW-Authenticate...) are hx_redact_name()'s. */
static const char *const dropped_headers[] = {
	"connection", "keep-alive",     "transfer-encoding", "te",   "trailer",
	"upgrade",    "content-length", "content-encoding",  "date", NULL,
};

static bool header_dropped(const char *name)
{
	for (size_t i = 0; dropped_headers[i] != NULL; i++)
		if (strcasecmp(name, dropped_headers[i]) == 0)
			return true;
	return strncasecmp(name, "proxy-", 6) == 0 || hx_redact_name(name, strlen(name), false);
}

/* An HTTP token (RFC 9110 §5.6.2): what a scenario's header name must be. */
static bool is_token(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL)))
			return false;
	}
	return true;
}

/* startedDateTime: YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM|+HHMM]
 * (no zone = UTC) into µs since the epoch. */
static bool parse_time(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, n = 0;
	int64_t us = 0, scale = 100000;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
	    n != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	s += n;
	if (*s == '.') {
		if (s[1] < '0' || s[1] > '9')
			return false;
		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			us += (*s - '0') * scale;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (*s == '+' || *s == '-') {
		int zh, zm, sign = *s == '-' ? -1 : 1;

		if (!(sscanf(s + 1, "%2d:%2d%n", &zh, &zm, &n) == 2 && n == 5) &&
		    !(sscanf(s + 1, "%2d%2d%n", &zh, &zm, &n) == 2 && n == 4))
			return false;
		t -= sign * (zh * 3600 + zm * 60);
		s += 1 + n;
	} else if (*s == 'Z') {
		s++;
	}
	if (*s != '\0')
		return false;
	*out = (int64_t)t * 1000000 + us;
	return true;
}

/* Decode base64 @in into a new buffer; false on a character outside the
 * alphabet or bad padding. Blanks and line breaks are skipped. */
static bool base64_decode(const char *in, char **out, size_t *len)
{
	size_t n = strlen(in), o = 0;
	unsigned acc = 0, bits = 0, pad = 0;
	char *buf = fa_xmalloc(n / 4 * 3 + 4);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		const char *p;
		static const char abc[] =
		        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || c == '\0' || (p = strchr(abc, c)) == NULL) {
			free(buf);
			return false;
		}
		acc = (acc << 6) | (unsigned)(p - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (char)((acc >> bits) & 0xFF);
		}
	}
	if (pad > 2 || bits >= 6) {
		free(buf);
		return false;
	}
	buf[o] = '\0';
	*out = buf;
	*len = o;
	return true;
}

/* Member @key of @obj, at path .key, of cJSON type @type (@what in a
 * message): the member, or NULL when it is absent (an error if
 * @required; an optional null counts as absent) or of another type (an
 * error). */
static const cJSON *want(struct fa_schema *s, const cJSON *obj, const char *key, int type,
                         const char *what, bool required)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;

	if (v == NULL || (cJSON_IsNull(v) && !required)) { /* some tools write null */
		if (required)
			fa_schema_fail(s, "missing required key \"%s\"", key);
		return NULL;
	}
	if ((v->type & 0xFF) != type) {
		mark = fa_schema_enter(s, key);
		fa_schema_fail_got(s, v, "%s", what);
		fa_schema_leave(s, mark);
		return NULL;
	}
	return v;
}

/* Whether --host and --path-prefix keep @host (lower case, port
 * included) and @path. */
static bool kept(const struct hx_draft_opts *o, const char *host, const char *path)
{
	bool h = o->n_hosts == 0, p = o->n_prefixes == 0;
	size_t hl = strcspn(host, ":");

	for (size_t i = 0; i < o->n_hosts && !h; i++)
		h = strcasecmp(o->hosts[i], host) == 0 ||
		    (strlen(o->hosts[i]) == hl && strncasecmp(o->hosts[i], host, hl) == 0);
	for (size_t i = 0; i < o->n_prefixes && !p; i++)
		p = strncmp(path, o->prefixes[i], strlen(o->prefixes[i])) == 0;
	return h && p;
}

/* A request's or a response's body text (at the current path, the member
 * that holds it) as JSON: the value, or NULL with a warning when it is
 * not JSON. @text is @len bytes. */
static cJSON *body_json(struct har *h, const char *text, size_t len, const char *what)
{
	cJSON *v = NULL;
	struct fa_err ignored = { { 0 } };

	if (len == 0)
		return NULL;
	if (fa_jsontext_parse(text, len, h->s.file, &v, &ignored) != FA_OK) {
		hx_draft_warn(h->warn,
		              "%s: %s: %s is not JSON: left out (a scenario's body is JSON)",
		              h->s.file, h->s.path, what);
		h->dropped++;
		return NULL;
	}
	hx_redact_json(v, &h->red);
	return v;
}

/* Add header @name: @value to @hdrs; a name there already (any letter
 * case: one field) gets its values as an array, in capture order, under
 * its first spelling (Vary, Link, Set-Cookie repeat). Retry-After and
 * retry-after-ms have one value: a second is left out with a warning
 * naming $.log.entries[i].response.headers[@index]. */
static void add_header(struct har *h, cJSON *hdrs, const char *name, const char *value,
                       size_t index)
{
	cJSON *had = cJSON_GetObjectItem(hdrs, name); /* case-insensitive */

	if (had == NULL) {
		cJSON_AddStringToObject(hdrs, name, value);
		return;
	}
	if (strcasecmp(name, "retry-after") == 0 || strcasecmp(name, "retry-after-ms") == 0) {
		hx_draft_warn(h->warn,
		              "%s: %s[%zu]: a second %s left out (it has one value, RFC 9110 "
		              "§10.2.3)",
		              h->s.file, h->s.path, index, name);
		return;
	}
	if (cJSON_IsString(had)) {
		cJSON *arr = cJSON_CreateArray();

		cJSON_AddItemToArray(arr, cJSON_CreateString(had->valuestring));
		arr->string = fa_xstrdup(had->string); /* ViaPointer keeps no name */
		cJSON_ReplaceItemViaPointer(hdrs, had, arr);
		had = arr;
	}
	cJSON_AddItemToArray(had, cJSON_CreateString(value));
}

/* $.log.entries[i].response.headers into @resp's "headers" (and a
 * "retry_after" for a Retry-After date, made relative to @sent_us). */
static enum fa_rc copy_headers(struct har *h, const cJSON *arr, int64_t sent_us, cJSON *resp)
{
	cJSON *hdrs = cJSON_CreateObject();
	const cJSON *el;
	size_t i = 0, mark;
	struct fa_retry_after ra;

	cJSON_ArrayForEach(el, arr)
	{
		const cJSON *name, *value;

		mark = fa_schema_enter_index(&h->s, i++);
		if (!cJSON_IsObject(el)) {
			fa_schema_fail_got(&h->s, el, "object");
			goto fail;
		}
		name = want(&h->s, el, "name", cJSON_String, "string", true);
		value = name != NULL ? want(&h->s, el, "value", cJSON_String, "string", true)
		                     : NULL;
		if (value == NULL)
			goto fail;
		fa_schema_leave(&h->s, mark);
		if (header_dropped(name->valuestring) || !is_token(name->valuestring))
			continue; /* ":status" of HTTP/2 is no token */
		if (strcasecmp(name->valuestring, "retry-after") == 0 &&
		    fa_retry_after_parse(value->valuestring, &ra) == FA_OK &&
		    ra.form != FA_RA_DELTA && !cJSON_HasObjectItem(resp, "retry_after") &&
		    llabs(ra.date_s - sent_us / 1000000) <= (ra.form == FA_RA_RFC850
		                                                     ? FA_RA_RFC850_SPAN_S
		                                                     : FA_RA_MAX_DELTA_S - 1)) {
			/* a date would be past by replay time: keep the pause instead
			 * (one the format cannot write stays a literal header) */
			int64_t secs = ra.date_s - sent_us / 1000000;
			cJSON *o = cJSON_CreateObject();

			cJSON_AddNumberToObject(o, "seconds", (double)secs);
			cJSON_AddStringToObject(o, "form", fa_retry_after_form_str(ra.form));
			cJSON_AddItemToObject(resp, "retry_after", o);
			continue;
		}
		if (strcasecmp(name->valuestring, "retry-after") == 0 &&
		    cJSON_HasObjectItem(resp, "retry_after"))
			continue;
		if (hx_draft_value_ok(value->valuestring)) {
			/* Location: ...?code=, Link: <...?access_token=> */
			char *v = hx_redact_text(value->valuestring, false, &h->hdr);

			add_header(h, hdrs, name->valuestring, v, i - 1);
			free(v);
		}
	}
	if (hdrs->child != NULL) {
		/* headers come before the retry_after that may be in already */
		cJSON *ra_item = cJSON_DetachItemFromObject(resp, "retry_after");

		cJSON_AddItemToObject(resp, "headers", hdrs);
		if (ra_item != NULL)
			cJSON_AddItemToObject(resp, "retry_after", ra_item);
	} else {
		cJSON_Delete(hdrs);
	}
	return FA_OK;
fail:
	cJSON_Delete(hdrs);
	return FA_EINVAL;
}

/* The response of entry @ent (at its path) into a scenario response; 0 in
 * *@status_out when it had none (status 0). */
static enum fa_rc convert_response(struct har *h, const cJSON *ent, int64_t start_us, cJSON **out,
                                   int *status_out)
{
	const cJSON *resp, *st, *hdrs, *content, *text, *enc, *timings, *wait;
	cJSON *r = NULL;
	size_t m1, m2;
	double wait_ms = 0;

	*out = NULL;
	timings = want(&h->s, ent, "timings", cJSON_Object, "object", false);
	wait = timings != NULL ? cJSON_GetObjectItemCaseSensitive(timings, "wait") : NULL;
	if (wait != NULL && cJSON_IsNumber(wait) && wait->valuedouble > 0)
		wait_ms = wait->valuedouble;
	if (wait_ms > HX_DRAFT_MAX_DELAY_MS) {
		hx_draft_warn(h->warn, "%s: %s.timings.wait: %.0f ms cut to %d ms", h->s.file,
		              h->s.path, wait_ms, HX_DRAFT_MAX_DELAY_MS);
		wait_ms = HX_DRAFT_MAX_DELAY_MS;
	}
	resp = want(&h->s, ent, "response", cJSON_Object, "object", true);
	if (resp == NULL)
		return FA_EINVAL;
	m1 = fa_schema_enter(&h->s, "response");
	st = cJSON_GetObjectItemCaseSensitive(resp, "status");
	m2 = fa_schema_enter(&h->s, "status");
	if (st == NULL) {
		fa_schema_leave(&h->s, m2);
		return fa_schema_fail(&h->s, "missing required key \"status\"");
	}
	if (!fa_schema_is_integer(st) ||
	    (st->valuedouble != 0 && (st->valuedouble < 100 || st->valuedouble > 599)))
		return fa_schema_fail_got(&h->s, st, "integer 100..599");
	fa_schema_leave(&h->s, m2);
	*status_out = (int)st->valuedouble;
	if (*status_out == 0) {
		fa_schema_leave(&h->s, m1);
		return FA_OK;
	}
	if (h->s.err->msg[0] != '\0')
		return FA_EINVAL;
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "status", st->valuedouble);
	hdrs = want(&h->s, resp, "headers", cJSON_Array, "array", false);
	if (hdrs != NULL) {
		m2 = fa_schema_enter(&h->s, "headers");
		if (copy_headers(h, hdrs, start_us + (int64_t)(wait_ms * 1000), r) != FA_OK)
			goto fail;
		fa_schema_leave(&h->s, m2);
	} else if (h->s.err->msg[0] != '\0') {
		goto fail;
	}
	content = want(&h->s, resp, "content", cJSON_Object, "object", false);
	if (content == NULL && h->s.err->msg[0] != '\0')
		goto fail;
	m2 = fa_schema_enter(&h->s, "content");
	text = content != NULL ? want(&h->s, content, "text", cJSON_String, "string", false) : NULL;
	enc = content != NULL ? cJSON_GetObjectItemCaseSensitive(content, "encoding") : NULL;
	if (h->s.err->msg[0] != '\0')
		goto fail;
	if (enc != NULL && !(cJSON_IsString(enc) && strcmp(enc->valuestring, "base64") == 0)) {
		fa_schema_enter(&h->s, "encoding");
		fa_schema_fail_got(&h->s, enc, "\"base64\" (the only encoding a HAR names)");
		goto fail;
	}
	if (text != NULL) {
		char *raw = text->valuestring;
		size_t len = strlen(raw);
		bool decoded = enc != NULL && text->valuestring[0] != '\0';
		cJSON *body;

		fa_schema_enter(&h->s, "text");
		if (decoded && !base64_decode(text->valuestring, &raw, &len)) {
			fa_schema_fail(&h->s, "not valid base64, as its \"encoding\" says");
			goto fail;
		}
		body = body_json(h, raw, len, "the body");
		if (decoded)
			free(raw);
		if (body != NULL)
			cJSON_AddItemToObject(r, "body", body);
	}
	fa_schema_leave(&h->s, m2);
	if (wait_ms >= 0.5)
		cJSON_AddNumberToObject(r, "delay_ms", (double)lround(wait_ms));
	fa_schema_leave(&h->s, m1);
	*out = r;
	return FA_OK;
fail:
	cJSON_Delete(r);
	return FA_EINVAL;
}

/* Entry @ent at $.log.entries[i]: checked, filtered, converted into
 * h->e[] (or skipped). */
static enum fa_rc convert_entry(struct har *h, const cJSON *ent, size_t i)
{
	const cJSON *req, *url, *method, *started, *post, *ptext;
	const char *u, *auth, *path_start, *q, *frag;
	char *host = NULL, *path = NULL, *raw_path = NULL, *url_nofrag = NULL;
	char why[160];
	struct entry e = { .index = i };
	int status = 0;
	size_t m;
	bool ok_method = false;
	enum fa_rc rc = FA_EINVAL;

	if (!cJSON_IsObject(ent))
		return fa_schema_fail_got(&h->s, ent, "object");
	req = want(&h->s, ent, "request", cJSON_Object, "object", true);
	if (req == NULL)
		return FA_EINVAL;
	m = fa_schema_enter(&h->s, "request");
	url = want(&h->s, req, "url", cJSON_String, "string", true);
	if (url == NULL)
		return FA_EINVAL;
	u = url->valuestring;
	if (strncasecmp(u, "http://", 7) != 0 && strncasecmp(u, "https://", 8) != 0) {
		size_t scheme = strspn(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                          "0123456789+-.");

		fa_schema_enter(&h->s, "url");
		if (scheme == 0 || u[scheme] != ':') {
			/* the message shows the URL: not its credentials */
			char *red = hx_redact_text(u, false, NULL);
			cJSON *shown = cJSON_CreateString(red);

			fa_schema_fail_got(&h->s, shown, "an absolute http:// or https:// URL");
			cJSON_Delete(shown);
			free(red);
			return FA_EINVAL;
		}
		/* data:, blob:, ws: and extension URLs are no HTTP exchange */
		hx_draft_warn(h->warn, "%s: %s: a %.*s: URL is no HTTP request: left out",
		              h->s.file, h->s.path, (int)scheme, u);
		h->filtered++;
		return FA_OK;
	}
	auth = strstr(u, "://") + 3;
	path_start = auth + strcspn(auth, "/?#");
	frag = strchr(path_start, '#');
	url_nofrag = frag != NULL ? fa_xstrndup(u, (size_t)(frag - u)) : fa_xstrdup(u);
	host = fa_xstrndup(auth, (size_t)(path_start - auth));
	if (strrchr(host, '@') != NULL) /* user:password@ never leaves */
		memmove(host, strrchr(host, '@') + 1, strlen(strrchr(host, '@')));
	for (char *p = host; *p != '\0'; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	q = strchr(url_nofrag + (path_start - u), '?');
	if (!hx_draft_authority_ok(host, strlen(host), why, sizeof(why))) {
		fa_schema_enter(&h->s, "url");
		fa_schema_fail(&h->s, "not a URL's host and port: %s", why);
		goto out;
	}
	/* clients resolve dot segments before sending (RFC 3986 §5.2.4) */
	raw_path = *path_start == '/' ? fa_xstrndup(path_start, strcspn(path_start, "?#"))
	                              : fa_xstrdup("/");
	path = hx_draft_remove_dots(raw_path);
	if (!kept(h->opts, host, path)) {
		h->filtered++;
		rc = FA_OK;
		goto out;
	}
	method = want(&h->s, req, "method", cJSON_String, "string", true);
	if (method == NULL)
		goto out;
	for (size_t k = 0; fa_route_methods[k] != NULL; k++)
		ok_method = ok_method || strcmp(method->valuestring, fa_route_methods[k]) == 0;
	if (!ok_method) {
		fa_schema_enter(&h->s, "method");
		fa_schema_fail_got(&h->s, method, "one of GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS");
		goto out;
	}
	if (hx_draft_path_unfit(path) != NULL) {
		hx_draft_warn(h->warn,
		              "%s: %s.url: the path holds %s: skipped (no route could "
		              "answer it as a client sends it)",
		              h->s.file, h->s.path, hx_draft_path_unfit(path));
		h->unfit++;
		rc = FA_OK;
		goto out;
	}
	{
		/* credentials in a segment or a ;jsessionid= never reach a route,
		 * a task or a message */
		struct hx_redact_stats ps = { 0 };
		char *red = hx_redact_path(path, &ps), *shown = hx_redact_path(raw_path, NULL);

		if (strcmp(raw_path, path) != 0)
			hx_draft_warn(h->warn,
			              "%s: %s.url: %s is sent as %s (dot segments resolved, as "
			              "clients do)",
			              h->s.file, h->s.path, shown, red);
		free(shown);
		free(path);
		path = red;
		h->pth.segments += ps.segments;
		h->pth.matrix += ps.matrix;
	}
	e.method = fa_xstrdup(method->valuestring);
	e.tmpl = hx_draft_template(path, true);
	if (e.tmpl == NULL) {
		fa_schema_enter(&h->s, "url");
		fa_schema_fail(&h->s, "more than %d id segments in the path", FA_ROUTE_MAX_PARAMS);
		goto out;
	}
	if (strcmp(e.tmpl, "/_fakeapi") == 0 || strncmp(e.tmpl, "/_fakeapi/", 10) == 0) {
		fa_schema_enter(&h->s, "url");
		fa_schema_fail(&h->s,
		               "a path under /_fakeapi/, which the provider keeps for itself");
		goto out;
	}
	{
		struct hx_redact_stats qs = { 0 };

		e.task_path = hx_draft_task_path(path, q != NULL ? q + 1 : NULL, &qs);
		if (qs.n > 0)
			hx_draft_warn(h->warn,
			              "%s: %s.url: the value of query parameter%s %s "
			              "redacted (a credential's name)",
			              h->s.file, h->s.path, qs.n == 1 ? "" : "s", qs.names);
		h->query_redacted += qs.n;
		h->qry.n += qs.n;
		h->qry.shaped += qs.shaped;
	}
	post = want(&h->s, req, "postData", cJSON_Object, "object", false);
	ptext = post != NULL ? want(&h->s, post, "text", cJSON_String, "string", false) : NULL;
	if (h->s.err->msg[0] != '\0')
		goto out;
	e.request = fa_xasprintf("%s %s\n%s", e.method, url_nofrag,
	                         ptext != NULL ? ptext->valuestring : "");
	if (ptext != NULL) {
		size_t m2 = fa_schema_enter(&h->s, "postData");

		fa_schema_enter(&h->s, "text");
		e.req_body = body_json(h, ptext->valuestring, strlen(ptext->valuestring),
		                       "the request body");
		fa_schema_leave(&h->s, m2);
	}
	fa_schema_leave(&h->s, m);
	started = want(&h->s, ent, "startedDateTime", cJSON_String, "string", true);
	if (started == NULL)
		goto out;
	if (!parse_time(started->valuestring, &e.start_us)) {
		fa_schema_enter(&h->s, "startedDateTime");
		fa_schema_fail_got(&h->s, started, "an ISO 8601 date (2026-11-30T10:00:00.000Z)");
		goto out;
	}
	if (convert_response(h, ent, e.start_us, &e.response, &status) != FA_OK)
		goto out;
	rc = FA_OK;
	if (status < 200) {
		/* 0: cancelled or failed before an answer; 1xx: interim, or the
		 * 101 of a WebSocket, after which a client would wait for ever */
		hx_draft_warn(h->warn, "%s: %s: no final response (status %d): skipped", h->s.file,
		              h->s.path, status);
		h->no_response++;
		goto out;
	}
	h->e = fa_xgrow(h->e, &h->cap, (h->n + 1) * sizeof(*h->e), 16 * sizeof(*h->e));
	h->e[h->n++] = e;
	memset(&e, 0, sizeof(e));
out:
	free(e.method);
	free(e.tmpl);
	free(e.task_path);
	free(e.request);
	cJSON_Delete(e.req_body);
	cJSON_Delete(e.response);
	free(host);
	free(path);
	free(raw_path);
	free(url_nofrag);
	return rc;
}

static void entries_release(struct har *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->e[i].method);
		free(h->e[i].tmpl);
		free(h->e[i].task_path);
		free(h->e[i].request);
		cJSON_Delete(h->e[i].req_body);
		cJSON_Delete(h->e[i].response);
	}
	free(h->e);
}

/* The routes: one per (method, template) in order of first entry, its
 * responses in entry order, consecutive identical ones merged. */
static cJSON *make_routes(struct har *h, size_t *n_routes)
{
	cJSON *routes = cJSON_CreateArray();
	char **ids = NULL;
	size_t n = 0;
	bool *done = fa_xcalloc(h->n + 1, sizeof(*done));

	for (size_t i = 0; i < h->n; i++) {
		cJSON *route, *resps, *last = NULL;
		int times = 0;

		if (done[i])
			continue;
		ids = fa_xrealloc(ids, (n + 1) * sizeof(*ids));
		ids[n] = hx_draft_route_id(h->e[i].method, h->e[i].tmpl, ids, n);
		route = cJSON_CreateObject();
		cJSON_AddStringToObject(route, "id", ids[n++]);
		cJSON_AddStringToObject(route, "method", h->e[i].method);
		cJSON_AddStringToObject(route, "path", h->e[i].tmpl);
		cJSON_AddStringToObject(route, "class", hx_draft_class(h->e[i].method));
		resps = cJSON_AddArrayToObject(route, "responses");
		for (size_t j = i; j < h->n; j++) {
			if (strcmp(h->e[j].method, h->e[i].method) != 0 ||
			    strcmp(h->e[j].tmpl, h->e[i].tmpl) != 0)
				continue;
			done[j] = true;
			if (last != NULL && cJSON_Compare(last, h->e[j].response, true)) {
				times++;
				continue;
			}
			if (last != NULL)
				cJSON_AddItemToArray(resps, hx_draft_times(last, times));
			last = h->e[j].response;
			h->e[j].response = NULL;
			times = 1;
		}
		cJSON_AddItemToArray(resps, hx_draft_times(last, times));
		cJSON_AddItemToArray(routes, route);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(done);
	*n_routes = n;
	return routes;
}

/* The harness block: a task per distinct request, each sent at its first
 * entry's offset from the earliest entry. */
static enum fa_rc make_harness(struct har *h, cJSON *sc, size_t *n_tasks)
{
	cJSON *harness, *tasks, *events;
	int64_t t0 = h->e[0].start_us, last_ms = 0;
	size_t *first = fa_xcalloc(h->n + 1, sizeof(*first)), n = 0;

	for (size_t i = 1; i < h->n; i++)
		if (h->e[i].start_us < t0)
			t0 = h->e[i].start_us;
	for (size_t i = 0; i < h->n; i++) {
		bool seen = false;

		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(h->e[first[k]].request, h->e[i].request) == 0;
		if (!seen)
			first[n++] = i;
	}
	harness = cJSON_AddObjectToObject(sc, "harness");
	tasks = cJSON_AddArrayToObject(harness, "tasks");
	events = cJSON_AddArrayToObject(harness, "events");
	for (size_t k = 0; k < n; k++) {
		const struct entry *e = &h->e[first[k]];
		int64_t at_ms = (e->start_us - t0) / 1000;
		cJSON *t = cJSON_CreateObject(), *ev = cJSON_CreateObject();
		char id[32];

		if (at_ms > HX_DRAFT_MAX_AT_MS) {
			fa_err_set(h->s.err,
			           "%s: $.log.entries[%zu].startedDateTime: %lld ms after "
			           "the first entry, past the %d a scenario's at_ms allows: keep "
			           "fewer entries (--host, --path-prefix)",
			           h->s.file, e->index, (long long)at_ms, HX_DRAFT_MAX_AT_MS);
			cJSON_Delete(t);
			cJSON_Delete(ev);
			free(first);
			return FA_EINVAL;
		}
		if (at_ms > last_ms)
			last_ms = at_ms;
		snprintf(id, sizeof(id), "t%zu", k + 1);
		cJSON_AddStringToObject(t, "id", id);
		cJSON_AddStringToObject(t, "key", HX_DRAFT_KEY_ID);
		cJSON_AddStringToObject(t, "class", hx_draft_class(e->method));
		cJSON_AddStringToObject(t, "method", e->method);
		cJSON_AddStringToObject(t, "path", e->task_path);
		if (e->req_body != NULL)
			cJSON_AddItemToObject(t, "body", cJSON_Duplicate(e->req_body, true));
		cJSON_AddItemToArray(tasks, t);
		cJSON_AddNumberToObject(ev, "at_ms", (double)at_ms);
		cJSON_AddItemToObject(ev, "send",
		                      cJSON_CreateStringArray((const char *[]){ id }, 1));
		cJSON_AddItemToArray(events, ev);
	}
	cJSON_AddNumberToObject(harness, "timeout_s", hx_draft_timeout_s(last_ms));
	free(first);
	*n_tasks = n;
	return FA_OK;
}

/* "; redacted: 2 path segments, 1 matrix parameter, ..." (empty when
 * nothing was): what the comment says was redacted where. */
static void redacted_where(const struct har *h, char *buf, size_t size)
{
	const struct {
		size_t n;
		const char *one, *many;
	} place[] = {
		{ h->pth.segments, "path segment", "path segments" },
		{ h->pth.matrix, "matrix parameter", "matrix parameters" },
		{ hx_redact_total(&h->qry), "query value", "query values" },
		{ hx_redact_total(&h->hdr), "header value", "header values" },
		{ hx_redact_total(&h->red), "value in bodies", "values in bodies" },
	};
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(place) / sizeof(place[0]) && o + 1 < size; i++)
		if (place[i].n > 0)
			o += (size_t)snprintf(buf + o, size - o, "%s%zu %s",
			                      o == 0 ? "; redacted: " : ", ", place[i].n,
			                      place[i].n == 1 ? place[i].one : place[i].many);
}

enum fa_rc hx_har_convert(const char *text, size_t len, const char *name,
                          const struct hx_draft_opts *opts, cJSON **out,
                          struct hx_draft_warnings *warn, struct fa_err *err)
{
	struct har h = { .opts = opts, .warn = warn };
	cJSON *root = NULL, *sc = NULL, *provider, *keys, *key, *users;
	const cJSON *log, *version, *entries, *ent;
	size_t i = 0, n_routes = 0, n_tasks = 0, mark;
	char *id = NULL, *comment = NULL, where[256];
	enum fa_rc rc = FA_EINVAL;

	*out = NULL;
	fa_schema_init(&h.s, name, err);
	if (fa_jsontext_parse(text, len, name, &root, err) != FA_OK)
		goto out;
	if (!cJSON_IsObject(root)) {
		fa_schema_fail_got(&h.s, root, "object (a HAR file)");
		goto out;
	}
	log = want(&h.s, root, "log", cJSON_Object, "object", true);
	if (log == NULL)
		goto out;
	mark = fa_schema_enter(&h.s, "log");
	version = want(&h.s, log, "version", cJSON_String, "string", true);
	if (version == NULL)
		goto out;
	if (strcmp(version->valuestring, "1.2") != 0 && strcmp(version->valuestring, "1.1") != 0) {
		fa_schema_enter(&h.s, "version");
		fa_schema_fail_got(&h.s, version, "one of 1.1|1.2 (HAR versions read)");
		goto out;
	}
	entries = want(&h.s, log, "entries", cJSON_Array, "array", true);
	if (entries == NULL)
		goto out;
	fa_schema_enter(&h.s, "entries");
	cJSON_ArrayForEach(ent, entries)
	{
		size_t m = fa_schema_enter_index(&h.s, i);

		if (convert_entry(&h, ent, i++) != FA_OK)
			goto out;
		fa_schema_leave(&h.s, m);
	}
	fa_schema_leave(&h.s, mark);
	if (h.n == 0) {
		fa_err_set(
		        err,
		        "%s: $.log.entries: no entry to import (%zu read, %zu left out by "
		        "--host, --path-prefix or their scheme, %zu without a final response, %zu with "
		        "a path no route can answer)",
		        name, i, h.filtered, h.no_response, h.unfit);
		goto out;
	}
	sc = cJSON_CreateObject();
	id = opts->id != NULL ? fa_xstrdup(opts->id) : hx_draft_id_from_file(name);
	cJSON_AddStringToObject(sc, "id", id);
	comment = fa_xasprintf("imported from %s", hx_draft_basename(name));
	cJSON_AddStringToObject(sc, "title", comment);
	cJSON_AddStringToObject(sc, "comment", comment); /* completed below */
	provider = cJSON_AddObjectToObject(sc, "provider");
	keys = cJSON_AddObjectToObject(provider, "keys");
	key = cJSON_AddObjectToObject(keys, HX_DRAFT_KEY_ID);
	cJSON_AddStringToObject(key, "secret", HX_DRAFT_KEY_SECRET);
	cJSON_AddStringToObject(key, "user", HX_DRAFT_USER);
	users = cJSON_AddObjectToObject(provider, "users");
	cJSON_AddObjectToObject(users, HX_DRAFT_USER);
	if (!opts->no_harness && make_harness(&h, sc, &n_tasks) != FA_OK)
		goto out;
	/* routes take the responses: after the tasks, before the harness block */
	cJSON *harness = cJSON_DetachItemFromObject(sc, "harness");

	cJSON_AddItemToObject(sc, "routes", make_routes(&h, &n_routes));
	if (harness != NULL)
		cJSON_AddItemToObject(sc, "harness", harness);
	redacted_where(&h, where, sizeof(where));
	free(comment);
	comment = fa_xasprintf(
	        "imported from %s (%zu entr%s, %zu route%s, %zu task%s) by "
	        "fakeapi-harness import-har%s%s%s%s%s%s",
	        hx_draft_basename(name), h.n, h.n == 1 ? "y" : "ies", n_routes,
	        n_routes == 1 ? "" : "s", n_tasks, n_tasks == 1 ? "" : "s",
	        h.filtered > 0 ? "; entries left out by --host, --path-prefix or their "
	                         "scheme"
	                       : "",
	        h.no_response > 0 ? "; entries without a final response skipped" : "",
	        h.dropped > 0 ? "; bodies that are not JSON left out" : "",
	        h.unfit > 0 ? "; entries with a path no route can answer skipped" : "",
	        h.query_redacted > 0 ? "; credential-like query parameter values "
	                               "redacted"
	                             : "",
	        where);
	cJSON_ReplaceItemInObject(sc, "comment", cJSON_CreateString(comment));
	*out = sc;
	sc = NULL;
	rc = FA_OK;
out:
	entries_release(&h);
	cJSON_Delete(root);
	cJSON_Delete(sc);
	free(id);
	free(comment);
	return rc;
}
