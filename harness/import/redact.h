/* redact.h -- the one rule for what names a credential in an imported capture, and its removal. */
#ifndef HX_REDACT_H
#define HX_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* What a redaction pass replaced. */
struct hx_redact_stats {
	size_t n;        /* parameter values replaced by "redacted", >= 0 */
	size_t members;  /* JSON member values replaced by "redacted", >= 0 */
	size_t userinfo; /* "user:password@" parts removed from URLs, >= 0 */
	size_t text;     /* "Bearer" and "Authorization:" values in free text, >= 0 */
	size_t shaped;   /* values redacted for their shape (hx_redact_is_secret_value), >= 0 */
	size_t segments; /* path segments made "redacted-HASH" (hx_redact_path), >= 0 */
	size_t matrix;   /* ";name=value" path parameters redacted (hx_redact_path), >= 0 */
	char names[160]; /* the parameter names redacted, ", "-separated, cut to fit */
};

/* What is known of a name's value, for hx_redact_is_credential(). */
enum {
	HX_REDACT_URL = 1,      /* a query or fragment parameter */
	HX_REDACT_NUMBER = 2,   /* the value is a number (digits in a URL) */
	HX_REDACT_LOGPROBS = 4, /* a member below "logprobs" or "top_logprobs" */
};

/*
 * Whether a header, a JSON body member or a query parameter named @name
 * (@len bytes, any letter case) holds a credential, judged on its words
 * (split at every byte that is no letter or digit, between letters and
 * digits, and at camelCase boundaries: "tokenString" is token, string):
 * - a strong word anywhere (authorization, authenticate, authentication,
 *   password, passwd, passphrase, secret, apikey, cookie, bearer,
 *   credential, signature, assertion, privatekey, accesskey, sessionid,
 *   accesstoken, refreshtoken, or a word ending in one: "clientsecret";
 *   jwt, otp, hmac, pwd alone) or a pair (api key, private key, access
 *   key, secret key, session id);
 * - a word token or auth (or ending in one: "accesstoken", "oauth"),
 *   session, sid, sig, pin or nonce, unless the last word says the name
 *   is about a credential (count, budget, limit, provider, type, url,
 *   name, id, at, time, ttl, expires, length, size, format, version...:
 *   "token_budget", "session_count"); a last word "token" after page,
 *   pagination, next, prev, previous, continuation or cursor is a
 *   cursor, and any "token" below logprobs a piece of text;
 * - a last word "tokens" (or ending in it), unless the value is a number,
 *   it is below logprobs or a word says a count (max, min, limit,
 *   ratelimit, remaining, reset, used, usage, total, count, budget,
 *   input, output, prompt, completion, cached, reasoning, num, n);
 * - the whole name key, or with HX_REDACT_URL code (an OAuth code; in a
 *   body an error's code).
 * @flags: HX_REDACT_*. Access-Control-* (CORS) names are never
 * credentials: their values name headers and methods. Source:
 * docs/import.md, Credentials.
 */
bool hx_redact_is_credential(const char *name, size_t len, unsigned flags);

/* hx_redact_is_credential() of a name whose value is a string, with
 * HX_REDACT_URL when @in_url. */
bool hx_redact_name(const char *name, size_t len, bool in_url);

/*
 * Replace, in @v at any depth, the whole value (string, number, object,
 * array) of every member hx_redact_is_credential() matches with the
 * string "redacted"; so too the "value" of an object {"name": N,
 * "value": V} whose N matches (HAR headers, cookies, form parameters);
 * in a member whose last word is "keys", strings that are no field name
 * (letters, "_", "-", "." only). Every other string goes through
 * hx_redact_text(), as a query when it looks form-encoded ("a=1&b=2", no
 * blank, no "://"). Counts into @st (may be NULL).
 */
void hx_redact_json(cJSON *v, struct hx_redact_stats *st);

/*
 * @text (a URL, a query "a=1&b=2" after its "?", a header value or a
 * body string that may hold URLs) with the value of every parameter
 * after "?", "#", "&" or ";" (and blanks) whose name (percent-decoded) hx_redact_name()
 * matches with @in_url made "redacted" (the value ends at "&", "#", a
 * blank, "<", ">", a quote or the end), every "://user:pass@" made
 * "://", every "Bearer <token>" made "Bearer redacted" and every
 * "Authorization: ..." made "Authorization: redacted" to the end of
 * its line. With @is_query, @text is a query: its start begins a
 * parameter too. A new string (free()); counts into @st (may be NULL).
 */
char *hx_redact_text(const char *text, bool is_query, struct hx_redact_stats *st);

/*
 * Whether the @len bytes at @s look like a credential whatever names them:
 * a JWT (three base64url segments split by ".", the first "eyJ", the
 * encoding of a JSON header's opening {"); a payment-API key (sk_live_,
 * sk_test_, rk_live_, rk_test_ and 8 or more of [A-Za-z0-9]); an
 * OpenAI-style key ("sk-" and 32 or more of [A-Za-z0-9_-]); an AWS access
 * key id (AKIA or ASIA and 16 of [A-Z0-9], 20 in all); or a long random
 * token: 32 or more of [A-Za-z0-9_-], letters and digits both, whose
 * Shannon entropy is above HX_REDACT_ENTROPY bits per character (hex
 * digests and UUIDs, 4 bits at most, stay: they name objects).
 */
bool hx_redact_is_secret_value(const char *s, size_t len);

/* The entropy, bits per character, above which a long token is taken
 * for a random credential: above hex (4.0), below random base64url (~4.6
 * for 32 characters). */
#define HX_REDACT_ENTROPY 4.2

/*
 * @path (a URL path, no query) with each segment that
 * hx_redact_is_secret_value() matches made "redacted-HASH" (8 hex digits
 * of its FNV-1a hash: the same secret gives the same segment, two give
 * two routes) and, in each ";name=value" matrix parameter, a value whose
 * name is a credential's (jsessionid...) or whose shape is one's made
 * "redacted". Counts into @st (may be NULL). A new string.
 */
char *hx_redact_path(const char *path, struct hx_redact_stats *st);

/* All that @st counts as redacted, >= 0. */
size_t hx_redact_total(const struct hx_redact_stats *st);

#endif
