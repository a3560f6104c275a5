/* timeline.c -- one scenario's attempts over time, drawn as an inline SVG for the HTML report. */
#include "timeline.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "html.h"
#include "report_facts.h"

/* The drawing, in SVG user units (px at 100 %). */
#define SVG_W         1000 /* the whole width */
#define LABEL_W       140  /* the lane names' column */
#define PAD_R         70   /* right of the axis' end: its last label, where cut pauses end */
#define PLOT_W        (SVG_W - LABEL_W - PAD_R)
#define LEGEND_ROW    20 /* one row of the legend */
#define LANE_H        24
#define AXIS_H        40 /* tick labels and the axis caption under the lanes */
#define MARK_R        5
#define RING_R        8  /* the half-diagonal of the diamond around a fault */
#define FLIGHT_MIN    2  /* px: an answer slower than this shows its wait */
#define LANE_NAME_MAX 18 /* a lane name longer than this is cut (its <title> has it whole) */
#define MAX_TICKS     10
#define SPAN_SEQS     5   /* seqs a merged pause's <title> names before "and N more" */
#define CHAR_W        6.6 /* a legend character's width, a guess good for sans-serif 11px */

/* A pause announced by one answer, in one lane. */
struct span {
	int64_t from, to; /* µs since the provider started */
	uint64_t seq;     /* the answer that announced it */
};

/* What is drawn where. */
struct plot {
	const struct hx_scenario_result *s;
	size_t n_lanes;    /* one per task, then one for attempts naming none */
	size_t no_task;    /* index of that last lane; == n_lanes when it is not drawn */
	size_t *lane_of;   /* owned: the lane of each attempt, journal order */
	int64_t end_us;    /* the axis' end, a whole number of steps */
	int64_t step_us;   /* between two ticks */
	double top;        /* y of the first lane */
	bool virtual_time; /* the provider ran on a scaled clock */
};

static double x_of(const struct plot *p, int64_t us)
{
	if (us < 0)
		us = 0;
	if (us > p->end_us)
		us = p->end_us;
	return LABEL_W + (double)us * PLOT_W / (double)p->end_us;
}

static double lane_y(const struct plot *p, size_t lane)
{
	return p->top + (double)lane * LANE_H + LANE_H / 2.0;
}

static const char *task_id(const struct hx_task_run *t)
{
	return t->spec != NULL && t->spec->id != NULL ? t->spec->id : "?";
}

/* The lane of @a: its task's, else the lane of attempts naming no task. */
static size_t lane_for(const struct hx_scenario_result *s, const struct fa_attempt *a)
{
	for (size_t i = 0; a->task != NULL && i < s->n_tasks; i++)
		if (strcmp(task_id(&s->tasks[i]), a->task) == 0)
			return i;
	return s->n_tasks;
}

