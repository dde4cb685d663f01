#!/usr/bin/env bash
# Obtain the cluster add-ons of the real-Kubernetes lab (lab/kube) and cache them under
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin
#
#   coredns                      github.com/coredns/coredns at $COREDNS_VERSION: the cluster
#                                DNS. v1.14.x is the series kubeadm v1.36 deploys (its
#                                CoreDNSVersion is v1.14.2); v1.14.7 is that series' newest
#                                patch the proxy serves (go 1.25.0, no replace directives), with
#                                the plugins the lab's Corefile uses
#   cert-manager-controller,     github.com/cert-manager/cert-manager at $CERT_MANAGER_VERSION
#   cert-manager-webhook,
#   cert-manager-cainjector,
#   cert-manager-startupapicheck
#
# and cert-manager's Helm chart, rendered the way its release does (make/manifests.mk), as the
# chart directory
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/charts/cert-manager-$CERT_MANAGER_VERSION
#
# Why build: release downloads (GitHub releases, quay.io images, charts.jetstack.io) cannot be
# fetched here; the Go module proxy can. cert-manager's main module (with its chart under
# deploy/charts/cert-manager) comes from the proxy; its cmd/ directory (one Go module per binary,
# each with `replace github.com/cert-manager/cert-manager => ../../`) is no module the proxy
# serves, so it comes from the upstream tarball in $SLIME_VENDOR_DIR/src (default:
# ../shared/vendor beside the checkout), as does github.com/Venafi/vcert/v5 where the proxy
# refuses the version cert-manager requires. A Go workspace puts them together and leaves the
# upstream files unchanged (the recipe in that directory's README.md).
# Run as root; idempotent: nothing is rebuilt while the version stamps match.
set -euo pipefail

COREDNS_VERSION=${COREDNS_VERSION:-v1.14.7}
CERT_MANAGER_VERSION=${CERT_MANAGER_VERSION:-v1.21.1}

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
k8s=$cache/k8s
bin=$k8s/bin
build=$k8s/build
charts=$k8s/charts
mkdir -p "$bin" "$build" "$charts"

die() { echo "kube-bins: ERROR: $*" >&2; exit 1; }
log() { echo "kube-bins: $*"; }

CM_BINARIES=(controller webhook cainjector startupapicheck)
# The commit of cert-manager's tag (the source tarballs' README names it; the proxy's .info
# does not): the binaries' `version` output carries it as their release build does.
declare -A CM_COMMITS=([v1.21.1]=24e33194fb39)

# go_env, mod_field
# shellcheck source=SCRIPTDIR/../../tests/k8s/go-env.sh
. "$here/tests/k8s/go-env.sh"

# cached NAME STAMP: the binary NAME is in $bin with the version stamp STAMP.
cached() { [ -x "$bin/$1" ] && [ "$(cat "$bin/$1.version" 2>/dev/null)" = "$2" ]; }

# --- CoreDNS --------------------------------------------------------------------------
# Only the plugins the lab's Corefile (manifests/coredns/40-configmap.yaml) uses, the way CoreDNS
# documents a build with a plugin set of one's own: a main package importing coremain and the
# plugins, whose order in the server comes from the module's own core/dnsserver/zdirectives.go.
# The default set (plugin.cfg, what `go install github.com/coredns/coredns@...` builds) adds the
# cloud DNS providers' SDKs (route53, azure, clouddns): 391 CPU-seconds to build here, this 245.
COREDNS_PLUGINS=(cache errors forward health kubernetes ready reload)
corefile=$here/lab/kube/manifests/coredns/40-configmap.yaml

build_coredns() {
  local stamp dir out p used t0=$SECONDS
  stamp="coredns=$COREDNS_VERSION plugins=$(IFS=,; echo "${COREDNS_PLUGINS[*]}")"
  # Every plugin the Corefile names (the first word of each line of a server block) is built in.
  used=$(awk '/^    [^ ]+ .*\{$/{inside=1; next} inside && /^    \}/{inside=0} inside && /^        [a-z]/{print $1}' "$corefile" | sort -u)
  [ -n "$used" ] || die "found no plugins in $corefile"
  for p in $used; do
    [[ " ${COREDNS_PLUGINS[*]} " == *" $p "* ]] || die "$corefile uses CoreDNS plugin $p, which COREDNS_PLUGINS does not build"
  done
  if cached coredns "$stamp"; then log "cached: $stamp"; return; fi
  go_env "CoreDNS $COREDNS_VERSION"
  dir=$build/coredns-$COREDNS_VERSION out=$build/coredns-$COREDNS_VERSION/coredns
  rm -rf "$dir" && mkdir -p "$dir"
  printf 'module slime.local/coredns\n\ngo 1.26\n\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" >"$dir/go.mod"
  {
    printf 'package main\n\nimport (\n'
    for p in "${COREDNS_PLUGINS[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
    printf '\n\t"github.com/coredns/coredns/coremain"\n)\n\nfunc main() { coremain.Run() }\n'
  } >"$dir/main.go"
  log "building CoreDNS $COREDNS_VERSION with ${COREDNS_PLUGINS[*]} in $dir"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$out" .) \
    || { rm -rf "$dir"; die "go build of CoreDNS $COREDNS_VERSION failed (the Go module proxy $GOPROXY must serve it and its dependencies)"; }
  mv -f "$out" "$bin/coredns"
  echo "$stamp" >"$bin/coredns.version"
  rm -rf "$dir"
  log "built CoreDNS in $((SECONDS - t0)) s"
}

