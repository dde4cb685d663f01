#!/usr/bin/env bash
# Run every test tier (make static, unit, molecule, k8s, kube, integration), each to its end even
# when an earlier one failed, and close with one line per tier: passed, failed (with the
# first error line it printed) or skipped because SKIP_TIERS named it. A tier that cannot
# run (e.g. no Go toolchain, an unreachable module proxy) fails; it is never skipped unasked.
#
#   SKIP_TIERS="k8s integration" make test
#
# Exit status: 0 when no tier failed.
set -uo pipefail

TIERS=(static unit molecule k8s kube integration)
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

declare -A result
failed=0
for tier in "${TIERS[@]}"; do
  if [[ $skip == *" $tier "* ]]; then
    result[$tier]="skipped (SKIP_TIERS)"
    continue
  fi
  echo "=== tier $tier: make $tier"
  start=$SECONDS
  make --no-print-directory "$tier" 2>&1 | tee "$logs/$tier.log"
  rc=${PIPESTATUS[0]}
  took=$((SECONDS - start))
  if [ "$rc" -eq 0 ]; then
    result[$tier]="passed (${took} s)"
  else
    failed=1
    result[$tier]="FAILED (exit $rc after ${took} s): $(first_error "$logs/$tier.log")"
  fi
done

echo
echo "=== make test: tiers"
for tier in "${TIERS[@]}"; do
  printf '  %-12s %s\n' "$tier" "${result[$tier]}"
done
exit $failed
