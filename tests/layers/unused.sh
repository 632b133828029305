#!/usr/bin/env bash
# scripts/check-unused must fail on a program's exported symbol that no other
# object needs, and must not count a suite's or a benchmark's own exports:
# objects made here with the system's compiler from sources of a tree made
# here, laid out as a build tree; and must leave out an object whose source
# is gone.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib="$tmp/build/common/CMakeFiles/muster-common.dir"
suite="$tmp/build/tests/CMakeFiles/test_x.dir"
src="$tmp/tree"
mkdir -p "$lib" "$suite" "$src/common" "$src/tests"
printf 'int used(void) { return 1; }\nint unused_here(void) { return 2; }\nstatic int quiet(void) { return 3; }\nint self(void) { return quiet(); }\nint call_self(void) { return self(); }\n' >"$src/common/lib.c"
printf 'int used(void);\nint call_self(void);\nint helper_of_test(void) { return used() + call_self(); }\nint main(void) { return helper_of_test(); }\n' >"$src/tests/suite.c"
cc -c "$src/common/lib.c" -o "$lib/lib.c.o"
cc -c "$src/tests/suite.c" -o "$suite/suite.c.o"

# self is used by call_self only, in its own object: it should be static.
if out=$("$top/scripts/check-unused" --root "$src" "$tmp/build"); then
  echo "unused symbols passed:"; echo "$out"; exit 1
fi
for p in 'lib.c.o: unused_here' 'lib.c.o: self$' '2 used nowhere else'; do
  grep -q -- "$p" <<<"$out" || { echo "no \"$p\" in:"; echo "$out"; exit 1; }
done
for p in ': used$' 'call_self' 'helper_of_test' ': main'; do
  grep -q -- "$p" <<<"$out" && { echo "\"$p\" is not unused:"; echo "$out"; exit 1; }
done

# Once both are used from another object, the tree passes.
printf 'int unused_here(void);\nint self(void);\nint more(void) { return unused_here() + self(); }\n' >"$src/tests/more.c"
cc -c "$src/tests/more.c" -o "$suite/more.c.o"
"$top/scripts/check-unused" --root "$src" "$tmp/build" >/dev/null || { echo "a tree with no unused symbol failed"; exit 1; }
# An object left from a source since removed is not read: its export
# needs nobody, and the tree still passes.
printf 'int gone_too(void) { return 4; }\n' >"$tmp/gone.c"
cc -c "$tmp/gone.c" -o "$lib/gone.c.o"
"$top/scripts/check-unused" --root "$src" "$tmp/build" >/dev/null || { echo "a stale object was read"; exit 1; }
echo "check-unused: an export nobody needs and one only its own object needs refused, a stale object left out"
echo "3 passed, 0 failed"
