#!/usr/bin/env bash
# controller-topology.sh - end to end: the API of Topology-Aware Scheduling
# (docs/topology.md) through the API server: the Topology CRD, the webhooks
# vtopology.kb.io, vresourceflavor.kb.io and vjob.kb.io of `cueue
# controller` (internal certificates, registered by URL as in
# controller-webhooks.sh), and a Job's Workload carrying its topology
# request. On the real cluster the Topology's CRD rules are also enforced by
# kube-apiserver's CEL; the messages are the same.
#
# Checks:
#  - a Topology block/rack/hostname is stored and read back in v1beta1 too;
#  - a Topology with kubernetes.io/hostname not last, or a level twice, is
#    refused with Kueue's messages; its levels cannot change;
#  - a ResourceFlavor with topologyName and no nodeLabels is refused;
#    once created with them, its nodeLabels cannot change;
#  - a Job with two topology annotations, or a slice size over its pod
#    count, is refused with Kueue's messages;
#  - a Job asking for podset-required-topology gets a Workload whose pod set
#    has topologyRequest {required, podIndexLabel}; a Job without any, a
#    topologyRequest with only the index label (Kueue, TAS on).
#
# Usage: e2e/controller-topology.sh PATH_TO_cueue
# Needs: kubectl, jq, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq

dump() {
    show "$TMP/ctrl.log" "controller log" 40
    show "$TMP/cluster.log" "cluster log" 20
}

NS=cueue-system
VWC=cueue-validating-webhook-configuration
exists() { k get "$@" >/dev/null 2>&1; }

start_cluster
apply_crds
quota_setup cq:lq:8
k create namespace $NS >/dev/null || fail "namespace $NS" "create failed"

# internalCertManagement is on by default: the controller makes its certificate
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: %s\n' $NS >"$TMP/config.yaml"
start_controller ctrl -v 1 --config "$TMP/config.yaml" --metrics-bind-address 0 \
    --health-probe-bind-address 0 --webhook-bind-address 127.0.0.1:0 --webhook-cert-dir "$TMP/certs"
wport() { WPORT=$(sed -n 's/.*webhook server on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/ctrl.log" | head -n 1); [ -n "$WPORT" ]; }
wait_for 30 "the controller's webhook server listens" wport

hook() { # NAME PATH GROUP RESOURCE [namespaced]
    cat <<YAML
- name: $1
  clientConfig: {url: "https://127.0.0.1:$WPORT$2"}
  rules: [{apiGroups: [$3], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [$4]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 10
YAML
    [ -n "${5:-}" ] && cat <<YAML
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, $NS]}]
YAML
    return 0
}
{
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n'
    printf 'metadata: {name: %s}\nwebhooks:\n' "$VWC"
    hook vtopology.kb.io /validate-kueue-x-k8s-io-v1beta2-topology kueue.x-k8s.io topologies
    hook vresourceflavor.kb.io /validate-kueue-x-k8s-io-v1beta2-resourceflavor kueue.x-k8s.io resourceflavors
    hook vjob.kb.io /validate-batch-v1-job batch jobs namespaced
} | k apply -f - >/dev/null || fail "webhook configuration" "apply failed"
bundled() {
    k get validatingwebhookconfiguration $VWC -o json |
        jq -e 'all(.webhooks[]; (.clientConfig.caBundle // "") != "")' >/dev/null
}
wait_for 30 "the controller injects its CA into the webhook configuration" bundled

# refused OUT WANT: the command output OUT says it was refused with WANT
refused() { grep -qF -- "$2" <<<"$1"; }

topo() { # NAME LEVEL...
    local n=$1 l
    shift
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: %s}\nspec:\n  levels:\n' "$n"
    for l in "$@"; do printf '  - nodeLabel: %s\n' "$l"; done
}

# ---- the Topology
out=$(topo default cloud.com/block cloud.com/rack kubernetes.io/hostname | k apply -f - 2>&1)
check "a Topology block/rack/hostname is created" "$out" \
    bash -c "kubectl --kubeconfig '$KC' get topology default -o json |
        jq -e '[.spec.levels[].nodeLabel] == [\"cloud.com/block\", \"cloud.com/rack\", \"kubernetes.io/hostname\"]' >/dev/null"
