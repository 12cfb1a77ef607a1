#!/usr/bin/env bash
# cluster-input.sh - hostile input against a real `cueue cluster` (issue 10:
# C1, C2, A1, A2, A3, A4, A7): patches that make metadata a non-object,
# out-of-range query integers, NUL in names, keys and selectors, numbers
# that do not fit, ObjectMeta of the wrong types, JSON patches of the root.
# Every request must be refused as kube-apiserver refuses it (or stored
# exactly), the server must stay up, and nothing may be half-applied.
#
# Usage: e2e/cluster-input.sh PATH_TO_cueue
. "$(dirname "$0")/lib.sh"
e2e_init "$@" curl jq kubectl

start_cluster
NS=/api/v1/namespaces/default

# api METHOD PATH [curl args...]: the body goes to $TMP/body, prints the code.
api() {
    local m=$1 p=$2; shift 2
    curl -sS -o "$TMP/body" -w '%{http_code}' -X "$m" "$API$p" "$@" 2>/dev/null || true
}
body() { cat "$TMP/body" 2>/dev/null; }
alive() { [ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/healthz" 2>/dev/null)" = 200 ]; }
# setup: the objects the checks patch (again after a crash restarted the server)
setup() {
    api POST "$NS/configmaps" -H 'Content-Type: application/json' \
        -d '{"metadata":{"name":"c1","labels":{"a":"b"}},"data":{"k":"v"}}' >/dev/null
}
# expect DESC WANT_CODES CODE: PASS when CODE is one of WANT_CODES (a|b) and
# the server still answers; restarts a dead server so later checks run.
expect() {
    local desc=$1 want=$2 code=$3
    if ! alive; then
        fail "$desc" "the server died (code $code)"
        stop_cluster; start_cluster; setup
        return 1
    fi
    if [[ "$code" =~ ^($want)$ ]]; then pass "$desc"; return 0; fi
    fail "$desc" "code $code, want $want: $(body | head -c 400)"
    return 1
}
cm_data() { api GET "$NS/configmaps/$1" >/dev/null; jq -c '[.data, .metadata.labels, .metadata.finalizers]' "$TMP/body"; }

# ---- C1: a patch that makes metadata (or the whole object) a non-object ----
setup
before=$(cm_data c1)
MP='Content-Type: application/merge-patch+json'
SP='Content-Type: application/strategic-merge-patch+json'
JP='Content-Type: application/json-patch+json'
AP='Content-Type: application/apply-patch+yaml'
expect "C1: merge patch metadata:5 is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$MP" -d '{"metadata":5}')"
expect "C1: strategic patch metadata:5 is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$SP" -d '{"metadata":5}')"
expect "C1: JSON patch add root [1] is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"add","path":"","value":[1]}]')"
expect "C1: JSON patch replace root 5 is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"replace","path":"","value":5}]')"
expect "C1: JSON patch add /metadata str is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"add","path":"/metadata","value":"str"}]')"
expect "C1: apply with metadata:5 is refused" '400|422' "$(api PATCH "$NS/configmaps/c1?fieldManager=t" -H "$AP" -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":5}')"
expect "C1: merge patch of status metadata:5 is refused" '400|404|422' "$(api PATCH "$NS/pods/none/status" -H "$MP" -d '{"metadata":5}')"
after=$(cm_data c1)
[ "$before" = "$after" ] && pass "C1: the object is unchanged" || fail "C1: the object is unchanged" "$before -> $after"

# ---- A4: JSON patches of the root that wipe the object ----
expect "A4: JSON patch add root {} is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"add","path":"","value":{}}]')"
expect "A4: JSON patch remove /metadata is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"remove","path":"/metadata"}]')"
expect "A4: JSON patch renaming the object is refused" '400|422' "$(api PATCH "$NS/configmaps/c1" -H "$JP" -d '[{"op":"replace","path":"/metadata/name","value":"other"}]')"
after=$(cm_data c1)
[ "$before" = "$after" ] && pass "A4: the object is unchanged" || fail "A4: the object is unchanged" "$before -> $after"

# ---- C2: integer query parameters ----
expect "C2: watch timeoutSeconds=99999999999999999999 is 400" 400 \
    "$(api GET "$NS/configmaps?watch=true&timeoutSeconds=99999999999999999999" --max-time 5)"
