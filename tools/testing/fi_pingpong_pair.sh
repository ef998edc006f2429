#!/usr/bin/env bash
# Runs Debian's prebuilt fi_pingpong (package libfabric-bin) as a server and
# a client on 127.0.0.1, both against LIBFABRIC_SO, with data checks (-c),
# and fails unless both exit 0 and the client printed its result table.
#
# Usage: fi_pingpong_pair.sh LIBFABRIC_SO PROVIDER EP_TYPE [FI_PINGPONG_ARGS...]
#   e.g. fi_pingpong_pair.sh libfabric.so.1 tcp msg -S all -I 20
# FI_PINGPONG names another fi_pingpong (default /usr/bin/fi_pingpong).
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 LIBFABRIC_SO PROVIDER EP_TYPE [ARGS...]" >&2
  exit 2
fi
library=$(realpath "$1")
provider=$2
ep_type=$3
shift 3
pingpong=${FI_PINGPONG:-/usr/bin/fi_pingpong}
if [ ! -x "$pingpong" ]; then
  echo "$pingpong is missing (Debian package libfabric-bin; ./setup.sh installs it)" >&2
  exit 1
fi
# shellcheck source=tools/testing/sanitizer_runtime.sh
source tools/testing/sanitizer_runtime.sh  # bazel runs tests in the runfiles root

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fi_pingpong.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib"
ln -s "$library" "$work/lib/libfabric.so.1"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

args=(-p "$provider" -e "$ep_type" -c "$@")
# shellcheck source=tools/testing/pingpong_pair_run.sh
source tools/testing/pingpong_pair_run.sh
fi_pingpong_on_library() {
  run_uninstrumented "$library" timeout 120 "$pingpong" "$@"
}
run_pingpong_pair fi_pingpong_on_library fi_pingpong_on_library "${args[@]}"
echo "--- client (exit $client_rc)"
cat "$work/client.out"
echo "--- server (exit $server_rc)"
cat "$work/server.out"
if [ "$client_rc" -ne 0 ] || [ "$server_rc" -ne 0 ]; then
  echo "FAIL: fi_pingpong ${args[*]} did not complete" >&2
  exit 1
fi
if ! grep -q "usec/xfer" "$work/client.out"; then
  echo "FAIL: the client printed no results" >&2
  exit 1
fi
echo "PASS: fi_pingpong ${args[*]}"
