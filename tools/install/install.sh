#!/usr/bin/env bash
# Installs the library, headers, fi_info and a pkg-config file under PREFIX.
# Run as: bazel run //:install -- PREFIX
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix=$1
# bazel run starts in the runfiles tree; a relative PREFIX means the caller's
# directory.
case "$prefix" in
  /*) ;;
  *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac

runfiles="${RUNFILES_DIR:-$0.runfiles}/fabric"
[ -d "$runfiles" ] || runfiles="$PWD"

# Copies SRC to DEST with MODE. Not install(1): in Bazel's runfiles tree
# "install" may name this very script.
put() {
  cp -f "$2" "$3"
  chmod "$1" "$3"
}

mkdir -p "$prefix/lib/pkgconfig" "$prefix/bin"
put 0755 "$runfiles/fabric/libfabric.so.1" "$prefix/lib/libfabric.so.1"
ln -sf libfabric.so.1 "$prefix/lib/libfabric.so"
(cd "$runfiles/fabric/api/include" && find rdma -name '*.h' -print0 |
  while IFS= read -r -d '' header; do
    mkdir -p "$(dirname "$prefix/include/$header")"
    put 0644 "$header" "$prefix/include/$header"
  done)
put 0755 "$runfiles/tools/fi_info/fi_info" "$prefix/bin/fi_info"
sed "s|@PREFIX@|$prefix|" "$runfiles/libfabric.pc.in" \
  > "$prefix/lib/pkgconfig/libfabric.pc"
echo "installed into $prefix"
