#!/usr/bin/env bash
# cluster-conformance.sh - drives a real `cueue cluster` with the real
# kubectl (and curl for what kubectl does not show) and checks that it
# behaves as kube-apiserver does. Prints PASS/FAIL/SKIP per check and exits
# non-zero when any check failed.
#
# Usage: e2e/cluster-conformance.sh PATH_TO_cueue
# Needs: kubectl, curl, jq, base64.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PATH_TO_cueue" >&2
    exit 2
fi
CUEUE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for tool in kubectl curl jq base64 timeout; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP  all: $tool is not installed"; exit 0; }
done
TMP=$(mktemp -d)
export HOME=$TMP/home            # kubectl's discovery cache stays private
mkdir -p "$HOME"
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

PASSES=0 FAILS=0 SKIPS=0
pass() { echo "PASS  $1"; PASSES=$((PASSES + 1)); }
fail() {
    echo "FAIL  $1: $2"
    FAILS=$((FAILS + 1))
    if [ -s "$TMP/err" ]; then sed 's/^/      | /' "$TMP/err" | head -n 15; fi
}
skip() { echo "SKIP  $1: $2"; SKIPS=$((SKIPS + 1)); }
# check NAME COMMAND...: PASS when the command succeeds.
check() {
    local name=$1; shift
    if "$@" >"$TMP/out" 2>"$TMP/err"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

# start NAME ARGS...: starts a server, waits for its kubeconfig, sets
# KC_<NAME>, URL_<NAME>, PID_<NAME>.
start() {
    local name=$1; shift
    local kc=$TMP/$name.kc
    rm -f "$kc"
    "$CUEUE" cluster --kubeconfig-out "$kc" "$@" 2>>"$TMP/$name.log" &
    local pid=$!
    PIDS="$PIDS $pid"
    for _ in $(seq 1 100); do
        [ -s "$kc" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -s "$kc" ]; then
        echo "cannot start cueue cluster $*:" >&2
        cat "$TMP/$name.log" >&2
        return 1
    fi
    eval "KC_$name=$kc PID_$name=$pid"
    eval "URL_$name=$(sed -n 's/^ *server: "\(.*\)"$/\1/p' "$kc")"
}

# stop NAME: SIGTERM, and the exit code of the server.
stop() {
    local pid
    eval "pid=\$PID_$1"
    kill -TERM "$pid"
    wait "$pid"
}

k() { kubectl --kubeconfig "$KC" --request-timeout=15s "$@"; }
# api METHOD PATH [curl args...]: raw HTTP; body to $TMP/body, prints the code.
api() {
    local m=$1 p=$2; shift 2
    curl -sS -o "$TMP/body" -w '%{http_code}' -X "$m" "$URL$p" "$@"
}
json() { jq -r "$1" "$TMP/body"; }
# wait_line FILE TEXT PID: waits (up to 3 s) for TEXT in FILE, then ends
# the background watch PID.
wait_line() {
    for _ in $(seq 1 30); do grep -q "$2" "$1" 2>/dev/null && break; sleep 0.1; done
    kill "$3" 2>/dev/null
    wait "$3" 2>/dev/null
}

# ------------------------------------------------------------------
start main --listen 127.0.0.1:0 --admin || { echo "FAIL  start"; exit 1; }
KC=$KC_main URL=$URL_main
case "$URL" in http://127.0.0.1:[0-9]*) pass "start: kubeconfig written, port picked ($URL)";;
               *) fail "start" "unexpected server URL '$URL'";; esac
grep -q "serving $URL" "$TMP/main.log" && grep -q "kubeconfig written to $KC" "$TMP/main.log" \
    && pass "start: URL and kubeconfig path on stderr" \
    || fail "start: URL and kubeconfig path on stderr" "$(cat "$TMP/main.log")"

# ---- discovery ----
if k version -o json >"$TMP/out" 2>"$TMP/err" &&
   [ "$(jq -r .serverVersion.gitVersion "$TMP/out")" = "v1.32.0-cueue" ]; then
    pass "kubectl version"
else fail "kubectl version" "no server version"; fi

if k api-resources >"$TMP/out" 2>"$TMP/err"; then
    missing=""
    for r in "pods .*po .*v1 .*true .*Pod" "nodes .*no .*v1 .*false .*Node" "namespaces .*ns " \
             "jobs .*batch/v1 .*true .*Job" "leases .*coordination.k8s.io/v1" \
             "priorityclasses .*pc .*scheduling.k8s.io/v1" "events .*ev .*v1 " \
             "events .*events.k8s.io/v1" "configmaps .*cm " "secrets " "serviceaccounts .*sa " \
             "customresourcedefinitions .*crd,crds .*apiextensions.k8s.io/v1"; do
        grep -Eq "^$r" "$TMP/out" || missing="$missing [$r]"
    done
    [ -z "$missing" ] && pass "kubectl api-resources" || fail "kubectl api-resources" "missing:$missing"
else fail "kubectl api-resources" "failed"; fi

code=$(api GET /healthz); [ "$code" = 200 ] && [ "$(cat "$TMP/body")" = ok ] \
    && pass "healthz" || fail "healthz" "code $code"
codes=""
for p in /readyz /livez /api /api/v1 /apis /apis/batch /apis/batch/v1 /apis/coordination.k8s.io/v1 /apis/events.k8s.io/v1; do
    codes="$codes $(api GET $p)"
done
[ "$codes" = " 200 200 200 200 200 200 200 200 200" ] && pass "readyz, livez and discovery documents" \
    || fail "readyz, livez, discovery" "$codes"
code=$(api GET /apis/nope.example.com/v1/things)
[ "$code" = 404 ] && [ "$(json .message)" = "the server could not find the requested resource" ] \
    && pass "404 for an unknown path is a Status" || fail "404 for an unknown path" "code $code $(cat "$TMP/body")"
code=$(api PUT /api/v1/namespaces/default/configmaps -d '{}')
[ "$code" = 405 ] && [ "$(json .reason)" = MethodNotAllowed ] \
    && pass "405 MethodNotAllowed" || fail "405 MethodNotAllowed" "code $code"

# ---- namespaces, CRDs, samples ----
check "kubectl create namespace" k create namespace conformance
if k get namespace conformance -o jsonpath='{.status.phase}' >"$TMP/out" 2>"$TMP/err"; then
    pass "kubectl get namespace"; else fail "kubectl get namespace" "not found"; fi
k create namespace conformance >/dev/null 2>"$TMP/err"
grep -q 'Error from server (AlreadyExists): namespaces "conformance" already exists' "$TMP/err" \
    && pass "AlreadyExists as kube-apiserver words it" || fail "AlreadyExists" "unexpected error text"

# A CRD of our own, so the custom-resource checks do not depend on crds/.
cat >"$TMP/widget-crd.yaml" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.conformance.cueue.dev
spec:
  group: conformance.cueue.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              color: {type: string, enum: [red, blue], default: red}
              tags: {type: array, maxItems: 2, items: {type: string, maxLength: 3}}
              code: {type: string, pattern: '^[a-z]+$'}
              qty: {x-kubernetes-int-or-string: true}
          status:
            type: object
            properties:
              phase: {type: string}
