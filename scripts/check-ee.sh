#!/usr/bin/env bash
# Check execution-environment.yml without a container engine:
#   1. build the collection tarball and render the EE with `ansible-builder create` in a scratch
#      directory under the cache (the definition must validate against builder's schema 3, and
#      every file it names must exist);
#   2. merge the Python and system requirements the way the image build does
#      (`ansible-builder introspect` over slime.hybrid and the collections of requirements.yml);
#   3. fail when a plugin imports a third-party package that no requirement provides,
#      or when bindep.txt does not parse.
# ansible-builder is installed into the venv when it is missing. The rendered Containerfile
# stays in $SLIME_CACHE/ee/context; `podman build -f Containerfile context` builds it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venv=$cache/venv
work=$cache/ee
fail() { echo "check-ee: $*" >&2; exit 1; }

[ -x "$venv/bin/python" ] || fail "no venv at $venv (run make deps)"
if [ ! -x "$venv/bin/ansible-builder" ]; then
  echo "check-ee: installing ansible-builder into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "ansible-builder>=3.1"
fi
export PATH=$venv/bin:$PATH

rm -rf "$work"
mkdir -p "$work"
# The definition and the files it names (galaxy/python/system as file names).
files=$(cd "$here" && python - <<'PY'
import yaml
ee = yaml.safe_load(open("execution-environment.yml"))
assert ee.get("version") == 3, "execution-environment.yml: version must be 3"
names = ["execution-environment.yml"]
for key in ("galaxy", "python", "system"):
    value = ee.get("dependencies", {}).get(key)
    if isinstance(value, str):
        names.append(value)
print(" ".join(names))
PY
)
for f in $files; do
  [ -f "$here/$f" ] || fail "execution-environment.yml names $f, which does not exist"
  cp "$here/$f" "$work/"
done
ansible-galaxy collection build --force --output-path "$work" "$here" >/dev/null
tarball=$(ls "$work"/slime-hybrid-*.tar.gz)

echo "check-ee: ansible-builder $(ansible-builder --version) create"
(cd "$work" && ansible-builder create -f execution-environment.yml -c context --output-filename Containerfile >/dev/null)
containerfile=$work/context/Containerfile
# shellcheck disable=SC2016  # literal lines of the Containerfile, not expansions
for want in 'FROM $EE_BASE_IMAGE AS base' 'COPY _build/slime/ /tmp/slime/' 'helm version' \
            'introspect.py introspect'; do
  grep -qF -- "$want" "$containerfile" || fail "rendered Containerfile lacks: $want"
done
[ -s "$work/context/_build/slime/$(basename "$tarball")" ] || fail "the collection tarball is not in the build context"

# What the builder stage will install: introspect slime.hybrid and its Galaxy dependencies
# (taken from where Ansible has them installed here).
cols=$work/collections/ansible_collections
mkdir -p "$cols/slime/hybrid"
tar -xzf "$tarball" -C "$cols/slime/hybrid"
python - "$work/requirements.yml" "$cols" <<'PY'
import os, sys, yaml
import ansible_collections
req, cols = sys.argv[1], sys.argv[2]
roots = [p for p in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep) if p]
roots = [os.path.join(r, "ansible_collections") for r in roots] + list(ansible_collections.__path__)
for entry in (yaml.safe_load(open(req)) or {}).get("collections", []):
    name = entry["name"] if isinstance(entry, dict) else entry
    ns, coll = name.split(".")
    src = next((os.path.join(r, ns, coll) for r in roots if os.path.isdir(os.path.join(r, ns, coll))), None)
    if src is None:
        sys.exit("check-ee: collection %s (requirements.yml) is not installed here; cannot introspect it" % name)
    os.makedirs(os.path.join(cols, ns), exist_ok=True)
    os.symlink(src, os.path.join(cols, ns, coll))
PY
ansible-builder introspect --user-pip "$work/requirements.txt" --user-bindep "$work/bindep.txt" \
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

echo "check-ee: ok - $(grep -c . "$work/merged-requirements.txt") Python and $(grep -c . "$work/merged-bindep.txt") system requirements;" \
  "Containerfile in $work/context"
