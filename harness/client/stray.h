/* stray.h -- client processes that left their process group: marked, found in /proc, killed. */
#ifndef HX_STRAY_H
#define HX_STRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rc.h"

/* The environment variable every client process carries
 * (docs/client-protocol.md). */
#define HX_STRAY_ENV "FAKEAPI_CLIENT_NONCE"

/* Characters of a marker: 128 random bits in lower-case hex. */
#define HX_STRAY_NONCE_LEN 32

/* How long hx_stray_kill() goes on killing and reaping at most, µs. */
#define HX_STRAY_SWEEP_US 2000000

/*
 * A fresh marker into @out (HX_STRAY_NONCE_LEN hex digits and a NUL): 128
 * bits from getrandom(); should the kernel refuse, from the clock, the
 * pid and a counter, so two markers of one harness still differ.
 * Thread-safe; allocates nothing.
 */
void hx_stray_nonce(char out[HX_STRAY_NONCE_LEN + 1]);

/*
 * Make the calling process a child subreaper (PR_SET_CHILD_SUBREAPER):
 * processes orphaned by a client (a double fork, setsid) are re-parented
 * to it rather than to init, so hx_stray_kill() can reap them. Call once,
 * before any client starts. FA_EIO with "prctl: reason" in @err when the
 * kernel refuses (strays are still killed, only not reaped by us).
 */
enum fa_rc hx_stray_subreaper(struct fa_err *err);

/* Longest cgroup folder path hx_stray_cgroup_new() makes, NUL included. */
#define HX_STRAY_CGROUP_MAX 512

/*
 * A new, empty cgroup v2 for one client, under the harness's own cgroup
 * (".../fakeapi-harness-PID/cN", made at the first call), its folder into
 * @out: every process the client starts stays in it whatever it does to
 * its name, group or environment, so hx_stray_kill() finds them all.
 * False, and "" in @out, where there is no writable cgroup v2 hierarchy
 * (then the sweep falls back to markers, the group and the harness's
 * orphans). Thread-safe. The folders are removed by hx_stray_kill() and,
 * the parent, at exit.
 */
bool hx_stray_cgroup_new(char out[HX_STRAY_CGROUP_MAX]);

/*
 * In a child between fork and exec: move the calling process into the
 * cgroup folder @dir ("" = nothing to do). Async-signal-safe; a failure
 * leaves it where it was, and the sweep falls back as above.
 */
void hx_stray_cgroup_join(const char *dir);

/*
 * Tell the sweeps that @pid is a process the harness started itself (a
 * client's leader, a probe) while it runs, so that the orphan sweep
 * spares it; hx_stray_forget() when it has been reaped. Thread-safe.
 */
void hx_stray_own(pid_t pid);
void hx_stray_forget(pid_t pid);

/*
 * SIGKILL every process of the harness's user whose environment holds
 * the entry HX_STRAY_ENV=@nonce (@nonce as hx_stray_nonce() made it; NULL
 * = none), every process of group @pgid but its leader (0 = none), every
 * process in the cgroup folder @cgroup (from hx_stray_cgroup_new(); its
 * cgroup.kill first, and the folder is removed at the end) or, when
 * @cgroup is NULL or "", every child of the harness that is neither one
 * it started (hx_stray_own) nor in the group of one: the orphans a
 * subreaper adopts, whichever client left them (without a cgroup nothing
 * else ties a process that left its group and wiped its environment to
 * its client), and
 * scan /proc again until a scan finds none of them alive: a process forked
 * between two scans is caught by the next. A process found is signalled
 * through a pidfd, so a pid reused in between is never hit; one that
 * vanishes midway is skipped. Each process found that is, or becomes, a
 * child of the harness (hx_stray_subreaper) is reaped through that pidfd:
 * never waitpid(-1), other threads' clients are not touched. The caller
 * keeps the leader of @pgid unreaped meanwhile, so that the group's id
 * cannot be reused. Gives up after HX_STRAY_SWEEP_US. Returns the number
 * of processes found. Thread-safe.
 *
 * Not found: without a cgroup, a process that left the group, wiped its
 * environment and has a parent of its own that is not the harness (the
 * parent, an orphan, is found, and its child becomes one when it dies).
 */
size_t hx_stray_kill(const char *nonce, pid_t pgid, const char *cgroup);

#endif
