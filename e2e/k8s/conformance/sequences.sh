# sequences.sh - the request sequences of diff.sh (sourced). Each sequence is
# a function seq_NAME, listed in SEQS, run once per server in a namespace of
# its own ($NS = conf-NAME with - for _, created before it). Steps: req (HTTP), kc
# (kubectl), watch_req, note; raw/kq/until_ok do set-up without recording.
# $SRV is emb or real. Names are fixed so that both servers see the same.

CORE=/api/v1
W=/apis/conformance.cueue.dev/v1
KQ=/apis/kueue.x-k8s.io/v1beta2
cm() { # cm NAME [DATA_JSON [LABELS_JSON]]: a ConfigMap body
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","labels":%s},"data":%s}' \
        "$1" "${3:-{\}}" "${2:-{\}}"
}
widget() { # widget NAME SPEC_JSON
    printf '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"%s"},"spec":%s}' "$1" "$2"
}
pod() { # pod NAME: a pod no scheduler takes (schedulerName none)
    printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","labels":{"app":"conf"}},"spec":{"schedulerName":"none","containers":[{"name":"main","image":"busybox:1.36","command":["sleep","1"]},{"name":"side","image":"busybox"}]}}' "$1"
}
job() { # job NAME: a suspended Job
    printf '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"%s","labels":{"kueue.x-k8s.io/queue-name":"lq"}},"spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox:1.36","resources":{"requests":{"cpu":"1"}}}]}}}}' "$1"
}
rv_of() { jq -r '.metadata.resourceVersion' "$BODY"; }

# ---- create/get/list/update/delete -----------------------------------
SEQS+=(configmap_crud)
seq_configmap_crud() {
    local p=$CORE/namespaces/$NS/configmaps
    req POST "$p" "$(cm c1 '{"a":"1"}' '{"team":"ml"}')"
    local rv; rv=$(rv_of)
    req GET "$p/c1"
    req GET "$p?labelSelector=team%3Dml"
    req PUT "$p/c1" "$(cm c1 '{"a":"2"}' '{"team":"ml"}' | jq -c --arg rv "$rv" '.metadata.resourceVersion = $rv')"
    req PUT "$p/c1" "$(cm c1 '{"a":"3"}' | jq -c --arg rv "$rv" '.metadata.resourceVersion = $rv')"
    req PUT "$p/c1" "$(cm c1 '{"a":"4"}' '{"team":"ml"}')"
    req PUT "$p/c9" "$(cm c9 '{"a":"4"}')"
    req PUT "$p/c1" "$(cm other '{"a":"4"}')"
    req POST "$p" "$(cm c1)"
    req GET "$p/nope"
    req DELETE "$p/c1"
    req DELETE "$p/c1"
    req GET "$p?labelSelector=team%3Dml"
}

SEQS+=(namespace_crud)
seq_namespace_crud() {
    local n=conf-ns-x
    req POST $CORE/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"'$n'","labels":{"a":"b"}}}'
    req GET $CORE/namespaces/$n
    req GET "$CORE/namespaces?labelSelector=a%3Db"
    req POST $CORE/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"'$n'"}}'
    req POST $CORE/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Bad_Name"}}'
    req POST "$CORE/namespaces/$n/configmaps" "$(cm inside)"
    req DELETE $CORE/namespaces/$n
    FILTER='{code: .code, reason: .reason, message: .message}' \
        req POST "$CORE/namespaces/$n/configmaps" "$(cm late)"
    until_ok 60 sh -c '! kubectl --kubeconfig "$0" get ns "$1"' "$(eval echo "\$KC_$SRV")" "$n"
    req GET $CORE/namespaces/$n
    req POST "$CORE/namespaces/conf-none/configmaps" "$(cm c)"
}

SEQS+=(job_crud)
seq_job_crud() {
    local p=/apis/batch/v1/namespaces/$NS/jobs
    req POST "$p" "$(job j1)"
    req GET "$p/j1"
    req PATCH "$p/j1" '{"spec":{"parallelism":2}}' application/merge-patch+json
    req PATCH "$p/j1" '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"other"}]}}}}' application/strategic-merge-patch+json
    req GET "$p/j1/status"
    req POST "$p" '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j2"},"spec":{"template":{"spec":{"containers":[{"name":"main","image":"x"}]}}}}'
    req DELETE "$p/j1?propagationPolicy=Background"
    req GET "$p"
}

SEQS+=(pod_crud)
seq_pod_crud() {
    local p=$CORE/namespaces/$NS/pods
    req POST "$p" "$(pod p1)"
    req GET "$p/p1"
    req PATCH "$p/p1/status" '{"status":{"phase":"Running"}}' application/merge-patch+json
    req GET "$p?fieldSelector=status.phase%3DRunning"
    req GET "$p?fieldSelector=spec.schedulerName%3Dnone"
    req PATCH "$p/p1" '{"spec":{"containers":[{"name":"main","image":"busybox:2"}]}}' application/strategic-merge-patch+json
    req PATCH "$p/p1" '{"spec":{"schedulerName":"other"}}' application/merge-patch+json
    req POST "$p" '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2"},"spec":{}}'
    req DELETE "$p/p1?gracePeriodSeconds=0"
    req GET "$p/p1"
}

