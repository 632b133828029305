#!/bin/sh
# make run: musterd on its embedded SQLite store on loopback, one infra-env,
# a muster-agent for this machine and the lab host (scripts/lab-host.sh: a
# captured server whose disk is an image file, the one host here that can be
# bound and installed); waits until both are validated, shows the pool with
# musterctl and keeps musterd running until Ctrl-C.
#
# Environment: BUILD (build tree, default build), MUSTER_LISTEN (default
# 127.0.0.1:8090). State lives in $BUILD/run/ and survives restarts: the
# next `make run` goes on with the same store, tokens and lab host.
set -eu

BUILD=${BUILD:-build}
LISTEN=${MUSTER_LISTEN:-127.0.0.1:8090}
RUN=$BUILD/run
STATE=$RUN/state
MUSTERD=$BUILD/coordinator/musterd
AGENT=$BUILD/agent/muster-agent
CTL=$BUILD/coordinator/ctl/musterctl
SERVER=https://$LISTEN
# musterd serves HTTPS with a certificate from its own CA, made at first
# start in $STATE/tls; musterctl finds that CA beside admin.token, the agent
# is given it.
CA=$STATE/tls/ca.pem

mkdir -p "$RUN"
# Written at every start (edit this script, not the file).
cat >"$RUN/musterd.conf" <<-CONF
# musterd settings for 'make run' (written by scripts/run-local.sh at each
# start); see coordinator/README.md.
[agent]
instruction_interval = 2
# The lab host is a captured 4-core QEMU server with 2 GiB: a single-node
# cluster of it must be allowed.
[requirements.sno]
cpu_cores = 4
memory = 1GiB
[requirements.any]
memory = 1GiB
# The QEMU lab host (lab-qemu.sh) reaches musterd as 10.0.2.100:8090, the
# address its user networking forwards to this machine's loopback; the
# ISOs musterd streams name it (and its certificate covers it).
[server]
tls_names = 10.0.2.100
[iso]
template = $PWD/$BUILD/iso/muster-discovery.iso
coordinator_url = https://10.0.2.100:8090
# The lab has no NTP server and no DNS records for its clusters, and the lab
# host's disk is an image file on this machine's file system, whose fdatasync
# time is whatever else runs here, not a disk's.
[validations]
ignore = ntp-synced,api-domain-name-resolved-correctly,api-int-domain-name-resolved-correctly,apps-domain-name-resolved-correctly,sufficient-installation-disk-speed
CONF

MD_PID=
AGENT_PID=
LAB_PID=
VM_PID=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$VM_PID" ] && kill "$VM_PID" 2>/dev/null && wait "$VM_PID" 2>/dev/null || true
	[ -n "$LAB_PID" ] && kill "$LAB_PID" 2>/dev/null && wait "$LAB_PID" 2>/dev/null || true
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null || true
	[ -n "$MD_PID" ] && kill "$MD_PID" 2>/dev/null && wait "$MD_PID" 2>/dev/null || true
	echo "stopped musterd, the agent and the lab hosts"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

"$MUSTERD" --listen "$LISTEN" --state-dir "$STATE" --config "$RUN/musterd.conf" 2>>"$RUN/musterd.log" &
MD_PID=$!

export MUSTER_SERVER=$SERVER MUSTER_TOKEN_FILE=$STATE/admin.token
i=0
until [ -f "$STATE/admin.token" ] && "$CTL" infraenv list >/dev/null 2>&1; do
	if ! kill -0 "$MD_PID" 2>/dev/null; then
		echo "musterd did not start; its log ($RUN/musterd.log) says:" >&2
		tail -n 5 "$RUN/musterd.log" >&2
		exit 1
	fi
	i=$((i + 1))
	[ $i -le 100 ] || { echo "musterd does not answer on $SERVER" >&2; exit 1; }
	sleep 0.1
done

# One infra-env for this machine, made once; its agent token beside it.
if [ ! -s "$RUN/infra-env.id" ] || ! "$CTL" infraenv show "$(cat "$RUN/infra-env.id")" >/dev/null 2>&1; then
	"$CTL" infraenv create local --token-out "$RUN/agent.token" -o jsonpath='{.id}' >"$RUN/infra-env.id"
fi
IE=$(cat "$RUN/infra-env.id")