Y
check "kubectl apply a CRD" k apply -f "$TMP/widget-crd.yaml"
sleep 0.2
cat >"$TMP/widget.yaml" <<'Y'
apiVersion: conformance.cueue.dev/v1
kind: Widget
metadata: {name: w1, namespace: conformance}
spec: {size: 3}
Y
check "kubectl apply a custom resource" k apply -f "$TMP/widget.yaml"
if k get widgets -n conformance >"$TMP/out" 2>"$TMP/err" &&
   head -1 "$TMP/out" | grep -Eq '^NAME +SIZE +PHASE +AGE' && grep -Eq '^w1 +3 ' "$TMP/out"; then
    pass "kubectl get: CRD printer columns"
else fail "kubectl get: CRD printer columns" "$(cat "$TMP/out")"; fi
if k get wdg w1 -n conformance -o jsonpath='{.spec.color}' >"$TMP/out" 2>"$TMP/err" &&
   [ "$(cat "$TMP/out")" = red ]; then pass "schema defaults applied (short name works)"
else fail "schema defaults applied" "color='$(cat "$TMP/out")'"; fi

sed 's/size: 3/size: 3, foo: 1/' "$TMP/widget.yaml" >"$TMP/widget-unknown.yaml"
k apply -f "$TMP/widget-unknown.yaml" >"$TMP/out" 2>"$TMP/err"
grep -q 'strict decoding error: unknown field "spec.foo"' "$TMP/err" \
    && pass "strict field validation (unknown field)" || fail "strict field validation" "no strict error"

code=$(api POST /apis/conformance.cueue.dev/v1/namespaces/conformance/widgets \
    -H 'Content-Type: application/json' \
    -d '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"size":11,"color":"green"}}')
if [ "$code" = 422 ] && [ "$(json .reason)" = Invalid ] &&
   [ "$(json '[.details.causes[].field] | sort | join(",")')" = "spec.color,spec.size" ]; then
    pass "schema validation: 422 Invalid naming every bad field"
else fail "schema validation" "code $code $(cat "$TMP/body")"; fi
code=$(api POST /apis/conformance.cueue.dev/v1/namespaces/conformance/widgets \
    -H 'Content-Type: application/json' \
    -d '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"bad2"},"spec":{"size":"x","tags":["a","b","long"],"code":"A1","qty":true}}')
if [ "$code" = 422 ] &&
   [ "$(json '[.details.causes[] | .field + ":" + .reason] | sort | join(",")')" = "spec.code:FieldValueInvalid,spec.qty:FieldValueTypeInvalid,spec.size:FieldValueTypeInvalid,spec.tags:FieldValueTooMany,spec.tags[2]:FieldValueTooLong" ] &&
   [ "$(api POST /apis/conformance.cueue.dev/v1/namespaces/conformance/widgets -H 'Content-Type: application/json' \
        -d '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"bad3"},"spec":{"qty":"1Gi"}}')/$(json .message)" = \
     '422/Widget.conformance.cueue.dev "bad3" is invalid: spec.size: Required value' ]; then
    pass "schema validation: type, maxItems, maxLength, pattern, int-or-string, required"
else fail "schema validation (more keywords)" "code $code $(cat "$TMP/body")"; fi

if [ -n "$(ls "$ROOT"/crds/*.yaml 2>/dev/null)" ]; then
    check "kubectl apply -f crds/" k apply -f "$ROOT/crds/"
    sleep 0.2
    if k apply -f "$ROOT/config/samples/" >"$TMP/out" 2>"$TMP/err"; then
        pass "kubectl apply -f config/samples/"
    else fail "kubectl apply -f config/samples/" "failed"; fi
    if k get clusterqueues >"$TMP/out" 2>"$TMP/err" && head -1 "$TMP/out" | grep -q '^NAME' &&
       [ "$(head -1 "$TMP/out" | wc -w)" -ge 3 ] && grep -q '^research-gpu ' "$TMP/out"; then
        pass "kubectl get clusterqueues (columns: $(head -1 "$TMP/out" | tr -s ' ' | tr ' ' ','))"
    else fail "kubectl get clusterqueues" "$(cat "$TMP/out")"; fi
    check "kubectl get workloads -A" k get workloads -A
    if k get clusterqueues,localqueues,workloads -A >"$TMP/out" 2>"$TMP/err" &&
       grep -Eq '^NAME +COHORT +PENDING WORKLOADS +ACTIVE +AGE *$' "$TMP/out" &&
       grep -Eq '^NAMESPACE +NAME +CLUSTERQUEUE +PENDING WORKLOADS +ADMITTED WORKLOADS +ACTIVE +AGE *$' "$TMP/out" &&
       grep -Eq '^NAMESPACE +NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE *$' "$TMP/out" &&
       grep -q '^clusterqueue.kueue.x-k8s.io/research-gpu ' "$TMP/out" &&
       grep -Eq 'localqueue.kueue.x-k8s.io/research +research-gpu' "$TMP/out"; then
        pass "kubectl get clusterqueues,localqueues,workloads -A (Kueue's columns)"
    else fail "kubectl get clusterqueues,localqueues,workloads" "$(cat "$TMP/out")"; fi
    k apply -f "$ROOT/config/samples/20-clusterqueues.yaml" >"$TMP/out" 2>"$TMP/err" &&
        ! grep -qv unchanged "$TMP/out" && pass "kubectl apply of the samples again: unchanged" \
        || fail "kubectl apply of the samples again" "$(cat "$TMP/out")"
    k get clusterqueue research-gpu -o json >"$TMP/out" 2>"$TMP/err" &&
        jq -e '.spec.queueingStrategy == "BestEffortFIFO"' "$TMP/out" >/dev/null \
        && pass "kubectl get clusterqueue -o json" || fail "kubectl get clusterqueue -o json" "bad JSON"
    code=$(api PATCH /apis/kueue.x-k8s.io/v1beta2/clusterqueues/research-gpu \
        -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"queueingStrategy":"Fifo"}}')
    [ "$code" = 422 ] && grep -q 'spec.queueingStrategy' "$TMP/body" \
        && pass "Kueue CRD schema: bad enum is 422" || fail "Kueue CRD schema enum" "code $code"
    # server-side apply on the status subresource, as the controller writes
    # queue statuses: a flavor (listType=map, key name) the second apply no
    # longer lists is removed; the entry says subresource "status"
    sst() {   # sst FLAVORS_JSON: applies status.flavorsUsage as manager qs
        api PATCH "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/research-gpu/status?fieldManager=qs&force=true" \
            -H 'Content-Type: application/apply-patch+yaml' \
            -d "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"research-gpu\"},\"status\":{\"pendingWorkloads\":1,\"flavorsUsage\":$1}}"
    }
    c1=$(sst '[{"name":"a100","resources":[{"name":"nvidia.com/gpu","total":"1"}]},{"name":"h100","resources":[{"name":"nvidia.com/gpu","total":"2"}]}]')
    c2=$(sst '[{"name":"h100","resources":[{"name":"nvidia.com/gpu","total":"3"}]}]')
    if [ "$c1 $c2" = "200 200" ] && jq -e '[.status.flavorsUsage[].name] == ["h100"] and .status.flavorsUsage[0].resources[0].total == "3"
            and .spec.queueingStrategy == "BestEffortFIFO"
            and ([.metadata.managedFields[] | select(.manager == "qs")] | length == 1 and .[0].subresource == "status"
                 and .[0].operation == "Apply" and (.[0].fieldsV1["f:status"]["f:flavorsUsage"] | has("k:{\"name\":\"h100\"}")))' \
            "$TMP/body" >/dev/null; then
        pass "server-side apply of a status: a list item no longer applied is removed (subresource status)"
    else fail "status apply" "$c1 $c2 $(jq -c '[.status, .metadata.managedFields]' "$TMP/body" 2>&1 | head -c 600)"; fi
