#!/usr/bin/env bash
# A throw-away Kubernetes control plane for the test tier:
#   tests/k8s/k8s-test-cluster.sh up     start it, write the kubeconfig
#   tests/k8s/k8s-test-cluster.sh down   stop it and remove the cluster's state
#   tests/k8s/k8s-test-cluster.sh status
#
# What runs (binaries from tests/k8s/k8s-test-bins.sh, plain background processes, no systemd):
#   etcd, kube-apiserver         the API, with RBAC and the default admission plugins
#   kube-controller-manager      StatefulSets, ReplicaSets, ServiceAccounts, PV binding, GC ...
#   kube-scheduler               binds pods to nodes (hostPort conflicts, nodeSelector ...)
#   kwok                         plays the kubelets of $nodes Nodes: node heartbeats, pod status,
#                                pod IPs from each Node's podCIDR (kwok's own stage files), and the
#                                kubelet's status resync (tests/k8s/kwok-pod-status-resync.yaml)
#   slurm-operator               Slinky's operator, as its chart's Deployment would run it: with
#                                the token of the chart's ServiceAccount (so the chart's RBAC is
#                                what it gets), restarted when it exits, as a kubelet would
#                                (tests/k8s/k8s-test-operator.sh).
# Nothing runs in a pod: kwok reports them Running; the chart's own slurm-operator pod is
# "Running" while the real operator is the process above. No Slurm daemon runs, so the operator
# makes no NodeSet pod (it waits for slurmrestd): this control plane serves the Metal3 tier
# (molecule/metal3, no pod workers). Every claim about the Slurm pods is made on the real
# Kubernetes of lab/kube, where kubelets run Slinky's containers.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
k8s=$cache/k8s
bin=$k8s/bin
state=$k8s/cluster            # removed by `down`
data=$state/etcd-data
pki=$state/pki
run=$state/run
logs=$k8s/logs                # kept after `down`, for post-mortems
kubeconfig=$k8s/kubeconfig

# Non-default ports, so a developer's own etcd (2379/2380) or cluster (6443) does not clash.
etcd_port=${K8S_TEST_ETCD_PORT:-23790}
etcd_peer_port=${K8S_TEST_ETCD_PEER_PORT:-23800}
api_port=${K8S_TEST_API_PORT:-16443}
kwok_port=${K8S_TEST_KWOK_PORT:-10247}
service_cidr=10.96.0.0/16
# Nodes kwok plays: kwok-node-N with InternalIP 192.0.2.(10+N) and podCIDR 10.244.N.0/24.
# Slurm pods publish the same hostPorts (6818, the srun range), so the scheduler puts at most
# one of them on a node: enough nodes for the controller, a login pod and the NodeSet pods.
nodes=${K8S_TEST_NODES:-6}
# Where the chart runs the operator (tests/k8s/k8s-test-operator.sh takes its ServiceAccount).
operator_namespace=${K8S_TEST_OPERATOR_NAMESPACE:-slinky}
operator_sa=${K8S_TEST_OPERATOR_SA:-slurm-operator}
# Where the chart runs the Slurm pods (the operator's RESTAPI_HOST names its restapi Service there).
slurm_namespace=${K8S_TEST_SLURM_NAMESPACE:-slurm}

die() { echo "k8s-test-cluster: ERROR: $*" >&2; exit 1; }
log() { echo "k8s-test-cluster: $*"; }

# True when the pid file of $1 names a live process that is still $1 (after a reboot or a
# crash the pid may belong to something else, which must not be signalled).
alive() {
  local pid
  pid=$(cat "$run/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] || return 1
  # The command line tells our process from another that took the pid. While the wrapper of
  # spawn() execs the binary, /proc/PID/cmdline reads empty for a moment (seen once under load:
  # "kube-apiserver exited" at its start, while it ran on): read it again before giving up.
  for _ in 1 2 3; do
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$1" && return 0
    sleep 0.2
  done
  return 1
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Start "$@" detached from this shell (own session, so the caller's Ctrl-C or the end of
# a CI step does not take it down) and record its pid. The wrapper writes its own pid and
# then execs, so the pid file names the real process.
spawn() {
  local name=$1; shift
  rm -f "$run/$name.pid"   # a stale pid file would pass the wait below at once
  # shellcheck disable=SC2016  # $$, $0 and $@ of the inner bash
  setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$run/$name.pid" "$@" \
    >"$logs/$name.log" 2>&1 </dev/null &
  for _ in $(seq 50); do [ -s "$run/$name.pid" ] && return 0; sleep 0.1; done
  die "$name did not start (see $logs/$name.log)"
}

readyz() {
  curl -s --max-time 3 --cacert "$pki/apiserver.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" \
    "https://127.0.0.1:$api_port/readyz" 2>/dev/null
}

# api METHOD PATH [JSON]: a request to the API server as the admin.
api() {
  curl -sf --max-time 10 --cacert "$pki/apiserver.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" \
    -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "https://127.0.0.1:$api_port$2"
}

# A Node as a kubelet would register it; kwok fills in conditions, capacity and nodeInfo.
node_json() {
  cat <<EOF
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "kwok-node-$1", "annotations": {"kwok.x-k8s.io/node": "fake"},
              "labels": {"kubernetes.io/hostname": "kwok-node-$1", "kubernetes.io/os": "linux",
                         "kubernetes.io/arch": "amd64", "type": "kwok"}},
 "spec": {"podCIDR": "10.244.$1.0/24", "podCIDRs": ["10.244.$1.0/24"]},
 "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.$((10 + $1))"},
                          {"type": "Hostname", "address": "kwok-node-$1"}]}}
