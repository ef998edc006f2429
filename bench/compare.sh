#!/usr/bin/env bash
# bench:compare: our libfabric.so.1 against Debian's libfabric 1.17, each
# driven by the same prebuilt programs: Debian's /usr/bin/fi_pingpong
# (package libfabric-bin) and our apps/pingpong (built to load whichever
# libfabric.so.1 comes first on LD_LIBRARY_PATH).
#
#   bazel run -c opt //bench:compare -- [OPTIONS]
#
# For every provider and endpoint type both libraries have (tcp msg, tcp
# rdm, udp dgram, shm rdm) and every message size (64 B, 4 KiB, 64 KiB, 1 MiB; udp up
# to its 65507-byte datagrams), each program runs a server and a client on
# 127.0.0.1, once over each library, alternating ours, libfabric, ours, ...
# in every round so that a change in the machine's load hits both alike. It
# prints, per case and program, the medians of latency (usec/xfer) and
# bandwidth (MB/sec) and the ratios ours/libfabric, the project's goals with
# PASS or MISS, every round's values, and writes a plot of the ratios (PNG,
# with gnuplot) when --plot names a file. A run that fails (exit status,
# timeout, no result line) is reported with its first error line; the other
# runs go on.
#
# It also runs the floors, with no library (floor_pingpong.cc): a two-process
# shared-memory handoff and a busy-polled TCP loopback ping-pong at each
# size, in the same rounds, and prints each case's latency over its floor.
#
# Options:
#   --rounds N        rounds (default 5)
#   --sizes A,B,...   message sizes in bytes (default 64,4096,65536,1048576)
#   --cases A,B,...   provider-endpoint cases (default
#                     tcp-msg,tcp-rdm,tcp-rdm-local,udp-dgram,shm-rdm;
#                     also verbs-msg and verbs-rdm, with --address)
#   --address A       the address clients connect to (default 127.0.0.1;
#                     verbs: this host's IPoIB or RoCE address)
#   --programs A,B    fi_pingpong and/or pingpong (default: both)
#   --plot FILE.png   also plot the ratios into FILE.png
#   --timeout S       limit for each process in seconds (default 60)
#   --pin on|off      server on CPU 0, client on CPU 1 (default on, with 2
#                     or more CPUs)
#   --against FILE    the libfabric.so.1 to compare with instead of
#                     Debian's: our own library built at another commit,
#                     say (its ratios then read this tree / that one; the
#                     goals do not apply)
#
# Pinning: HPC launchers pin ranks to cores, and without it the two
# spinning processes may start on one CPU until the scheduler moves one.
# Measured here (udp 64 B, 10k iterations, 6 runs each): ours unpinned
# 2.09-2.33 us, pinned 2.08-2.15; libfabric 1.99-2.05 either way (its
# initialization sleeps 918 times for 125 us, which gives the scheduler
# time to place the processes apart).
#
# Cases: tcp-rdm runs our tcp RDM endpoints over TCP (FI_TCP_SHM=0), as
# libfabric 1.17's are; tcp-rdm-local runs them as they are by default, with
# peers on the same host reached through shm (tcp_local_path.h), against
# the same libfabric tcp RDM, and is also compared with our shm-rdm (the
# goal: within 1.2x of shm's latency).
#
# The numbers are only comparable on a quiet machine: the CPU count and load
# average are printed at the start and at the end. Build with -c opt.
set -uo pipefail

