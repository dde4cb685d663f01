#!/usr/bin/env bash
# `make test` as CI runs it, timed: from nothing with BENCH_COLD=1 (the whole cache
# ~/.cache/slime-hybrid and every podman image removed first: the venv, the Go module and build
# caches, the Kubernetes and Go binaries, the debootstrap tarballs, the images), else warm (every
# build cached). Prints the wall time, each tier's result line (with its own time) and how busy
# the CPUs were (sampled from /proc/stat every 10 s: the mean, and the share of samples above
# 90 %), so that a slower run says whether it waited or computed, and the labs' containers' CPU-seconds
# by lab and by what spent them (benchmarks/cpu_by_kind.py: Kubernetes, Slurm's daemons, the operators in
# pods, the rest). The run's output in
# $SLIME_CACHE/../bench-test.log, the samples beside it. Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
log=$(dirname "$cache")/bench-test.log
samples=$(dirname "$cache")/bench-test.cpu
kind=warm
./lab/kube/down.sh >/dev/null 2>&1 || true
SLIME_LAB_SLOT=2 ./lab/kube/down.sh >/dev/null 2>&1 || true
SLIME_LAB_SLOT=3 ./lab/kube/down.sh >/dev/null 2>&1 || true
SLIME_LAB_SLOT=4 ./lab/kube/down.sh >/dev/null 2>&1 || true
if [ "${BENCH_COLD:-0}" = 1 ]; then
  kind=cold
  podman rm -af >/dev/null 2>&1 || true
  podman rmi -af >/dev/null 2>&1 || true
  chmod -R u+w "$cache" 2>/dev/null || true
  rm -rf "$cache"
fi
mkdir -p "$(dirname "$cache")"   # a fresh machine has no ~/.cache yet

# busy and steal percent of the CPUs and the 1-minute load average every 10 s, one line each
sample() {
  local prev now
  prev=$(head -1 /proc/stat)
  while sleep 10; do
    now=$(head -1 /proc/stat)
    awk -v a="$prev" -v b="$now" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
      n = split(a, x); split(b, y); total = 0
      for (i = 2; i <= n; i++) { d[i] = y[i] - x[i]; total += d[i] }
      idle = d[5] + d[6]
      if (total > 0) printf "%.0f %.0f %s\n", 100 * (total - idle) / total, 100 * d[9] / total, load }'
    prev=$now
  done
}
sample >"$samples" &
sampler=$!
# The containers' CPU by lab and by what spent it (benchmarks/cpu_by_kind.py), written when it is stopped.
by_kind=$(dirname "$cache")/bench-test.by-kind.json
rm -f "$by_kind"
python3 benchmarks/cpu_by_kind.py sample "$by_kind" &
kinds=$!
trap 'kill "$sampler" "$kinds" 2>/dev/null || true' EXIT

# The machine's busy CPU-seconds (every process: this run's, and the labs' containers podman runs apart).
busy() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.0f", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat; }
b0=$(busy)
t0=$SECONDS
rc=0
make --no-print-directory test >"$log" 2>&1 || rc=$?
took=$((SECONDS - t0))
b1=$(busy)
kill "$sampler" "$kinds" 2>/dev/null || true
wait "$kinds" 2>/dev/null || true
echo "make test ($kind): $took s ($((took / 60)) min $((took % 60)) s), exit $rc"
sed -n '/^=== make test: tiers/,$p' "$log" | tail -n +2
# Each tier's line ends with the CPU-seconds of what it ran here (scripts/test-tiers.sh); the rest of the
# machine's busy time went to the labs' containers (Kubernetes, Slurm, the hosts) and to nothing of ours.
# (none in the lines of a checkout older than that count: 0, and the report goes on)
tiers=$(sed -n '/^=== make test: tiers/,$p' "$log" | { grep -Eo '[0-9]+ CPU-s here' || true; } | awk '{ s += $1 } END { print s + 0 }')
echo "CPU-seconds: $((b1 - b0)) busy in all, $tiers in the tiers' own processes (Ansible, molecule, pytest, helm, builds), $((b1 - b0 - tiers)) in the labs' containers and the rest"
awk '{ s += $1; st += $2; if ($1 > 90) hi++; l += $3; if ($3 > lmax) lmax = $3 } END {
  if (NR) printf "CPU: %.0f %% busy on average (steal %.0f %%), above 90 %% in %.0f %% of %d samples; load average %.1f on average, %.1f at most\n", s / NR, st / NR, 100 * hi / NR, NR, l / NR, lmax }' "$samples"
[ ! -s "$by_kind" ] || python3 benchmarks/cpu_by_kind.py report "$by_kind"
exit "$rc"
