#!/usr/bin/env bash
# What a converged cluster costs the control node: a site.yml re-run that changes nothing against an empty
# play over the same hosts (benchmarks/empty.yml), BENCH_PAIRS (3) pairs back to back, each run's wall time
# and CPU-seconds (user + system of ansible-playbook and everything it ran and waited for on this machine:
# its forks, local modules, helm, ssh; not what the bare-metal hosts ran), then the medians and their ratio.
# With BENCH_PROFILE=1 also the slowest tasks of the last re-run (ansible.posix.profile_tasks).
# Measures; never asserts a limit. Needs a converged cluster (make demo, or benchmarks/kube.sh):
#   make bench-rerun      BENCH_INVENTORY=inventories/kube/hosts.yml (the default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
inventory=${BENCH_INVENTORY:-inventories/kube/hosts.yml}
pairs=${BENCH_PAIRS:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# timed PLAYBOOK...: "WALL CPU CHANGED" of one ansible-playbook run; its output in $out.
timed() {
  python3 - "$inventory" "$@" >"$out.t" <<'PY'
import os, resource, subprocess, sys, time
start = time.monotonic()
with open(os.environ["BENCH_OUT"], "w") as log:
    rc = subprocess.call(["ansible-playbook", "-i"] + sys.argv[1:], stdout=log, stderr=subprocess.STDOUT)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f %.2f %d" % (wall, usage.ru_utime + usage.ru_stime, rc))
PY
  local wall cpu rc
  read -r wall cpu rc <"$out.t"
  rm -f "$out.t"
  if [ "$rc" != 0 ]; then
    tail -30 "$out" >&2
    echo "rerun: ansible-playbook $* failed (exit $rc)" >&2
    exit 1
  fi
  echo "$wall $cpu $(recap_changed <"$out")"
}
export BENCH_OUT=$out

rows=()
for i in $(seq "$pairs"); do
  read -r ew ec _ < <(timed benchmarks/empty.yml)
  if [ "${BENCH_PROFILE:-0}" = 1 ] && [ "$i" = "$pairs" ]; then export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks; fi
  read -r sw sc changed < <(timed playbooks/site.yml)
  echo "pair $i: empty play $ew s ($ec CPU-s), site.yml re-run $sw s ($sc CPU-s, changed=$changed)"
  rows+=("$ew $ec $sw $sc")
done
ew=$(printf '%s\n' "${rows[@]}" | awk '{ print $1 }' | median)
ec=$(printf '%s\n' "${rows[@]}" | awk '{ print $2 }' | median)
sw=$(printf '%s\n' "${rows[@]}" | awk '{ print $3 }' | median)
sc=$(printf '%s\n' "${rows[@]}" | awk '{ print $4 }' | median)
hosts=$(ansible-inventory -i "$inventory" --graph slurm_baremetal 2>/dev/null | grep -c -- '--[^@]' || true)
echo "median of $pairs: site.yml re-run $sw s, $sc CPU-s; empty play $ew s, $ec CPU-s; ratio $(awk -v a="$sw" -v b="$ew" 'BEGIN { printf "%.1f", a / b }')x wall, $(awk -v a="$sc" -v b="$ec" 'BEGIN { printf "%.1f", a / b }')x CPU; $hosts bare-metal hosts, $(awk -v a="$sc" -v b="$ec" -v h="$hosts" 'BEGIN { if (h > 0) printf "%.2f", (a - b) / h; else print "-" }') CPU-s per host above the empty play"
if [ "${BENCH_PROFILE:-0}" = 1 ]; then
  echo "slowest tasks of the last re-run:"
  sed -n '/^=*$/,$p' "$out" | grep -E ' -+ [0-9.]+s$' | head -20
fi