# A pod created with scheduling gates: its PodScheduled condition
# (SchedulingGated, written on creation), kubectl's STATUS column, a gate
# added (refused: only deletion is allowed), the gates removed.
SEQS+=(pod_scheduling_gates)
seq_pod_scheduling_gates() {
    local p=$CORE/namespaces/$NS/pods
    req POST "$p" '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"g1"},"spec":{"schedulerName":"none","schedulingGates":[{"name":"example.com/a"},{"name":"example.com/b"}],"containers":[{"name":"main","image":"busybox"}]}}'
    req GET "$p/g1"
    kc get pod g1 -n "$NS"
    req PATCH "$p/g1" '{"spec":{"schedulingGates":[{"name":"example.com/c"}]}}' application/strategic-merge-patch+json
    req PATCH "$p/g1" '{"spec":{"schedulingGates":[{"name":"example.com/b"}]}}' application/merge-patch+json
    req PATCH "$p/g1" '{"spec":{"schedulingGates":null}}' application/merge-patch+json
    req GET "$p/g1"
    req DELETE "$p/g1?gracePeriodSeconds=0"
}

SEQS+=(custom_crud)
seq_custom_crud() {
    local p=$W/namespaces/$NS/widgets
    req POST "$p" "$(widget w1 '{"size":3}')"
    local rv; rv=$(rv_of)
    req GET "$p/w1"
    req GET "$p"
    req PUT "$p/w1" "$(widget w1 '{"size":4}' | jq -c --arg rv "$rv" '.metadata.resourceVersion = $rv')"
    req PUT "$p/w1" "$(widget w1 '{"size":5}' | jq -c --arg rv "$rv" '.metadata.resourceVersion = $rv')"
    req POST "$p" "$(widget w1 '{"size":3}')"
    req DELETE "$p/w1"
    req GET "$p/w1"
    req GET "$W/widgets"
}

SEQS+=(kueue_objects)
seq_kueue_objects() {
    req POST $KQ/resourceflavors '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"conf-flavor"}}'
    req POST $KQ/clusterqueues '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"conf-cq"},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"conf-flavor","resources":[{"name":"cpu","nominalQuota":"4"}]}]}]}}'
    req POST "$KQ/namespaces/$NS/localqueues" '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq"},"spec":{"clusterQueue":"conf-cq"}}'
    req GET $KQ/clusterqueues/conf-cq
    req PATCH $KQ/clusterqueues/conf-cq '{"spec":{"queueingStrategy":"Fifo"}}' application/merge-patch+json
    req PATCH $KQ/clusterqueues/conf-cq '{"spec":{"cohortName":"Not A Name"}}' application/merge-patch+json
    req PATCH $KQ/clusterqueues/conf-cq/status '{"status":{"pendingWorkloads":3}}' application/merge-patch+json
    req GET "$KQ/namespaces/$NS/localqueues/lq"
    kc get clusterqueue conf-cq
    kc get localqueue -n "$NS"
    req DELETE $KQ/clusterqueues/conf-cq
    req DELETE $KQ/resourceflavors/conf-flavor
}

# ---- patches --------------------------------------------------------
SEQS+=(patch_merge_json)
seq_patch_merge_json() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" "$(cm m '{"a":"1","b":"2"}' '{"x":"y"}')" >/dev/null
    req PATCH "$p/m" '{"data":{"a":null,"c":"3"},"metadata":{"labels":{"z":"w"}}}' application/merge-patch+json
    req PATCH "$p/m" '[{"op":"add","path":"/data/d","value":"4"},{"op":"remove","path":"/data/b"},{"op":"replace","path":"/metadata/labels/x","value":"q"}]' application/json-patch+json
    req PATCH "$p/m" '[{"op":"test","path":"/data/c","value":"nope"}]' application/json-patch+json
    req PATCH "$p/m" '[{"op":"remove","path":"/data/missing"}]' application/json-patch+json
    req PATCH "$p/m" '[{"op":"move","from":"/data/c","path":"/data/e"},{"op":"copy","from":"/data/d","path":"/data/f"}]' application/json-patch+json
    req PATCH "$p/m" '{"data":' application/merge-patch+json
    req PATCH "$p/m" '{"metadata":{"resourceVersion":"1"},"data":{"g":"7"}}' application/merge-patch+json
    req PATCH "$p/nope" '{"data":{"a":"1"}}' application/merge-patch+json
    req PATCH "$p/m" '{"data":{"a":"1"}}' text/plain
    req PATCH "$p/m" '{"data":{"n":1}}' application/merge-patch+json
}

SEQS+=(patch_strategic)
seq_patch_strategic() {
    local p=$CORE/namespaces/$NS/pods
    raw POST "$p" "$(pod sp)" >/dev/null
    req PATCH "$p/sp" '{"metadata":{"labels":{"b":"c"}},"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}' application/strategic-merge-patch+json
    req PATCH "$p/sp" '{"spec":{"containers":[{"name":"main","$patch":"delete"}]}}' application/strategic-merge-patch+json
    req PATCH "$p/sp" '{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"],"finalizers":["a.io/f"]}}' application/strategic-merge-patch+json
    req PATCH "$p/sp" '{"metadata":{"$setElementOrder/finalizers":["a.io/f"],"finalizers":null}}' application/strategic-merge-patch+json
    req PATCH "$W/namespaces/$NS/widgets/w" '{"spec":{"size":2}}' application/strategic-merge-patch+json
    raw POST "$W/namespaces/$NS/widgets" "$(widget w '{"size":1}')" >/dev/null
    req PATCH "$W/namespaces/$NS/widgets/w" '{"spec":{"size":2}}' application/strategic-merge-patch+json
    req DELETE "$p/sp?gracePeriodSeconds=0"
}

