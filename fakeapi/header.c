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

enum fa_rc fa_header_read_list(struct fa_schema *s, const cJSON *obj, struct fa_header **out,
                               size_t *n)
{
	enum fa_rc rc;
	size_t i = 0, mark;

	*out = NULL;
	*n = 0;
	rc = fa_schema_unique(s, obj);
	if (rc != FA_OK)
		return rc;
	*n = fa_schema_count(obj);
	*out = fa_xcalloc(*n, sizeof(**out));
	for (const cJSON *h = obj->child; h != NULL; h = h->next, i++) {
		if (!fa_header_is_token(h->string))
			return fa_schema_fail(
			        s,
			        "expected header names that are tokens (RFC 9110 §5.6.2), got %s",
			        fa_schema_quote(h->string).s);
		mark = fa_schema_enter(s, h->string);
		rc = fa_schema_value(s, h, &value_field, NULL);
		if (rc == FA_OK && !value_clean(h->valuestring))
			rc = fa_schema_fail_got(s, h, "string without control characters");
		fa_schema_leave(s, mark);
		if (rc != FA_OK)
			return rc;
		(*out)[i].name = fa_xstrdup(h->string);
		(*out)[i].value = fa_xstrdup(h->valuestring);
	}
	return FA_OK;
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
