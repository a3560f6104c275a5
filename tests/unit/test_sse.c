/* test_sse.c -- text/event-stream bodies: frames, the cut after the lead frames, content counts. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "provider.h"
#include "scenario.h"
#include "sse.h"

/* A stream of two lead frames, three content frames and a closing one. */
static void render(struct fa_sse_stream *s, int stop_after, const char *tail)
{
	cJSON *o = cJSON_CreateObject();

	memset(s, 0, sizeof(*s));
	cJSON_AddNumberToObject(o, "n", 0);
	fa_sse_frame(s, "lead", o);
	fa_sse_frame(s, NULL, o);
	s->lead = s->n_chunks;
	for (int i = 0; i < 3; i++)
		fa_sse_frame(s, "piece", o);
	s->n_content = 3;
	fa_sse_frame(s, "close", o);
	fa_sse_finish(s, stop_after, tail);
	cJSON_Delete(o);
}

static void sse__frames_carry_their_event_name_and_compact_data(void)
{
	struct fa_sse_stream s;

	render(&s, -1, "data: [DONE]\n\n");
	CU_ASSERT_EQUAL(s.n_chunks, 6);
	CU_ASSERT_EQUAL(s.cut, s.len);
	CU_ASSERT_EQUAL(strlen(s.body), s.len);
	CU_ASSERT(strncmp(s.body,
	                  "event: lead\ndata: {\"n\":0}\n\ndata: {\"n\":0}\n\n"
	                  "event: piece\n",
	                  54) == 0);
	CU_ASSERT_EQUAL(s.ends[0], strlen("event: lead\ndata: {\"n\":0}\n\n"));
	CU_ASSERT(s.len > 14 && memcmp(s.body + s.len - 14, "data: [DONE]\n\n", 14) == 0);
	fa_sse_stream_release(&s);
	CU_ASSERT_PTR_NULL(s.body);
	CU_ASSERT_PTR_NULL(s.ends);
	fa_sse_stream_release(NULL);
}

/* a cut keeps the lead frames whatever stop_after says, and never the tail */
static void sse__cut_keeps_the_lead_frames_and_never_the_tail(void)
{
	struct fa_sse_stream s;

	render(&s, 0, NULL);
	CU_ASSERT_EQUAL(s.cut, s.ends[1]);
	fa_sse_stream_release(&s);
	render(&s, 2, NULL);
	CU_ASSERT_EQUAL(s.cut, s.ends[3]);
	fa_sse_stream_release(&s);
	render(&s, 99, "event: end\ndata: {}\n\n");
	CU_ASSERT_EQUAL(s.cut, s.ends[5]);
	CU_ASSERT_EQUAL(s.cut, s.len - strlen("event: end\ndata: {}\n\n"));
	fa_sse_stream_release(&s);
}

static void sse__chunks_sent_counts_content_frames_after_the_lead(void)
{
	struct fa_sse_stream s;

	render(&s, -1, NULL);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 2, 3, s.ends[1]), 0);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 2, 3, s.ends[2] - 1), 0);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 2, 3, s.ends[2]), 1);
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 2, 3, s.ends[4]), 3);
	/* the closing frame carries no piece */
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 2, 3, s.len), 3);
	/* without the lead, its two frames would have been counted */
	CU_ASSERT_EQUAL(fa_sse_chunks_sent(s.body, s.len, 0, 3, s.ends[2]), 3);
	CU_ASSERT_EQUAL(fa_sse_frame_end(s.body, s.len, 0), s.ends[0]);
	fa_sse_stream_release(&s);
}

static void sse__answer_is_a_200_event_stream_paced_as_the_entry_says(void)
{
	struct fa_response_spec spec = {
		.status = 529, .chunk_delay_ms = 20, .stall_after_chunks = 1, .stall_ms = 700
	};
	struct fa_resp r = { .status = 529 };

	fa_resp_add_header(&r, "Content-Type", "application/json");
	fa_sse_answer(&r, &spec, "stall", 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(r.attempt.status, 200);
	CU_ASSERT_STRING_EQUAL(r.stream_end, "stall");
	CU_ASSERT_EQUAL(r.chunk_delay_ms, 20);
	CU_ASSERT_EQUAL(r.stall_ms, 700);
	CU_ASSERT_EQUAL(r.stall_retry_after_s, 0);
	CU_ASSERT_EQUAL_FATAL(r.n_headers, 2);
	CU_ASSERT_STRING_EQUAL(r.headers[0].value, "text/event-stream");
	CU_ASSERT_STRING_EQUAL(r.headers[1].name, "Cache-Control");
	fa_resp_release(&r);
}

void test_sse_register(void)
{
	CU_pSuite suite = CU_add_suite("sse", NULL, NULL);

	CU_add_test(suite, "sse__frames_carry_their_event_name_and_compact_data",
	            sse__frames_carry_their_event_name_and_compact_data);
	CU_add_test(suite, "sse__cut_keeps_the_lead_frames_and_never_the_tail",
	            sse__cut_keeps_the_lead_frames_and_never_the_tail);
	CU_add_test(suite, "sse__chunks_sent_counts_content_frames_after_the_lead",
	            sse__chunks_sent_counts_content_frames_after_the_lead);
	CU_add_test(suite, "sse__answer_is_a_200_event_stream_paced_as_the_entry_says",
	            sse__answer_is_a_200_event_stream_paced_as_the_entry_says);
}
