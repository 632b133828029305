#!/usr/bin/env bash
# scripts/check-layers must fail on an upward edge and on a circle between
# files: a copy of the coordinator's sources where a service includes the
# API's header; objects made here with the system's compiler where a domain
# file calls a service, and where two service files call each other.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree"
cp -r "$top/coordinator" "$top/common" "$tmp/tree/"

"$top/scripts/check-layers" --root "$tmp/tree" >/dev/null || { echo "the unchanged copy must pass"; exit 1; }

# refused WHAT PATTERN... -- CHECK-LAYERS-ARGS: the check must fail, and its
# output must match every PATTERN.
refused() {
  local what=$1 out
  shift
  local patterns=()
  while [[ $1 != -- ]]; do patterns+=("$1"); shift; done
  shift
  if out=$("$top/scripts/check-layers" "$@"); then
    echo "$what passed:"; echo "$out"; exit 1
  fi
  for p in "${patterns[@]}"; do
    grep -q -- "$p" <<<"$out" || { echo "$what: no \"$p\" in:"; echo "$out"; exit 1; }
  done
  checked="$out"
}

# 1. An include that goes up: svc/ -> api/.
sed -i '0,/#include "svc\/svc.h"/s//#include "svc\/svc.h"\n#include "api\/api.h"/' "$tmp/tree/coordinator/svc/events.c"
refused "an upward include" 'svc -> api .*UPWARD' 'coordinator/svc/events.c: api/api.h' -- --root "$tmp/tree"
cp "$top/coordinator/svc/events.c" "$tmp/tree/coordinator/svc/events.c"

# 2. A call that goes up, seen only in the objects: domain/ calls svc_event.
b="$tmp/build/coordinator/CMakeFiles/muster-coordinator-lib.dir"
mkdir -p "$b/domain" "$b/svc" "$tmp/build/common/CMakeFiles/muster-common.dir"
printf 'void svc_event(void) {}\n' >"$tmp/up_svc.c"
printf 'void svc_event(void);\nvoid domain_rule(void) { svc_event(); }\n' >"$tmp/up_domain.c"
cc -c "$tmp/up_svc.c" -o "$b/svc/events.c.o"
cc -c "$tmp/up_domain.c" -o "$b/domain/rule.c.o"
refused "an upward call" 'calls *domain -> svc .*UPWARD' 'domain/rule.c: svc_event' -- --root "$tmp/tree" "$tmp/build"

# 3. A circle between two files of one folder: svc/a.c and svc/b.c call
# each other (no edge goes up; the loop alone fails).
rm -f "$b/domain/rule.c.o"
printf 'void svc_b(void);\nvoid svc_a(int n) { if (n) svc_b(); }\n' >"$tmp/a.c"
printf 'void svc_a(int);\nvoid svc_b(void) { svc_a(0); }\n' >"$tmp/b.c"
cc -c "$tmp/a.c" -o "$b/svc/a.c.o"
cc -c "$tmp/b.c" -o "$b/svc/b.c.o"
refused "a circle between files" 'CIRCLE *svc/a.c <-> svc/b.c' -- --root "$tmp/tree" "$tmp/build"
grep -q UPWARD <<<"$checked" && { echo "no edge goes up here:"; echo "$checked"; exit 1; }

# 4. A handler calling a function of svc/ that is not an entry point
# (no svc_ prefix): the call goes down, but into svc/'s insides.
rm -f "$b/svc/a.c.o" "$b/svc/b.c.o"
mkdir -p "$b/api"
printf 'int svc_hosts_list(void) { return 0; }\nint hosts_row_helper(void) { return 1; }\n' >"$tmp/s.c"
printf 'int svc_hosts_list(void);\nint hosts_row_helper(void);\nint api_hosts(void) { return svc_hosts_list() + hosts_row_helper(); }\n' >"$tmp/h.c"
cc -c "$tmp/s.c" -o "$b/svc/hosts.c.o"
cc -c "$tmp/h.c" -o "$b/api/hosts.c.o"
refused "a call into svc/'s insides" 'NOT svc_ *api/hosts.c: hosts_row_helper' -- --root "$tmp/tree" "$tmp/build"
grep -q 'svc_hosts_list (a service' <<<"$checked" && { echo "an entry point refused:"; echo "$checked"; exit 1; }

# 5. A handler reaching the store past the services, by a call (in the
# objects) and by an include (in the sources).
rm -f "$b/svc/hosts.c.o" "$b/api/hosts.c.o"
mkdir -p "$b/store"
printf 'int store_host_get(void) { return 0; }\n' >"$tmp/st.c"
printf 'int store_host_get(void);\nint api_host_get(void) { return store_host_get(); }\n' >"$tmp/ah.c"
cc -c "$tmp/st.c" -o "$b/store/store.c.o"
cc -c "$tmp/ah.c" -o "$b/api/hosts.c.o"
refused "a handler calling the store" 'calls *api -> store .*REFUSED' 'api/hosts.c: store_host_get' -- --root "$tmp/tree" "$tmp/build"
rm -f "$b/store/store.c.o" "$b/api/hosts.c.o"
sed -i '0,/#include "api\/api.h"/s//#include "api\/api.h"\n#include "store\/store.h"/' "$tmp/tree/coordinator/api/tokens.c"
refused "a handler including the store" 'includes *api -> store .*REFUSED' 'coordinator/api/tokens.c: store/store.h' -- --root "$tmp/tree"
cp "$top/coordinator/api/tokens.c" "$tmp/tree/coordinator/api/tokens.c"
"$top/scripts/check-layers" --root "$tmp/tree" >/dev/null || { echo "the restored copy must pass"; exit 1; }

echo "check-layers: an upward include, an upward call, a circle between files, a call into svc/'s insides and a handler reaching the store refused"
echo "6 passed, 0 failed"
