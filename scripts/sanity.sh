#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/slime/hybrid as a real
# directory: copy the tracked files (and local changes) there under the cache and run it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
dest=$cache/sanity/ansible_collections/slime/hybrid
rm -rf "$dest"
mkdir -p "$dest"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ "$dest/")
# Collections ours depends on must sit beside it (kubernetes.core for slinky_info).
site=$(python -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))')
for dep in kubernetes/core; do
  mkdir -p "$cache/sanity/ansible_collections/${dep%/*}"
  ln -sfn "$site/ansible_collections/$dep" "$cache/sanity/ansible_collections/$dep"
done
cd "$dest"
git init -q . && git add -A >/dev/null   # ansible-test lists files through git
# ansible-test bootstraps pip in its test venvs with a get-pip script from ci-files.testing.ansible.com,
# which this machine kind cannot reach; stand in with ensurepip + pip from PyPI.
pip_version=$(python - <<'PY'
import os, re, ansible_test
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
m = re.search(r"pip='([0-9.]+)'", src)
print(m.group(1) if m else "")
PY
)
if [ -n "$pip_version" ]; then
  getpip=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
  if [ ! -s "$getpip" ] && ! curl -fsS -m 10 -o "$getpip" "https://ci-files.testing.ansible.com/ansible-test/get-pip-$pip_version.py" 2>/dev/null; then
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
  fi
fi
python_version=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ansible-test sanity --python "$python_version" --requirements --color no "$@"