# --- cert-manager ---------------------------------------------------------------------
# The version of module $2 that go.mod $1 requires.
required() { awk -v m="$2" '$1==m{print $2; exit} $1=="require"&&$2==m{print $3; exit}' "$1"; }

# cm_module: prints the directory of cert-manager's main module in the module cache.
cm_module() {
  local dir
  dir=$(mod_field "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" Dir)
  if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
    die "cannot download github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION from $GOPROXY"
  fi
  echo "$dir"
}

# cm_tree: prints the build tree: a writable copy of the main module with the upstream cmd/
# unpacked inside it, and a go.work that uses the root and the four binaries' modules and
# replaces vcert where the proxy refuses the version cert-manager requires.
cm_tree() {
  local dst=$build/cert-manager-$CERT_MANAGER_VERSION src tarball vcert vtar vdir
  if [ -f "$dst/go.work" ]; then echo "$dst"; return; fi
  src=$(cm_module) || exit 1   # (a die in $(...) ends only that subshell)
  tarball=$vendor/src/cert-manager-cmd-$CERT_MANAGER_VERSION.tar.gz
  [ -f "$tarball" ] || die "no upstream tarball of cert-manager's cmd/ at $tarball (the Go module proxy does not serve cert-manager's per-binary modules; set SLIME_VENDOR_DIR)"
  log "cert-manager $CERT_MANAGER_VERSION: main module from the Go module proxy, cmd/ from $tarball" >&2
  rm -rf "$dst.tmp"
  { cp -r "$src" "$dst.tmp" && chmod -R u+w "$dst.tmp"; } || die "cannot copy $src to $dst.tmp"
  tar -xzf "$tarball" -C "$dst.tmp" --strip-components=1 --wildcards '*/cmd/' \
    || die "cannot unpack $tarball"
  local c
  for c in "${CM_BINARIES[@]}"; do
    [ -f "$dst.tmp/cmd/$c/go.mod" ] || die "$tarball holds no cmd/$c/go.mod"
  done
  (cd "$dst.tmp" && GOFLAGS=-buildvcs=false go work init . ./cmd/controller ./cmd/webhook ./cmd/cainjector ./cmd/startupapicheck) \
    || die "go work init failed in $dst.tmp"
  vcert=$(required "$dst.tmp/go.mod" github.com/Venafi/vcert/v5)
  [ -n "$vcert" ] || die "cannot read the github.com/Venafi/vcert/v5 version from $src/go.mod"
  if [ -n "$(mod_field "github.com/Venafi/vcert/v5@$vcert" Dir)" ]; then
    log "vcert $vcert from the Go module proxy" >&2
  else
    # The proxy here refuses vcert v5.13.x (it serves v5.12.3, which lacks pkg/venafi/ngts).
    vtar=$vendor/src/vcert-$vcert.tar.gz vdir=$build/vcert-$vcert
    [ -f "$vtar" ] || die "the Go module proxy ($GOPROXY) refuses github.com/Venafi/vcert/v5@$vcert and there is no upstream tarball at $vtar (set SLIME_VENDOR_DIR)"
    log "vcert $vcert from $vtar (the proxy refuses the module)" >&2
    if [ ! -f "$vdir/go.mod" ]; then
      rm -rf "$vdir.tmp" && mkdir -p "$vdir.tmp"
      tar -xzf "$vtar" -C "$vdir.tmp" --strip-components=1 || die "cannot unpack $vtar"
      [ -f "$vdir.tmp/go.mod" ] || die "no go.mod in $vtar"
      mv "$vdir.tmp" "$vdir"
    fi
    (cd "$dst.tmp" && go work edit -replace "github.com/Venafi/vcert/v5=$vdir") \
      || die "go work edit failed in $dst.tmp"
  fi
  mv "$dst.tmp" "$dst"
  echo "$dst"
}

