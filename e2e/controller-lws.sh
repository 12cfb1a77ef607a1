#!/usr/bin/env bash
# controller-lws.sh - end to end: the LeaderWorkerSet integration (Kueue's
# leaderworkerset.x-k8s.io/leaderworkerset framework) of `cueue controller`.
#
# On the real control plane (CUEUE_E2E_CLUSTER=k8s) the real LWS controller
# runs beside it (e2e/k8s/addon-lws.sh) and makes the groups' pods; on the
# embedded cluster, where no LWS controller runs, the LWS CRD (from the
# addon's build in the cache, or the module's source in the Go module
# cache; the script skips, 77, without it) is applied
# and the pods an LWS controller would make are created by the script.
#
# Setup: a ResourceFlavor "general" (nodeLabels node.example.com/pool:
# general), ClusterQueue cq with 8 cpu, LocalQueue lq; the controller with a
# Configuration enabling batch/job, pod and the LWS framework.
#
# Checks:
#  - (embedded) the LWS CRD missing when the controller starts is logged,
#    not fatal;
#  - with the framework disabled (the default frameworks), an LWS with the
#    queue-name label gets no Workload;
#  - an LWS "infer" of 2 groups of 1 leader + 3 workers (1 cpu each) gets
#    one Workload per group, named as Kueue names them, with pod sets
#    leader (1) and worker (3), queueName lq, controlled by the LWS, the
#    group annotations; a CreatedWorkload Event each;
#  - each of its pods is labelled into its group: managed, queue-name,
#    pod-group-name and prebuilt-workload-name (its group's Workload),
#    pod-group-total-count 4, role-hash leader or worker;
#  - scaled to 3 groups: a third Workload; scaled down to 1: the Workloads
#    of groups 1 and 2 are deleted, group 0's stays;
#  - Kueue's finalizer is taken off an LWS pod that ended (Succeeded) and
#    off one being deleted.
# check_lws_tas (on the real control plane): Topology-Aware Scheduling of a
# group whose leader and workers share a podset-group-name and ask for one
# rack: admitted in one flavor with a topologyAssignment per pod set, its 4
# pods run ungated, all in the one rack that has room for the leader beside
# the workers (the tighter rack has room for the workers alone).
# check_lws_runs (on the real control plane: it needs the LWS controller's
# pods, the pod group integration and the LWS and pod webhooks): both groups admitted, their
# pods ungated and running on the flavor's nodes; the third group's
# Workload pending with Kueue's reason and its pods gated; after the scale
# down the ClusterQueue's usage is that of one group.
#
# Usage: e2e/controller-lws.sh PATH_TO_cueue
# Needs: kubectl, jq, sha1sum, timeout (SKIP without one).
set -u -o pipefail
E2E_ADDONS=lws
. "$(dirname "$0")/lib.sh"
GOMODS=$(go env GOMODCACHE 2>/dev/null) # before e2e_init moves HOME
e2e_init "$@" kubectl jq sha1sum

# the full flow (webhooks, admission, pods running) needs the LWS
# controller's pods: on the real control plane only
FULL=0
[ "$E2E_CLUSTER" = k8s ] && FULL=1
LWS_V=$(sed -n 's|^[[:space:]]*\(require \)\{0,1\}sigs.k8s.io/lws \(v[^ ]*\).*|\2|p' \
    "$ROOT/e2e/k8s/mod/lws/go.mod" | head -n 1)
# the CRD: from the addon's build, else from the module's source
CRD="$CUEUE_K8S_CACHE/lws-$LWS_V/lws-crd.yaml"
[ -s "$CRD" ] || CRD="$GOMODS/sigs.k8s.io/lws@$LWS_V/config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"
if [ "$E2E_CLUSTER" = embedded ]; then
    [ -s "$CRD" ] || { echo "SKIP  all: no LWS CRD (e2e/k8s/addons.sh build lws)"; exit 77; }
fi

dump() {
    local l
    for l in "$TMP"/ctrl*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 40; done
    show "$TMP/cluster.log" "cluster log" 20
    show "$TMP/k8s/lws.log" "LWS controller log" 20
    k get workloads -A -o wide 2>&1 | show /dev/stdin workloads
    k get pods -A -o wide 2>&1 | show /dev/stdin pods
}

