#!/usr/bin/env bash
# The command line of an example program: -h prints the usage on stdout and
# exits 0; each bad argument list prints a reason and the usage on stderr,
# nothing on stdout, and exits 2.
#
# Usage: usage_test.sh PROGRAM [BAD_ARGS...]
#   each BAD_ARGS is one argument list, split at spaces ("--protocol ib").
set -uo pipefail

program=$1
shift
bad=("--bogus" "-p" "-p 70000" "-p x1" "a b" "-p 0 127.0.0.1" "$@")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/usage.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

"$program" -h >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "^usage:" "$work/out" || [ -s "$work/err" ]; then
  echo "FAIL: -h: exit $rc, usage on stdout expected" >&2
  status=1
fi
for case in "${bad[@]}"; do
  # shellcheck disable=SC2086  # split on purpose
  timeout 10 "$program" $case >"$work/out" 2>"$work/err"
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "^usage:" "$work/err" || [ -s "$work/out" ]; then
    echo "FAIL: '$case': exit $rc (expected 2), stderr:" >&2
    cat "$work/err" >&2
    status=1
  else
    echo "ok: '$case' -> exit 2: $(head -1 "$work/err")"
  fi
done
exit "$status"
