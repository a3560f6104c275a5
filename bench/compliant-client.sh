#!/bin/sh
# compliant-client.sh -- a small retry client that follows the rules the
# fakeapi harness grades: it honours Retry-After (delta-seconds or an
# HTTP-date), shares a pause with the other tasks of its account, never
# retries a request that needs fixing, and stops after a fixed number of
# attempts.
#
# Shared pause (the retry-safety guide: a pause told to one request holds for the whole
# account): when CLIENT_STATE_DIR is set, every pause is also written there
# as an absolute time, and every attempt first waits until the latest pause
# recorded there is over. The harness gives one fresh CLIENT_STATE_DIR per
# scenario, so all tasks of a scenario share it; the client cannot tell which
# keys share an account, so it treats them all as one (the safe side).
#
# Not done here: jitter (tasks released by one shared pause retry together,
# which the harness's wait.jitter check grades), idempotency keys for writes,
# and a total time budget.
#
# usage: compliant-client.sh URL [METHOD [BODY_FILE]]
#
# METHOD defaults to GET; a non-empty BODY_FILE is sent as a JSON body.
# The API key comes from the environment (FAKEAPI_KEY), never from argv,
# where `ps` would show it. Exit status: 0 on a 2xx answer, 1 otherwise.
#
# As a harness client (exec mode):
#   fakeapi-harness run --exec 'sh bench/compliant-client.sh {url} {method} {body_file}' SUITE
#
# Needs: curl, and GNU date and sleep (fractional seconds, `date -d`).
set -u

url=${1:?usage: compliant-client.sh URL [METHOD [BODY_FILE]]}
method=${2:-GET}
body_file=${3:-}
: "${FAKEAPI_KEY:?FAKEAPI_KEY is not set}"

MAX_ATTEMPTS=4      # first attempt included
MIN_PAUSE=0.1       # seconds; the floor after a zero or past Retry-After
NO_HINT_PAUSE=1     # seconds to wait on a 429/503 without a usable Retry-After

# Scratch files for curl's headers and body; inside CLIENT_STATE_DIR when
# there is one, so whoever removes that folder also removes a leftover of a
# client killed mid-sleep.
tmp=$(mktemp -d "${CLIENT_STATE_DIR:-${TMPDIR:-/tmp}}/compliant-client.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

# Print the value of the Retry-After header in the saved response headers
# (case-insensitive name, CR stripped), or nothing.
retry_after_value() {
	tr -d '\r' <"$tmp/headers" |
		sed -n 's/^[Rr][Ee][Tt][Rr][Yy]-[Aa][Ff][Tt][Ee][Rr]:[[:space:]]*//p' |
		tail -n 1
}

# Print how many seconds to sleep for a Retry-After value (RFC 9110
# section 10.2.3): delta-seconds as they are, an HTTP-date as the time left
# until it (0 when already past), then at least MIN_PAUSE. An empty or
# unparsable value gives NO_HINT_PAUSE.
pause_for() {
	value=$1
	case $value in
	'')
		echo "$NO_HINT_PAUSE"
		return
		;;
	*[!0-9]*)
		# Not all digits: try it as an HTTP-date (date -d reads the
		# IMF-fixdate, RFC 850 and asctime forms).
		if ! target=$(date -u -d "$value" +%s 2>/dev/null); then
			echo "$NO_HINT_PAUSE"
			return
		fi
		now=$(date +%s.%N)
		secs=$(awk -v t="$target" -v n="$now" 'BEGIN { d = t - n; print (d > 0 ? d : 0) }')
		;;
	*)
		secs=$value
		;;
	esac
	awk -v s="$secs" -v m="$MIN_PAUSE" 'BEGIN { print (s + 0 > m + 0 ? s : m) }'
}

# Shared pause file: one line, the Unix time (fractional seconds) before
# which no task may send.
pause_file=${CLIENT_STATE_DIR:+$CLIENT_STATE_DIR/pause-until}

# Record a pause of $1 seconds from now, unless a later one is recorded.
# Written to a temporary file and renamed, so readers never see half a line.
share_pause() {
	[ -n "$pause_file" ] || return 0
	due=$(awk -v n="$(date +%s.%N)" -v s="$1" 'BEGIN { printf "%.6f\n", n + s }')
	if [ -f "$pause_file" ] &&
		awk -v u="$due" '{ exit !($1 + 0 >= u + 0) }' "$pause_file"; then
		return 0
	fi
	echo "$due" >"$pause_file.$$" && mv -f "$pause_file.$$" "$pause_file"
}

# Sleep until the recorded shared pause is over (no-op when there is none).
wait_shared_pause() {
	[ -n "$pause_file" ] && [ -f "$pause_file" ] || return 0
	left=$(awk -v n="$(date +%s.%N)" '{ d = $1 - n; printf "%.3f\n", (d > 0 ? d : 0) }' "$pause_file")
	case $left in
	0.000 | '') return 0 ;;
	esac
	echo "compliant-client: account paused, waiting ${left}s" >&2
	sleep "$left"
}

# How curl sends the method and body: HEAD needs --head (with -X HEAD curl
# would wait for a body that never comes); a body goes as JSON, byte for
# byte, the same on every attempt.
set -- -X "$method"
[ "$method" = HEAD ] && set -- --head
if [ -n "$body_file" ] && [ -s "$body_file" ]; then
	set -- "$@" -H 'Content-Type: application/json' --data-binary "@$body_file"
fi

attempt=1
while :; do
	wait_shared_pause
	code=$(curl -s "$@" -D "$tmp/headers" -o "$tmp/body" \
		-w '%{http_code}' \
		-H "Authorization: Bearer $FAKEAPI_KEY" "$url") || code=000
	case $code in
	2??)
		# The answer's body is the result (a HEAD answer has none).
		[ "$method" = HEAD ] || cat "$tmp/body"
		exit 0
		;;
	400 | 401 | 403 | 404 | 422)
		# The request itself is wrong: resending it cannot help.
		echo "compliant-client: HTTP $code, not retried" >&2
		exit 1
		;;
	429 | 503)
		pause=$(pause_for "$(retry_after_value)")
		share_pause "$pause"
		;;
	*)
		# Connection failure (000) or another server error: no hint
		# from the server, so a plain fixed pause.
		pause=$NO_HINT_PAUSE
		;;
	esac
	if [ "$attempt" -ge "$MAX_ATTEMPTS" ]; then
		echo "compliant-client: HTTP $code after $attempt attempts, giving up" >&2
		exit 1
	fi
	echo "compliant-client: HTTP $code, attempt $attempt, retrying in ${pause}s" >&2
	sleep "$pause"
	attempt=$((attempt + 1))
done
