/* header.c -- header lists as scenario files give them: read, find, free. */
#include "header.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

static const struct fa_field value_field = FA_F_CHECK(NULL, FA_SCHEMA_STRING, 0);

bool fa_header_is_token(const char *name)
{
	return fa_schema_charset_ok(name, "!#$%&'*+.^_`|~-", strlen(name));
}

/* HTAB is the one control character a field value may hold (RFC 9110
 * §5.5); CR or LF would end the field early. */
static bool value_clean(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7F)
			return false;
	}
	return true;
}

/* Whether @name is one a response sends once: Retry-After is a single
 * value (RFC 9110 §10.2.3), and so is OpenAI's retry-after-ms; two would
 * leave a client to pick one and the journal to guess which. */
static bool single_valued(const char *name)
{
	return strcasecmp(name, "Retry-After") == 0 || strcasecmp(name, "retry-after-ms") == 0;
}

/* Check the value @v (at the current path) and append it to *@out. */
static enum fa_rc add_value(struct fa_schema *s, const char *name, const cJSON *v,
                            struct fa_header **out, size_t *n)
{
	enum fa_rc rc = fa_schema_value(s, v, &value_field, NULL);

	if (rc == FA_OK && !value_clean(v->valuestring))
		rc = fa_schema_fail_got(s, v, "string without control characters");
	if (rc != FA_OK)
		return rc;
	*out = fa_xrealloc(*out, (*n + 1) * sizeof(**out));
	(*out)[*n].name = fa_xstrdup(name);
	(*out)[*n].value = fa_xstrdup(v->valuestring);
	(*n)++;
	return FA_OK;
}

enum fa_rc fa_header_read_list(struct fa_schema *s, const cJSON *obj, bool repeat,
                               struct fa_header **out, size_t *n)
{
	enum fa_rc rc = FA_OK;
	size_t mark;

	*out = NULL;
	*n = 0;
	rc = fa_schema_unique(s, obj);
	if (rc != FA_OK)
		return rc;
	for (const cJSON *h = obj->child; h != NULL && rc == FA_OK; h = h->next) {
		if (!fa_header_is_token(h->string))
			return fa_schema_fail(
			        s,
			        "expected header names that are tokens (RFC 9110 §5.6.2), got %s",
			        fa_schema_quote(h->string).s);
		mark = fa_schema_enter(s, h->string);
		if (!repeat || cJSON_IsString(h)) {
			rc = add_value(s, h->string, h, out, n);
		} else if (single_valued(h->string) && cJSON_IsArray(h)) {
			rc = fa_schema_fail_got(s, h, "string (%s has one value, RFC 9110 §10.2.3)",
			                        h->string);
		} else if (h->child == NULL || !cJSON_IsArray(h)) {
			rc = fa_schema_fail_got(s, h, "string or non-empty array of strings");
		} else {
			size_t i = 0;

			for (const cJSON *v = h->child; v != NULL && rc == FA_OK; v = v->next) {
				size_t m = fa_schema_enter_index(s, i++);

				rc = add_value(s, h->string, v, out, n);
				fa_schema_leave(s, m);
			}
		}
		fa_schema_leave(s, mark);
	}
	return rc;
}

const struct fa_header *fa_header_find(const struct fa_header *h, size_t n, const char *name)
{
	for (size_t i = 0; h != NULL && i < n; i++) {
		if (h[i].name != NULL && strcasecmp(h[i].name, name) == 0)
			return &h[i];
	}
	return NULL;
}

void fa_header_free_list(struct fa_header *h, size_t n)
{
	for (size_t i = 0; h != NULL && i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}