else
    skip "kubectl apply -f crds/" "crds/ is empty"
    skip "kubectl apply -f config/samples/" "needs crds/"
    skip "kubectl get clusterqueues" "needs crds/"
fi

# ---- built-in objects through kubectl ----
NS="-n conformance"
check "kubectl create configmap" k $NS create configmap c1 --from-literal=a=1
if k $NS get configmap c1 -o json >"$TMP/out" 2>"$TMP/err" &&
   jq -e '.data.a == "1" and (.metadata.uid | length) > 0 and (.metadata.resourceVersion | length) > 0 and (.metadata.creationTimestamp | test("Z$"))' "$TMP/out" >/dev/null; then
    pass "kubectl get -o json (uid, resourceVersion, creationTimestamp)"
else fail "kubectl get -o json" "$(cat "$TMP/out")"; fi
if k $NS get configmaps >"$TMP/out" 2>"$TMP/err" && head -1 "$TMP/out" | grep -Eq '^NAME +DATA +AGE'; then
    pass "kubectl get configmaps (built-in columns)"; else fail "kubectl get configmaps" "$(cat "$TMP/out")"; fi
check "kubectl label" k $NS label configmap c1 team=ml tier=gold
if k $NS get configmaps -l 'team=ml,tier in (gold,silver),!missing' -o name >"$TMP/out" 2>"$TMP/err" &&
   [ "$(cat "$TMP/out")" = configmap/c1 ] && [ -z "$(k $NS get cm -l 'team!=ml' -o name 2>/dev/null | grep c1)" ]; then
    pass "label selectors"; else fail "label selectors" "$(cat "$TMP/out")"; fi
check "kubectl patch --type merge" k $NS patch configmap c1 --type merge -p '{"data":{"b":"2"}}'
check "kubectl patch --type json" k $NS patch configmap c1 --type json -p '[{"op":"add","path":"/data/c","value":"3"},{"op":"remove","path":"/data/a"}]'
if [ "$(k $NS get cm c1 -o jsonpath='{.data}' 2>/dev/null)" = '{"b":"2","c":"3"}' ]; then
    pass "merge and JSON patches applied"; else fail "merge and JSON patches applied" "$(k $NS get cm c1 -o jsonpath='{.data}')"; fi

cat >"$TMP/pod.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: conformance}
spec:
  schedulingGates: [{name: conformance.cueue.dev/hold}]
  containers:
  - {name: main, image: busybox:1}
  - {name: side, image: busybox:1}
Y
check "kubectl create pod" k create -f "$TMP/pod.yaml"
check "kubectl patch --type strategic" k $NS patch pod p1 --type strategic -p '{"spec":{"containers":[{"name":"main","image":"busybox:2"}]}}'
if [ "$(k $NS get pod p1 -o jsonpath='{range .spec.containers[*]}{.name}={.image} {end}' 2>/dev/null)" = "main=busybox:2 side=busybox:1 " ]; then
    pass "strategic merge: containers merged by name"
else fail "strategic merge" "$(k $NS get pod p1 -o jsonpath='{.spec.containers}')"; fi

cat >"$TMP/cm-apply.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: applied, namespace: conformance}
data: {x: "1"}
Y
check "kubectl apply (create)" k apply -f "$TMP/cm-apply.yaml"
k apply -f "$TMP/cm-apply.yaml" >"$TMP/out" 2>"$TMP/err" && grep -q unchanged "$TMP/out" \
    && pass "kubectl apply again: unchanged" || fail "kubectl apply again" "$(cat "$TMP/out")"
sed 's/x: "1"/z: "2"/' "$TMP/cm-apply.yaml" >"$TMP/cm-apply2.yaml"
if k apply -f "$TMP/cm-apply2.yaml" >"$TMP/out" 2>"$TMP/err" && grep -q configured "$TMP/out" &&
   [ "$(k $NS get cm applied -o jsonpath='{.data}')" = '{"z":"2"}' ]; then
    pass "kubectl apply: field removed from the file is removed"
else fail "kubectl apply (update)" "$(k $NS get cm applied -o jsonpath='{.data}')"; fi
sed 's/name: applied/name: ssa/' "$TMP/cm-apply.yaml" >"$TMP/ssa.yaml"
check "kubectl apply --server-side (create)" k apply --server-side -f "$TMP/ssa.yaml"
sed 's/x: "1"/x: "5"/' "$TMP/ssa.yaml" >"$TMP/ssa2.yaml"
if k apply --server-side -f "$TMP/ssa2.yaml" >"$TMP/out" 2>"$TMP/err" &&
   [ "$(k $NS get cm ssa -o jsonpath='{.data.x}')" = 5 ]; then
    pass "kubectl apply --server-side (update)"; else fail "kubectl apply --server-side (update)" "$(cat "$TMP/err")"; fi
# The second client-side apply of a changed file is a strategic merge PATCH
# (kubectl-client-side-apply) that also updates the last-applied annotation.
sed 's/z: "2"/z: "3"/' "$TMP/cm-apply2.yaml" >"$TMP/cm-apply3.yaml"
if k apply -f "$TMP/cm-apply3.yaml" -v=6 >"$TMP/out" 2>"$TMP/err" &&
   grep -q 'PATCH .*/configmaps/applied?fieldManager=kubectl-client-side-apply.* 200 OK' "$TMP/err" &&
   k $NS get cm applied -o json >"$TMP/out" 2>/dev/null &&
   jq -e '(.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] | fromjson | .data) == {"z":"3"} and .data == {"z":"3"}' "$TMP/out" >/dev/null; then
    pass "kubectl apply: a PATCH that updates the last-applied annotation"
else fail "kubectl apply (PATCH, last-applied)" "$(grep -E 'PATCH|POST' "$TMP/err" | head -3)"; fi
k apply --server-side -f "$TMP/ssa2.yaml" >"$TMP/out" 2>"$TMP/err" && grep -q serverside-applied "$TMP/out" \
    && [ "$(k $NS get cm ssa -o jsonpath='{.data.x}')" = 5 ] \
    && pass "kubectl apply --server-side again (same file)" || fail "kubectl apply --server-side again" "$(cat "$TMP/err")"

# Field management: two appliers of one ConfigMap. A different value for a
# field the other owns is a conflict (kubectl prints the Status message);
# --force-conflicts takes it over; a field dropped from a re-applied file
# and owned by nobody else is removed; managedFields show who owns what.
cat >"$TMP/own-a.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: owned, namespace: conformance, labels: {team: a}}
data: {x: "1", k2: "1"}
Y
cat >"$TMP/own-b.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: owned, namespace: conformance}
data: {x: "2"}
Y
check "kubectl apply --server-side --field-manager=mgr-a" \
    k apply --server-side --field-manager=mgr-a -f "$TMP/own-a.yaml"
