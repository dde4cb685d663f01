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
#   coredns                  github.com/coredns/coredns at $COREDNS_VERSION: the lab's cluster
#                            DNS. v1.14.x is the series kubeadm v1.36 deploys (its CoreDNSVersion
#                            is v1.14.2); v1.14.7 is that series' newest patch the proxy serves,
#                            with only the plugins the lab's Corefile uses (COREDNS_PLUGINS)
#   cert-manager-controller, github.com/cert-manager/cert-manager at $CERT_MANAGER_VERSION, which
#   cert-manager-webhook,    the lab installs so that Slinky's operator runs with its webhook on
#   cert-manager-cainjector, (its chart: lab/kube/cert-manager-chart.sh)
#   cert-manager-startupapicheck
#   scc-admission            OpenShift's SCC admission decision (tests/k8s/scc-admission-bin.sh)
#
# All of them are built by ONE `go build` in one wrapper module, so they share one module
# graph and every package they have in common is compiled once: cert-manager and CoreDNS are
# Kubernetes clients too (client-go, apimachinery, the API types, gRPC, Prometheus), and two
# thirds of their packages are among the Kubernetes binaries' (built apart, they cost a cold
# build about 770 CPU-seconds more). In one graph every module is taken at the highest version
# one of them requires (Go's minimal version selection), as for the operator, helm and kwok
# beside Kubernetes already: e.g. CoreDNS is built against the client-go of Kubernetes v1.36,
# not v1.35's, and cert-manager against the gRPC CoreDNS requires.
#
# Why build: release tarballs (dl.k8s.io, get.helm.sh, GitHub releases, quay.io images) cannot
# be fetched here; the Go module proxy can. The operator's source comes from the proxy as a
# user would get it; where the proxy refuses it (it does on this workplace's machines) from
# the upstream tarball in $SLIME_VENDOR_DIR/src (default: ../shared/vendor beside the checkout).
# So do cert-manager's cmd/ directory (one Go module per binary, which the proxy does not serve;
# the main module comes from the proxy) and github.com/Venafi/vcert/v5 where the proxy refuses
# the version cert-manager requires; the wrapper module points at them (replace directives)
# and leaves the upstream files unchanged.
# Run as root; idempotent: nothing is rebuilt while the stamp of the pinned versions matches.
set -euo pipefail

SLINKY_VERSION=${SLINKY_VERSION:-1.2.1}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.7}

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
k8s=$cache/k8s
bin=$k8s/bin
build=$k8s/build
mkdir -p "$bin" "$build"

die() { echo "k8s-test-bins: ERROR: $*" >&2; exit 1; }
log() { echo "k8s-test-bins: $*"; }

CM_BINARIES=(controller webhook cainjector startupapicheck)
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl helm kwok
          slurm-operator slurm-operator-webhook coredns "${CM_BINARIES[@]/#/cert-manager-}")
# The commit of cert-manager's tag (the source tarballs' README names it; the proxy's .info
# does not): the binaries' `version` output carries it as their release build does.
declare -A CM_COMMITS=([v1.21.1]=24e33194fb39)

# CoreDNS with only the plugins the lab's Corefile uses, the way CoreDNS documents a build with a
# plugin set of one's own: a main package importing coremain and the plugins, whose order in the
# server comes from the module's own core/dnsserver/zdirectives.go. The default set (plugin.cfg,
# what `go install github.com/coredns/coredns@...` builds) adds the cloud DNS providers' SDKs
# (route53, azure, clouddns): 391 CPU-seconds to build alone here, this set 245.
COREDNS_PLUGINS=(cache errors forward health kubernetes ready reload)
corefile=$here/lab/kube/manifests/coredns/40-configmap.yaml

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

