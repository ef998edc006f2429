#!/usr/bin/env bash
# Prepares the soft-RoCE guest (run_in_vm.sh) on Debian 12, as root:
#  - installs qemu-system-x86, busybox-static, xz-utils and rdma-core's
#    user-space libraries (the verbs provider loads them; rxe's driver is in
#    ibverbs-providers);
#  - downloads Debian's current kernel package with `apt-get download` and
#    unpacks it under the state folder, without installing it (this
#    machine's kernel has no RDMA subsystem; Debian's has rdma_rxe);
#  - builds a small initramfs there (busybox, the modules of modules.list,
#    init) and extracts an ELF vmlinux (QEMU boots it ~3 s faster).
# State: $FABRIC_RDMA_VM_STATE, default ~/.cache/fabric-rdma-vm (about 70
# MiB). SKIP_APT=1 skips the package step. Run again: silent, and does
# nothing, when the guest is ready and its initramfs newer than init and
# modules.list.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# The user's home from the password database: Bazel runs tests with
# another HOME.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
state=${FABRIC_RDMA_VM_STATE:-$home/.cache/fabric-rdma-vm}
mkdir -p "$state"
export DEBIAN_FRONTEND=noninteractive

if [ "${SKIP_APT:-0}" != 1 ]; then
  packages=(qemu-system-x86 busybox-static xz-utils libibverbs1
            ibverbs-providers librdmacm1)
  missing=()
  for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

if [ -e "$state/vmlinuz" ] && [ "$state/initramfs.cpio.gz" -nt "$here/init" ] &&
   [ "$state/initramfs.cpio.gz" -nt "$here/modules.list" ]; then
  exit 0
fi

kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
if ! ls "$state"/kernel/boot/vmlinuz-* >/dev/null 2>&1; then
  package=$(kernel_package)
  if [ -z "$package" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq  # a machine whose package lists are empty
    package=$(kernel_package)
  fi
  if [ -z "$package" ]; then
    echo "rdma_vm: apt knows no linux-image-amd64 package to download" >&2
    exit 1
  fi
  echo "rdma_vm: downloading $package (not installed)"
  (cd "$state" && apt-get download "$package")
  dpkg-deb -x "$state/${package}"_*.deb "$state/kernel"
  rm -f "$state/${package}"_*.deb
fi
version=$(basename "$(ls -d "$state"/kernel/lib/modules/*)")
modules=$state/kernel/lib/modules/$version

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/lib/modules"
cp /bin/busybox "$work/bin/busybox"
grep -v '^#' "$here/modules.list" | tr -s ' ' '\n' | grep . \
  > "$work/lib/modules/load.order"
while read -r module; do
  file=$(find "$modules/kernel" -name "$module.ko*" | head -1)
  [ -n "$file" ] || { echo "rdma_vm: module $module not found" >&2; exit 1; }
  case "$file" in
    *.xz) xz -dc "$file" > "$work/lib/modules/$module.ko" ;;
    *) cp "$file" "$work/lib/modules/$module.ko" ;;
  esac
done < "$work/lib/modules/load.order"
install -m 755 "$here/init" "$work/init"
(cd "$work" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) \
  > "$state/initramfs.cpio.gz"
ln -sf "kernel/boot/vmlinuz-$version" "$state/vmlinuz"
if [ ! -s "$state/vmlinux" ]; then
  # The bzImage's payload is an xz stream; xz complains about the bytes
  # after it but has written the whole ELF.
  offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$state/vmlinuz" | head -1 |
           cut -d: -f1 || true)
  if [ -n "$offset" ]; then
    tail -c +$((offset + 1)) "$state/vmlinuz" | xz -dc > "$state/vmlinux" \
      2>/dev/null || true
  fi
  if [ "$(head -c 4 "$state/vmlinux" 2>/dev/null | od -An -c | tr -d ' ')" != '177ELF' ]; then
    echo "rdma_vm: no ELF vmlinux extracted; booting vmlinuz" >&2
    rm -f "$state/vmlinux"
  fi
fi
echo "rdma_vm: ready in $state (kernel $version)"