if ! k apply --server-side --field-manager=mgr-b -f "$TMP/own-b.yaml" >"$TMP/out" 2>"$TMP/err" &&
   grep -q 'Apply failed with 1 conflict: conflict with "mgr-a": .data.x' "$TMP/err" &&
   [ "$(k $NS get cm owned -o jsonpath='{.data.x}')" = 1 ]; then
    pass "server-side apply: a conflict with another field manager (409, kubectl's message)"
else fail "server-side apply conflict" "$(cat "$TMP/out" "$TMP/err" | head -3)"; fi
code=$(api PATCH "/api/v1/namespaces/conformance/configmaps/owned?fieldManager=mgr-b" \
    -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$TMP/own-b.yaml")
if [ "$code" = 409 ] && jq -e '.reason == "Conflict" and .details.causes == [{"reason":"FieldManagerConflict","message":"conflict with \"mgr-a\"","field":".data.x"}]' "$TMP/body" >/dev/null; then
    pass "server-side apply conflict: Status with FieldManagerConflict causes"
else fail "server-side apply conflict Status" "$code $(cat "$TMP/body")"; fi
if k apply --server-side --field-manager=mgr-b --force-conflicts -f "$TMP/own-b.yaml" >"$TMP/out" 2>"$TMP/err" &&
   k $NS get cm owned -o json --show-managed-fields >"$TMP/out" 2>"$TMP/err" &&
   jq -e '.data.x == "2" and
          ([.metadata.managedFields[] | select(.manager == "mgr-b" and .operation == "Apply")][0].fieldsV1 == {"f:data":{"f:x":{}}}) and
          ([.metadata.managedFields[] | select(.manager == "mgr-a")][0].fieldsV1 == {"f:data":{"f:k2":{}},"f:metadata":{"f:labels":{"f:team":{}}}})' "$TMP/out" >/dev/null; then
    pass "server-side apply --force-conflicts takes the field over (kubectl get -o json --show-managed-fields)"
else fail "server-side apply --force-conflicts" "$(jq -c '[.data, .metadata.managedFields]' "$TMP/out" 2>&1 | head -c 600)"; fi
cat >"$TMP/own-a2.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: owned, namespace: conformance}
data: {w: "1"}
Y
if k apply --server-side --field-manager=mgr-a -f "$TMP/own-a2.yaml" >"$TMP/out" 2>"$TMP/err" &&
   [ "$(k $NS get cm owned -o jsonpath='{.data}')" = '{"w":"1","x":"2"}' ] &&
   [ -z "$(k $NS get cm owned -o jsonpath='{.metadata.labels}')" ]; then
    pass "server-side apply: fields dropped from the file are removed, other managers' fields stay"
else fail "server-side apply removal" "$(k $NS get cm owned -o jsonpath='{.data} {.metadata.labels}')"; fi
if k $NS get cm owned -o yaml >"$TMP/out" 2>"$TMP/err" && ! grep -q managedFields "$TMP/out" &&
   k $NS get cm owned -o yaml --show-managed-fields >"$TMP/out" 2>"$TMP/err" && grep -q 'manager: mgr-a' "$TMP/out"; then
    pass "kubectl get -o yaml hides managedFields unless --show-managed-fields"
else fail "kubectl get -o yaml and managedFields" "$(head -5 "$TMP/out")"; fi
code=$(api PATCH "/api/v1/namespaces/conformance/configmaps/owned" \
    -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$TMP/own-b.yaml")
[ "$code" = 422 ] && jq -e '.message | test("fieldManager: Required value: is required for apply patch")' "$TMP/body" >/dev/null \
    && pass "server-side apply without fieldManager: 422" || fail "apply without fieldManager" "$code $(cat "$TMP/body")"
code=$(api PATCH "/api/v1/namespaces/conformance/configmaps/owned" -A 'curl/8.0' \
    -H 'Content-Type: application/merge-patch+json' -d '{"data":{"v":"c"}}')
if [ "$code" = 200 ] && jq -e '[.metadata.managedFields[] | select(.manager == "curl" and .operation == "Update")][0].fieldsV1 == {"f:data":{"f:v":{}}}' "$TMP/body" >/dev/null; then
    pass "an update without fieldManager is owned by the User-Agent's product (curl)"
else fail "update manager from User-Agent" "$code $(jq -c .metadata.managedFields "$TMP/body" 2>&1 | head -c 400)"; fi
code=$(api PATCH "/api/v1/namespaces/conformance/configmaps/owned?fieldManager=reset" \
    -H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"managedFields":[{}]}}')
if [ "$code" = 200 ] && jq -e '.metadata.managedFields == null' "$TMP/body" >/dev/null; then
    pass "managedFields: [{}] clears field tracking"
else fail "managedFields reset" "$code $(jq -c .metadata.managedFields "$TMP/body" 2>&1 | head -c 300)"; fi

# Strategic merge on a Job's pod template: containers and env merge by name;
# generation moves on spec changes only.
cat >"$TMP/sj.yaml" <<'Y'
apiVersion: batch/v1
kind: Job
metadata: {name: sj, namespace: conformance}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: "busybox:1", env: [{name: A, value: "1"}, {name: B, value: "2"}]}
      - {name: side, image: "busybox:1"}
Y
k apply -f "$TMP/sj.yaml" >/dev/null 2>&1
if k $NS patch job sj --type strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"busybox:2","env":[{"name":"B","value":"3"}]}]}}}}' >"$TMP/out" 2>"$TMP/err" &&
   k $NS get job sj -o json >"$TMP/out" 2>"$TMP/err" &&
   [ "$(jq -c '[.spec.template.spec.containers[] | [.name, .image, ([.env[]? | .name + "=" + .value] | join(","))]]' "$TMP/out")" = '[["main","busybox:2","A=1,B=3"],["side","busybox:1",""]]' ] &&
   [ "$(jq -r .metadata.generation "$TMP/out")" = 2 ]; then
    pass "kubectl patch --type strategic of a Job's pod template (containers, env by name)"
else fail "strategic patch of a Job template" "$(jq -c '.spec.template.spec.containers, .metadata.generation' "$TMP/out" 2>/dev/null)"; fi
k $NS label job sj touched=yes >/dev/null 2>&1
[ "$(k $NS get job sj -o jsonpath='{.metadata.generation}')" = 2 ] \
    && pass "generation is not bumped by a metadata-only change" || fail "generation" "bumped by a label"

# generateName, and the label selector operators not used above.
code=$(api POST /api/v1/namespaces/conformance/configmaps -H 'Content-Type: application/json' \
    -d '{"metadata":{"generateName":"gen-","labels":{"env":"dev"}}}')
[ "$code" = 201 ] && case "$(json .metadata.name)" in gen-?????) true;; *) false;; esac \
    && pass "generateName" || fail "generateName" "code $code name $(json .metadata.name)"
if [ "$(k $NS get cm -l 'env notin (prod),env' -o name 2>/dev/null | grep -c '^configmap/gen-')" = 1 ] &&
   [ -z "$(k $NS get cm -l 'env notin (dev)' -o name 2>/dev/null | grep gen-)" ]; then
    pass "label selectors: notin and exists"
else fail "label selectors notin/exists" "$(k $NS get cm -l 'env notin (prod),env' -o name 2>&1)"; fi
check "kubectl delete" k $NS delete configmap applied
k $NS get configmap applied >"$TMP/out" 2>"$TMP/err"
grep -q 'Error from server (NotFound): configmaps "applied" not found' "$TMP/err" \
    && pass "NotFound after delete" || fail "NotFound after delete" "unexpected"

