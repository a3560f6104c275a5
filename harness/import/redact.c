/* redact.c -- the one rule for what names a credential in an imported capture, and its removal. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "redact.h"
#include "route.h"

#define REDACTED "redacted"

/* The words of a name, lower case: split at every byte that is no letter
 * or digit, between a letter and a digit, and at camelCase boundaries
 * ("tokenString": token, string; "XApiKey": x, api, key). */
#define MAX_WORDS 16
#define WORD_LEN  32

struct words {
	size_t n;
	char w[MAX_WORDS][WORD_LEN];
};

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void split_words(const char *s, size_t len, struct words *ws)
{
	size_t i = 0;

	ws->n = 0;
	while (i < len && ws->n < MAX_WORDS) {
		size_t o = 0;
		char *w = ws->w[ws->n];

		if (!is_alpha(s[i]) && !is_digit(s[i])) {
			i++;
			continue;
		}
		do {
			if (o + 1 < WORD_LEN)
				w[o++] = (char)(is_upper(s[i]) ? s[i] - 'A' + 'a' : s[i]);
			i++;
		} while (i < len && (is_alpha(s[i]) || is_digit(s[i])) &&
		         is_digit(s[i]) == is_digit(s[i - 1]) &&
		         !(is_upper(s[i]) && !is_upper(s[i - 1])) &&
		         !(is_upper(s[i]) && i + 1 < len && is_alpha(s[i + 1]) &&
		           !is_upper(s[i + 1]) && is_upper(s[i - 1])));
		w[o] = '\0';
		ws->n++;
	}
}

/* Words that name a credential wherever they stand in a name, alone or
 * as the end of a word ("clientsecret", "userpassword"); the short ones
 * only alone. */
static const char *const strong[] = {
	"authorization", "authorisation", "authenticate", "authentication",
	"password",      "passphrase",    "passwd",       "secret",
	"secrets",       "apikey",        "apikeys",      "cookie",
	"cookies",       "bearer",        "credential",   "credentials",
	"signature",     "assertion",     "privatekey",   "accesskey",
	"sessionid",     "accesstoken",   "refreshtoken", NULL,
};
static const char *const strong_alone[] = { "jwt", "otp", "hmac", "pwd", NULL };

/* Word pairs that name a credential wherever they stand: api key,
 * private key, access key, secret key, session id. */
static const char *const pairs[][2] = {
	{ "api", "key" },    { "api", "keys" },   { "private", "key" }, { "access", "key" },
	{ "secret", "key" }, { "session", "id" }, { NULL, NULL },
};

/* Words that name a credential anywhere in a name unless its last word
 * is a plain[] one: "X-Auth-Token", "user_session", "sid", "tokenString"
 * (but "token_budget"). "token" and "auth" also end a word
 * ("accesstoken", "oauth"). */
static const char *const weak[] = {
	"token", "auth", "session", "sid", "sig", "pin", "nonce", NULL
};

/* Last words that say a name is about a credential, not one:
 * "token_budget", "session_count", "auth_provider", "token_type". */
static const char *const plain[] = {
	"count", "counts", "budget",    "limit",    "limits", "provider",   "providers", "type",
	"kind",  "url",    "uri",       "endpoint", "name",   "names",      "id",        "ids",
	"at",    "time",   "ttl",       "expires",  "expiry", "expiration", "length",    "len",
	"size",  "format", "mode",      "version",  "method", "scheme",     "enabled",   "required",
	"ms",    "used",   "remaining", "reset",    "index",  NULL,
};

/* Words before a last word "token" that make it a cursor, not a
 * credential: "pagination_token", "nextPageToken". */
static const char *const cursor[] = { "page",     "pagination",   "next",   "prev",
	                              "previous", "continuation", "cursor", NULL };

/* Words that make "tokens" a count: "max_tokens", "X-RateLimit-Reset-Tokens". */
static const char *const measure[] = {
	"max",        "min",    "limit",     "ratelimit", "remaining", "reset",  "used",
	"usage",      "total",  "count",     "budget",    "input",     "output", "prompt",
	"completion", "cached", "reasoning", "num",       "n",         NULL,
};

static bool in_list(const char *w, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++)
		if (strcmp(w, list[i]) == 0)
			return true;
	return false;
}