FW="leaderworkerset.x-k8s.io/leaderworkerset"
cat >"$TMP/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, pod, $FW]
YAML

start_cluster
apply_crds
quota_setup --labels '{node.example.com/pool: general}' cq:lq:8

# jqe ARGS...: jq -e on stdin, failing on no input too (where jq -e is true)
jqe() {
    local in
    in=$(cat)
    [ -n "$in" ] || in=null
    jq -e "$@" <<<"$in"
}
ctrl_args() { echo "-v 2 --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 0"; }

# The full flow: Cueue's LWS and pod webhooks (Kueue's paths) registered by
# URL on the controller's webhook server, its CA injected by the controller
# (internalCertManagement in namespace cueue-system)
MWC=cueue-mutating-webhook-configuration
if [ "$FULL" = 1 ]; then
    k create namespace cueue-system >/dev/null || fail "namespace cueue-system" "create failed"
    cat >>"$TMP/config.yaml" <<YAML
namespace: cueue-system
internalCertManagement:
  enable: true
  webhookServiceName: cueue-webhook-service
  webhookSecretName: cueue-webhook-server-cert
YAML
fi
full_ctrl_args() { # the controller's flags in the full flow
    echo "--webhook-bind-address 127.0.0.1:0 --webhook-cert-dir $TMP/certs"
}
full_webhooks() { # LOG: registers the webhooks of the controller that logs to LOG
    local port hook
    poll 30 grep -q 'webhook server [a-z ]*on 127.0.0.1:' "$1"
    port=$(grep -o 'webhook server [a-z ]*on 127.0.0.1:[0-9]*' "$1" | head -n 1 | grep -o '[0-9]*$')
    {
        printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
        printf 'metadata: {name: %s}\nwebhooks:\n' "$MWC"
        for hook in "mleaderworkerset.kb.io /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset leaderworkerset.x-k8s.io leaderworkersets" \
            "mpod.kb.io /mutate--v1-pod \"\" pods"; do
            set -- $hook
            cat <<YAML
- name: $1
  clientConfig: {url: "https://127.0.0.1:$port$2"}
  rules: [{apiGroups: [$3], apiVersions: [v1], operations: [CREATE], resources: [$4]}]
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, cueue-system]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
YAML
        done
    } | k apply -f - >/dev/null || fail "Cueue's LWS and pod webhooks" "apply failed"
    injected() { k get mutatingwebhookconfiguration $MWC -o json |
        jqe '[.webhooks[].clientConfig.caBundle // ""] | all(length > 0)'; }
    wait_for 30 "Cueue's LWS and pod webhooks registered, their CA injected" injected
}

# ---- the CRD missing, then the framework disabled ----
if embedded_only "the LWS CRD missing at the start is logged"; then
    # shellcheck disable=SC2046
    start_controller ctrl-nocrd $(ctrl_args) --webhook-bind-address 0 --config "$TMP/config.yaml"
    wait_for 20 "the LWS CRD missing at the start is logged" \
        grep -q 'leaderworkersets: LIST: 404' "$TMP/ctrl-nocrd.log"
    sleep 1
    check "... and is not fatal (the controller runs on)" "it exited" kill -0 "$CT_PID"
    stop_pid "$CT_PID"
    k apply --server-side -f "$CRD" >/dev/null || fail "the LWS CRD" "apply failed"
    poll 30 bash -c "kubectl --kubeconfig '$KC' get leaderworkersets -A" \
        || fail "the LWS CRD" "not served"
fi

