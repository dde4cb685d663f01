#!/usr/bin/env bash
# Make the real-Kubernetes lab (lab/kube/up.sh) an OpenShift cluster for SCC purposes: pods are
# admitted, or refused, when they are created by OpenShift's own SCC admission code
# (openshift/apiserver-library-go release-4.19, pkg/securitycontextconstraints/sccadmission)
# running as an admission webhook of the real kube-apiserver (`scc-admission serve`,
# tests/k8s/sccadmit/serve.go). up.sh runs it when SLIME_KUBE_OPENSHIFT=1. Idempotent.
#
#   1. The SecurityContextConstraints API (OpenShift's CRD, openshift/api security/v1) and
#      OpenShift's default SCCs with their system:openshift:scc:* ClusterRoles and the binding
#      of restricted-v2 to system:authenticated (cluster-kube-apiserver-operator release-4.19,
#      bindata/bootkube/scc-manifests), server-side applied as the k8s tier does (a client-side
#      apply drops the null fields the schema requires).
#   2. A serving certificate for the webhook signed by the cluster CA (SAN IP:127.0.0.1: the
#      API server calls it on its own node), and a kubeconfig for it (the cluster's admin token:
#      it reads SCCs and namespaces, writes the namespaces' SCC annotations, as OpenShift's
#      cluster-policy-controller does, and asks SubjectAccessReviews).
#   3. The webhook on the control-plane node container, restarted 2 s after it exits, logging
#      to /var/log/kube/scc-admission.log there; when the node container restarts, its kube-node
#      starts it again (it runs /etc/kube/scc-admission/run when that exists).
#   4. A MutatingWebhookConfiguration (the plugin's Admit: choose the SCC, set openshift.io/scc
#      and the security context it assigns) and a ValidatingWebhookConfiguration (the plugin's
#      Validate on the final pod), pods CREATE, failurePolicy Fail. Not judged: the namespaces
#      OpenShift itself exempts from SCC admission, its run levels 0 and 1
#      (openshift/kubernetes, openshift-kube-apiserver/admission/namespaceconditions: default,
#      kube-system, kube-public, openshift, openshift-infra, openshift-node, and any namespace
#      labelled openshift.io/run-level 0 or 1). kube-system is also what keeps this cluster
#      working while the webhook is down (CoreDNS); the webhook itself is a process of the node,
#      not a pod, so it needs no namespace of its own.
#
# Environment: SCC_ADMISSION_PORT (default 10270). It runs on the control-plane node (the first
# of KUBE_NODES).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lab/kube/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/../lib.sh"
die() { echo "lab/kube/openshift: ERROR: $*" >&2; exit 1; }
log() { echo "lab/kube/openshift: $*"; }

cp_node=${KUBE_NODES%%=*}
cp_ctr=$(lab_ctr "$cp_node")
port=${SCC_ADMISSION_PORT:-10270}
vendor=${SLIME_VENDOR_DIR:-$repo/../shared/vendor}
sccs=$vendor/openshift/default-sccs-release-4.19
crd=$vendor/openshift/securitycontextconstraints.crd.yaml
pki=$KUBE_DIR/pki
wd=$KUBE_DIR/nodes/$cp_node/scc-admission   # /etc/kube/scc-admission in the node container
kc() { "$KUBE_BIN/kubectl" --kubeconfig "$KUBE_KUBECONFIG" "$@"; }

{ [ -f "$crd" ] && [ -d "$sccs" ]; } || die "$crd or $sccs missing (SLIME_VENDOR_DIR, see ../shared/vendor/README.md)"
[ -s "$pki/ca.key" ] || die "no cluster CA in $pki: run lab/kube/up.sh first"
[ "$(podman inspect -f '{{.State.Running}}' "$cp_ctr" 2>/dev/null)" = true ] || die "node container $cp_ctr is not running"
"$repo/tests/k8s/scc-admission-bin.sh" >/dev/null || die "building scc-admission failed"