# Two demo releases (the test fixtures 4.15.0 and 4.16.0, each with a small
# OS image), imported once; built in musterd's releases folder, where OS
# images must be.
for v in 4.15.0 4.16.0; do
	if ! "$CTL" release show $v >/dev/null 2>&1; then
		tests/fixtures/releases/make-release.sh tests/fixtures/releases/$v "$STATE/images/release-$v" \
			>"$RUN/release-$v.log" 2>&1 &&
			"$CTL" release import "$STATE/images/release-$v" >>"$RUN/release-$v.log" 2>&1 ||
			echo "could not import the demo release $v ($RUN/release-$v.log says why); going on without it" >&2
	fi
done
[ -n "$IE" ] || { echo "could not create the infra-env" >&2; exit 1; }

# Installs from this demo go into a folder, never onto this machine's disk.
mkdir -p "$RUN/install-target"
"$AGENT" run --coordinator "$SERVER" --infra-env "$IE" --token-file "$RUN/agent.token" \
	--state-dir "$RUN/agent" --coordinator-key "$STATE/signing-key.pub" --ca "$CA" \
	--install-target "$RUN/install-target" 2>>"$RUN/agent.log" &
AGENT_PID=$!
scripts/lab-host.sh "$RUN/lab" "$SERVER" "$IE" "$RUN/agent.token" "$STATE/signing-key.pub" "$CA" &
LAB_PID=$!
# The second lab host, a QEMU guest booted from the discovery ISO, where this
# machine can run one (MUSTER_LAB_QEMU=0: not started).
if [ "${MUSTER_LAB_QEMU:-1}" != 0 ]; then
	scripts/lab-qemu.sh "$RUN/lab-vm" "${LISTEN##*:}" "$IE" &
	VM_PID=$!
fi

echo "musterd on $SERVER (store $STATE/muster.db); waiting for this machine and the lab host to register..."
i=0
while :; do
	n=$("$CTL" host list --infra-env "$IE" -o jsonpath='{range .[*]}{.status}{"\n"}{end}' 2>/dev/null |
		grep -Ec '^(known|insufficient|binding|installing|installed|added-to-existing)' || true)
	[ "$n" -ge 2 ] && break
	for p in "$AGENT_PID:$RUN/agent.log" "$LAB_PID:$RUN/lab/agent.log"; do
		if ! kill -0 "${p%%:*}" 2>/dev/null; then
			echo "an agent stopped; its log (${p#*:}) says:" >&2
			tail -n 5 "${p#*:}" >&2
			exit 1
		fi
	done
	i=$((i + 1))
	[ $i -le 600 ] || { echo "the hosts did not show up within 60 s; see $RUN/agent.log, $RUN/lab/agent.log" >&2; exit 1; }
	sleep 0.1
done
"$CTL" host list --infra-env "$IE"
THIS=$(cat "$RUN/agent/host-id" 2>/dev/null || true)
[ -n "$THIS" ] && echo "This machine: $("$CTL" host show "$THIS" -o jsonpath='{.status_info}' 2>/dev/null || true)"
cat <<-EOF2

	musterd is running on $SERVER (HTTPS; its CA: $CA) until Ctrl-C.
	The pool: this machine (it runs from its own disk, so it cannot be bound:
	host show says why) and lab-host-1, a captured server whose disk is the
	image file $RUN/lab/disk.img; bind and install that one (README.md,
	"The late-binding flow"). From another shell, in this folder:
	  export PATH=\$PWD/build/coordinator/ctl:\$PWD/build/agent:\$PATH
	  export MUSTER_TOKEN_FILE=$STATE/admin.token
	  musterctl host list          # the pool
	  musterctl host show lab-host-1
	Installs from this demo write into $RUN/install-target and $RUN/lab, never a disk.
	Logs: $RUN/musterd.log, $RUN/agent.log, $RUN/lab/agent.log, $RUN/lab/node.log
EOF2
if [ -n "$VM_PID" ] && kill -0 "$VM_PID" 2>/dev/null; then
	cat <<-EOF3
	lab-vm-1, a QEMU guest booted from this infra-env's discovery ISO, joins the
	pool once it is up (a minute or two; emulated): musterctl host list
	shows it. Its console: $RUN/lab-vm/serial.log
	EOF3
fi
wait "$MD_PID"
