#!/usr/bin/env bash
# bench:rma: windowed RMA reads and writes, and windowed messages, between
# two processes on this host over shm (rma_window.cc), on our
# libfabric.so.1 and on Debian's libfabric 1.17.
#
#   bazel run -c opt //bench:rma -- [OPTIONS]
#
# For each size, each operation (send, read, write) runs once over each
# library in every round, alternating, so that a change in the machine's
# load hits both alike; the target is pinned to CPU 0, the initiator to
# CPU 1 (--pin). It prints the medians (GB/s, 10^9 bytes), the ratios
# ours / libfabric, and our RMA over our messages of the same size: issue
# 23 asks RMA to move at least as fast as messages (>= 1.0). A run that
# fails is an x in its round; the others go on.
#
# Options:
#   --rounds N        rounds (default 5)
#   --sizes A,B,...   operation sizes in bytes (default 65536,1048576,4194304)
#   --window N        operations in flight (default 16)
#   --timeout S       limit for each run in seconds (default 60)
#   --pin on|off      target on CPU 0, initiator on CPU 1 (default on, with
#                     2 or more CPUs)
#
# The numbers are only comparable on a quiet machine: the CPU count and load
# average are printed at the start and at the end. Build with -c opt.
set -uo pipefail

rounds=5
sizes=65536,1048576,4194304
window=16
timeout_s=60
pin=on

runfiles="${RUNFILES_DIR:-$0.runfiles}/fabric"
[ -d "$runfiles" ] || runfiles="$PWD"
# shellcheck source=bench/bench_common.sh
source "$runfiles/bench/bench_common.sh"

bench_parse_options "rounds sizes window timeout:timeout_s pin" "$@"
# shellcheck disable=SC2086
bench_require_positive "$rounds" "$window" "$timeout_s" ${sizes//,/ }

program="$runfiles/bench/rma_window"
ours_so=$(realpath "$runfiles/fabric/libfabric.so.1")
lf_so=$(bench_debian_libfabric) || exit 1
bench_require_files "$program" "$ours_so" "$lf_so"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_rma.XXXXXX")
trap 'rm -rf "$work"' EXIT
libs=(ours libfabric)
bench_library_dirs "$work" "$ours_so" "$lf_so"
ops="send read write"
[[ "$pin" == on || "$pin" == off ]] || { echo "--pin: on or off" >&2; exit 2; }
cpus=
[ "$pin" = on ] && [ "$(nproc)" -ge 2 ] && cpus=0,1

# Windows per run: 64 MiB in all, at least 20.
iterations_for() {
  local n=$((64 * 1048576 / ($1 * window)))
  [ "$n" -ge 20 ] || n=20
  echo "$n"
}

echo "bench:rma: $rounds rounds, window $window, ours and libfabric alternating"
echo "  ours:      $ours_so"
echo "  libfabric: $lf_so"
echo "  processes pinned: ${cpus:-no} (target,initiator CPUs)"
machine_state start
for round in $(seq "$rounds"); do
  for size in ${sizes//,/ }; do
    for op in $ops; do
      for lib in "${libs[@]}"; do
        out="$work/$op.$size.$lib"
        # shellcheck disable=SC2086
        if value=$(LD_LIBRARY_PATH="$work/$lib" timeout -k 5 "$timeout_s" \
            "$program" "$op" shm "$size" "$window" \
            "$(iterations_for "$size")" $cpus 2>"$work/err"); then
          echo "$value" >>"$out"
        else
          echo x >>"$out"
          echo "round $round $op $size $lib failed: $(head -1 "$work/err")"
        fi
      done
    done
  done
  echo "round $round/$rounds done"
done
machine_state end

echo
echo "Medians (GB/s; more is faster) and ratios:"
printf '  %-6s %9s %11s %11s %10s %15s\n' op bytes ours libfabric ours/lf \
  "ours/ours send"
for size in ${sizes//,/ }; do
  ours_send=$(bench_median "$work/send.$size.ours")
  for op in $ops; do
    ours=$(bench_median "$work/$op.$size.ours")
    lf=$(bench_median "$work/$op.$size.libfabric")
    vs_send=n/a
    [ "$op" != send ] && vs_send=$(bench_ratio "$ours" "$ours_send")
    printf '  %-6s %9s %11s %11s %10s %15s\n' "$op" "$size" "$ours" "$lf" \
      "$(bench_ratio "$ours" "$lf")" "$vs_send"
  done
done
echo
echo "Per round (GB/s; x = failed):"
for size in ${sizes//,/ }; do
  for op in $ops; do
    for lib in "${libs[@]}"; do
      printf '  %-6s %9s %-10s %s\n' "$op" "$size" "$lib" \
        "$(tr '\n' ' ' <"$work/$op.$size.$lib")"
    done
  done
done