build_cert_manager() {
  local stamp="cert-manager=$CERT_MANAGER_VERSION" c ok=1 t0=$SECONDS
  for c in "${CM_BINARIES[@]}"; do cached "cert-manager-$c" "$stamp" || ok=0; done
  if [ "$ok" = 1 ]; then log "cached: $stamp"; return; fi
  go_env "cert-manager $CERT_MANAGER_VERSION"
  local dir out pkgs=() ldf
  dir=$(cm_tree) || exit 1
  out=$dir/_out
  for c in "${CM_BINARIES[@]}"; do pkgs+=("github.com/cert-manager/cert-manager/$c-binary"); done
  # Version stamps as make/00_mod.mk sets them (GOLDFLAGS).
  ldf="-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$CERT_MANAGER_VERSION"
  ldf+=" -X github.com/cert-manager/cert-manager/pkg/util.AppGitCommit=${CM_COMMITS[$CERT_MANAGER_VERSION]:-}"
  log "building cert-manager $CERT_MANAGER_VERSION (${CM_BINARIES[*]}) in $dir"
  rm -rf "$out" && mkdir -p "$out"
  # Workspace mode refuses -mod=mod (go_env's GOFLAGS); GOWORK names this tree's go.work.
  (cd "$dir" && GOWORK=$dir/go.work GOFLAGS=-buildvcs=false \
      go build -trimpath -ldflags="$ldf" -o "$out/" "${pkgs[@]}") \
    || die "go build of cert-manager $CERT_MANAGER_VERSION failed (in $dir)"
  for c in "${CM_BINARIES[@]}"; do
    [ -x "$out/$c-binary" ] || die "go build left no $c-binary in $out"
    mv -f "$out/$c-binary" "$bin/cert-manager-$c"
    echo "$stamp" >"$bin/cert-manager-$c.version"
  done
  log "built cert-manager in $((SECONDS - t0)) s"
}

# --- cert-manager's Helm chart ----------------------------------------------------------
# What the release does (make/manifests.mk, target $(bin_dir)/cert-manager-$(VERSION).tgz):
# copy templates/*.yaml, _helpers.tpl, NOTES.txt, values.yaml, values.schema.json and
# .helmignore unchanged; README.md from README.template.md with {{RELEASE_VERSION}} replaced;
# Chart.yaml with version and appVersion (v0.0.0 in the source) set to the release and the
# annotations artifacthub.io/signKey (signkey_annotation.txt) and artifacthub.io/prerelease
# added (yq there, sed here). The chart's tests/, values.linter.exceptions and
# signkey_annotation.txt are not part of it. The image tags default to .Chart.AppVersion, so
# they become the release too. The CRD templates are already generated in the module.
# chart_ok DIR: DIR is a chart with version and appVersion $CERT_MANAGER_VERSION.
chart_ok() {
  grep -qx "version: $CERT_MANAGER_VERSION" "$1/Chart.yaml" 2>/dev/null \
    && grep -qx "appVersion: $CERT_MANAGER_VERSION" "$1/Chart.yaml"
}

prepare_chart() {
  local dst=$charts/cert-manager-$CERT_MANAGER_VERSION
  if chart_ok "$dst"; then log "cached: chart $dst"; return; fi
  go_env "cert-manager $CERT_MANAGER_VERSION's chart"
  local src tmp=$dst.tmp f prerelease=false
  src=$(cm_module) || exit 1
  src=$src/deploy/charts/cert-manager
  [ -f "$src/Chart.yaml" ] || die "no chart at deploy/charts/cert-manager in cert-manager $CERT_MANAGER_VERSION"
  [[ $CERT_MANAGER_VERSION == *-* ]] && prerelease=true
  rm -rf "$tmp" && mkdir -p "$tmp/templates"
  cp "$src"/templates/*.yaml "$src/templates/_helpers.tpl" "$src/templates/NOTES.txt" "$tmp/templates/"
  cp "$src/values.yaml" "$src/values.schema.json" "$src/.helmignore" "$tmp/"
  sed -e "s:{{RELEASE_VERSION}}:$CERT_MANAGER_VERSION:g" "$src/README.template.md" >"$tmp/README.md"
  {
    sed -e "s/^version: .*/version: $CERT_MANAGER_VERSION/" \
        -e "s/^appVersion: .*/appVersion: $CERT_MANAGER_VERSION/" \
        -e '/^annotations:/q' "$src/Chart.yaml"
    echo "  artifacthub.io/signKey: |"
    while IFS= read -r f; do echo "    $f"; done <"$src/signkey_annotation.txt"
    echo "  artifacthub.io/prerelease: \"$prerelease\""
    sed -e "s/^version: .*/version: $CERT_MANAGER_VERSION/" \
        -e "s/^appVersion: .*/appVersion: $CERT_MANAGER_VERSION/" \
        -e '1,/^annotations:/d' "$src/Chart.yaml"
  } >"$tmp/Chart.yaml"
  chmod -R u+w "$tmp"
  chart_ok "$tmp" || die "could not set version and appVersion in $tmp/Chart.yaml"
  if [ -x "$bin/helm" ]; then
    "$bin/helm" template cert-manager "$tmp" --namespace cert-manager --set crds.enabled=true >/dev/null \
      || die "helm template of the prepared chart $tmp failed"
  fi
  rm -rf "$dst" && mv "$tmp" "$dst"
  log "prepared chart $dst"
}

build_coredns
build_cert_manager
prepare_chart

echo
log "binaries in $bin:"
for b in coredns "${CM_BINARIES[@]/#/cert-manager-}"; do
  printf '  %-30s %8s  %s\n' "$b" "$(du -hL "$bin/$b" | cut -f1)" "$(cat "$bin/$b.version")"
done
log "chart: $charts/cert-manager-$CERT_MANAGER_VERSION"
