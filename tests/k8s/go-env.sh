# shellcheck shell=bash
# shellcheck disable=SC2154  # here and cache come from the script that sources this file
# The Go side shared by the tier's build scripts (k8s-test-bins.sh, bmo-bin.sh,
# scc-admission-bin.sh, lab/kube/cert-manager-chart.sh); sourced after they set `here`, `cache`
# and `die`.

# cert-manager: k8s-test-bins.sh builds its binaries, lab/kube/cert-manager-chart.sh prepares its
# chart; both at this one version (the chart's images are tagged with it).
CERT_MANAGER_VERSION=${CERT_MANAGER_VERSION:-v1.21.1}

# go_env WHAT: the system Go when it is new enough, else the pinned toolchain under the cache
# (installed now if missing; scripts/go_toolchain.py). Build and module caches live in our cache
# so reruns reuse them; -mod=mod lets `go build` fill in go.sum of a wrapper module;
# GOTOOLCHAIN=local keeps go from fetching a toolchain of its own.
# GOGC=400 lets the compiler and linker (Go programs) collect garbage a quarter as often: with an
# empty build cache, CoreDNS took 237-258 CPU-seconds at the default GOGC=100 and 177-220 at 400
# here, for a larger heap (0.6 GB, not 0.45, per process); the Kubernetes build is most of a cold
# `make test`'s CPU. GOMEMLIMIT bounds what that costs: a compile near 4 GiB collects as before.
# GO_LEAN: the compiler writes no DWARF (the binaries are stripped of it anyway, -ldflags=-s -w):
# k8s.io/client-go/kubernetes from an empty build cache took 127 CPU-seconds instead of 152 here.
# Every build of the tier adds it to GOFLAGS.
GO_LEAN="-gcflags=all=-dwarf=false"
go_env() {
  local gobin
  gobin=$(python3 "$here/scripts/go_toolchain.py" "$cache/go") || die "no Go toolchain to build $1 with (see above)"
  export PATH=$gobin:$PATH
  export GOCACHE=$cache/k8s/go/cache GOMODCACHE=$cache/k8s/go/mod
  export GOGC=${GOGC:-400} GOMEMLIMIT=${GOMEMLIMIT:-4GiB}
  export GOFLAGS="-mod=mod -buildvcs=false $GO_LEAN" GOTOOLCHAIN=local CGO_ENABLED=0
  export GOPROXY=${GOPROXY:-https://proxy.golang.org,direct}
}

# mod_field MOD@VER FIELD: field FIELD (Dir, GoMod) of `go mod download -json MOD@VER`, run in a
# throw-away module; nothing when the proxy refuses the module.
mod_field() {
  local probe out
  probe=$(mktemp -d)
  out=$(cd "$probe" && printf 'module slime.local/probe\n\ngo 1.26\n' >go.mod \
        && go mod download -json "$1" 2>/dev/null | sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",*\$/\1/p") || true
  rm -rf "$probe"
  echo "$out"
}