static int64_t later(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The last thing that happened: attempts, tasks' starts and ends,
 * cancels, kills. A pause past it is cut at the axis' end. */
static int64_t last_event(const struct hx_scenario_result *s)
{
	int64_t end = 0;

	for (size_t i = 0; i < s->n_attempts; i++)
		end = later(end, later(s->attempts[i].t_arrival_us, s->attempts[i].t_response_us));
	for (size_t i = 0; i < s->n_tasks; i++) {
		end = later(end, s->tasks[i].t_sent_us);
		end = later(end, s->tasks[i].t_exit_us);
		end = later(end, s->tasks[i].t_cancel_us);
	}
	for (size_t i = 0; i < s->n_restarts; i++)
		end = later(end, later(s->restarts[i].t_kill_us, s->restarts[i].t_restart_us));
	return end;
}

/* The tick step: 1, 2 or 5 times a power of ten µs, the smallest that
 * needs no more than MAX_TICKS steps to pass @end. */
static int64_t tick_step(int64_t end)
{
	static const int64_t mult[] = { 1, 2, 5 };

	for (int64_t pow = 1;; pow *= 10)
		for (size_t k = 0; k < 3; k++)
			if (end <= mult[k] * pow * MAX_TICKS)
				return mult[k] * pow;
}

static bool is_fault(const struct fa_attempt *a)
{
	return a->fault != NULL && strcmp(a->fault, "respond") != 0;
}

/* The status class: the colour of an attempt's mark. */
static const char *status_class(int status)
{
	if (status == 0)
		return "snone";
	if (status == 429)
		return "s429";
	if (status >= 200 && status < 300)
		return "s2xx";
	if (status >= 400 && status < 500)
		return "s4xx";
	if (status >= 500 && status < 600)
		return "s5xx";
	return "sother";
}

/* "1.5 s", "250 ms": a tick of the axis, in s past 2 s. */
static void put_tick(FILE *f, const struct plot *p, int64_t us)
{
	if (us == 0)
		fputs("0", f);
	else if (p->end_us > 2000000)
		fprintf(f, "%g s", (double)us / 1e6);
	else
		fprintf(f, "%g ms", (double)us / 1e3);
}

/* The legend's entries, in drawing order. */
enum legend_kind {
	LG_2XX,
	LG_429,
	LG_5XX,
	LG_4XX,
	LG_NONE,
	LG_OTHER, /* only when an attempt got a 1xx or 3xx */
	LG_FAULT,
	LG_FLIGHT, /* only when an answer took FLIGHT_MIN px or more */
	LG_PAUSE,
	LG_RUN,
	LG_KILL,   /* only when a kill event fired */
	LG_CANCEL, /* only when a cancel event cancelled a task */
	LG_COUNT
};

static const char *const legend_labels[LG_COUNT] = {
	"2xx",
	"429",
	"5xx",
	"other 4xx",
	"no response",
	"other status",
	"fault (drop, delay, ...)",
	"waiting for the answer",
	"announced pause",
	"task running",
	"client killed",
	"cancel",
};

/* The diamond that marks a fault around the attempt's dot at (@x, @y),
 * leaving the dot's colour, its status, to be seen. */
static void put_ring(FILE *f, double x, double y)
{
	fprintf(f, "<path class=\"fault-ring\" d=\"M%.1f %.1fl%d %dl%d %dl%d %dz\"/>", x,
	        y - RING_R, RING_R, RING_R, -RING_R, RING_R, -RING_R, -RING_R);
}

/* The swatch of entry @k, centred on (@x, @y). */
static void swatch(FILE *f, enum legend_kind k, double x, double y)
{
	static const char *const dots[] = { "s2xx", "s429", "s5xx", "s4xx", "snone", "sother" };

	switch (k) {
	case LG_2XX:
	case LG_429:
	case LG_5XX:
	case LG_4XX:
	case LG_NONE:
	case LG_OTHER:
		fprintf(f, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"/>", dots[k], x, y,
		        MARK_R);
		break;
	case LG_FAULT:
		fprintf(f, "<circle class=\"sna\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"/>", x, y,
		        MARK_R);
		put_ring(f, x, y);
		break;
	case LG_FLIGHT:
		fprintf(f,
		        "<line class=\"flight sna\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\"/>",
		        x - 7, y, x + 7, y);
		break;
	case LG_PAUSE:
		fprintf(f,
		        "<rect class=\"pause\" x=\"%.1f\" y=\"%.1f\" width=\"14\" "
		        "height=\"12\"/>",
		        x - 7, y - 6);
		break;
	case LG_RUN:
		fprintf(f, "<line class=\"run\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		        x - 7, y, x + 7, y);
		break;
	case LG_KILL:
	case LG_CANCEL:
		fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		        k == LG_KILL ? "kill" : "cancel", x, y - 7, x, y + 7);
		break;
	case LG_COUNT: break;
	}
}

/* Whether attempt @a's wait for its answer is drawn: it got one, and
 * late enough to be seen. */
static bool flight_shown(const struct plot *p, const struct fa_attempt *a)
{
	return a->t_response_us >= 0 &&
	       x_of(p, a->t_response_us) - x_of(p, a->t_arrival_us) >= FLIGHT_MIN;
}

/* Whether @p's scenario needs legend entry @k. */
static bool legend_wanted(const struct plot *p, enum legend_kind k)
{
	const struct hx_scenario_result *s = p->s;

	switch (k) {
	case LG_FLIGHT:
		for (size_t i = 0; i < s->n_attempts; i++)
			if (flight_shown(p, &s->attempts[i]))
				return true;
		return false;
	case LG_OTHER:
		for (size_t i = 0; i < s->n_attempts; i++)
			if (strcmp(status_class(s->attempts[i].status), "sother") == 0)
				return true;
		return false;
	case LG_KILL: return s->n_restarts > 0;
	case LG_CANCEL:
		for (size_t i = 0; i < s->n_tasks; i++)
			if (s->tasks[i].t_cancel_us >= 0)
				return true;
		return false;
	default: return true;
	}
}

/* Lay the legend out in rows as wide as the drawing; with @f, draw it.
 * Returns the rows it takes. */
static int legend(FILE *f, const struct plot *p)
{
	double x = 8, w, y;
	int rows = 1;

	for (int k = 0; k < LG_COUNT; k++) {
		if (!legend_wanted(p, (enum legend_kind)k))
			continue;
		w = 16 + CHAR_W * (double)strlen(legend_labels[k]) + 18;
		if (x + w > SVG_W && x > 8) {
			x = 8;
			rows++;
		}
		y = LEGEND_ROW * (rows - 1) + 12;
		if (f != NULL) {
			fputs("<g>", f);
			swatch(f, (enum legend_kind)k, x + 6, y);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>", x + 16, y + 4,
			        legend_labels[k]);
		}
		x += w;
	}
	return rows;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from ? 1 : x->seq < y->seq ? -1 : 1;
}