rounds=5
sizes=64,4096,65536,1048576
default_cases="tcp-msg tcp-rdm tcp-rdm-local udp-dgram shm-rdm"
# InfiniBand / RoCE: only where a device is, so only when asked.
all_cases="$default_cases verbs-msg verbs-rdm"
only_cases=${default_cases// /,}
address=127.0.0.1
programs=fi_pingpong,pingpong
plot=
timeout_s=60
pin=on
against=

runfiles="${RUNFILES_DIR:-$0.runfiles}/fabric"
[ -d "$runfiles" ] || runfiles="$PWD"
# shellcheck source=bench/bench_common.sh
source "$runfiles/bench/bench_common.sh"

bench_parse_options "rounds sizes cases:only_cases programs plot \
  timeout:timeout_s pin address against" "$@"
# shellcheck disable=SC2086
bench_require_positive "$rounds" "$timeout_s" ${sizes//,/ }
[[ "$pin" == on || "$pin" == off ]] || { echo "--pin: on or off" >&2; exit 2; }
cpus=
[ "$pin" = on ] && [ "$(nproc)" -ge 2 ] && cpus=0,1
for case_name in ${only_cases//,/ }; do
  [[ " $all_cases " == *" $case_name "* ]] ||
    { echo "unknown case: $case_name ($all_cases)" >&2; exit 2; }
done
for program in ${programs//,/ }; do
  [[ " fi_pingpong pingpong " == *" $program "* ]] ||
    { echo "unknown program: $program (fi_pingpong, pingpong)" >&2; exit 2; }
done
plot=$(bench_user_path "$plot")
against=$(bench_user_path "$against")
# What the ratios compare with, in the plot's title.
theirs_name="libfabric 1.17"
[ -n "$against" ] && theirs_name=$against

# The project's goals: case size metric ratio. A latency goal is met at or
# below the ratio ours/libfabric, a bandwidth goal at or above it.
goals=(
  "tcp-msg 64 latency 0.9"
  "tcp-msg 1048576 bandwidth 1.1"
  "tcp-rdm 64 latency 0.6"
  "tcp-rdm 1048576 bandwidth 1.1"
  "udp-dgram 64 latency 1.0"
  "shm-rdm 64 latency 0.8"
  "shm-rdm 1048576 bandwidth 1.0"
)
readonly udp_max=65507

# case_run CASE: "PROVIDER EP_TYPE FI_TCP_SHM" of a case.
case_run() {
  case "$1" in
    tcp-rdm) echo "tcp rdm 0" ;;
    tcp-rdm-local) echo "tcp rdm 1" ;;
    *) echo "${1%-*} ${1#*-} 1" ;;
  esac
}

pingpong_once="$runfiles/bench/pingpong_once.sh"
floor_pingpong="$runfiles/bench/floor_pingpong"
ours_so=$(realpath "$runfiles/fabric/libfabric.so.1")
theirs_so=$(realpath "${against:-/usr/lib/x86_64-linux-gnu/libfabric.so.1}")
declare -A program_path=(
  [fi_pingpong]=/usr/bin/fi_pingpong
  [pingpong]="$runfiles/apps/pingpong/pingpong_shared"
)
bench_require_files "$pingpong_once" "$floor_pingpong" "$ours_so" "$theirs_so"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
libs=(ours libfabric)
bench_library_dirs "$work" "$ours_so" "$theirs_so"

# Refuse to measure with a program that would not load the library we name.
for program in ${programs//,/ }; do
  path=${program_path[$program]}
  [ -x "$path" ] || { echo "missing: $path ($program)" >&2; exit 1; }
  for lib in "${libs[@]}"; do
    loaded=$(LD_LIBRARY_PATH="$work/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      ldd "$path" | awk '$1 == "libfabric.so.1" { print $3 }')
    if [ "$(realpath "$loaded" 2>/dev/null)" != "$(realpath "$work/$lib/libfabric.so.1")" ]; then
      echo "$path would load '$loaded' for $lib, not $work/$lib/libfabric.so.1" >&2
      exit 1
    fi
  done
done

# floor_of CASE: the raw floor a case's latency is read against (shm: the
# two-process shared-memory handoff; tcp: busy-polled TCP on loopback), or
# nothing.
floor_of() {
  case "$1" in
    shm-rdm | tcp-rdm-local) echo shm ;;
    tcp-msg | tcp-rdm) echo tcp ;;
  esac
}
floors=$(for case_name in ${only_cases//,/ }; do floor_of "$case_name"; done |
  sort -u | tr '\n' ' ')

# Iterations per size: about a second of ping-pong each on loopback.
iterations_for() {
  if [ "$1" -le 4096 ]; then echo 10000
  elif [ "$1" -le 65536 ]; then echo 2000
  else echo 500
  fi
}

echo "bench:compare: $rounds rounds, ours and libfabric alternating"
echo "  ours:      $ours_so"
echo "  libfabric: $theirs_so"
for program in ${programs//,/ }; do echo "  $program: ${program_path[$program]}"; done
echo "  processes pinned: ${cpus:-no} (server,client CPUs)"
machine_state start

# One line per run: program case size lib round ok|failed usec mbps|message.
results="$work/results.tsv"
: >"$results"
for round in $(seq "$rounds"); do
  start=$SECONDS
  for program in ${programs//,/ }; do
    for case_name in ${only_cases//,/ }; do
      read -r provider ep_type tcp_shm <<<"$(case_run "$case_name")"
      for size in ${sizes//,/ }; do
        [ "$provider" = udp ] && [ "$size" -gt "$udp_max" ] && continue
        for lib in "${libs[@]}"; do
          if out=$(FI_TCP_SHM=$tcp_shm FI_PINGPONG=${program_path[$program]} \
            PINGPONG_CPUS=$cpus PINGPONG_ADDRESS=$address \
            "$pingpong_once" \
            "$work/$lib" "$provider" "$ep_type" "$size" \
            "$(iterations_for "$size")" "$timeout_s"); then
            read -r usec mbps <<<"$out"
            printf '%s\t%s\t%s\t%s\t%s\tok\t%s\t%s\n' "$program" "$case_name" \
              "$size" "$lib" "$round" "$usec" "$mbps" >>"$results"
          else
            printf '%s\t%s\t%s\t%s\t%s\tfailed\t%s\n' "$program" "$case_name" \
              "$size" "$lib" "$round" "$out" >>"$results"
          fi
        done
      done
    done
  done
  # The floors, in the same round (program "floor", library "raw").
  for floor in $floors; do
    for size in ${sizes//,/ }; do
      if out=$(timeout "$timeout_s" "$floor_pingpong" "$floor" "$size" \
        "$(iterations_for "$size")" ${cpus:+"$cpus"} 2>&1); then
        read -r usec mbps <<<"$out"
        printf 'floor\t%s\t%s\traw\t%s\tok\t%s\t%s\n' "$floor" "$size" \
          "$round" "$usec" "$mbps" >>"$results"
      else
        printf 'floor\t%s\t%s\traw\t%s\tfailed\t%s\n' "$floor" "$size" \
          "$round" "$(head -1 <<<"$out")" >>"$results"
      fi
    done
  done
  echo "round $round/$rounds done in $((SECONDS - start))s" >&2
done
machine_state end

# median PROGRAM CASE SIZE LIB COLUMN (7: usec, 8: MB/sec) of the ok runs.
median() {
  awk -F'\t' -v p="$1" -v c="$2" -v s="$3" -v l="$4" -v col="$5" \
    '$1 == p && $2 == c && $3 == s && $4 == l && $6 == "ok" { print $col }' \
    "$results" | sort -g | awk '{ v[NR] = $1 }
      END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]
            else if (NR) printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# goal_of CASE SIZE METRIC: the goal's ratio, or nothing.
goal_of() {
  local entry
  for entry in "${goals[@]}"; do
    read -r g_case g_size g_metric g_ratio <<<"$entry"
    [ "$g_case" = "$1" ] && [ "$g_size" = "$2" ] && [ "$g_metric" = "$3" ] &&
      echo "$g_ratio"
  done
}
verdict() {  # RATIO GOAL METRIC
  [ -n "$2" ] || return 0
  [ "$1" = n/a ] && { echo "goal ${2}x: MISS"; return; }
  awk -v r="$1" -v g="$2" -v m="$3" 'BEGIN {
    ok = (m == "latency") ? r <= g : r >= g
    printf "goal %s%sx: %s", (m == "latency") ? "<=" : ">=", g, ok ? "PASS" : "MISS" }'
}

# The table; also the plot's data: program-case-size ratio_lat ratio_bw.
plot_data="$work/plot.dat"
: >"$plot_data"
echo
row='%-12s %-10s %8s  %9s %9s %7s  %9s %9s %7s  %s\n'
# shellcheck disable=SC2059  # row is the format
printf "$row" program case bytes "us ours" "us lf" ratio "MB/s ours" "MB/s lf" ratio goals
for program in ${programs//,/ }; do
  for case_name in ${only_cases//,/ }; do
    for size in ${sizes//,/ }; do
      [[ "$case_name" == udp-* ]] && [ "$size" -gt "$udp_max" ] && continue
      lat_ours=$(median "$program" "$case_name" "$size" ours 7)
      lat_lf=$(median "$program" "$case_name" "$size" libfabric 7)
      bw_ours=$(median "$program" "$case_name" "$size" ours 8)
      bw_lf=$(median "$program" "$case_name" "$size" libfabric 8)
      lat_ratio=$(bench_ratio "$lat_ours" "$lat_lf")
      bw_ratio=$(bench_ratio "$bw_ours" "$bw_lf")
      notes=
      # The goals are against libfabric 1.17, not another library.
      if [ "$program" = fi_pingpong ] && [ -z "$against" ]; then
        notes="$(verdict "$lat_ratio" "$(goal_of "$case_name" "$size" latency)" latency)"
        notes+="$(verdict "$bw_ratio" "$(goal_of "$case_name" "$size" bandwidth)" bandwidth)"
      fi
      # shellcheck disable=SC2059
      printf "$row" "$program" "$case_name" "$size" "${lat_ours:-failed}" \
        "${lat_lf:-failed}" "$lat_ratio" "${bw_ours:-failed}" "${bw_lf:-failed}" \
        "$bw_ratio" "$notes"
      printf '%s/%s/%s %s %s\n' "$program" "$case_name" "$size" \
        "${lat_ratio/n\/a/NaN}" "${bw_ratio/n\/a/NaN}" >>"$plot_data"
    done
  done
done
echo "us: latency usec/xfer (ours/libfabric < 1: ours faster); MB/s: bandwidth (> 1: ours faster)."

# Our tcp RDM to a peer on this host against our shm's own latency.
if [[ ",$only_cases," == *,tcp-rdm-local,* && ",$only_cases," == *,shm-rdm,* ]]; then
  echo
  echo "Ours, tcp-rdm-local / shm-rdm latency (goal <= 1.2x at 64 B):"
  for program in ${programs//,/ }; do
    for size in ${sizes//,/ }; do
      local_us=$(median "$program" tcp-rdm-local "$size" ours 7)
      shm_us=$(median "$program" shm-rdm "$size" ours 7)
      ratio_local=$(bench_ratio "$local_us" "$shm_us")
      notes=
      [ "$size" = 64 ] && notes=$(verdict "$ratio_local" 1.2 latency)
      printf '  %-12s %8s  %9s %9s %7s  %s\n' "$program" "$size" \
        "${local_us:-failed}" "${shm_us:-failed}" "$ratio_local" "$notes"
    done
  done
fi

if [ -n "$floors" ]; then
  echo
  echo "Floors: no library (floor_pingpong.cc: shm, a two-process handoff in"
  echo "shared memory; tcp, busy-polled TCP on 127.0.0.1), usec/xfer, and each"
  echo "library's latency over its case's floor:"
  printf '  %-12s %-18s %8s  %9s %9s %10s %9s\n' program case bytes \
    "floor us" "us ours" "ours/floor" "lf/floor"
  for program in ${programs//,/ }; do
    for case_name in ${only_cases//,/ }; do
      floor=$(floor_of "$case_name")
      [ -n "$floor" ] || continue
      for size in ${sizes//,/ }; do
        floor_us=$(median floor "$floor" "$size" raw 7)
        lat_ours=$(median "$program" "$case_name" "$size" ours 7)
        lat_lf=$(median "$program" "$case_name" "$size" libfabric 7)
        printf '  %-12s %-18s %8s  %9s %9s %10s %9s\n' "$program" \
          "$case_name/$floor" "$size" "${floor_us:-failed}" \
          "${lat_ours:-failed}" "$(bench_ratio "$lat_ours" "$floor_us")" \
          "$(bench_ratio "$lat_lf" "$floor_us")"
      done
    done
  done
fi

echo
echo "Per round (usec/xfer; x = failed):"
awk -F'\t' '{ key = $1 " " $2 " " $3 " " $4
              if (!(key in line)) order[++n] = key
              line[key] = line[key] " " (($6 == "ok") ? $7 : "x") }
  END { for (i = 1; i <= n; ++i) printf "  %-40s%s\n", order[i], line[order[i]] }' \
  "$results"

if grep -q $'\tfailed\t' "$results"; then
  echo
  echo "Failures (first error line of each; rounds failed):"
  awk -F'\t' '$6 == "failed" { key = $1 " " $2 " " $3 " " $4; ++count[key]
                               if (!(key in first)) first[key] = $7 }
    END { for (key in first) printf "  %s (%d): %s\n", key, count[key], first[key] }' \
    "$results"
fi

if [ -n "$plot" ]; then
  # A log scale around 1 that shows the smallest and the largest bar whole.
  read -r low high < <(awk '{ for (i = 2; i <= 3; ++i) if ($i != "NaN") {
      if (lo == "" || $i < lo) lo = $i; if (hi == "" || $i > hi) hi = $i } }
    END { lo = (lo == "" || lo > 1) ? 1 : lo; hi = (hi == "" || hi < 1) ? 1 : hi
          print lo / 1.5, hi * 1.5 }' "$plot_data")
  title="ours / $theirs_name, medians"
  title+=" (latency below 1 and bandwidth above 1: ours faster)"
  bench_plot_ratios "$plot" "$title" <<EOF
set xtics rotate by -45 font ",8"
set rmargin 10
set bmargin 9
set yrange [$low:$high]
plot "$plot_data" using 2:xtic(1) title "latency ratio", \
     "" using 3 title "bandwidth ratio"
EOF
fi
