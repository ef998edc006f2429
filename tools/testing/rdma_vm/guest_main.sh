#!/bin/sh
# The guest's main program (PID 1 after the initramfs): mounts what
# programs expect, makes rxe0 (soft-RoCE) on eth0, runs the host's command
# in the host's folder with bash, records its exit status in the transfer
# folder and powers off. The host's run_in_vm.sh puts it there.
xfer=/run/rdma-vm
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
busybox stty -F /dev/console -onlcr 2>/dev/null
hostname rdma-vm
mkdir -p /lib/modules
mount --bind "$(cat $xfer/state)/kernel/lib/modules" /lib/modules
# The host has no kmod; busybox loads what the kernel asks for.
ln -sf /bin/busybox /usr/sbin/modprobe
echo /usr/sbin/modprobe > /proc/sys/kernel/modprobe
while read -r tag path; do
  mkdir -p "$path" &&
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none \
      "$tag" "$path"
done < $xfer/rw_folders
rdma link add rxe0 type rxe netdev eth0 ||
  echo "rdma_vm: rdma link add rxe0 failed"
ulimit -l unlimited
ulimit -c 0
cd "$(cat $xfer/cwd)" || cd /
bash -c "$(cat $xfer/command)" < /dev/null > /dev/console 2>&1
echo $? > $xfer/status
sync
busybox poweroff -f