/* Whether @w is @end or ends with it. */
static bool ends_with(const char *w, const char *end)
{
	size_t wl = strlen(w), el = strlen(end);

	return wl >= el && strcmp(w + wl - el, end) == 0;
}

bool hx_redact_is_credential(const char *name, size_t len, unsigned flags)
{
	struct words ws;
	const char *last;

	if (len >= 15 && strncasecmp(name, "access-control-", 15) == 0)
		return false;
	split_words(name, len, &ws);
	if (ws.n == 0)
		return false;
	for (size_t i = 0; i < ws.n; i++) {
		for (size_t k = 0; strong[k] != NULL; k++)
			if (ends_with(ws.w[i], strong[k]))
				return true;
		if (in_list(ws.w[i], strong_alone))
			return true;
		for (size_t k = 0; i + 1 < ws.n && pairs[k][0] != NULL; k++)
			if (strcmp(ws.w[i], pairs[k][0]) == 0 &&
			    strcmp(ws.w[i + 1], pairs[k][1]) == 0)
				return true;
	}
	last = ws.w[ws.n - 1];
	if (ws.n == 1 && strcmp(last, "key") == 0)
		return true;
	if ((flags & HX_REDACT_URL) && ws.n == 1 && strcmp(last, "code") == 0)
		return true;
	if (ends_with(last, "tokens")) {
		/* counts: max_tokens, usage.input_tokens, a number */
		if (flags & (HX_REDACT_NUMBER | HX_REDACT_LOGPROBS))
			return false;
		for (size_t i = 0; i < ws.n; i++)
			if (in_list(ws.w[i], measure))
				return false;
		return true;
	}
	if ((ends_with(last, "token") &&
	     ((flags & HX_REDACT_LOGPROBS) ||
	      (ws.n > 1 && strcmp(last, "token") == 0 && in_list(ws.w[ws.n - 2], cursor)))) ||
	    in_list(last, plain))
		return false;
	for (size_t i = 0; i < ws.n; i++)
		if (in_list(ws.w[i], weak) || ends_with(ws.w[i], "auth") ||
		    (ends_with(ws.w[i], "token") && !(flags & HX_REDACT_LOGPROBS)))
			return true;
	return false;
}

bool hx_redact_name(const char *name, size_t len, bool in_url)
{
	return hx_redact_is_credential(name, len, in_url ? HX_REDACT_URL : 0);
}

/* Whether @c may stand in a token: [A-Za-z0-9_-]. */
static bool is_tok(char c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '-';
}

/* Whether the @n bytes at @s are all @ok's (a predicate). */
static bool all_of(const char *s, size_t n, bool (*ok)(char))
{
	for (size_t i = 0; i < n; i++)
		if (!ok(s[i]))
			return false;
	return true;
}

static bool is_alnum(char c)
{
	return is_alpha(c) || is_digit(c);
}

static bool is_upper_alnum(char c)
{
	return is_upper(c) || is_digit(c);
}

/* Three base64url segments split by ".", the first "eyJ": {" encoded. */
static bool is_jwt(const char *s, size_t n)
{
	const char *d1 = memchr(s, '.', n), *d2;

	if (n < 16 || strncmp(s, "eyJ", 3) != 0 || d1 == NULL)
		return false;
	d2 = memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s));
	return d2 != NULL && d2 > d1 + 1 && all_of(s, (size_t)(d1 - s), is_tok) &&
	       all_of(d1 + 1, (size_t)(d2 - d1 - 1), is_tok) &&
	       all_of(d2 + 1, n - (size_t)(d2 + 1 - s), is_tok);
}

/* Shannon entropy of the @n bytes at @s, bits per byte. */
static double entropy(const char *s, size_t n)
{
	size_t count[256] = { 0 };
	double h = 0;

	for (size_t i = 0; i < n; i++)
		count[(unsigned char)s[i]]++;
	for (size_t i = 0; i < 256; i++)
		if (count[i] > 0) {
			double p = (double)count[i] / (double)n;

			h -= p * log2(p);
		}
	return h;
}

