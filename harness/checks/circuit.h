/* circuit.h -- classify.circuit: an identical failure is not resent past the scenario's count. */
#ifndef HX_CIRCUIT_H
#define HX_CIRCUIT_H

#include "judge.h"

/*
 * classify.circuit (L4; the retry-safety guide: a circuit breaker for
 * repeated identical failures; varying whitespace or field order is not a new request). An
 * identical failure is a received answer with a status 400..499 other
 * than 408 and 429, grouped by method, route id (the endpoint's template)
 * and normalised error (status and the response body's error.code as the
 * scenario wrote it, "" without one). Fails when a group holds more than
 * its parameter "max_identical" attempts, across all tasks of the
 * scenario. n/a without that parameter or
 * without such a failure; passes otherwise. Both modes (server-measured).
 */
void hx_circuit_check(const struct hx_check_ctx *c, struct hx_check_result *r);

#endif
