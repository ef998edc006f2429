#!/usr/bin/env bash
# vm_test.sh [--skips-allowed] [--gtest_filter=PATTERN] PROGRAM...: a
# Bazel test that runs each PROGRAM (gtest binaries or scripts, from the
# test's runfiles) in one soft-RoCE guest (run_in_vm.sh), one after
# another, and passes when every one exits 0 having skipped nothing: in the
# guest a device is there, so a test that skips for want of one is a
# failure. --skips-allowed: programs whose cases skip for capabilities a
# provider does not claim (the conformance suite). --gtest_filter: passed
# to every program (GTEST_FILTER).
#
# Where the guest cannot run (no qemu-system-x86_64, or setup.sh never ran)
# it prints "SKIPPED: <why>" and passes: the programs then run outside the
# guest in their own cc_test targets, and skip there.
set -uo pipefail
here=tools/testing/rdma_vm
skips_allowed=0
filter=
while [ $# -gt 0 ]; do
  case "$1" in
    --skips-allowed) skips_allowed=1 ;;
    --gtest_filter=*) filter=${1#--gtest_filter=} ;;
    *) break ;;
  esac
  shift
done
if ! command -v qemu-system-x86_64 >/dev/null; then
  echo "SKIPPED: no qemu-system-x86_64 (tools/testing/rdma_vm/setup.sh installs it)"
  exit 0
fi
home=$(getent passwd "$(id -u)" | cut -d: -f6)
state=${FABRIC_RDMA_VM_STATE:-$home/.cache/fabric-rdma-vm}
if [ ! -e "$state/initramfs.cpio.gz" ]; then
  echo "SKIPPED: no guest in $state (run tools/testing/rdma_vm/setup.sh)"
  exit 0
fi

# One guest for all programs: each boot costs 6-20 s. Their output goes to
# a read-write folder, to be checked here.
out=${TEST_TMPDIR:-$(mktemp -d)}/vm_out
mkdir -p "$out"
programs=()
for program in "$@"; do programs+=("$(realpath "$program")"); done
command="
[ -e /sys/class/infiniband/rxe0 ] || echo 'no rxe0 in the guest' > $out/no_device
${filter:+export GTEST_FILTER='$filter'}
for p in ${programs[*]}; do
  name=\$(basename \$p)
  \$p > $out/\$name.log 2>&1
  echo \$? > $out/\$name.status
done"
RDMA_VM_RW="$out" bash "$here/run_in_vm.sh" "$command"
vm_status=$?
failed=0
for program in "${programs[@]}"; do
  name=$(basename "$program")
  echo "=== $name (in the guest)"
  cat "$out/$name.log" 2>/dev/null
  status=$(cat "$out/$name.status" 2>/dev/null || echo none)
  if [ "$status" != 0 ]; then
    echo "FAIL: $name exited $status in the guest" >&2
    failed=1
  elif [ "$skips_allowed" = 0 ] && grep -q '^\[  SKIPPED \]' "$out/$name.log"; then
    echo "FAIL: $name skipped tests in the guest, where rxe0 is" >&2
    failed=1
  fi
done
if [ -e "$out/no_device" ]; then
  echo "FAIL: the guest has no rxe0 (rdma link add failed)" >&2
  failed=1
fi
# Where skips are allowed, something must still have run.
# (grep reads the files itself: `cat | grep -q` under pipefail fails when
# grep stops early and cat gets SIGPIPE.)
if [ "$skips_allowed" = 1 ] &&
   ! grep -qs '^\[       OK \]' "$out"/*.log; then
  echo "FAIL: no test case ran in the guest" >&2
  failed=1
fi
if [ "$vm_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "FAIL: the guest exited $vm_status" >&2
  failed=1
fi
[ "$failed" -eq 0 ] && echo "PASS: ${#programs[@]} programs in the soft-RoCE guest"
exit "$failed"
