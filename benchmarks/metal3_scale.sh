#!/usr/bin/env bash
# Provisioning waves through the collection: for each count N (default: 10 30 100), one
# `site.yml --tags metal3` run with N BareMetalHosts in metal3_hosts_list, on the Metal3 tier's
# stack (molecule metal3: a real API server, baremetal-operator v0.13.2, Ironic 35.0.0, sushy-tools'
# fake Redfish systems and Metal3's FakeIPA answering as each host's agent). The run returns when the
# role's wait (one BareMetalHost list per poll, the role's default 10-s delay) saw every host
# provisioned. Then the hosts are deleted (deprovisioned through Ironic) before the next wave (the
# last wave's go with the stack).
#
# Prints per wave: the run's wall time and the control node's CPU (Ansible and its modules; per host),
# the hosts' provisioning as baremetal-operator recorded it (status.operationHistory: first register
# start to last provision end, the slowest host's provision), the CPU of Ironic, baremetal-operator,
# FakeIPA and the emulator during the wave, the deprovisioning's wall time, and the settings that
# bound a wave (BMO_CONCURRENCY, PROVISIONING_LIMIT, Ironic's). Measures; never asserts a limit.
#
# After the largest wave, before its hosts are deleted: remediation's guards among them
# (benchmarks/metal3_remediate.yml): BENCH_UNHEALTHY of them (default 10; 0: none) reported down for
# 20 minutes, decided, power-cycled through their BareMetalHosts (the role's policy: max_concurrent 1
# unless BENCH_MAX_CONCURRENT), decided again right after.
#
#   benchmarks/metal3_scale.sh [N ...]
#
# Needs the Metal3 tier's ports free (not beside make test's k8s or integration tier). Leaves nothing
# running (molecule destroy). Output of each run under $SLIME_CACHE/bench-metal3/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then counts=("$@"); else counts=(10 30 100); fi
unhealthy=${BENCH_UNHEALTHY:-10}
[[ $unhealthy =~ ^[0-9]+$ ]] || { echo "metal3_scale: BENCH_UNHEALTHY='$unhealthy' is not a host count" >&2; exit 2; }
max=0
for n in "${counts[@]}"; do
  [[ $n =~ ^[1-9][0-9]{0,3}$ ]] || { echo "metal3_scale: '$n' is not a host count from 1 to 9999" >&2; exit 2; }
  [ "$n" -le "$max" ] || max=$n
done
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
out=$cache/bench-metal3
state=$cache/metal3
mkdir -p "$out"
export METAL3_EXTRA_SYSTEMS=$max
export SLIME_CACHE=$cache
kubeconfig=$cache/k8s/kubeconfig
export K8S_AUTH_KUBECONFIG=$kubeconfig   # the Metal3 tier's control plane, not a lab's
py=${PYTHON:-$cache/venv/bin/python}
[ -x "$py" ] || py=python3

