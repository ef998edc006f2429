#!/usr/bin/env bash
# Two hosts on an impaired link: network namespaces A and B joined by a veth
# pair, lossy, delaying and reordering in both directions. Debian's
# prebuilt fi_pingpong runs as a server in A and a client in B against
# LIBFABRIC_SO with data checks (-c) over tcp MSG and RDM; then udp DGRAM
# runs on the same link with the impairment removed (datagrams may be lost
# by design, and fi_pingpong does not retransmit them).
#
# The impairment is netem (delay 5ms 2ms, loss 2%, reorder 10% 50%) where the
# kernel has it. Kernels without sch_netem get the same effects from what
# they do have (htb_impair below). Either way the test asserts that packets
# were really dropped and segments really arrived out of order.
#
# Usage: netns_netem_test.sh LIBFABRIC_SO
# Skips (exit 0, "SKIPPED" line) only when namespaces cannot be created.
set -uo pipefail

library=$(realpath "$1")
pingpong=${FI_PINGPONG:-/usr/bin/fi_pingpong}
if [ ! -x "$pingpong" ]; then
  echo "FAIL: $pingpong is missing (package libfabric-bin; ./setup.sh)" >&2
  exit 1
fi
# shellcheck source=tools/testing/sanitizer_runtime.sh
source tools/testing/sanitizer_runtime.sh

# shellcheck source=tools/testing/netns_pair.sh
source tools/testing/netns_pair.sh

server=""
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/netns_netem.XXXXXX")

cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  netns_pair_down
  rm -rf "$work"
}
trap cleanup EXIT

# Namespace and interface names unique per run (the PID).
netns_pair_up "ff$$" "10.213.$(($$ % 250 + 1))"

# htb_impair NS DEV: without netem. A classic-BPF filter draws a random
# number per packet: 2% go to a class whose queue holds nothing (loss), 10%
# to a slow class (queueing delay; they fall behind the others: reordering).
# Segmentation offload is off so that a loss is one MTU-sized packet.
htb_impair() {
  local x="ip netns exec $1 tc" dev=$2
  ip -n "$1" link set dev "$dev" gso_max_segs 1 || return 1
  $x qdisc add dev "$dev" root handle 1: htb default 10 r2q 1000 &&
  $x class add dev "$dev" parent 1: classid 1:10 htb rate 1gbit &&
  $x class add dev "$dev" parent 1: classid 1:20 htb rate 20mbit &&
  $x class add dev "$dev" parent 1: classid 1:30 htb rate 1gbit &&
  $x qdisc add dev "$dev" parent 1:20 handle 20: pfifo limit 200 &&
  $x qdisc add dev "$dev" parent 1:30 handle 30: pfifo limit 0 &&
  # A = random % 100; A < 2: class 1:30; A < 12: class 1:20; else default.
  $x filter add dev "$dev" parent 1: protocol ip prio 1 bpf bytecode \
    "7,32 0 0 4294963256,148 0 0 100,53 1 0 2,6 0 0 65584,53 1 0 12,6 0 0 65568,6 0 0 0" \
    flowid 1:10
}

impairment=""
if ip netns exec "$ns_a" tc qdisc add dev "$veth_a" root netem \
     delay 5ms 2ms loss 2% reorder 10% 50% 2>"$work/netem.err" &&
   ip netns exec "$ns_b" tc qdisc add dev "$veth_b" root netem \
     delay 5ms 2ms loss 2% reorder 10% 50%; then
  impairment="netem delay 5ms 2ms loss 2% reorder 10% 50%"
else
  echo "NOTE: no netem here ($(cat "$work/netem.err")); using htb + BPF instead"
  ip netns exec "$ns_a" tc qdisc del dev "$veth_a" root 2>/dev/null
  if ! htb_impair "$ns_a" "$veth_a" || ! htb_impair "$ns_b" "$veth_b"; then
    echo "FAIL: cannot impair the link with netem or htb" >&2
    exit 1
  fi
  impairment="random 2% loss, 10% through a 20mbit queue (delay, reordering)"