# ---- kubectl get -w ----
timeout 6 kubectl --kubeconfig "$KC" $NS get configmaps -w >"$TMP/watch.out" 2>"$TMP/watch.err" &
WPID=$!
sleep 1.5
k $NS create configmap watched >/dev/null 2>&1
k $NS label configmap watched seen=yes >/dev/null 2>&1
wait $WPID
if grep -q '^c1 ' "$TMP/watch.out" && grep -q '^watched ' "$TMP/watch.out"; then
    pass "kubectl get -w (list, then events as table rows)"
else fail "kubectl get -w" "$(cat "$TMP/watch.out" "$TMP/watch.err")"; fi

# ---- raw HTTP ----
CM=/api/v1/namespaces/conformance/configmaps
api GET $CM/c1 >/dev/null; OLD=$(cat "$TMP/body")
k $NS patch configmap c1 --type merge -p '{"data":{"d":"4"}}' >/dev/null 2>&1
code=$(api PUT $CM/c1 -H 'Content-Type: application/json' -d "$OLD")
[ "$code" = 409 ] && [ "$(json .reason)" = Conflict ] && grep -q 'the object has been modified' "$TMP/body" \
    && pass "409 Conflict on a stale PUT" || fail "409 on a stale PUT" "code $code"

api GET "$CM?limit=1" >/dev/null; RV=$(json .metadata.resourceVersion)
for n in r1 r2; do api POST $CM -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"$n\"}}" >/dev/null; done
curl -sS -N "$URL$CM?watch=1&resourceVersion=$RV&timeoutSeconds=2" >"$TMP/resume" 2>"$TMP/err"
if [ "$(jq -r 'select(.type=="ADDED") | .object.metadata.name' "$TMP/resume" | tr '\n' ' ')" = "r1 r2 " ]; then
    pass "watch resumes from a resourceVersion (only later events)"
else fail "watch resume" "$(cat "$TMP/resume")"; fi
code=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' "$URL$CM?watch=1&resourceVersion=$RV&timeoutSeconds=1"; echo " rc=$?")
# ends with 200 and no transport error after at least the timeout (slack for a loaded machine)
if echo "$code" | awk '$1 == 200 && $2 >= 1 && $2 < 10 && $3 == "rc=0" { ok = 1 } END { exit !ok }'; then
    pass "watch timeoutSeconds ends the stream cleanly"
else fail "watch timeoutSeconds" "$code"; fi

curl -sS -N "$URL$CM?watch=1&allowWatchBookmarks=true&resourceVersion=$RV&timeoutSeconds=3" >"$TMP/bm" 2>"$TMP/err" &
BPID=$!
sleep 0.5
api POST $CM -H 'Content-Type: application/json' -d '{"metadata":{"name":"r3"}}' >/dev/null
wait $BPID
if jq -s -e '[.[] | select(.type=="BOOKMARK")] | length > 0 and all(.object.metadata.resourceVersion | length > 0)' "$TMP/bm" >/dev/null 2>&1; then
    pass "BOOKMARK events with allowWatchBookmarks"
else fail "BOOKMARK" "$(cat "$TMP/bm")"; fi

code=$(api POST /cueue/faults -d '{"compact":true}')
[ "$code" = 200 ] || fail "fault endpoint" "code $code"
code=$(api GET "$CM?watch=1&resourceVersion=$RV")
if [ "$code" = 410 ] && [ "$(json .code)" = 410 ]; then
    pass "410 Gone after compaction (HTTP status and Status body)"
else fail "410 after compaction" "code $code $(cat "$TMP/body")"; fi

for i in 1 2 3 4 5; do api POST $CM -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"page$i\",\"labels\":{\"page\":\"yes\"}}}" >/dev/null; done
names="" cont="" pages=0
while :; do
    api GET "$CM?labelSelector=page%3Dyes&limit=2${cont:+&continue=$cont}" >/dev/null
    names="$names$(jq -r '.items[].metadata.name' "$TMP/body" | tr '\n' ' ')"
    pages=$((pages + 1))
    cont=$(json '.metadata.continue // empty')
    [ -z "$cont" ] || [ $pages -gt 5 ] && break
done
[ "$names" = "page1 page2 page3 page4 page5 " ] && [ $pages = 3 ] \
    && pass "pagination with limit/continue (3 pages)" || fail "pagination" "$pages pages: $names"

code=$(api GET "$CM?fieldSelector=metadata.name%3Dpage2")
[ "$code" = 200 ] && [ "$(json '[.items[].metadata.name] | join(",")')" = page2 ] \
    && pass "fieldSelector metadata.name" || fail "fieldSelector" "$(cat "$TMP/body")"
