#!/usr/bin/env bash
# Check execution-environment.yml without a container engine:
#   1. stage it and render the Containerfile (scripts/build-ee.sh --context-only: the
#      definition must validate against ansible-builder's schema 3, every file it names must
#      exist, and ee/collections.yml must cover galaxy.yml's dependencies);
#   2. merge the Python and system requirements the way the image build does
#      (`ansible-builder introspect` over the staged collections);
#   3. fail when a plugin imports a third-party package that no requirement provides,
#      or when bindep.txt does not parse.
# The image itself is built and run by the molecule scenario `ee` (scripts/build-ee.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venv=$cache/venv
work=$cache/ee
fail() { echo "check-ee: $*" >&2; exit 1; }

[ -x "$venv/bin/python" ] || fail "no venv at $venv (run make deps)"
export PATH=$venv/bin:$PATH

# (installs ansible-builder into the venv when it is missing)
stage=$("$here/scripts/build-ee.sh" --context-only)
containerfile=$stage/context/Containerfile
echo "check-ee: ansible-builder $(ansible-builder --version): $containerfile"
# shellcheck disable=SC2016  # literal lines of the Containerfile, not expansions
for want in 'FROM $EE_BASE_IMAGE AS base' 'ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--offline"' \
            'COPY _build/bin/helm /usr/local/bin/helm' 'introspect.py introspect'; do
  grep -qF -- "$want" "$containerfile" || fail "rendered Containerfile lacks: $want"
done
for t in "$stage"/ee/collections/*.tar.gz; do
  [ -s "$stage/context/_build/collections/$(basename "$t")" ] || fail "$(basename "$t") is not in the build context"
done

# What the builder stage will install: introspect the staged collections.
rm -rf "$work/collections"
cols=$work/collections/ansible_collections
for t in "$stage"/ee/collections/*.tar.gz; do
  fqcn=$(tar -xOzf "$t" MANIFEST.json | python -c 'import json, sys; i = json.load(sys.stdin)["collection_info"]; print(i["namespace"] + "/" + i["name"])')
  mkdir -p "$cols/$fqcn"
  tar -xzf "$t" -C "$cols/$fqcn"
done
ansible-builder introspect --user-pip "$here/requirements.txt" --user-bindep "$here/bindep.txt" \
  --write-pip "$work/merged-requirements.txt" --write-bindep "$work/merged-bindep.txt" \
  "$work/collections" >/dev/null
bindep --profiles -f "$here/bindep.txt" >/dev/null || fail "bindep.txt does not parse"

# Every third-party package a plugin imports must be provided by a requirement.
python - "$here/plugins" "$work/merged-requirements.txt" <<'PY'
import ast, importlib.metadata as md, os, re, sys
plugins, merged = sys.argv[1], sys.argv[2]

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

required = set()
for line in open(merged):
    line = line.split("#")[0].strip()
    if line:
        required.add(norm(re.split(r"[\s<>=!~;\[]", line, 1)[0]))
# ansible-core's own dependencies (jinja2, PyYAML, ...) come with it.
core = {norm(re.split(r"[\s<>=!~;\[(]", r, 1)[0]) for r in (md.requires("ansible-core") or []) if "extra ==" not in r}
provided = required | core
dists = md.packages_distributions()

missing = {}
for root, _dirs, names in os.walk(plugins):
    for fname in names:
        if not fname.endswith(".py"):
            continue
        path = os.path.join(root, fname)
        tree = ast.parse(open(path, "rb").read(), path)
        fallback = set()  # imports inside `except ImportError:` are Python 2 fallbacks
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                fallback.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in fallback:
                continue
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                top = mod.split(".")[0]
                if top in sys.stdlib_module_names or top in ("ansible", "ansible_collections", "__future__"):
                    continue
                candidates = {norm(d) for d in dists.get(top, [])} or {norm(top)}
                if not candidates & provided:
                    missing.setdefault(top, set()).add(os.path.relpath(path, os.path.dirname(plugins)))
if missing:
    for top, where in sorted(missing.items()):
        print("check-ee: %s is imported by %s but no requirement provides it (requirements.txt)"
              % (top, ", ".join(sorted(where))), file=sys.stderr)
    sys.exit(1)
PY

echo "check-ee: ok - $(grep -c . "$work/merged-requirements.txt") Python and $(grep -c . "$work/merged-bindep.txt") system requirements"
