"""Give baremetal-operator the identity its own manifests give it, and write a kubeconfig for it.

As `kustomize build config/default` of baremetal-operator v0.13.2 deploys it: namespace
baremetal-operator-system, ServiceAccount baremetal-operator-controller-manager, the ClusterRoles
of config/base/rbac/role.yaml (manager-role) and metrics_auth_role.yaml, bound to that account by
role_binding.yaml and metrics_auth_role_binding.yaml (namePrefix baremetal-operator-). The
manifests are read from the operator's source tree at run time (never copied). The kubeconfig
carries a TokenRequest token of the account, as the projected token of its Deployment would, so
the operator gets exactly the RBAC its manifests grant.

Usage: bmo_rbac.py ADMIN_KUBECONFIG OPERATOR_TREE OUT_KUBECONFIG
"""

import os
import sys

import yaml
from kubernetes import client, config

NAMESPACE = "baremetal-operator-system"
PREFIX = "baremetal-operator-"
RBAC = "config/base/rbac"


def load(tree, name):
    with open(os.path.join(tree, RBAC, name)) as f:
        return yaml.safe_load(f)


def replace_or_create(create, replace, name, body):
    try:
        create(body)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
        replace(name, body)


def main(admin_kubeconfig, tree, out):
    config.load_kube_config(admin_kubeconfig)
    core, rbac = client.CoreV1Api(), client.RbacAuthorizationV1Api()
    account = PREFIX + load(tree, "service_account.yaml")["metadata"]["name"]
    replace_or_create(core.create_namespace, core.replace_namespace, NAMESPACE,
                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    try:
        core.create_namespaced_service_account(NAMESPACE, {"metadata": {"name": account}})
    except client.ApiException as exc:
        if exc.status != 409:
            raise
    for role_file, binding_file in (("role.yaml", "role_binding.yaml"),
                                    ("metrics_auth_role.yaml", "metrics_auth_role_binding.yaml")):
        role, binding = load(tree, role_file), load(tree, binding_file)
        assert role["kind"] == "ClusterRole" and binding["kind"] == "ClusterRoleBinding", (role_file, binding_file)
        role["metadata"] = {"name": PREFIX + role["metadata"]["name"]}
        binding["metadata"] = {"name": PREFIX + binding["metadata"]["name"]}
        binding["roleRef"]["name"] = PREFIX + binding["roleRef"]["name"]
        binding["subjects"] = [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
        replace_or_create(rbac.create_cluster_role, rbac.replace_cluster_role, role["metadata"]["name"], role)
        replace_or_create(rbac.create_cluster_role_binding, rbac.replace_cluster_role_binding,
                          binding["metadata"]["name"], binding)
    token = core.create_namespaced_service_account_token(
        account, NAMESPACE, {"spec": {"expirationSeconds": 86400}}).status.token
    with open(admin_kubeconfig) as f:
        admin = yaml.safe_load(f)
    cluster = admin["clusters"][0]
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account}}],
        "current-context": account,
    }
    fd = os.open(out + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(kubeconfig, f)
    os.replace(out + ".tmp", out)
    print("%s/%s with %s" % (NAMESPACE, account, ", ".join(PREFIX + n for n in ("manager-role", "metrics-auth-role"))))


if __name__ == "__main__":
    main(*sys.argv[1:4])