code=$(api GET "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
[ "$code" = 400 ] && [ "$(json .reason)" = BadRequest ] && [ "$(json .message)" = 'field label not supported: spec.bogus' ] \
    && pass "fieldSelector: unsupported field is 400 BadRequest" || fail "fieldSelector unsupported field" "code $code $(cat "$TMP/body")"

# resourceVersion / resourceVersionMatch on LIST
api GET "$CM" >/dev/null; NOW=$(json .metadata.resourceVersion)
code=$(api GET "$CM?resourceVersion=$NOW&resourceVersionMatch=NotOlderThan")
c1="$code/$(json .metadata.resourceVersion)"
code=$(api GET "$CM?resourceVersion=$((NOW + 1000))&resourceVersionMatch=NotOlderThan")
c2="$code/$(json .reason)"
[ "$c1" = "200/$NOW" ] && [ "$c2" = 504/Timeout ] && grep -q 'Too large resource version' "$TMP/body" \
    && pass "LIST resourceVersionMatch=NotOlderThan (current ok, future 504 Too large)" \
    || fail "resourceVersionMatch=NotOlderThan" "$c1 $c2"
code=$(api GET "$CM?resourceVersion=$NOW&resourceVersionMatch=Exact"); c1="$code/$(json .metadata.resourceVersion)"
api POST $CM -H 'Content-Type: application/json' -d '{"metadata":{"name":"exact-later"}}' >/dev/null
code=$(api GET "$CM?resourceVersion=$NOW&resourceVersionMatch=Exact"); c2="$code/$(json .reason)"
code=$(api GET "$CM?resourceVersion=0&resourceVersionMatch=Exact"); c3="$code/$(json .reason)"
m3=$(json .message)
code=$(api GET "$CM?resourceVersionMatch=NotOlderThan"); c4="$code/$(json .reason)"
if [ "$c1" = "200/$NOW" ] && [ "$c2" = 410/Expired ] && [ "$c3" = 422/Invalid ] && [ "$c4" = 422/Invalid ] &&
   [ "$m3" = 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"' ]; then
    pass "LIST resourceVersionMatch=Exact (same RV ok, changed since 410, RV 0 and no RV 422)"
else fail "resourceVersionMatch=Exact" "$c1 $c2 $c3 $c4 $m3"; fi

api POST $CM -H 'Content-Type: application/json' -d '{"metadata":{"name":"fin","finalizers":["conformance.cueue.dev/hold"]}}' >/dev/null
code=$(api DELETE $CM/fin)
if [ "$code" = 200 ] && api GET $CM/fin >/dev/null && [ -n "$(json '.metadata.deletionTimestamp // empty')" ]; then
    code=$(api PATCH $CM/fin -H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"finalizers":null}}')
    code=$(api GET $CM/fin)
    [ "$code" = 404 ] && pass "finalizers: deletionTimestamp, removal with the last finalizer" \
        || fail "finalizers" "still there after removing the finalizer ($code)"
else fail "finalizers" "not kept with deletionTimestamp: $(cat "$TMP/body")"; fi

api POST $CM -H 'Content-Type: application/json' -d '{"metadata":{"name":"owner"}}' >/dev/null
OUID=$(json .metadata.uid)
api POST /api/v1/namespaces/conformance/pods -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"owned\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"owner\",\"uid\":\"$OUID\",\"controller\":true}]},\"spec\":{\"schedulingGates\":[{\"name\":\"hold\"}],\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}" >/dev/null
api DELETE $CM/owner >/dev/null
gone=0
for _ in $(seq 1 30); do
    [ "$(api GET /api/v1/namespaces/conformance/pods/owned)" = 404 ] && { gone=1; break; }
    sleep 0.2
done
[ $gone = 1 ] && pass "garbage collection of an owned pod" || fail "garbage collection" "pod still there"

W=/apis/conformance.cueue.dev/v1/namespaces/conformance/widgets
api POST $W -H 'Content-Type: application/json' -d '{"apiVersion":"conformance.cueue.dev/v1","kind":"Widget","metadata":{"name":"st"},"spec":{"size":2},"status":{"phase":"Ignored"}}' >/dev/null
s1=$(json '.status.phase // "none"')
api PATCH $W/st/status -H 'Content-Type: application/merge-patch+json' -d '{"status":{"phase":"Ready"},"spec":{"size":9}}' >/dev/null
s2=$(json '.status.phase'); z2=$(json '.spec.size')
api PATCH $W/st -H 'Content-Type: application/merge-patch+json' -d '{"status":{"phase":"Other"},"spec":{"size":4}}' >/dev/null
s3=$(json '.status.phase'); z3=$(json '.spec.size')
if [ "$s1" = none ] && [ "$s2" = Ready ] && [ "$z2" = 2 ] && [ "$s3" = Ready ] && [ "$z3" = 4 ]; then
    pass "status subresource: /status writes only status, the main endpoint ignores status"
else fail "status subresource" "create:$s1 status:$s2/$z2 main:$s3/$z3"; fi

api POST /cueue/faults -d '{"respond":{"match":"^PATCH .*/configmaps/c1$","code":429,"times":1,"retryAfter":2}}' >/dev/null
hdr=$(curl -sS -D - -o "$TMP/body" -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{}' "$URL$CM/c1")
code2=$(api PATCH $CM/c1 -H 'Content-Type: application/merge-patch+json' -d '{}')
if echo "$hdr" | grep -q '^HTTP/1.1 429' && echo "$hdr" | grep -qi '^Retry-After: 2' && [ "$code2" = 200 ]; then
    pass "fault injection: 429 with Retry-After, once"
else fail "fault injection 429" "$hdr / then $code2"; fi
api POST /cueue/faults -d '{"respond":{"match":"^PATCH .*/configmaps/c1$","code":409,"times":1}}' >/dev/null
k $NS patch configmap c1 --type merge -p '{"data":{"e":"5"}}' >"$TMP/out" 2>"$TMP/err"
grep -q 'Error from server (Conflict)' "$TMP/err" && pass "fault injection: 409 seen by kubectl" \
    || fail "fault injection 409" "$(cat "$TMP/err")"
curl -sS -N "$URL$CM?watch=1&timeoutSeconds=10" >"$TMP/drop" 2>/dev/null &
DPID=$!
sleep 0.5
t0=$(date +%s)
api POST /cueue/faults -d '{"dropWatches":true}' >/dev/null
wait $DPID
[ $(( $(date +%s) - t0 )) -le 3 ] && pass "fault injection: dropWatches ends open watches" \
    || fail "dropWatches" "the watch stayed open"
api POST /cueue/faults -d '{"respond":{"match":"^GET /api/v1/namespaces/conformance/configmaps/c1$","code":500,"times":2}}' >/dev/null
codes="$(api GET $CM/c1) $(json .reason) $(api GET $CM/c1) $(api GET $CM/c1)"
[ "$codes" = "500 InternalError 500 200" ] && pass "fault injection: 500 exactly N times" \
    || fail "fault injection 500 x2" "$codes"
api POST /cueue/faults -d '{"respond":{"match":"^GET .*/configmaps/c1$","code":503,"retryAfter":3}}' >/dev/null
hdr=$(curl -sS -D - -o "$TMP/body" "$URL$CM/c1")
echo "$hdr" | grep -q '^HTTP/1.1 503' && echo "$hdr" | grep -qi '^Retry-After: 3' && [ "$(json .details.retryAfterSeconds)" = 3 ] \
    && pass "fault injection: 503 with Retry-After and details.retryAfterSeconds" || fail "fault injection 503" "$hdr $(cat "$TMP/body")"
api POST /cueue/faults -d '{"delayMs":600,"match":"^GET .*/configmaps/c1$","times":1}' >/dev/null
api GET /cueue/faults >/dev/null; listed=$(json '[.faults[] | .delayMs] | join(",")' 2>/dev/null)
t=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' "$URL$CM/c1"); t2=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' "$URL$CM/c1")
# the first GET waits at least 600 ms, the second is not delayed (slack for a
# loaded machine: under 3 s and under 0.5 s)
if [ "$listed" = 600 ] && echo "$t $t2" | awk '$1 == 200 && $2 >= 0.6 && $2 < 3 && $3 == 200 && $4 < 0.5 { ok = 1 } END { exit !ok }'; then
    pass "fault injection: delayMs once (listed by GET /cueue/faults)"
else fail "fault injection delay" "listed '$listed', then $t, then $t2"; fi
api POST /cueue/faults -d '{"respond":{"match":"^GET .*/configmaps/c1$","code":409,"times":-1}}' >/dev/null
c1=$(api GET $CM/c1); c2=$(api DELETE /cueue/faults); c3=$(api GET $CM/c1)
code=$(api POST /cueue/faults -d '{"respond":{"match":"x","code":418}}')
[ "$c1 $c2 $c3 $code" = "409 200 200 400" ] && pass "fault injection: DELETE /cueue/faults clears; bad command is 400" \
    || fail "fault injection clear" "$c1 $c2 $c3 $code"

# ---- the simulated cluster: --nodes, scheduler, Job controller, kubelet ----
# Three GPU nodes with 2, 2 and 4 GPUs, one 8-GPU node tainted for
# maintenance, and a CPU node without the gpu label. A small history and a
# fault given at start.
cat >"$TMP/nodes.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {gpu: "true"}}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "2"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b, labels: {gpu: "true"}}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "2"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-c, labels: {gpu: "true"}}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "4"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-m, labels: {gpu: "true"}}
spec:
  taints: [{key: maintenance, effect: NoSchedule}]
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-a}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
Y
if start sim --listen 127.0.0.1:0 --admin --nodes "$TMP/nodes.yaml" --history 5 \
       --fault '{"respond":{"match":"^GET /api/v1/namespaces/default/secrets/probe$","code":500,"times":1}}'; then
    KC=$KC_sim URL=$URL_sim
    c1=$(api GET /api/v1/namespaces/default/secrets/probe); c2=$(api GET /api/v1/namespaces/default/secrets/probe)
    [ "$c1 $c2" = "500 404" ] && pass "--fault at start" || fail "--fault at start" "$c1 $c2"
    [ "$(k get nodes -o name 2>/dev/null | tr '\n' ' ')" = "node/cpu-a node/gpu-a node/gpu-b node/gpu-c node/gpu-m " ] &&
    [ "$(k get node gpu-m -o jsonpath='{.spec.taints[0].key}/{.status.allocatable.nvidia\.com/gpu}')" = maintenance/8 ] \
        && pass "--nodes FILE: nodes, taints and GPUs from the file" || fail "--nodes FILE" "$(k get nodes 2>&1)"

    # A suspended Job gets no pods; unsuspended with kubectl patch, its pod
    # fits only on gpu-c (fragmentation), runs, succeeds after its runtime.
    cat >"$TMP/job.yaml" <<'Y'
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  suspend: true
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {cueue.dev/simulated-runtime: 3s}
    spec:
      restartPolicy: Never
      nodeSelector: {gpu: "true"}
      containers:
      - {name: main, image: trainer, resources: {limits: {nvidia.com/gpu: 4}}}
