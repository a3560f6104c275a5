/* target.c -- a request's target and framing as RFC 9112 has them: the path to route by, and what
 * is malformed. */
#include "target.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

const char *fa_target_path(const char *url)
{
	const char *p;

	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8;
	else
		return url;
	p = strchr(p, '/');
	return p != NULL ? p : "/";
}

static size_t count(const struct fa_header *h, size_t n, const char *name, const char **first,
                    bool *differ)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(h[i].name, name) != 0)
			continue;
		if (k == 0)
			*first = h[i].value;
		else if (strcmp(h[i].value, *first) != 0)
			*differ = true;
		k++;
	}
	return k;
}

/* Does the decoded @path hold a "." or ".." segment? */
static bool dot_segment(const char *path)
{
	for (const char *s = path; s != NULL; s = strchr(s, '/')) {
		size_t len;

		s++;
		len = strcspn(s, "/");
		if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return true;
	}
	return false;
}

/* Is @path @reserved ("/x/") or under it, or "/x" itself? */
static bool under(const char *path, const char *reserved)
{
	size_t n = strlen(reserved);

	return n > 1 && strncmp(path, reserved, n - 1) == 0 &&
	       (path[n - 1] == '/' || path[n - 1] == '\0');
}

const char *fa_target_malformed(const char *raw_uri, const char *path, const char *version,
                                const struct fa_header *headers, size_t n_headers,
                                const char *reserved)
{
	const char *first = NULL, *raw = fa_target_path(raw_uri);
	size_t raw_len = strcspn(raw, "?");
	bool differ = false;

	if (version != NULL && strcmp(version, "HTTP/1.1") == 0 &&
	    count(headers, n_headers, "Host", &first, &differ) == 0)
		return "an HTTP/1.1 request without a Host header (RFC 9112, section 3.2)";
	first = NULL;
	differ = false;
	if (count(headers, n_headers, "Content-Length", &first, &differ) > 1 && differ)
		return "two different Content-Length values (RFC 9112, section 6.3)";
	if (first != NULL && count(headers, n_headers, "Transfer-Encoding", &first, &differ) > 0)
		return "Content-Length together with Transfer-Encoding (RFC 9112, section 6.3)";
	for (size_t i = 0; i + 2 < raw_len; i++)
		if (raw[i] == '%' && raw[i + 1] == '0' && raw[i + 2] == '0')
			return "a path that holds %00, a NUL byte";
	if (dot_segment(path))
		return "a path with a \".\" or \"..\" segment (RFC 3986, section 3.3)";
	if (reserved != NULL && under(path, reserved) && !under(raw, reserved))
		return "a path that spells the reserved /_fakeapi/ prefix in percent-encoding";
	return NULL;
}
