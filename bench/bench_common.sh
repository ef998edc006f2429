# shellcheck shell=bash
# Shell functions the benchmarks share (compare.sh, mpi.sh and rma.sh
# source it).

# Prints the "# Options:" block of the running script's header, exits 2.
bench_usage() {
  sed -n '/^# Options:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Sets a variable from each "--OPTION VALUE" pair of the arguments after
# the first, which lists the options: OPTION, whose variable has its name,
# or OPTION:VARIABLE. Anything else is a usage error (bench_usage).
#   bench_parse_options "rounds timeout:timeout_s" "$@"
bench_parse_options() {
  local spec option variable
  local -A variables=()
  for spec in $1; do variables[${spec%%:*}]=${spec#*:}; done
  shift
  while [ $# -gt 0 ]; do
    if [ $# -lt 2 ] || [[ "$1" != --* ]]; then bench_usage; fi
    option=${1#--}
    [ -n "$option" ] || bench_usage
    variable=${variables[$option]:-}
    [ -n "$variable" ] || bench_usage
    printf -v "$variable" '%s' "$2"
    shift 2
  done
}

# The path of Debian's libfabric.so.1 (1.17), or exits 1 saying it is
# missing.
bench_debian_libfabric() {
  local path
  path=$(ldconfig -p | awk '/libfabric\.so\.1 / {print $NF; exit}')
  [ -n "$path" ] || { echo "Debian's libfabric.so.1 is missing (package" \
    "libfabric1; ./setup.sh installs it)" >&2; exit 1; }
  realpath "$path"
}

# Exits 1 naming the first argument that is no file.
bench_require_files() {
  local file
  for file in "$@"; do
    [ -e "$file" ] || { echo "missing: $file" >&2; exit 1; }
  done
}

# Makes WORK/ours and WORK/libfabric, each with a libfabric.so.1 that links
# to OURS_SO or THEIRS_SO: the directory LD_LIBRARY_PATH names to load one.
#   bench_library_dirs WORK OURS_SO THEIRS_SO
bench_library_dirs() {
  mkdir "$1/ours" "$1/libfabric"
  ln -s "$2" "$1/ours/libfabric.so.1"
  ln -s "$3" "$1/libfabric/libfabric.so.1"
}

# Exits 2 unless every argument is a positive integer.
bench_require_positive() {
  local number
  for number in "$@"; do
    [[ "$number" =~ ^[1-9][0-9]*$ ]] ||
      { echo "not a positive number: $number" >&2; exit 2; }
  done
}

# A path given on the command line: bazel run changes to the runfiles, so a
# relative one means the directory bazel was started from.
bench_user_path() {
  if [ -n "$1" ] && [[ "$1" != /* ]]; then
    echo "${BUILD_WORKING_DIRECTORY:-$PWD}/$1"
  else
    echo "$1"
  fi
}

# A / B to 3 places, or n/a when either is missing (empty or n/a) or B is
# 0.
bench_ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a == "" || b == "" || a == "n/a" || b == "n/a" || b + 0 == 0)
      print "n/a"
    else printf "%.3f\n", a / b }'
}

# "machine at WHEN: N CPUs, load average ..." (numbers are only comparable
# on a quiet machine).
machine_state() {
  echo "machine at $1: $(nproc) CPUs, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

# The median of a file's numbers, one per line (x, a failed run, ignored),
# or n/a (none, or no file).
bench_median() {
  { grep -v '^x$' "$1" 2>/dev/null || true; } | sort -g | awk '{v[NR] = $1}
    END {if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
         else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# Plots ratios ours / theirs as clustered bars on a log-2 scale with a line
# at 1 into PNG file $1, titled $2: gnuplot reads these settings, then the
# caller's (more settings and the plot command) from stdin. Says why when
# gnuplot is missing.
bench_plot_ratios() {
  if ! command -v gnuplot >/dev/null; then
    echo "no plot: gnuplot is not installed (./setup.sh installs gnuplot-nox)" >&2
    return
  fi
  {
    cat <<EOF
set terminal png size 1200,600 noenhanced
set output "$1"
set title "$2"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 2
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2
EOF
    cat
  } | gnuplot
  echo "plot: $1"
}
