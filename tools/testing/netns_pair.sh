# shellcheck shell=bash
# Two "hosts" on one machine: network namespaces A and B joined by a veth
# pair, each with its own network stack, so that traffic between them really
# crosses a link. Sourced by tests (run as root, tagged no-sandbox).
#
#   netns_pair_up PREFIX SUBNET   e.g. netns_pair_up "ff$$" 10.213.7
#     sets ns_a, ns_b (namespaces), veth_a, veth_b (their interfaces) and
#     addr_a = SUBNET.1, addr_b = SUBNET.2 (/24), with lo and veth up.
#     Exits the test: 0 with a SKIPPED line when namespaces cannot be created
#     (not root, no `ip netns`), 1 when a later step fails.
#   netns_pair_down
#     removes both; call it from the test's EXIT trap, set before
#     netns_pair_up so that a half-made pair is removed too.
#   netns_pair_mpi_env SUBNET
#     after netns_pair_up: exports what mpirun (run in A) needs to start
#     ranks on both: tools/testing/netns_rsh.sh (in the test's data) as its
#     rsh agent, mapping addr_a and addr_b to the namespaces; Open MPI's own
#     traffic (the name exchange, its daemons') on the link; its session
#     directories under the test's tmpdir; no leak reports of Open MPI's
#     allocations under LeakSanitizer.
# PREFIX must be unique per run (the PID): concurrent runs must not share
# names. Addresses may repeat: each pair has its own stacks.

netns_pair_up() {
  local prefix=$1 subnet=$2 error
  ns_a="${prefix}a"
  ns_b="${prefix}b"
  veth_a="${prefix}va"
  veth_b="${prefix}vb"
  addr_a="$subnet.1"
  addr_b="$subnet.2"
  if ! error=$(ip netns add "$ns_a" 2>&1); then
    echo "SKIPPED: cannot create network namespaces: $error"
    exit 0
  fi
  if ! { ip netns add "$ns_b" &&
         ip link add "$veth_a" type veth peer name "$veth_b" &&
         ip link set "$veth_a" netns "$ns_a" &&
         ip link set "$veth_b" netns "$ns_b" &&
         ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" &&
         ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" &&
         ip -n "$ns_a" link set lo up &&
         ip -n "$ns_b" link set lo up &&
         ip -n "$ns_a" link set "$veth_a" up &&
         ip -n "$ns_b" link set "$veth_b" up; }; then
    echo "FAIL: cannot set up namespaces $ns_a and $ns_b" >&2
    exit 1
  fi
}

netns_pair_down() {
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$veth_a" 2>/dev/null  # only if it never moved into ns_a
}

netns_pair_mpi_env() {
  local subnet=$1
  export NETNS_RSH_HOSTS="$addr_a=$ns_a $addr_b=$ns_b"
  OMPI_MCA_plm_rsh_agent=$(realpath tools/testing/netns_rsh.sh)
  export OMPI_MCA_plm_rsh_agent
  export OMPI_MCA_btl=self,tcp
  export OMPI_MCA_btl_tcp_if_include=$subnet.0/24
  export OMPI_MCA_oob_tcp_if_include=$subnet.0/24
  export TMPDIR=${TEST_TMPDIR:-/tmp}
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0
}