SEQS+=(server_side_apply)
seq_server_side_apply() {
    local p=$CORE/namespaces/$NS/configmaps
    local a='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"1","y":"2"}}'
    req PATCH "$p/s?fieldManager=alice" "$a" application/apply-patch+yaml
    req PATCH "$p/s?fieldManager=bob" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"9"}}' application/apply-patch+yaml
    req PATCH "$p/s?fieldManager=bob&force=true" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"9","z":"3"}}' application/apply-patch+yaml
    req PATCH "$p/s?fieldManager=alice" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"9"}}' application/apply-patch+yaml
    req PATCH "$p/s" "$a" application/apply-patch+yaml
    req PATCH "$p/s?fieldManager=carol" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}' application/apply-patch+yaml
    req PATCH "$p/s?fieldManager=carol" 'apiVersion: v1
kind: ConfigMap
metadata:
  name: s
  labels: {l: "1"}
data:
  w: "5"' application/apply-patch+yaml
    req PUT "$p/s?fieldManager=dave" "$(cm s '{"x":"9","z":"3","w":"6"}')"
    req GET "$p/s"
    # custom resource: a listType=map list merged by key between managers
    local w=$W/namespaces/$NS/widgets
    req PATCH "$w/a?fieldManager=alice" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":1,"parts":[{"name":"p","count":1}]}}' application/apply-patch+yaml
    req PATCH "$w/a?fieldManager=bob" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"parts":[{"name":"q","count":2}]}}' application/apply-patch+yaml
    req PATCH "$w/a?fieldManager=bob" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"parts":[{"name":"p","count":5}]}}' application/apply-patch+yaml
    req PATCH "$w/a/status?fieldManager=st" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"a"},"status":{"phase":"Up"}}' application/apply-patch+yaml
    req GET "$w/a"
}

# ---- lists ------------------------------------------------------------
SEQS+=(pagination)
seq_pagination() {
    local p=$CORE/namespaces/$NS/configmaps i
    for i in 1 2 3 4 5; do raw POST "$p" "$(cm "pg$i" '{}' '{"pg":"yes"}')" >/dev/null; done
    req GET "$p?labelSelector=pg&limit=2"
    local c1; c1=$(jq -r '.metadata.continue' "$BODY")
    req GET "$p?labelSelector=pg&limit=2&continue=$c1"
    local c2; c2=$(jq -r '.metadata.continue' "$BODY")
    req GET "$p?labelSelector=pg&limit=2&continue=$c2"
    req GET "$p?labelSelector=pg&limit=0"
    req GET "$p?labelSelector=pg&limit=2&continue=bm90LWEtdG9rZW4"
    req GET "$p?labelSelector=pg&limit=2&continue=$c1&resourceVersion=5"
    req GET "/api/v1/configmaps?labelSelector=pg&limit=3"
    # an expired continue: the list's revision compacted away
    raw PUT "$p/pg1" "$(cm pg1 '{"v":"2"}' '{"pg":"yes"}')" >/dev/null
    if can_compact; then
        compact
        sleep 1
        req GET "$p?labelSelector=pg&limit=2&continue=$c1"
    else
        note "no compaction on this server"
    fi
}

SEQS+=(selectors)
seq_selectors() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" "$(cm s1 '{}' '{"env":"prod","tier":"a"}')" >/dev/null
    raw POST "$p" "$(cm s2 '{}' '{"env":"dev","tier":"b"}')" >/dev/null
    raw POST "$p" "$(cm s3 '{}' '{"env":"prod"}')" >/dev/null
    local F='[.items[].metadata.name]'
    local s
    for s in 'env%3Dprod' 'env%3D%3Dprod' 'env!%3Dprod' 'env%20in%20(prod,dev)' 'tier%20notin%20(a)' 'tier' '!tier' \
             'env%3Dprod,tier%3Da' 'env%3Dprod,!tier'; do
        FILTER=$F req GET "$p?labelSelector=$s"
    done
    FILTER=$F req GET "$p?fieldSelector=metadata.name%3Ds2"
    FILTER=$F req GET "$p?fieldSelector=metadata.name!%3Ds2,metadata.namespace%3D$NS"
    FILTER=$F req GET "/api/v1/configmaps?fieldSelector=metadata.namespace%3D$NS&labelSelector=env"
    req GET "$p?labelSelector=env%20in%20prod"
    req GET "$p?labelSelector=a%3D%3D%3Db"
    req GET "$p?fieldSelector=data.x%3D1"
    req GET "$p?fieldSelector=metadata.name"
    req GET "$p?labelSelector=bad%20key%3Dv"
}

