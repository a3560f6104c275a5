/* provider.c -- fuzz target: requests from bytes through the provider's decision, no socket. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exchange.h"
#include "fuzz_input.h"
#include "journal.h"
#include "provider.h"
#include "scenario.h"

/* Routes of each kind the provider answers: a plain read with pauses, a
 * keyed write with idempotency and reconciliation, chat completions,
 * messages, the model list; the quota model meters them all. */
static const char scenario_text[] =
        "{\"id\": \"fuzz-provider\","
        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"},"
        "                          \"k2\": {\"secret\": \"s2\", \"user\": \"u\"}},"
        "   \"during_pause\": {\"status\": 429},"
        "   \"idempotency\": {\"profile\": \"payment\", \"retention_s\": 3600},"
        "   \"reconciliation\": {\"by_client_reference\": true, \"by_operation\": true},"
        "   \"quota\": {\"per_key\": 6, \"tpm_per_key\": 3000, \"period_s\": 60}},"
        " \"routes\": ["
        "  {\"id\": \"read\", \"method\": \"GET\", \"path\": \"/v1/records/{id}\","
        "   \"responses\": [{\"status\": 429, \"retry_after\": 1, \"times\": 1},"
        "                   {\"status\": 503, \"retry_after\": {\"seconds\": 1, \"form\": "
        "\"imf-fixdate\"}, \"times\": 1},"
        "                   {\"status\": 200, \"body\": {\"id\": \"{id}\"}}]},"
        "  {\"id\": \"write\", \"method\": \"POST\", \"path\": \"/v1/records\","
        "   \"class\": \"idempotent_write\", \"effect\": \"create\","
        "   \"client_reference_field\": \"client_reference\","
        "   \"responses\": [{\"status\": 201, \"body\": {\"id\": \"{provider_id}\"},"
        "                    \"fault\": \"drop_after_commit\", \"times\": 1},"
        "                   {\"status\": 201, \"body\": {\"id\": \"{provider_id}\"}}]},"
        "  {\"id\": \"chat\", \"kind\": \"chat_completions\", \"method\": \"POST\","
        "   \"path\": \"/v1/chat/completions\", \"reply\": \"one two three\","
        "   \"responses\": [{\"shape\": \"pool_exhausted\", \"error_after_chunks\": 1,"
        "                    \"times\": 1}, {\"status\": 200}]},"
        "  {\"id\": \"messages\", \"kind\": \"messages\", \"method\": \"POST\","
        "   \"path\": \"/v1/messages\", \"reply\": \"one two three\","
        "   \"responses\": [{\"status\": 529, \"retry_after\": 1, \"times\": 1},"
        "                   {\"status\": 200, \"stop_after_chunks\": 1, \"times\": 1},"
        "                   {\"status\": 200}]},"
        "  {\"id\": \"models\", \"kind\": \"models\", \"method\": \"GET\", \"path\": "
        "\"/v1/models\","
        "   \"models\": [\"m1\", \"m2\"], \"responses\": [{\"status\": 200}]}]}";

/* Requests in one input; headers and query arguments in one request. */
#define MAX_REQS 8
#define MAX_ARGS 16

/* The line between two requests of an input. */
static const char req_sep[] = "\n---\n";

static struct fa_scenario *scenario;

static void load_scenario(void)
{
	struct fa_err err = { { 0 } };

	if (fa_scenario_parse(scenario_text, strlen(scenario_text), "fuzz-provider.json", &scenario,
	                      &err) != FA_OK) {
		fprintf(stderr, "fuzz: %s\n", err.msg);
		abort();
	}
}

/* Split @s at each @sep into at most @max pieces, NUL-terminating each
 * (the separators are overwritten); returns their number. */
static size_t split(char *s, char sep, char **piece, size_t max)
{
	size_t n = 0;

	while (s != NULL && n < max) {
		char *next = strchr(s, sep);

		if (next != NULL)
			*next++ = '\0';
		piece[n++] = s;
		s = next;
	}
	return n;
}

