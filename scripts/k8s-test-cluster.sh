#!/usr/bin/env bash
# A throw-away Kubernetes API server for the envtest-style test tier:
#   scripts/k8s-test-cluster.sh up     start etcd + kube-apiserver, write the kubeconfig
#   scripts/k8s-test-cluster.sh down   stop both and remove the cluster's state
#   scripts/k8s-test-cluster.sh status
#
# Only etcd and kube-apiserver run: no kubelet, scheduler or controller-manager. So
# nothing schedules or runs Pods, and whatever a controller would do (namespace
# finalization, ServiceAccount tokens, garbage collection, Deployment -> ReplicaSet ->
# Pod) does not happen; tests write status subresources themselves where they need them.
# Plain background processes (no systemd); binaries come from scripts/k8s-test-bins.sh.
set -euo pipefail

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
service_cidr=10.96.0.0/16

die() { echo "k8s-test-cluster: ERROR: $*" >&2; exit 1; }
log() { echo "k8s-test-cluster: $*"; }

# True when the pid file of $1 names a live process that is still $1 (after a reboot or a
# crash the pid may belong to something else, which must not be signalled).
alive() {
  local pid
  pid=$(cat "$run/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$1"
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Start "$@" detached from this shell (own session, so the caller's Ctrl-C or the end of
# a CI step does not take it down) and record its pid. The wrapper writes its own pid and
# then execs, so the pid file names the real process.
spawn() {
  local name=$1; shift
  rm -f "$run/$name.pid"   # a stale pid file would pass the wait below at once
  setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$run/$name.pid" "$@" \
    >"$logs/$name.log" 2>&1 </dev/null &
  for _ in $(seq 50); do [ -s "$run/$name.pid" ] && return 0; sleep 0.1; done
  die "$name did not start (see $logs/$name.log)"
}

readyz() {
  curl -s --max-time 3 --cacert "$pki/apiserver.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" \
    "https://127.0.0.1:$api_port/readyz" 2>/dev/null
}

up() {
  if alive etcd && alive kube-apiserver && [ "$(readyz)" = ok ]; then
    log "already up; KUBECONFIG=$kubeconfig"; return
  fi
  for b in etcd kube-apiserver; do
    [ -x "$bin/$b" ] || die "$bin/$b missing: run scripts/k8s-test-bins.sh first"
  done
  down quiet   # a half-started or crashed earlier cluster: start from nothing
  for p in "$etcd_port" "$etcd_peer_port" "$api_port"; do
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
  # --disable-admission-plugins ServiceAccount: that plugin rejects Pods whose
  #   ServiceAccount does not exist, and no controller creates `default` in new
  #   namespaces. (envtest disables it for the same reason.)
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
    --disable-admission-plugins ServiceAccount \
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
  stop kube-apiserver "${1:-}"   # the apiserver first: it would log errors about a missing etcd
  stop etcd "${1:-}"
  rm -rf "$state" "$kubeconfig"
  [ "${1:-}" = quiet ] || log "down; state removed ($state), logs kept in $logs"
}

status() {
  local n
  for n in etcd kube-apiserver; do
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