# ---- watches ----------------------------------------------------------
SEQS+=(watch_from_rv)
seq_watch_from_rv() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" "$(cm before)" >/dev/null
    req GET "$p"
    local rv; rv=$(jq -r .metadata.resourceVersion "$BODY")
    raw POST "$p" "$(cm w1 '{"a":"1"}')" >/dev/null
    raw PATCH "$p/w1" '{"data":{"a":"2"}}' application/merge-patch+json >/dev/null
    raw DELETE "$p/w1" >/dev/null
    watch_req "$p?watch=true&resourceVersion=$rv&timeoutSeconds=2" 10 '[.type, .object.metadata.name, .object.data]'
    watch_req "$p?watch=true&timeoutSeconds=2" 10 '[.type, .object.metadata.name]'
    watch_req "$p?watch=true&resourceVersion=0&timeoutSeconds=2" 10 '[.type, .object.metadata.name]'
    watch_req "$p?watch=true&labelSelector=a%3Db&timeoutSeconds=1&resourceVersion=$rv" 10
    watch_req "$p?watch=true&resourceVersion=abc&timeoutSeconds=1" 10
}

SEQS+=(watch_bookmarks)
seq_watch_bookmarks() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" "$(cm b1)" >/dev/null
    raw POST "$p" "$(cm b2)" >/dev/null
    watch_req "$p?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2" 10 \
        '[.type, .object.kind, .object.metadata.name, .object.metadata.annotations]'
    watch_req "$p?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=2" 10 '[.type, .object.metadata.name]'
    watch_req "$p?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2" 10 '[.type, .object.metadata.name]'
}

SEQS+=(watch_gone)
seq_watch_gone() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" "$(cm g1)" >/dev/null
    req GET "$p/g1"
    local rv; rv=$(rv_of)
    raw PUT "$p/g1" "$(cm g1 '{"a":"1"}')" >/dev/null
    raw PUT "$p/g1" "$(cm g1 '{"a":"2"}')" >/dev/null
    if can_compact; then
        compact
        sleep 1
        # the old revision is compacted: GET at it, LIST at it, WATCH from it
        FILTER='{code, reason, status, kind}' req GET "$p?resourceVersion=$rv&resourceVersionMatch=Exact"
        watch_req "$p?watch=true&resourceVersion=$rv&timeoutSeconds=2" 10 '[.type, .object.code, .object.reason]'
    fi
    watch_req "$p?watch=true&resourceVersion=1&timeoutSeconds=2" 10 '[.type, .object.code, .object.reason]'
}

# ---- status, finalizers, garbage collection ---------------------------
SEQS+=(status_subresource)
seq_status_subresource() {
    local p=$W/namespaces/$NS/widgets
    req POST "$p" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"st"},"spec":{"size":1},"status":{"phase":"Lost"}}'
    req PATCH "$p/st/status" '{"status":{"phase":"Up","ready":1},"spec":{"size":9}}' application/merge-patch+json
    req PATCH "$p/st" '{"status":{"phase":"Down"},"spec":{"size":2}}' application/merge-patch+json
    req GET "$p/st/status"
    req PUT "$p/st/status" "$(widget st '{"size":1}' | jq -c '.status = {"phase":"Put"}')"
    req PATCH "$p/st/status" '{"status":{"ready":"x"}}' application/merge-patch+json
    req GET "$CORE/namespaces/$NS/configmaps/x/status"
    req GET "$W/namespaces/$NS/widgets/st/scale"
}

SEQS+=(finalizers)
seq_finalizers() {
    local p=$CORE/namespaces/$NS/configmaps
    raw POST "$p" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f","finalizers":["conf.cueue.dev/hold"]}}' >/dev/null
    req DELETE "$p/f"
    req GET "$p/f"
    req DELETE "$p/f"
    req PATCH "$p/f" '{"metadata":{"finalizers":["conf.cueue.dev/hold","conf.cueue.dev/two"]}}' application/merge-patch+json
    req PATCH "$p/f" '{"data":{"a":"1"}}' application/merge-patch+json
    req PATCH "$p/f" '{"metadata":{"finalizers":null}}' application/merge-patch+json
    req GET "$p/f"
    req POST "$p" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","finalizers":["nodomain"]}}'
}