/* The scopes lane @lane's attempts were sent in, each once, into *@out
 * (owned, borrowed strings); how many. */
static size_t lane_scopes(const struct plot *p, size_t lane, const char ***out)
{
	size_t n = 0, k;

	*out = fa_xcalloc(p->s->n_attempts + 1, sizeof(**out));
	for (size_t i = 0; i < p->s->n_attempts; i++) {
		const char *scope = p->s->attempts[i].scope;

		if (p->lane_of[i] != lane || scope == NULL)
			continue;
		for (k = 0; k < n && strcmp((*out)[k], scope) != 0; k++)
			;
		if (k == n)
			(*out)[n++] = scope;
	}
	return n;
}

/* The pauses of lane @lane, one per answer that announced a pause in a
 * scope the lane's task sent in (or, naming no scope, to the lane's own
 * attempt), into *@out (owned); how many. */
static size_t lane_spans(const struct plot *p, size_t lane, struct span **out)
{
	const struct hx_scenario_result *s = p->s;
	const char **scopes;
	size_t n = 0, n_scopes = lane_scopes(p, lane, &scopes);

	*out = fa_xcalloc(s->n_attempts + 1, sizeof(**out));
	for (size_t i = 0; i < s->n_attempts; i++) {
		const struct fa_attempt *a = &s->attempts[i];
		int64_t from = a->t_response_us >= 0 ? a->t_response_us : a->t_arrival_us;
		bool here = p->lane_of[i] == lane;

		for (size_t k = 0; !here && a->scope != NULL && k < n_scopes; k++)
			here = strcmp(scopes[k], a->scope) == 0;
		/* a date in the past names no pause to wait out */
		if (a->pause_until_us < 0 || a->pause_until_us <= from || !here)
			continue;
		(*out)[n++] = (struct span){ .from = from, .to = a->pause_until_us, .seq = a->seq };
	}
	free(scopes);
	qsort(*out, n, sizeof(**out), span_cmp);
	return n;
}

/* One shaded pause: spans [@first, @last] of @sp overlap into one. */
static void draw_span(FILE *f, const struct plot *p, size_t lane, const struct span *sp,
                      size_t first, size_t last, int64_t to)
{
	double x0 = x_of(p, sp[first].from), x1 = x_of(p, to);
	double y = lane_y(p, lane) - LANE_H / 2.0 + 3;

	fprintf(f, "<rect class=\"pause%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\">",
	        to > p->end_us ? " cut" : "", x0, y, x1 - x0 > 1 ? x1 - x0 : 1, LANE_H - 6);
	fprintf(f, "<title>pause from +%.1f ms until +%.1f ms%s, announced by seq",
	        sp[first].from / 1e3, to / 1e3,
	        to > p->end_us ? " (past the end of this timeline)" : "");
	for (size_t k = first; k <= last && k < first + SPAN_SEQS; k++)
		fprintf(f, "%s %" PRIu64, k > first ? "," : "", sp[k].seq);
	if (last - first + 1 > SPAN_SEQS)
		fprintf(f, " and %zu more", last - first + 1 - SPAN_SEQS);
	fputs("</title></rect>\n", f);
	/* a pause that outlasts the timeline says where it ends, right of
	 * the axis: inside the lane it could hide a mark */
	if (to > p->end_us)
		fprintf(f,
		        "<text class=\"cut-label\" x=\"%d\" y=\"%.1f\">\xe2\x86\x92 +%.1f s</text>\n",
		        LABEL_W + PLOT_W + 4, lane_y(p, lane) + 3.5, to / 1e6);
}

