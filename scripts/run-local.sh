#!/bin/sh
# make run: musterd on its embedded SQLite store on loopback, one infra-env,
# and a muster-agent for this machine; waits until the host is known, shows
# the pool with musterctl and keeps musterd running until Ctrl-C.
#
# Environment: BUILD (build tree, default build), MUSTER_LISTEN (default
# 127.0.0.1:8090). State lives in $BUILD/run/ and survives restarts.
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
if [ ! -f "$RUN/musterd.conf" ]; then
	cat >"$RUN/musterd.conf" <<-CONF
	# musterd settings for 'make run'; see coordinator/README.md.
	[agent]
	instruction_interval = 5
	CONF
fi

MD_PID=
AGENT_PID=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null || true
	[ -n "$MD_PID" ] && kill "$MD_PID" 2>/dev/null && wait "$MD_PID" 2>/dev/null || true
	echo "stopped musterd and the agent"
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
	"$CTL" -o json infraenv create local --token-out "$RUN/agent.token" |
		sed -n 's/^  "id": *"\([0-9a-f-]*\)".*/\1/p' >"$RUN/infra-env.id"
fi
IE=$(cat "$RUN/infra-env.id")

# A demo release (the test fixture 4.15.0 with a small OS image), imported
# once; built in musterd's releases folder, where OS images must be.
if ! "$CTL" release show 4.15.0 >/dev/null 2>&1; then
	tests/fixtures/releases/make-release.sh tests/fixtures/releases/4.15.0 "$STATE/images/release-4.15.0" &&
		"$CTL" release import "$STATE/images/release-4.15.0" ||
		echo "could not import the demo release (see above); going on without it" >&2
fi
[ -n "$IE" ] || { echo "could not create the infra-env" >&2; exit 1; }

# Installs from this demo go into a folder, never onto this machine's disk.
mkdir -p "$RUN/install-target"
"$AGENT" run --coordinator "$SERVER" --infra-env "$IE" --token-file "$RUN/agent.token" \
	--state-dir "$RUN/agent" --coordinator-key "$STATE/signing-key.pub" --ca "$CA" \
	--install-target "$RUN/install-target" 2>>"$RUN/agent.log" &
AGENT_PID=$!

echo "musterd on $SERVER (store $STATE/muster.db); waiting for this machine to register..."
i=0
while :; do
	if "$CTL" host list --infra-env "$IE" 2>/dev/null | grep -Eq 'known|insufficient'; then
		break
	fi
	if ! kill -0 "$AGENT_PID" 2>/dev/null; then
		echo "the agent stopped; its log ($RUN/agent.log) says:" >&2
		tail -n 5 "$RUN/agent.log" >&2
		exit 1
	fi
	i=$((i + 1))
	[ $i -le 300 ] || { echo "the host did not show up within 30 s; see $RUN/agent.log" >&2; exit 1; }
	sleep 0.1
done
"$CTL" host list --infra-env "$IE"
cat <<-EOF2

	musterd is running on $SERVER (HTTPS; its CA: $CA) until Ctrl-C. From another shell:
	  export MUSTER_SERVER=$SERVER MUSTER_TOKEN_FILE=$STATE/admin.token
	  $CTL host list          # the pool
	  $CTL host show HOST     # validations and hardware
	  $CTL event list --follow
	  $CTL release show 4.15.0 --baseline None --enable baremetal
	An install from this demo writes into $RUN/install-target, never a disk.
	Logs: $RUN/musterd.log, $RUN/agent.log
EOF2
wait "$MD_PID"
