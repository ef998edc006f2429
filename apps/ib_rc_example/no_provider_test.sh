#!/usr/bin/env bash
# Without InfiniBand, the slide's hints (FI_PROTO_RDMA_CM_IB_RC) match no
# provider: ib_rc_example says so in one line on stderr and exits 77, as
# server and as client, with or without --prov tcp.
set -uo pipefail

program=$1
if compgen -G "/sys/class/infiniband/*" >/dev/null; then
  echo "SKIP: this machine has InfiniBand devices"
  exit 0
fi
status=0
for args in "" "--prov tcp" "127.0.0.1" "--protocol rdma_cm_ib_rc -p 1 127.0.0.1"; do
  # shellcheck disable=SC2086  # split on purpose
  err=$(timeout 10 "$program" $args 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$rc" -ne 77 ] || [ "$lines" -ne 1 ] ||
     ! grep -qF "no InfiniBand RC provider here (fi_getinfo: No data available); run with --prov tcp --protocol any" <<<"$err"; then
    echo "FAIL: '$args': exit $rc, stderr: $err" >&2
    status=1
  else
    echo "ok: '$args' -> exit 77: $err"
  fi
done
exit "$status"
