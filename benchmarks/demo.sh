#!/usr/bin/env bash
# `make demo` as a newcomer runs it, timed: from nothing with BENCH_COLD=1 (the whole cache
# ~/.cache/slime-hybrid and every podman image removed first: the venv, the Go toolchain and
# module cache, the Kubernetes and Go binaries, the debootstrap tarballs, the images), else warm
# (the cluster removed, every build cached). One line; the run's output in $SLIME_CACHE/../
# bench-demo.log. Measures; never asserts a limit. Leaves the cluster converged.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
log=$(dirname "$cache")/bench-demo.log
kind=warm
./lab/kube/down.sh >/dev/null 2>&1 || true
if [ "${BENCH_COLD:-0}" = 1 ]; then
  kind=cold
  podman rmi -af >/dev/null 2>&1 || true
  chmod -R u+w "$cache" 2>/dev/null || true
  rm -rf "$cache"
fi
t0=$SECONDS
if ! make --no-print-directory demo >"$log" 2>&1; then
  tail -20 "$log" >&2
  echo "make demo ($kind) failed after $((SECONDS - t0)) s; see $log" >&2
  exit 1
fi
echo "make demo ($kind): $((SECONDS - t0)) s (cluster up, site.yml, sinfo and srun across pods and metal)"