# CPU-seconds (user + system) a service has used so far: its process group (setsid'd by the scripts).
svc_cpu() {
  local pidf=$1 pid
  pid=$(awk '{ print $1; exit }' "$pidf" 2>/dev/null) || { echo 0; return; }
  ps -o cputimes= --sid "$pid" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
services() { for s in ironic fake-ipa redfish; do echo "$s=$(svc_cpu "$state/run/$s.pid")"; done
             echo "baremetal-operator=$(svc_cpu "$cache/k8s/run-metal3/baremetal-operator.pid")"; }

echo "metal3_scale: starting the Metal3 tier's stack with $max extra fake systems (molecule create, converge)"
molecule destroy -s metal3 >"$out/destroy-before.log" 2>&1 || true
molecule create -s metal3 >"$out/create.log" 2>&1 || { tail -30 "$out/create.log"; exit 1; }
trap 'molecule destroy -s metal3 >"$out/destroy.log" 2>&1 || true' EXIT
# Slinky and the tier's own two hosts, so the waves find a converged cluster (slurm.key, controller).
molecule converge -s metal3 >"$out/converge.log" 2>&1 || { tail -30 "$out/converge.log"; exit 1; }

for i in "${!counts[@]}"; do
  n=${counts[$i]}
  vars=$out/hosts-$n.yml
  # The first N of the fake systems metal3-test-services.sh added, as its endpoints.json lists them
  # (address, MAC, the BMC's credentials, the test image).
  (umask 077; "$py" - "$n" "$state/endpoints.json" >"$vars" <<'PY'
import json, sys
n, endpoints = int(sys.argv[1]), json.load(open(sys.argv[2]))
systems = sorted((s for s in endpoints["redfish"]["systems"] if s["name"].startswith("bm-scale-")),
                 key=lambda s: int(s["name"].rsplit("-", 1)[1]))[:n]
hosts = [{
    "name": s["name"].replace("bm-", "", 1),
    "bmc": {"address": "redfish+" + endpoints["redfish"]["endpoint"] + s["system_id"],
            "username": endpoints["username"], "password": endpoints["password"]},
    "boot_mac": s["macs"][0],
    "boot_mode": "UEFI", "inspect": False, "automated_cleaning_mode": "disabled",
    "image": {"url": endpoints["http"]["image"], "checksum": endpoints["http"]["checksum"],
              "checksum_type": "sha256", "format": "qcow2"},
    "root_device_hints": {"deviceName": "/dev/sda"},
} for s in systems]
# JSON is YAML: the role's defaults for the wait (10-s polls, an hour at most), as a site runs it.
print(json.dumps({"metal3_hosts_list": hosts, "metal3_hosts_wait_delay": 10, "metal3_hosts_wait_timeout": 3600}))
PY
  )
  before=$(services)
  rc=0
  /usr/bin/time -f '%e %U %S' -o "$out/time-$n" \
    molecule converge -s metal3 -- --tags metal3 -e "@$vars" >"$out/wave-$n.log" 2>&1 || rc=$?
  after=$(services)
  read -r wall user sys <"$out/time-$n"
  echo "== $n hosts: site.yml --tags metal3 (molecule converge) exit $rc, $wall s wall," \
    "$(awk -v u="$user" -v s="$sys" -v n="$n" 'BEGIN { printf "%.1f CPU-s on the control node (%.2f per host)", u + s, (u + s) / n }')"
  [ "$rc" = 0 ] || { echo "   failed: $(grep -E '^fatal:|^failed:' "$out/wave-$n.log" | head -3 | cut -c1-400)"; }
  # What baremetal-operator recorded for each host, and the services' CPU during the wave.
  KUBECONFIG=$kubeconfig "$py" - "$n" "$before" "$after" <<'PY'
import datetime, sys
from kubernetes import client, config
n, before, after = int(sys.argv[1]), sys.argv[2], sys.argv[3]
config.load_kube_config()
items = client.CustomObjectsApi().list_namespaced_custom_object("metal3.io", "v1alpha1", "metal3", "baremetalhosts")["items"]
ts = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None
hosts = [h for h in items if h["metadata"]["name"].startswith("scale-")]
states = {}
for h in hosts:
    st = h.get("status", {}).get("provisioning", {}).get("state", "?")
    states[st] = states.get(st, 0) + 1
reg = [ts(h["status"]["operationHistory"]["register"]["start"]) for h in hosts
       if h.get("status", {}).get("operationHistory", {}).get("register", {}).get("start")]
prov = [(ts(h["status"]["operationHistory"]["provision"]["end"]) - ts(h["status"]["operationHistory"]["provision"]["start"]),
         ts(h["status"]["operationHistory"]["provision"]["end"]), h["metadata"]["name"])
        for h in hosts if h.get("status", {}).get("operationHistory", {}).get("provision", {}).get("end")]
print("   hosts: %d of %d listed, by state %s" % (len(hosts), n, ", ".join("%s %d" % kv for kv in sorted(states.items()))))
if reg and prov:
    slow = max(prov)
    print("   first register to last provisioned: %.0f s; provision per host: median %.0f s, slowest %.0f s (%s)" % (
        (max(p[1] for p in prov) - min(reg)).total_seconds(),
        sorted(p[0] for p in prov)[len(prov) // 2].total_seconds(), slow[0].total_seconds(), slow[2]))
b = dict(kv.split("=") for kv in before.split())
a = dict(kv.split("=") for kv in after.split())
print("   CPU-s during the wave: " + ", ".join("%s %.0f" % (k, float(a[k]) - float(b[k])) for k in a))
PY
  if [ "$n" = "$max" ] && [ "$unhealthy" -gt 0 ]; then
    # Remediation's guards among this wave's hosts (benchmarks/metal3_remediate.yml), with the tier's inventory.
    "$py" -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))["provisioner"]["inventory"]["group_vars"]["all"]))' \
      molecule/metal3/molecule.yml >"$out/group-vars.json"
    rc=0
    ANSIBLE_CALLBACK_RESULT_FORMAT=json /usr/bin/time -f '%e %U %S' -o "$out/time-remediate" \
      ansible-playbook -i localhost, -c local -e ansible_python_interpreter="$py" -e "@$out/group-vars.json" -e "@$vars" \
      -e bench_unhealthy="$unhealthy" ${BENCH_MAX_CONCURRENT:+-e metal3_hosts_remediation_max_concurrent=$BENCH_MAX_CONCURRENT} \
      benchmarks/metal3_remediate.yml >"$out/remediate-$n.log" 2>&1 || rc=$?
    read -r wall user sys <"$out/time-remediate"
    echo "   remediation (exit $rc, $wall s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }') CPU-s):" \
      "$(sed -n 's/^ *"msg": "\(remediation at .*\)",\?$/\1/p' "$out/remediate-$n.log")"
    [ "$rc" = 0 ] || { echo "   failed: $(grep -E '^fatal:|^failed:' "$out/remediate-$n.log" | head -3 | cut -c1-400)"; }
  fi
  if [ "$i" = $((${#counts[@]} - 1)) ]; then
    echo "   (the last wave's hosts go with the stack: molecule destroy)"
    continue
  fi
  t2=$(date +%s)
  KUBECONFIG=$kubeconfig "$py" - <<'PY'
import time
from kubernetes import client, config
config.load_kube_config()
api = client.CustomObjectsApi()
def names():
    return [h["metadata"]["name"] for h in api.list_namespaced_custom_object("metal3.io", "v1alpha1", "metal3", "baremetalhosts")["items"]
            if h["metadata"]["name"].startswith("scale-")]
for name in names():
    api.delete_namespaced_custom_object("metal3.io", "v1alpha1", "metal3", "baremetalhosts", name)
deadline = time.time() + 3600
while names() and time.time() < deadline:
    time.sleep(5)
left = names()
if left:
    raise SystemExit("metal3_scale: %d hosts still deprovisioning after an hour: %s" % (len(left), ", ".join(left[:5])))
PY
  echo "   deleted (deprovisioned through Ironic) in $(( $(date +%s) - t2 )) s"
done
echo "settings: BMO_CONCURRENCY unset (baremetal-operator v0.13.2: min(CPUs, 8) = $(( $(nproc) < 8 ? ($(nproc) < 2 ? 2 : $(nproc)) : 8 )) reconciles at once, main.go)," \
  "PROVISIONING_LIMIT unset (20 hosts busy in Ironic at once, pkg/provisioner/ironic/factory.go); Ironic: one process" \
  "(API + conductor), sqlite, sync_power_state_interval 60, ramdisk_heartbeat_timeout 20 (tests/integration/metal3/metal3-test-services.sh)"
