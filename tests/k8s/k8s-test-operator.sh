#!/usr/bin/env bash
# What a kubelet would do for the slurm-operator pod of Slinky's chart, for the test tier
# (started by tests/k8s/k8s-test-cluster.sh; there is no kubelet there, only kwok):
# wait until the chart has made the operator's ServiceAccount, get a token for it
# (TokenRequest, as the projected token volume would), run the operator with it and the
# chart's default arguments, and restart it when it exits (before the CRDs exist it does).
#
# The operator reaches slurmrestd at the RestApi Service's name (<name>.<namespace>:6820), which
# only cluster DNS resolves; here it runs in a mount namespace of its own whose /etc/hosts maps
# RESTAPI_HOST to 127.0.0.1, where nothing answers on this control plane (no Slurm runs here; the
# Metal3 tier needs no pod workers): its Slurm client fails at once instead of waiting on DNS.
# The machine's /etc/hosts is not touched.
#
# usage: k8s-test-operator.sh BINARY SERVER CA_FILE ADMIN_TOKEN_FILE NAMESPACE SERVICEACCOUNT RUN_DIR RESTAPI_HOST
set -uo pipefail

binary=$1 server=$2 ca=$3 admin_token=$4 namespace=$5 sa=$6 run=$7 restapi_host=$8
hosts=$run/slurm-operator.hosts
{ cat /etc/hosts; echo "127.0.0.1 $restapi_host"; } >"$hosts"
kubeconfig=$run/slurm-operator.kubeconfig
child=

trap '[ -n "$child" ] && kill "$child" 2>/dev/null; wait; exit 0' TERM INT

log() { echo "k8s-test-operator: $(date +%T) $*"; }

token() {
  curl -sf --max-time 10 --cacert "$ca" -H "Authorization: Bearer $(cat "$admin_token")" \
    -H 'Content-Type: application/json' -X POST \
    --data '{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 86400}}' \
    "$server/api/v1/namespaces/$namespace/serviceaccounts/$sa/token" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["token"])'
}

waiting=0
while :; do
  if ! tok=$(token 2>/dev/null) || [ -z "$tok" ]; then
    [ "$waiting" = 1 ] || log "waiting for ServiceAccount $namespace/$sa"
    waiting=1; sleep 2; continue
  fi
  waiting=0
  umask 077
  cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "$server", certificate-authority: "$ca"}}]
users: [{name: $sa, user: {token: "$tok"}}]
contexts: [{name: test, context: {cluster: test, user: $sa, namespace: $namespace}}]
current-context: test
EOF
  log "starting $binary as system:serviceaccount:$namespace:$sa"
  # The arguments of the chart's Deployment (helm/slurm-operator/templates/operator/
  # deployment.yaml, v1.2.1) that matter here; probes and metrics are not served.
  # shellcheck disable=SC2016  # $0 and $@ are the inner shell's
  KUBECONFIG=$kubeconfig unshare --mount --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
    "$hosts" "$binary" --health-addr 0 --metrics-addr 0 --leader-elect=false --zap-log-level info &
  child=$!
  wait "$child"
  log "slurm-operator exited with $?; restarting in 5 s"
  child=
  sleep 5
done
