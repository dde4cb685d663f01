#!/usr/bin/env bash
# Obtain the binaries of the Kubernetes test tier and cache them under
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin
#
#   slurm-operator           Slinky's operator (cmd/manager) at $SLINKY_VERSION, the version
#                            whose charts the tier installs
#   kube-apiserver,          k8s.io/kubernetes at the version that operator is built against
#   kube-controller-manager, (read from its go.mod), so the tier runs the Kubernetes the
#   kube-scheduler,          operator was written for
#   etcd                     go.etcd.io/etcd/server/v3 at the version that Kubernetes' go.mod
#                            names (what it is tested with; Debian's 3.4 lacks the watch
#                            progress requests kube-apiserver needs for streaming lists)
#   helm                     helm.sh/helm/v3 at the version the operator's go.mod names
#   kwok                     sigs.k8s.io/kwok at $KWOK_VERSION: Nodes and Pod status (no kubelet)
#   kubelet, kube-proxy,     the data plane of the real-Kubernetes lab (lab/kube), and its
#   kubectl                  client, from the same tree as the control plane
#   slurm-operator-webhook   the operator's admission webhook (cmd/webhook), run as a pod there
#   scc-admission            OpenShift's SCC admission decision (tests/k8s/scc-admission-bin.sh)
#
# All of them are built by ONE `go build` in one wrapper module, so they share one module
# graph and every package they have in common is compiled once.
#
# Why build: release tarballs (dl.k8s.io, get.helm.sh, GitHub releases) cannot be fetched
# here; the Go module proxy can. The operator's source comes from the proxy as a
# user would get it; where the proxy refuses it (it does on this workplace's machines) from
# the upstream tarball in $SLIME_VENDOR_DIR/src (default: ../shared/vendor beside the checkout).
# Run as root; idempotent: nothing is rebuilt while the stamp of the pinned versions matches.
set -euo pipefail

SLINKY_VERSION=${SLINKY_VERSION:-1.2.1}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
k8s=$cache/k8s
bin=$k8s/bin
build=$k8s/build
mkdir -p "$bin" "$build"

die() { echo "k8s-test-bins: ERROR: $*" >&2; exit 1; }
log() { echo "k8s-test-bins: $*"; }

BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl helm kwok
          slurm-operator slurm-operator-webhook)

# go_env, mod_field
# shellcheck source=tests/k8s/go-env.sh
. "$here/tests/k8s/go-env.sh"

# --- slurm-operator source ------------------------------------------------------------
# Prints the directory of the operator's source tree (a copy we own, outside the repository).
operator_src() {
  local dst=$build/src/slurm-operator-$SLINKY_VERSION dir tarball
  if [ -f "$dst/go.mod" ]; then echo "$dst"; return; fi
  mkdir -p "$build/src"
  dir=$(mod_field "github.com/SlinkyProject/slurm-operator@v$SLINKY_VERSION" Dir)
  if [ -n "$dir" ] && [ -f "$dir/go.mod" ]; then
    log "slurm-operator v$SLINKY_VERSION source from the Go module proxy" >&2
    cp -r "$dir" "$dst.tmp" && chmod -R u+w "$dst.tmp"
  else
    tarball=$vendor/src/slurm-operator-$SLINKY_VERSION.tar.gz
    [ -f "$tarball" ] || die "the Go module proxy ($GOPROXY) refuses github.com/SlinkyProject/slurm-operator@v$SLINKY_VERSION and there is no upstream tarball at $tarball (set SLIME_VENDOR_DIR)"
    log "slurm-operator v$SLINKY_VERSION source from $tarball (the proxy refuses the module)" >&2
    rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
    tar -xzf "$tarball" -C "$dst.tmp" --strip-components=1
  fi
  [ -f "$dst.tmp/go.mod" ] || die "no go.mod in the slurm-operator source"
  mv "$dst.tmp" "$dst"
  echo "$dst"
}

# The version of module $2 that go.mod $1 requires.
required() { awk -v m="$2" '$1==m{print $2; exit} $1=="require"&&$2==m{print $3; exit}' "$1"; }

# Every binary built for this operator and kwok (the Kubernetes and helm versions come from
# the operator's go.mod, so this much is known without Go or a source tree).
all_cached() {
  local b stamp
  for b in "${BINARIES[@]}"; do
    stamp=$(cat "$bin/$b.version" 2>/dev/null) || return 1
    [ -x "$bin/$b" ] && [[ $stamp == "slurm-operator=v$SLINKY_VERSION "*" kwok=$KWOK_VERSION" ]] || return 1
  done
}

