#!/bin/sh
# wget_retry.sh -- exec-mode adapter: one request through wget's own retry.
#
# GNU Wget 1.21 (Debian 12's wget 1.21.3). What wget's manual says its
# retry options do (man wget, https://www.gnu.org/software/wget/manual/wget.html):
#   --tries=N          "Set number of tries to number", every try counted
#                      (default 20); "fatal errors like 'connection
#                      refused' or 'not found' (404)" are not retried.
#   --retry-on-http-error=CODES  "Consider given HTTP response codes as
#                      non-fatal, transient errors ... Such errors might be
#                      503 (Service Unavailable) and 429 (Too Many
#                      Requests)"; retried "subject to the normal retry
#                      timing and retry count limitations".
#   --waitretry=S      "linear backoff, waiting 1 second after the first
#                      failure on a given file, then waiting 2 seconds
#                      after the second failure on that file, up to the
#                      maximum number of seconds you specify" (default 10).
# wget 1.21 does not read Retry-After at all (the header is nowhere in
# its program), adds no jitter, and has no total-time limit.
# Mapped from the task: --tries max_attempts, --waitretry max_wait_s (its
# longest single wait: no one wait outruns the budget), and
# --retry-on-http-error=429,500,502,503,504. Nothing else is tuned
# (wget's own 900 s read timeout stays).
#
# Usage (exec mode):
#   fakeapi-harness run --exec 'client-under-test/adapters/cli/wget_retry.sh {method} {url} {body_file}' SUITE
# Environment (docs/client-protocol.md, exec mode): FAKEAPI_KEY (sent as
# Authorization: Bearer through a wgetrc file of mode 600 made for the
# run and removed at its end; wget cannot read its startup file from a
# pipe, and --header would put the key in argv), FAKEAPI_MAX_ATTEMPTS,
# FAKEAPI_MAX_WAIT_S, FAKEAPI_HEADERS_FILE (the task's headers, one
# "Name: value" a line); where the harness does not set them the defaults
# are the retry-safety guide's read budget, 4 attempts and 60 s, and a
# Content-Type: application/json for a body.
# Exit status: wget's (0 for a 2xx; 8 for an HTTP error answer).
tool=wget_retry.sh
. "$(dirname "$0")/exec_task.sh"
rc_file=$(mktemp "${TMPDIR:-/tmp}/wget_retry.XXXXXX") || exit 2
trap 'rm -f "$rc_file"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
{
	printf 'header = Authorization: Bearer %s\n' "${FAKEAPI_KEY:-}"
	if [ -n "${FAKEAPI_HEADERS_FILE:-}" ]; then
		while IFS= read -r line || [ -n "$line" ]; do
			[ -n "$line" ] && printf 'header = %s\n' "$line"
		done <"$FAKEAPI_HEADERS_FILE"
	elif [ -s "$body_file" ]; then
		printf 'header = Content-Type: application/json\n'
	fi
} >"$rc_file"

set -- -nv -O - --config="$rc_file" --tries="$max_attempts" --waitretry="$max_wait_s" \
	--retry-on-http-error=429,500,502,503,504 --method="$method"
if [ -s "$body_file" ]; then
	set -- "$@" --body-file="$body_file"
fi
wget "$@" "$url"
