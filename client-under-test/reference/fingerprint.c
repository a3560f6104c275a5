/* fingerprint.c -- the sanitised names of a request: provider, endpoint template, fingerprint. */
#include "fingerprint.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "digest.h"

/* Where "scheme://" ends in @url, or NULL when it has no scheme. */
static const char *after_scheme(const char *url)
{
	const char *sep = strstr(url, "://");

	if (sep == NULL || sep == url)
		return NULL;
	for (const char *c = url; c < sep; c++)
		if (!isalpha((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '+' &&
		    *c != '-' && *c != '.')
			return NULL;
	return sep + 3;
}

/* Is segment @s (@len bytes) all digits? */
static bool numeric(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Is segment @s (@len bytes) a UUID: 8-4-4-4-12 hex digits? */
static bool uuid_like(const char *s, size_t len)
{
	if (len != 36)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

char *ref_fingerprint_endpoint(const char *url)
{
	const char *p = after_scheme(url);
	size_t plen, i = 0, o = 0;
	char *out;

	/* The path starts at the first '/' after the authority; a url
	 * without a scheme is taken as a path already. */
	if (p != NULL)
		p += strcspn(p, "/?#");
	else
		p = url;
	plen = strcspn(p, "?#");
	if (plen == 0 || p[0] != '/')
		return fa_xstrdup("/");
	/* "{id}" (4 bytes) never replaces fewer than 1 byte: 4 x is enough. */
	out = fa_xmalloc(4 * plen + 1);
	while (i < plen) {
		size_t seg;

		out[o++] = p[i++]; /* the '/' */
		seg = strcspn(p + i, "/?#");
		if (seg > plen - i)
			seg = plen - i;
		if (numeric(p + i, seg) || uuid_like(p + i, seg)) {
			memcpy(out + o, "{id}", 4);
			o += 4;
		} else {
			memcpy(out + o, p + i, seg);
			o += seg;
		}
		i += seg;
	}
	out[o] = '\0';
	return out;
}

char *ref_fingerprint_origin(const char *url)
{
	const char *host = after_scheme(url);
	const char *end, *at, *port;
	size_t slen;
	char *scheme, *out;

	if (host == NULL)
		return NULL;
	end = host + strcspn(host, "/?#");
	/* "user:secret@host": the userinfo may hold a credential. */
	at = memchr(host, '@', (size_t)(end - host));
	while (at != NULL) {
		host = at + 1;
		at = memchr(host, '@', (size_t)(end - host));
	}
	if (end == host)
		return NULL;
	slen = (size_t)(strstr(url, "://") - url);
	scheme = fa_xstrndup(url, slen);
	for (char *c = scheme; *c != '\0'; c++)
		*c = (char)tolower((unsigned char)*c);
	/* A port is a ':' after the host (after the ']' of an IPv6 literal). */
	port = host[0] == '[' ? memchr(host, ']', (size_t)(end - host)) : host;
	port = port != NULL ? memchr(port, ':', (size_t)(end - port)) : NULL;
	if (port != NULL && port + 1 < end)
		out = fa_xasprintf("%s://%.*s", scheme, (int)(end - host), host);
	else
		out = fa_xasprintf("%s://%.*s:%s", scheme,
		                   (int)((port != NULL ? port : end) - host), host,
		                   strcmp(scheme, "https") == 0 ? "443" : "80");
	free(scheme);
	return out;
}

static int by_name(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string != NULL ? x->string : "", y->string != NULL ? y->string : "");
}

/* Sort the members of every object in @v by name, recursively. */
static void sort_members(cJSON *v)
{
	cJSON **items, *c;
	size_t n = 0;

	cJSON_ArrayForEach(c, v) sort_members(c);
	if (!cJSON_IsObject(v))
		return;
	cJSON_ArrayForEach(c, v) n++;
	if (n < 2)
		return;
	items = fa_xcalloc(n, sizeof(*items));
	n = 0;
	while (v->child != NULL)
		items[n++] = cJSON_DetachItemViaPointer(v, v->child);
	qsort(items, n, sizeof(*items), by_name);
	/* Appending to an object keeps each item's name. */
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(v, items[i]);
	free(items);
}

void ref_fingerprint(const char *method, const char *endpoint, const char *body,
                     char out[REF_FINGERPRINT_LEN])
{
	char hex[FA_SHA256_HEX];
	cJSON *doc = NULL;
	char *canon = NULL, *text;

	if (body != NULL) {
		doc = cJSON_ParseWithLengthOpts(body, strlen(body), NULL, 0);
		if (doc != NULL) {
			sort_members(doc);
			canon = fa_xcheck(cJSON_PrintUnformatted(doc), "cJSON_PrintUnformatted");
		}
	}
	text = fa_xasprintf("%s\n%s\n%s", method, endpoint,
	                    canon != NULL  ? canon
	                    : body != NULL ? body
	                                   : "");
	fa_digest_sha256_hex(text, strlen(text), hex);
	/* The text holds the body: do not leave it in freed memory. */
	explicit_bzero(text, strlen(text));
	free(text);
	if (canon != NULL) {
		explicit_bzero(canon, strlen(canon));
		cJSON_free(canon);
	}
	cJSON_Delete(doc);
	memcpy(out, "sha256:", 7);
	memcpy(out + 7, hex, FA_SHA256_HEX);
}