# lws_yaml NAME REPLICAS: an LWS of REPLICAS groups of 1 leader + 3 workers,
# 1 cpu each, in LocalQueue lq. Without the full flow (no LWS webhook of
# Cueue yet) its templates carry what Kueue's LWS webhook puts there.
lws_yaml() {
    local ann=""
    [ "$FULL" = 1 ] \
        || ann='annotations: {kueue.x-k8s.io/pod-suspending-parent: '$FW', kueue.x-k8s.io/pod-group-serving: "true"}'
    cat <<YAML
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicas: $2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      metadata: {$ann}
      spec:
        containers: [{name: leader, image: busybox, resources: {requests: {cpu: "1"}}}]
    workerTemplate:
      metadata: {$ann}
      spec:
        containers: [{name: worker, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}
owned_wls() { # LWS: the names of the Workloads it controls
    k get workloads -n default -o json | jq -r --arg n "$1" '.items[] |
        select(any(.metadata.ownerReferences[]?; .kind == "LeaderWorkerSet" and .name == $n)) |
        .metadata.name' | sort
}

# shellcheck disable=SC2046
start_controller ctrl-off $(ctrl_args) --webhook-bind-address 0
lws_yaml ignored 1 | k apply -f - >/dev/null || fail "LWS ignored" "create failed"
sleep 3
check "with the framework disabled, an LWS gets no Workload" "$(owned_wls ignored)" \
    test -z "$(owned_wls ignored)"
stop_pid "$CT_PID"
k delete leaderworkerset ignored --wait=false >/dev/null

# ---- the enabled integration ----
# shellcheck disable=SC2046
start_controller ctrl $(ctrl_args) --config "$TMP/config.yaml" \
    $([ "$FULL" = 1 ] && full_ctrl_args || echo --webhook-bind-address 0)
[ "$FULL" = 1 ] && full_webhooks "$TMP/ctrl.log"
lws_yaml infer 2 | k apply -f - >/dev/null || fail "LWS infer" "create failed"
UID_=$(k get leaderworkerset infer -o jsonpath='{.metadata.uid}')
wl_name() { # GROUP: Kueue's name of the Workload of group GROUP of infer
    local h
    h=$(printf 'LeaderWorkerSet\nleaderworkerset.x-k8s.io\ninfer-%s\n%s' "$1" "$UID_" | sha1sum)
    echo "leaderworkerset-infer-$1-${h:0:5}"
}
WL0=$(wl_name 0) WL1=$(wl_name 1) WL2=$(wl_name 2)
names_are() { [ "$(owned_wls infer | tr '\n' ' ' | sed 's/ $//')" = "$*" ]; }
want=$(printf '%s\n' "$WL0" "$WL1" | sort | tr '\n' ' ')
# shellcheck disable=SC2086
wait_for 30 "an LWS of 2 groups gets 2 Workloads, named as Kueue names them" names_are $want
wl=$(k get workload -n default "$WL1" -o json 2>/dev/null)
check "group 1's Workload: pod sets leader (1) and worker (3), queue lq" "$(jq -c '[.spec.queueName, [.spec.podSets[] | [.name, .count]]]' <<<"$wl")" \
    jqe '.spec.queueName == "lq" and ([.spec.podSets[] | [.name, .count]] == [["leader", 1], ["worker", 3]])' <<<"$wl"
check "... controlled by the LWS, with Kueue's labels and annotations" "$(jq -c .metadata <<<"$wl")" \
    jqe --arg u "$UID_" '(.metadata.ownerReferences[0] | .kind == "LeaderWorkerSet" and .name == "infer"
        and .uid == $u and .controller == true) and .metadata.labels["kueue.x-k8s.io/job-uid"] == $u
        and .metadata.annotations["kueue.x-k8s.io/is-group-workload"] == "true"
        and .metadata.annotations["kueue.x-k8s.io/component-workload-index"] == "1"
        and .metadata.annotations["kueue.x-k8s.io/job-owner-name"] == "infer"' <<<"$wl"
check "... its pod sets hold the templates' requests" "$(jq -c '[.spec.podSets[].template.spec.containers[0].resources]' <<<"$wl")" \
    jqe '[.spec.podSets[].template.spec.containers[0].resources.requests.cpu] == ["1", "1"]' <<<"$wl"
nevents() { k get events -n default -o json | jq '[.items[] | select(.involvedObject.kind == "LeaderWorkerSet"
    and .involvedObject.name == "infer" and .reason == "CreatedWorkload")] | length'; }
events_ge() { [ "$(nevents)" -ge "$1" ]; }
wait_for 20 "a CreatedWorkload Event on the LWS per Workload" events_ge 2

