#!/usr/bin/env bash
# Runs a pingpong server and client on 127.0.0.1 and fails unless both exit
# 0 and the client prints fi_pingpong's table header and a row per size.
#
# Usage: pair_test.sh SERVER CLIENT ROWS [ARGS...]
#   SERVER, CLIENT: the programs (our pingpong, or Debian's fi_pingpong with
#   LD_LIBRARY_PATH set by the caller); ROWS: the rows the client must print.
set -uo pipefail
server_program=$1
client_program=$2
rows=$3
shift 3

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/pingpong.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=tools/testing/pingpong_pair_run.sh
source tools/testing/pingpong_pair_run.sh
server() { timeout 120 "$server_program" "$@"; }
client() { timeout 120 "$client_program" "$@"; }
# Our client retries a refused connection; fi_pingpong's does not.
run_pingpong_pair server client "$@"
echo "--- client (exit $client_rc)"; cat "$work/client.out"
echo "--- server (exit $server_rc)"; cat "$work/server.out"

header="bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec"
if [ "$client_rc" -ne 0 ] || [ "$server_rc" -ne 0 ]; then
  echo "FAIL: $* did not complete" >&2
  exit 1
fi
if [ "$(grep -cxF "$header" "$work/client.out")" -ne 1 ]; then
  echo "FAIL: no result table header" >&2
  exit 1
fi
got=$(grep -cE '^[0-9.]+[kmg]? +[0-9]+[kmb]? +=' "$work/client.out")
if [ "$got" -ne "$rows" ]; then
  echo "FAIL: $got result rows, expected $rows" >&2
  exit 1
fi
echo "PASS: $*"
