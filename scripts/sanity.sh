#!/usr/bin/env bash
# ansible-test sanity for every ansible-core release the collection supports.
#
# Supported releases: each X.Y of TESTED_RELEASES that meta/runtime.yml's requires_ansible
# admits, plus the venv's ansible-core when it is newer than all of them. There are no
# tests/sanity/ignore-X.Y.txt files: every sanity test passes as it is (Galaxy and Automation
# Hub flag ignore files, even empty ones).
# SLIME_SANITY_VERSIONS overrides the list ("2.16 2.19"; "venv" = the venv's release only).
# A release other than the venv's runs from a small venv of its own under
# $SLIME_CACHE/sanity-venvs/X.Y, created on first use and reused (SLIME_SANITY_REFRESH=1
# upgrades it to the newest patch release). Extra arguments go to every ansible-test run.
#
# ansible-test needs the collection at .../ansible_collections/slime/hybrid as a real
# directory: the tracked files (and local changes) are copied there under the cache.
set -euo pipefail
TESTED_RELEASES="2.16 2.17 2.18 2.19"
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venvs=$cache/sanity-venvs
dest=$cache/sanity/ansible_collections/slime/hybrid

# --- which releases --------------------------------------------------------------------
venv_release=$(python -c 'from ansible.release import __version__ as v; print(".".join(v.split(".")[:2]))')
python_version=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
supported=$(
  cd "$here" && python - "$venv_release" "$TESTED_RELEASES" <<'PY'
import re, sys
import yaml
from ansible.module_utils.compat.version import LooseVersion
spec = yaml.safe_load(open("meta/runtime.yml"))["requires_ansible"]
bounds = re.findall(r"(>=|<=|>|<|==|!=)\s*([0-9][0-9.]*)", spec)
def admitted(release):
    v = LooseVersion(release)
    ops = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
           "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    # compare X.Y against the bound cut to X.Y, so >=2.16.0 admits 2.16
    return all(ops[op](v, LooseVersion(".".join(bound.split(".")[:2]))) for op, bound in bounds)
releases = [r for r in sys.argv[2].split() if admitted(r)]
venv = sys.argv[1]
if admitted(venv) and (not releases or LooseVersion(venv) > LooseVersion(releases[-1])):
    releases.append(venv)
print(" ".join(releases))
PY
)
case "${SLIME_SANITY_VERSIONS:-}" in
  "") releases=$supported ;;
  venv) releases=$venv_release ;;
  *) releases=$SLIME_SANITY_VERSIONS ;;
esac
echo "sanity: ansible-core releases: $releases (supported: $supported; venv: $venv_release; python $python_version)"

# --- the collection, as ansible-test wants it ---------------------------------------------
rm -rf "$dest"
mkdir -p "$dest"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ "$dest/")
# The collections ours depends on (galaxy.yml) must sit beside it: kubernetes.core for
# slinky_info's imports, and every other one for the docs fragments and imports to come.
site=$(python -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))')
deps=$(cd "$here" && python -c 'import yaml; print(" ".join(k.replace(".", "/") for k in yaml.safe_load(open("galaxy.yml")).get("dependencies") or {}))')
for dep in $deps; do
  [ -d "$site/ansible_collections/$dep" ] || { echo "sanity: collection ${dep/\//.} (galaxy.yml) is not installed in $site" >&2; exit 1; }
  mkdir -p "$cache/sanity/ansible_collections/${dep%/*}"
  ln -sfn "$site/ansible_collections/$dep" "$cache/sanity/ansible_collections/$dep"
done
(cd "$dest" && git init -q . && git add -A >/dev/null)   # ansible-test lists files through git

# --- a venv per release -----------------------------------------------------------------
# Prints the bin directory whose ansible-test is release $1.
release_bin() {
  local release=$1 venv=$venvs/$1
  if [ "$release" = "$venv_release" ]; then
    dirname "$(command -v python)"
    return
  fi
  if [ ! -x "$venv/bin/ansible-test" ] || [ -n "${SLIME_SANITY_REFRESH:-}" ]; then
    echo "sanity: preparing $venv (ansible-core $release.*)" >&2
    [ -x "$venv/bin/python" ] || python -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --upgrade "ansible-core==$release.*" PyYAML >&2
  fi
  echo "$venv/bin"
}

# ansible-test bootstraps pip in its test venvs with a get-pip script from
# ci-files.testing.ansible.com, which this machine kind cannot reach; stand in with
# ensurepip + pip from PyPI. The pip version differs between releases.
stand_in_get_pip() {
  local pip_version getpip
  pip_version=$("$1/python" - <<'PY'
import os, re, ansible_test
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
m = re.search(r"pip='([0-9.]+)'", src)
print(m.group(1) if m else "")
PY
)
  [ -n "$pip_version" ] || return 0
  getpip=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
  [ -s "$getpip" ] && return 0
  curl -fsS -m 10 -o "$getpip" "https://ci-files.testing.ansible.com/ansible-test/get-pip-$pip_version.py" 2>/dev/null && return 0
  mkdir -p "$(dirname "$getpip")"
  cat >"$getpip" <<'PY'
# slime.hybrid stand-in for get-pip.py: ensurepip, then pip installs what get-pip was asked for.
import ensurepip
import os
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
for bundle in ("/etc/ssl/certs/ca-certificates.crt",):
    if os.path.exists(bundle):
        args = ["--cert", bundle] + args
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
PY
}

# --- run ---------------------------------------------------------------------------------
summary=()
failed=0
for release in $releases; do
  start=$(date +%s)
  bin=$(release_bin "$release")
  stand_in_get_pip "$bin"
  actual=$("$bin/python" -c 'from ansible.release import __version__; print(__version__)')
  echo "sanity: ===== ansible-core $actual ($bin) ====="
  # PATH first: ansible-test finds python$python_version there and runs its tests with it.
  if (cd "$dest" && PATH="$bin:$PATH" "$bin/ansible-test" sanity --python "$python_version" \
        --requirements --color no "$@"); then
    result=ok
  else
    result=FAILED
    failed=1
  fi
  summary+=("sanity ansible-core $actual: $result ($(($(date +%s) - start)) s)")
done
printf '%s\n' "${summary[@]}"
exit $failed