bool hx_redact_is_secret_value(const char *s, size_t n)
{
	static const char *const stripe[] = { "sk_live_", "sk_test_", "rk_live_", "rk_test_",
		                              NULL };
	bool alpha = false, digit = false;

	if (is_jwt(s, n))
		return true;
	for (size_t i = 0; stripe[i] != NULL; i++)
		if (n >= 16 && strncmp(s, stripe[i], 8) == 0 && all_of(s + 8, n - 8, is_alnum))
			return true;
	if (n >= 35 && strncmp(s, "sk-", 3) == 0 && all_of(s + 3, n - 3, is_tok))
		return true;
	if (n == 20 && (strncmp(s, "AKIA", 4) == 0 || strncmp(s, "ASIA", 4) == 0) &&
	    all_of(s + 4, 16, is_upper_alnum))
		return true;
	if (n < 32 || !all_of(s, n, is_tok))
		return false;
	for (size_t i = 0; i < n; i++) {
		alpha = alpha || is_alpha(s[i]);
		digit = digit || is_digit(s[i]);
	}
	return alpha && digit && entropy(s, n) > HX_REDACT_ENTROPY;
}

size_t hx_redact_total(const struct hx_redact_stats *st)
{
	return st->n + st->members + st->userinfo + st->text + st->shaped + st->segments +
	       st->matrix;
}

/* Whether @c may stand in a token of free text: a JWT's "." too. */
static bool in_run(char c)
{
	return is_tok(c) || c == '.';
}

