/*
 * bench-wakeup -- how late a timer under libfaketime fires, in real time
 * (docs/bench.md, section 4; docs/time-scale.md, "Why the scale stops at 20").
 *
 * usage: bench-wakeup --scale S [--threads W] [--rounds N] [--period-ms P]
 *                     [--wait nanosleep|epoll]
 *
 * Run it under libfaketime (LD_PRELOAD, FAKETIME="+0 xS"), as the harness
 * runs a client at --time-scale S. W threads wake together at N instants P
 * real ms apart: each computes the real time left to the common instant,
 * sleeps S times that on the (virtual) clock the library hands it, the way
 * a client sleeps its Retry-After, and then sends one UDP datagram over
 * loopback to a receiver process. The receiver stamps each arrival on the
 * real clock, read with the raw system call that libfaketime cannot
 * intercept. The output, one JSON object on stdout:
 *   "late_us":   per datagram, real µs from the instant to its arrival;
 *   "spread_us": per round, real µs between its first and last arrival.
 * Under a scale S each of them is S times larger in virtual time.
 * Exit status: 0 done, 1 a system call failed or datagrams were lost,
 * 2 usage, or the clock does not run S times faster (no libfaketime).
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_ROUNDS  100000

struct stamp {
	uint32_t round;
	uint32_t thread;
};

static double scale = 1.0;
static int threads = 8, rounds = 200, period_ms = 20;
static int use_epoll;
static int64_t t0_us;
static struct sockaddr_in peer;

/* Real monotonic µs, by the raw system call (libfaketime wraps the libc entry points only). */
static int64_t real_us(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Monotonic µs as the process sees it: virtual under libfaketime. */
static int64_t seen_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleep @virt_us on the process's clock, as a client sleeps a Retry-After. */
static void sleep_virtual(int epfd, int64_t virt_us)
{
	if (virt_us <= 0)
		return;
	if (use_epoll) {
		struct epoll_event ev;

		epoll_wait(epfd, &ev, 1, (int)((virt_us + 999) / 1000));
	} else {
		struct timespec ts = { virt_us / 1000000, (virt_us % 1000000) * 1000 };

		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
			;
	}
}

static void *sender(void *arg)
{
	struct stamp st = { 0, (uint32_t)(uintptr_t)arg };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int epfd = use_epoll ? epoll_create1(0) : -1;

	for (int r = 0; r < rounds; r++) {
		int64_t at = t0_us + (int64_t)(r + 1) * period_ms * 1000;

		sleep_virtual(epfd, (int64_t)((double)(at - real_us()) * scale));
		st.round = (uint32_t)r;
		sendto(fd, &st, sizeof(st), 0, (struct sockaddr *)&peer, sizeof(peer));
	}
	if (epfd >= 0)
		close(epfd);
	close(fd);
	return NULL;
}

/* The clock the library hands the process must run @scale times the real one. */
static int check_scale(void)
{
	int64_t r0 = real_us(), s0 = seen_us();
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	double got;

	nanosleep(&ts, NULL);
	got = (double)(seen_us() - s0) / (double)(real_us() - r0);
	if (got < scale * 0.8 || got > scale * 1.25) {
		fprintf(stderr,
		        "bench-wakeup: the clock runs %.2f times the real one, not %.2f: "
		        "run it under libfaketime with FAKETIME=\"+0 x%g\"\n",
		        got, scale, scale);
		return -1;
	}
	return 0;
}

static int receive(int fd, int64_t *late, int64_t *first, int64_t *last)
{
	long want = (long)threads * rounds, got = 0;
	struct timeval tv = { 5, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < want) {
		struct stamp st;
		ssize_t n = recv(fd, &st, sizeof(st), 0);
		int64_t now = real_us(), at;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(st) || st.round >= (uint32_t)rounds ||
		    st.thread >= (uint32_t)threads) {
			fprintf(stderr, "bench-wakeup: %ld of %ld datagrams arrived\n", got, want);
			return -1;
		}
		at = t0_us + (int64_t)(st.round + 1) * period_ms * 1000;
		late[got++] = now - at;
		if (first[st.round] == 0 || now < first[st.round])
			first[st.round] = now;
		if (now > last[st.round])
			last[st.round] = now;
	}
	return 0;
}

static void print_array(const char *name, const int64_t *v, long n, const char *end)
{
	printf("\"%s\": [", name);
	for (long i = 0; i < n; i++)
		printf("%s%lld", i ? "," : "", (long long)v[i]);
	printf("]%s", end);
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: bench-wakeup --scale S [--threads 1..%d] [--rounds 1..%d] "
	        "[--period-ms 1..10000] [--wait nanosleep|epoll]\n",
	        MAX_THREADS, MAX_ROUNDS);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "period-ms", required_argument, NULL, 'p' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_t tid[MAX_THREADS];
	socklen_t len = sizeof(peer);
	int c, fd, status = 0;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': scale = strtod(optarg, NULL); break;
		case 't': threads = (int)strtol(optarg, NULL, 10); break;
		case 'r': rounds = (int)strtol(optarg, NULL, 10); break;
		case 'p': period_ms = (int)strtol(optarg, NULL, 10); break;
		case 'w':
			if (strcmp(optarg, "epoll") && strcmp(optarg, "nanosleep"))
				return usage();
			use_epoll = !strcmp(optarg, "epoll");
			break;
		case 'h': usage(); return 0;
		default: return usage();
		}
	}
	if (optind < argc || !(scale >= 1.0 && scale <= 1000.0) || threads < 1 ||
	    threads > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS || period_ms < 1 ||
	    period_ms > 10000)
		return usage();
	if (check_scale())
		return 2;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	peer.sin_family = AF_INET;
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&peer, sizeof(peer)) ||
	    getsockname(fd, (struct sockaddr *)&peer, &len)) {
		perror("bench-wakeup: socket");
		return 1;
	}
	t0_us = real_us() + 100000;
	pid = fork();
	if (pid < 0) {
		perror("bench-wakeup: fork");
		return 1;
	}
	if (pid == 0) {
		close(fd);
		for (int i = 0; i < threads; i++)
			pthread_create(&tid[i], NULL, sender, (void *)(uintptr_t)i);
		for (int i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		_exit(0);
	}

	long n = (long)threads * rounds;
	int64_t *late = calloc((size_t)n, sizeof(*late));
	int64_t *first = calloc((size_t)rounds, sizeof(*first));
	int64_t *last = calloc((size_t)rounds, sizeof(*last));
	int rc = late && first && last ? receive(fd, late, first, last) : -1;

	waitpid(pid, &status, 0);
	if (rc == 0) {
		for (int r = 0; r < rounds; r++)
			first[r] = last[r] - first[r];
		printf("{\"scale\": %g, \"threads\": %d, \"rounds\": %d, \"period_ms\": %d, "
		       "\"wait\": \"%s\", ",
		       scale, threads, rounds, period_ms, use_epoll ? "epoll" : "nanosleep");
		print_array("late_us", late, n, ", ");
		print_array("spread_us", first, rounds, "}\n");
	}
	free(late);
	free(first);
	free(last);
	return rc ? 1 : 0;
}
