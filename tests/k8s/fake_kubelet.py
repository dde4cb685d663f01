"""Stand-in for the kubelet and the deployment controller in the API-server test tier.

The test API server has neither, so nothing would ever run a Pod or roll out a Deployment.
This loop does what they would report: every Pod gets phase Running, a hostIP, a podIP and a
Ready condition; every Deployment gets its replicas reported ready and available. Addresses
are deterministic, so tests can assert on them: pod number N (in creation order) runs on
node 192.0.2.(10+N) with pod IP 10.244.N.10.
"""

import sys
import time

from kubernetes import client, config


def main(kubeconfig):
    config.load_kube_config(kubeconfig)
    core, apps = client.CoreV1Api(), client.AppsV1Api()
    numbers = {}
    while True:
        for pod in sorted(core.list_pod_for_all_namespaces().items, key=lambda p: (p.metadata.creation_timestamp, p.metadata.name)):
            key = (pod.metadata.namespace, pod.metadata.name)
            number = numbers.setdefault(key, len(numbers))
            if pod.status and pod.status.phase == "Running":
                continue
            node_ip = "192.0.2.%d" % (10 + number % 200)
            pod_ip = "10.244.%d.10" % (number % 250)
            if pod.spec.host_network:
                pod_ip = node_ip
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            core.patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace, {"status": {
                "phase": "Running", "hostIP": node_ip, "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
                "startTime": now,
                "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                               for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            }})
        for dep in apps.list_deployment_for_all_namespaces().items:
            want = dep.spec.replicas or 0
            status = dep.status
            if status and status.available_replicas == want and status.observed_generation == dep.metadata.generation:
                continue
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            apps.patch_namespaced_deployment_status(dep.metadata.name, dep.metadata.namespace, {"status": {
                "observedGeneration": dep.metadata.generation, "replicas": want, "updatedReplicas": want,
                "readyReplicas": want, "availableReplicas": want,
                "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                "lastUpdateTime": now, "lastTransitionTime": now},
                               {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                                "lastUpdateTime": now, "lastTransitionTime": now}],
            }})
        time.sleep(0.5)


if __name__ == "__main__":
    main(sys.argv[1])
