/* redact.h -- the one rule for what names a credential in an imported capture, and its removal. */
#ifndef HX_REDACT_H
#define HX_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* What a redaction pass replaced. */
struct hx_redact_stats {
	size_t n;         /* parameter values replaced by "redacted", >= 0 */
	size_t members;   /* JSON member values replaced by "redacted", >= 0 */
	size_t userinfo;  /* "user:password@" parts removed from URLs, >= 0 */
	char names[160];  /* the parameter names redacted, ", "-separated, cut to fit */
};

/*
 * Whether a header, a JSON body member or a query parameter named @name
 * (@len bytes, compared without letter case) may hold a credential: a
 * name holding apikey, api-key, api_key, token (not "tokens", the
 * counts of LLM APIs: max_tokens), secret, password, passwd, auth
 * (Authorization, WWW-Authenticate, X-Auth), session, credential,
 * bearer, cookie, signature, access_key, private_key (or "-", or no
 * separator), or a name that is key, pwd or sig; with @in_url (a query
 * or fragment parameter) also code (an OAuth authorization code), which
 * in a body is an error's code. Access-Control-* (CORS) names are never
 * credentials: their values name headers and methods.
 */
bool hx_redact_name(const char *name, size_t len, bool in_url);

/*
 * Replace, in @v at any depth, the whole value (string, number, object,
 * array) of every member hx_redact_name() matches with the string
 * "redacted"; in every other string, redact URLs as hx_redact_text()
 * does. Counts into @st (may be NULL): members, and parameters in strings.
 */
void hx_redact_json(cJSON *v, struct hx_redact_stats *st);

/*
 * @text (a URL, a query "a=1&b=2" after its "?", a header value or a
 * body string that may hold URLs) with the value of every parameter
 * after "?", "#" or "&" whose name (percent-decoded) hx_redact_name()
 * matches with @in_url made "redacted" (the value ends at "&", "#", a
 * blank, "<", ">", a quote or the end), and every "://user:pass@" made
 * "://". With @is_query, @text is a query: its start begins a
 * parameter too. A new string (free()); counts into @st (may be NULL).
 */
char *hx_redact_text(const char *text, bool is_query, struct hx_redact_stats *st);

/* The value of hex digit @c (0..15, either case), or -1 when @c is none:
 * for reading %-escapes. */
int hx_redact_hexval(int c);

#endif
