#!/usr/bin/env bash
# scripts/openapi-lint must fail on a document broken on purpose: copies of
# openapi/muster.yaml (read and written again with python3-yaml, so that the
# edits find their place whatever else the document says) with a response
# that has no description, a $ref to a schema that is not there, and a type
# that JSON Schema has not. The copy written again unbroken must pass.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# broken NAME EDIT: a copy of the document as $tmp/NAME.yaml, EDIT (Python,
# on the loaded document `d`) applied.
broken() {
  /usr/bin/python3 - "$top/openapi/muster.yaml" "$tmp/$1.yaml" "$2" <<'PY'
import sys
import yaml
src, dst, edit = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    d = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
exec(edit, {"d": d})
with open(dst, "w", encoding="utf-8") as f:
    yaml.dump(d, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, allow_unicode=True)
PY
}

# refused NAME RULE: the lint of $tmp/NAME.yaml fails, naming RULE.
refused() {
  local out rc=0
  out=$("$top/scripts/openapi-lint" "$tmp/$1.yaml" 2>&1) || rc=$?
  if ((rc != 1)); then echo "$1: the lint exited $rc, not 1:"; echo "$out"; exit 1; fi
  grep -q " $2: " <<<"$out" || { echo "$1: no problem of rule $2:"; echo "$out"; exit 1; }
  echo "refused: $1 ($2)"
}

broken unchanged ''
"$top/scripts/openapi-lint" "$tmp/unchanged.yaml" >/dev/null || { echo "the unbroken copy must pass"; exit 1; }

broken no_description 'del d["paths"]["/api/v2/version"]["get"]["responses"]["200"]["description"]'
refused no_description struct
broken missing_schema \
  'd["paths"]["/api/v2/version"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/NoSuchSchema"}'
refused missing_schema no-unresolved-refs
broken bad_type 'd["components"]["schemas"]["Error"]["properties"]["code"]["type"] = "strnig"'
refused bad_type struct
echo "3 passed, 0 failed"
