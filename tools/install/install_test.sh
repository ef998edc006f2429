#!/usr/bin/env bash
# Installs into a fresh PREFIX with the install script, then checks what a
# user outside Bazel gets: a C program built with
# `pkg-config --cflags --libs libfabric` against PREFIX/include and
# PREFIX/lib runs on our library (fi_version says 1.18, fi_getinfo finds tcp),
# and PREFIX/bin/fi_info runs.
#
# Usage: install_test.sh INSTALL_SCRIPT
set -euo pipefail
# shellcheck source=tools/testing/sanitizer_runtime.sh
source tools/testing/sanitizer_runtime.sh  # bazel runs tests in the runfiles root

install_script=$(realpath "$1")
prefix=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fabric_prefix.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

"$install_script" "$prefix" >/dev/null

for path in lib/libfabric.so.1 lib/libfabric.so lib/pkgconfig/libfabric.pc \
  include/rdma/fabric.h include/rdma/fi_domain.h \
  include/rdma/providers/fi_prov.h bin/fi_info; do
  [ -e "$prefix/$path" ] || { echo "FAIL: $path is not installed"; exit 1; }
done

cat >"$prefix/client.c" <<'C'
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  struct fi_info *hints = fi_allocinfo(), *info = NULL;
  int rc;
  if (fi_version() != FI_VERSION(1, 18)) return 10;
  hints->fabric_attr->prov_name = strdup("tcp");
  rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), "127.0.0.1",
                  "7470", FI_NUMERICHOST, hints, &info);
  if (rc != 0) {
    fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-rc));
    return 11;
  }
  printf("%s %s\n", info->fabric_attr->prov_name, info->domain_attr->name);
  fi_freeinfo(info);
  fi_freeinfo(hints);
  return 0;
}
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
gcc -std=gnu99 -Wall -Werror -o "$prefix/client" "$prefix/client.c" \
  $(pkg-config --cflags --libs libfabric)
output=$(LD_LIBRARY_PATH="$prefix/lib" \
  run_uninstrumented "$prefix/lib/libfabric.so.1" "$prefix/client")
if [ "$output" != "tcp lo" ]; then
  echo "FAIL: the client printed '$output', expected 'tcp lo'"
  exit 1
fi
library=$(LD_LIBRARY_PATH="$prefix/lib" ldd "$prefix/client" | awk '/libfabric/ { print $3 }')
if [ "$library" != "$prefix/lib/libfabric.so.1" ]; then
  echo "FAIL: the client loads '$library', not the installed library"
  exit 1
fi
"$prefix/bin/fi_info" -l | grep -q '^tcp:' || {
  echo "FAIL: the installed fi_info does not list tcp"
  exit 1
}
echo "PASS"
