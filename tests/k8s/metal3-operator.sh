#!/usr/bin/env bash
# Metal3's baremetal-operator for the Metal3 test tier, against the test API server
# (tests/k8s/k8s-test-cluster.sh) and the standalone Ironic of
# tests/integration/metal3/metal3-test-services.sh:
#   tests/k8s/metal3-operator.sh up     build it if needed (tests/k8s/bmo-bin.sh), start it, wait
#                                       until the operator is healthy
#   tests/k8s/metal3-operator.sh down   stop it
# The CRDs must exist before `up` (molecule/metal3/create.yml applies them). The operator runs
# as its own ServiceAccount with the RBAC of its own manifests (tests/k8s/bmo_rbac.py), with its
# validating webhook (the
# operator's own config/base/webhook/manifests.yaml, pointed at https://127.0.0.1:$BMO_WEBHOOK_PORT
# with a test CA instead of its in-cluster Service: every BareMetalHost the tests write passes
# the operator's admission rules), and with the deploy kernel/ramdisk placeholders the test
# HTTP server serves (nothing boots them: Metal3's FakeIPA, started by
# tests/integration/metal3/metal3-test-services.sh, answers Ironic as their agent would).
# Log in ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/logs/baremetal-operator.log.
# Another cluster and set of services (the kube-faults lane's, on lab/kube, beside the Metal3 tier's):
# BMO_KUBECONFIG (its admin kubeconfig), BMO_RUN_DIR (pids, the operator's own kubeconfig and its log),
# METAL3_ENDPOINTS (the endpoints.json of its services), BMO_HEALTH_PORT and BMO_METRICS_PORT, and
# BMO_WEBHOOK_PORT=0: no admission webhook (an API server that runs in a container could not reach
# one on this host's loopback; the webhook's rules are proven by the Metal3 tier).
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
k8s=$cache/k8s
kubeconfig=${BMO_KUBECONFIG:-$k8s/kubeconfig}
run=${BMO_RUN_DIR:-$k8s/run-metal3}
logs=${BMO_RUN_DIR:-$k8s}/logs
endpoints=${METAL3_ENDPOINTS:-$cache/metal3/endpoints.json}
HEALTH=127.0.0.1:${BMO_HEALTH_PORT:-19440}
METRICS=127.0.0.1:${BMO_METRICS_PORT:-18443}
WEBHOOK_PORT=${BMO_WEBHOOK_PORT:-19443}
BMO_VERSION=${BMO_VERSION:-0.13.2}
tree=$k8s/build/src/baremetal-operator-$BMO_VERSION
WEBHOOK_NAME=slime-test-baremetal-operator

die() { echo "metal3-operator: ERROR: $*" >&2; exit 1; }
log() { echo "metal3-operator: $*"; }

