#!/usr/bin/env bash
# Run every test tier (make deps, builds, static, unit, k8s, kube, kube-routed, kube-faults,
# integration, kube-openshift), each to its end even when an earlier one failed, and close with one line per
# tier: passed, failed (with the first error line it printed) or skipped because SKIP_TIERS named
# it. A tier that cannot run (e.g. no Go toolchain, an unreachable module proxy) fails; it is
# never skipped unasked.
#
#   SKIP_TIERS="k8s integration" make test
#
# Lanes: first `builds` (what the real-Kubernetes lab and the execution environment need, cached
# under ~/.cache; CPU-bound on a first run; its cluster part needs only the system packages of
# make deps-system), with the venv (the deps tier: make deps, mostly downloads) and then unit
# beside it; then the labs side by side: the Metal3 tier's control plane, Ironic and Redfish
# emulator on this machine's loopback (k8s, then integration, which uses the same services, then
# kube-openshift in the fourth lab, 10.127.4.0/24, SLIME_LAB_SLOT=4, booted when the other three are long up),
# the real-Kubernetes lab in its node containers on 10.127.0.0/24 (kube), the second on
# 10.127.2.0/24 (kube-routed, SLIME_LAB_SLOT=2) and the third on 10.127.3.0/24 (kube-faults,
# SLIME_LAB_SLOT=3). The lab lanes wait mostly on their clusters and jobs, not on the CPUs: four
# side by side end sooner than three that each wait longer. What only one lane needs (Metal3's
# baremetal-operator) is built in that lane, where the labs leave the CPUs time, and static,
# which only computes, runs at the end of whichever lane ends first. Within a lane, one tier
# after another. The lanes share no files, ports or networks, and no test holds a timing limit
# that a busy CPU would break. SERIAL_TIERS=1 runs every tier in one lane, in the order above.
# A tier that hangs is stopped after SLIME_TIER_TIMEOUT seconds (4800: CI stops the whole run at 5400, and the
# longest tier took 2,500 s here, 1.8x that on the slowest machine measured), everything it started with it, and
# fails naming the last play or molecule step it began, so the summary still names every tier. Not a timing
# check: a tier that ends, however slowly, passes or fails on its own.
# The output of the tiers that ran beside the foreground one is printed at the end (all of it is
# in test-logs/).
#
# Exit status: 0 when no tier failed.
set -uo pipefail

TIERS=(deps builds static unit k8s kube kube-routed kube-faults integration kube-openshift)
LAB_TIERS=" k8s kube kube-routed kube-faults kube-openshift "   # need the builds
skip=" ${SKIP_TIERS:-} "
logs=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/test-logs
mkdir -p "$logs"

for word in ${SKIP_TIERS:-}; do
  case " ${TIERS[*]} " in
    *" $word "*) ;;
    *) echo "test-tiers: SKIP_TIERS names '$word'; the tiers are: ${TIERS[*]}" >&2; exit 2 ;;
  esac
done

