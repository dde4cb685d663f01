#!/usr/bin/env bash
# Build the test helper `scc-admission` (tests/k8s/sccadmit/*.go): OpenShift's own SCC
# admission decision for the pods of a namespace of a test API server, and (`scc-admission
# serve`, serve.go) the same admission as a webhook of a real API server (lab/kube/openshift.sh).
# Installs
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin/scc-admission (+ .version stamp)
#
# The program links openshift/apiserver-library-go (release-4.19), which the Go module proxy
# reachable here refuses. It is built inside that project's own tree, from the upstream
# tarball WITH its vendor/ directory ($SLIME_VENDOR_DIR/src, default ../shared/vendor beside
# the checkout), with -mod=vendor: no network at all. The tree is unpacked once into the
# cache (never into the repository); our Go files are copied into cmd/slime-scc-admission/.
# Idempotent: nothing is rebuilt while the stamp (hash of the Go files + tarball name) matches.
set -euo pipefail

TARBALL_NAME=apiserver-library-go-release-4.19.tar.gz
TREE_NAME=apiserver-library-go-release-4.19

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
k8s=$cache/k8s
bin=$k8s/bin
src=$k8s/build/src
tree=$src/$TREE_NAME
srcdir=$here/tests/k8s/sccadmit
tarball=$vendor/src/$TARBALL_NAME

die() { echo "scc-admission-bin: ERROR: $*" >&2; exit 1; }
log() { echo "scc-admission-bin: $*"; }

[ -f "$srcdir/main.go" ] || die "$srcdir/main.go missing"
stamp="$(cat "$srcdir"/*.go | sha256sum | cut -d' ' -f1) $TARBALL_NAME"
if [ -x "$bin/scc-admission" ] && [ "$(cat "$bin/scc-admission.version" 2>/dev/null)" = "$stamp" ]; then
  log "cached: $bin/scc-admission ($stamp)"
  exit 0
fi

# shellcheck source=tests/k8s/go-env.sh
. "$here/tests/k8s/go-env.sh"
go_env "the SCC admission helper"
mkdir -p "$bin" "$src"

# --- the upstream tree, unpacked once ----------------------------------------------------
if [ ! -f "$tree/.slime-unpacked" ]; then
  [ -f "$tarball" ] || die "$tarball not found: it holds openshift/apiserver-library-go (branch release-4.19) with its vendor/ tree, which the Go module proxy here refuses. Put it there (git archive of that branch after 'go mod vendor') or set SLIME_VENDOR_DIR to the directory whose src/ holds it."
  log "unpacking $tarball into $src"
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  tar -xzf "$tarball" -C "$tree.tmp"
  [ -f "$tree.tmp/$TREE_NAME/vendor/modules.txt" ] || die "$tarball has no $TREE_NAME/vendor/modules.txt: not the expected tarball"
  mv "$tree.tmp/$TREE_NAME" "$tree"
  rmdir "$tree.tmp"
  touch "$tree/.slime-unpacked"
fi

# --- build ---------------------------------------------------------------------------------
rm -rf "$tree/cmd/slime-scc-admission"
mkdir -p "$tree/cmd/slime-scc-admission"
cp "$srcdir"/*.go "$tree/cmd/slime-scc-admission/"
# The project's own vendor/ tree: no module download at all.
export GOFLAGS="-mod=vendor -buildvcs=false $GO_LEAN" GOPROXY=off
log "building in $tree (go build -mod=vendor ./cmd/slime-scc-admission)"
start=$(date +%s)
(cd "$tree" && go build -trimpath -ldflags="-s -w" -o "$bin/scc-admission.new" ./cmd/slime-scc-admission) \
  || die "go build failed in $tree"
mv "$bin/scc-admission.new" "$bin/scc-admission"
echo "$stamp" >"$bin/scc-admission.version"
log "built $bin/scc-admission in $(( $(date +%s) - start )) s ($stamp)"