/* The pauses, overlapping ones merged per lane so a storm of 429s reads
 * as one shaded stretch rather than a darkening pile. */
static void draw_pauses(FILE *f, const struct plot *p)
{
	fputs("<g class=\"pauses\">\n", f);
	for (size_t lane = 0; lane < p->n_lanes; lane++) {
		struct span *sp;
		size_t n = lane_spans(p, lane, &sp), first = 0;
		int64_t to = n > 0 ? sp[0].to : 0;

		for (size_t k = 1; k <= n; k++) {
			if (k < n && sp[k].from <= to) {
				to = later(to, sp[k].to);
				continue;
			}
			draw_span(f, p, lane, sp, first, k - 1, to);
			first = k;
			to = k < n ? sp[k].to : 0;
		}
		free(sp);
	}
	fputs("</g>\n", f);
}

/* The lanes' stripes and names, the grid and the axis under them. */
static void draw_frame(FILE *f, const struct plot *p)
{
	double bottom = p->top + (double)p->n_lanes * LANE_H;

	fputs("<g class=\"lanes\">\n", f);
	for (size_t lane = 0; lane < p->n_lanes; lane++) {
		const char *name = lane == p->no_task ? "(no task)" : task_id(&p->s->tasks[lane]);
		char cut[LANE_NAME_MAX + 1];

		if (lane % 2 == 0)
			fprintf(f,
			        "<rect class=\"zebra\" x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>",
			        p->top + (double)lane * LANE_H, SVG_W, LANE_H);
		snprintf(cut, sizeof(cut), "%s", name);
		fprintf(f, "<text class=\"lane\" x=\"%d\" y=\"%.1f\">", LABEL_W - 10,
		        lane_y(p, lane) + 4);
		hx_html_put(f, cut);
		fputs(strlen(name) > LANE_NAME_MAX ? "\xe2\x80\xa6<title>" : "<title>", f); /* … */
		fputs(lane == p->no_task ? "attempts that named no task of the scenario" : "task ",
		      f);
		if (lane != p->no_task)
			hx_html_put(f, name);
		fputs("</title></text>\n", f);
	}
	fputs("</g>\n<g class=\"grid\">\n", f);
	for (int64_t t = 0; t <= p->end_us; t += p->step_us) {
		double x = x_of(p, t);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, p->top, x,
		        bottom + 4);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">", x, bottom + 16);
		put_tick(f, p, t);
		fputs("</text>\n", f);
	}
	fprintf(f,
	        "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
	        "<text class=\"caption\" x=\"%d\" y=\"%.1f\">time since the provider started%s"
	        "</text>\n</g>\n",
	        LABEL_W, bottom, LABEL_W + PLOT_W, bottom, LABEL_W, bottom + 32,
	        p->virtual_time ? " (virtual: the scenario ran on a scaled clock)" : "");
}

/* Each task's life as a line in its lane: sent to ended (or to the
 * axis' end), and a tick where a cancel event cancelled it; the kills
 * across every lane. */
static void draw_tasks(FILE *f, const struct plot *p)
{
	const struct hx_scenario_result *s = p->s;
	double top = p->top, bottom = p->top + (double)p->n_lanes * LANE_H;

	fputs("<g class=\"tasks\">\n", f);
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct hx_task_run *t = &s->tasks[i];
		double y = lane_y(p, i);
		int64_t end = t->t_exit_us >= 0 ? t->t_exit_us : p->end_us;

		if (!t->sent || t->t_sent_us < 0)
			continue;
		fprintf(f, "<line class=\"run\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">",
		        x_of(p, t->t_sent_us), y, x_of(p, end), y);
		fputs("<title>task ", f);
		hx_html_put(f, task_id(t));
		fprintf(f, ": sent at +%.1f ms, ", t->t_sent_us / 1e3);
		if (t->t_exit_us >= 0)
			fprintf(f, "ended at +%.1f ms</title></line>\n", t->t_exit_us / 1e3);
		else
			fputs("no end seen</title></line>\n", f);
		if (t->t_cancel_us < 0)
			continue;
		fprintf(f,
		        "<line class=\"cancel\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">",
		        x_of(p, t->t_cancel_us), y - 7, x_of(p, t->t_cancel_us), y + 7);
		fputs("<title>task ", f);
		hx_html_put(f, task_id(t));
		fprintf(f, " cancelled at +%.1f ms</title></line>\n", t->t_cancel_us / 1e3);
	}
	for (size_t i = 0; i < s->n_restarts; i++) {
		const struct hx_restart *rs = &s->restarts[i];
		double x = x_of(p, rs->t_kill_us);

		fprintf(f,
		        "<line class=\"kill\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
		        "<title>client killed at +%.1f ms",
		        x, top, x, bottom, rs->t_kill_us / 1e3);
		if (rs->t_restart_us >= 0)
			fprintf(f, ", restarted at +%.1f ms", rs->t_restart_us / 1e3);
		fputs("</title></line>\n", f);
	}
	fputs("</g>\n", f);
}

