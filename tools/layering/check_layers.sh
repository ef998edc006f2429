#!/usr/bin/env bash
# Checks that dependencies run one way (bazel query; run from anywhere in
# the workspace, exits 1 on a violation). Over everything a package's
# non-test libraries reach, directly or through other packages:
#   - a provider (tcp, shm, udp, verbs) reaches no other provider;
#   - the shared layers reach no provider, and they stack in one order:
#     util below stream (the message engine) below rxm (RDM over any
#     provider's MSG endpoints);
#   - fabric/api/core (the base layer) reaches no provider, not the entry
#     layer (fabric/api/entry, which alone registers providers) and not the
#     C++ API.
# Tests are left out: a test may use any fixture it needs.
set -euo pipefail
cd "$(dirname "$0")/../.."

failed=0

# The targets in `forbidden` that the non-test libraries of `package`
# reach.
reached() {
  local package=$1 forbidden=$2
  bazel query --noshow_progress --notool_deps --noimplicit_deps \
    "deps(kind(cc_library, //$package/...) except \
     attr(testonly, 1, //$package/...)) intersect ($forbidden) \
     except //$package/..." 2>/dev/null
}

check() {
  local package=$1 forbidden=$2 found
  if ! found=$(reached "$package" "$forbidden"); then
    echo "FAIL: bazel query for //$package failed"
    exit 2
  fi
  if [[ -n "$found" ]]; then
    echo "FAIL: //$package reaches:"
    sed 's/^/  /' <<<"$found"
    failed=1
  else
    echo "ok: //$package"
  fi
}

providers="//fabric/providers/tcp/... + //fabric/providers/shm/... + \
//fabric/providers/udp/... + //fabric/providers/verbs/..."
for p in tcp shm udp verbs; do
  check "fabric/providers/$p" "$providers"
done
check fabric/providers/rxm "$providers"
check fabric/providers/stream "$providers + //fabric/providers/rxm/..."
check fabric/providers/util "$providers + //fabric/providers/rxm/... + \
//fabric/providers/stream/..."
check fabric/api/core "//fabric/providers/... + //fabric/api/entry/... + \
//fabric/api/cxx/..."
exit $failed