fi
echo "link $ns_a/$addr_a <-> $ns_b/$addr_b: $impairment (both directions)"

mkdir "$work/lib"
ln -s "$library" "$work/lib/libfabric.so.1"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
port=23456

in_ns() { local ns=$1; shift; exec ip netns exec "$ns" "$@"; }

# pingpong ARGS...: a server in A, a client in B connecting to A's address.
pingpong() {
  local args=(-c "$@") start client_rc server_rc
  start=$(date +%s.%N)
  run_uninstrumented "$library" in_ns "$ns_a" timeout 60 "$pingpong" \
    "${args[@]}" -B "$port" >"$work/server.out" 2>&1 &
  server=$!
  for _ in $(seq 50); do
    if ip netns exec "$ns_a" ss -ltn "sport = :$port" | grep -q LISTEN; then
      break
    fi
    sleep 0.1
  done
  run_uninstrumented "$library" in_ns "$ns_b" timeout 60 "$pingpong" \
    "${args[@]}" -P "$port" "$addr_a" >"$work/client.out" 2>&1
  client_rc=$?
  # A client that failed leaves the server waiting for it.
  [ "$client_rc" -ne 0 ] && kill "$server" 2>/dev/null
  wait "$server"
  server_rc=$?
  server=""
  printf '%s: client %d, server %d, %.1f s\n' "${args[*]}" "$client_rc" \
    "$server_rc" "$(echo "$(date +%s.%N) - $start" | bc)"
  if [ "$client_rc" -ne 0 ] || [ "$server_rc" -ne 0 ] ||
     ! grep -q "usec/xfer" "$work/client.out"; then
    echo "FAIL: fi_pingpong ${args[*]}" >&2
    echo "--- client"; cat "$work/client.out"
    echo "--- server"; cat "$work/server.out"
    exit 1
  else
    tail -n 1 "$work/client.out"
  fi
}

# netstat_sum NS FIELD...: the sum of those counters of NS's TCP stack.
netstat_sum() {
  local ns=$1; shift
  ip netns exec "$ns" cat /proc/net/netstat /proc/net/snmp |
    awk -v want=" $* " '
      /^[A-Za-z]+:/ && !($1 in names) { names[$1] = 1; split($0, keys); next }
      { for (i = 2; i <= NF; i++) if (index(want, " " keys[i] " ")) s += $i }
      END { print s + 0 }'
}

for ep in msg rdm; do
  pingpong -p tcp -e "$ep" -S 65536 -I 100
  pingpong -p tcp -e "$ep" -S 4194304 -I 10
done

# The impairment must have acted, or this test proved nothing.
drops=0
for side in "$ns_a $veth_a" "$ns_b $veth_b"; do
  set -- $side
  n=$(ip netns exec "$1" tc -s qdisc show dev "$2" |
      awk '/dropped/ { gsub(",", ""); print $7; exit }')  # the root's
  drops=$((drops + n))
done
retrans=$(( $(netstat_sum "$ns_a" RetransSegs) + $(netstat_sum "$ns_b" RetransSegs) ))
ofo=$(( $(netstat_sum "$ns_a" TCPOFOQueue) + $(netstat_sum "$ns_b" TCPOFOQueue) ))
echo "link: $drops packets dropped, $retrans TCP segments retransmitted," \
  "$ofo segments queued out of order"
if [ "$drops" -eq 0 ] || [ "$retrans" -eq 0 ] || [ "$ofo" -eq 0 ]; then
  echo "FAIL: the link was not impaired" >&2
  exit 1
fi

# udp on the same link, clean.
ip netns exec "$ns_a" tc qdisc del dev "$veth_a" root
ip netns exec "$ns_b" tc qdisc del dev "$veth_b" root
pingpong -p udp -e dgram -S all -I 20
echo "PASS"