SEQS+=(garbage_collection)
seq_garbage_collection() {
    local p=$CORE/namespaces/$NS/configmaps
    req POST "$p" "$(cm owner)"
    local uid; uid=$(jq -r .metadata.uid "$BODY")
    local ref='[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"'$uid'","controller":true,"blockOwnerDeletion":true}]'
    req POST "$p" "$(cm dep | jq -c --argjson r "$ref" '.metadata.ownerReferences = $r')"
    req POST "$p" "$(cm orphan | jq -c --argjson r "$ref" '.metadata.ownerReferences = $r | .metadata.ownerReferences[0].controller = false')"
    req DELETE "$p/owner?propagationPolicy=Background"
    until_ok 60 sh -c '! kubectl --kubeconfig "$0" get cm -n "$1" dep orphan' "$(eval echo "\$KC_$SRV")" "$NS"
    FILTER='[.items[].metadata.name]' req GET "$p?fieldSelector=metadata.name!%3Dkube-root-ca.crt"
    # foreground: the owner waits for its dependents
    req POST "$p" "$(cm owner2)"
    uid=$(jq -r .metadata.uid "$BODY")
    ref='[{"apiVersion":"v1","kind":"ConfigMap","name":"owner2","uid":"'$uid'","blockOwnerDeletion":true}]'
    raw POST "$p" "$(cm dep2 | jq -c --argjson r "$ref" '.metadata.ownerReferences = $r | .metadata.finalizers = ["conf.cueue.dev/hold"]')" >/dev/null
    req DELETE "$p/owner2" '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}'
    until_ok 30 sh -c 'kubectl --kubeconfig "$0" get cm -n "$1" dep2 -o jsonpath={.metadata.deletionTimestamp} | grep -q .' "$(eval echo "\$KC_$SRV")" "$NS"
    FILTER='{finalizers: .metadata.finalizers, deleting: (.metadata.deletionTimestamp != null)}' req GET "$p/owner2"
    FILTER='{finalizers: .metadata.finalizers, deleting: (.metadata.deletionTimestamp != null)}' req GET "$p/dep2"
    raw PATCH "$p/dep2" '{"metadata":{"finalizers":null}}' application/merge-patch+json >/dev/null
    until_ok 30 sh -c '! kubectl --kubeconfig "$0" get cm -n "$1" owner2' "$(eval echo "\$KC_$SRV")" "$NS"
    FILTER='[.items[].metadata.name]' req GET "$p?fieldSelector=metadata.name!%3Dkube-root-ca.crt"
    # orphan: the dependent stays, without the reference
    req POST "$p" "$(cm owner3)"
    uid=$(jq -r .metadata.uid "$BODY")
    ref='[{"apiVersion":"v1","kind":"ConfigMap","name":"owner3","uid":"'$uid'"}]'
    raw POST "$p" "$(cm dep3 | jq -c --argjson r "$ref" '.metadata.ownerReferences = $r')" >/dev/null
    req DELETE "$p/owner3?propagationPolicy=Orphan"
    until_ok 30 sh -c '! kubectl --kubeconfig "$0" get cm -n "$1" owner3' "$(eval echo "\$KC_$SRV")" "$NS"
    until_ok 30 sh -c '[ -z "$(kubectl --kubeconfig "$0" get cm -n "$1" dep3 -o jsonpath={.metadata.ownerReferences})" ]' "$(eval echo "\$KC_$SRV")" "$NS"
    FILTER='{name: .metadata.name, ownerReferences: .metadata.ownerReferences}' req GET "$p/dep3"
}

# ---- validation -------------------------------------------------------
SEQS+=(schema_validation)
seq_schema_validation() {
    local p=$W/namespaces/$NS/widgets
    req POST "$p" "$(widget bad1 '{"size":11,"color":"green"}')"
    req POST "$p" "$(widget bad2 '{"size":"x","tags":["a","b","long"],"code":"A1","qty":true}')"
    req POST "$p" "$(widget bad3 '{"qty":"1Gi"}')"
    req POST "$p" "$(widget bad4 '{"size":0,"parts":[{"name":"a"},{"name":"a"}]}')"
    req POST "$p" "$(widget bad5 '{"size":1,"parts":[{"count":1}]}')"
    req POST "$p?fieldValidation=Strict" "$(widget bad6 '{"size":1,"foo":1}')"
    req POST "$p" "$(widget ok7 '{"size":1,"foo":1}')"
    req POST "$p?fieldValidation=Ignore" "$(widget ok8 '{"size":1,"foo":1}')"
    req POST "$p" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"bad9"},"spec":[]}'
    req POST "$p" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Gadget","metadata":{"name":"bad10"},"spec":{"size":1}}'
    req POST "$p" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"UPPER"},"spec":{"size":1}}'
    req POST "$p" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"bad11","labels":{"a":"-x-"}},"spec":{"size":1}}'
    req POST $KQ/clusterqueues '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"bad-cq"},"spec":{"queueingStrategy":"Random","resourceGroups":[{"coveredResources":["cpu"],"flavors":[]}]}}'
    req POST "$KQ/namespaces/$NS/localqueues" '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"bad-lq"},"spec":{}}'
    kc create -n "$NS" -f - <<<"$(widget kbad '{"size":11}')"
    kc apply -n "$NS" -f - <<<"$(widget kbad2 '{"size":1,"foo":1}')"
}

# ---- numbers: floats are stored and served as Go writes a float64 --------
# (1e+21, 1e-7, 100 for 100.0, big integers as floats). jq, which masks
# the recorded answers, rewrites numbers its own way: the notes keep the
# numbers as the server wrote them (each "key":number or "key":[numbers]
# pair, sorted, so that the order of keys in the object does not count;
# white space removed, as kube-apiserver indents its answers to curl).
body_numbers() { tr -d ' \n\r\t' <"$BODY" | grep -oE '"[A-Za-z]+":(\[[-0-9.eE+,]*\]|-?[0-9][-0-9.eE+]*)' | sort; }
SEQS+=(float_numbers)
seq_float_numbers() {
    local p=$W/namespaces/$NS/widgets
    req POST "$p" "$(widget f1 '{"size":1,"ratio":1e21,"extra":{"a":0.0000001,"b":100.0,"c":1e2,"d":0.1,"e":-0.0,"f":1.5e-10,"g":12,"h":123456789012345678901234,"i":[2.50,1E+22,0.000001,9007199254740993],"j":18446744073709551615}}')"
    note "$(body_numbers)"
    req GET "$p/f1"
    note "$(body_numbers)"
    req PATCH "$p/f1" '{"spec":{"ratio":3.0e-8,"extra":{"k":4.35e-5}}}' application/merge-patch+json
    note "$(body_numbers)"
    req GET "$p"
    note "$(body_numbers)"
}