/*
 * One request from @text (@len bytes, edited in place; NUL after them):
 * "METHOD PATH[?QUERY]" on the first line, "Name: value" header lines up
 * to an empty one, then the body. A query is split at '&' and '='. The
 * body is copied to a buffer of its exact size, so a read past it is
 * caught.
 */
static void ask(struct fa_provider *p, char *text, size_t len, uint64_t conn)
{
	struct fa_header headers[MAX_ARGS], query[MAX_ARGS];
	char *args[MAX_ARGS], *line, *rest, *path, *q, *body = NULL;
	size_t n_headers = 0, n_query = 0, body_len = 0;
	struct fa_resp resp = { 0 };
	struct fa_req req = { 0 };
	char *end = text + len;

	line = text;
	rest = strchr(line, '\n');
	if (rest != NULL)
		*rest++ = '\0';
	path = strchr(line, ' ');
	if (path != NULL)
		*path++ = '\0';
	else
		path = "/";
	q = strchr(path, '?');
	if (q != NULL) {
		size_t n = split(q + 1, '&', args, MAX_ARGS);

		*q = '\0';
		for (size_t i = 0; i < n; i++) {
			char *eq = strchr(args[i], '=');

			if (eq != NULL)
				*eq++ = '\0';
			query[n_query].name = args[i];
			query[n_query++].value = eq != NULL ? eq : "";
		}
	}
	while (rest != NULL && rest < end && *rest != '\n' && n_headers < MAX_ARGS) {
		char *nl = strchr(rest, '\n'), *colon;

		if (nl != NULL)
			*nl++ = '\0';
		colon = strchr(rest, ':');
		if (colon != NULL) {
			*colon++ = '\0';
			while (*colon == ' ')
				colon++;
			headers[n_headers].name = rest;
			headers[n_headers++].value = colon;
		}
		rest = nl;
	}
	if (rest != NULL && rest < end && *rest == '\n')
		rest++;
	if (rest != NULL && rest < end) {
		body_len = (size_t)(end - rest);
		body = malloc(body_len);
		if (body == NULL)
			abort();
		memcpy(body, rest, body_len);
	}

	req.method = line;
	req.path = path;
	req.query = query;
	req.n_query = n_query;
	req.headers = headers;
	req.n_headers = n_headers;
	req.body = body;
	req.body_len = body_len;
	req.conn_id = conn;
	req.t_arrival_us = fa_provider_now_us(p);
	req.wall_us = fa_clock_wall_us();
	fa_provider_decide(p, &req, &resp);
	fa_provider_finish(p, &resp, fa_provider_now_us(p), fa_provider_now_us(p),
	                   FA_DELIVERED_COMPLETE);
	fa_resp_release(&resp);
	free(body);
}

/* A new provider and journal per input, so an input replays alone as it
 * ran: up to MAX_REQS requests separated by a "---" line, in order. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fz_input_str(data, size), *s = text, *end = text + size;
	struct fa_journal *journal = NULL;
	struct fa_provider *p;
	struct fa_err err = { { 0 } };

	if (scenario == NULL)
		load_scenario();
	if (fa_journal_new(NULL, &journal, &err) != FA_OK) {
		fprintf(stderr, "fuzz: %s\n", err.msg);
		abort();
	}
	p = fa_provider_new(scenario, journal, 1, fa_clock_mono_us());
	fa_provider_set_admin(p, false);
	for (uint64_t conn = 1; conn <= MAX_REQS && s <= end; conn++) {
		char *sep = strstr(s, req_sep);
		char *stop = sep != NULL ? sep : end;

		*stop = '\0';
		ask(p, s, (size_t)(stop - s), conn);
		if (sep == NULL)
			break;
		s = sep + strlen(req_sep);
	}
	fa_provider_free(p);
	fa_journal_free(journal);
	free(text);
	return 0;
}