Y
    k apply -f "$TMP/job.yaml" >/dev/null 2>&1
    sleep 0.3
    [ "$(api GET /api/v1/namespaces/default/pods >/dev/null; json '.items | length')" = 0 ] \
        && pass "Job controller: a suspended Job has no pods" || fail "suspended Job" "$(cat "$TMP/body")"
    k patch job train --type merge -p '{"spec":{"suspend":false}}' >/dev/null 2>&1
    running=""
    # the pod runs for 3 s; on a loaded machine placement can take a while
    for _ in $(seq 1 150); do
        api GET "/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DRunning" >/dev/null
        running=$(json '[.items[] | .metadata.ownerReferences[0].name + "@" + .spec.nodeName] | join(",")')
        [ -n "$running" ] && break
        sleep 0.1
    done
    case "$running" in train@gpu-c) pass "Job unsuspended: its pod is created, placed on the only node that fits (gpu-c), Running";;
        *) fail "Job pod placement" "running: '$running'";; esac
    api GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-c" >/dev/null; n1=$(json '.items | length')
    api GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-a" >/dev/null; n2=$(json '.items | length')
    [ "$n1/$n2" = 1/0 ] && pass "fieldSelector spec.nodeName on pods" || fail "fieldSelector spec.nodeName" "$n1/$n2"
    done_=""
    for _ in $(seq 1 150); do
        done_=$(k get job train -o jsonpath='{.status.succeeded}/{.status.conditions[?(@.type=="Complete")].status}' 2>/dev/null)
        [ "$done_" = 1/True ] && break
        sleep 0.1
    done
    api GET "/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DSucceeded" >/dev/null
    if [ "$done_" = 1/True ] && [ "$(json '.items | length')" = 1 ] &&
       k get job train >"$TMP/out" 2>&1 && grep -Eq '^train +Complete +1/1 ' "$TMP/out"; then
        pass "Job: pod Succeeded after cueue.dev/simulated-runtime, Job Complete (fieldSelector status.phase)"
    else fail "Job completion" "$done_ $(cat "$TMP/out")"; fi

    # Nothing fits an 8-GPU pod: FailedScheduling in kube-scheduler's words.
    cat >"$TMP/big.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  nodeSelector: {gpu: "true"}
  containers: [{name: main, image: trainer, resources: {limits: {nvidia.com/gpu: 8}}}]
Y
    k apply -f "$TMP/big.yaml" >/dev/null 2>&1
    want="0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {maintenance: }, 3 Insufficient nvidia.com/gpu."
    got=""
    for _ in $(seq 1 30); do
        k get events --field-selector involvedObject.name=big >"$TMP/out" 2>"$TMP/err"
        got=$(grep -F "$want" "$TMP/out")
        [ -n "$got" ] && break
        sleep 0.1
    done
    [ -n "$got" ] && echo "$got" | grep -Eq 'Warning +FailedScheduling +pod/big' \
        && pass "kubectl get events: FailedScheduling in kube-scheduler's words" \
        || fail "FailedScheduling event" "$(cat "$TMP/out")"

    # A running Job suspended again loses its active pods; a Job deleted
    # with --cascade=orphan leaves its pods, without owner and finalizer.
    sed 's/name: train/name: forever/; s/suspend: true/suspend: false/; s/simulated-runtime: 3s/other: x/; s/gpu: 4/gpu: 1/' \
        "$TMP/job.yaml" | k apply -f - >/dev/null 2>&1
    sed 's/name: train/name: orphaner/; s/suspend: true/suspend: false/; s/simulated-runtime: 3s/other: x/; s/gpu: 4/gpu: 1/' \
        "$TMP/job.yaml" | k apply -f - >/dev/null 2>&1
    for _ in $(seq 1 30); do
        [ "$(k get pods -l batch.kubernetes.io/job-name -o name 2>/dev/null | grep -c -e forever -e orphaner)" = 2 ] && break
        sleep 0.1
    done
    k patch job forever --type merge -p '{"spec":{"suspend":true}}' >/dev/null 2>&1
    k delete job orphaner --cascade=orphan >/dev/null 2>&1
    ok=""
    for _ in $(seq 1 30); do
        a=$(k get pods -l batch.kubernetes.io/job-name=forever -o name 2>/dev/null | wc -l)
        o=$(k get pods -l batch.kubernetes.io/job-name=orphaner -o json 2>/dev/null |
            jq -c '[.items[] | [.status.phase, (.metadata.ownerReferences // [] | length), (.metadata.finalizers // [] | length)]]')
        [ "$a" = 0 ] && [ "$o" = '[["Running",0,0]]' ] && { ok=1; break; }
        sleep 0.1
    done
    [ -n "$ok" ] && [ "$(k get job forever -o jsonpath='{.status.conditions[?(@.type=="Suspended")].status}')" = True ] \
        && pass "Job suspended again: active pods deleted; --cascade=orphan keeps pods (no owner, no finalizer)" \
        || fail "suspend / orphan" "forever pods: $a, orphaned: $o"

    # Watches: a stall holds events back; a watcher that falls behind the
    # (5-event) history gets an in-stream ERROR 410.
    CM=/api/v1/namespaces/default/configmaps
    api GET $CM >/dev/null; RV=$(json .metadata.resourceVersion)
    curl -sS -N "$URL$CM?watch=1&resourceVersion=$RV&timeoutSeconds=10" >"$TMP/stall" 2>/dev/null &
    SPID=$!
    sleep 0.3
    api POST /cueue/faults -d '{"stallWatches":true}' >/dev/null
    api POST $CM -H 'Content-Type: application/json' -d '{"metadata":{"name":"during-stall"}}' >/dev/null
    sleep 0.7
    held=$(wc -c <"$TMP/stall")
    api POST /cueue/faults -d '{"stallWatches":false}' >/dev/null
    wait_line "$TMP/stall" during-stall $SPID
    [ "$held" = 0 ] && [ "$(jq -r '.type + " " + .object.metadata.name' "$TMP/stall")" = "ADDED during-stall" ] \
        && pass "fault injection: stallWatches holds events until it ends" || fail "stallWatches" "held $held bytes: $(cat "$TMP/stall")"
    api GET $CM >/dev/null; RV=$(json .metadata.resourceVersion)
    curl -sS -N "$URL$CM?watch=1&resourceVersion=$RV&timeoutSeconds=3" >"$TMP/behind" 2>/dev/null &
    SPID=$!
    sleep 0.3
    api POST /cueue/faults -d '{"stallWatches":true}' >/dev/null
    for i in 1 2 3 4 5 6 7 8; do
        api POST $CM -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"flood$i\"}}" >/dev/null
    done
    api POST /cueue/faults -d '{"stallWatches":false}' >/dev/null
    wait $SPID
    if [ "$(tail -n 1 "$TMP/behind" | jq -r '.type + " " + (.object.code | tostring) + " " + .object.reason')" = "ERROR 410 Expired" ] &&
       ! grep -q flood8 "$TMP/behind"; then
        pass "a watcher that falls behind the history gets an in-stream ERROR 410"
    else fail "in-stream 410" "$(cut -c1-120 "$TMP/behind")"; fi
    stop sim
