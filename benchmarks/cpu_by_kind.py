"""Where a run's CPU-seconds went on this machine, by what spent them: benchmarks/test.sh runs it beside
`make test`.

    python3 cpu_by_kind.py sample OUT.json     sample until SIGTERM, then write OUT.json
    python3 cpu_by_kind.py report OUT.json     print the table

Every 2 s it reads:
- each podman container's own cgroup (cpuacct.usage, exact: everything the container ran, short
  processes included), named by podman; a lab's containers are named by its slot (`kube-cp`, `lab2-bm-1`);
- the long-lived processes inside the containers by command name (utime + stime from /proc), so that a
  container's time splits into Kubernetes, Slurm's daemons and the operators in pods; what the samples miss
  (short processes: Ansible's modules on the hosts, apt, dpkg) is the container's rest.
The machine's busy time is benchmarks/test.sh's (/proc/stat); the control node's own share (Ansible,
molecule, pytest, the builds) is what scripts/test-tiers.sh counts per tier (bash `times`); the machine's
busy time less the containers and the tiers is the rest (the Metal3 tier's services, which run detached,
and the machine's own). Measures; asserts nothing.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

CGROUP = "/sys/fs/cgroup/cpuacct/libpod_parent"
KINDS = [  # (kind, command names as /proc/PID/stat shows them, 15 characters at most)
    ("Kubernetes", {"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kubelet", "containerd",
                    "containerd-shim", "kube-proxy", "coredns", "runc", "runc:[2:INIT]", "ctr", "pause", "portmap",
                    "bridge", "host-local", "loopback"}),
    ("Slurm's daemons", {"slurmctld", "slurmd", "slurmdbd", "slurmrestd", "slurmstepd", "sackd", "mariadbd",
                         "slurmd-wlm", "(slurmd)"}),
    ("operators in pods", {"manager", "webhook", "controller", "cainjector", "supervisord", "store",
                           "prometheus", "node_exporter", "slurm-exporter"}),
]
HZ = os.sysconf("SC_CLK_TCK")


def sample(out):
    names, usage, procs, stop = {}, {}, {}, []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    def name_of(cid):
        if cid not in names:
            try:
                listing = subprocess.run(["podman", "ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Names}}"],
                                         capture_output=True, text=True, timeout=30, check=False).stdout
                for line in listing.splitlines():
                    full, name = (line.split(" ", 1) + [""])[:2]
                    names[full[:12]] = name
            except (OSError, subprocess.SubprocessError):
                pass
            names.setdefault(cid, cid)
        return names[cid]

    first_pass = True
    while not stop:
        try:
            entries = os.listdir(CGROUP)
        except OSError:
            entries = []
        for entry in entries:
            if not entry.startswith("libpod-"):
                continue
            cid = entry[7:19]
            try:
                with open(os.path.join(CGROUP, entry, "cpuacct.usage")) as f:
                    used = int(f.read()) / 1e9
            except (OSError, ValueError):
                continue
            if cid not in usage:
                # a container running at the first pass counts from there; one created later from its start
                usage[cid] = [name_of(cid), used if first_pass else 0.0, used]
            usage[cid][2] = used
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cgroup" % pid) as f:
                    cg = f.read()
                m = re.search(r"libpod-([0-9a-f]{12})", cg)
                if not m:
                    continue
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read()
            except OSError:
                continue
            fields = st[st.rindex(")") + 2:].split()
            ticks = (int(fields[11]) + int(fields[12])) / HZ
            key = "%s/%s" % (pid, fields[19])
            if key not in procs:
                # a process already running at the first pass counts from there
                procs[key] = [m.group(1), st[st.index("(") + 1:st.rindex(")")], ticks if first_pass else 0.0, ticks]
            procs[key][3] = ticks
        first_pass = False
        time.sleep(2)
    containers, split = {}, {}
    for name, base, last in usage.values():
        containers[name] = containers.get(name, 0.0) + last - base
    for cid, comm, base, last in procs.values():
        name = names.get(cid, cid)
        split.setdefault(name, {})
        split[name][comm] = split[name].get(comm, 0.0) + last - base
    with open(out, "w") as f:
        json.dump({"containers": containers, "split": split}, f)


def lab_of(name):
    m = re.match(r"lab(\d+)-", name)
    if m:
        return "lab " + m.group(1)
    if re.match(r"(kube-cp|kube-\d+|bm-[\w-]+)$", name):
        return "lab 1"
    return "other containers"


def report(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for name, total in data["containers"].items():
        lab = lab_of(name)
        row = rows.setdefault(lab, {"all": 0.0})
        row["all"] += total
        for comm, secs in data["split"].get(name, {}).items():
            kind = next((k for k, comms in KINDS if comm in comms), None)
            if kind:
                row[kind] = row.get(kind, 0.0) + secs
    kinds = [entry[0] for entry in KINDS]
    print("containers' CPU-s by lab (exact per container; the split by sampled daemons, the rest is short processes:"
          " Ansible's modules on the hosts, apt, dpkg, systemd)")
    print("  %-17s %7s " % ("lab", "all") + " ".join("%17s" % k for k in kinds) + " %9s" % "the rest")
    total = {"all": 0.0}
    for lab in sorted(rows):
        row = rows[lab]
        if row["all"] < 0.5:  # cgroups podman left of removed containers
            continue
        rest = row["all"] - sum(row.get(k, 0.0) for k in kinds)
        print("  %-17s %7.0f " % (lab, row["all"]) + " ".join("%17.0f" % row.get(k, 0.0) for k in kinds) + " %9.0f" % rest)
        for k in ["all"] + kinds:
            total[k] = total.get(k, 0.0) + row.get(k, 0.0)
    rest = total["all"] - sum(total.get(k, 0.0) for k in kinds)
    print("  %-17s %7.0f " % ("all labs", total["all"]) + " ".join("%17.0f" % total.get(k, 0.0) for k in kinds)
          + " %9.0f" % rest)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("sample", "report"):
        sys.exit("usage: cpu_by_kind.py sample|report FILE.json")
    (sample if sys.argv[1] == "sample" else report)(sys.argv[2])
