#!/usr/bin/env bash
# controller-bare-workloads.sh - Workloads created directly (no Job): admitted,
# and when preempted their eviction completes at once (no Job to stop), so the
# preemptor is admitted and the victim requeued. Usage: PATH_TO_cueue
set -u
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq
start_cluster
apply_crds
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: general}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources: [{name: cpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
YAML
wl() {
cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: $1, namespace: default}
spec:
  queueName: lq
  priority: $2
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]
YAML
}
start_controller ctrl
wl low 0 | k apply -f - >/dev/null
wait_for 60 "low admitted" bash -c "kubectl --kubeconfig $KC get workload low -o json | jq -e '.status.admission'"
wl high 100 | k apply -f - >/dev/null
wait_for 60 "high admitted" bash -c "kubectl --kubeconfig $KC get workload high -o json | jq -e '.status.admission'"
wait_for 60 "low requeued" bash -c "kubectl --kubeconfig $KC get workload low -o json | jq -e '(.status.admission == null) and (.status.conditions[] | select(.type==\"Requeued\") | .status == \"True\")'"
e2e_finish
