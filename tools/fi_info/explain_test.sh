#!/usr/bin/env bash
# fi_info --explain, with this project's library: when nothing matches, each
# provider's first unmet hint is logged on stderr; without --explain it is not.
#
# Usage: explain_test.sh FI_INFO
set -uo pipefail

fi_info=$1
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fi_info_explain.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset FI_LOG_LEVEL FI_LOG_SUBSYS FI_LOG_PROV
failed=0

"$fi_info" --explain -t FI_EP_SOCK_STREAM >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -ne 61 ]; then
  echo "FAIL: --explain -t FI_EP_SOCK_STREAM exited with $status, not 61 (FI_ENODATA)"
  failed=1
fi
for expected in "tcp: ep_type FI_EP_SOCK_STREAM not supported" \
  "<warn>" "fi_getinfo: -61"; do
  if ! grep -qF "$expected" "$work/err"; then
    echo "FAIL: --explain: stderr lacks \"$expected\":"
    cat "$work/err"
    failed=1
  fi
done

"$fi_info" -t FI_EP_SOCK_STREAM >"$work/out" 2>"$work/err"
if [ "$(cat "$work/err")" != "fi_getinfo: -61" ]; then
  echo "FAIL: without --explain, stderr is not just the fi_getinfo error:"
  cat "$work/err"
  failed=1
fi

[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