# ---- the pods ----
if [ "$E2E_CLUSTER" = embedded ]; then
    # what the LWS controller and its webhook would create, gated as
    # Kueue's pod webhook gates a pod of a suspending parent: per group a
    # leader (its StatefulSet's pod) and 3 workers naming it
    lws_pod() { # NAME GROUP LEADER(empty: it is the leader)
        local extra=""
        [ -n "$3" ] && extra=", leaderworkerset.sigs.k8s.io/leader-name: $3"
        cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {leaderworkerset.sigs.k8s.io/name: infer, leaderworkerset.sigs.k8s.io/group-index: "$2"}
  annotations: {kueue.x-k8s.io/pod-suspending-parent: $FW, leaderworkerset.sigs.k8s.io/size: "4"$extra}
spec:
  schedulingGates: [{name: kueue.x-k8s.io/admission}]
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
YAML
    }
    for g in 0 1; do
        lws_pod "infer-$g" "$g" ""
        for w in 1 2 3; do lws_pod "infer-$g-$w" "$g" "infer-$g"; done
    done | k apply -f - >/dev/null || fail "the LWS's pods" "create failed"
fi
pods_json() { k get pods -n default -l leaderworkerset.sigs.k8s.io/name=infer -o json; }
labelled() { # N: N pods of infer, each labelled into its group
    pods_json | jqe --argjson n "$1" --arg w0 "$WL0" --arg w1 "$WL1" --arg w2 "$WL2" '
        [.items[] | select(.metadata.deletionTimestamp == null)] as $p | ($p | length) == $n and all($p[];
        .metadata.labels as $l | .metadata.annotations as $a |
        ({"0": $w0, "1": $w1, "2": $w2}[$l["leaderworkerset.sigs.k8s.io/group-index"]]) as $g |
        $l["kueue.x-k8s.io/managed"] == "true" and $l["kueue.x-k8s.io/queue-name"] == "lq" and
        $l["kueue.x-k8s.io/pod-group-name"] == $g and $l["kueue.x-k8s.io/prebuilt-workload-name"] == $g and
        $a["kueue.x-k8s.io/pod-group-total-count"] == "4" and
        $a["kueue.x-k8s.io/role-hash"] == (if $a["leaderworkerset.sigs.k8s.io/leader-name"] then "worker" else "leader" end))'
}
wait_for 40 "the 8 pods are labelled into their groups (pod-group-name, prebuilt-workload-name, role-hash, total count)" labelled 8

# check_lws_runs: what the pod group integration and the webhooks do with
# these groups (on the real control plane)
check_lws_runs() {
    admitted() { k get workload -n default "$1" -o json | jqe '.status.conditions[]? | select(.type == "Admitted" and .status == "True")'; }
    wait_for 40 "group 0's Workload admitted" admitted "$WL0"
    wait_for 40 "group 1's Workload admitted" admitted "$WL1"
    running() { # N: N pods of infer Running on the flavor's nodes, none gated
        pods_json | jqe --argjson n "$1" '[.items[] | select(.status.phase == "Running" and
            (.spec.schedulingGates // [] | length) == 0 and
            .spec.nodeSelector["node.example.com/pool"] == "general")] | length == $n'
    }
    wait_for 60 "the 8 pods run ungated with the flavor's node selector" running 8
}
[ "$FULL" = 1 ] && check_lws_runs

# ---- scale up: over quota ----
k patch leaderworkerset infer --type merge -p '{"spec":{"replicas":3}}' >/dev/null \
    || fail "scale to 3" "patch failed"
want=$(printf '%s\n' "$WL0" "$WL1" "$WL2" | sort | tr '\n' ' ')
# shellcheck disable=SC2086
wait_for 30 "scaled to 3 groups: a third Workload" names_are $want
if [ "$E2E_CLUSTER" = embedded ]; then
    { lws_pod infer-2 2 ""; for w in 1 2 3; do lws_pod "infer-2-$w" 2 infer-2; done; } \
        | k apply -f - >/dev/null || fail "group 2's pods" "create failed"
