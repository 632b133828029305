#!/usr/bin/env bash
# scripts/with-pg-test-server must give its command a working PostgreSQL
# server (a database and a table made through MUSTER_TEST_PG) and leave
# nothing behind: no process of the server and no folder, whether the command
# succeeded, failed, or the wrapper itself was killed outright.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
wpg=$top/scripts/with-pg-test-server
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A command for the wrapper: it writes down the connection string and the
# server's processes (the postmaster and its children) for the checks after.
cat >"$tmp/record" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
echo "$MUSTER_TEST_PG" >"$1/conn"
dir=$(sed -n 's/^host=\([^ ]*\) .*/\1/p' <<<"$MUSTER_TEST_PG")
pm=$(head -n 1 "$dir/data/postmaster.pid")
{ echo "$pm"; pgrep -P "$pm"; } >"$1/pids"
EOF
chmod +x "$tmp/record"

# left OUT: the server's processes and folder that OUT/conn and OUT/pids name
# and that still exist (a zombie is gone: this machine's PID 1 may be slow to
# reap the orphans it inherits).
left() {
  local out=$1 dir pid state
  dir=$(sed -n 's/^host=\([^ ]*\) .*/\1/p' "$out/conn")
  [[ -n $dir ]] || { echo "no host= in: $(cat "$out/conn")"; return; }
  [[ ! -e $dir ]] || echo "the folder $dir"
  while read -r pid; do
    state=$(ps -o stat=,comm= -p "$pid" 2>/dev/null) || continue
    [[ $state == Z* ]] || echo "process $pid ($state)"
  done <"$out/pids"
}

# 1. A session: select 1, a database, a table in it, on a server that fsyncs
# and listens on TCP on loopback alone, with TLS: a session over TLS
# (sslmode=verify-full against its certificate) is encrypted, plain TCP is
# refused.
mkdir "$tmp/s1"
out=$("$wpg" bash -c '
  set -euo pipefail
  "$1" "$2"
  q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
  q "$MUSTER_TEST_PG" -c "select 1"
  q "$MUSTER_TEST_PG" -c "show fsync"
  q "$MUSTER_TEST_PG" -c "show listen_addresses"
  q "$MUSTER_TEST_PG_TLS" -c "select ssl from pg_stat_ssl where pid = pg_backend_pid()"
  plain=${MUSTER_TEST_PG_TLS/sslmode=verify-full/sslmode=disable}
  if q "$plain" -c "select 1" 2>/dev/null; then echo "plain TCP was let in"; fi
  q "$MUSTER_TEST_PG" -c "create database harness"
  db=${MUSTER_TEST_PG/dbname=postgres/dbname=harness}
  q "$db" -c "create table hosts (id integer primary key, name text not null)"
  q "$db" -c "insert into hosts values (1, '\''a'\''), (2, '\''b'\'')"
  q "$db" -c "select count(*) from hosts"
  psql -X -A -t -c "select current_user"' harness "$tmp/record" "$tmp/s1" 2>&1) ||
  { echo "the session failed:"; echo "$out"; exit 1; }
want=$'1\non\n127.0.0.1\nt\n2\nmuster'
[[ $out == "$want" ]] || { echo "the session said:"; echo "$out"; echo "instead of:"; echo "$want"; exit 1; }
grep -Eq '^host=/tmp/[^ ]+ port=[0-9]+ user=muster dbname=postgres$' "$tmp/s1/conn" ||
  { echo "MUSTER_TEST_PG: $(cat "$tmp/s1/conn")"; exit 1; }
[[ $(wc -l <"$tmp/s1/pids") -gt 1 ]] || { echo "no children of the postmaster seen"; exit 1; }
leftover=$(left "$tmp/s1")
[[ -z $leftover ]] || { echo "after a session, still there:"; echo "$leftover"; exit 1; }

# 2. A command that fails: its status comes back, and nothing is left.
mkdir "$tmp/s2"
rc=0
"$wpg" bash -c '"$1" "$2"; psql -X -q -c "select 1" >/dev/null; exit 3' harness "$tmp/record" "$tmp/s2" || rc=$?
((rc == 3)) || { echo "a command that exits 3: the wrapper exited $rc"; exit 1; }
leftover=$(left "$tmp/s2")
[[ -z $leftover ]] || { echo "after a failed command, still there:"; echo "$leftover"; exit 1; }

# 3. The wrapper killed outright (as ctest's timeout does): its watchdog stops
# the server and removes the folder.
mkdir "$tmp/s3"
"$wpg" bash -c '"$1" "$2"; echo $$ >"$2/cmd"; exec sleep 120' harness "$tmp/record" "$tmp/s3" &
wrapper=$!
for ((i = 0; i < 600; i++)); do
  [[ -s $tmp/s3/cmd ]] && break
  sleep 0.1
done
[[ -s $tmp/s3/cmd ]] || { echo "the command did not start within 60 s"; kill "$wrapper"; exit 1; }
kill -KILL "$wrapper"
wait "$wrapper" 2>/dev/null || true
kill "$(cat "$tmp/s3/cmd")"
for ((i = 0; i < 150; i++)); do
  leftover=$(left "$tmp/s3")
  [[ -n $leftover ]] || break
  sleep 0.1
done
[[ -z $leftover ]] || { echo "15 s after the wrapper was killed, still there:"; echo "$leftover"; exit 1; }

# 4. start refuses a folder that is not empty (it may belong to something else).
rc=0
err=$("$top/scripts/pg-test-server" start "$tmp" 2>&1) || rc=$?
((rc == 2)) && grep -q "is not empty" <<<"$err" || { echo "start in a full folder: exit $rc, $err"; exit 1; }

echo "with-pg-test-server: a session, a failing command and a killed wrapper leave no server and no folder"
echo "4 passed, 0 failed"
