#!/usr/bin/env bash
# Runs one fi_pingpong server and client pair (on 127.0.0.1 unless
# PINGPONG_ADDRESS says) against the
# libfabric.so.1 in LIB_DIR and prints the client's result as
# "USEC_PER_XFER MB_PER_SEC". When either process fails, prints
# "failed (exit N): FIRST ERROR LINE" instead and exits 1.
#
# Usage: pingpong_once.sh LIB_DIR PROVIDER EP_TYPE SIZE ITERATIONS TIMEOUT_S
#   LIB_DIR goes first on LD_LIBRARY_PATH; each process runs at most
#   TIMEOUT_S seconds. FI_PINGPONG names another fi_pingpong
#   (default /usr/bin/fi_pingpong). PINGPONG_ADDRESS is the address the
#   client connects to (default 127.0.0.1; the server listens on every
#   address). PINGPONG_CPUS=S,C runs the server on CPU
#   S and the client on CPU C (taskset). No data checks (-c): they would be
#   timed.
set -uo pipefail

if [ $# -ne 6 ]; then
  echo "usage: $0 LIB_DIR PROVIDER EP_TYPE SIZE ITERATIONS TIMEOUT_S" >&2
  exit 2
fi
lib_dir=$1
timeout_s=$6
pingpong=${FI_PINGPONG:-/usr/bin/fi_pingpong}
server_pin=()
client_pin=()
if [ -n "${PINGPONG_CPUS:-}" ]; then
  server_pin=(taskset -c "${PINGPONG_CPUS%,*}")
  client_pin=(taskset -c "${PINGPONG_CPUS#*,}")
fi
args=(-p "$2" -e "$3" -S "$4" -I "$5")
export LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

work=$(mktemp -d "${TMPDIR:-/tmp}/pingpong_once.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

# A random control port that no TCP socket uses in any state (TIME_WAIT
# included). Another program may still take it before the server binds;
# the server then fails and that is reported like any other failure.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if [ -z "$(ss -Htan "( sport = :$port or dport = :$port )")" ]; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# The first line of FILE that looks like an error, else its first non-empty
# line.
first_error() {
  local line
  line=$(grep -m1 -iE 'error|fail|ret=|refused|timed out|no such' "$1")
  [ -n "$line" ] || line=$(grep -m1 . "$1")
  echo "${line:-(no output)}"
}

# exit_text RC: "exit RC", saying so when timeout(1) stopped the process.
exit_text() {
  if [ "$1" -eq 124 ]; then
    echo "exit 124, timed out after ${timeout_s}s"
  else
    echo "exit $1"
  fi
}

port=$(free_port) || { echo "failed (exit 1): no free control port"; exit 1; }

timeout -k 5 "$timeout_s" "${server_pin[@]}" "$pingpong" "${args[@]}" -B "$port" \
  >"$work/server.out" 2>&1 &
server=$!
# Wait until the server listens; stop early if it already exited.
listening=0
for _ in $(seq 100); do
  if [ -n "$(ss -Hltn "sport = :$port")" ]; then
    listening=1
    break
  fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.05
done
if [ "$listening" -eq 0 ]; then
  kill "$server" 2>/dev/null
  wait "$server"
  rc=$?
  server=
  echo "failed ($(exit_text "$rc")): server did not listen on port $port:" \
    "$(first_error "$work/server.out")"
  exit 1
fi

timeout -k 5 "$timeout_s" "${client_pin[@]}" "$pingpong" "${args[@]}" -P "$port" "${PINGPONG_ADDRESS:-127.0.0.1}" \
  >"$work/client.out" 2>&1
client_rc=$?
if [ "$client_rc" -ne 0 ]; then
  # The server may wait for a peer that is gone: 2 s grace, then stop it.
  for _ in $(seq 20); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  kill "$server" 2>/dev/null
fi
wait "$server"
server_rc=$?
server=

if [ "$client_rc" -ne 0 ]; then
  line="failed ($(exit_text "$client_rc")): $(first_error "$work/client.out")"
  # The server's own error (not our kill, 143) is often the cause.
  if [ "$server_rc" -ne 0 ] && [ "$server_rc" -ne 143 ]; then
    line+=" / server ($(exit_text "$server_rc")): $(first_error "$work/server.out")"
  fi
  echo "$line"
  exit 1
fi
if [ "$server_rc" -ne 0 ]; then
  echo "failed ($(exit_text "$server_rc")): server: $(first_error "$work/server.out")"
  exit 1
fi

# Result columns: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
result=$(awk '/usec\/xfer/ { getline; print $7, $6; exit }' "$work/client.out")
if [ -z "$result" ]; then
  echo "failed (exit 0): the client printed no result line"
  exit 1
fi
echo "$result"