# The first failure a tier's log shows: the Ansible task and its fatal line, else the first
# line that says ERROR/FAILED (pytest, shell scripts), so the summary at the end of a long CI
# log names what broke.
first_error() {
  awk 'pending != "" { if ($0 !~ /\.\.\.ignoring/) { print pending; found = 1; exit } pending = "" }
       /^TASK \[/ { task = $0; sub(/ \*+$/, "", task) }
       /^fatal: |^failed: / { pending = task " -> " substr($0, 1, 400) }
       !hit && /ERROR|FAILED|^E |^Failed: / { hit = substr($0, 1, 300) }
       END { if (!found) print (pending != "" ? pending : hit != "" ? hit : "see " FILENAME) }' "$1"
}

# run_tier TIER [beside]: make TIER, its output to its log (and to the terminal unless it runs
# beside another lane); its result line to $logs/TIER.result.
# The lane's output with the time each play and each molecule step began, at the end of its line
# (where the first error's search above does not look): where a lane's minutes went. Python's
# output unbuffered, so a line is stamped when it is written, not when a buffer fills.
export PYTHONUNBUFFERED=1
stamp() {
  awk '/^PLAY \[|^INFO .*Executing$/ { print $0 " [" strftime("%T") "]"; fflush(); next } { print; fflush() }'
}

run_tier() {
  local tier=$1 start=$SECONDS rc took
  if [[ $skip == *" $tier "* ]]; then
    echo "skipped (SKIP_TIERS)" >"$logs/$tier.result"
    return
  fi
  if [[ $LAB_TIERS == *" $tier "* && $(cat "$logs/builds.result" 2>/dev/null) == FAILED* ]]; then
    echo "FAILED: not run, the builds tier failed ($logs/builds.log)" >"$logs/$tier.result"
    return
  fi
  echo "=== tier $tier: make $tier${2:+ (beside another lane; its output is printed at the end)}"
  # The CPU-seconds of make and everything it ran and waited for on this machine (Ansible, molecule, pytest,
  # helm, kubectl, ssh, the Go builds; not the labs' containers, which podman runs apart): bash's `times`,
  # whose second line is the children's user and system time, into $logs/TIER.cpu.
  # timeout runs make in a process group of its own and, at the limit, signals all of it (TERM, then KILL).
  local limit=${SLIME_TIER_TIMEOUT:-4800}
  if [ -n "${2:-}" ]; then
    { (timeout --kill-after=60 "$limit" make --no-print-directory "$tier"; rc=$?; times >&3; exit $rc) 2>&1 | stamp >"$logs/$tier.log"; } 3>"$logs/$tier.cpu"
    rc=${PIPESTATUS[0]}
  else
    { (timeout --kill-after=60 "$limit" make --no-print-directory "$tier"; rc=$?; times >&3; exit $rc) 2>&1 | stamp | tee "$logs/$tier.log"; } 3>"$logs/$tier.cpu"
    rc=${PIPESTATUS[0]}
  fi
  took=$((SECONDS - start))
  cpu=$(awk 'function sec(t) { split(t, p, "m"); return p[1] * 60 + p[2] }
             NR == 2 { printf "%.0f", sec($1) + sec($2) }' "$logs/$tier.cpu" 2>/dev/null)
  if [ "$rc" -eq 0 ]; then
    echo "passed (${took} s, ${cpu:-?} CPU-s here)" >"$logs/$tier.result"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAILED (stopped after ${took} s, SLIME_TIER_TIMEOUT=$limit: it hung or starved): the last step it began:" \
         "$(grep -E '^PLAY \[|^INFO .*Executing|^TASK \[' "$logs/$tier.log" | tail -1 | cut -c1-300)" >"$logs/$tier.result"
  else
    echo "FAILED (exit $rc after ${took} s, ${cpu:-?} CPU-s here): $(first_error "$logs/$tier.log")" >"$logs/$tier.result"
  fi
  [ -z "${2:-}" ] || echo "=== tier $tier (beside) ended: $(cat "$logs/$tier.result")"
}

# static only computes: it runs once, in whichever lane gets here first - the Metal3 tiers' lane once they
# end (usually), or a lab lane that ends before them (mkdir is atomic).
static_if_first() { mkdir "$logs/static.claimed" 2>/dev/null && run_tier static beside; }

for tier in "${TIERS[@]}"; do rm -f "$logs/$tier.result" "$logs/$tier.log"; done
rm -rf "$logs/static.claimed"
beside=()
if [ "${SERIAL_TIERS:-0}" = 1 ]; then
  for tier in "${TIERS[@]}"; do run_tier "$tier"; done
else
  ( run_tier deps beside; run_tier unit beside ) & pids=($!)
  run_tier builds
  # static once the Metal3 tiers are done (they end first), beside kube-openshift: the suite is CPU-bound, and
  # static at the very end was its last 10 minutes.
  ( run_tier k8s beside; run_tier integration beside; static_if_first & run_tier kube-openshift beside
    wait ) & pids+=($!)
  ( run_tier kube-routed beside; static_if_first ) & pids+=($!)
  ( run_tier kube-faults beside; static_if_first ) & pids+=($!)
  run_tier kube
  static_if_first
  wait "${pids[@]}"
  beside=(deps unit k8s integration kube-openshift static kube-routed kube-faults)
fi
for tier in "${beside[@]}"; do
  [ -s "$logs/$tier.log" ] || continue
  echo "=== tier $tier's output (it ran beside another lane)"
  cat "$logs/$tier.log"
done

echo
echo "=== make test: tiers"
failed=0
for tier in "${TIERS[@]}"; do
  result=$(cat "$logs/$tier.result" 2>/dev/null || echo "FAILED: no result (the tier did not end)")
  [[ $result == passed* || $result == skipped* ]] || failed=1
  printf '  %-12s %s\n' "$tier" "$result"
done
exit $failed
