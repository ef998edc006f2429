#!/usr/bin/env bash
# The guest side of bench:verbs_instructions (verbs_instructions.sh says
# what it measures): runs inside the soft-RoCE guest.
#
# Usage: verbs_instructions_guest.sh PINGPONG LIB_ROOT FEW MANY SETTLE_US SIZE WARMUP EMPTY_POLLS CASE...
#   LIB_ROOT holds ours/libfabric.so.1 and libfabric/libfabric.so.1;
#   EMPTY_POLLS is yes or no.
set -uo pipefail
pingpong=$1 lib_root=$2 few=$3 many=$4 settle_us=$5 size=$6 warmup=$7
empty_polls=$8
shift 8
address=10.0.2.15
export FI_UNIVERSE_SIZE=16
port=47600

# Runs a server on $port and a callgrind'ed client of `iterations` (the
# caller moves $port on: this runs in a subshell); prints
# "INSTRUCTIONS EMPTY_POLLS", or "failed: WHY" and returns 1. With `slow`
# the server sleeps 2 ms before it polls for each completion and the
# client 1 us: the client's polls then find nothing while it waits for the
# answer (empty polls).
count() {
  local lib=$1 ep=$2 iterations=$3 slow=${4:-} out
  local server_settle=() settle=$settle_us
  if [ -n "$slow" ]; then
    server_settle=(--settle-us 2000)
    settle=1
  fi
  out=$(mktemp -d /tmp/vi.XXXXXX)
  LD_LIBRARY_PATH="$lib_root/$lib" timeout 900 "$pingpong" -p verbs -e "$ep" \
    -S "$size" -I "$iterations" -B "$port" --receive-timeout 300 \
    --warmup "$warmup" "${server_settle[@]}" >"$out/server" 2>&1 &
  local server=$!
  sleep 1
  LD_LIBRARY_PATH="$lib_root/$lib" timeout 900 valgrind --tool=callgrind \
    --toggle-collect='*TimedLoop*' \
    --callgrind-out-file=/dev/null "$pingpong" -p verbs -e "$ep" \
    -S "$size" -I "$iterations" -P "$port" --settle-us "$settle" \
    --receive-timeout 300 --warmup "$warmup" \
    "$address" >"$out/client" 2>&1
  local client_rc=$?
  # A client that failed before it connected leaves the server waiting.
  [ "$client_rc" -ne 0 ] && kill "$server" 2>/dev/null
  wait "$server"
  local server_rc=$?
  local collected empty
  collected=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out/client")
  empty=$(sed -n 's/^empty polls: \([0-9]*\)$/\1/p' "$out/client")
  if [ "$client_rc" -ne 0 ] || [ "$server_rc" -ne 0 ] || [ -z "$collected" ]; then
    echo "failed: client $client_rc, server $server_rc: $(grep -m1 -iE 'error|fail|timeout' "$out/client" "$out/server")"
    rm -rf "$out"
    return 1
  fi
  echo "$collected ${empty:-?}"
  rm -rf "$out"
}

printf '%-5s %-10s %14s %14s %12s %12s\n' case library "run of $few" \
  "run of $many" "per trip" "per empty"
declare -A per_trip
for ep in "$@"; do
  for lib in ours libfabric; do
    port=$((port + 1))
    a=$(count "$lib" "$ep" "$few") || { echo "$ep $lib: $a"; continue; }
    port=$((port + 1))
    b=$(count "$lib" "$ep" "$many") || { echo "$ep $lib: $b"; continue; }
    read -r a_total a_empty <<<"$a"
    read -r b_total b_empty <<<"$b"
    per_trip[$ep.$lib]=$(( (b_total - a_total) / (many - few) ))
    # The run of FEW again with a slow server: what its extra empty polls
    # add, per poll (the application's loop included).
    per_empty=-
    if [ "$empty_polls" = yes ]; then
      port=$((port + 1))
      if e=$(count "$lib" "$ep" "$few" slow); then
        read -r e_total e_empty <<<"$e"
        if [ "$e_empty" -gt "$a_empty" ] 2>/dev/null; then
          per_empty=$(( (e_total - a_total) / (e_empty - a_empty) ))
          per_empty="$per_empty ($e_empty)"
        fi
      else
        echo "$ep $lib, empty polls: $e"
      fi
    fi
    printf '%-5s %-10s %14s %14s %12s %12s   (empty polls %s, %s)\n' \
      "$ep" "$lib" "$a_total" "$b_total" "${per_trip[$ep.$lib]}" \
      "$per_empty" "$a_empty" "$b_empty"
  done
done
echo
status=0
for ep in "$@"; do
  ours=${per_trip[$ep.ours]:-} theirs=${per_trip[$ep.libfabric]:-}
  goal=0.7
  [ "$ep" = rdm ] && goal=0.5
  if [ -z "$ours" ] || [ -z "$theirs" ]; then
    echo "$ep: no ratio (a run failed)"
    status=1
    continue
  fi
  ratio=$(awk -v o="$ours" -v t="$theirs" 'BEGIN { printf "%.2f", o / t }')
  verdict=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r <= g) ? "PASS" : "MISS" }')
  echo "$ep: ours $ours, libfabric $theirs instructions per round trip: ${ratio}x (goal <= ${goal}x) $verdict"
done
exit "$status"
