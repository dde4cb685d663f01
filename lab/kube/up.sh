#!/usr/bin/env bash
# Bring up the real-Kubernetes lab: a Kubernetes cluster of three node containers (kubelet,
# containerd, runc, the upstream CNI plugins, kube-proxy; the control plane on the first) with
# CoreDNS as cluster DNS, and the lab's bare-metal hosts (lab/lib.sh) beside them on the external
# network. Nothing of Slurm or Slinky is installed here: playbooks/site.yml does that.
# Idempotent: a cluster that is up is kept. `up.sh --build-only` builds what the nodes run and
# stops there. See lab/kube/README.md.
#
# Pod network: each node's CNI is bridge + host-local (its spec.podCIDR, given by the
# controller-manager) + portmap (hostPorts); each node routes the other nodes' podCIDRs to
# them (what flannel's host-gw backend does; flannel itself does not build from the Go proxy
# here). Pod egress leaving the cluster CIDR is masqueraded to the node address, as common
# CNIs do, except to the bare-metal network in routed mode (SLIME_LAB_MODE), where pods and
# bare metal see each other's real addresses.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lab/kube/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/../lib.sh"
case "$LAB_MODE" in nat|routed|hostnetwork) ;; *)
  echo "lab/kube: SLIME_LAB_MODE=$LAB_MODE is not one of nat, routed, hostnetwork" >&2; exit 2 ;;
esac
die() { echo "lab/kube: ERROR: $*" >&2; exit 1; }
log() { echo "lab/kube: $*"; }
t0=$SECONDS

