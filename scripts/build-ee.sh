#!/usr/bin/env bash
# Build the execution environment (execution-environment.yml) with podman, from nothing a
# registry or Galaxy would have to serve:
#   1. a staging directory under the cache holding the definition, its requirement files, the
#      collection tarballs ee/collections.yml names (slime.hybrid built from this checkout,
#      its dependencies packed from the copies Ansible runs here: scripts/pack_collection.py)
#      and a Helm client ($SLIME_EE_HELM, else the helm in PATH);
#   2. the base image: Debian trixie minbase (lab/minbase.sh, debootstrap) + ee/base/Containerfile
#      -> localhost/slime-ee-base:trixie, trusting the CAs this host adds to Debian's
#      (${SLIME_EE_CA_DIR:-/usr/local/share/ca-certificates}/*.crt: a proxy that inspects TLS
#      or a private index must be trusted inside the build as it is here);
#   3. ansible-builder build -> localhost/slime-hybrid-ee:<galaxy.yml version> (and :latest).
# Nothing is rebuilt while the inputs are unchanged (a stamp under the cache); podman's layer
# cache keeps the Python and system packages when only the collection changed.
#   scripts/build-ee.sh                  build (prints the image name last)
#   scripts/build-ee.sh --context-only   stage and render the Containerfile only (no podman,
#                                        no helm): what scripts/check-ee.sh checks
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venv=$cache/venv
mode=${1:-build}
# a directory per mode: make test's static lane checks the context while the ee scenario builds
stage=$cache/ee/${mode#--}
fail() { echo "build-ee: ERROR: $*" >&2; exit 1; }
log() { echo "build-ee: $*" >&2; }

[ -x "$venv/bin/python" ] || fail "no venv at $venv (run make deps)"
if [ ! -x "$venv/bin/ansible-builder" ]; then
  log "installing ansible-builder into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "ansible-builder>=3.1"
fi
export PATH=$venv/bin:$PATH

version=$(python -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["version"])' "$here/galaxy.yml")
image=localhost/slime-hybrid-ee:$version

# --- 1. the staging directory ------------------------------------------------------------
rm -rf "$stage"
mkdir -p "$stage/ee/collections" "$stage/ee/bin"
cp "$here/execution-environment.yml" "$here/requirements.txt" "$here/bindep.txt" "$stage/"
cp "$here/ee/collections.yml" "$stage/ee/"
# Which tarballs: ee/collections.yml's entries; it must cover galaxy.yml's dependencies.
wanted=$(python - "$here/galaxy.yml" "$here/ee/collections.yml" <<'PY'
import os, re, sys, yaml
galaxy, listed = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
names = []
for entry in listed["collections"]:
    m = re.fullmatch(r"collections/([a-z0-9_]+)-([a-z0-9_]+)\.tar\.gz", entry["name"])
    if not m or entry.get("type") != "file":
        sys.exit("build-ee: ee/collections.yml: %r is not collections/<namespace>-<name>.tar.gz"
                 " of type file" % entry)
    names.append("%s.%s" % m.groups())
self = "%s.%s" % (galaxy["namespace"], galaxy["name"])
missing = sorted((set(galaxy.get("dependencies") or {}) | {self}) - set(names))
if missing:
    sys.exit("build-ee: ee/collections.yml lacks %s (galaxy.yml)" % ", ".join(missing))
print(" ".join(names))
PY
)
for fqcn in $wanted; do
  out=$stage/ee/collections/${fqcn/./-}.tar.gz
  if [ "$fqcn" = slime.hybrid ]; then
    ansible-galaxy collection build --force --output-path "$stage" "$here" >/dev/null
    mv "$stage"/slime-hybrid-*.tar.gz "$out"
    log "collection slime.hybrid $version (this checkout)"
  else
    log "collection $(python "$here/scripts/pack_collection.py" "$fqcn" "$out") (installed here)"
  fi
done

if [ "$mode" = --context-only ]; then
  (cd "$stage" && ansible-builder create -f execution-environment.yml -c context --output-filename Containerfile >/dev/null)
  echo "$stage"
  exit 0
fi
[ "$mode" = build ] || fail "unknown argument $mode (none, or --context-only)"

helm=${SLIME_EE_HELM:-$(command -v helm || true)}
[ -x "${helm:-/nonexistent}" ] \
  || fail "no Helm client to put in the image: set SLIME_EE_HELM or put helm in PATH (tests/k8s/k8s-test-bins.sh builds one)"
cp "$helm" "$stage/ee/bin/helm"
log "helm $("$helm" version --short) ($helm)"

# --- 2. the base image ---------------------------------------------------------------------
minbase=$("$here/lab/minbase.sh" trixie)
base_ctx=$cache/ee/base
rm -rf "$base_ctx" && mkdir -p "$base_ctx/certs"
cp "$here"/ee/base/* "$base_ctx/"
for crt in "${SLIME_EE_CA_DIR:-/usr/local/share/ca-certificates}"/*.crt; do
  if [ -f "$crt" ]; then cp "$crt" "$base_ctx/certs/"; fi
done
base_sum=$(cd "$base_ctx" && find . -type f | sort | xargs cat | sha256sum | cut -c1-16)
base=localhost/slime-ee-base:trixie
if [ "$(podman image inspect -f '{{ index .Labels "slime.ee.sum" }}' "$base" 2>/dev/null)" != "$base_sum" ]; then
  log "building $base from $minbase"
  podman build -q --label "slime.ee.sum=$base_sum" --build-arg "MINBASE=$minbase" -t "$base" "$base_ctx" >/dev/null
fi

# --- 3. the image ----------------------------------------------------------------------------
# The inputs: the definition and its files, the base image, each collection's file checksums
# (FILES.json; the tarballs themselves carry build times), and the helm binary.
sum=$( (cd "$stage" && cat execution-environment.yml requirements.txt bindep.txt ee/collections.yml ee/bin/helm
        for t in ee/collections/*.tar.gz; do tar -xOzf "$t" MANIFEST.json FILES.json; done
        podman image inspect -f '{{.Id}}' "$base") | sha256sum | cut -c1-16)
stamp=$cache/ee/image.sum
if podman image exists "$image" && [ "$(cat "$stamp" 2>/dev/null)" = "$sum $(podman image inspect -f '{{.Id}}' "$image")" ]; then
  log "$image is up to date"
else
  log "ansible-builder build -t $image"
  (cd "$stage" && ansible-builder build -f execution-environment.yml -c context \
     --container-runtime podman -t "$image" -t localhost/slime-hybrid-ee:latest -v 2) >&2 \
    || fail "ansible-builder build failed (output above)"
  echo "$sum $(podman image inspect -f '{{.Id}}' "$image")" >"$stamp"
fi
log "$image: $(podman image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
echo "$image"
