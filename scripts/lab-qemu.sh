#!/bin/sh
# make run's second lab host, where this machine can run it: a QEMU guest
# booted from the infra-env's discovery ISO, as a bare-metal host boots, and
# named lab-vm-1 once it has registered. Its agent is the ISO's own; its disk a sparse image file; its
# network QEMU's user networking in restricted mode, whose one way out is a
# forward of the coordinator address the ISO names (10.0.2.100:8090) to
# musterd on this machine's loopback. Started and stopped by
# scripts/run-local.sh, after `make iso` has built the ISO template.
#
#   lab-qemu.sh LAB_DIR MUSTERD_PORT INFRA_ENV_ID
#
# Plain emulation (TCG: a minute or two to boot), which runs anywhere, also
# inside a virtual machine whose /dev/kvm is there but hangs a nested guest;
# MUSTER_LAB_ACCEL=kvm where KVM works. Exits 0 at once, saying why, when
# QEMU, socat or the ISO template is missing.
set -eu

LAB=$1 PORT=$2 IE=$3
BUILD=${BUILD:-build}
CTL=$BUILD/coordinator/ctl/musterctl
# The guest's SMBIOS UUID, which its agent reports as the host id.
HOST_ID=6d757374-6572-4071-8335-000000000002

for t in qemu-system-x86_64 socat; do
	command -v "$t" >/dev/null 2>&1 || { echo "lab-vm-1: no $t here (scripts/install-deps.sh iso installs it)"; exit 0; }
done
[ -f "$BUILD/iso/muster-discovery.iso" ] || { echo "lab-vm-1: no discovery ISO template (make iso builds it)"; exit 0; }

mkdir -p "$LAB"
# The infra-env's ISO, as an admin downloads it (written 0600: it holds the
# agent token), and a sparse 120 GB disk: only what an install writes is stored.
"$CTL" infraenv download "$IE" -o "$LAB/discovery.iso" 2>>"$LAB/qemu.log"
[ -f "$LAB/disk.img" ] || truncate -s 120G "$LAB/disk.img"
accel=${MUSTER_LAB_ACCEL:-tcg}

PID=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 0' INT TERM

echo "lab-vm-1: booting the discovery ISO in QEMU ($accel; serial console in $LAB/serial.log)"
qemu-system-x86_64 -machine q35 -accel "$accel" -m 2048 -smp 2 -uuid "$HOST_ID" \
	-drive "file=$LAB/discovery.iso,media=cdrom,readonly=on" \
	-drive "file=$LAB/disk.img,if=virtio,format=raw,cache=unsafe" \
	-netdev "user,id=n0,restrict=on,hostname=lab-vm-1,guestfwd=tcp:10.0.2.100:8090-cmd:socat - TCP:127.0.0.1:$PORT" \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:6d:75:02 \
	-serial "file:$LAB/serial.log" -display none -monitor none -no-reboot \
	>>"$LAB/qemu.log" 2>&1 &
PID=$!
# Every discovery ISO boots as muster-discovery; this one is named as an
# admin names a host, once it has registered (musterctl: musterd's address
# and token from run-local.sh's environment).
while kill -0 "$PID" 2>/dev/null; do
	if "$CTL" host show "$HOST_ID" >/dev/null 2>&1; then
		"$CTL" host set "$HOST_ID" --hostname lab-vm-1 >/dev/null 2>>"$LAB/qemu.log" &&
			echo "lab-vm-1: registered (host $HOST_ID), named lab-vm-1"
		break
	fi
	sleep 2
done
wait "$PID"
