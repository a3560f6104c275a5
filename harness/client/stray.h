/* stray.h -- client processes that left their process group: marked, found in /proc, killed. */
#ifndef HX_STRAY_H
#define HX_STRAY_H

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

/*
 * SIGKILL every process of the harness's user whose environment holds
 * the entry HX_STRAY_ENV=@nonce (@nonce as hx_stray_nonce() made it; NULL
 * = none) and every process of group @pgid but its leader (0 = none), and
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
 * Not found: a process that rewrote its environment (env -i) and left the
 * group, and one that left the group and exited on its own before the
 * sweep: a zombie shows no environment, so nothing ties it to a client
 * (it stays unreaped until the harness exits).
 */
size_t hx_stray_kill(const char *nonce, pid_t pgid);

#endif