# ---- tables -----------------------------------------------------------
TABLE='application/json;as=Table;v=v1;g=meta.k8s.io'
SEQS+=(tables)
seq_tables() {
    raw POST "$CORE/namespaces/$NS/configmaps" "$(cm t '{"a":"1","b":"2"}')" >/dev/null
    raw POST "$W/namespaces/$NS/widgets" "$(widget tw '{"size":2}')" >/dev/null
    raw PATCH "$W/namespaces/$NS/widgets/tw/status" '{"status":{"phase":"Up"}}' application/merge-patch+json >/dev/null
    raw POST "$CORE/namespaces/$NS/pods" "$(pod tp)" >/dev/null
    raw POST "/apis/batch/v1/namespaces/$NS/jobs" "$(job tj)" >/dev/null
    req GET "$CORE/namespaces/$NS/configmaps" "" "" "$TABLE"
    req GET "$CORE/namespaces/$NS/configmaps/t" "" "" "$TABLE"
    req GET "$W/namespaces/$NS/widgets" "" "" "$TABLE"
    req GET "$W/namespaces/$NS/widgets?includeObject=Object" "" "" "$TABLE"
    req GET "$W/namespaces/$NS/widgets/tw?includeObject=None" "" "" "$TABLE"
    req GET "$CORE/namespaces/$NS/pods" "" "" "$TABLE"
    req GET "/apis/batch/v1/namespaces/$NS/jobs" "" "" "$TABLE"
    req GET "$CORE/namespaces/$NS" "" "" "$TABLE"
    req GET "$CORE/namespaces/$NS/configmaps" "" "" "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json"
    req GET "$CORE/namespaces/$NS/configmaps/t" "" "" "application/yaml"
    req GET "$CORE/namespaces/$NS/configmaps/t" "" "" "text/html"
}

# ---- dry run ------------------------------------------------------------
SEQS+=(dry_run)
seq_dry_run() {
    local p=$CORE/namespaces/$NS/configmaps
    req POST "$p?dryRun=All" "$(cm d '{"a":"1"}')"
    req GET "$p/d"
    raw POST "$p" "$(cm d '{"a":"1"}')" >/dev/null
    req PATCH "$p/d?dryRun=All" '{"data":{"a":"2"}}' application/merge-patch+json
    req PUT "$p/d?dryRun=All" "$(cm d '{"a":"3"}')"
    req DELETE "$p/d?dryRun=All"
    req GET "$p/d"
    req POST "$p?dryRun=Yes" "$(cm e)"
    req POST "$W/namespaces/$NS/widgets?dryRun=All" "$(widget dw '{"size":99}')"
    req PATCH "$p/e?dryRun=All&fieldManager=m" "$(cm e)" application/apply-patch+yaml
    req GET "$p/e"
}

# ---- errors -------------------------------------------------------------
SEQS+=(error_bodies)
seq_error_bodies() {
    req GET "$CORE/namespaces/$NS/configmaps/none"
    req GET "$CORE/namespaces/$NS/nothings"
    req GET "/apis/nope.example.com/v1/things"
    req GET "$W/namespaces/$NS/widgets/none"
    req GET "$KQ/clusterqueues/none"
    req GET "$CORE/nodes/none"
    req DELETE "$CORE/namespaces/$NS/configmaps/none"
    req PUT "$CORE/namespaces/$NS/configmaps" '{}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a..b"}}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}'
    req POST "$CORE/namespaces/$NS/configmaps" 'not json'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gen-","generateName":"gen-"}}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}'
    req POST "$CORE/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"bad key":"v"},"annotations":{"k":""}},"data":{"a b":"c"}}'
    req DELETE "$CORE/namespaces/$NS/configmaps/c" '{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}'
    req POST "$CORE/namespaces/$NS/configmaps" "$(cm pc)"
    req DELETE "$CORE/namespaces/$NS/configmaps/pc" '{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}'
    req GET "$CORE/namespaces/$NS/configmaps?limit=x"
}

# ---- kubectl ------------------------------------------------------------
SEQS+=(kubectl_get_describe)
seq_kubectl_get_describe() {
    kc create configmap k1 -n "$NS" --from-literal=a=1
    kc label configmap k1 -n "$NS" team=ml
    kc get configmap k1 -n "$NS"
    kc get configmaps -n "$NS" -l team=ml -o wide
    kc get configmap k1 -n "$NS" -o yaml
    kc get configmap k1 -n "$NS" -o jsonpath='{.data.a}'
    kc describe configmap k1 -n "$NS"
    kc create -n "$NS" -f - <<<"$(pod kp)"
    kc get pods -n "$NS" -o wide
    kc create -n "$NS" -f - <<<"$(job kj)"
    kc get jobs -n "$NS"
    kc create -n "$NS" -f - <<<"$(widget kw '{"size":7}')"
    kc get widgets -n "$NS"
    kc get wdg kw -n "$NS" -o custom-columns=N:.metadata.name,C:.spec.color
    kc get namespace "$NS"
    kc get configmap none -n "$NS"
    kc get nothings
    kc delete configmap none -n "$NS"
    kc create configmap k1 -n "$NS"
    kc get configmaps -n "$NS" --field-selector=data=1
    kc delete configmap k1 -n "$NS"
}