body | grep -q timeoutSeconds && pass "C2: the error names timeoutSeconds" || fail "C2: the error names timeoutSeconds" "$(body)"
expect "C2: timeoutSeconds=abc is 400" 400 "$(api GET "$NS/configmaps?watch=true&timeoutSeconds=abc" --max-time 5)"
expect "C2: limit=99999999999999999999 is 400" 400 "$(api GET "$NS/configmaps?limit=99999999999999999999")"
body | grep -q limit && pass "C2: the error names limit" || fail "C2: the error names limit" "$(body)"
expect "C2: limit=1x is 400" 400 "$(api GET "$NS/configmaps?limit=1x")"
expect "C2: gracePeriodSeconds=1e99 is 400" 400 "$(api DELETE "$NS/configmaps/c1?gracePeriodSeconds=1e99")"
expect "C2: resourceVersion=99999999999999999999 is refused" '400|410|422' "$(api GET "$NS/configmaps?resourceVersion=99999999999999999999&resourceVersionMatch=Exact")"
expect "C2: a watch with timeoutSeconds=1 ends after about a second" 200 \
    "$(api GET "$NS/configmaps?watch=true&timeoutSeconds=1" --max-time 5)"
api GET "$NS/configmaps/c1" >/dev/null
[ "$(jq -r .metadata.name "$TMP/body")" = c1 ] && pass "C2: nothing was deleted" || fail "C2: nothing was deleted" "$(body)"

# ---- A1: NUL in names, keys and selectors ----
expect "A1: a name with NUL is refused" '400|422' "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"a\u0000b"}}')"
expect "A1: x\\u0000/../../etc is refused" '400|422' "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"x\u0000/../../etc"}}')"
expect "A1: Namespace kube\\u0000x is refused" '400|422' "$(api POST /api/v1/namespaces -H 'Content-Type: application/json' -d '{"metadata":{"name":"kube\u0000x"}}')"
expect "A1: 'a' can be created afterwards" 201 "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"a"}}')"
expect "A1: GET a%00zzz does not return 'a'" '400|404' "$(api GET "$NS/configmaps/a%00zzz")"
expect "A1: labelSelector=%00 is refused" 400 "$(api GET "$NS/configmaps?labelSelector=%00")"
expect "A1: fieldSelector=%00 is refused" 400 "$(api GET "$NS/configmaps?fieldSelector=%00")"
expect "A1: a label key with NUL is refused" '400|422' "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"lk","labels":{"a\u0000b":"c"}}}')"
expect "A1: a label value with NUL is refused" '400|422' "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"lv","labels":{"a":"b\u0000c"}}}')"

# ---- A2: keys and numbers are never lost ----
code=$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d '{"metadata":{"name":"nulkeys"},"data":{"a\u0000x":"1","a\u0000y":"2"}}')
if [ "$code" = 201 ]; then
    [ "$(jq -c .data "$TMP/body")" = '{"a\u0000x":"1","a\u0000y":"2"}' ] && pass "A2: NUL keys kept" \
        || fail "A2: NUL keys kept" "stored $(jq -c .data "$TMP/body")"
else expect "A2: data keys with NUL are refused, not merged" '400|422' "$code"; fi
api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions -H 'Content-Type: application/json' -d '{
 "metadata":{"name":"things.input.example.com"},
 "spec":{"group":"input.example.com","scope":"Namespaced",
  "names":{"plural":"things","singular":"thing","kind":"Thing","listKind":"ThingList"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
   "x-kubernetes-preserve-unknown-fields":true}}}]}}' >/dev/null
sleep 0.3
TH=/apis/input.example.com/v1/namespaces/default/things
code=$(api POST "$TH" -H 'Content-Type: application/json' -d '{"metadata":{"name":"big"},"spec":{"n":123456789012345678901234567890}}')
if [ "$code" = 201 ]; then
    n=$(api GET "$TH/big" >/dev/null; grep -o '"n":[^,}]*' "$TMP/body" | cut -d: -f2)
    case "$n" in 1.23456789012345*e+29|123456789012345678901234567890) pass "A2: a big integer keeps its value ($n)";;
        *) fail "A2: a big integer keeps its value" "stored as $n";; esac