# --- cert-manager's binaries: their modules and vcert ------------------------------------------
# cm_cmd: prints the directory that holds cert-manager's cmd/ (one module per binary), unpacked
# from the upstream tarball once.
cm_cmd() {
  local dst=$build/src/cert-manager-cmd-$CERT_MANAGER_VERSION tarball c
  if [ -f "$dst/cmd/controller/go.mod" ]; then echo "$dst/cmd"; return; fi
  tarball=$vendor/src/cert-manager-cmd-$CERT_MANAGER_VERSION.tar.gz
  [ -f "$tarball" ] || die "no upstream tarball of cert-manager's cmd/ at $tarball (the Go module proxy does not serve cert-manager's per-binary modules; set SLIME_VENDOR_DIR)"
  log "cert-manager $CERT_MANAGER_VERSION: main module from the Go module proxy, cmd/ from $tarball" >&2
  rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
  tar -xzf "$tarball" -C "$dst.tmp" --strip-components=1 --wildcards '*/cmd/' || die "cannot unpack $tarball"
  for c in "${CM_BINARIES[@]}"; do
    [ -f "$dst.tmp/cmd/$c/go.mod" ] || die "$tarball holds no cmd/$c/go.mod"
  done
  rm -rf "$dst" && mv "$dst.tmp" "$dst"
  echo "$dst/cmd"
}

# cm_vcert: the replace directive for github.com/Venafi/vcert/v5 at the version cert-manager's
# go.mod requires when the proxy refuses it (it serves v5.12.3 here, which lacks
# pkg/venafi/ngts), the upstream tarball unpacked once; nothing when the proxy serves it.
cm_vcert() {
  local cmmod vcert vtar vdir
  cmmod=$(mod_field "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" GoMod)
  [ -f "$cmmod" ] || die "cannot download github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION from $GOPROXY"
  vcert=$(required "$cmmod" github.com/Venafi/vcert/v5)
  [ -n "$vcert" ] || die "cannot read the github.com/Venafi/vcert/v5 version from $cmmod"
  if [ -n "$(mod_field "github.com/Venafi/vcert/v5@$vcert" Dir)" ]; then
    log "vcert $vcert from the Go module proxy" >&2
    return
  fi
  vtar=$vendor/src/vcert-$vcert.tar.gz vdir=$build/src/vcert-$vcert
  [ -f "$vtar" ] || die "the Go module proxy ($GOPROXY) refuses github.com/Venafi/vcert/v5@$vcert and there is no upstream tarball at $vtar (set SLIME_VENDOR_DIR)"
  log "vcert $vcert from $vtar (the proxy refuses the module)" >&2
  if [ ! -f "$vdir/go.mod" ]; then
    rm -rf "$vdir.tmp" && mkdir -p "$vdir.tmp"
    tar -xzf "$vtar" -C "$vdir.tmp" --strip-components=1 || die "cannot unpack $vtar"
    [ -f "$vdir.tmp/go.mod" ] || die "no go.mod in $vtar"
    mv "$vdir.tmp" "$vdir"
  fi
  printf '\tgithub.com/Venafi/vcert/v5 => %s\n' "$vdir"
}

# The end of the stamp: the versions this script pins (the Kubernetes and helm versions come
# from the operator's go.mod).
tail_stamp() {
  echo "kwok=$KWOK_VERSION coredns=$COREDNS_VERSION coredns-plugins=$(IFS=,; echo "${COREDNS_PLUGINS[*]}") cert-manager=$CERT_MANAGER_VERSION"
}

# Every plugin the Corefile names (the first word of each line of a server block) is built in.
check_coredns_plugins() {
  local used p
  used=$(awk '/^    [^ ]+ .*\{$/{inside=1; next} inside && /^    \}/{inside=0} inside && /^        [a-z]/{print $1}' "$corefile" | sort -u)
  [ -n "$used" ] || die "found no plugins in $corefile"
  for p in $used; do
    [[ " ${COREDNS_PLUGINS[*]} " == *" $p "* ]] || die "$corefile uses CoreDNS plugin $p, which COREDNS_PLUGINS does not build"
  done
}

# Every binary built for this operator and the pinned versions (so much is known without Go or
# a source tree).
all_cached() {
  local b stamp pinned
  pinned=$(tail_stamp)
  for b in "${BINARIES[@]}"; do
    stamp=$(cat "$bin/$b.version" 2>/dev/null) || return 1
    [ -x "$bin/$b" ] && [[ $stamp == "slurm-operator=v$SLINKY_VERSION "*" $pinned" ]] || return 1
  done
}

