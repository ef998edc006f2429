#!/usr/bin/env bash
# fi_pingpong_compare: our libfabric.so.1 against Debian's libfabric 1.17,
# both driven by the same prebuilt /usr/bin/fi_pingpong (package
# libfabric-bin).
#
#   bazel run -c opt //tools/benchmarks:fi_pingpong_compare -- [OPTIONS]
#
# Each case runs a fi_pingpong server and client on 127.0.0.1, once with our
# library (a directory holding a libfabric.so.1 link to //fabric:libfabric.so.1
# goes first on LD_LIBRARY_PATH) and once with Debian's
# (/usr/lib/x86_64-linux-gnu/libfabric.so.1), alternating ours, libfabric,
# ours, libfabric, ... for every case in every round, so that a change in the
# machine's load hits both alike. It prints the median of the rounds, the
# ratio ours/libfabric and the project's goals with PASS or MISS, then the
# value of every round. A run that fails (exit status, timeout, no result
# line) is reported as "failed (exit N)" with its first error line; the other
# runs go on and a ratio without two medians is n/a.
#
# Cases (fi_pingpong -p PROVIDER -e EP_TYPE -S SIZE -I ITERATIONS):
#   tcp-msg-64     tcp msg   64 B    latency   (usec/xfer; lower is better)
#   tcp-msg-1m     tcp msg   1 MiB   bandwidth (MB/sec; higher is better)
#   tcp-rdm-64     tcp rdm   64 B    latency
#   tcp-rdm-1m     tcp rdm   1 MiB   bandwidth
#   udp-dgram-64   udp dgram 64 B    latency
#
# Options:
#   --rounds N        rounds (default 5)
#   --iters-64 N      iterations of the 64 B cases (default 20000)
#   --iters-1m N      iterations of the 1 MiB cases (default 1000)
#   --cases A,B,...   run only these cases (default: all)
#   --timeout S       limit for each fi_pingpong process in seconds (default 60)
#
# The numbers are only comparable on a quiet machine: the CPU count and load
# average are printed at the start and at the end. Build with -c opt; the
# library of a default (fastbuild) build is not optimized.
set -uo pipefail

rounds=5
iters_64=20000
iters_1m=1000
only_cases=
timeout_s=60

usage() {
  sed -n '/^# Options:/,/^#   --timeout/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --rounds) rounds=$2 ;;
    --iters-64) iters_64=$2 ;;
    --iters-1m) iters_1m=$2 ;;
    --cases) only_cases=$2 ;;
    --timeout) timeout_s=$2 ;;
    *) usage ;;
  esac
  shift 2
done
for number in "$rounds" "$iters_64" "$iters_1m" "$timeout_s"; do
  [[ "$number" =~ ^[1-9][0-9]*$ ]] || { echo "not a positive number: $number" >&2; exit 2; }
done

# name provider ep_type size metric goal. A latency goal is met at or below
# it, a bandwidth goal at or above it (ratios ours/libfabric).
all_cases=(
  "tcp-msg-64 tcp msg 64 latency 0.9"
  "tcp-msg-1m tcp msg 1048576 bandwidth 1.1"
  "tcp-rdm-64 tcp rdm 64 latency 0.6"
  "tcp-rdm-1m tcp rdm 1048576 bandwidth 1.1"
  "udp-dgram-64 udp dgram 64 latency 1.0"
)
cases=()
names=" "
for entry in "${all_cases[@]}"; do
  name=${entry%% *}
  names+="$name "
  if [ -z "$only_cases" ] || [[ ",$only_cases," == *",$name,"* ]]; then
    cases+=("$entry")
  fi
