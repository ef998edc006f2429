#!/usr/bin/env bash
# --loopback runs every provider x endpoint type and prints one table each.
# Usage: loopback_test.sh PINGPONG [EXTRA_ARGS...] (e.g. -6: over ::1)
set -uo pipefail
pingpong=$1
shift
out=$(timeout 120 "$pingpong" --loopback -S 1024 -I 20 -c "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc" >&2; exit 1; }
for heading in "provider tcp, endpoint msg" "provider tcp, endpoint rdm" \
               "provider udp, endpoint dgram"; do
  grep -qF "== $heading ==" <<<"$out" || { echo "FAIL: no $heading" >&2; exit 1; }
done
cases=$(grep -c '^== provider' <<<"$out")
tables=$(grep -c '^bytes   #sent' <<<"$out")
[ "$cases" -eq "$tables" ] || { echo "FAIL: $cases cases, $tables tables" >&2; exit 1; }
grep -q "^$cases of $cases cases passed$" <<<"$out" || { echo "FAIL: summary" >&2; exit 1; }
echo PASS