build_all() {
  if all_cached; then log "cached: $(cat "$bin/kwok.version")"; return; fi
  go_env "slurm-operator $SLINKY_VERSION and Kubernetes"
  local src k8s_version helm_version stamp dir=$build/bins
  src=$(operator_src)
  k8s_version=$(required "$src/go.mod" k8s.io/kubernetes)
  helm_version=$(required "$src/go.mod" helm.sh/helm/v3)
  if [ -z "$k8s_version" ] || [ -z "$helm_version" ]; then
    die "cannot read the k8s.io/kubernetes and helm versions from $src/go.mod"
  fi
  stamp="slurm-operator=v$SLINKY_VERSION kubernetes=$k8s_version helm=$helm_version kwok=$KWOK_VERSION"
  local b ok=1
  for b in "${BINARIES[@]}"; do
    [ -x "$bin/$b" ] && [ "$(cat "$bin/$b.version" 2>/dev/null)" = "$stamp" ] || ok=0
  done
  if [ "$ok" = 1 ]; then log "cached: $stamp"; return; fi

  mkdir -p "$dir"
  local minor_patch=${k8s_version#v1.} kmod mods etcd_version
  # k8s.io/kubernetes requires its staging modules as `k8s.io/xxx v0.0.0` and replaces them
  # with ./staging/src/k8s.io/xxx. A dependency's replace directives are ignored, so the
  # wrapper repeats them, pointing at the published v0.A.B tags.
  printf 'module slime.local/k8sbins\n\ngo 1.26\n' >"$dir/go.mod"
  kmod=$(mod_field "k8s.io/kubernetes@$k8s_version" GoMod)
  [ -f "$kmod" ] || die "cannot download k8s.io/kubernetes@$k8s_version from $GOPROXY"
  mods=$(awk '/^require[[:space:]]*\(/{r=1;next} r&&/^\)/{r=0} r&&$1~/^k8s\.io\//&&$2=="v0.0.0"{print $1}' "$kmod" | sort -u)
  [ -n "$mods" ] || die "found no staging modules in $kmod"
  etcd_version=$(required "$kmod" go.etcd.io/etcd/server/v3)
  [ -n "$etcd_version" ] || die "cannot read the etcd server version from $kmod"
  {
    printf 'module slime.local/k8sbins\n\ngo 1.26\n\nrequire (\n'
    printf '\tgithub.com/SlinkyProject/slurm-operator v%s\n' "$SLINKY_VERSION"
    printf '\tgo.etcd.io/etcd/server/v3 %s\n' "$etcd_version"
    printf '\thelm.sh/helm/v3 %s\n\tk8s.io/kubernetes %s\n\tsigs.k8s.io/kwok %s\n)\n\nreplace (\n' \
      "$helm_version" "$k8s_version" "$KWOK_VERSION"
    printf '\tgithub.com/SlinkyProject/slurm-operator => %s\n' "$src"
    for m in $mods; do printf '\t%s => %s v0.%s\n' "$m" "$m" "$minor_patch"; done
    printf ')\n'
  } >"$dir/go.mod"
  # etcd's own main (etcd's main.go at the root of its repository, a module the proxy does not
  # serve) is this one call.
  mkdir -p "$dir/cmd/etcd"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' \
    >"$dir/cmd/etcd/main.go"
  # Version stamps the way hack/lib/version.sh and helm's Makefile set them. Without them
  # kube-apiserver reports v0.0.0-master and helm assumes Kubernetes 1.20 when it has no
  # cluster; charts with kubeVersion: would then be refused.
  local minor=${minor_patch%%.*} vpkg ldf="" p
  for vpkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
  done
  ldf+=" -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in pkg/chartutil pkg/lint/rules; do
    ldf+=" -X helm.sh/helm/v3/$p.k8sVersionMajor=1 -X helm.sh/helm/v3/$p.k8sVersionMinor=$minor"
  done
  ldf+=" -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"

  log "building in one go ($stamp etcd=$etcd_version; $(echo "$mods" | wc -l) staging modules) in $dir"
  local t0=$SECONDS out=$dir/out
  rm -rf "$out" && mkdir -p "$out"
  (cd "$dir" && go build -trimpath -ldflags="-s -w$ldf" -o "$out/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl \
      helm.sh/helm/v3/cmd/helm sigs.k8s.io/kwok/cmd/kwok \
      github.com/SlinkyProject/slurm-operator/cmd/manager github.com/SlinkyProject/slurm-operator/cmd/webhook \
      ./cmd/etcd) || die "go build failed ($stamp)"
  mv -f "$out/manager" "$out/slurm-operator"
  mv -f "$out/webhook" "$out/slurm-operator-webhook"
  for b in "${BINARIES[@]}"; do
    mv -f "$out/$b" "$bin/$b"
    echo "$stamp" >"$bin/$b.version"
  done
  log "built in $((SECONDS - t0)) s"
}

# The upstream files the tier's scenarios read (the CRDs they apply, OpenShift's default
# SCCs): missing ones fail the tier now, not in the middle of a scenario.
check_vendor_files() {
  local f
  for f in openshift/securitycontextconstraints.crd.yaml openshift/default-sccs-release-4.19 \
           metal3/metal3.io_baremetalhosts.yaml; do
    [ -e "$vendor/$f" ] || die "$vendor/$f not found: the k8s and metal3 scenarios apply it (set SLIME_VENDOR_DIR to the directory that holds the upstream copies)"
  done
}

check_vendor_files
build_all
# OpenShift's SCC admission (its own code, from the vendored apiserver-library-go tree).
"$here/tests/k8s/scc-admission-bin.sh"

echo
log "binaries in $bin:"
for b in "${BINARIES[@]}" scc-admission; do
  printf '  %-24s %8s  %s\n' "$b" "$(du -hL "$bin/$b" | cut -f1)" "$(cat "$bin/$b.version")"
done