SEQS+=(kubectl_apply)
seq_kubectl_apply() {
    local y='apiVersion: v1
kind: ConfigMap
metadata: {name: ap}
data: {x: "1"}'
    kc apply -n "$NS" -f - <<<"$y"
    kc apply -n "$NS" -f - <<<"$y"
    kc apply -n "$NS" -f - <<<"${y/x: \"1\"/z: \"2\"}"
    kc get configmap ap -n "$NS" -o json
    kc apply --server-side -n "$NS" -f - <<<"${y/name: ap/name: ss}"
    kc apply --server-side --field-manager=other -n "$NS" -f - <<<"${y/name: ap/name: ss}"
    kc apply --server-side --field-manager=other -n "$NS" -f - <<<"$(sed -e 's/name: ap/name: ss/' -e 's/"1"/"2"/' <<<"$y")"
    kc apply --server-side --force-conflicts --field-manager=other -n "$NS" -f - <<<"$(sed -e 's/name: ap/name: ss/' -e 's/"1"/"2"/' <<<"$y")"
    kc get configmap ss -n "$NS" -o json --show-managed-fields
    kc apply -n "$NS" -f - <<<"$(widget ka '{"size":1}')"
    kc apply -n "$NS" -f - <<<"$(widget ka '{"size":2}')"
    kc apply -n "$NS" -f - <<<"$(widget ka '{"size":20}')"
    kc apply --dry-run=server -n "$NS" -f - <<<"$(widget ka '{"size":3}')"
    kc get widget ka -n "$NS" -o jsonpath='{.spec.size}'
    kc patch widget ka -n "$NS" --type merge -p '{"spec":{"size":"big"}}'
    kc patch configmap ap -n "$NS" -p '{"data":{"p":"q"}}'
    kc patch configmap ap -n "$NS" --type json -p '[{"op":"remove","path":"/data/none"}]'
    kc delete -n "$NS" configmap ap ss --wait=false
}

# ---- webhooks (webhook.py, one HTTPS server both servers call) ---------
# webhook_up: starts webhook.py once (a CA and a serving certificate for
# 127.0.0.1 made with openssl); sets WH_URL and WH_CA (base64 of the CA)
webhook_up() {
    [ -n "${WH_URL:-}" ] && return 0
    local d=$TMP/webhook
    mkdir -p "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" -days 2 \
        -subj /CN=conformance-webhook-ca >/dev/null 2>&1 || return 1
    openssl req -newkey rsa:2048 -nodes -keyout "$d/tls.key" -out "$d/tls.csr" \
        -subj /CN=127.0.0.1 >/dev/null 2>&1 || return 1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$d/ext"
    openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
        -out "$d/tls.crt" -days 2 -extfile "$d/ext" >/dev/null 2>&1 || return 1
    python3 "$HERE/webhook.py" "$d/tls.crt" "$d/tls.key" "$d/port" 2>"$d/log" &
    until_ok 20 test -s "$d/port" || return 1
    WH_URL=https://127.0.0.1:$(cat "$d/port")
    WH_CA=$(base64 -w0 <"$d/ca.crt")
}
# whc KIND NAME WEBHOOKS_JSON: a webhook configuration's body
whc() {
    printf '{"apiVersion":"admissionregistration.k8s.io/v1","kind":"%sWebhookConfiguration","metadata":{"name":"%s"},"webhooks":%s}' "$1" "$2" "$3"
}
# wh NAME PATH OPERATION [EXTRA_JSON_MEMBERS]: one webhook on this
# sequence's ConfigMaps (its namespace only); PATH "!" is an unreachable URL
wh() {
    local url=$WH_URL$2
    [ "$2" = "!" ] && url=https://127.0.0.1:1/none
    printf '{"name":"%s","clientConfig":{"url":"%s","caBundle":"%s"},"rules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["%s"],"resources":["configmaps"]}],"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"%s"}},"sideEffects":"None","admissionReviewVersions":["v1"]%s}' \
        "$1" "$url" "$WH_CA" "$3" "$NS" "${4:-}"
}
# mutated_probe: a dry-run create comes back mutated (the configuration
# is in effect: kube-apiserver reads configurations through an informer)
mutated_probe() {
    raw POST "$CORE/namespaces/$NS/configmaps?dryRun=All" "$(cm probe)" >/dev/null &&
        jq -e '.metadata.labels.mutated == "yes"' "$TMP/rawbody" >/dev/null
}