# --- 1. the SCC API, the default SCCs and their RBAC ----------------------------------------
kc apply --server-side --field-manager slime-lab --force-conflicts -f "$crd" >/dev/null
kc wait --for condition=Established --timeout 60s crd/securitycontextconstraints.security.openshift.io >/dev/null
kc apply --server-side --field-manager slime-lab --force-conflicts -f "$sccs" >/dev/null
log "SecurityContextConstraints API and OpenShift's default SCCs applied ($(kc get securitycontextconstraints.security.openshift.io --no-headers | wc -l) SCCs)"

# --- 2. serving certificate and credentials ---------------------------------------------------
mkdir -p "$wd" && chmod 0700 "$wd"
if ! openssl verify -CAfile "$pki/ca.crt" "$wd/tls.crt" >/dev/null 2>&1; then
  openssl req -newkey rsa:2048 -nodes -keyout "$wd/tls.key" -out "$wd/tls.csr" \
    -subj /CN=scc-admission 2>/dev/null
  openssl x509 -req -in "$wd/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -CAserial "$wd/ca.srl" -days 3650 -out "$wd/tls.crt" \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') 2>/dev/null
  rm -f "$wd/tls.csr" "$wd/ca.srl"
fi
token=$(awk -F, '$2=="admin"{print $1}' "$pki/tokens.csv")
(umask 077; cat >"$wd/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: slime-kube
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: /etc/kube/pki/ca.crt}
users:
- name: admin
  user: {token: $token}
contexts:
- name: slime-kube
  context: {cluster: slime-kube, user: admin}
current-context: slime-kube
EOF
)
cat >"$wd/run" <<EOF
#!/bin/sh
# Written by lab/kube/openshift.sh: OpenShift's SCC admission as this cluster's webhook.
exec /opt/kube/bin/scc-admission serve --kubeconfig /etc/kube/scc-admission/kubeconfig \\
  --tls-cert /etc/kube/scc-admission/tls.crt --tls-key /etc/kube/scc-admission/tls.key \\
  --listen 127.0.0.1:$port
EOF
chmod 0755 "$wd/run"

# --- 3. the webhook, supervised on the control-plane node --------------------------------------
healthy() { podman exec "$cp_ctr" curl -sf --cacert /etc/kube/pki/ca.crt "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; }
if ! healthy; then
  # The loop runs the binary again 2 s after it exits (as the node's other processes are kept).
  podman exec -d "$cp_ctr" sh -c 'while :; do /etc/kube/scc-admission/run >>/var/log/kube/scc-admission.log 2>&1; echo "scc-admission exited ($?), restarting in 2 s" >>/var/log/kube/scc-admission.log; sleep 2; done' >/dev/null
  for _ in $(seq $((LAB_WAIT * 2))); do healthy && break; sleep 0.5; done
  healthy || die "the webhook did not come up: $(podman exec "$cp_ctr" tail -5 /var/log/kube/scc-admission.log 2>&1)"
fi
log "webhook up on $cp_node, https://127.0.0.1:$port (log: podman exec $cp_ctr cat /var/log/kube/scc-admission.log)"

# --- 4. register it --------------------------------------------------------------------------
ca=$(base64 -w0 "$pki/ca.crt")
webhook() {  # webhook KIND PATH
  cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: $1
metadata:
  name: scc-admission.security.openshift.io
  labels: {slime.hybrid/lab: kube}
webhooks:
- name: scc-admission.security.openshift.io
  clientConfig: {url: "https://127.0.0.1:$port$2", caBundle: $ca}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods], scope: Namespaced}
  namespaceSelector:
    matchExpressions:
    - {key: kubernetes.io/metadata.name, operator: NotIn, values: [default, kube-system, kube-public, openshift, openshift-infra, openshift-node]}
    - {key: openshift.io/run-level, operator: NotIn, values: ["0", "1"]}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 30
  admissionReviewVersions: [v1]
EOF
}
{ webhook MutatingWebhookConfiguration /mutate; echo ---; webhook ValidatingWebhookConfiguration /validate; } \
  | kc apply -f - >/dev/null
log "pods are admitted by OpenShift's SCC admission (every namespace but OpenShift's run levels 0 and 1)"