check "... and read as v1beta1" "$(k get topologies.v1beta1.kueue.x-k8s.io default -o json 2>&1 | head -c 300)" \
    bash -c "kubectl --kubeconfig '$KC' get topologies.v1beta1.kueue.x-k8s.io default -o json |
        jq -e '.apiVersion == \"kueue.x-k8s.io/v1beta1\" and (.spec.levels | length) == 3' >/dev/null"
out=$(topo host-first kubernetes.io/hostname cloud.com/rack | k apply -f - 2>&1)
check "a Topology with kubernetes.io/hostname above another level is refused" "$out" \
    refused "$out" "the kubernetes.io/hostname label can only be used at the lowest level of topology"
out=$(topo twice cloud.com/rack cloud.com/rack | k apply -f - 2>&1)
check "a Topology with a level twice is refused" "$out" refused "$out" "must be unique"
out=$(topo default cloud.com/rack kubernetes.io/hostname | k apply -f - 2>&1)
check "a Topology's levels cannot change" "$out" refused "$out" "field is immutable"

# ---- ResourceFlavors with a topology
flavor() { # NAME LABELS_YAML_OR_EMPTY
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\nspec:\n  topologyName: default\n' "$1"
    [ -n "$2" ] && printf '  nodeLabels: %s\n' "$2"
    return 0
}
out=$(flavor tas-bare "" | k apply -f - 2>&1)
check "a flavor with topologyName and no nodeLabels is refused" "$out" \
    refused "$out" "at least one nodeLabel is required when topology is set"
out=$(flavor tas '{pool: tas}' | k apply -f - 2>&1)
check "a flavor with topologyName and nodeLabels is created" "$out" exists resourceflavor tas
out=$(flavor tas '{pool: other}' | k apply -f - 2>&1)
check "its nodeLabels cannot change" "$out" \
    refused "$out" "nodeLabels are immutable when topologyName is set"

# ---- Jobs with topology annotations
tjob() { # NAME ANNOTATIONS_JSON
    jq -cn --arg n "$1" --argjson a "$2" '{apiVersion:"batch/v1",kind:"Job",
      metadata:{name:$n,namespace:"default",labels:{"kueue.x-k8s.io/queue-name":"lq"}},
      spec:{suspend:true,parallelism:2,completions:2,completionMode:"Indexed",
        template:{metadata:{annotations:$a},spec:{restartPolicy:"Never",
        containers:[{name:"main",image:"busybox",resources:{requests:{cpu:"1"}}}]}}}}'
}
out=$(tjob two '{"kueue.x-k8s.io/podset-required-topology":"cloud.com/rack","kueue.x-k8s.io/podset-preferred-topology":"cloud.com/block"}' |
    k create -f - 2>&1)
check "a Job with two topology annotations is refused" "$out" \
    refused "$out" "spec.template.metadata.annotations: Invalid value: must not contain more than one topology annotation"
out=$(tjob slice '{"kueue.x-k8s.io/podset-slice-required-topology":"kubernetes.io/hostname","kueue.x-k8s.io/podset-slice-size":"3"}' |
    k create -f - 2>&1)
check "a Job whose slice is larger than its pods is refused" "$out" \
    refused "$out" 'spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: Invalid value: "3": must not be greater than pod set count 2'
out=$(tjob rack '{"kueue.x-k8s.io/podset-required-topology":"cloud.com/rack"}' | k create -f - 2>&1)
check "a Job asking for one rack is created" "$out" exists job rack
out=$(tjob plain '{}' | k create -f - 2>&1)
check "a Job without a topology annotation is created" "$out" exists job plain
wl_request() { # JOB: its Workload's first pod set's topologyRequest
    k get workloads -n default -o json |
        jq -cS --arg j "$1" '.items[] | select(.metadata.ownerReferences[0].name == $j) | .spec.podSets[0].topologyRequest'
}
has_request() { [ "$(wl_request "$1")" = "$(jq -cS . <<<"$2")" ]; }
wait_for 30 "the rack Job's Workload asks for the rack, with the completion index label" has_request rack \
    '{"required":"cloud.com/rack","podIndexLabel":"batch.kubernetes.io/job-completion-index"}'
wait_for 30 "the plain Job's Workload carries the index label only (Kueue, TAS on)" has_request plain \
    '{"podIndexLabel":"batch.kubernetes.io/job-completion-index"}'

stop_pid "$CT_PID"
e2e_finish
