/* log.h -- one key=value line per event on stderr. */
#ifndef FA_LOG_H
#define FA_LOG_H

enum fa_log_level { FA_LOG_ERROR = 0, FA_LOG_WARN, FA_LOG_INFO, FA_LOG_DEBUG };

/* Events above this level are not even formatted. Default FA_LOG_WARN;
 * FAKEAPI_LOG=debug|info|warn|error in the environment overrides it. */
extern int fa_log_level;

/* Read FAKEAPI_LOG once; called by each program's main(). */
void fa_log_init(void);

/* Write "level=L mod=TAG msg" to stderr as one line. Use FA_LOG instead. */
void fa_log_write(int level, const char *tag, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* FA_LOG(FA_LOG_INFO, "server", "event=listen port=%u", port) */
#define FA_LOG(lvl, tag, ...)                                                                      \
	do {                                                                                       \
		if ((lvl) <= fa_log_level)                                                         \
			fa_log_write((lvl), (tag), __VA_ARGS__);                                   \
	} while (0)

#endif