else expect "A2: a big integer is refused" '400|422' "$code"; fi
expect "A2: 1e400 is refused" '400|422' "$(api POST "$TH" -H 'Content-Type: application/json' -d '{"metadata":{"name":"inf"},"spec":{"n":1e400}}')"
expect "A2: NaN is refused" 400 "$(api POST "$TH" -H 'Content-Type: application/json' -d '{"metadata":{"name":"nan"},"spec":{"n":NaN}}')"
expect "A2: -Infinity is refused" 400 "$(api POST "$TH" -H 'Content-Type: application/json' -d '{"metadata":{"name":"ninf"},"spec":{"n":-Infinity}}')"
expect "A2: a single-quoted key with NUL is refused" 400 "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"sq\"},\"data\":{'a\\u0000x':'1','a\\u0000y':'2'}}")"
api POST "$TH" -H 'Content-Type: application/json' -d '{"metadata":{"name":"ok"},"spec":{"n":1}}' >/dev/null
k get things.input.example.com -n default -o name >"$TMP/out" 2>"$TMP/err" \
    && pass "A2: kubectl get things -o name works" || fail "A2: kubectl get things -o name works" "$(cat "$TMP/err")"
expect "A2: -1e400 in a merge patch is refused" '400|422' "$(api PATCH "$TH/ok" -H "$MP" -d '{"spec":{"n":-1e400}}')"

# ---- A3: ObjectMeta and built-in fields of the wrong type ----
setup
for bad in '{"metadata":{"labels":5}}' '{"metadata":{"annotations":[1]}}' '{"metadata":{"finalizers":"x"}}' \
           '{"metadata":{"ownerReferences":[5]}}' '{"metadata":{"labels":{"q":"../../x"}}}' \
           '{"data":"str"}' '{"data":{"k":5}}' '{"binaryData":{"k":"!!"}}'; do
    expect "A3: merge patch $bad is 422" 422 "$(api PATCH "$NS/configmaps/c1" -H "$MP" -d "$bad")"
done
expect "A3: a 64-character label value is 422" 422 "$(api PATCH "$NS/configmaps/c1" -H "$MP" -d "{\"metadata\":{\"labels\":{\"q\":\"$(printf 'x%.0s' $(seq 64))\"}}}")"
jq -r '.details.causes[0].field' "$TMP/body" | grep -q 'metadata.labels' && pass "A3: the cause names metadata.labels" \
    || fail "A3: the cause names metadata.labels" "$(body)"
api GET "$NS/configmaps/c1" >/dev/null
rv=$(jq -r .metadata.resourceVersion "$TMP/body")
expect "A3: PUT with deletionTimestamp garbage is 422" 422 "$(api PUT "$NS/configmaps/c1" -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"c1\",\"resourceVersion\":\"$rv\",\"deletionTimestamp\":\"garbage\"},\"data\":{\"k\":\"v\"}}")"
after=$(cm_data c1)
[ "$before" = "$after" ] && pass "A3: the object is unchanged" || fail "A3: the object is unchanged" "$before -> $after"

