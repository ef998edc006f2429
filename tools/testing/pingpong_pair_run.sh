# Sourced by the ping-pong pair tests (bazel runs them in the runfiles
# root). Needs $work, a directory for the outputs.
#
# run_pingpong_pair SERVER CLIENT ARGS...: runs "SERVER ARGS -B PORT" and
# "CLIENT ARGS -P PORT HOST" (HOST: $PAIR_HOST, default 127.0.0.1; programs
# or shell functions; each is responsible for its own time limit) on a
# random control port; their output
# goes to $work/server.out and $work/client.out, their exit statuses to
# server_rc and client_rc. A concurrent test can take the port between its
# choice and the server's bind: then, and only then, another is tried.
run_pingpong_pair() {
  # Names of its own, unlike the callers': bash's locals are dynamic.
  local pair_server=$1 pair_client=$2 attempt port server_pid
  shift 2
  for attempt in 1 2 3; do
    port=$((20000 + ($$ * 7 + RANDOM) % 40000))
    "$pair_server" "$@" -B "$port" >"$work/server.out" 2>&1 &
    server_pid=$!
    # The server listens within a second; stop waiting if it exited.
    for _ in $(seq 50); do
      if ss -ltn "sport = :$port" | grep -q LISTEN; then break; fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    "$pair_client" "$@" -P "$port" "${PAIR_HOST:-127.0.0.1}" >"$work/client.out" 2>&1
    client_rc=$?
    wait "$server_pid"
    server_rc=$?
    grep -q "Address already in use" "$work/server.out" || return 0
    echo "control port $port was taken (attempt $attempt); trying another"
  done
}
