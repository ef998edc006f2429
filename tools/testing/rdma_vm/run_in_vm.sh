#!/usr/bin/env bash
# run_in_vm.sh 'COMMAND': boots Debian's kernel in QEMU with a soft-RoCE
# device (rxe0 on the guest's eth0, 10.0.2.15; GID index 1 is its IPv4
# address), runs COMMAND there with bash in this folder, streams its output
# and exits with its status (125: the guest reported none). The guest sees
# the host's root file system read-only at the same paths (writes go to a
# discarded overlay), so bazel-bin's programs run there as they are; do not
# rebuild them while a guest runs. Needs setup.sh once.
#
# /dev/kvm on this project's build machines runs only PVM kernels, so the
# guest is fully emulated (TCG): 6 to 20 s from start to a ready rxe0, and
# times measured inside mean nothing.
#
# Environment: FABRIC_RDMA_VM_STATE (setup.sh's folder), RDMA_VM_RW ("DIR
# ..." mounted read-write at the same path), RDMA_VM_TIMEOUT (900 s),
# RDMA_VM_MEM (4G), RDMA_VM_SMP (2).
set -u
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# The user's home from the password database: Bazel runs tests with
# another HOME.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
state=${FABRIC_RDMA_VM_STATE:-$home/.cache/fabric-rdma-vm}
[ $# -ge 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
if [ ! -e "$state/initramfs.cpio.gz" ] || [ ! -e "$state/vmlinuz" ]; then
  echo "run_in_vm.sh: no guest in $state: run $here/setup.sh first" >&2
  exit 2
fi
kernel=$state/vmlinux
[ -s "$kernel" ] || kernel=$state/vmlinuz

xfer=$(mktemp -d -t fabric-rdma-vm.XXXXXX)
trap 'rm -rf "$xfer"' EXIT
printf '%s\n' "$*" > "$xfer/command"
printf '%s\n' "$PWD" > "$xfer/cwd"
printf '%s\n' "$state" > "$xfer/state"
cp "$here/guest_main.sh" "$xfer/guest_main.sh"
rw_args=()
: > "$xfer/rw_folders"
i=0
for folder in ${RDMA_VM_RW:-}; do
  folder=$(readlink -f "$folder")
  rw_args+=(-fsdev "local,id=rw$i,path=$folder,security_model=none,multidevs=remap"
            -device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
  echo "rw$i $folder" >> "$xfer/rw_folders"
  i=$((i + 1))
done

timeout -k 5 "${RDMA_VM_TIMEOUT:-900}" qemu-system-x86_64 \
  -accel tcg -cpu max -smp "${RDMA_VM_SMP:-2}" -m "${RDMA_VM_MEM:-4G}" \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$kernel" -initrd "$state/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 tsc=reliable no_timer_check quiet loglevel=4" \
  -serial stdio \
  -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  -fsdev local,id=xfer,path="$xfer",security_model=none \
  -device virtio-9p-pci,fsdev=xfer,mount_tag=xfer \
  "${rw_args[@]}" \
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
  < /dev/null | grep --line-buffered -av '^\[ *[0-9.]*\] reboot: Power down'
qemu_status=${PIPESTATUS[0]}
if [ -f "$xfer/status" ]; then
  exit "$(cat "$xfer/status")"
fi
echo "run_in_vm.sh: the guest reported no status (qemu exit $qemu_status)" >&2
exit 125
