#!/usr/bin/env bash
# mpirun -np 2 pingpong: rank 0 serves, rank 1 is the client; the endpoint
# names travel over MPI, the data over our fabric. Run as root here, so
# --allow-run-as-root; the TCP BTL on loopback is all MPI needs.
set -uo pipefail
pingpong=$1
shift
if ! command -v mpirun >/dev/null; then
  echo "mpirun is missing (Debian package openmpi-bin; ./setup.sh installs it)" >&2
  exit 1
fi
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_plm_rsh_agent=false  # one host: never ssh
export TMPDIR=${TEST_TMPDIR:-/tmp}   # Open MPI's session directory
# Under --config=asan, LeakSanitizer reports Open MPI's own allocations
# (libmpi and its components, unloaded by then so unnamed) at exit. Our
# library's leaks are checked by the same flows without MPI (pair tests).
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0
out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 \
  "$pingpong" "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: mpirun exit $rc" >&2; exit 1; }
# Both ranks print the table, as fi_pingpong's server and client do.
headers=$(grep -c '^bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec$' <<<"$out")
[ "$headers" -eq 2 ] || { echo "FAIL: $headers tables, expected 2" >&2; exit 1; }
echo "PASS: mpirun -np 2 pingpong $*"
