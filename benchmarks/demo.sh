#!/usr/bin/env bash
# `make demo` as a newcomer runs it, timed: from nothing with BENCH_COLD=1 (the whole cache
# ~/.cache/slime-hybrid and every podman image removed first: the venv, the Go toolchain and
# module cache, the Kubernetes and Go binaries, the debootstrap tarballs, the images), else warm
# (the cluster removed, every build cached). One line; the run's output in $SLIME_CACHE/../
# bench-demo.log, each line stamped with the second it came; the line also says the longest
# silence (a newcomer cannot tell a long step from a hang) and what was printed before it.
# Measures; never asserts a limit. Leaves the cluster converged.
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
stamp() { local line; while IFS= read -r line; do printf '%(%s)T %s\n' -1 "$line"; done; }
if ! make --no-print-directory demo 2>&1 | stamp >"$log"; then
  tail -20 "$log" >&2
  echo "make demo ($kind) failed after $((SECONDS - t0)) s; see $log" >&2
  exit 1
fi
# the longest time between two lines (from the start to the first line included)
silence=$(awk -v t0="$(( $(date +%s) - (SECONDS - t0) ))" '
  { gap = $1 - (NR == 1 ? t0 : last); if (gap > max) { max = gap; before = prev } last = $1; prev = substr($0, index($0, " ") + 1) }
  END { printf "%d s, after \"%s\"", max, substr(before, 1, 100) }' "$log")
echo "make demo ($kind): $((SECONDS - t0)) s (cluster up, site.yml, sinfo and srun across pods and metal); longest silence $silence"