# --- what the nodes run: binaries, images -------------------------------------------------
mkdir -p "$KUBE_DIR"
build_log=$KUBE_DIR/build.log
: >"$build_log"
# waiting PID WHAT: wait for a build or an import, saying every 50 s that it still runs (a first run's builds
# are long and quiet: a line at least once a minute); its status is wait's.
waiting() {
  local t=$SECONDS next=50
  while kill -0 "$1" 2>/dev/null; do
    sleep 2
    if [ $((SECONDS - t)) -ge $next ]; then log "  $2: still running ($((SECONDS - t)) s)"; next=$((next + 50)); fi
  done
  wait "$1"
}
build() {  # build CMD...: output to $build_log, shown when it fails; each step said as it starts and ends, with its time
  local t=$SECONDS what=${1#"$repo"/}
  log "  $what: ..."
  "$@" >>"$build_log" 2>&1 &
  waiting $! "$what" || die "$1 failed: $(tail -15 "$build_log")"
  log "  $what: done ($((SECONDS - t)) s)"
}
# A first run builds everything from source: say so, and roughly how long, before the long quiet part.
if [ ! -x "$KUBE_BIN/kubelet" ] || ! podman image exists "$KUBE_NODE_IMAGE" 2>/dev/null; then
  log "first run: building the Kubernetes binaries, Slinky's operator, CoreDNS and cert-manager (one go build), the"
  log "  hosts' and nodes' images and Slinky's containers (debootstrap, apt): about 8-12 minutes on 2 cores, once;"
  log "  each step is named as it starts and ends. Logs: $build_log, $KUBE_DIR/build-images.log, $KUBE_DIR/build-node.log"
fi
# On a first run the builds overlap: the images made from Debian's packages (the hosts', Slinky's
# and the nodes': debootstrap, apt, mostly waiting on the mirror and the disk) beside the Go build
# (Kubernetes, CoreDNS, cert-manager, Slinky's operator in one), which keeps both CPUs busy. Each
# has a log of its own.
images_log=$KUBE_DIR/build-images.log node_log=$KUBE_DIR/build-node.log
log "  the bare-metal hosts' image and Slinky's containers: ... (beside the next steps)"
( "$repo/lab/build-image.sh" && "$here/images.sh" slurmctld slurmd slurmrestd login logfile ) >"$images_log" 2>&1 &
images_pid=$!
node_image() {  # the node containers' image (Debian trixie: systemd, containerd, runc, CNI plugins)
  local sum
  sum=$(cat "$here"/node/* | sha256sum | cut -c1-16)
  if [ "$(podman image inspect -f '{{ index .Labels "slime.lab.sum" }}' "$KUBE_NODE_IMAGE" 2>/dev/null)" != "$sum" ]; then
    log "building $KUBE_NODE_IMAGE"
    podman build -q --label "slime.lab.sum=$sum" --build-arg "MINBASE=$("$repo/lab/minbase.sh" trixie)" \
      -t "$KUBE_NODE_IMAGE" -f "$here/node/Containerfile" "$here/node" >/dev/null
  fi
}
log "  the node image: ... (beside the next steps)"
node_image >"$node_log" 2>&1 &
node_pid=$!
build "$repo/tests/k8s/k8s-test-bins.sh"       # kubelet, kube-proxy, kubectl, the control plane, helm, Slinky's operator, CoreDNS, cert-manager
build "$repo/tests/k8s/slinky-charts.sh"       # Slinky's charts
build "$here/cert-manager-chart.sh"            # cert-manager's chart
waiting "$images_pid" "the bare-metal hosts' image and Slinky's containers" || die "the bare-metal hosts' image or Slinky's containers failed: $(tail -15 "$images_log")"
log "  the bare-metal hosts' image and Slinky's containers: ready"
build "$here/images.sh" --require-all          # the pods' other images (Go binaries, pause), the rest cached
pause_ref=$("$here/images.sh" list | sed -n 's/^pause=//p')
grep -qF "sandbox_image = \"$pause_ref\"" "$here/node/containerd.toml" \
  || die "lab/kube/node/containerd.toml must name the sandbox image lab/kube/images.sh builds ($pause_ref)"
waiting "$node_pid" "the node image" || die "the node image $KUBE_NODE_IMAGE failed: $(tail -15 "$node_log")"
log "  the node image: ready"
# The archives this lab's nodes import: all.tar, mariadb.tar where the collection runs the accounting
# database (SLIME_LAB_ACCOUNTING not false, as the lab inventory reads it), prometheus.tar where a test
# scrapes (SLIME_LAB_PROMETHEUS=true: molecule ee and kube).
image_archives="all.tar"
case ${SLIME_LAB_ACCOUNTING:-true} in [Ff]alse|[Nn]o|0|[Oo]ff) ;; *) image_archives+=" mariadb.tar" ;; esac
[ "${SLIME_LAB_PROMETHEUS:-false}" != true ] || image_archives+=" prometheus.tar"
declare -A archive_refs   # archive -> the references it holds, read once for every node
for a in $image_archives; do
  [ -s "$KUBE_IMAGES/$a" ] || die "no $KUBE_IMAGES/$a: lab/kube/images.sh --require-all saves it"
  archive_refs[$a]=$("$here/images.sh" refs "$a") || die "lab/kube/images.sh refs $a failed"
done
log "binaries and images ready ($((SECONDS - t0)) s)"
if [ "${1:-}" = --build-only ]; then
  build "$repo/tests/k8s/scc-admission-bin.sh"   # OpenShift's SCC admission (SLIME_KUBE_OPENSHIFT=1)
  exit 0
fi

podman network exists "$LAB_EXT_NET" || {
  lab_clear_stale_bridges "$LAB_EXT_CIDR"
  podman network create --disable-dns --subnet "$LAB_EXT_CIDR" "$LAB_EXT_NET" >/dev/null
}

# The host bridges frames between the nodes and bare metal through br_netfilter, so podman's
# masquerade of the external network would also rewrite bare metal's packets to pod IPs that it
# routes through a node (network_mode routed): slurmctld would record the host's bridge
# address as the bare-metal node's NodeAddr. A site's switch does not NAT: exempt them.
iptables -w -t nat -C POSTROUTING -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev --physdev-is-bridged \
    -m comment --comment slime-kube -j ACCEPT 2>/dev/null \
  || iptables -w -t nat -I POSTROUTING -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev --physdev-is-bridged \
    -m comment --comment slime-kube -j ACCEPT
# Bare metal reaches pods only through the nodes (NodePort and hostPorts; routes via a node in
# network_mode routed, which the host bridges). A packet for a pod IP that bare metal hands its
# default gateway, the host, would leave the machine, and this workplace's network accepts any
# TCP connection: refused here, as a site's router with no route to the pod network does.
iptables -w -C FORWARD -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev ! --physdev-is-bridged \
    -m comment --comment slime-kube -j REJECT 2>/dev/null \
  || iptables -w -I FORWARD -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev ! --physdev-is-bridged \
    -m comment --comment slime-kube -j REJECT

# --- certificates and credentials (made once per cluster) ---------------------------------
pki=$KUBE_DIR/pki
if [ ! -s "$pki/tokens.csv" ]; then
  rm -rf "$pki.tmp" && mkdir -p "$pki.tmp" && chmod 0700 "$pki.tmp"
  (
    cd "$pki.tmp"
    # The extensions kubeadm gives its CA and certificates: clients that verify strictly (Python
    # 3.13's default TLS context, X509_STRICT, as in the execution environment) refuse a CA
    # without keyUsage and a certificate without an authority key identifier.
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj /CN=slime-kube-ca -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign 2>/dev/null
    cert() {  # cert NAME SUBJECT EXTENDED_KEY_USAGE [SAN]
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -out "$1.crt" \
        -extfile <(printf '%s\n' basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature,keyEncipherment \
                     "extendedKeyUsage=$3" authorityKeyIdentifier=keyid ${4:+"subjectAltName=$4"}) 2>/dev/null
      rm -f "$1.csr"
    }
    cert apiserver /CN=kube-apiserver serverAuth "IP:$KUBE_API_IP,IP:$KUBE_API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # Static tokens: one identity per component, as kubeadm gives them certificates; the
    # default RBAC bindings of these users (system:kube-proxy, ...) and the Node authorizer
    # apply to them unchanged.
    tok() { openssl rand -hex 24; }
    {
      echo "$(tok),admin,admin,\"system:masters\""
      echo "$(tok),system:kube-controller-manager,system:kube-controller-manager"
      echo "$(tok),system:kube-scheduler,system:kube-scheduler"
      echo "$(tok),system:kube-proxy,system:kube-proxy"
      for n in $KUBE_NODES; do echo "$(tok),system:node:${n%%=*},system:node:${n%%=*},\"system:nodes\""; done
    } >tokens.csv
    chmod 0600 ./*
  )
  rm -rf "$pki" && mv "$pki.tmp" "$pki"
fi
token() { awk -F, -v u="$1" '$2==u{print $1}' "$pki/tokens.csv"; }
kubeconfig() {  # kubeconfig USER SERVER
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: slime-kube
  cluster: {server: "$2", certificate-authority-data: $(base64 -w0 "$pki/ca.crt")}
users:
- name: "$1"
  user: {token: $(token "$1")}
contexts:
- name: slime-kube
  context: {cluster: slime-kube, user: "$1"}
current-context: slime-kube
EOF
}
(umask 077; kubeconfig admin "https://$KUBE_API_IP:6443" >"$KUBE_KUBECONFIG")
kc() { "$KUBE_BIN/kubectl" --kubeconfig "$KUBE_KUBECONFIG" "$@"; }

# --- node containers ----------------------------------------------------------------------
node_dir() { echo "$KUBE_DIR/nodes/$1"; }
write_node_config() {  # write_node_config NAME IP ROLE
  local name=$1 ip=$2 role=$3 d
  d=$(node_dir "$name")
  mkdir -p "$d/cni" && chmod 0700 "$d"
  cat >"$d/node.env" <<EOF
NODE_NAME=$name
NODE_IP=$ip
ROLE=$role
SERVICE_CIDR=$KUBE_SERVICE_CIDR
CLUSTER_CIDR=$KUBE_CLUSTER_CIDR
NODE_LABELS=slime.hybrid/lab=kube
EOF
  (umask 077
   kubeconfig "system:node:$name" "https://$KUBE_API_IP:6443" >"$d/kubelet.kubeconfig"
   kubeconfig system:kube-proxy "https://$KUBE_API_IP:6443" >"$d/kube-proxy.kubeconfig"
   if [ "$role" = control-plane ]; then
     kubeconfig system:kube-controller-manager https://127.0.0.1:6443 >"$d/controller-manager.kubeconfig"
     kubeconfig system:kube-scheduler https://127.0.0.1:6443 >"$d/scheduler.kubeconfig"
   fi)
  # cgroupfs driver on this host's cgroup v1 hybrid layout (the runtime config the kubelet
  # would take from containerd is "not implemented" in 1.7): failCgroupV1 off, and a
  # cgroupRoot of its own per node (made below in every v1 hierarchy). Image GC off: the
  # images were imported, no registry can give them back. Eviction thresholds low: the
  # nodes share the machine's disk and memory with everything else.
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /etc/kube/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /slime-$name
failCgroupV1: false
failSwapOn: false
clusterDNS: [$KUBE_DNS_IP]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
EOF
  # conntrack.maxPerCore 0: kube-proxy leaves the host-wide conntrack sysctls alone (a node
  # container may not set them; kind does the same).
  cat >"$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /etc/kube/kube-proxy.kubeconfig}
hostnameOverride: $name
mode: iptables
clusterCIDR: $KUBE_CLUSTER_CIDR
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# Every lab's nodes and hosts take inotify instances from one per-user limit of this machine (all run as
# root): containerd's CRI plugin, the kubelets, systemd in each host, the pods. The kernel's default of 128
# instances is spent by three labs side by side, and a fourth node's containerd then starts without its CRI
# plugin ("failed to create fsnotify watcher: too many open files"), so its kubelet never registers. Raised
# as kind's known issues advise for several clusters on one host ("Pod errors due to too many open files").
for kv in fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288; do
  [ "$(sysctl -n "${kv%%=*}" 2>/dev/null || echo 0)" -ge "${kv#*=}" ] || sysctl -qw "$kv" \
    || log "WARNING: could not raise ${kv%%=*} to ${kv#*=} (sysctl -w $kv as root); labs side by side may run out"
done

# A cluster started anew starts with empty storage (a teardown cut short may have left it).
cp_ctr=$(lab_ctr "${KUBE_NODES%%=*}")
podman container exists "$cp_ctr" || podman volume rm -f "$KUBE_PV_VOLUME" >/dev/null 2>&1 || true
first=1
for n in $KUBE_NODES; do
  name=${n%%=*} ip=${n#*=} ctr=$(lab_ctr "${n%%=*}")
  role=node; [ "$first" = 1 ] && role=control-plane; first=0
  if [ "$(podman inspect -f '{{.State.Running}}' "$ctr" 2>/dev/null)" = true ]; then continue; fi
  write_node_config "$name" "$ip" "$role"
  podman rm -f "$ctr" >/dev/null 2>&1 || true
  # --cgroupns=host: the kubelet manages pod cgroups under its cgroupRoot in the host's tree.
  podman run -d --name "$ctr" --hostname "$name" --label slime-lab=kube \
    --privileged --cgroupns=host --network "$LAB_EXT_NET:ip=$ip" \
    --sysctl net.ipv4.ip_forward=1 --sysctl net.ipv4.conf.all.send_redirects=0 \
    -v "$(node_dir "$name"):/etc/kube" -v "$pki:/etc/kube/pki:ro" -v "$KUBE_BIN:/opt/kube/bin:ro" \
    -v "$KUBE_IMAGES:/images:ro" -v "$ctr-containerd:/var/lib/containerd" -v "$KUBE_PV_VOLUME:/var/lib/slime-pv" \
    "$KUBE_NODE_IMAGE" >/dev/null
  log "started node $name ($ip, $role; container $ctr)"
done

# Images into every node's containerd (k8s.io namespace, where the kubelet looks) from the
# archives images.sh saves (image_archives), pinned; the nodes import in parallel.
import_images() {  # import_images NODE_CONTAINER
  local have ref refs archive missing
  for _ in $(seq $((LAB_WAIT * 2))); do podman exec "$1" ctr version >/dev/null 2>&1 && break; sleep 0.5; done
  have=$(podman exec "$1" ctr -n k8s.io images ls -q 2>/dev/null || true)
  for archive in $image_archives; do
    refs=${archive_refs[$archive]}
    missing=0
    for ref in $refs; do grep -qxF "$ref" <<<"$have" || missing=1; done
    [ "$missing" = 1 ] || continue
    podman exec "$1" ctr -n k8s.io images import "/images/$archive" >/dev/null || return 1
    for ref in $refs; do
      podman exec "$1" ctr -n k8s.io images label "$ref" io.cri-containerd.pinned=pinned >/dev/null || return 1
    done
  done
}
pids=()
log "importing the images into the nodes' containerd: ..."
for n in $KUBE_NODES; do import_images "$(lab_ctr "${n%%=*}")" & pids+=($!); done
for p in "${pids[@]}"; do waiting "$p" "importing the images" || die "importing the images into a node failed"; done
log "images imported ($((SECONDS - t0)) s)"
# containerd is up on every node (the imports spoke to it): one that started without its CRI plugin gives the
# kubelet nothing to run pods with, and the node would never register. Say so now, with containerd's reason.
for n in $KUBE_NODES; do
  cri_error=$(podman exec "$(lab_ctr "${n%%=*}")" grep -m1 -o 'failed to load plugin io.containerd.grpc.v1.cri.*' \
    /var/log/kube/containerd.log 2>/dev/null || true)
  [ -z "$cri_error" ] || die "node ${n%%=*}: containerd started without its CRI plugin, so its kubelet cannot register: $cri_error"
done

# --- pod network: podCIDRs from the controller-manager -> CNI config, routes, egress NAT ---
for _ in $(seq $((LAB_WAIT * 2))); do kc get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done
kc get --raw /readyz >/dev/null || die "kube-apiserver not ready; see podman exec $cp_ctr cat /var/log/kube/kube-apiserver.log"
podcidr() { kc get node "$1" -o jsonpath='{.spec.podCIDR}' 2>/dev/null; }
for n in $KUBE_NODES; do
  for _ in $(seq $((LAB_WAIT * 2))); do [ -n "$(podcidr "${n%%=*}")" ] && break; sleep 0.5; done
  [ -n "$(podcidr "${n%%=*}")" ] || die "node ${n%%=*} did not register with a podCIDR"
done
for n in $KUBE_NODES; do
  name=${n%%=*} ip=${n#*=} d=$(node_dir "${n%%=*}")
  cidr=$(podcidr "$name")
  cat >"$d/cni/10-slime.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "slime-pods",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  {
    echo '#!/bin/sh'
    echo "# Written by lab/kube/up.sh: routes to the other nodes' pods, pod egress NAT ($LAB_MODE mode)."
    for m in $KUBE_NODES; do
      [ "${m%%=*}" = "$name" ] && continue
      echo "ip route replace $(podcidr "${m%%=*}") via ${m#*=}"
    done
    echo "iptables -w -t nat -N SLIME-POD-EGRESS 2>/dev/null || iptables -w -t nat -F SLIME-POD-EGRESS"
    echo "iptables -w -t nat -C POSTROUTING -s $cidr -j SLIME-POD-EGRESS 2>/dev/null || iptables -w -t nat -A POSTROUTING -s $cidr -j SLIME-POD-EGRESS"
    echo "iptables -w -t nat -A SLIME-POD-EGRESS -d $KUBE_CLUSTER_CIDR -j RETURN"
    [ "$LAB_MODE" = routed ] && echo "iptables -w -t nat -A SLIME-POD-EGRESS -d $LAB_EXT_CIDR -j RETURN"
    echo "iptables -w -t nat -A SLIME-POD-EGRESS -j MASQUERADE"
  } >"$d/network.sh"
  chmod 0755 "$d/network.sh"
  podman exec "$(lab_ctr "$name")" /etc/kube/network.sh
done

for _ in $(seq $((LAB_WAIT * 2))); do
  [ "$(kc get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" = "$(wc -w <<<"$KUBE_NODES")" ] && break
  sleep 0.5
done
[ "$(kc get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" = "$(wc -w <<<"$KUBE_NODES")" ] \
  || die "nodes not Ready after $LAB_WAIT s: $(kc get nodes --no-headers 2>&1 | tr '\n' ';')"
log "nodes Ready ($((SECONDS - t0)) s)"

# --- cluster DNS ----------------------------------------------------------------------------
coredns_ref=$("$here/images.sh" list | sed -n 's/^coredns=//p')
for f in "$here"/manifests/coredns/*.yaml; do
  sed -e "s|@COREDNS_IMAGE@|$coredns_ref|" -e "s|@DNS_IP@|$KUBE_DNS_IP|" "$f"
done | kc apply -f - >/dev/null
kc -n kube-system rollout status deployment/coredns --timeout="${LAB_WAIT}s" >/dev/null \
  || die "CoreDNS did not become ready: $(kc -n kube-system get pods -l k8s-app=kube-dns --no-headers 2>&1)"
log "cluster DNS ready ($((SECONDS - t0)) s)"

# --- OpenShift mode: OpenShift's own SCC admission as the API server's webhook ---------------
if [ "${SLIME_KUBE_OPENSHIFT:-0}" = 1 ]; then
  build "$here/openshift.sh"
  log "OpenShift SCC admission on ($((SECONDS - t0)) s)"
fi

# --- storage: what a cluster's provisioner offers, as static PersistentVolumes ---------------
# slurmctld keeps its state on a claim (the chart's controller.persistence, 4Gi ReadWriteOnce), the
# accounting database on another.
# The volumes' directories are on one podman volume mounted on every node, as a site's network
# storage (NFS, Ceph): a controller pod rescheduled to another node keeps its state. Owned by
# slurm (401, Slinky's images).
podman exec "$cp_ctr" sh -c 'for i in 0 1 2; do install -d -m 0700 -o 401 -g 401 /var/lib/slime-pv/$i; done'
for i in 0 1 2; do
  cat <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: slime-pv-$i, labels: {slime.hybrid/lab: kube}}
spec:
  capacity: {storage: 4Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /var/lib/slime-pv/$i, type: Directory}
---
EOF
done | kc apply -f - >/dev/null
# The accounting database's volume (inventories/kube: slinky_accounting_database_claim selects it by its
# label), owned by MariaDB's UID 999; smaller than slurmctld's claim, which therefore never takes it.
podman exec "$cp_ctr" install -d -m 0700 -o 999 -g 999 /var/lib/slime-pv/accounting-db
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: slime-pv-accounting-db, labels: {slime.hybrid/lab: kube, slime.hybrid/pv: accounting-db}}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /var/lib/slime-pv/accounting-db, type: Directory}
EOF

# --- bare-metal hosts -------------------------------------------------------------------------
for b in $LAB_BMS; do lab_bm_run "${b%%=*}" "${b#*=}"; done
for b in $LAB_BMS; do lab_wait_booted "${b%%=*}"; lab_bm_hosts "${b%%=*}" "${b#*=}"; done

log "up in $((SECONDS - t0)) s (network mode $LAB_MODE); KUBECONFIG=$KUBE_KUBECONFIG"
kc get nodes -o wide