/* Each answer's wait from arrival to answer, where it shows, under the
 * marks: a slow endpoint's requests in flight side by side. */
static void draw_flights(FILE *f, const struct plot *p)
{
	const struct hx_scenario_result *s = p->s;

	fputs("<g class=\"flights\">\n", f);
	for (size_t i = 0; i < s->n_attempts; i++) {
		const struct fa_attempt *a = &s->attempts[i];
		double y = lane_y(p, p->lane_of[i]);

		if (!flight_shown(p, a))
			continue;
		fprintf(f,
		        "<line class=\"flight %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
		        "<title>seq %" PRIu64 " waited %.1f ms for its answer</title></line>\n",
		        status_class(a->status), x_of(p, a->t_arrival_us), y,
		        x_of(p, a->t_response_us), y, a->seq,
		        (double)(a->t_response_us - a->t_arrival_us) / 1e3);
	}
	fputs("</g>\n", f);
}

/* One mark per journal entry, never more, never fewer: a test counts them. */
static void draw_attempts(FILE *f, const struct plot *p)
{
	const struct hx_scenario_result *s = p->s;

	fputs("<g class=\"attempts\">\n", f);
	for (size_t i = 0; i < s->n_attempts; i++) {
		const struct fa_attempt *a = &s->attempts[i];
		double x = x_of(p, a->t_arrival_us), y = lane_y(p, p->lane_of[i]);
		char *line = hx_report_attempt_line(a);

		fprintf(f,
		        "<circle class=\"attempt %s%s\" data-seq=\"%" PRIu64
		        "\" data-status=\"%d\" "
		        "cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"><title>",
		        status_class(a->status), is_fault(a) ? " fault" : "", a->seq, a->status, x,
		        y, MARK_R);
		hx_html_put_client(f, s, line);
		fputs("</title></circle>", f);
		if (is_fault(a))
			put_ring(f, x, y);
		fputc('\n', f);
		free(line);
	}
	fputs("</g>\n", f);
}

void hx_timeline_write(FILE *f, const struct hx_scenario_result *s)
{
	struct plot p = { .s = s };
	int rows;
	double height;

	if (s->n_attempts == 0 && s->n_tasks == 0)
		return;
	p.lane_of = fa_xcalloc(s->n_attempts + 1, sizeof(*p.lane_of));
	p.n_lanes = s->n_tasks;
	p.no_task = s->n_tasks;
	for (size_t i = 0; i < s->n_attempts; i++) {
		p.lane_of[i] = lane_for(s, &s->attempts[i]);
		if (p.lane_of[i] == s->n_tasks)
			p.n_lanes = s->n_tasks + 1;
		p.virtual_time = p.virtual_time || s->attempts[i].time_scale > 1.0;
	}
	p.end_us = later(last_event(s), 1000);
	p.step_us = tick_step(p.end_us);
	p.end_us = (p.end_us + p.step_us - 1) / p.step_us * p.step_us;
	rows = legend(NULL, &p);
	p.top = LEGEND_ROW * rows + 8;
	height = p.top + (double)p.n_lanes * LANE_H + AXIS_H;
	fprintf(f,
	        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
	        "viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" role=\"img\" "
	        "aria-label=\"timeline: %zu attempt%s in %zu lane%s\">\n<g class=\"legend\">",
	        SVG_W, height, SVG_W, height, s->n_attempts, s->n_attempts == 1 ? "" : "s",
	        p.n_lanes, p.n_lanes == 1 ? "" : "s");
	legend(f, &p);
	fputs("</g>\n", f);
	draw_frame(f, &p);
	draw_pauses(f, &p);
	draw_tasks(f, &p);
	draw_flights(f, &p);
	draw_attempts(f, &p);
	fputs("</svg>\n", f);
	free(p.lane_of);
}
