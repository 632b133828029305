#!/usr/bin/env bash
# scripts/check-file-map must fail on a coordinator file the map does not
# name and on a name in the map with no file: a copy of coordinator/ changed
# both ways.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$top/coordinator" "$tmp/"
"$top/scripts/check-file-map" --root "$tmp" >/dev/null || { echo "the unchanged copy must pass"; exit 1; }

printf '/* new */\n' >"$tmp/coordinator/svc/newthing.c"
if out=$("$top/scripts/check-file-map" --root "$tmp"); then echo "an unmapped file passed:"; echo "$out"; exit 1; fi
grep -q 'not in the map  coordinator/svc/newthing.c' <<<"$out" || { echo "$out"; exit 1; }
rm "$tmp/coordinator/svc/newthing.c"

rm "$tmp/coordinator/svc/refresh.c"
if out=$("$top/scripts/check-file-map" --root "$tmp"); then echo "a stale name passed:"; echo "$out"; exit 1; fi
grep -q 'no such file    coordinator/svc/refresh.c' <<<"$out" || { echo "$out"; exit 1; }
echo "check-file-map: an unmapped file and a stale name refused"
echo "2 passed, 0 failed"
