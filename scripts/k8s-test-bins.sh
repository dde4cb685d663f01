#!/usr/bin/env bash
# Obtain the binaries of the envtest-style Kubernetes test tier and cache them under
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin
# etcd           from Debian (package etcd-server)
# kube-apiserver built from the k8s.io/kubernetes Go module at $K8S_VERSION
# helm           built from the helm.sh/helm/v3 Go module at $HELM_VERSION
#
# Why build: release tarballs (dl.k8s.io, get.helm.sh, GitHub releases) cannot be
# fetched here; the Go module proxy and Debian can. Run as root; idempotent: a binary
# whose .version stamp matches the pinned version is not rebuilt.
set -euo pipefail

# Pinned versions. kube-apiserver 1.34 and helm 3.19 (which is built against
# client-go 0.34) belong together; override both through the environment if needed.
K8S_VERSION=${K8S_VERSION:-v1.34.4}
HELM_VERSION=${HELM_VERSION:-v3.19.5}

cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
k8s=$cache/k8s
bin=$k8s/bin
build=$k8s/build
mkdir -p "$bin" "$build"

die() { echo "k8s-test-bins: ERROR: $*" >&2; exit 1; }
log() { echo "k8s-test-bins: $*"; }

# True when $1 exists and its stamp says $2.
cached() { [ -x "$bin/$1" ] && [ "$(cat "$bin/$1.version" 2>/dev/null)" = "$2" ]; }

