# Sourced by shell tests that run uninstrumented programs (Debian's fi_info,
# a client built with plain gcc) against our libfabric.so.1. Under
# --config=asan or tsan the library is instrumented, and such a program can
# load it only with the sanitizer runtime preloaded.

# sanitizer_preload LIBRARY: prints the sanitizer runtime LIBRARY needs
# (empty when it is not instrumented).
sanitizer_preload() {
  ldd "$1" | awk '/lib[at]san\.so/ { print $3; exit }'
}

# run_uninstrumented LIBRARY COMMAND...: runs COMMAND (a program, or a shell
# function that execs one) in a subshell with that runtime preloaded when
# LIBRARY needs one; the program's own leaks are not ours.
run_uninstrumented() {
  local runtime
  runtime=$(sanitizer_preload "$1")
  shift
  (
    if [ -n "$runtime" ]; then
      export LD_PRELOAD="$runtime"
      export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    fi
    "$@"
  )
}
