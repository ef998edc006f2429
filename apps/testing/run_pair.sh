#!/usr/bin/env bash
# Runs an example program as a server and a client on 127.0.0.1 (or on
# $PAIR_HOST, an address of a device: 10.0.2.15 for verbs in the soft-RoCE
# guest): the server on a port it picks (-p 0), the client on the port the
# server prints ("server: listening at ADDR:PORT"). Passes when both exit 0
# and their output holds every line of EXPECTED (fixed strings, in any
# order).
#
# Usage: run_pair.sh PROGRAM EXPECTED [ARGS...]
#   ARGS go to both processes, e.g. --prov tcp.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 PROGRAM EXPECTED [ARGS...]" >&2
  exit 2
fi
program=$1
expected=$2
shift 2
args=("$@")
host=${PAIR_HOST:-127.0.0.1}

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/pair.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

timeout 60 "$program" "${args[@]}" -b "$host" -p 0 >"$work/server.out" 2>&1 &
server=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^server: listening at .*:\([0-9]*\)$/\1/p' "$work/server.out")
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "FAIL: the server printed no address" >&2
  cat "$work/server.out" >&2
  exit 1
fi
timeout 60 "$program" "${args[@]}" -b "$host" -p "$port" "$host" >"$work/client.out" 2>&1
client_rc=$?
wait "$server"
server_rc=$?
server=
echo "--- server (exit $server_rc)"
cat "$work/server.out"
echo "--- client (exit $client_rc)"
cat "$work/client.out"
status=0
if [ "$server_rc" -ne 0 ] || [ "$client_rc" -ne 0 ]; then
  echo "FAIL: server exit $server_rc, client exit $client_rc" >&2
  status=1
fi
while IFS= read -r pattern; do
  [ -z "$pattern" ] && continue
  if ! grep -qF -- "$pattern" "$work/server.out" "$work/client.out"; then
    echo "FAIL: no line with: $pattern" >&2
    status=1
  fi
done <"$expected"
[ "$status" -eq 0 ] && echo "PASS: $(basename "$program") ${args[*]}"
exit "$status"
