#!/bin/sh
# make run's lab host: a machine that can be bound and installed on one
# computer. Its hardware is a captured QEMU server (tests/fixtures/qemu-q35,
# named lab-host-1 here); its disk is a disk-image file. It lives like a
# real host: `muster-agent run` (the discovery system) until musterd has it
# installed, then its "reboot": the image's root file system is mounted and
# `muster-agent node` runs over it with the agent.conf the install wrote
# there, keeping its /etc/muster/manifests at the cluster's payload
# revision (upgrades included). Started and stopped by scripts/run-local.sh.
#
#   lab-host.sh LAB_DIR SERVER INFRA_ENV_ID AGENT_TOKEN_FILE COORDINATOR_KEY CA
#
# Without root (no loop mount), the disk is a folder instead of an image.
set -eu

LAB=$1 SERVER=$2 IE=$3 TOKEN=$4 KEY=$5 CA=$6
BUILD=${BUILD:-build}
AGENT=$BUILD/agent/muster-agent
CTL=$BUILD/coordinator/ctl/musterctl
FIXTURE=tests/fixtures/qemu-q35/root
# The fixture's SMBIOS UUID: the host id the discovery agent reads.
HOST_ID=6d757374-6572-4071-8335-000000000001

mkdir -p "$LAB"
if [ ! -d "$LAB/root" ]; then
	cp -a "$FIXTURE" "$LAB/root.new"
	echo lab-host-1 >"$LAB/root.new/proc/sys/kernel/hostname"
	mv "$LAB/root.new" "$LAB/root"
fi
if [ "$(id -u)" = 0 ]; then
	DISK=$LAB/disk.img
	[ -f "$DISK" ] || truncate -s 0 "$DISK"
else
	DISK=$LAB/disk
	mkdir -p "$DISK"
fi
MNT=$LAB/mnt
PID=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" || true; fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM

stage() {
	"$CTL" --server "$SERVER" host show "$HOST_ID" -o jsonpath='{.progress.stage}' 2>/dev/null || true
}

# The installed system: the disk's root file system, mounted where it is an
# image (the root partition is the one whose file system is labelled root).
boot_installed() {
	if [ -f "$DISK" ]; then
		mkdir -p "$MNT"
		if ! mountpoint -q "$MNT"; then
			start=$(partx -g -o START -n 1 "$DISK")
			mount -o loop,offset=$((start * 512)) "$DISK" "$MNT"
		fi
		ROOT=$MNT
	else
		ROOT=$DISK
	fi
	set -- --agent-conf "$ROOT/etc/muster/agent.conf" --coordinator-key "$ROOT/etc/muster/coordinator.pub" \
		--manifest-dir "$ROOT/etc/muster/manifests" --state-dir "$LAB/node" --host-id "$HOST_ID" \
		--boot-dir "$LAB/boot"
	[ -f "$ROOT/etc/muster/ca.pem" ] && set -- "$@" --ca "$ROOT/etc/muster/ca.pem"
	mkdir -p "$LAB/node" "$LAB/boot"
	echo "lab-host-1: booting its installed system (muster-agent node over $ROOT)"
	"$AGENT" node "$@" 2>>"$LAB/node.log" &
	PID=$!
}

case $(stage) in
rebooting | done) boot_installed ;;
*)
	"$AGENT" run --coordinator "$SERVER" --infra-env "$IE" --token-file "$TOKEN" --coordinator-key "$KEY" \
		--ca "$CA" --sysroot "$LAB/root" --state-dir "$LAB/agent" --install-target "$DISK" \
		2>>"$LAB/agent.log" &
	PID=$!
	# The discovery agent writes the image and says rebooting; nothing
	# reboots an install target, so this does.
	until [ "$(stage)" = rebooting ]; do
		if ! kill -0 "$PID" 2>/dev/null; then
			echo "lab-host-1: its agent stopped; see $LAB/agent.log" >&2
			exit 1
		fi
		sleep 1
	done
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=
	boot_installed
	;;
esac
wait "$PID"