EOF
}

up() {
  if alive etcd && alive kube-apiserver && alive kube-controller-manager && alive kube-scheduler \
      && alive kwok && alive k8s-test-operator && [ "$(readyz)" = ok ]; then
    log "already up; KUBECONFIG=$kubeconfig"; return
  fi
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok slurm-operator; do
    [ -x "$bin/$b" ] || die "$bin/$b missing: run tests/k8s/k8s-test-bins.sh first"
  done
  down quiet   # a half-started or crashed earlier cluster: start from nothing
  for p in "$etcd_port" "$etcd_peer_port" "$api_port" "$kwok_port"; do
    port_busy "$p" && die "port 127.0.0.1:$p is in use by another process"
  done
  mkdir -p "$data" "$pki" "$run" "$logs"
  chmod 700 "$data" "$pki"

  # Service-account tokens: kube-apiserver refuses to start without a signing key and
  # an issuer (since 1.20), even though no controller here mints tokens.
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  # Static token file: token,user,uid,"groups". system:masters bypasses RBAC entirely.
  local token
  token=$(openssl rand -hex 32)
  echo "$token" >"$pki/admin.token"
  echo "$token,admin,admin,\"system:masters\"" >"$pki/tokens.csv"
  chmod 600 "$pki"/*

  log "starting etcd on 127.0.0.1:$etcd_port"
  spawn etcd "$bin/etcd" --name k8s-test --data-dir "$data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "k8s-test=http://127.0.0.1:$etcd_peer_port" --initial-cluster-state new \
    --logger zap --log-outputs stderr --log-level warn
  for _ in $(seq 100); do
    curl -s --max-time 2 "http://127.0.0.1:$etcd_port/health" | grep -q '"health":"true"' && break
    alive etcd || die "etcd exited; see $logs/etcd.log"
    sleep 0.2
  done
  curl -s --max-time 2 "http://127.0.0.1:$etcd_port/health" | grep -q '"health":"true"' \
    || die "etcd not healthy after 20 s; see $logs/etcd.log"

  log "starting kube-apiserver on 127.0.0.1:$api_port"
  # --cert-dir: with no --tls-cert-file the server makes a CA and a serving cert for
  #   localhost/127.0.0.1 there (apiserver.crt holds the cert then the CA).
  # --advertise-address 127.0.0.1 + --endpoint-reconciler-type none: the address must be
  #   local, and the reconciler would try to publish it as the Endpoints of the
  #   `kubernetes` Service, which validation rejects for loopback addresses.
  # The default admission plugins, ServiceAccount included: a pod whose ServiceAccount does
  #   not exist is refused, as on a real cluster (the controller-manager creates `default`).
  # --allow-privileged: the collection's charts use privileged / hostNetwork Pods.
  spawn kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --secure-port "$api_port" --advertise-address 127.0.0.1 \
    --endpoint-reconciler-type none \
    --cert-dir "$pki" \
    --token-auth-file "$pki/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$service_cidr" \
    --allow-privileged=true \
    --profiling=false

  # Wait for /readyz (it includes etcd, RBAC bootstrap roles and the CRD informers).
  local out=""
  for _ in $(seq 240); do
    alive kube-apiserver || die "kube-apiserver exited; last lines of $logs/kube-apiserver.log:
$(tail -20 "$logs/kube-apiserver.log")"
    if [ -f "$pki/apiserver.crt" ]; then out=$(readyz || true); [ "$out" = ok ] && break; fi
    sleep 0.5
  done
  [ "$out" = ok ] || die "kube-apiserver not ready after 120 s; see $logs/kube-apiserver.log"

  # Kubeconfig verifying the server against the CA the apiserver generated.
  local ca_data
  ca_data=$(base64 -w0 "$pki/apiserver.crt")
  umask 077
  cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: k8s-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $ca_data
users:
- name: admin
  user:
    token: $token
contexts:
- name: k8s-test
  context:
    cluster: k8s-test
    user: admin
    namespace: default
current-context: k8s-test
EOF
  # --use-service-account-credentials: each controller acts as its own ServiceAccount
  #   (system:serviceaccount:kube-system:statefulset-controller ...), as on kubeadm clusters,
  #   so admission sees the same requesting users as on a real cluster.
  # --secure-port 0 / --leader-elect=false: one instance, nothing scrapes it.
  log "starting kube-controller-manager, kube-scheduler"
  spawn kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/apiserver.crt" \
    --use-service-account-credentials --service-cluster-ip-range "$service_cidr" \
    --leader-elect=false --secure-port 0 --controllers '*,-bootstrapsigner,-tokencleaner'
  spawn kube-scheduler "$bin/kube-scheduler" \
    --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --leader-elect=false --secure-port 0

  # kwok's stage files come with its module (kustomize/stage/{node,pod}/...), unchanged.
  local stages cfg=() f
  stages=$k8s/go/mod/sigs.k8s.io/kwok@$(sed -n 's/.*kwok=\(v[^ ]*\).*/\1/p' "$bin/kwok.version")/kustomize/stage
  # node-heartbeat keeps the Ready condition fresh, or the node lifecycle controller taints them.
  for f in "$stages"/node/fast/node-*.yaml "$stages"/node/heartbeat/node-heartbeat.yaml "$stages"/pod/fast/pod-*.yaml; do
    cfg+=(--config "$f")
  done
  [ ${#cfg[@]} -ge 10 ] || die "kwok's stages not found under $stages"
  # And the kubelet's status resync, which none of kwok's stages plays (see the file).
  cfg+=(--config "$here/tests/k8s/kwok-pod-status-resync.yaml")
  log "starting kwok for $nodes nodes"
  spawn kwok "$bin/kwok" --kubeconfig "$kubeconfig" "${cfg[@]}" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --server-address "127.0.0.1:$kwok_port"
  local i
  for i in $(seq 0 $((nodes - 1))); do
    api POST /api/v1/nodes "$(node_json "$i")" >/dev/null || die "cannot create node kwok-node-$i"
  done

  log "starting slurm-operator (as $operator_namespace/$operator_sa, once the chart has made it)"
  spawn k8s-test-operator "$here/tests/k8s/k8s-test-operator.sh" "$bin/slurm-operator" \
    "https://127.0.0.1:$api_port" "$pki/apiserver.crt" "$pki/admin.token" "$operator_namespace" "$operator_sa" "$run" \
    "slurm-restapi.$slurm_namespace"

  # Ready when every node is Ready and the default ServiceAccount exists (pods need it).
  local ready=0
  for _ in $(seq 120); do
    ready=$(api GET /api/v1/nodes | python3 -c 'import json,sys; print(sum(1 for n in json.load(sys.stdin)["items"] for c in n["status"].get("conditions",[]) if c["type"]=="Ready" and c["status"]=="True"))' 2>/dev/null || echo 0)
    [ "$ready" = "$nodes" ] && api GET /api/v1/namespaces/default/serviceaccounts/default >/dev/null && break
    for b in kube-controller-manager kube-scheduler kwok; do
      alive "$b" || die "$b exited; last lines of $logs/$b.log:
$(tail -20 "$logs/$b.log")"
    done
    sleep 0.5
  done
  [ "$ready" = "$nodes" ] || die "$ready of $nodes nodes Ready after 60 s; see $logs/kwok.log"
  log "ready: KUBECONFIG=$kubeconfig (etcd pid $(cat "$run/etcd.pid"), kube-apiserver pid $(cat "$run/kube-apiserver.pid"))"
}

# Stop $1: TERM, up to 20 s grace, then KILL.
stop() {
  local name=$1 pid
  [ -f "$run/$name.pid" ] || return 0
  pid=$(cat "$run/$name.pid")
  if alive "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid" 2>/dev/null || true; sleep 0.2; }
    [ "${2:-}" = quiet ] || log "stopped $name (pid $pid)"
  fi
  rm -f "$run/$name.pid"
}

down() {
  local b
  for b in k8s-test-operator kwok kube-scheduler kube-controller-manager; do stop "$b" "${1:-}"; done
  podman ps -aq --filter label=slime.hybrid/k8s-test | xargs -r podman rm -f -t 2 >/dev/null 2>&1 || true
  stop kube-apiserver "${1:-}"   # the apiserver first: it would log errors about a missing etcd
  stop etcd "${1:-}"
  rm -rf "$state" "$kubeconfig"
  [ "${1:-}" = quiet ] || log "down; state removed ($state), logs kept in $logs"
}

status() {
  local n
  for n in etcd kube-apiserver kube-controller-manager kube-scheduler kwok k8s-test-operator; do
    if alive "$n"; then echo "$n: running (pid $(cat "$run/$n.pid"))"; else echo "$n: not running"; fi
  done
  if alive kube-apiserver; then echo "readyz: $(readyz || echo unreachable)"; fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
