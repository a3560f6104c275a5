/* test_fault.c -- the fault vocabulary, response faults in a scenario, holds on a live server. */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "clock.h"
#include "fault.h"
#include "journal.h"
#include "provider.h"
#include "scenario.h"
#include "server.h"

#define GOOD_FULL "tests/data/good/full.json"

static void fault__every_fault_has_its_journal_name(void)
{
	static const struct {
		enum fa_fault f;
		const char *name;
	} names[] = {
		{ FA_FAULT_RESPOND, "respond" },
		{ FA_FAULT_DELAY, "delay" },
		{ FA_FAULT_DURING_PAUSE, "during_pause" },
		{ FA_FAULT_UNAUTHORIZED, "unauthorized" },
		{ FA_FAULT_NO_ROUTE, "no_route" },
		{ FA_FAULT_TOO_LARGE, "too_large" },
		{ FA_FAULT_INCOMPLETE, "incomplete_request" },
		{ FA_FAULT_DROP_BEFORE_COMMIT, "drop_before_commit" },
		{ FA_FAULT_DROP_AFTER_COMMIT, "drop_after_commit" },
		{ FA_FAULT_RESET, "reset" },
		{ FA_FAULT_PARTIAL_BODY, "partial_body" },
		{ FA_FAULT_CLOSE_IDLE, "close_idle" },
		{ FA_FAULT_REPLAY, "replay" },
		{ FA_FAULT_IDEM_CONFLICT, "idempotency_conflict" },
		{ FA_FAULT_IDEM_REUSED, "idempotency_reused" },
		{ FA_FAULT_IDEM_MISSING, "idempotency_missing" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CU_ASSERT_STRING_EQUAL(fa_fault_str(names[i].f), names[i].name);
	CU_ASSERT_STRING_EQUAL(fa_fault_str((enum fa_fault)999), "unknown");
}

static void fault__journal_names_the_fault_applied(void)
{
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_RESPOND, 0), FA_FAULT_RESPOND);
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_RESPOND, 1), FA_FAULT_DELAY);
	/* a delay before a drop is the drop's */
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_DROP_AFTER_COMMIT, 500), FA_FAULT_DROP_AFTER_COMMIT);
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_DROP_BEFORE_COMMIT, 0), FA_FAULT_DROP_BEFORE_COMMIT);
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_RESET, 0), FA_FAULT_RESET);
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_PARTIAL_BODY, 0), FA_FAULT_PARTIAL_BODY);
	CU_ASSERT_EQUAL(fa_fault_of(FA_RESP_CLOSE_IDLE, 0), FA_FAULT_CLOSE_IDLE);
}

static void fault__commits_after_the_commit_or_on_a_2xx_only(void)
{
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_RESPOND, 201));
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_RESPOND, 200));
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_RESPOND, 299));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_RESPOND, 199));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_RESPOND, 300));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_RESPOND, 429));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_RESPOND, 503));
	/* the ambiguous ones commit whatever status the script names */
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_DROP_AFTER_COMMIT, 503));
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_RESET, 201));
	CU_ASSERT_TRUE(fa_fault_commits(FA_RESP_PARTIAL_BODY, 500));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_DROP_BEFORE_COMMIT, 201));
	CU_ASSERT_FALSE(fa_fault_commits(FA_RESP_CLOSE_IDLE, 201));
}

static void fault__close_idle_closes_only_a_reused_connection(void)
{
	struct fa_resp r = { .fault = FA_RESP_CLOSE_IDLE, .delay_ms = 300, .status = 200 };

	CU_ASSERT_EQUAL(fa_fault_settle(&r, 0), FA_FAULT_DELAY);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_RESPOND);
	CU_ASSERT_EQUAL(r.delay_ms, 300);

	r = (struct fa_resp){ .fault = FA_RESP_CLOSE_IDLE, .delay_ms = 300, .status = 200 };
	CU_ASSERT_EQUAL(fa_fault_settle(&r, 2), FA_FAULT_CLOSE_IDLE);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_CLOSE_IDLE);
	CU_ASSERT_EQUAL(r.delay_ms, 0); /* at once */

	r = (struct fa_resp){ .fault = FA_RESP_RESET, .hold = true };
	CU_ASSERT_EQUAL(fa_fault_settle(&r, 5), FA_FAULT_RESET);
	CU_ASSERT_TRUE(r.hold); /* only close_idle depends on the connection */
}

