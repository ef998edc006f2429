#!/usr/bin/env bash
# bench:mpi: Open MPI (Debian's openmpi-bin) over each transport two ranks
# on this host can use, with one program (mpi_pingpong.c): 8 B, 64 B and
# 4 KiB latency, 1 MiB streaming and ping-pong bandwidth, an 8 B
# MPI_Allreduce.
#
#   bazel run -c opt //bench:mpi -- [OPTIONS]
#
# Transports (--mca options in `config_args` below):
#   ucx            pml ucx (UCX's shared memory)
#   vader          pml ob1 + btl vader (Open MPI's own shared memory)
#   mtl-libfabric  pml cm + mtl ofi, Debian's libfabric 1.17, tcp provider
#   mtl-ours       pml cm + mtl ofi, our libfabric.so.1, tcp provider (peers
#                  on this host through shm: the local path)
#   mtl-ours-tcp   the same with FI_TCP_SHM=0 (TCP sockets)
#   btl-libfabric  pml ob1 + btl ofi (btl_ofi_mode 2), 1.17, shm provider
#   btl-ours       the same over ours
# and, with no MPI and no library, the raw floors of 8 B between two
# processes (bench/floor_pingpong.cc: a shared-memory handoff and
# busy-polled TCP on 127.0.0.1), pinned the same way.
# Every round runs each transport once, in this order, so that a change in
# the machine's load hits all alike; the ranks are pinned to cores 0 and 1
# (--bind-to core). It prints which libfabric each rank mapped, the medians
# and every round's values, the ratios of ours to the others, the goals
# (issue 23) with PASS or MISS, and plots the ratios (PNG, gnuplot) when
# --plot names a file. A run that fails (exit status, timeout, missing
# line) is an x in its round; the others go on.
#
# Options:
#   --rounds N        rounds (default 5)
#   --configs A,B,... transports (default: all of the above)
#   --plot FILE.png   also plot the ratios into FILE.png
#   --timeout S       limit for each mpirun in seconds (default 60)
#
# The numbers are only comparable on a quiet machine: the CPU count and load
# average are printed at the start and at the end. Build with -c opt.
set -uo pipefail

rounds=5
all_configs="ucx vader mtl-libfabric mtl-ours mtl-ours-tcp btl-libfabric btl-ours"
configs=${all_configs// /,}
plot=
timeout_s=60

runfiles="${RUNFILES_DIR:-$0.runfiles}/fabric"
[ -d "$runfiles" ] || runfiles="$PWD"
# shellcheck source=bench/bench_common.sh
source "$runfiles/bench/bench_common.sh"

bench_parse_options "rounds configs plot timeout:timeout_s" "$@"
bench_require_positive "$rounds" "$timeout_s"
for config in ${configs//,/ }; do
  [[ " $all_configs " == *" $config "* ]] ||
    { echo "unknown transport: $config ($all_configs)" >&2; exit 2; }
done
plot=$(bench_user_path "$plot")
command -v mpirun >/dev/null ||
  { echo "mpirun is missing (Debian package openmpi-bin; ./setup.sh installs it)" >&2; exit 1; }

program=$(realpath "$runfiles/bench/mpi_pingpong")
floor_pingpong="$runfiles/bench/floor_pingpong"
ours_dir=$(dirname "$(realpath "$runfiles/fabric/libfabric.so.1")")
lf_lib=$(bench_debian_libfabric) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The mpirun options of a transport, one per line.
config_args() {
  case "$1" in
    ucx) printf '%s\n' --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any ;;
    vader) printf '%s\n' --mca pml ob1 --mca btl self,vader ;;
    mtl-*) printf '%s\n' --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp ;;
    btl-*) printf '%s\n' --mca pml ob1 --mca btl self,ofi --mca btl_ofi_mode 2 \
      --mca btl_ofi_provider_include shm ;;
  esac
  case "$1" in
    *-ours) printf '%s\n' -x "LD_LIBRARY_PATH=$ours_dir" ;;
    *-ours-tcp) printf '%s\n' -x "LD_LIBRARY_PATH=$ours_dir" -x FI_TCP_SHM=0 ;;
  esac
}

# The library a transport's ranks must map: ours, Debian's, or none.
expected_library() {
  case "$1" in
    *-ours | *-ours-tcp) echo "$ours_dir/libfabric.so.1" ;;
    *-libfabric) realpath "$lf_lib" ;;
    *) echo none ;;
  esac
}

measures="lat:8 lat:64 lat:4096 stream:1048576 pingpong:1048576 allreduce:8"

echo "bench:mpi: $rounds rounds; Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}')"
echo "  ours:      $ours_dir/libfabric.so.1"
echo "  libfabric: $(realpath "$lf_lib")"
machine_state start

# run ROUND CONFIG: one mpirun; its measures go to $work/CONFIG.MEASURE
# (one line per round: a value or x).
run() {
  local round=$1 config=$2 out rc
  local -a args
  mapfile -t args < <(config_args "$config")
  out=$(env -u LD_LIBRARY_PATH timeout "$timeout_s" mpirun --allow-run-as-root \
    -np 2 --bind-to core --map-by core "${args[@]}" "$program" 2>&1)
  rc=$?
  local want libraries ok=1
  want=$(expected_library "$config")
  libraries=$(awk '$1 == "libfabric" {print $3}' <<<"$out" | sort -u)
  if [ "$rc" -ne 0 ] || [ "$libraries" != "$want" ]; then
    ok=0
    echo "round $round $config: mpirun exit $rc, libfabric mapped: ${libraries:-?} (want $want)" >&2
    grep -m 3 -i "error\|abort\|fail" <<<"$out" | sed 's/^/    /' >&2
  fi
  [ "$round" -eq 1 ] && [ "$ok" -eq 1 ] && echo "  $config: ranks mapped libfabric $libraries"
  local measure value
  for measure in $measures; do
    value=x
    [ "$ok" -eq 1 ] && value=$(awk -v n="${measure%:*}" -v b="${measure#*:}" \
      '$1 == n && $2 == b {print $3; exit}' <<<"$out")
    echo "${value:-x}" >>"$work/$config.$measure"
  done
}