done
for name in ${only_cases//,/ }; do
  [[ "$names" == *" $name "* ]] || { echo "unknown case: $name (cases:$names)" >&2; exit 2; }
done

# bazel run starts in the runfiles tree of this workspace ("fabric").
runfiles="${RUNFILES_DIR:-$0.runfiles}/fabric"
[ -d "$runfiles" ] || runfiles="$PWD"
pingpong_once="$runfiles/tools/benchmarks/pingpong_once.sh"
ours_so=$(realpath "$runfiles/fabric/libfabric.so.1")
theirs_so=$(realpath /usr/lib/x86_64-linux-gnu/libfabric.so.1)
pingpong=${FI_PINGPONG:-/usr/bin/fi_pingpong}
for file in "$pingpong_once" "$ours_so" "$theirs_so" "$pingpong"; do
  [ -e "$file" ] || { echo "missing: $file (fi_pingpong: Debian package libfabric-bin)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/fi_pingpong_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
libs=(ours libfabric)
mkdir "$work/ours" "$work/libfabric"
ln -s "$ours_so" "$work/ours/libfabric.so.1"
ln -s "$theirs_so" "$work/libfabric/libfabric.so.1"

# Refuse to measure if fi_pingpong would not load the library we name.
for lib in "${libs[@]}"; do
  loaded=$(LD_LIBRARY_PATH="$work/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ldd "$pingpong" | awk '$1 == "libfabric.so.1" { print $3 }')
  if [ "$(realpath "$loaded")" != "$(realpath "$work/$lib/libfabric.so.1")" ]; then
    echo "$pingpong would load $loaded for $lib, not $work/$lib/libfabric.so.1" >&2
    exit 1
  fi
done

machine_state() {
  echo "machine at $1: $(nproc) CPUs, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

echo "fi_pingpong_compare: $pingpong, $rounds rounds, ours and libfabric alternating"
echo "  ours:      $ours_so"
echo "  libfabric: $theirs_so"
echo "  iterations: $iters_64 (64 B), $iters_1m (1 MiB); timeout ${timeout_s}s per process"
machine_state start

# One line per run: case lib round ok|failed value-or-message (tab-separated).
results="$work/results.tsv"
: >"$results"
for round in $(seq "$rounds"); do
  start=$SECONDS
  for entry in "${cases[@]}"; do
    read -r name provider ep_type size metric _ <<<"$entry"
    iterations=$iters_64
    [ "$size" -eq 64 ] || iterations=$iters_1m
    for lib in "${libs[@]}"; do
      if out=$("$pingpong_once" "$work/$lib" "$provider" "$ep_type" "$size" \
        "$iterations" "$timeout_s"); then
        read -r usec mbps <<<"$out"
        value=$usec
        [ "$metric" = latency ] || value=$mbps
        printf '%s\t%s\t%s\tok\t%s\n' "$name" "$lib" "$round" "$value" >>"$results"
      else
        printf '%s\t%s\t%s\tfailed\t%s\n' "$name" "$lib" "$round" "$out" >>"$results"
      fi
    done
  done
  echo "round $round/$rounds done in $((SECONDS - start))s" >&2
done
machine_state end

# values CASE LIB: the successful values of CASE with LIB, one a line.
values() {
  awk -F'\t' -v c="$1" -v l="$2" '$1 == c && $2 == l && $4 == "ok" { print $5 }' "$results"
}
# failures CASE LIB: the failure messages of CASE with LIB, one a line.
failures() {
  awk -F'\t' -v c="$1" -v l="$2" '$1 == c && $2 == l && $4 == "failed" { print $5 }' "$results"
}
median() {
  sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]
          else if (NR) printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# cell CASE LIB: the median, noting failed rounds, or "failed (exit N)".
cell() {
  local med failed
  med=$(values "$1" "$2" | median)
  failed=$(failures "$1" "$2" | wc -l)
  if [ -z "$med" ]; then
    failures "$1" "$2" | head -n1 | sed 's/^\(failed (exit [0-9]*\).*/\1)/'
  elif [ "$failed" -gt 0 ]; then
    echo "$med ($failed failed)"
  else
    echo "$med"
  fi
}

echo
row='%-13s %-19s %-17s %-17s %-15s %-8s %s\n'
# shellcheck disable=SC2059  # row is the format
printf "$row" case metric ours libfabric ours/libfabric goal result
for entry in "${cases[@]}"; do
  read -r name _ _ _ metric goal <<<"$entry"
  ours=$(values "$name" ours | median)
  theirs=$(values "$name" libfabric | median)
  if [ "$metric" = latency ]; then
    label="latency usec/xfer"
    goal_text="<= ${goal}x"
  else
    label="bandwidth MB/sec"
    goal_text=">= ${goal}x"
  fi
  ratio=n/a
  verdict=MISS  # also when ours failed: a goal is not met by a failure
  if [ -n "$ours" ] && [ -n "$theirs" ]; then
    ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.3f", a / b }')
    verdict=$(awk -v r="$ratio" -v g="$goal" -v m="$metric" \
      'BEGIN { ok = (m == "latency") ? r <= g : r >= g; print ok ? "PASS" : "MISS" }')
  elif [ -n "$ours" ]; then
    verdict=n/a  # libfabric failed: nothing to compare with
  fi
  # shellcheck disable=SC2059
  printf "$row" "$name" "$label" "$(cell "$name" ours)" \
    "$(cell "$name" libfabric)" "$ratio" "$goal_text" "$verdict"
done
echo "latency: ratio < 1 means ours is faster; bandwidth: ratio > 1 means ours is faster."

echo
echo "Per round (latency cases usec/xfer, bandwidth cases MB/sec; x = failed):"
for entry in "${cases[@]}"; do
  name=${entry%% *}
  for lib in "${libs[@]}"; do
    printf '  %-13s %-10s %s\n' "$name" "$lib" "$(awk -F'\t' -v c="$name" -v l="$lib" \
      '$1 == c && $2 == l { line = line sep (($4 == "ok") ? $5 : "x"); sep = " " }
      END { print line }' "$results")"
  done
done

if grep -q $'\tfailed\t' "$results"; then
  echo
  echo "Failures (first error line of each case and library; count of rounds):"
  for entry in "${cases[@]}"; do
    name=${entry%% *}
    for lib in "${libs[@]}"; do
      count=$(failures "$name" "$lib" | wc -l)
      [ "$count" -eq 0 ] && continue
      echo "  $name $lib ($count of $rounds): $(failures "$name" "$lib" | head -n1)"
    done
  done
fi