# --- Go environment ---------------------------------------------------------------
# Build and module caches live in our cache so reruns (and the other binary) reuse them.
# -mod=mod lets `go build` fill in go.sum and the indirect requirements of our wrapper
# modules by itself; GOTOOLCHAIN=local keeps go from trying to download a toolchain.
go_env() {
  command -v go >/dev/null || die "go is not installed (need Go >= 1.24 to build kube-apiserver and helm)"
  export GOCACHE=$k8s/go/cache GOMODCACHE=$k8s/go/mod
  export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
  export GOPROXY=${GOPROXY:-https://proxy.golang.org,direct}
}

# Print the path of the go.mod of module@version $1 (downloading the module into
# GOMODCACHE, which the build needs anyway); die with go's own error otherwise.
# Run in a directory with a go.mod (GOFLAGS=-mod=mod is refused outside a module).
modfile() {
  local json path
  json=$(go mod download -json "$1" 2>&1) || die "cannot download $1 from $GOPROXY: $(echo "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p')"
  path=$(echo "$json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  [ -f "$path" ] || die "no go.mod for $1"
  echo "$path"
}

# --- etcd ---------------------------------------------------------------------------
get_etcd() {
  if ! command -v etcd >/dev/null && [ ! -x /usr/bin/etcd ]; then
    log "apt-get install etcd-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    # --no-install-recommends: we only want the binary, not a started service.
    apt-get install -y -qq --no-install-recommends etcd-server >/dev/null \
      || die "cannot install Debian package etcd-server"
  fi
  local etcd_path ver
  # Not 'command -v': PATH may hold our own bin dir. grep reads all of dpkg's output (no -m1:
  # an early exit would SIGPIPE dpkg and, with pipefail, fail the pipeline).
  etcd_path=$(dpkg -L etcd-server 2>/dev/null | grep '/bin/etcd$' || true)
  etcd_path=${etcd_path%%$'\n'*}
  [ -n "$etcd_path" ] || etcd_path=/usr/bin/etcd
  # The Debian package may start an etcd of its own on 2379 where an init system runs;
  # ours uses other ports (see k8s-test-cluster.sh), so it does not matter.
  ver=$(dpkg-query -W -f='${Version}' etcd-server 2>/dev/null || "$etcd_path" --version | head -1)
  ln -sfn "$etcd_path" "$bin/etcd"
  echo "$ver" >"$bin/etcd.version"
  "$bin/etcd" --version >/dev/null 2>&1 || die "$bin/etcd does not run"
}

# --- kube-apiserver -----------------------------------------------------------------
get_kube_apiserver() {
  if cached kube-apiserver "$K8S_VERSION"; then
    log "kube-apiserver $K8S_VERSION cached"; return
  fi
  go_env
  local minor_patch=${K8S_VERSION#v1.}    # 34.4
  local staging_ver=v0.$minor_patch        # staging modules are tagged v0.34.4 for v1.34.4
  local dir=$build/kube-apiserver-$K8S_VERSION
  mkdir -p "$dir"
  # A bare go.mod first, to fetch k8s.io/kubernetes's own go.mod.
  printf 'module slime.local/k8sbins\n\ngo 1.24.0\n' >"$dir/go.mod"
  local kmod
  kmod=$(cd "$dir" && modfile "k8s.io/kubernetes@$K8S_VERSION")

  # k8s.io/kubernetes requires its staging modules as `k8s.io/xxx v0.0.0` and replaces
  # them with ./staging/src/k8s.io/xxx. Replace directives of a dependency are ignored,
  # so we must repeat them, pointing at the published v0.A.B tags instead.
  local mods
  mods=$(awk '/^require[[:space:]]*\(/{r=1;next} r&&/^\)/{r=0} r&&$1~/^k8s\.io\//&&$2=="v0.0.0"{print $1}' "$kmod" | sort -u)
  [ -n "$mods" ] || die "found no staging modules in $kmod"
  {
    printf 'module slime.local/k8sbins\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    for m in $mods; do printf '\t%s => %s %s\n' "$m" "$m" "$staging_ver"; done
    printf ')\n'
  } >"$dir/go.mod"
  log "building kube-apiserver $K8S_VERSION ($(echo "$mods" | wc -l) staging modules at $staging_ver) in $dir"

  # Version stamps the way hack/lib/version.sh does. Without them the server reports
  # gitVersion v0.0.0-master, and clients that read /version (helm's .Capabilities,
  # charts with kubeVersion:) would see Kubernetes 0.0.
  local minor=${minor_patch%%.*} vpkg ldf=""
  for vpkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor"
    ldf+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  local t0=$SECONDS
  (cd "$dir" && go build -trimpath -ldflags="-s -w$ldf" -o "$bin/kube-apiserver.tmp" \
      k8s.io/kubernetes/cmd/kube-apiserver) || die "go build of kube-apiserver $K8S_VERSION failed"
  mv -f "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
  echo "$K8S_VERSION" >"$bin/kube-apiserver.version"
  log "kube-apiserver built in $((SECONDS - t0)) s"
}

# --- helm ---------------------------------------------------------------------------
get_helm() {
  if cached helm "$HELM_VERSION"; then
    log "helm $HELM_VERSION cached"; return
  fi
  go_env
  # helm v3 is an ordinary module (no replace directives), so a wrapper module that
  # only requires it builds exactly helm's own dependency graph.
  local dir=$build/helm-$HELM_VERSION
  mkdir -p "$dir"
  printf 'module slime.local/helmbin\n\ngo 1.24.0\n\nrequire helm.sh/helm/v3 %s\n' "$HELM_VERSION" >"$dir/go.mod"
  local hmod
  hmod=$(cd "$dir" && modfile "helm.sh/helm/v3@$HELM_VERSION")
  # The Kubernetes version helm assumes when it has no cluster (`helm template`, `helm
  # lint`: .Capabilities.KubeVersion) defaults to 1.20 in the source; helm's Makefile
  # sets it from the client-go it is built with (v0.34.2 -> 1.34). Do the same.
  local kminor
  kminor=$(awk '$1=="k8s.io/client-go"{print $2}' "$hmod" | cut -d. -f2)
  [ -n "$kminor" ] || die "cannot read the client-go version from $hmod"
  log "building helm $HELM_VERSION (Kubernetes 1.$kminor client libraries) in $dir"
  # internal/version.version is what `helm version` prints (the Makefile sets it too).
  local ldf="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  local p
  for p in pkg/chartutil pkg/lint/rules; do
    ldf+=" -X helm.sh/helm/v3/$p.k8sVersionMajor=1 -X helm.sh/helm/v3/$p.k8sVersionMinor=$kminor"
  done
  local t0=$SECONDS
  (cd "$dir" && go build -trimpath -ldflags="-s -w $ldf" -o "$bin/helm.tmp" helm.sh/helm/v3/cmd/helm) \
    || die "go build of helm $HELM_VERSION failed"
  mv -f "$bin/helm.tmp" "$bin/helm"
  echo "$HELM_VERSION" >"$bin/helm.version"
  log "helm built in $((SECONDS - t0)) s"
}

get_etcd
get_kube_apiserver
get_helm

echo
log "binaries in $bin:"
for b in etcd kube-apiserver helm; do
  real=$(readlink -f "$bin/$b")
  printf '  %-15s %-10s %8s  %s\n' "$b" "$(cat "$bin/$b.version")" "$(du -hL "$bin/$b" | cut -f1)" "$real"
done