SEQS+=(webhook_admission)
seq_webhook_admission() {
    webhook_up || { note "webhook server did not start"; return; }
    local p=$CORE/namespaces/$NS/configmaps m=/apis/admissionregistration.k8s.io/v1
    FILTER='{kind, metadata: {name: .metadata.name}, webhooks: [.webhooks[] | del(.clientConfig)]}' \
        req POST $m/mutatingwebhookconfigurations "$(whc Mutating conf-mutate "[$(wh mutate.conformance.cueue.dev /mutate CREATE)]")"
    FILTER='{kind, metadata: {name: .metadata.name}, webhooks: [.webhooks[] | del(.clientConfig)]}' \
        req POST $m/validatingwebhookconfigurations "$(whc Validating conf-validate "[$(wh deny.conformance.cueue.dev /deny CREATE ',"objectSelector":{"matchLabels":{"deny":"yes"}}'),$(wh warn.conformance.cueue.dev /warn UPDATE),$(wh ignore.conformance.cueue.dev '!' DELETE ',"failurePolicy":"Ignore","timeoutSeconds":5'),$(wh fail.conformance.cueue.dev '!' CREATE ',"objectSelector":{"matchLabels":{"fail":"yes"}}')]")"
    # kube-apiserver's validation of a configuration
    req POST $m/validatingwebhookconfigurations "$(whc Validating conf-bad '[{"name":"short","clientConfig":{"url":"https://127.0.0.1:1/x"},"admissionReviewVersions":["v1"]}]')"
    until_ok 30 mutated_probe || note "the mutating webhook is not in effect"
    # a mutating patch
    req POST "$p" "$(cm a '{"k":"1"}')"
    # a denial with its message, and kubectl's wording of it
    req POST "$p" "$(cm d '{}' '{"deny":"yes"}')"
    kc create -n "$NS" -f - <<<"$(cm d2 '{}' '{"deny":"yes"}')"
    # failurePolicy Fail with an unreachable URL
    FILTER='{code, reason, message}' req POST "$p" "$(cm f '{}' '{"fail":"yes"}')"
    # a warning (Warning header; kubectl prints it)
    req PATCH "$p/a" '{"data":{"k":"2"}}' application/merge-patch+json
    kc patch configmap a -n "$NS" --type merge -p '{"data":{"k":"3"}}'
    # failurePolicy Ignore with an unreachable URL
    req DELETE "$p/a"
    kc get mutatingwebhookconfigurations conf-mutate
    # kubectl apply (a strategic merge patch: webhooks merged by name), then
    # server-side apply (its conflict on the defaulted, atomic rules)
    local y
    y=$(whc Validating conf-applied "[$(wh applied.conformance.cueue.dev '!' CREATE ',"objectSelector":{"matchLabels":{"never":"set"}},"failurePolicy":"Ignore"')]")
    kc apply -f - <<<"$y"
    y=${y/\"Ignore\"/\"Fail\"}
    kc apply -f - <<<"$y"
    kc apply --server-side -f - <<<"$y"
    FILTER='[.webhooks[] | {name, failurePolicy, matchPolicy, namespaceSelector, objectSelector, timeoutSeconds, rules}]' \
        req GET $m/validatingwebhookconfigurations/conf-applied
    raw DELETE $m/validatingwebhookconfigurations/conf-applied >/dev/null
    raw DELETE $m/mutatingwebhookconfigurations/conf-mutate >/dev/null
    raw DELETE $m/validatingwebhookconfigurations/conf-validate >/dev/null
}

gadgets_served() { [ "$(raw GET "$G1")" = 200 ]; }

SEQS+=(webhook_conversion)
seq_webhook_conversion() {
    webhook_up || { note "webhook server did not start"; return; }
    local schema='{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"},"count":{"type":"integer"}}}}}}'
    local crd
    crd=$(printf '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.conformance.cueue.dev"},"spec":{"group":"conformance.cueue.dev","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"%s/convert","caBundle":"%s"}}},"versions":[{"name":"v1","served":true,"storage":false,"schema":%s},{"name":"v2","served":true,"storage":true,"schema":%s}]}}' "$WH_URL" "$WH_CA" "$schema" "$schema")
    raw POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$crd" >/dev/null
    kq wait --for condition=established --timeout=60s crd/gadgets.conformance.cueue.dev >/dev/null 2>&1
    local g1=/apis/conformance.cueue.dev/v1/namespaces/$NS/gadgets g2=/apis/conformance.cueue.dev/v2/namespaces/$NS/gadgets
    G1=$g1 until_ok 30 gadgets_served
    local f='{apiVersion, kind, metadata: {name: .metadata.name}, spec}'
    FILTER=$f req POST "$g1" '{"apiVersion":"conformance.cueue.dev/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"size":3}}'
    FILTER=$f req GET "$g2/g1"
    FILTER=$f req GET "$g1/g1"
    FILTER=$f req PATCH "$g1/g1" '{"spec":{"size":5}}' application/merge-patch+json
    FILTER=$f req GET "$g2/g1"
    FILTER=$f req POST "$g2" '{"apiVersion":"conformance.cueue.dev/v2","kind":"Gadget","metadata":{"name":"g2"},"spec":{"count":1}}'
    FILTER='{apiVersion, kind, items: [.items[] | {apiVersion, kind, name: .metadata.name, spec}]}' req GET "$g1"
    kc get gadgets.v1.conformance.cueue.dev -n "$NS" -o jsonpath='{range .items[*]}{.apiVersion} {.spec.size}{"\n"}{end}'
    raw DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.conformance.cueue.dev >/dev/null
}