static void fault__partial_body_is_never_the_whole_body(void)
{
	CU_ASSERT_EQUAL(fa_fault_partial_len(-1, 10), 5);
	CU_ASSERT_EQUAL(fa_fault_partial_len(-1, 11), 5);
	CU_ASSERT_EQUAL(fa_fault_partial_len(-1, 1), 0);
	CU_ASSERT_EQUAL(fa_fault_partial_len(0, 10), 0);
	CU_ASSERT_EQUAL(fa_fault_partial_len(3, 10), 3);
	CU_ASSERT_EQUAL(fa_fault_partial_len(9, 10), 9);
	CU_ASSERT_EQUAL(fa_fault_partial_len(10, 10), 9);
	CU_ASSERT_EQUAL(fa_fault_partial_len(1048576, 10), 9);
	CU_ASSERT_EQUAL(fa_fault_partial_len(5, 0), 0);
}

static void fault__respond_carries_the_entry_fault_and_hold(void)
{
	struct fa_response_spec spec = {
		.status = 201,
		.fault = FA_RESP_PARTIAL_BODY,
		.fault_bytes = 7,
		.hold = true,
		.hold_ms = 2500,
		.delay_ms = 40,
	};
	struct fa_resp r = { 0 };

	spec.body = cJSON_CreateString("0123456789");
	fa_fault_respond(&spec, NULL, 0, fa_clock_wall_us(), -1, &r);
	CU_ASSERT_EQUAL(r.status, 201);
	CU_ASSERT_EQUAL(r.body_len, 12);
	CU_ASSERT_EQUAL(r.fault, FA_RESP_PARTIAL_BODY);
	CU_ASSERT_EQUAL(r.fault_bytes, 7);
	CU_ASSERT_TRUE(r.hold);
	CU_ASSERT_EQUAL(r.hold_ms, 2500);
	CU_ASSERT_EQUAL(r.delay_ms, 40);
	fa_resp_release(&r);
	cJSON_Delete(spec.body);
}

static void fault__scenario_fields_land_in_the_response(void)
{
	struct fa_scenario *sc = NULL;
	struct fa_err err = { { 0 } };
	const struct fa_response_spec *r;

	CU_ASSERT_EQUAL_FATAL(fa_scenario_load(GOOD_FULL, &sc, &err), FA_OK);
	CU_ASSERT_EQUAL_FATAL(sc->n_routes, 3);
	CU_ASSERT_STRING_EQUAL_FATAL(sc->routes[1].id, "create-record");
	r = &sc->routes[1].responses[0];
	CU_ASSERT_EQUAL(r->fault, FA_RESP_PARTIAL_BODY);
	CU_ASSERT_EQUAL(r->fault_bytes, 4);
	CU_ASSERT_TRUE(r->hold);
	CU_ASSERT_EQUAL(r->hold_ms, 1500);
	/* defaults */
	r = &sc->routes[0].responses[0];
	CU_ASSERT_EQUAL(r->fault, FA_RESP_RESPOND);
	CU_ASSERT_EQUAL(r->fault_bytes, -1);
	CU_ASSERT_FALSE(r->hold);
	CU_ASSERT_EQUAL(r->hold_ms, 60000);
	CU_ASSERT_EQUAL(sc->during_pause.fault, FA_RESP_RESPOND);
	CU_ASSERT_FALSE(sc->during_pause.hold);
	fa_scenario_free(sc);
}

/* A live server on a scenario whose POST /w is held, then dropped after
 * the commit (and GET /d is held, then delayed 200 ms, then answered). */
static const char held_text[] =
        "{\"id\": \"held\","
        " \"provider\": {\"keys\": {\"k1\": {\"secret\": \"s1\", \"user\": \"u\"}}},"
        " \"routes\": [{\"id\": \"w\", \"method\": \"POST\", \"path\": \"/w\","
        "   \"responses\": [{\"status\": 201, \"body\": {\"id\": \"r1\"},"
        "                    \"fault\": \"drop_after_commit\", \"hold\": true}]},"
        "  {\"id\": \"d\", \"method\": \"GET\", \"path\": \"/d\","
        "   \"responses\": [{\"status\": 200, \"hold\": true, \"delay_ms\": 200}]}]}";

struct live {
	struct fa_scenario *sc;
	struct fa_journal *j;
	struct fa_provider *p;
	struct fa_server *s;
};

static void live_start(struct live *l)
{
	struct fa_err err = { { 0 } };
	struct fa_server_opts o = { .bind = "127.0.0.1", .port = 0, .threads = 2 };

	memset(l, 0, sizeof(*l));
	CU_ASSERT_EQUAL_FATAL(
	        fa_scenario_parse(held_text, strlen(held_text), "held.json", &l->sc, &err), FA_OK);
	CU_ASSERT_EQUAL_FATAL(fa_journal_new(NULL, &l->j, &err), FA_OK);
	l->p = fa_provider_new(l->sc, l->j, 1, fa_clock_mono_us());
	CU_ASSERT_EQUAL_FATAL(fa_server_start(l->p, &o, &l->s, &err), FA_OK);
}