build_all() {
  if all_cached; then log "cached: $(cat "$bin/kwok.version")"; return; fi
  go_env "slurm-operator $SLINKY_VERSION and Kubernetes"
  local src k8s_version helm_version stamp dir=$build/bins cmd vcert_replace
  check_coredns_plugins
  src=$(operator_src)
  cmd=$(cm_cmd)
  vcert_replace=$(cm_vcert)
  k8s_version=$(required "$src/go.mod" k8s.io/kubernetes)
  helm_version=$(required "$src/go.mod" helm.sh/helm/v3)
  if [ -z "$k8s_version" ] || [ -z "$helm_version" ]; then
    die "cannot read the k8s.io/kubernetes and helm versions from $src/go.mod"
  fi
  stamp="slurm-operator=v$SLINKY_VERSION kubernetes=$k8s_version helm=$helm_version $(tail_stamp)"
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
    printf '\thelm.sh/helm/v3 %s\n\tk8s.io/kubernetes %s\n\tsigs.k8s.io/kwok %s\n' \
      "$helm_version" "$k8s_version" "$KWOK_VERSION"
    printf '\tgithub.com/coredns/coredns %s\n\tgithub.com/cert-manager/cert-manager %s\n' \
      "$COREDNS_VERSION" "$CERT_MANAGER_VERSION"
    for c in "${CM_BINARIES[@]}"; do printf '\tgithub.com/cert-manager/cert-manager/%s-binary v0.0.0\n' "$c"; done
    # golang.org/x/oauth2/google (cert-manager's Cloud DNS solver) imports
    # cloud.google.com/go/compute/metadata, a module of its own; old gRPC releases deep in the
    # joined graph require the monolithic cloud.google.com/go v0.26.0, which held that package
    # too ("ambiguous import"). Its releases since the split no longer do.
    printf '\tcloud.google.com/go v0.123.0\n'
    printf ')\n\nreplace (\n'
    printf '\tgithub.com/SlinkyProject/slurm-operator => %s\n' "$src"
    for m in $mods; do printf '\t%s => %s v0.%s\n' "$m" "$m" "$minor_patch"; done
    for c in "${CM_BINARIES[@]}"; do printf '\tgithub.com/cert-manager/cert-manager/%s-binary => %s/%s\n' "$c" "$cmd" "$c"; done
    [ -z "$vcert_replace" ] || printf '%s\n' "$vcert_replace"
    printf ')\n'
  } >"$dir/go.mod"
  # etcd's own main (etcd's main.go at the root of its repository, a module the proxy does not
  # serve) is this one call.
  mkdir -p "$dir/cmd/etcd"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' \
    >"$dir/cmd/etcd/main.go"
  mkdir -p "$dir/cmd/coredns"
  {
    printf 'package main\n\nimport (\n'
    for p in "${COREDNS_PLUGINS[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
    printf '\n\t"github.com/coredns/coredns/coremain"\n)\n\nfunc main() { coremain.Run() }\n'
  } >"$dir/cmd/coredns/main.go"
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
  # cert-manager's, as make/00_mod.mk sets them (GOLDFLAGS).
  ldf+=" -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$CERT_MANAGER_VERSION"
  ldf+=" -X github.com/cert-manager/cert-manager/pkg/util.AppGitCommit=${CM_COMMITS[$CERT_MANAGER_VERSION]:-}"

  log "building in one go ($stamp etcd=$etcd_version; $(echo "$mods" | wc -l) staging modules) in $dir"
  local t0=$SECONDS out=$dir/out cm_pkgs=() c
  for c in "${CM_BINARIES[@]}"; do cm_pkgs+=("github.com/cert-manager/cert-manager/$c-binary"); done
  rm -rf "$out" && mkdir -p "$out"
  (cd "$dir" && go build -trimpath -ldflags="-s -w$ldf" -o "$out/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl \
      helm.sh/helm/v3/cmd/helm sigs.k8s.io/kwok/cmd/kwok \
      github.com/SlinkyProject/slurm-operator/cmd/manager github.com/SlinkyProject/slurm-operator/cmd/webhook \
      ./cmd/etcd ./cmd/coredns "${cm_pkgs[@]}") || die "go build failed ($stamp)"
  mv -f "$out/manager" "$out/slurm-operator"
  mv -f "$out/webhook" "$out/slurm-operator-webhook"
  for c in "${CM_BINARIES[@]}"; do mv -f "$out/$c-binary" "$out/cert-manager-$c"; done
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