# ---- A7: one nesting limit (kube-apiserver's 10000) for every format and path ----
# nest N: a value N levels deep ([[...[1]...]]), so an object {"spec":{"x":nest N-2}}
# is N levels deep in all
nest() { printf '[%.0s' $(seq "$1"); printf 1; printf ']%.0s' $(seq "$1"); }
DEEP=$(nest 9998)
printf '{"metadata":{"name":"deep"},"spec":{"x":%s}}' "$DEEP" >"$TMP/deep.json"
printf '{"metadata":{"name":"deeper"},"spec":{"x":[%s]}}' "$DEEP" >"$TMP/deeper.json"
expect "A7: a Thing 10000 levels deep is created" 201 "$(api POST "$TH" -H 'Content-Type: application/json' --data-binary @"$TMP/deep.json")"
expect "A7: 10001 levels (JSON) are refused" 400 "$(api POST "$TH" -H 'Content-Type: application/json' --data-binary @"$TMP/deeper.json")"
body | grep -q 'max depth' && pass "A7: the error says max depth" || fail "A7: the error says max depth" "$(body | head -c 300)"
expect "A7: 10001 levels (YAML) are refused" 400 "$(api POST "$TH" -H 'Content-Type: application/yaml' --data-binary @"$TMP/deeper.json")"
expect "A7: GET of the deep Thing" 200 "$(api GET "$TH/deep")"
grep -qF "\"x\":$DEEP}" "$TMP/body" && pass "A7: read back whole" || fail "A7: read back whole" "$(head -c 300 "$TMP/body")"
expect "A7: LIST with the deep Thing" 200 "$(api GET "$TH")"
expect "A7: Table GET of the deep Thing" 200 "$(api GET "$TH/deep" -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io')"
expect "A7: watch from 0 with the deep Thing" 200 "$(api GET "$TH?watch=true&resourceVersion=0&timeoutSeconds=1" --max-time 5)"
grep -q '"name":"deep"' "$TMP/body" && pass "A7: the watch sent it" || fail "A7: the watch sent it" "$(head -c 300 "$TMP/body")"
expect "A7: merge patch of the deep Thing" 200 "$(api PATCH "$TH/deep" -H "$MP" -d '{"metadata":{"labels":{"p":"m"}}}')"
expect "A7: JSON patch of the deep Thing" 200 "$(api PATCH "$TH/deep" -H "$JP" -d '[{"op":"add","path":"/metadata/labels/j","value":"p"}]')"
printf '{"apiVersion":"input.example.com/v1","kind":"Thing","metadata":{"name":"deep"},"spec":{"x":%s,"y":1}}' "$DEEP" >"$TMP/apply.json"
expect "A7: server-side apply of the deep Thing (YAML)" 200 "$(api PATCH "$TH/deep?fieldManager=deep&force=true" -H "$AP" --data-binary @"$TMP/apply.json")"
printf '{"metadata":{"name":"deepcm"},"x":%s}' "$(nest 9998)" >"$TMP/deepcm.json"
expect "A7: a ConfigMap with a field 10000 levels deep" 201 "$(api POST "$NS/configmaps" -H 'Content-Type: application/json' --data-binary @"$TMP/deepcm.json")"
expect "A7: strategic patch of it" 200 "$(api PATCH "$NS/configmaps/deepcm" -H "$SP" -d '{"metadata":{"labels":{"s":"p"}}}')"
# (a LIST wraps it two levels deeper, past what Go clients read: as with
# kube-apiserver, kubectl can get such an object but not list it)
k get things.input.example.com deep -n default -o name >"$TMP/out" 2>"$TMP/err" && grep -q thing.input.example.com/deep "$TMP/out" \
    && pass "A7: kubectl gets the deep Thing" || fail "A7: kubectl gets the deep Thing" "$(cat "$TMP/err")"

# ---- an integer quota beyond int64 (issue 15): kube-apiserver decodes it as a
# float64, which its validator takes as an integer only within 2^53 - 1, so an
# int-or-string quantity refuses it (naming the field) instead of storing a
# number nobody wrote; an int64 is kept as written
apply_crds
CQS=/apis/kueue.x-k8s.io/v1beta2/clusterqueues
cq_json() {
    printf '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"%s"},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":%s}]}]}]}}' "$1" "$2"
}
FIELD='spec.resourceGroups[0].flavors[0].resources[0].nominalQuota'
for n in 99999999999999999999 18446744073709551615 1e20; do
    code=$(api POST "$CQS" -H 'Content-Type: application/json' -d "$(cq_json big "$n")")
    if expect "int64: nominalQuota $n is refused" 422 "$code"; then
        [ "$(jq -r '.details.causes[0].field' "$TMP/body")" = "$FIELD" ] &&
            body | grep -q 'must be of type integer,string: \\"number\\"' &&
            pass "int64: nominalQuota $n: the error names $FIELD" ||
            fail "int64: nominalQuota $n: the error names $FIELD" "$(body | head -c 400)"
    fi
done
expect "int64: nominalQuota 9223372036854775807 is stored" 201 \
    "$(api POST "$CQS" -H 'Content-Type: application/json' -d "$(cq_json max 9223372036854775807)")"
got=$(k get clusterqueue max -o jsonpath='{.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}' 2>&1)
[ "$got" = 9223372036854775807 ] && pass "int64: kubectl gets 9223372036854775807 back as written" \
    || fail "int64: kubectl gets it back as written" "got '$got'"
cat >"$TMP/bigcq.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: big-yaml}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 99999999999999999999}
YAML
if k apply -f "$TMP/bigcq.yaml" >"$TMP/out" 2>&1; then
    fail "int64: kubectl apply of nominalQuota 99999999999999999999 is refused" "$(cat "$TMP/out")"
elif grep -qF "$FIELD in body must be of type integer,string" "$TMP/out"; then
    pass "int64: kubectl apply of nominalQuota 99999999999999999999 is refused, naming the field"
else fail "int64: kubectl apply is refused, naming the field" "$(cat "$TMP/out")"; fi

alive && pass "the server is still up" || fail "the server is still up" "no answer"
e2e_finish
