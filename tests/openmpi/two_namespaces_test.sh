#!/usr/bin/env bash
# Open MPI over our libfabric.so.1 on two "hosts" that share /dev/shm and a
# hostname but not a network: network namespaces A and B joined by a veth
# pair (ip netns exec shares the mount of /dev/shm and the hostname), as
# containers on one machine that share /dev/shm. mpirun runs in A and starts
# its daemon in B through netns_rsh.sh; 4 ranks, 2 per host, run
# mpi_collectives_check (first contacts before the receiver addressed its
# sender, collectives, every pair's messages checked) with pml cm + mtl ofi
# on our tcp provider: with its local path (shm between ranks of one host)
# and without (FI_TCP_SHM=0), several launches each.
#
# Before the fix of the AV's late inserts every launch hung in the first
# contact; a message delivered to a receive it does not belong to fails the
# program (MPI_ERR_TRUNCATE or wrong bytes).
#
# Usage: two_namespaces_test.sh MPI_COLLECTIVES_CHECK LIBFABRIC_SO
# Skips (exit 0, "SKIPPED" line) only when namespaces cannot be created.
set -uo pipefail
program=$(realpath "$1")  # the same path on both "hosts", as mpirun needs
library=$(realpath "$2")
launches=${LAUNCHES:-3}
if ! command -v mpirun >/dev/null; then
  echo "mpirun is missing (Debian package openmpi-bin; ./setup.sh installs it)" >&2
  exit 1
fi
# shellcheck source=tools/testing/netns_pair.sh
source tools/testing/netns_pair.sh
trap netns_pair_down EXIT
netns_pair_up "om$$" 10.79.0

# What the test is about: both hosts see one /dev/shm and one hostname.
probe=/dev/shm/two_namespaces_test.$$
ip netns exec "$ns_a" touch "$probe"
shared=no
ip netns exec "$ns_b" test -e "$probe" && shared=yes
rm -f "$probe"
host_a=$(ip netns exec "$ns_a" hostname)
host_b=$(ip netns exec "$ns_b" hostname)
if [ "$shared" != yes ] || [ "$host_a" != "$host_b" ]; then
  echo "FAIL: namespaces do not share /dev/shm ($shared) or hostname ($host_a, $host_b)" >&2
  exit 1
fi

netns_pair_mpi_env 10.79.0

# launch TCP_SHM: one mpirun; checks each rank's line.
launch() {
  local out rc
  out=$(timeout 60 ip netns exec "$ns_a" mpirun --allow-run-as-root -np 4 \
    --host "$addr_a:2,$addr_b:2" --map-by slot \
    --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp \
    -x LD_LIBRARY_PATH="$(dirname "$library")" -x FI_TCP_SHM="$1" \
    "$program" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$out"
    [ "$rc" -eq 124 ] && echo "FAIL: FI_TCP_SHM=$1: mpirun hung (60 s)" >&2
    echo "FAIL: FI_TCP_SHM=$1: mpirun exit $rc" >&2
    return 1
  fi
  local ok
  ok=$(grep -c "^rank [0-3] of 4: ok, netns [0-9]*, libfabric $library$" <<<"$out")
  # 2 ranks in each of 2 namespaces.
  local per_netns
  per_netns=$(grep -o "netns [0-9]*" <<<"$out" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
  if [ "$ok" -ne 4 ] || [ "$per_netns" != "2 2 " ]; then
    echo "$out"
    echo "FAIL: FI_TCP_SHM=$1: $ok of 4 ranks ok on our library, ranks per namespace: $per_netns" >&2
    return 1
  fi
}

for tcp_shm in 1 0; do
  for ((i = 1; i <= launches; ++i)); do
    launch "$tcp_shm" || exit 1
  done
  echo "FI_TCP_SHM=$tcp_shm: $launches launches of 4 ranks passed"
done
echo "PASS: Open MPI across two namespaces sharing /dev/shm and hostname"
