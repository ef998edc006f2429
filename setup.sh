#!/usr/bin/env bash
# Installs the Debian 12 packages this project builds, tests and benchmarks
# with. Idempotent: prints nothing and installs nothing when all are present.
set -euo pipefail

# Bazel 4.2.3 (offline) and its @rules_java; the compiler; Abseil, Protobuf,
# GoogleTest, Google Benchmark, rdma-core and OpenMPI as system libraries;
# Debian's libfabric 1.17 as the ABI reference and benchmark baseline; iproute2
# for the network namespaces of the integration tests; pkgconf for the
# install test, which builds a program against the installed libfabric.pc;
# gnuplot for the benchmark's plot; valgrind for bench:verbs_instructions;
# QEMU, busybox and xz for the soft-RoCE guest the verbs tests run in
# (tools/testing/rdma_vm, which then fetches Debian's kernel package
# without installing it), rdma-core's rxe driver.
packages=(
  bazel-bootstrap
  bazel-rules-java
  g++ clang
  libabsl-dev
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libibverbs-dev librdmacm-dev
  libopenmpi-dev openmpi-bin
  libfabric-dev libfabric-bin
  iproute2
  pkgconf
  gnuplot-nox
  valgrind
  qemu-system-x86 busybox-static xz-utils ibverbs-providers
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "setup.sh: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The guest is prepared once (~70 MiB under ~/.cache/fabric-rdma-vm); where
# that fails, the verbs tests that need it skip and say why.
SKIP_APT=1 tools/testing/rdma_vm/setup.sh ||
  echo "setup.sh: the soft-RoCE guest is not ready; the verbs tests in it will skip" >&2
