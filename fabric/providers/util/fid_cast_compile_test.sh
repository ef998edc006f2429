#!/usr/bin/env bash
# FidCast's compile-time checks: testdata/fid_cast_check.cc builds as it is
# and fails to build when a type declares a member it does not begin with,
# has a virtual function in front, or declares nothing.
set -uo pipefail
src=$1
root=${src%fabric/providers/util/testdata/fid_cast_check.cc}
root=${root:-.}
cxx=${CXX:-g++}
build() {
  "$cxx" -std=c++17 -fsyntax-only -I"$root" -I"$root/fabric/api/include" \
    "$@" "$src" 2>&1
}
failed=0
if ! out=$(build); then
  echo "FAIL: the declared cast does not build:"; echo "$out"; failed=1
fi
for define in WRONG_MEMBER VIRTUAL UNDECLARED; do
  if out=$(build -D"$define"); then
    echo "FAIL: builds with $define"; failed=1
  elif ! grep -q "static assertion failed\|static_assert failed" <<<"$out"; then
    echo "FAIL: $define fails for another reason:"; echo "$out"; failed=1
  else
    echo "ok: $define refused: $(grep -m1 -o 'static.assert.*' <<<"$out")"
  fi
done
exit $failed
