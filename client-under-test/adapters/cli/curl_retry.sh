#!/bin/sh
# curl_retry.sh -- exec-mode adapter: one request through curl's own retry.
#
# curl 7.x/8.x (Debian 12's curl 7.88.1). What curl's manual page says
# its retry flags do (man curl, --retry, --retry-max-time,
# https://curl.se/docs/manpage.html#--retry):
#   --retry N          retry a "transient error": a timeout, or an HTTP
#                      408, 429, 500, 502, 503 or 504 answer; first wait
#                      1 s, then double it up to 10 minutes; "Since curl
#                      7.66.0, curl will comply with the Retry-After:
#                      response header if one was present to know when to
#                      issue the next retry". No jitter. A connection
#                      refused, reset or cut short is not transient
#                      (--retry-all-errors would make it so; the manual
#                      calls that the "sledgehammer" and advises against
#                      it by default), so a write whose answer was dropped
#                      is not sent again.
#   --retry-max-time S retries are made "as long as the timer has not
#                      reached this given limit", counted from before the
#                      first attempt; a request started inside it may run
#                      past it. 0 means no limit.
# Mapped from the task: --retry max_attempts-1, --retry-max-time
# max_wait_s (a budget of 0 s allows no retry: --retry 0, since curl reads
# 0 as "no limit"). Nothing else is tuned: no --max-time (curl waits for
# an answer as long as it takes), no --rate (it paces the transfers of
# one curl command, and each task is its own process).
#
# Usage (exec mode):
#   fakeapi-harness run --exec 'client-under-test/adapters/cli/curl_retry.sh {method} {url} {body_file}' SUITE
# Environment (docs/client-protocol.md, exec mode): FAKEAPI_KEY (sent as
# Authorization: Bearer through curl's config on stdin, never in argv),
# FAKEAPI_MAX_ATTEMPTS, FAKEAPI_MAX_RETRIES, FAKEAPI_MAX_WAIT_S and
# FAKEAPI_HEADERS_FILE (the task's headers, one "Name: value" a line, for
# -H @FILE); where the harness does not set them the defaults are the
# retry-safety guide's read budget, 4 attempts and 60 s, and a
# Content-Type: application/json for a body.
# Exit status: curl's (0 for a 2xx; -f makes an HTTP error 22).
tool=curl_retry.sh
. "$(dirname "$0")/exec_task.sh"
case $max_wait_s in
0 | 0.0 | 0.00) max_retries=0 ;;
esac

set -- -sS -f -X "$method" --retry "$max_retries" --retry-max-time "$max_wait_s" -K -
if [ -n "${FAKEAPI_HEADERS_FILE:-}" ]; then
	set -- "$@" -H "@$FAKEAPI_HEADERS_FILE"
elif [ -s "$body_file" ]; then
	set -- "$@" -H "Content-Type: application/json"
fi
if [ -s "$body_file" ]; then
	set -- "$@" --data-binary "@$body_file"
fi

# printf is a shell builtin: the key reaches curl through a pipe, not argv.
printf 'header = "Authorization: Bearer %s"\n' "${FAKEAPI_KEY:-}" | curl "$@" "$url"
