#!/usr/bin/env bash
# smoke.sh - the real control plane of e2e/k8s/cluster.sh works as the tests
# expect: it comes up, its nodes are the embedded cluster's built-in ones
# (names, labels, taints, allocatable), they are Ready and schedulable, a Job
# runs there (pods placed by kube-scheduler on nodes matching its
# nodeSelector, Running, then Succeeded after their simulated runtime), a
# suspended Job has no pods, and the API server and etcd can be restarted
# without losing objects. Skips (77) when the binaries are not built.
#
# Usage: e2e/k8s/smoke.sh PATH_TO_cueue
set -u -o pipefail
CUEUE_E2E_CLUSTER=k8s
. "$(dirname "$0")/../lib.sh"
e2e_init "$@" kubectl jq curl

dump() {
    local f
    for f in "$TMP"/k8s/*.log; do show "$f" "${f##*/}" 15; done
    echo "---- pods"; k get pods -A -o wide 2>&1 | sed 's/^/  | /'
}

t0=$SECONDS
start_cluster
pass "control plane up in $((SECONDS - t0)) s"
check "up within 30 s" "took $((SECONDS - t0)) s" test $((SECONDS - t0)) -le 30

# the same nodes as `cueue cluster` without --nodes (but for the deprecated
# beta.kubernetes.io/{os,arch} labels the node lifecycle controller adds)
nodes_of() {
    kubectl --kubeconfig "$1" get nodes -o json | jq -S '[.items[] | {name: .metadata.name,
        labels: (.metadata.labels | with_entries(select(.key | startswith("beta.kubernetes.io/")
        | not))), alloc: .status.allocatable,
        taints: [.spec.taints[]? | select(.key | startswith("node.kubernetes.io/") | not)]}]
        | sort_by(.name)'
}
EKC=$TMP/embedded.kc
"$CUEUE" cluster --listen 127.0.0.1:0 --kubeconfig-out "$EKC" 2>"$TMP/embedded.log" &
EPID=$!
poll 20 test -s "$EKC"
nodes_of "$KC" >"$TMP/nodes.k8s"
nodes_of "$EKC" >"$TMP/nodes.embedded"
stop_pid "$EPID"
check "nodes equal to the embedded cluster's built-in set (e2e/k8s/nodes.yaml)" \
    "$(diff "$TMP/nodes.embedded" "$TMP/nodes.k8s" | head -n 20)" \
    cmp -s "$TMP/nodes.embedded" "$TMP/nodes.k8s"
ready_nodes() {
    k get nodes -o json | jq -e '.items | length == 12 and all(.[];
        any(.status.conditions[]; .type == "Ready" and .status == "True") and
        ([.spec.taints[]? | select(.key | startswith("node.kubernetes.io/"))] | length == 0))'
}
wait_for 30 "12 nodes Ready, without the not-ready taint" ready_nodes

job() {
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: default}
spec:
  suspend: $2
  parallelism: 2
  completions: 2
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: "3s"}
    spec:
      restartPolicy: Never
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      tolerations: [{key: cloud.example.com/spot, operator: Exists}]
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
job held true | k apply -f - >/dev/null || fail "create Job held" "kubectl failed"
job runs false | k apply -f - >/dev/null || fail "create Job runs" "kubectl failed"
pods_of() { k get pods -n default -l "job-name=$1" -o json; }
placed() {
    pods_of runs | jq -e '.items | length == 2 and all(.[]; .spec.nodeName | startswith("gpu-h100-"))'
}
wait_for 30 "Job runs: 2 pods placed on H100 nodes (its nodeSelector)" placed
running_seen() { pods_of runs | jq -e 'any(.items[]; .status.phase == "Running" or .status.phase == "Succeeded")'; }
wait_for 20 "its pods run" running_seen
complete() { k get job runs -o json | jq -e 'any(.status.conditions[]?; .type == "Complete" and .status == "True")'; }
wait_for 40 "Job runs completes (pods Succeeded after their simulated runtime)" complete
succeeded() { pods_of runs | jq -e '[.items[] | select(.status.phase == "Succeeded")] | length == 2'; }
check "both pods Succeeded" "$(pods_of runs | jq -c '[.items[].status.phase]')" succeeded
ran_3s() {
    pods_of runs | jq -e 'all(.items[].status.containerStatuses[].state.terminated;
        .exitCode == 0 and (.finishedAt | fromdateiso8601) - (.startedAt | fromdateiso8601) >= 3)'
}
check "their containers exited 0 after at least the 3 s runtime" \
    "$(pods_of runs | jq -c '[.items[].status.containerStatuses[].state]')" ran_3s
nheld() { pods_of held | jq '.items | length'; }
check "a suspended Job has no pods" "$(nheld) pods" test "$(nheld)" = 0

# restarts keep every object
"$ROOT/e2e/k8s/cluster.sh" restart "$TMP/k8s" kube-apiserver >>"$TMP/cluster.log" 2>&1 \
    && pass "API server restarted" || fail "API server restart" "$(tail -n 5 "$TMP/cluster.log")"
"$ROOT/e2e/k8s/cluster.sh" restart "$TMP/k8s" etcd >>"$TMP/cluster.log" 2>&1 \
    && pass "etcd restarted" || fail "etcd restart" "$(tail -n 5 "$TMP/cluster.log")"
both_jobs() { k get jobs -n default -o name | sort | tr '\n' ' ' | grep -qx "job.batch/held job.batch/runs "; }
wait_for 30 "both Jobs still there after the restarts" both_jobs
stop_cluster
check "stop_cluster stops the API server" "still answers" bash -c "! curl -sk --max-time 2 $API/readyz"
start_cluster
wait_for 30 "start_cluster after stop_cluster: the same objects" both_jobs
e2e_finish