stop() {
  local f=$run/$1.pid pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

# The webhook's serving certificate (controller-runtime reads $TMPDIR/k8s-webhook-server/
# serving-certs/tls.{crt,key}) and its CA, made once.
webhook_certs() {
  local dir=$run/tmp/k8s-webhook-server/serving-certs
  [ -s "$dir/tls.crt" ] && [ -s "$run/webhook-ca.crt" ] && return 0
  mkdir -p "$dir"
  {
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=slime-test-metal3-webhook-ca" \
      -keyout "$run/webhook-ca.key" -out "$run/webhook-ca.crt" &&
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$dir/tls.key" -out "$run/webhook.csr" &&
    openssl x509 -req -in "$run/webhook.csr" -CA "$run/webhook-ca.crt" -CAkey "$run/webhook-ca.key" -CAcreateserial \
      -days 3650 -extfile <(printf 'subjectAltName=IP:127.0.0.1\n') -out "$dir/tls.crt"
  } >>"$logs/metal3-webhook-certs.log" 2>&1 || die "openssl could not make the webhook certificate (log: $logs/metal3-webhook-certs.log)"
}

# The operator's ValidatingWebhookConfiguration, each webhook's Service replaced by our URL.
webhook_config() {
  local manifest=$tree/config/base/webhook/manifests.yaml
  [ -f "$manifest" ] || die "$manifest missing (tests/k8s/bmo-bin.sh unpacks the operator's tree)"
  "$py" - "$kubeconfig" "$WEBHOOK_NAME" "$manifest" "$run/webhook-ca.crt" "https://127.0.0.1:$WEBHOOK_PORT" <<'PY' \
    || die "could not apply the operator's webhook configuration"
import base64, sys, yaml
from kubernetes import client, config
kubeconfig, name, manifest, ca, base = sys.argv[1:6]
config.load_kube_config(kubeconfig)
api = client.AdmissionregistrationV1Api()
bundle = base64.b64encode(open(ca, "rb").read()).decode()
(doc,) = [d for d in yaml.safe_load_all(open(manifest)) if d and d["kind"] == "ValidatingWebhookConfiguration"]
doc["metadata"] = {"name": name}
for hook in doc["webhooks"]:
    hook["clientConfig"] = {"url": base + hook["clientConfig"]["service"]["path"], "caBundle": bundle}
try:
    api.delete_validating_webhook_configuration(name)
except client.ApiException as exc:
    if exc.status != 404:
        raise
api.create_validating_webhook_configuration(doc)
PY
}

up() {
  "$here/tests/k8s/bmo-bin.sh"
  [ -s "$endpoints" ] || die "$endpoints missing: run tests/integration/metal3/metal3-test-services.sh up first"
  [ -s "$kubeconfig" ] || die "$kubeconfig missing: run tests/k8s/k8s-test-cluster.sh up first"
  mkdir -p "$run/tmp" "$logs"
  stop baremetal-operator
  local ironic kernel ramdisk
  [ "$WEBHOOK_PORT" = 0 ] || webhook_certs
  read -r ironic kernel ramdisk < <("$py" -c 'import json,sys; e=json.load(open(sys.argv[1])); print(e["ironic"]["url"], e["http"]["deploy_kernel"], e["http"]["deploy_ramdisk"])' "$endpoints")
  "$py" "$here/tests/k8s/bmo_rbac.py" "$kubeconfig" "$tree" "$run/baremetal-operator.kubeconfig" \
    || die "could not give baremetal-operator its ServiceAccount and RBAC"
  KUBECONFIG=$run/baremetal-operator.kubeconfig IRONIC_ENDPOINT=$ironic/v1/ DEPLOY_KERNEL_URL=$kernel DEPLOY_RAMDISK_URL=$ramdisk \
    TMPDIR=$run/tmp setsid "$k8s/bin/baremetal-operator" -webhook-port="$WEBHOOK_PORT" -metrics-addr="$METRICS" -health-addr="$HEALTH" \
    >>"$logs/baremetal-operator.log" 2>&1 </dev/null &
  echo $! >"$run/baremetal-operator.pid"
  local deadline=$((SECONDS + 60))
  until curl -fsS -m 2 -o /dev/null "http://$HEALTH/readyz" 2>/dev/null; do
    kill -0 "$(cat "$run/baremetal-operator.pid")" 2>/dev/null \
      || { tail -n 30 "$logs/baremetal-operator.log" >&2; die "baremetal-operator exited (log: $logs/baremetal-operator.log)"; }
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$logs/baremetal-operator.log" >&2; die "baremetal-operator not ready after 60 s"; }
    sleep 0.5
  done
  [ "$WEBHOOK_PORT" = 0 ] || webhook_config
  log "baremetal-operator $(cat "$k8s/bin/baremetal-operator.version") up (Ironic $ironic)"
}

py=${PYTHON:-python3}
case ${1:-} in
  up) up ;;
  down)
    # Without the operator nothing answers the webhook (failurePolicy Fail): remove it first.
    if [ -s "$kubeconfig" ] && [ "$WEBHOOK_PORT" != 0 ]; then
      timeout 20 "$py" -c 'import sys; from kubernetes import client, config
config.load_kube_config(sys.argv[1]); client.AdmissionregistrationV1Api().delete_validating_webhook_configuration(sys.argv[2])' \
        "$kubeconfig" "$WEBHOOK_NAME" >/dev/null 2>&1 || true
    fi
    stop baremetal-operator ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