# floor ROUND shm|tcp: the raw 8 B floor, into $work/floor-MODE.lat:8.
floor() {
  local value
  value=$(timeout "$timeout_s" "$floor_pingpong" "$2" 8 20000 0,1 2>/dev/null |
    awk '{print $1}')
  echo "${value:-x}" >>"$work/floor-$2.lat:8"
}

for ((round = 1; round <= rounds; ++round)); do
  for config in ${configs//,/ }; do run "$round" "$config"; done
  floor "$round" shm
  floor "$round" tcp
  echo "round $round/$rounds done"
done
machine_state end

unit() { case "$1" in stream:* | pingpong:*) echo GB/s ;; *) echo us ;; esac; }

echo
echo "Medians (us: less is faster; GB/s: more is faster):"
printf '  %-18s' measure
for config in ${configs//,/ }; do printf ' %13s' "$config"; done
echo
for measure in $measures; do
  printf '  %-18s' "${measure/:/ } $(unit "$measure")"
  for config in ${configs//,/ }; do
    printf ' %13s' "$(bench_median "$work/$config.$measure")"
  done
  echo
done

# time_ratio MEASURE A B: how long A takes over how long B takes (< 1: A
# faster); bandwidths are inverted to say the same.
time_ratio() {
  local a b
  a=$(bench_median "$work/$2.$1")
  b=$(bench_median "$work/$3.$1")
  case "$1" in
    stream:* | pingpong:*) bench_ratio "$b" "$a" ;;
    *) bench_ratio "$a" "$b" ;;
  esac
}

pairs="mtl-ours:ucx mtl-ours:vader mtl-ours:mtl-libfabric mtl-ours-tcp:mtl-libfabric btl-ours:btl-libfabric"
plot_data="$work/plot.dat"
echo "pair ${measures//:/_}" >"$plot_data"
echo
echo "Time ratios (ours / theirs; < 1: ours faster; bandwidths inverted):"
printf '  %-30s' pair
for measure in $measures; do printf ' %15s' "${measure/:/ }"; done
echo
for pair in $pairs; do
  a=${pair%:*} b=${pair#*:}
  [[ ",$configs," == *",$a,"* && ",$configs," == *",$b,"* ]] || continue
  printf '  %-30s' "$a / $b"
  line="\"$a / $b\""
  for measure in $measures; do
    r=$(time_ratio "$measure" "$a" "$b")
    printf ' %15s' "$r"
    line+=" ${r/n\/a/NaN}"
  done
  echo
  echo "$line" >>"$plot_data"
done

# goal NAME VALUE OP LIMIT
goal() {
  local verdict=MISS
  [ "$2" = n/a ] && verdict="not measured"
  [ "$2" != n/a ] && awk -v v="$2" -v l="$4" -v op="$3" \
    'BEGIN {exit !((op == "<=") ? v <= l : v >= l)}' && verdict=PASS
  printf '  %-58s %6s %s %s  %s\n' "$1" "$2" "$3" "$4" "$verdict"
}
echo
echo "Goals (issue 23):"
goal "Open MPI 8 B over ours / pml ucx (time)" \
  "$(time_ratio lat:8 mtl-ours ucx)" "<=" 1.0
goal "Open MPI 8 B over ours, FI_TCP_SHM=0 / raw TCP floor" \
  "$(time_ratio lat:8 mtl-ours-tcp floor-tcp)" "<=" 1.15
goal "btl ofi 1 MiB ping-pong, ours / libfabric 1.17 (bandwidth)" \
  "$(bench_ratio "$(bench_median "$work/btl-ours.pingpong:1048576")" \
    "$(bench_median "$work/btl-libfabric.pingpong:1048576")")" ">=" 1.5

echo
echo "Raw 8 B floors (us): shm $(bench_median "$work/floor-shm.lat:8")," \
  "tcp $(bench_median "$work/floor-tcp.lat:8"); Open MPI 8 B over ours /" \
  "shm floor:" \
  "$(time_ratio lat:8 mtl-ours floor-shm)"

echo
echo "Per round:"
for measure in $measures; do
  for config in ${configs//,/ } floor-shm floor-tcp; do
    [ -f "$work/$config.$measure" ] || continue
    printf '  %-18s %-14s %s\n' "${measure/:/ }" "$config" \
      "$(tr '\n' ' ' <"$work/$config.$measure")"
  done
done

if [ -n "$plot" ] && [ "$(wc -l <"$plot_data")" -lt 2 ]; then
  echo "no plot: no pair of transports ours / theirs was run" >&2
elif [ -n "$plot" ]; then
  title="bench:mpi: time ours / theirs, medians of $rounds rounds"
  title+=" (below 1: ours faster; bandwidths inverted)"
  bench_plot_ratios "$plot" "$title" <<EOF
set key outside right autotitle columnheader
set xtics rotate by -20 font ",9"
set bmargin 6
plot for [i=2:$(( $(wc -w <<<"$measures") + 1 ))] "$plot_data" using i:xtic(1)
EOF
fi