/* Stop everything; returns the journal's entries (caller releases). */
static struct fa_attempt *live_stop(struct live *l, size_t *n)
{
	struct fa_attempt *e = NULL;

	fa_server_stop(l->s);
	fa_journal_snapshot(l->j, 0, &e, n);
	fa_provider_free(l->p);
	fa_journal_free(l->j);
	fa_scenario_free(l->sc);
	return e;
}

static void free_entries(struct fa_attempt *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fa_attempt_release(&e[i]);
	free(e);
}

/* A connected socket with @req sent, or -1. */
static int send_raw(struct live *l, const char *req)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		                   .sin_port = htons((uint16_t)fa_server_port(l->s)),
		                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    send(fd, req, strlen(req), 0) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Bytes read from @fd until EOF (or 5 s), into @buf; -1 on an error. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (got + 1 < len && poll(&pfd, 1, 5000) == 1) {
		ssize_t n = recv(fd, buf + got, len - 1 - got, 0);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

/* Wait (5 s at most) until @task has @want held answers. */
static bool wait_held(struct live *l, const char *task, size_t want)
{
	int64_t end = fa_clock_mono_us() + 5000000;

	while (fa_server_held(l->s, task) != want) {
		if (fa_clock_mono_us() > end)
			return false;
		usleep(2000);
	}
	return true;
}

static void fault__held_answer_waits_for_release_then_drops(void)
{
	static const char req[] = "POST /w?fa_task=t1 HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer s1\r\nContent-Length: 2\r\n\r\n{}";
	struct live l;
	struct fa_attempt *e;
	struct pollfd pfd;
	char buf[512];
	size_t n = 0;
	int fd;

	live_start(&l);
	fd = send_raw(&l, req);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_TRUE_FATAL(wait_held(&l, "t1", 1));
	CU_ASSERT_EQUAL(fa_server_held(l.s, NULL), 1);
	CU_ASSERT_EQUAL(fa_server_held(l.s, "t2"), 0);
	/* held: nothing on the wire yet */
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	CU_ASSERT_EQUAL(poll(&pfd, 1, 100), 0);
	CU_ASSERT_EQUAL(fa_server_release(l.s, "t2"), 0);
	CU_ASSERT_EQUAL(fa_server_release(l.s, "t1"), 1);
	CU_ASSERT_EQUAL(fa_server_held(l.s, "t1"), 0);
	CU_ASSERT_EQUAL(fa_server_release(l.s, "t1"), 0); /* never twice */
	/* then the fault: a clean EOF with no byte of an answer */
	CU_ASSERT_EQUAL(read_all(fd, buf, sizeof(buf)), 0);
	close(fd);
	e = live_stop(&l, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(e[0].task, "t1");
	CU_ASSERT_STRING_EQUAL(e[0].fault, "drop_after_commit");
	CU_ASSERT_EQUAL(e[0].delivered, FA_DELIVERED_DROPPED);
	CU_ASSERT_EQUAL(e[0].status, 0);
	CU_ASSERT_EQUAL(e[0].t_response_us, -1);
	CU_ASSERT(e[0].t_done_us - e[0].t_arrival_us >= 100000);
	free_entries(e, n);
}

static void fault__released_hold_still_waits_out_its_delay(void)
{
	static const char req[] = "GET /d HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer s1\r\n\r\n";
	struct live l;
	struct fa_attempt *e;
	int64_t released;
	char buf[512];
	size_t n = 0;
	int fd;

	live_start(&l);
	fd = send_raw(&l, req);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_TRUE_FATAL(wait_held(&l, NULL, 1));
	released = fa_provider_now_us(l.p);
	CU_ASSERT_EQUAL(fa_server_release(l.s, NULL), 1);
	CU_ASSERT_EQUAL(fa_server_held(l.s, NULL), 0); /* delayed, no longer held */
	CU_ASSERT(read_all(fd, buf, sizeof(buf)) > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "HTTP/1.1 200 OK"));
	close(fd);
	e = live_stop(&l, &n);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(e[0].fault, "delay");
	CU_ASSERT_EQUAL(e[0].status, 200);
	CU_ASSERT(e[0].t_response_us - released >= 200000);
	free_entries(e, n);
}

static void fault__stop_lets_a_held_answer_go_and_journals_it(void)
{
	static const char req[] = "POST /w HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer s1\r\nContent-Length: 2\r\n\r\n{}";
	struct live l;
	struct fa_attempt *e;
	size_t n = 0;
	int fd;

	live_start(&l);
	fd = send_raw(&l, req);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_TRUE_FATAL(wait_held(&l, NULL, 1));
	e = live_stop(&l, &n);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(e[0].fault, "drop_after_commit");
	CU_ASSERT_EQUAL(e[0].delivered, FA_DELIVERED_DROPPED);
	free_entries(e, n);
}

/* Wait (5 s at most) until the server's load satisfies @ok. */
static bool wait_load(struct live *l, struct fa_server_load *got,
                      bool (*ok)(const struct fa_server_load *))
{
	int64_t end = fa_clock_mono_us() + 5000000;

	for (;;) {
		fa_server_load(l->s, got);
		if (ok(got))
			return true;
		if (fa_clock_mono_us() > end)
			return false;
		usleep(2000);
	}
}

static bool one_open(const struct fa_server_load *l)
{
	return l->connections == 1;
}

static bool one_parked(const struct fa_server_load *l)
{
	return l->parked == 1;
}

static bool none_open(const struct fa_server_load *l)
{
	return l->connections == 0 && l->requests == 0;
}

static void fault__load_counts_open_connections_requests_and_parked_ones(void)
{
	static const char req[] = "POST /w HTTP/1.1\r\nHost: x\r\n"
	                          "Authorization: Bearer s1\r\nContent-Length: 2\r\n\r\n{}";
	struct sockaddr_in sin = { .sin_family = AF_INET,
		                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct fa_server_load ld;
	struct live l;
	struct fa_attempt *e;
	size_t n = 0;
	int idle, fd;

	live_start(&l);
	fa_server_load(l.s, &ld);
	CU_ASSERT_FALSE(ld.queued);
	CU_ASSERT_EQUAL(ld.connections, 0);
	CU_ASSERT_EQUAL(ld.opened, 0);
	/* a connection that sends nothing: open, no request */
	sin.sin_port = htons((uint16_t)fa_server_port(l.s));
	idle = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(idle >= 0);
	CU_ASSERT_EQUAL_FATAL(connect(idle, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CU_ASSERT_TRUE_FATAL(wait_load(&l, &ld, one_open));
	CU_ASSERT_EQUAL(ld.requests, 0);
	CU_ASSERT_EQUAL(ld.parked, 0);
	CU_ASSERT_EQUAL(ld.opened, 1);
	CU_ASSERT_EQUAL(ld.started, 0);
	/* a held answer: a request in flight on a parked connection */
	fd = send_raw(&l, req);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_TRUE_FATAL(wait_load(&l, &ld, one_parked));
	CU_ASSERT_EQUAL(ld.connections, 2);
	CU_ASSERT_EQUAL(ld.requests, 1);
	CU_ASSERT_EQUAL(ld.opened, 2);
	CU_ASSERT_EQUAL(ld.started, 1);
	CU_ASSERT_EQUAL(fa_journal_count(l.j), 0);
	/* let go and closed: nothing left, and the journal has it */
	CU_ASSERT_EQUAL(fa_server_release(l.s, NULL), 1);
	close(idle);
	close(fd);
	CU_ASSERT_TRUE_FATAL(wait_load(&l, &ld, none_open));
	CU_ASSERT_EQUAL(ld.parked, 0);
	CU_ASSERT_EQUAL(fa_journal_count(l.j), 1);
	e = live_stop(&l, &n);
	CU_ASSERT_EQUAL(n, 1);
	free_entries(e, n);
}

void test_fault_register(void)
{
	CU_pSuite suite = CU_add_suite("fault", NULL, NULL);

	CU_add_test(suite, "fault__every_fault_has_its_journal_name",
	            fault__every_fault_has_its_journal_name);
	CU_add_test(suite, "fault__journal_names_the_fault_applied",
	            fault__journal_names_the_fault_applied);
	CU_add_test(suite, "fault__commits_after_the_commit_or_on_a_2xx_only",
	            fault__commits_after_the_commit_or_on_a_2xx_only);
	CU_add_test(suite, "fault__close_idle_closes_only_a_reused_connection",
	            fault__close_idle_closes_only_a_reused_connection);
	CU_add_test(suite, "fault__partial_body_is_never_the_whole_body",
	            fault__partial_body_is_never_the_whole_body);
	CU_add_test(suite, "fault__respond_carries_the_entry_fault_and_hold",
	            fault__respond_carries_the_entry_fault_and_hold);
	CU_add_test(suite, "fault__scenario_fields_land_in_the_response",
	            fault__scenario_fields_land_in_the_response);
	CU_add_test(suite, "fault__held_answer_waits_for_release_then_drops",
	            fault__held_answer_waits_for_release_then_drops);
	CU_add_test(suite, "fault__released_hold_still_waits_out_its_delay",
	            fault__released_hold_still_waits_out_its_delay);
	CU_add_test(suite, "fault__stop_lets_a_held_answer_go_and_journals_it",
	            fault__stop_lets_a_held_answer_go_and_journals_it);
	CU_add_test(suite, "fault__load_counts_open_connections_requests_and_parked_ones",
	            fault__load_counts_open_connections_requests_and_parked_ones);
}
