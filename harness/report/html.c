/* html.c -- text put on an HTML page: escaped, printable, without a scenario's canaries. */
#include "html.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_facts.h"
#include "utf8.h"

/* HTML5 calls C1 controls and noncharacters parse errors even as text:
 * fa_utf8_printable() leaves them, so they become '?' here. */
static bool unprintable(uint32_t cp)
{
	return (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xfdd0 && cp <= 0xfdef) ||
	       (cp & 0xfffe) == 0xfffe;
}

void hx_html_put(FILE *f, const char *s)
{
	const char *text = s ? s : "-";
	char *plain = fa_utf8_printable(text, strlen(text));
	const char *p = plain;
	size_t left = strlen(plain), n;
	uint32_t cp = 0;

	while (left > 0) {
		n = fa_utf8_seq(p, left, &cp);
		if (n == 0) { /* cannot happen after fa_utf8_printable(); kept safe */
			fputc('?', f);
			p++;
			left--;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (unprintable(cp))
				fputc('?', f);
			else
				fwrite(p, 1, n, f);
			break;
		}
		p += n;
		left -= n;
	}
	free(plain);
}

void hx_html_put_client(FILE *f, const struct hx_scenario_result *sc, const char *text)
{
	char *clean = hx_report_scrub(sc, text);

	hx_html_put(f, clean);
	free(clean);
}
