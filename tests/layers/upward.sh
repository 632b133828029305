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

# 1. An include that goes up: svc/ -> api/.
sed -i '0,/#include "svc.h"/s//#include "svc.h"\n#include "api.h"/' "$tmp/tree/coordinator/svc/events.c"
if out=$("$top/scripts/check-layers" --root "$tmp/tree"); then
  echo "an upward include passed:"; echo "$out"; exit 1
fi
grep -q 'svc -> api .*UPWARD' <<<"$out" || { echo "not named:"; echo "$out"; exit 1; }
grep -q 'coordinator/svc/events.c: api.h' <<<"$out" || { echo "file not named:"; echo "$out"; exit 1; }
cp "$top/coordinator/svc/events.c" "$tmp/tree/coordinator/svc/events.c"

# 2. A call that goes up, seen only in the objects: domain/ calls svc_event.
b="$tmp/build/coordinator/CMakeFiles/muster-coordinator-lib.dir"
mkdir -p "$b/domain" "$b/svc" "$tmp/build/common/CMakeFiles/muster-common.dir"
printf 'void svc_event(void) {}\n' >"$tmp/up_svc.c"
printf 'void svc_event(void);\nvoid domain_rule(void) { svc_event(); }\n' >"$tmp/up_domain.c"
cc -c "$tmp/up_svc.c" -o "$b/svc/events.c.o"
cc -c "$tmp/up_domain.c" -o "$b/domain/rule.c.o"
if out=$("$top/scripts/check-layers" --root "$tmp/tree" "$tmp/build"); then
  echo "an upward call passed:"; echo "$out"; exit 1
fi
grep -q 'calls *domain -> svc .*UPWARD' <<<"$out" || { echo "not named:"; echo "$out"; exit 1; }
grep -q 'domain/rule.c: svc_event' <<<"$out" || { echo "symbol not named:"; echo "$out"; exit 1; }
# 3. A circle between two files of one folder: svc/a.c and svc/b.c call
# each other (no edge goes up; the loop alone fails).
rm -f "$b/domain/rule.c.o"
printf 'void svc_b(void);\nvoid svc_a(int n) { if (n) svc_b(); }\n' >"$tmp/a.c"
printf 'void svc_a(int);\nvoid svc_b(void) { svc_a(0); }\n' >"$tmp/b.c"
cc -c "$tmp/a.c" -o "$b/svc/a.c.o"
cc -c "$tmp/b.c" -o "$b/svc/b.c.o"
if out=$("$top/scripts/check-layers" --root "$tmp/tree" "$tmp/build"); then
  echo "a circle between files passed:"; echo "$out"; exit 1
fi
grep -q 'CIRCLE *svc/a.c <-> svc/b.c' <<<"$out" || { echo "circle not named:"; echo "$out"; exit 1; }
grep -q UPWARD <<<"$out" && { echo "no edge goes up here:"; echo "$out"; exit 1; }
echo "check-layers: an upward include, an upward call and a circle between files refused"
echo "3 passed, 0 failed"
