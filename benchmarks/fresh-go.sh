#!/usr/bin/env bash
# The Kubernetes tier on a machine without Go: a container from the lab's Debian image (no Go
# in it) runs scripts/install-deps.sh, which brings the pinned Go toolchain, and then
# tests/k8s/k8s-test-bins.sh, which builds the tier's binaries with it. Twice: cold (an empty
# cache) and warm (the same cache again). Prints the wall time of each step; asserts no limit.
# The cache lives in ~/.cache/slime-hybrid/fresh-go (removed first); the workplace's CA bundle
# is mounted so HTTPS through its proxy verifies as it does on the host.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$PWD/../shared/vendor}
state=$cache/fresh-go
image=localhost/slime-host:lab
podman image exists "$image" || ./lab/build-image.sh >/dev/null

rm -rf "$state" && mkdir -p "$state"
run() {
  podman run --rm --network host \
    -v "$PWD:/src:ro" -v "$(readlink -f "$vendor"):/vendor:ro" -v "$state:/cache" \
    -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    -e SLIME_CACHE=/cache -e SLIME_VENDOR_DIR=/vendor -e HOME=/root "$image" bash -c '
      set -e
      command -v go && { echo "fresh-go: this image has a go"; exit 1; }
      t0=$SECONDS; gobin=$(python3 /src/scripts/go_toolchain.py /cache/go)
      t1=$SECONDS; /src/scripts/install-deps.sh >/cache/install-deps.log 2>&1 || { tail -20 /cache/install-deps.log; exit 1; }
      t2=$SECONDS; /src/tests/k8s/k8s-test-bins.sh >/cache/k8s-test-bins.log 2>&1 || { tail -20 /cache/k8s-test-bins.log; exit 1; }
      t3=$SECONDS
      echo "go toolchain $((t1 - t0)) s ($("$gobin/go" version)), rest of install-deps $((t2 - t1)) s, k8s-test-bins $((t3 - t2)) s"
      /cache/k8s/bin/kube-apiserver --version'
}
echo "cold: $(run)"
echo "warm: $(run)"
