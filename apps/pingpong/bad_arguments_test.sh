#!/usr/bin/env bash
# Bad arguments: a usage message on stderr and a non-zero exit, nothing run.
set -uo pipefail
pingpong=$1
failures=0
check() {
  local stderr rc
  stderr=$(timeout 10 "$pingpong" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! grep -q '^Usage:' <<<"$stderr"; then
    echo "FAIL: pingpong $* exited $rc with stderr:"
    echo "$stderr"
    failures=$((failures + 1))
  else
    echo "ok: pingpong $* -> exit $rc, $(head -1 <<<"$stderr")"
  fi
}
check --bogus
check -x
check -e bogus
check -S notanumber
check -S -5
check -I 12abc
check -P 70000
check -m bogus
check -p          # missing value
check -h
check 127.0.0.1 extra
check --loopback 127.0.0.1
check --settle-us -1
check --settle-us 99999999
check --receive-timeout 0
check --warmup -1
check --warmup many
[ "$failures" -eq 0 ]
