#!/usr/bin/env bash
# Builds and runs the two consumer programs in this workspace, with an
# output base of its own (the library is built again there, as a project
# that depends on it would build it). Exits non-zero if either fails.
#   examples/bazel_consumer/run.sh [OUTPUT_BASE]
set -euo pipefail
cd "$(dirname "$0")"
# One output base per checkout, and its server stopped at the end.
checkout_id=$(pwd | md5sum | cut -c1-12)
output_base=${1:-${TMPDIR:-/tmp}/fabric_consumer_$checkout_id}
bazel="bazel --output_base=$output_base"
trap '$bazel shutdown' EXIT
# No bazel-* links in this checkout: the output base is elsewhere.
$bazel build --symlink_prefix=/ //:hello_c //:ping_pong_cc
bin=$($bazel info --symlink_prefix=/ bazel-bin 2>/dev/null)
"$bin/hello_c"
"$bin/ping_pong_cc"
echo "bazel consumer: both programs passed"