fi
wait_for 40 "group 2's pods are labelled too" labelled 12
check_lws_pending() {
    pending() {
        k get workload -n default "$WL2" -o json | jqe '(.status.conditions[]? |
            select(.type == "QuotaReserved" and .status == "False" and .reason == "WaitingForQuota" and
                   (.message | test("insufficient unused quota")))) and
            ([.status.conditions[]? | select(.type == "Admitted" and .status == "True")] | length == 0)'
    }
    # Kueue's v0.19 reason (Pending in v0.17; docs/kueue-differences.md)
    wait_for 30 "the third group's Workload waits: WaitingForQuota, insufficient unused quota" pending
    gated() {
        pods_json | jqe '[.items[] | select(.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"] == "2")] |
            length == 4 and all(.[]; any(.spec.schedulingGates[]?; .name == "kueue.x-k8s.io/admission"))'
    }
    check "... and its 4 pods stay gated" "$(pods_json | jq -c '[.items[] | [.metadata.name, .spec.schedulingGates]]')" gated
    # explain by the LWS: its groups' Workloads, the third one pending
    use_controller "$TMP/ctrl.log"
    "$CUEUE" explain leaderworkerset/infer >"$TMP/out" 2>"$TMP/err"
    check "cueue explain leaderworkerset/infer explains its groups' Workloads, $WL2 pending" \
        "$(head -c 800 "$TMP/out") $(cat "$TMP/err")" \
        grep -q "^Workload default/$WL2: pending" "$TMP/out"
    "$CUEUE" queue pending -o wide >"$TMP/out" 2>&1
    check "cueue queue pending -o wide lists $WL2 with its LeaderWorkerSet as owner" "$(cat "$TMP/out")" \
        grep -Eq "default/$WL2 .* LeaderWorkerSet/infer " "$TMP/out"
}
[ "$FULL" = 1 ] && check_lws_pending

# ---- scale down ----
k patch leaderworkerset infer --type merge -p '{"spec":{"replicas":1}}' >/dev/null \
    || fail "scale to 1" "patch failed"
wait_for 30 "scaled down to 1: the Workloads of groups 1 and 2 are deleted, group 0's stays" \
    names_are "$WL0"
check "... said in the log" "$(grep -c 'scaled away' "$TMP/ctrl.log")" \
    grep -q "deleting Workload default/$WL2 (its group was scaled away)" "$TMP/ctrl.log"
check_lws_released() {
    usage() {
        k get clusterqueue cq -o json | jqe '.status.reservingWorkloads == 1 and
            ([.status.flavorsReservation[]?.resources[]? | select(.name == "cpu") | .total] == ["4"])'
    }
    wait_for 30 "the quota of the deleted groups is released (one group's 4 cpu reserved)" usage
}
[ "$FULL" = 1 ] && check_lws_released

# ---- Kueue's finalizer off LWS pods that ended or are deleted ----
# (pods of an LWS "gone" that no longer exists: the labeller needs no LWS
# for this; each as the LWS controller and Kueue's webhooks would make it)
fin_pod() { # NAME RUNTIME
    cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {leaderworkerset.sigs.k8s.io/name: gone, leaderworkerset.sigs.k8s.io/group-index: "0"}
  annotations: {kueue.x-k8s.io/pod-suspending-parent: $FW, leaderworkerset.sigs.k8s.io/size: "1",
                cueue.dev/simulated-runtime: "$2"}
  finalizers: [kueue.x-k8s.io/managed]
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "100m"}}}]
YAML
}
{ fin_pod gone-0 1s; echo ---; fin_pod gone-1 1h; } | k apply -f - >/dev/null \
    || fail "pods of LWS gone" "create failed"
# with Cueue's pod webhook (the full flow) they are created gated, as
# Kueue's would gate them; the gate is taken off here, as an admission of
# their group would
if [ "$FULL" = 1 ]; then
    for p in gone-0 gone-1; do
        k patch pod "$p" --type json -p '[{"op": "remove", "path": "/spec/schedulingGates"}]' >/dev/null \
            || fail "ungate $p" "patch failed"
    done
fi
ended_unfinalized() {
    k get pod gone-0 -o json | jqe '.status.phase == "Succeeded" and (.metadata.finalizers // [] | length == 0)'
}
wait_for 30 "an LWS pod that ended loses Kueue's finalizer" ended_unfinalized
k delete pod gone-1 --wait=false >/dev/null || fail "delete pod gone-1" "failed"
gone() { ! k get pod gone-1 >/dev/null 2>&1; }
wait_for 30 "an LWS pod being deleted loses Kueue's finalizer (and is gone)" gone

