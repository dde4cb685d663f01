#!/usr/bin/env bash
# Build Metal3's baremetal-operator for the Metal3 test tier and cache it under
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin/baremetal-operator (+ .version stamp)
# and its CRDs (config/base/crds/bases of the same tag) under .../k8s/bmo-crds/.
#
# baremetal-operator's go.mod replaces ./apis and ./pkg/hardwareutils with its nested modules,
# so `go install github.com/metal3-io/baremetal-operator@v$BMO_VERSION` is refused by design; it
# is built inside its own tree as its Makefile does (go build -o bin/baremetal-operator main.go).
# The source comes from the Go module proxy as a user would get it; the proxy reachable here
# refuses it (and the ironic-standalone-operator/api module it requires), so the fallback is the
# upstream tarballs in $SLIME_VENDOR_DIR/src (default ../shared/vendor beside the checkout),
# unpacked into the cache, never into the repository. A Go workspace puts the api module in
# place and leaves the upstream files as they are.
# Run as root; idempotent: nothing is rebuilt while the stamp of the pinned versions matches.
set -euo pipefail

BMO_VERSION=${BMO_VERSION:-0.13.2}
ISO_API_VERSION=${ISO_API_VERSION:-0.8.2}   # the ironic-standalone-operator/api v$BMO_VERSION requires

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
k8s=$cache/k8s
bin=$k8s/bin
src=$k8s/build/src
tree=$src/baremetal-operator-$BMO_VERSION
api=$src/ironic-standalone-operator-api-$ISO_API_VERSION
crds=$k8s/bmo-crds
stamp="baremetal-operator=v$BMO_VERSION ironic-standalone-operator-api=v$ISO_API_VERSION"

die() { echo "bmo-bin: ERROR: $*" >&2; exit 1; }
log() { echo "bmo-bin: $*"; }

# one build at a time (the Metal3 tier and the kube-faults lane may both ask at once): the second waits and
# finds it cached
mkdir -p "$k8s"
exec 9>"$k8s/.bmo-bin.lock"
flock 9
if [ -x "$bin/baremetal-operator" ] && [ "$(cat "$bin/baremetal-operator.version" 2>/dev/null)" = "$stamp" ] \
    && [ -f "$crds/.version" ] && [ "$(cat "$crds/.version")" = "$stamp" ]; then
  log "cached: $stamp"
  exit 0
fi

# shellcheck source=tests/k8s/go-env.sh
. "$here/tests/k8s/go-env.sh"
go_env "baremetal-operator v$BMO_VERSION"
mkdir -p "$bin" "$src"

# unpack DIR TARBALL STRIP: the tarball's tree as DIR (once; a marker says it is complete).
unpack() {
  local dir=$1 tarball=$2 strip=$3
  [ -f "$dir/.slime-unpacked" ] && return 0
  [ -f "$tarball" ] || die "$tarball not found and the Go module proxy refuses the module; set SLIME_VENDOR_DIR to the directory whose src/ holds it"
  log "unpacking $tarball"
  rm -rf "$dir" "$dir.tmp" && mkdir -p "$dir.tmp"
  tar -xzf "$tarball" -C "$dir.tmp" --strip-components="$strip"
  [ -f "$dir.tmp/go.mod" ] || die "no go.mod in $tarball"
  mv "$dir.tmp" "$dir" && touch "$dir/.slime-unpacked"
}

# mod_dir MOD@VER: the directory of the module as the Go module proxy serves it, or nothing.
mod_dir() {
  local dir
  dir=$(mod_field "$1" Dir)
  [ -n "$dir" ] && [ -f "$dir/go.mod" ] && echo "$dir"
}

# The operator's tree from the proxy when it serves it (a user's machine): the main module's zip
# leaves out the nested modules apis/ and pkg/hardwareutils/, so they are fetched at the same
# version and put back where its go.mod's replace directives expect them.
bmo_from_proxy() {
  [ -f "$tree/.slime-unpacked" ] && return 0
  local m main apis hw
  m=github.com/metal3-io/baremetal-operator
  main=$(mod_dir "$m@v$BMO_VERSION") && apis=$(mod_dir "$m/apis@v$BMO_VERSION") \
    && hw=$(mod_dir "$m/pkg/hardwareutils@v$BMO_VERSION") || return 1
  log "$m v$BMO_VERSION (with apis/ and pkg/hardwareutils/) from the Go module proxy"
  rm -rf "$tree" && cp -r "$main" "$tree" && chmod -R u+w "$tree"
  rm -rf "$tree/apis" "$tree/pkg/hardwareutils"
  cp -r "$apis" "$tree/apis" && cp -r "$hw" "$tree/pkg/hardwareutils" && chmod -R u+w "$tree"
  touch "$tree/.slime-unpacked"
}

api_from_proxy() {
  [ -f "$api/.slime-unpacked" ] && return 0
  local dir
  dir=$(mod_dir "github.com/metal3-io/ironic-standalone-operator/api@v$ISO_API_VERSION") || return 1
  log "ironic-standalone-operator/api v$ISO_API_VERSION from the Go module proxy"
  rm -rf "$api" && cp -r "$dir" "$api" && chmod -R u+w "$api" && touch "$api/.slime-unpacked"
}

bmo_from_proxy || unpack "$tree" "$vendor/src/baremetal-operator-$BMO_VERSION.tar.gz" 1
api_from_proxy || unpack "$api" "$vendor/src/ironic-standalone-operator-api-$ISO_API_VERSION.tar.gz" 1
grep -q "github.com/metal3-io/ironic-standalone-operator/api v$ISO_API_VERSION" "$tree/go.mod" \
  || die "$tree/go.mod does not require ironic-standalone-operator/api v$ISO_API_VERSION; set ISO_API_VERSION"

if [ ! -f "$tree/go.work" ]; then
  (cd "$tree" && go work init . ./apis ./pkg/hardwareutils \
     && go work edit -replace "github.com/metal3-io/ironic-standalone-operator/api=$api") \
    || die "go work init failed in $tree"
fi

log "building baremetal-operator v$BMO_VERSION in $tree"
start=$(date +%s)
(cd "$tree" && GOFLAGS="-buildvcs=false $GO_LEAN" go build -trimpath -ldflags="-s -w" -o "$bin/baremetal-operator.new" main.go) \
  || die "go build failed in $tree"
mv "$bin/baremetal-operator.new" "$bin/baremetal-operator"
echo "$stamp" >"$bin/baremetal-operator.version"

rm -rf "$crds" && mkdir -p "$crds"
cp "$tree"/config/base/crds/bases/*.yaml "$crds/"
echo "$stamp" >"$crds/.version"
log "built $bin/baremetal-operator in $(( $(date +%s) - start )) s; CRDs in $crds ($stamp)"
