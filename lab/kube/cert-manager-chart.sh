#!/usr/bin/env bash
# Prepare cert-manager's Helm chart for the real-Kubernetes lab (lab/kube), rendered the way its
# release does (make/manifests.mk), as the chart directory
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/charts/cert-manager-$CERT_MANAGER_VERSION
# from github.com/cert-manager/cert-manager at $CERT_MANAGER_VERSION (deploy/charts/cert-manager
# in its main module, which the Go module proxy serves). The binaries the chart's images run are
# built by tests/k8s/k8s-test-bins.sh, with the Kubernetes ones.
#
# Why: charts.jetstack.io cannot be reached here; the Go module proxy can.
# CERT_MANAGER_VERSION: tests/k8s/go-env.sh (the binaries' too).
# Run as root; idempotent: nothing is done while the chart there has the version.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
k8s=$cache/k8s
bin=$k8s/bin
charts=$k8s/charts
mkdir -p "$charts"

die() { echo "cert-manager-chart: ERROR: $*" >&2; exit 1; }
log() { echo "cert-manager-chart: $*"; }

# go_env, mod_field
# shellcheck source=SCRIPTDIR/../../tests/k8s/go-env.sh
. "$here/tests/k8s/go-env.sh"

# cm_module: prints the directory of cert-manager's main module in the module cache.
cm_module() {
  local dir
  dir=$(mod_field "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" Dir)
  if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
    die "cannot download github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION from $GOPROXY"
  fi
  echo "$dir"
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

prepare_chart
