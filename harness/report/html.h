/* html.h -- text put on an HTML page: escaped, printable, without a scenario's canaries. */
#ifndef HX_HTML_H
#define HX_HTML_H

#include <stdio.h>

#include "result.h"

/*
 * Write @s on @f as HTML text or an attribute value (the same escaping
 * serves both): & < > " ' as character references; control characters
 * (C0, DEL and C1), noncharacters and bytes that are not UTF-8 as '?', as
 * the text report prints them, so the page is valid HTML5 whatever a
 * client sent. NULL is written as "-".
 */
void hx_html_put(FILE *f, const char *s);

/* Write @text, a client's words in scenario @sc, as hx_html_put() does,
 * after replacing its canaries (hx_report_scrub; @sc NULL: none known). */
void hx_html_put_client(FILE *f, const struct hx_scenario_result *sc, const char *text);

#endif
