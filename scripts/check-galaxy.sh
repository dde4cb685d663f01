#!/usr/bin/env bash
# What Galaxy says when this collection is uploaded: build the tarball the way
# `ansible-galaxy collection build` makes it and run galaxy-importer on it (the code Galaxy runs
# on every upload: ansible-doc of every plugin, role READMEs, ansible-lint, ignore files).
# Fails on any ERROR line, on any WARNING (galaxy-importer's warnings are all about the
# collection's own files), and when the importer does not end with
# "Importer processing completed successfully".
#
# As Galaxy runs it: galaxy-importer alone (with the ansible-core and ansible-lint it pins) in a
# venv of its own under the cache, and no other collection installed, not even those galaxy.yml
# depends on: the importer's ansible-doc and ansible-lint (--offline) see this collection only.
# So the modules' documentation must render from this collection alone (slinky_info documents
# kubernetes.core's connection options with a fragment of its own, plugins/doc_fragments), and
# the shipped .ansible-lint mocks the modules of the dependencies that playbooks and roles call.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venv=$cache/galaxy-importer-venv
work=$cache/galaxy-importer
IMPORTER_REQUIREMENTS=("galaxy-importer==0.4.44")

fail() { echo "check-galaxy: $*" >&2; exit 1; }

want="${IMPORTER_REQUIREMENTS[*]}"
if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$want" ]; then
  echo "check-galaxy: installing ${IMPORTER_REQUIREMENTS[*]} into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # --no-compile: bytecode only for what the importer imports (on first use), as in install-deps.sh
  "$venv/bin/pip" install -q --disable-pip-version-check --no-compile "${IMPORTER_REQUIREMENTS[@]}"
  echo "$want" >"$venv/.requirements"
fi

rm -rf "$work" && mkdir -p "$work/dist"
"$venv/bin/ansible-galaxy" collection build --force --output-path "$work/dist" "$here" >/dev/null
tarball=$(ls "$work"/dist/*.tar.gz)
echo "check-galaxy: galaxy-importer $(basename "$tarball")"
# The importer runs ansible-doc and ansible-lint from PATH; HOME keeps what ansible-lint installs
# (a copy of the collection under ~/.ansible) out of the real home, where it would shadow the checkout.
# The importer gives ansible-lint 180 s (galaxy_importer/loaders/collection.py, 0.4.44), which it
# needs about 90 of on an idle machine here; make test runs this tier beside both real-Kubernetes
# labs, which keep both CPUs busy (seen: past 180 s twice in a row). As root, the importer runs
# at a higher priority (nice -10) than the labs: it takes the CPU it needs first, and the limit
# is about the importer, not about how busy the machine is.
prio=()
[ "$(id -u)" != 0 ] || prio=(nice -n -10)
run_importer() {
  (cd "$work" && PATH=$venv/bin:$PATH ANSIBLE_LOCAL_TEMP=$work/tmp HOME=$work \
    "${prio[@]}" "$venv/bin/python" -m galaxy_importer.main "$tarball") >"$work/importer.log" 2>&1 || {
    cat "$work/importer.log"; fail "galaxy-importer failed"; }
}
run_importer
# A timeout all the same is retried once.
if grep -q '^ERROR: Timeout on call to ansible-lint' "$work/importer.log"; then
  echo "check-galaxy: ansible-lint ran past the importer's 180 s; once more"
  run_importer
fi
cat "$work/importer.log"
problems=$(grep -E '^(ERROR|WARNING)' "$work/importer.log" || true)
[ -z "$problems" ] || fail "galaxy-importer reported:
$problems"
grep -q '^Importer processing completed successfully' "$work/importer.log" || fail "galaxy-importer did not complete"
echo "check-galaxy: ok, no error and no warning"
