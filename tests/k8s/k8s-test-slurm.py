# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet of the test tier for Slinky's Slurm pods (started by tests/k8s/k8s-test-cluster.sh).

kwok reports the pods of Slinky's chart Running, but runs nothing in them. Slinky's operator
needs more than that: it makes no NodeSet pod before slurmrestd answers it
(internal/controller/nodeset/nodeset_sync.go, step RefreshNodeCache, StopOnError), and it
deletes a NodeSet pod whose Slurm node never registers ("Slurm node is not registered but
pod is healthy"). So this runs, in podman containers of the lab's Slurm 26.05 image, what the
pods of namespace NAMESPACE would run:

- the controller and restapi pods: slurmctld and slurmrestd in one container, with the
  controller pod's /etc/slurm as the operator makes it (its ConfigMap <controller>-config,
  the Controller's configFileRefs, the slurm.key and jwt.key Secrets) and the slurmrestd
  environment of the operator's restapi container (internal/builder/restapibuilder);
- every scheduled NodeSet pod: slurmd with the pod's hostname (the node's name with
  hostNetwork) and the arguments the operator gave its slurmd container (-Z --conf-server ...
  --conf Features=...), and slurm.key.

The containers share a podman network on which the controller has a fixed address that the
name in SlurmctldHost=NAME(ADDRESS) resolves to; slurmrestd is published on 127.0.0.1:6820,
where tests/k8s/k8s-test-operator.sh points the RestApi Service's name. A changed configuration
restarts slurmctld (as the operator's config hash rolls the pod); a new or deleted pod starts
or removes its slurmd. On SIGTERM every container is removed.

usage: python3 k8s-test-slurm.py SERVER CA_FILE ADMIN_TOKEN_FILE NAMESPACE RUN_DIR IMAGE
"""

import base64
import hashlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request

NETWORK, SUBNET, CONTROLLER_IP = "slime-k8s", "10.129.0.0/24", "10.129.0.10"
LABEL = "slime.hybrid/k8s-test"
CONTROLLER = "slime-k8s-slurmctld"

server, ca, token_file, namespace, run, image = sys.argv[1:7]
etc = os.path.join(run, "slurmctld-etc")
ctx = ssl.create_default_context(cafile=ca)


def log(msg):
    print("k8s-test-slurm: %s %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def get(path):
    req = urllib.request.Request(server + path, headers={"Authorization": "Bearer " + open(token_file).read().strip()})
    return json.load(urllib.request.urlopen(req, context=ctx, timeout=10))


def podman(*args, check=True):
    return subprocess.run(("podman",) + args, check=check, capture_output=True, text=True).stdout.strip()


def running(name):
    return podman("container", "inspect", "-f", "{{.State.Running}}", name, check=False) == "true"


def ours():
    """{container name: the pod UID it runs} of every container this script made."""
    out = podman("ps", "-a", "--filter", "label=" + LABEL, "--format", '{{.Names}}\t{{index .Labels "%s"}}' % LABEL)
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)


def remove(name):
    log("removing %s" % name)
    podman("rm", "-f", "-t", "2", name, check=False)


def render(controller):
    """Write the controller pod's /etc/slurm into etc; return (hash, SlurmctldHost name, address)."""
    name = controller["metadata"]["name"]
    spec = controller["spec"]
    files = {}
    for ref in [{"name": name + "-config"}] + list(spec.get("configFileRefs") or []):
        files.update(get("/api/v1/namespaces/%s/configmaps/%s" % (namespace, ref["name"]))["data"])
    for ref, path in ((spec["slurmKeyRef"], "slurm.key"), (spec["jwtKeyRef"], "jwt.key")):
        secret = get("/api/v1/namespaces/%s/secrets/%s" % (namespace, ref["name"]))
        files[path] = base64.b64decode(secret["data"][ref["key"]]).decode("latin-1")
    os.makedirs(etc, mode=0o755, exist_ok=True)
    os.chmod(etc, 0o755)
    digest = hashlib.sha256()
    for path in sorted(files):
        full = os.path.join(etc, path)
        with open(full, "w", encoding="latin-1") as out:
            out.write(files[path])
        if path.endswith(".key"):
            os.chmod(full, 0o600)
            os.chown(full, 401, 401)  # slurm in the image, as fsGroup 401 gives the pod
        else:
            os.chmod(full, 0o644)
        digest.update(path.encode() + b"\0" + files[path].encode("latin-1"))
    host = [line.split("=", 1)[1].strip() for line in files["slurm.conf"].splitlines() if line.startswith("SlurmctldHost=")][0]
    host_name, _paren, host_addr = host.rstrip(")").partition("(")
    return digest.hexdigest()[:16], host_name, host_addr or host_name


CONTROLLER_SCRIPT = """
state=$(sed -n 's/^StateSaveLocation=//p' /etc/slurm/slurm.conf)
mkdir -p "$state" /var/log/slurm /run/slurmctld && chown slurm:slurm "$state" /var/log/slurm /run/slurmctld
slurmctld -D -i &
for i in $(seq 50); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
SLURM_JWT=daemon SLURMRESTD_SECURITY=disable_unshare_files,disable_unshare_sysv \\
  setpriv --reuid 65534 --regid 65534 --clear-groups slurmrestd -s openapi/slurmctld 0.0.0.0:6820 &
wait -n; echo "a Slurm daemon exited"; tail -20 /var/log/slurm/slurmctld.log
"""


def start_controller(digest, host_name, host_addr):
    log("starting slurmctld + slurmrestd as %s(%s) (config %s)" % (host_name, host_addr, digest))
    podman("run", "-d", "--name", CONTROLLER, "--label", "%s=controller-%s" % (LABEL, digest),
           "--hostname", host_name, "--network", NETWORK, "--ip", CONTROLLER_IP,
           "--add-host", "%s:127.0.0.1" % host_addr, "-p", "127.0.0.1:6820:6820",
           "-v", etc + ":/etc/slurm:ro", "--entrypoint", "/bin/bash", image, "-c", CONTROLLER_SCRIPT)


def start_slurmd(name, pod, host_addr):
    container = [c for c in pod["spec"]["containers"] if c["name"] == "slurmd"][0]
    # As a kubelet names the pod's host: the node's name on the host network, else spec.hostname.
    hostname = pod["spec"]["nodeName"] if pod["spec"].get("hostNetwork") else (pod["spec"].get("hostname") or pod["metadata"]["name"])
    log("starting slurmd for pod %s as %s: slurmd %s" % (pod["metadata"]["name"], hostname, " ".join(container.get("args", []))))
    podman("run", "-d", "--name", name, "--label", "%s=%s" % (LABEL, pod["metadata"]["uid"]),
           "--hostname", hostname, "--network", NETWORK, "--add-host", "%s:%s" % (host_addr, CONTROLLER_IP),
           "-v", os.path.join(etc, "slurm.key") + ":/etc/slurm/slurm.key:ro", "--entrypoint", "/usr/sbin/slurmd",
           image, "-D", *container.get("args", []))


def stop(*_args):
    for name in ours():
        remove(name)
    sys.exit(0)


def main():
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if subprocess.run(["podman", "network", "exists", NETWORK], check=False).returncode != 0:
        podman("network", "create", "--subnet", SUBNET, NETWORK)
    while True:
        try:
            step()
        except Exception as exc:  # the API or podman not ready yet: try again
            log("waiting: %s" % ((str(exc).splitlines() or [type(exc).__name__])[0][:200]))
        time.sleep(3)


def step():
    containers = ours()
    controllers = get("/apis/slinky.slurm.net/v1beta1/namespaces/%s/controllers" % namespace)["items"]
    if not controllers:
        for name in containers:
            remove(name)
        return
    digest, host_name, host_addr = render(controllers[0])
    if containers.get(CONTROLLER) != "controller-" + digest or not running(CONTROLLER):
        if CONTROLLER in containers:
            remove(CONTROLLER)
        start_controller(digest, host_name, host_addr)
    pods = get("/api/v1/namespaces/%s/pods?labelSelector=app.kubernetes.io/name%%3Dslurmd" % namespace)["items"]
    wanted = {}
    for pod in pods:
        if pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp"):
            wanted["slime-k8s-" + pod["metadata"]["name"]] = pod
    for name, uid in containers.items():
        if name != CONTROLLER and (name not in wanted or wanted[name]["metadata"]["uid"] != uid):
            remove(name)
    for name, pod in wanted.items():
        if containers.get(name) != pod["metadata"]["uid"] or not running(name):
            podman("rm", "-f", "-t", "1", name, check=False)
            start_slurmd(name, pod, host_addr)


if __name__ == "__main__":
    main()