fi
KC=$KC_main URL=$URL_main CM=/api/v1/namespaces/conformance/configmaps

# ---- auth (with TLS: kubectl sends bearer tokens only over HTTPS) ----
echo "s3cret,admin,1" >"$TMP/tokens"
if start auth --listen 127.0.0.1:0 --tls --token-file "$TMP/tokens"; then
    sed -n 's/^ *certificate-authority-data: //p' "$KC_auth" | base64 -d >"$TMP/ca-auth.pem"
    ac() { curl -sS --cacert "$TMP/ca-auth.pem" -o "$TMP/body" -w '%{http_code}' "$@"; }
    code=$(ac "$URL_auth/api/v1/namespaces")
    [ "$code" = 401 ] && [ "$(json .reason)" = Unauthorized ] \
        && pass "401 Unauthorized without a token" || fail "401 without a token" "code $code"
    code=$(ac -H 'Authorization: Bearer wrong' "$URL_auth/api/v1/namespaces")
    [ "$code" = 401 ] && pass "401 with a wrong token" || fail "401 with a wrong token" "code $code"
    code=$(ac -H 'Authorization: Bearer s3cret' "$URL_auth/api/v1/namespaces")
    [ "$code" = 200 ] && pass "200 with a token from --token-file" || fail "token accepted" "code $code"
    KC=$KC_auth check "kubectl with the token from the kubeconfig" k get namespaces
    code=$(ac "$URL_auth/healthz")
    [ "$code" = 200 ] && pass "healthz open without a token" || fail "healthz open" "code $code"
    stop auth
fi

# ---- TLS ----
if start tls --listen 127.0.0.1:0 --tls; then
    sed -n 's/^ *certificate-authority-data: //p' "$KC_tls" | base64 -d >"$TMP/ca.pem"
    case "$URL_tls" in https://*) ;; *) fail "TLS" "URL $URL_tls";; esac
    if curl -sS --cacert "$TMP/ca.pem" "$URL_tls/version" >"$TMP/body" 2>"$TMP/err" &&
       [ "$(json .gitVersion)" = v1.32.0-cueue ]; then
        pass "TLS: curl verifies the server with the CA from the kubeconfig"
    else fail "TLS curl" "$(cat "$TMP/err")"; fi
    if curl -sS "$URL_tls/version" >/dev/null 2>&1; then fail "TLS" "accepted without the CA"
    else pass "TLS: an unknown CA is refused"; fi
    KC=$KC_tls check "TLS: kubectl get namespaces" k get namespaces
    timeout 4 kubectl --kubeconfig "$KC_tls" get namespaces -w >"$TMP/tlsw" 2>&1
    grep -q '^default ' "$TMP/tlsw" && pass "TLS: kubectl get -w" || fail "TLS watch" "$(cat "$TMP/tlsw")"
    stop tls && pass "SIGTERM: clean stop (exit 0)" || fail "SIGTERM" "non-zero exit"
fi

# ---- restart with --data-dir ----
mkdir -p "$TMP/data"
if start dd --listen 127.0.0.1:0 --data-dir "$TMP/data"; then
    KC=$KC_dd
    k create namespace keep >/dev/null 2>&1
    k -n keep create configmap kept --from-literal=v=1 >/dev/null 2>&1
    k apply -f "$TMP/widget-crd.yaml" >/dev/null 2>&1
    sleep 0.2
    sed 's/namespace: conformance/namespace: keep/' "$TMP/widget.yaml" | k apply -f - >/dev/null 2>&1
    RV1=$(k -n keep get configmap kept -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
    UID1=$(k -n keep get configmap kept -o jsonpath='{.metadata.uid}' 2>/dev/null)
    RVL=$(curl -sS "$URL_dd/api/v1/namespaces/keep/configmaps" | jq -r .metadata.resourceVersion)
    stop dd
    if start dd --listen 127.0.0.1:0 --data-dir "$TMP/data"; then
        KC=$KC_dd
        if [ "$(k -n keep get configmap kept -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}' 2>/dev/null)" = "$UID1/$RV1" ] &&
           [ "$(k -n keep get widgets w1 -o jsonpath='{.spec.size}' 2>/dev/null)" = 3 ]; then
            pass "restart with --data-dir keeps objects and custom resources"
        else fail "restart with --data-dir" "objects lost"; fi
        # A watch from the resourceVersion reached before the restart resumes:
        # it sees what happens after, and nothing before.
        curl -sS -N "$URL_dd/api/v1/namespaces/keep/configmaps?watch=1&resourceVersion=$RVL&timeoutSeconds=10" \
            >"$TMP/resume-dd" 2>"$TMP/err" &
        RPID=$!
        sleep 0.3
        k -n keep create configmap later >/dev/null 2>&1
        wait_line "$TMP/resume-dd" '"later"' $RPID
        : >"$TMP/err"
        [ "$(jq -r '.type + " " + .object.metadata.name' "$TMP/resume-dd" | tr '\n' ' ')" = "ADDED later " ] \
            && pass "restart with --data-dir: a watch resumes from the old resourceVersion" \
            || fail "watch resume after restart" "from $RVL: $(cat "$TMP/resume-dd" "$TMP/err")"
        RV2=$(k -n keep get configmap later -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
        [ -n "$RV2" ] && [ -n "$RV1" ] && [ "$RV2" -gt "$RV1" ] \
            && pass "restart keeps the resourceVersion counter" || fail "resourceVersion counter" "$RV1 then $RV2"
        stop dd
    fi
fi

stop main && pass "SIGTERM: the first server stops cleanly too" || fail "SIGTERM (main)" "non-zero exit"
# Sanitizer builds: any report in a server log is a failure.
if grep -l -E 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP"/*.log >"$TMP/san" 2>/dev/null; then
    for l in $(cat "$TMP/san"); do cp "$l" "$TMP/err"; fail "sanitizer report" "$(basename "$l")"; done
else pass "no sanitizer report in the server logs"; fi

echo "passed $PASSES, failed $FAILS, skipped $SKIPS"
[ $FAILS -eq 0 ]
