/* taskmsg.h -- reading a task message: its fields, its class and budget, its saved write. */
#ifndef REF_TASKMSG_H
#define REF_TASKMSG_H

#include "rc.h"
#include "state.h"
#include "taskrun.h"

struct cJSON;

/*
 * Fill @t, freshly allocated by ref_task_new() (its lock, cancel flag and
 * shared parts set, every other field zero), from the `task` message @msg;
 * ref_task_new() in task.h says what is read and how. Fields read before
 * an error stay set (ref_task_free() frees them). On FA_EINVAL @err names
 * the field. A write takes its operation from @st (ref_state_take()), so
 * call from one thread only.
 */
enum fa_rc ref_taskmsg_read(struct ref_task *t, const struct cJSON *msg, struct ref_state *st,
                            struct fa_err *err);

#endif