char *hx_redact_path(const char *path, struct hx_redact_stats *st)
{
	size_t n = strlen(path), o = 0;
	char *out = fa_xmalloc(n * 4 + 32); /* ";k=" grows to ";k=redacted" */
	const char *p = path;

	while (*p != '\0') {
		size_t seg = strcspn(p, "/;");

		if (seg > 0 && hx_redact_is_secret_value(p, seg)) {
			/* FNV-1a: the same secret, the same segment; never the secret */
			uint32_t h = 2166136261u;

			for (size_t i = 0; i < seg; i++)
				h = (h ^ (unsigned char)p[i]) * 16777619u;
			o += (size_t)snprintf(out + o, 32, "redacted-%08x", h);
			if (st != NULL)
				st->segments++;
		} else {
			memcpy(out + o, p, seg);
			o += seg;
		}
		p += seg;
		while (*p == ';') {
			/* ;name=value matrix parameters, up to the next "/" */
			size_t par = 1 + strcspn(p + 1, "/;");
			const char *eq = memchr(p, '=', par);

			if (eq != NULL &&
			    (hx_redact_name(p + 1, (size_t)(eq - p - 1), true) ||
			     hx_redact_is_secret_value(eq + 1, par - (size_t)(eq + 1 - p)))) {
				memcpy(out + o, p, (size_t)(eq + 1 - p));
				o += (size_t)(eq + 1 - p);
				memcpy(out + o, REDACTED, strlen(REDACTED));
				o += strlen(REDACTED);
				if (st != NULL)
					st->matrix++;
			} else {
				memcpy(out + o, p, par);
				o += par;
			}
			p += par;
		}
		if (*p == '/')
			out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

static void note(struct hx_redact_stats *st, const char *name, size_t len)
{
	size_t used;

	if (st == NULL)
		return;
	st->n++;
	used = strlen(st->names);
	if (used + len + 3 < sizeof(st->names))
		snprintf(st->names + used, sizeof(st->names) - used, "%s%.*s", used > 0 ? ", " : "",
		         (int)len, name);
}

/* Where a parameter's name or value ends in free text. */
static bool ends_value(char c)
{
	return c == '\0' || c == '&' || c == '#' || c == ' ' || c == '\t' || c == '\r' ||
	       c == '\n' || c == '<' || c == '>' || c == '"' || c == '\'';
}

/* Whether the parameter name @s (@n bytes, still percent-encoded) is a
 * credential's: "api%5Fkey" is api_key. */
static bool param_secret(const char *s, size_t n, const char *value)
{
	size_t d = strspn(value, "0123456789");

	char buf[256];
	size_t o = 0;

	for (size_t i = 0; i < n && o < sizeof(buf); i++) {
		if (s[i] == '%' && i + 2 < n && fa_route_hexval((unsigned char)s[i + 1]) >= 0 &&
		    fa_route_hexval((unsigned char)s[i + 2]) >= 0) {
			buf[o++] = (char)(fa_route_hexval((unsigned char)s[i + 1]) * 16 +
			                  fa_route_hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			buf[o++] = s[i];
		}
	}
	return hx_redact_is_credential(
	        buf, o, HX_REDACT_URL | (d > 0 && ends_value(value[d]) ? HX_REDACT_NUMBER : 0));
}

/* Whether @p (in @text) starts the word @w (compared without letter
 * case): no letter or digit just before it. */
static bool at_word(const char *text, const char *p, const char *w)
{
	return strncasecmp(p, w, strlen(w)) == 0 &&
	       (p == text || !(is_alpha(p[-1]) || is_digit(p[-1])));
}

/* Count a "Bearer" or "Authorization:" value of free text (@len bytes at
 * @s) replaced, unless it read "redacted" already. */
static void count_text(struct hx_redact_stats *st, const char *s, size_t len)
{
	if (st != NULL && !(len >= strlen(REDACTED) &&
	                    strncmp(s + len - strlen(REDACTED), REDACTED, strlen(REDACTED)) == 0))
		st->text++;
}

char *hx_redact_text(const char *text, bool is_query, struct hx_redact_stats *st)
{
	size_t len = strlen(text), o = 0;
	/* a shortest redacted parameter, "key=", grows from 4 bytes to 12 */
	char *out = fa_xmalloc(len * 3 + 16);
	const char *p = text;
	bool param = is_query; /* a parameter's name starts at p */

	while (*p != '\0') {
		if (strncmp(p, "://", 3) == 0) {
			/* scheme://user:password@host: the userinfo never leaves */
			size_t auth = strcspn(p + 3, "/?#<>\"' \t\r\n");
			const char *at = memchr(p + 3, '@', auth);

			memcpy(out + o, "://", 3);
			o += 3;
			p += 3;
			if (at != NULL) {
				p = at + 1;
				if (st != NULL)
					st->userinfo++;
			}
			continue;
		}
		if (at_word(text, p, "authorization:")) {
			/* a header line in free text: its value to the end of the line */
			size_t v = 14 + strcspn(p + 14, "\r\n");

			memcpy(out + o, p, 13); /* the name as written */
			memcpy(out + o + 13, ": " REDACTED, strlen(": " REDACTED));
			o += 13 + strlen(": " REDACTED);
			p += v;
			count_text(st, p - v, v);
			continue;
		}
		if (at_word(text, p, "bearer ")) {
			size_t b = 7, v;

			while (p[b] == ' ')
				b++;
			v = b + strcspn(p + b, " \t\r\n\"'<>,;");
			if (v > b) {
				memcpy(out + o, p, 6);
				memcpy(out + o + 6, " " REDACTED, strlen(" " REDACTED));
				o += 6 + strlen(" " REDACTED);
				p += v;
				count_text(st, p - v, v);
				continue;
			}
		}
		if (param && (*p == ' ' || *p == '\t')) {
			out[o++] = *p++; /* "; token=..." of a header's parameters */
			continue;
		}
		if (param) {
			size_t n = 0;

			while (!ends_value(p[n]) && p[n] != '=' && p[n] != '?')
				n++;
			param = false;
			if (p[n] == '=' && n > 0 && param_secret(p, n, p + n + 1)) {
				size_t v = n + 1;

				memcpy(out + o, p, n + 1);
				o += n + 1;
				note(st, p, n);
				while (!ends_value(p[v]))
					v++;
				memcpy(out + o, REDACTED, strlen(REDACTED));
				o += strlen(REDACTED);
				p += v;
				continue;
			}
		}
		if (in_run(*p) && (p == text || !in_run(p[-1]))) {
			/* a token whose shape is a credential's, whatever names it */
			size_t r = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			                     "0123456789_-.");

			while (r > 0 && p[r - 1] == '.') /* a sentence's full stop */
				r--;
			if (hx_redact_is_secret_value(p, r)) {
				memcpy(out + o, REDACTED, strlen(REDACTED));
				o += strlen(REDACTED);
				p += r;
				if (st != NULL)
					st->shaped++;
				continue;
			}
		}
		if (*p == '?' || *p == '#' || *p == '&' || *p == ';')
			param = true;
		out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

/* Whether @s looks form-encoded ("user=a&password=b"): no blank, no URL,
 * and a parameter name of letters, digits, "_", "-", ".", "[", "]" or
 * "%" before its first "=". */
static bool looks_form(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                     "_-.[]%");

	return n > 0 && s[n] == '=' && strpbrk(s, " \t\r\n") == NULL && strstr(s, "://") == NULL;
}

/* Whether @s looks like a field name (letters, "_", "-", "." only, 1 to
 * 64 bytes): what a "keys" list of a schema holds, unlike a key. */
static bool looks_field(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-.");

	return n > 0 && n <= 64 && s[n] == '\0';
}

static void set_redacted(cJSON *c, struct hx_redact_stats *st)
{
	cJSON_SetValuestring(c, REDACTED);
	if (st != NULL)
		st->members++;
}

/* Replace the value @c of object @v (named by a credential) by "redacted". */
static cJSON *replace_member(cJSON *v, cJSON *c, struct hx_redact_stats *st)
{
	/* the whole value, whatever its type: an object of credentials, a
	 * list of keys, a numeric PIN */
	cJSON *r;

	if (cJSON_IsString(c) && strcmp(c->valuestring, REDACTED) == 0)
		return c;
	r = cJSON_CreateString(REDACTED);
	if (st != NULL)
		st->members++;
	r->string = fa_xstrdup(c->string); /* ViaPointer keeps no name */
	cJSON_ReplaceItemViaPointer(v, c, r);
	return r;
}

/* Whether member @name with value @c is a credential's, under @flags. */
static bool member_secret(const char *name, const cJSON *c, unsigned flags)
{
	return hx_redact_is_credential(name, strlen(name),
	                               flags | (cJSON_IsNumber(c) ? HX_REDACT_NUMBER : 0));
}

/* Whether @name's last word is "keys" ("keys", "sortKeys"). */
static bool names_keys(const char *name)
{
	size_t n = strlen(name);

	return n >= 4 && strcasecmp(name + n - 4, "keys") == 0 &&
	       (n == 4 || !is_alpha(name[n - 5]) || (name[n - 4] == 'K' && !is_upper(name[n - 5])));
}

static void redact_json(cJSON *v, unsigned flags, struct hx_redact_stats *st)
{
	const cJSON *pname = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "name") : NULL;
	cJSON *pvalue = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "value") : NULL;

	/* {"name": "Authorization", "value": "..."}: HAR headers, cookies, form params */
	if (cJSON_IsString(pname) && pvalue != NULL &&
	    member_secret(pname->valuestring, pvalue, flags))
		replace_member(v, pvalue, st);
	for (cJSON *c = v != NULL ? v->child : NULL; c != NULL; c = c->next) {
		unsigned sub = flags;

		if (cJSON_IsObject(v) && c->string != NULL && member_secret(c->string, c, flags)) {
			c = replace_member(v, c, st);
			continue;
		}
		if (cJSON_IsObject(v) && c->string != NULL && names_keys(c->string)) {
			/* a list of field names stays, any other string goes */
			if (cJSON_IsString(c) && !looks_field(c->valuestring))
				set_redacted(c, st);
			for (cJSON *k = cJSON_IsArray(c) ? c->child : NULL; k != NULL; k = k->next)
				if (cJSON_IsString(k) && !looks_field(k->valuestring) &&
				    strcmp(k->valuestring, REDACTED) != 0)
					set_redacted(k, st);
		}
		if (cJSON_IsString(c)) {
			char *s = hx_redact_text(c->valuestring, looks_form(c->valuestring), st);

			if (strcmp(s, c->valuestring) != 0)
				cJSON_SetValuestring(c, s);
			free(s);
			continue;
		}
		if (c->string != NULL &&
		    (strcmp(c->string, "logprobs") == 0 || strcmp(c->string, "top_logprobs") == 0))
			sub |= HX_REDACT_LOGPROBS; /* "token" is a piece of text there */
		redact_json(c, sub, st);
	}
}

void hx_redact_json(cJSON *v, struct hx_redact_stats *st)
{
	redact_json(v, 0, st);
}