# ---- Topology-Aware Scheduling: a leader and its workers in one rack ----
# (the real LWS controller and kube-scheduler) four 8-GPU nodes, gpu-a and
# gpu-b in rack r1 with 4 and 6 GPUs held by filler pods, gpu-c and gpu-d in
# rack r2 free. An LWS group of a 1-GPU leader and 3 workers of 2 GPUs asks
# for one rack with podset-group-name: r1 has room for the 3 workers (6
# GPUs) but not for the leader beside them, so both pod sets go to r2, in
# one flavor, and kube-scheduler runs the 4 pods there.
check_lws_tas() {
    local RACK=cloud.provider.com/topology-rack HOST=kubernetes.io/hostname n
    for n in gpu-a:r1 gpu-b:r1 gpu-c:r2 gpu-d:r2; do
        gpu_node_yaml "${n%:*}" 8 "$RACK: ${n#*:}, $HOST: ${n%:*}, node-group: tas"
    done | k apply -f - >/dev/null || fail "GPU nodes" "create failed"
    gpu_nodes_ready() {
        k get nodes -l node-group=tas -o json | jqe '[.items[] | select(
            any(.status.conditions[]?; .type == "Ready" and .status == "True") and
            (.spec.taints // [] | length) == 0)] | length == 4'
    }
    wait_for 60 "TAS: four GPU nodes Ready, untainted" gpu_nodes_ready
    {
        topology_yaml gpu-topology "$RACK" "$HOST"
        echo ---
        quota_yaml --flavor h100 --labels '{node-group: tas}' --topology gpu-topology \
            --resource nvidia.com/gpu cq-tas:lq-tas:32
        echo ---
        filler_pods_yaml gpu-a 4
        filler_pods_yaml gpu-b 6
    } | k apply -f - >/dev/null || fail "TAS: Topology, flavor, queues, filler pods" "apply failed"
    wait_for 60 "TAS: 10 filler pods hold 4 GPUs of gpu-a and 6 of gpu-b" fillers_running 10
    local ann="{kueue.x-k8s.io/podset-required-topology: $RACK, kueue.x-k8s.io/podset-group-name: g}"
    k apply -f - >/dev/null <<YAML || fail "LWS tas" "create failed"
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: tas
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq-tas}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      metadata: {annotations: $ann}
      spec:
        containers: [{name: leader, image: busybox, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
    workerTemplate:
      metadata: {annotations: $ann}
      spec:
        containers: [{name: worker, image: busybox, resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]
YAML
    tas_wl() { k get workloads -n default -o json | jq -c '[.items[] | select(any(.metadata.ownerReferences[]?;
        .kind == "LeaderWorkerSet" and .name == "tas"))][0] // empty'; }
    tas_admitted() { tas_wl | jqe 'any(.status.conditions[]?; .type == "Admitted" and .status == "True")'; }
    wait_for 60 "TAS: the group's Workload is admitted" tas_admitted
    local wl
    wl=$(tas_wl)
    check "... both pod sets in flavor h100, each with a topologyAssignment" "$(jq -c .status.admission <<<"$wl")" \
        jqe '[.status.admission.podSetAssignments[] | [.name, .flavors["nvidia.com/gpu"], .count,
            (.topologyAssignment != null)]] == [["leader", "h100", 1, true], ["worker", "h100", 3, true]]' \
        <<<"$wl"
    tas_pods() { k get pods -n default -l leaderworkerset.sigs.k8s.io/name=tas -o json; }
    tas_running() {
        tas_pods | jqe '[.items[] | select(.status.phase == "Running" and (.spec.schedulingGates // [] | length) == 0)]
            | length == 4'
    }
    wait_for 90 "TAS: the leader and 3 workers run, ungated" tas_running
    local racks
    racks=$(tas_pods | jq -r '.items[].spec.nodeName' | sort -u | while read -r n; do
        k get node "$n" -o jsonpath="{.metadata.labels.cloud\.provider\.com/topology-rack}"; echo; done | sort -u | tr '\n' ' ')
    check "... all on nodes of rack r2 (r1 has room for the workers, not for the leader beside them)" \
        "$racks $(tas_pods | jq -c '[.items[] | [.metadata.name, .spec.nodeName, .spec.nodeSelector]]')" \
        test "$racks" = "r2 "
}
[ "$FULL" = 1 ] && check_lws_tas

e2e_finish
