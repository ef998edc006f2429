#!/usr/bin/env bash
# The mpirun -np 2 pingpong command that runs across real hosts, across two
# "hosts" here: network namespaces A and B joined by a veth pair. mpirun
# runs in A and starts its daemon in B through netns_rsh.sh (Open MPI's rsh
# agent, in place of ssh); rank 0 (server) runs in A, rank 1 (client) in B.
# The test checks that the fabric traffic crossed the link: the endpoints'
# addresses (pingpong -v) are A's and B's, and B's interface counted at
# least the bytes pingpong moved each way.
#
# Usage: mpirun_two_hosts_test.sh PINGPONG
# Skips (exit 0, "SKIPPED" line) only when namespaces cannot be created.
set -uo pipefail
pingpong=$(realpath "$1")  # the same path on both "hosts", as mpirun needs
if ! command -v mpirun >/dev/null; then
  echo "mpirun is missing (Debian package openmpi-bin; ./setup.sh installs it)" >&2
  exit 1
fi
# shellcheck source=tools/testing/netns_pair.sh
source tools/testing/netns_pair.sh
trap netns_pair_down EXIT
netns_pair_up "mh$$" 10.77.0

netns_pair_mpi_env 10.77.0

# 100 x 64 KiB each way: far more than MPI's own bytes on the link.
size=65536
iterations=100
rx_file=/sys/class/net/$veth_b/statistics/rx_bytes
tx_file=/sys/class/net/$veth_b/statistics/tx_bytes
rx_before=$(ip netns exec "$ns_b" cat "$rx_file")
tx_before=$(ip netns exec "$ns_b" cat "$tx_file")
# One slot per host, one rank per node: rank 0 on A, rank 1 on B.
out=$(timeout 40 ip netns exec "$ns_a" mpirun --allow-run-as-root -np 2 \
  --host "$addr_a:1,$addr_b:1" --map-by node \
  "$pingpong" -p tcp -e rdm -c -v -S "$size" -I "$iterations" 2>&1)
rc=$?
rx=$(( $(ip netns exec "$ns_b" cat "$rx_file") - rx_before ))
tx=$(( $(ip netns exec "$ns_b" cat "$tx_file") - tx_before ))
# -v also prints each rank's fi_info, many lines; the rest is what matters.
grep -v -e '^fi_info:$' -e '^ ' <<<"$out"
echo "$veth_b in $ns_b: received $rx bytes, sent $tx bytes"
[ "$rc" -eq 0 ] || { echo "FAIL: mpirun exit $rc" >&2; exit 1; }

headers=$(grep -c '^bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec$' <<<"$out")
[ "$headers" -eq 2 ] || { echo "FAIL: $headers tables, expected 2" >&2; exit 1; }
# expect_names OWN PEER: a rank's endpoint is on OWN, its peer on PEER.
expect_names() {
  if ! grep -q "^endpoint fi_sockaddr_in://$1:[0-9]*, peer fi_sockaddr_in://$2:[0-9]*$" <<<"$out"; then
    echo "FAIL: no endpoint on $1 with its peer on $2" >&2
    exit 1
  fi
}
expect_names "$addr_a" "$addr_b"  # rank 0
expect_names "$addr_b" "$addr_a"  # rank 1
moved=$((size * iterations))
if [ "$rx" -lt "$moved" ] || [ "$tx" -lt "$moved" ]; then
  echo "FAIL: $veth_b carried less than the $moved bytes pingpong moved each way" >&2
  exit 1
fi
echo "PASS: mpirun -np 2 --host $addr_a,$addr_b pingpong across namespaces"
