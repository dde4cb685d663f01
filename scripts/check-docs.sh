#!/usr/bin/env bash
# ansible-doc must render every module (plugins/modules/*.py), every filter (plugins/filter/*.py),
# every role entry point (roles/*/meta/argument_specs.yml) and the labs' own roles (lab/*/roles/*)
# of this checkout. Modules, roles and entry points are discovered, not listed; a role without
# meta/argument_specs.yml fails too (every role has one).
# Each role's README.md must list what its argument_specs say (scripts/role_readme.py --check).
# Fails, naming each one, when ansible-doc errors, warns, or prints nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
namespace=$(cd "$here" && python -c 'import yaml; g = yaml.safe_load(open("galaxy.yml")); print(g["namespace"] + "." + g["name"])')

# Make ansible-doc load this checkout as the collection, whatever else is installed: a
# collections path of our own goes first (dependencies still come from the usual paths).
docs_path=$cache/docs-check
mkdir -p "$docs_path/ansible_collections/${namespace%.*}"
ln -sfn "$here" "$docs_path/ansible_collections/${namespace%.*}/${namespace#*.}"
export ANSIBLE_COLLECTIONS_PATH=$docs_path${ANSIBLE_COLLECTIONS_PATH:+:$ANSIBLE_COLLECTIONS_PATH}
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0

failed=()
checked=0
# render LABEL ARGS...: one ansible-doc call; output must be non-empty, without ERROR/WARNING.
render() {
  local label=$1 out err rc=0
  shift
  err=$(mktemp)
  out=$(ansible-doc "$@" 2>"$err") || rc=$?
  checked=$((checked + 1))
  if [ $rc -ne 0 ] || [ -z "$out" ] || grep -qE 'ERROR|\[WARNING\]' "$err"; then
    failed+=("$label")
    echo "check-docs: FAILED $label (ansible-doc $*, rc=$rc):" >&2
    sed 's/^/    /' "$err" >&2
  else
    echo "check-docs: ok $label"
  fi
  rm -f "$err"
}

shopt -s nullglob
for file in "$here"/plugins/modules/*.py; do
  name=$(basename "$file" .py)
  [ "$name" = __init__ ] && continue
  render "module $namespace.$name" -t module "$namespace.$name"
done

# Every filter any plugins/filter/*.py registers (documented in plugins/filter/<name>.yml).
filters=$(PYTHONPATH=$docs_path python - "$here/plugins/filter" "$namespace" <<'PY'
import importlib, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    if name.endswith(".py") and name != "__init__.py":
        module = importlib.import_module("ansible_collections.%s.plugins.filter.%s" % (sys.argv[2], name[:-3]))
        print("\n".join(sorted(module.FilterModule().filters())))
PY
)
for name in $filters; do
  render "filter $namespace.$name" -t filter "$namespace.$name"
done

for dir in "$here"/roles/*/; do
  role=$(basename "$dir")
  spec=$dir/meta/argument_specs.yml
  [ -f "$spec" ] || spec=$dir/meta/argument_specs.yaml
  if [ ! -f "$spec" ]; then
    failed+=("role $namespace.$role (no meta/argument_specs.yml)")
    echo "check-docs: FAILED role $namespace.$role: no meta/argument_specs.yml" >&2
    continue
  fi
  entries=$(python - "$spec" <<'PY'
import sys, yaml
specs = (yaml.safe_load(open(sys.argv[1])) or {}).get("argument_specs") or {}
print(" ".join(specs))
PY
  )
  if [ -z "$entries" ]; then
    failed+=("role $namespace.$role (no entry point in argument_specs)")
    echo "check-docs: FAILED role $namespace.$role: argument_specs has no entry point" >&2
    continue
  fi
  render "role $namespace.$role" -t role "$namespace.$role"
  for entry in $entries; do
    render "role $namespace.$role entry point $entry" -t role "$namespace.$role" -e "$entry"
  done
done

# The labs' own roles (lab/*/roles/*, not in the collection), from their roles path.
for dir in "$here"/lab/*/roles/*/; do
  render "lab role $(basename "$dir")" -t role -r "$(dirname "$dir")" "$(basename "$dir")"
done

# Each role's README.md (what Galaxy shows) lists the variables of meta/argument_specs.yml.
checked=$((checked + 1))
if python "$here/scripts/role_readme.py" --check; then
  echo "check-docs: ok role READMEs match their argument_specs"
else
  failed+=("role READMEs")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "check-docs: ${#failed[@]} of $checked did not render: ${failed[*]}" >&2
  exit 1
fi
echo "check-docs: all $checked rendered"
