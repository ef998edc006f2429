#!/usr/bin/env bash
# Runs libfabric's fi_info (Debian's /usr/bin/fi_info, package libfabric-bin)
# and this project's fi_info with the same options, both against the same
# libfabric.so.1, and compares their stdout, stderr and exit status.
#
# Usage: compare_with_libfabric_test.sh OUR_FI_INFO LIBFABRIC_SO
#   OUR_FI_INFO   this project's fi_info
#   LIBFABRIC_SO  the libfabric.so.1 both run against: put first on
#                 LD_LIBRARY_PATH (our fi_info, linked with the library
#                 statically under Bazel, carries the same code)
# REFERENCE_FI_INFO names another libfabric fi_info (default /usr/bin/fi_info).
#
# Both run as "fi_info" (argv[0]), which they print in usage and getopt
# messages. Compared as they are, except:
#   - --version: the tool and API versions (lines 1 and 3) belong to each
#     program's build; only their form is compared. The library line must
#     be the same.
#   - -h: our help is libfabric's usage followed by our additions; libfabric's
#     must be its beginning.
#   - process ids and times, which differ from run to run: in log lines
#     ("libfabric:PID:TIME:...") and shm addresses ("fi_shm://PID").
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 OUR_FI_INFO LIBFABRIC_SO" >&2
  exit 2
fi
our_fi_info=$(realpath "$1")
library=$(realpath "$2")
reference_fi_info=${REFERENCE_FI_INFO:-/usr/bin/fi_info}
if [ ! -x "$reference_fi_info" ]; then
  echo "$reference_fi_info is missing (Debian package libfabric-bin; ./setup.sh installs it)" >&2
  exit 1
fi

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fi_info_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib"
ln -s "$library" "$work/lib/libfabric.so.1"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# shellcheck source=tools/testing/sanitizer_runtime.sh
source tools/testing/sanitizer_runtime.sh  # bazel runs tests in the runfiles root

# Replaces what differs between two runs of the same program, and the
# api_version lines: each fi_info asks for the API version of the headers it
# was built with (Debian's 1.17, ours 1.18), and fi_getinfo reports that.
normalize_run() {
  sed -E -e 's/^libfabric:[0-9]+:[0-9]+:/libfabric:PID:TIME:/' \
    -e 's|fi_shm://[0-9]+|fi_shm://PID|g' \
    -e 's/^( *api_version): [0-9]+\.[0-9]+$/\1: MAJOR.MINOR/'
}

# Keeps the form of --version's tool and API lines, not their numbers.
normalize_version() {
  sed -E -e '1s/: [0-9]+\.[0-9]+\.[0-9]+$/: MAJOR.MINOR.PATCH/' \
    -e '3s/: [0-9]+\.[0-9]+$/: MAJOR.MINOR/'
}

# run_fi_info PROGRAM SIDE ARGS...: runs PROGRAM as "fi_info" into
# $work/SIDE.{out,err,rc}.
exec_as_fi_info() {
  exec -a fi_info "$@"
}

run_fi_info() {
  local program=$1 side=$2
  shift 2
  if [ "$side" = reference ]; then
    run_uninstrumented "$library" exec_as_fi_info "$program" "$@"
  else
    (exec_as_fi_info "$program" "$@")
  fi >"$work/$side.raw_out" 2>"$work/$side.raw_err"
  echo $? >"$work/$side.rc"
  normalize_run <"$work/$side.raw_out" >"$work/$side.out"
  normalize_run <"$work/$side.raw_err" >"$work/$side.err"
}

checked=0
failed=0

report_difference() {
  local title=$1 what=$2
  echo "FAIL: fi_info $title: $what differs (< libfabric's, > ours)"
  failed=$((failed + 1))
}

# compare KIND ARGS...: KIND is "exact", "version" or "help" (see above).
compare() {
  local kind=$1
  shift
  local title="$*"
  run_fi_info "$reference_fi_info" reference "$@"
  run_fi_info "$our_fi_info" ours "$@"
  checked=$((checked + 1))
  case "$kind" in
    version)
      normalize_version <"$work/reference.out" >"$work/reference.version"
      normalize_version <"$work/ours.out" >"$work/ours.version"
      mv "$work/reference.version" "$work/reference.out"
      mv "$work/ours.version" "$work/ours.out"
      ;;
    help)
      head -c "$(wc -c <"$work/reference.out")" "$work/ours.out" >"$work/ours.prefix"
      mv "$work/ours.prefix" "$work/ours.out"
      ;;
  esac
  if ! cmp -s "$work/reference.out" "$work/ours.out"; then
    report_difference "$title" stdout
    diff -a "$work/reference.out" "$work/ours.out" | head -20
  fi
  if ! cmp -s "$work/reference.err" "$work/ours.err"; then
    report_difference "$title" stderr
    diff -a "$work/reference.err" "$work/ours.err" | head -20
  fi
  if ! cmp -s "$work/reference.rc" "$work/ours.rc"; then
    report_difference "$title" "exit status ($(cat "$work/reference.rc") vs $(cat "$work/ours.rc"))"
  fi
}

# Listings.
compare exact
compare exact -l
compare exact -v
compare exact -l -v
compare exact -p tcp
compare exact -p tcp -v
compare exact -t FI_EP_MSG
compare exact -t FI_EP_RDM -v
compare exact -t fi_ep_dgram
compare exact -c FI_MSG
compare exact -c 'FI_MSG|FI_RMA' -v
compare exact -c 'FI_TAGGED||fi_rma'
compare exact -m FI_CONTEXT
compare exact -a FI_SOCKADDR_IN
compare exact -p tcp -d lo
compare exact -s 127.0.0.1 -p tcp
compare exact -n 127.0.0.1 -P 4000 -p tcp -v
compare exact -i tcp
compare exact -i no-such-text
compare exact operand-is-ignored -l
# Parameters.
compare exact -e
compare exact -g LOG
compare exact -g no-such-parameter
# fi_getinfo errors.
compare exact -p no-such-provider
compare exact -t FI_EP_SOCK_STREAM -p tcp
# Rejected options and values.
compare exact --bogus
compare exact -x
compare exact -c
compare exact --p tcp
compare exact -c FI_BOGUS
compare exact -c 'FI_MSG|FI_BOGUS'
compare exact -c 'FI_MSG | FI_RMA'
compare exact -m FI_BOGUS
compare exact -t FI_BOGUS
compare exact -a FI_BOGUS
compare exact -c FI_BOGUS --version
# --version and help.
compare version --version
compare version --version -c FI_BOGUS
compare help -h
compare help --help

echo "$checked option sets compared, $failed differences"
[ "$failed" -eq 0 ]
