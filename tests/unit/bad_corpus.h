/* bad_corpus.h -- the bad-file corpus, tests/data/bad/: each NAME.json beside NAME.err, its exact
 * message. */
#ifndef FX_BAD_CORPUS_H
#define FX_BAD_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

#define FX_BAD_DIR "tests/data/bad"

/* A CUnit failure whose text is built at run time (CUnit copies it). */
#define FX_FAILF(...)                                                                              \
	do {                                                                                       \
		char msg_[4096];                                                                   \
		snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                         \
		CU_assertImplementation(CU_FALSE, __LINE__, msg_, __FILE__, "", CU_FALSE);         \
	} while (0)

/*
 * Call @each(json, want) for every FX_BAD_DIR/NAME.json, @want being the
 * text of NAME.err without its trailing newlines (both strings are freed
 * after the call). A .err without its .json, or a .json without a
 * readable .err, fails the test. Returns the number of cases.
 */
size_t fx_bad_corpus(void (*each)(const char *json, const char *want));

/* Assert that the case @json was refused (not @loaded) with exactly
 * @want, the message a loader gave being @got. */
void fx_bad_case(const char *json, const char *want, bool loaded, const char *got);

#endif
