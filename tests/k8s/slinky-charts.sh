#!/usr/bin/env bash
# Put Slinky's charts (slurm-operator-crds, slurm-operator, slurm) at $SLINKY_VERSION under
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/charts/slinky-$SLINKY_VERSION/<chart>
# for the test tiers: `helm pull` of the OCI charts as a user gets them; where the registry
# cannot be reached (this workplace's machines), upstream's helm/ directory of the same tag
# from $SLIME_VENDOR_DIR/slinky-$SLINKY_VERSION/helm (default: ../shared/vendor beside the
# checkout). Never copied into the repository. Prints the directory.
set -euo pipefail

SLINKY_VERSION=${SLINKY_VERSION:-1.2.1}
here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
vendor=${SLIME_VENDOR_DIR:-$here/../shared/vendor}
helm=${HELM:-$cache/k8s/bin/helm}
dst=$cache/charts/slinky-$SLINKY_VERSION
charts=(slurm-operator-crds slurm-operator slurm)

complete() { local c; for c in "${charts[@]}"; do [ -f "$dst/$c/Chart.yaml" ] || return 1; done; }

if ! complete; then
  rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
  pulled=1
  for c in "${charts[@]}"; do
    timeout 60 "$helm" pull "oci://ghcr.io/slinkyproject/charts/$c" --version "$SLINKY_VERSION" \
      --untar --untardir "$dst.tmp" >/dev/null 2>&1 || { pulled=0; break; }
  done
  if [ "$pulled" = 1 ]; then
    echo "slinky-charts: pulled $SLINKY_VERSION from oci://ghcr.io/slinkyproject/charts" >&2
  else
    src=$vendor/slinky-$SLINKY_VERSION/helm
    [ -f "$src/slurm/Chart.yaml" ] || {
      echo "slinky-charts: ERROR: cannot pull the Slinky $SLINKY_VERSION charts from ghcr.io and there is no copy at $src (set SLIME_VENDOR_DIR)" >&2
      exit 1
    }
    echo "slinky-charts: ghcr.io unreachable; upstream's charts of v$SLINKY_VERSION from $src" >&2
    rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
    for c in "${charts[@]}"; do cp -r "$src/$c" "$dst.tmp/$c"; done
    # The source tree lacks what `helm package` puts in charts/: the operator chart's
    # dependency on the CRDs chart (file://../slurm-operator-crds, so no network).
    "$helm" dependency build "$dst.tmp/slurm-operator" >/dev/null
  fi
  for c in "${charts[@]}"; do
    v=$(sed -n 's/^version: *//p' "$dst.tmp/$c/Chart.yaml" | tr -d '"')
    [ "$v" = "$SLINKY_VERSION" ] || { echo "slinky-charts: ERROR: $c is version $v, not $SLINKY_VERSION" >&2; exit 1; }
  done
  rm -rf "$dst" && mv "$dst.tmp" "$dst"
fi
echo "$dst"
