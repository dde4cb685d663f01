#!/usr/bin/env bash
# BMC preflight figure: slime.hybrid.bmc_preflight over 3 BMCs from the Metal3 test services
# (a good Redfish BMC, one with a wrong password, one unreachable). Prints one line:
#   BMC preflight, 3 BMCs: X s (...)
# X is the module's own time for the checks (run in parallel); the whole ansible run follows
# in parentheses. Starts the services if needed and stops them again only if it started them.
# Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
export SLIME_CACHE=$cache ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-$cache/collections}
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_STDOUT_CALLBACK=json
python=$(command -v python)

started=0
if ! ./tests/integration/metal3/metal3-test-services.sh status >/dev/null 2>&1; then
  ./tests/integration/metal3/metal3-test-services.sh up >/dev/null
  started=1
fi
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  if [ $started = 1 ]; then ./tests/integration/metal3/metal3-test-services.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# Hosts from the services' endpoints file, into a 0600 vars file (the password stays off argv).
(umask 077; "$python" - "$cache/metal3/endpoints.json" >"$work/vars.json" <<'PY'
import json, sys
ep = json.load(open(sys.argv[1]))
rf, s = ep["redfish"], ep["redfish"]["systems"]
def addr(i, port=None):
    return "redfish+http://%s:%d%s" % (rf["host"], port or rf["port"], s[i]["system_id"])
print(json.dumps({"bmc_hosts": [
    {"name": "node-0", "address": addr(0), "username": ep["username"], "password": ep["password"], "boot_mac": s[0]["macs"][0]},
    {"name": "node-1", "address": addr(1), "username": ep["username"], "password": ep["password"] + "-wrong"},
    {"name": "node-2", "address": addr(2, ep["closed_port"]), "username": ep["username"], "password": ep["password"]},
]}))
PY
)
printf 'localhost ansible_connection=local ansible_python_interpreter=%s\n' "$python" >"$work/hosts.ini"

t0=$(date +%s.%N)
out=$(ansible-playbook -i "$work/hosts.ini" tests/integration/metal3/preflight.yml -e "@$work/vars.json" \
      -e bmc_partial=true 2>&1) || { echo "$out" >&2; echo "bmc_preflight: ansible-playbook failed" >&2; exit 1; }
t1=$(date +%s.%N)
module=$("$python" -c '
import json, sys
text = sys.stdin.read()
data = json.loads(text[text.index("{"):])
res = data["plays"][0]["tasks"][0]["hosts"]["localhost"]
print("%.2f s (ok %s, failed %s)" % (res["seconds"], ",".join(res["ok_hosts"]), ",".join(res["failed_hosts"])))
' <<<"$out")
echo "BMC preflight, 3 BMCs: $module; whole ansible-playbook run $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
