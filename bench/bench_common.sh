# Shell functions the benchmarks share (compare.sh and mpi.sh source it).

# Prints the "# Options:" block of the running script's header, exits 2.
bench_usage() {
  sed -n '/^# Options:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
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
    if (a == "" || b == "" || a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"
    else printf "%.3f\n", a / b }'
}

# "machine at WHEN: N CPUs, load average ..." (numbers are only comparable
# on a quiet machine).
machine_state() {
  echo "machine at $1: $(nproc) CPUs, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}
