# exec_task.sh -- sourced by curl_retry.sh and wget_retry.sh: the task's
# arguments and budget, the same for both.
#
# Arguments METHOD URL BODY_FILE (exec mode's {method} {url} {body_file})
# set method, url and body_file. The budget comes from the variables exec
# mode sets (docs/client-protocol.md), FAKEAPI_MAX_ATTEMPTS,
# FAKEAPI_MAX_RETRIES and FAKEAPI_MAX_WAIT_S, else the retry-safety
# guide's read budget, 4 attempts and 60 s: max_attempts, max_retries
# (max_attempts - 1) and max_wait_s. The caller names itself in $tool.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $tool METHOD URL BODY_FILE" >&2
	exit 2
fi
method=$1
url=$2
body_file=$3

max_attempts=${FAKEAPI_MAX_ATTEMPTS:-4}
max_retries=${FAKEAPI_MAX_RETRIES:-$((max_attempts - 1))}
max_wait_s=${FAKEAPI_MAX_WAIT_S:-60}
