#!/usr/bin/env bash
# Checks that dependencies run one way (bazel query; run from anywhere in
# the workspace, exits 1 on a violation):
#   - a provider package (tcp, shm, udp, verbs) depends on no other
#     provider's package: only on the shared layers (util, the stream engine,
#     rxm: RDM over any provider's MSG endpoints) and on fabric/api's base;
#   - the shared layers depend on no provider;
#   - fabric/api/core (the base layer) depends on no provider and not on
#     the entry layer (fabric/api/entry), which alone registers providers.
# Test-only targets are left out: a test may use any fixture it needs.
set -euo pipefail
cd "$(dirname "$0")/../.."

failed=0
providers="tcp shm udp verbs"
shared="util stream rxm"

# Direct dependencies of the package's non-test libraries that fall in
# `targets`.
direct_deps() {
  local package=$1 targets=$2
  bazel query --noshow_progress --notool_deps --noimplicit_deps \
    "kind(cc_library, deps(kind(cc_library, //$package/...) except \
     attr(testonly, 1, //$package/...), 1)) intersect ($targets) \
     except //$package/..." 2>/dev/null
}

check() {
  local package=$1 forbidden=$2 found
  if ! found=$(direct_deps "$package" "$forbidden"); then
    echo "FAIL: bazel query for //$package failed"
    exit 2
  fi
  if [[ -n "$found" ]]; then
    echo "FAIL: //$package depends on:"
    sed 's/^/  /' <<<"$found"
    failed=1
  else
    echo "ok: //$package"
  fi
}

all_providers=""
for p in $providers; do
  all_providers+="${all_providers:+ + }//fabric/providers/$p/..."
done
for p in $providers; do
  check "fabric/providers/$p" "$all_providers"
done
for s in $shared; do
  check "fabric/providers/$s" "$all_providers"
done
check "fabric/api/core" \
  "//fabric/providers/... + //fabric/api/entry/... + //fabric/api/cxx/..."
exit $failed
