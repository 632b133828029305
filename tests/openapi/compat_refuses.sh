#!/usr/bin/env bash
# scripts/openapi-compat over openapi/muster.yaml and copies of it changed on
# purpose (read and written again with python3-yaml, so that each edit finds
# its place whatever else the document says): a route removed, a response
# member renamed, a type changed, a request member made required, an enum
# value a client may send removed and a status removed must each be refused,
# by its place; a response member and an optional request member added, and
# an enum value added in a response, accepted; a route removed together with
# a new info.version reported and accepted.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/openapi/muster.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0

# changed NAME EDIT: $tmp/NAME.yaml, the document with EDIT (Python, on the
# loaded document `d`; schema(method, path) is the JSON request body's
# schema, its $ref followed) applied. What EDIT prints is the output.
changed() {
  /usr/bin/python3 - "$doc" "$tmp/$1.yaml" "$2" <<'PY'
import sys
import yaml
src, dst, edit = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    d = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

def follow(node):
    while isinstance(node, dict) and "$ref" in node:
        target = d
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node

def schema(method, path):
    body = follow(d["paths"][path][method]["requestBody"])
    return follow(body["content"]["application/json"]["schema"])

exec(edit, {"d": d, "schema": schema, "follow": follow})
with open(dst, "w", encoding="utf-8") as f:
    yaml.dump(d, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, allow_unicode=True)
PY
}

# expect NAME RC LINE...: the check of the document against $tmp/NAME.yaml
# exits RC and prints every LINE whole.
expect() {
  local name=$1 want=$2 out rc=0 line
  shift 2
  out=$("$top/scripts/openapi-compat" "$doc" "$tmp/$name.yaml" 2>&1) || rc=$?
  if ((rc != want)); then echo "$name: exit $rc, not $want:"; echo "$out"; exit 1; fi
  for line in "$@"; do
    grep -qxF -- "$line" <<<"$out" || { echo "$name: no line '$line' in:"; echo "$out"; exit 1; }
  done
  echo "$name: exit $rc as expected"
  passed=$((passed + 1))
}

# no_incompatible NAME: the output of the last check has no line but the
# compatible ones and the verdict.
no_incompatible() {
  local out
  out=$("$top/scripts/openapi-compat" "$doc" "$tmp/$1.yaml" 2>&1 | grep -v '^compatible: \|^openapi-compat: ' || true)
  [[ -z $out ]] || { echo "$1: incompatible changes reported:"; echo "$out"; exit 1; }
}

changed unchanged ''
expect unchanged 0 "openapi-compat: $tmp/unchanged.yaml only grew from $doc (API version v2)"
no_incompatible unchanged

changed route_removed 'del d["paths"]["/api/v2/version"]'
expect route_removed 1 "GET /api/v2/version: operation removed"

changed member_renamed 'p = d["components"]["schemas"]["Version"]["properties"]; p["api_version"] = p.pop("api")'
expect member_renamed 1 "GET /api/v2/version 200: member 'api' renamed to 'api_version' in Version"

changed type_changed 'd["components"]["schemas"]["Version"]["properties"]["schema"]["properties"]["store"]["type"] = "string"'
expect type_changed 1 "GET /api/v2/version 200: type of Version.schema.store changed from integer to string"

# The first optional member of POST /api/v2/clusters's body, and the name of
# the schema that has it.
read -r m name < <(changed made_required '
s = schema("post", "/api/v2/clusters")
m = [p for p in s["properties"] if p not in s.get("required", [])][0]
s.setdefault("required", []).append(m)
ref = d["paths"]["/api/v2/clusters"]["post"]["requestBody"]["content"]["application/json"]["schema"]
print(m, ref["$ref"].rsplit("/", 1)[1] if "$ref" in ref else "the request body")')
expect made_required 1 "POST /api/v2/clusters request: member '$m' made required in $name"

# The last value taken out of the first enum a query parameter has.
read -r e_method e_path e_param e_value < <(changed enum_removed '
done = False
for path, item in d["paths"].items():
    for method, op in item.items():
        if done or not isinstance(op, dict):
            continue
        for p in op.get("parameters", []):
            p = follow(p)
            e = follow(p.get("schema", {})).get("enum")
            if not done and p.get("in") == "query" and e and len(e) > 1:
                print(method.upper(), path, p["name"], repr(e.pop()))
                done = True')
expect enum_removed 1 "$e_method $e_path: enum value $e_value removed from parameter '$e_param'"

changed status_removed 'del d["paths"]["/api/v2/version"]["get"]["responses"]["500"]'
expect status_removed 1 "GET /api/v2/version: status 500 removed"

changed members_added '
d["components"]["schemas"]["Version"]["properties"]["uptime_seconds"] = {"type": "integer"}
schema("post", "/api/v2/clusters")["properties"]["comment"] = {"type": "string"}'
expect members_added 0 "openapi-compat: $tmp/members_added.yaml only grew from $doc (API version v2)"
no_incompatible members_added

changed enum_value_added 'd["components"]["schemas"]["Version"]["properties"]["features"]["items"]["enum"].append("ipv6")'
expect enum_value_added 0 "compatible: GET /api/v2/version 200: enum value 'ipv6' added to Version.features[]"
no_incompatible enum_value_added

changed version_bump 'del d["paths"]["/api/v2/version"]; d["info"]["version"] = "v3"'
expect version_bump 0 "GET /api/v2/version: operation removed" \
  "openapi-compat: info.version v2 -> v3: 1 incompatible change(s), allowed by the new API version"

echo "$passed passed, 0 failed"
