#!/usr/bin/env bash
# controller-webhooks.sh - end to end: the webhook server of `cueue
# controller` and its certificates (internalCertManagement, and files
# cert-manager style), against the server directly and, where the cluster
# calls admission webhooks, through the API server.
#
# Setup: Namespace cueue-system; the controller with a Configuration of
# namespace cueue-system, webhookServiceName cueue-webhook-service and
# webhookSecretName cueue-webhook-server-cert, --webhook-bind-address
# 127.0.0.1:0 and --webhook-cert-dir in $TMP.
#
# Checks, on every cluster:
#  - internal certificates: /readyz is 200; the Secret holds ca.crt,
#    ca.key, tls.crt and tls.key, the certificate directory the same pair;
#    the certificate verifies against the CA for 127.0.0.1 (curl) and names
#    cueue-webhook-service.cueue-system.svc; a restart reuses the pair; a
#    Secret holding a bad certificate is replaced by a new pair; with
#    certificates valid 6 s (CUEUE_TEST_WEBHOOK_CERT_SECONDS, for tests
#    only) a new pair is made, stored and served before the old expires;
#  - reviews by curl: an AdmissionReview at each path of the hooks table is
#    answered with its uid; a malformed one is 400 with a reason; an unknown
#    path is 404; a GET is 405; a ConversionReview round trip
#    v1beta2 -> v1beta1 -> v1beta2 gives back the LocalQueue;
#  - files (internalCertManagement.enable: false): no listener and /readyz
#    503 "webhook certificates not ready" while the directory is empty; the
#    pair served once written; a new pair served after the files change.
# Checks through the cluster (cluster_checks, on both clusters: the
# embedded one calls webhooks as kube-apiserver does): the webhook
# configurations registered with clientConfig.url
# https://127.0.0.1:PORT/PATH get the CA bundle injected, and again after an
# apply wipes it; a CRD given a Webhook conversion gets it too; a Job created
# unsuspended with the queue-name label comes back suspended and is later
# admitted and started; a v1beta1 read of LocalQueues goes through /convert.
#
# Usage: e2e/controller-webhooks.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, openssl, timeout (SKIP without one).
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl jq curl openssl base64

dump() {
    local l
    for l in "$TMP"/ctrl*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 40; done
    show "$TMP/cluster.log" "cluster log" 20
}

SVC=cueue-webhook-service
SECRET=cueue-webhook-server-cert
NS=cueue-system
MWC=cueue-mutating-webhook-configuration
VWC=cueue-validating-webhook-configuration
CERTS=$TMP/certs
jqt() { jq -e "$@" >/dev/null; } # a jq test

start_cluster
apply_crds
quota_setup cq:lq:4
k create namespace $NS >/dev/null || fail "namespace $NS" "create failed"

cat >"$TMP/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: $NS
internalCertManagement:
  enable: true
  webhookServiceName: $SVC
  webhookSecretName: $SECRET
YAML
sed 's/enable: true/enable: false/' "$TMP/config.yaml" >"$TMP/config-files.yaml"

# log_port LOG WHAT: the port a server of the controller logged
log_port() { sed -n "s/.*$2 on 127.0.0.1:\([0-9]*\).*/\1/p" "$1" | head -n 1; }

# start_ctrl NAME CONFIG CERTDIR: a controller; sets CT_PID, WPORT (once
# it serves) and HPORT
start_ctrl() {
    start_controller "$1" -v 1 --config "$2" --metrics-bind-address 0 \
        --health-probe-bind-address 127.0.0.1:0 --webhook-bind-address 127.0.0.1:0 \
        --webhook-cert-dir "$3"
    poll 15 grep -q 'health probes on 127.0.0.1:' "$TMP/$1.log"
    HPORT=$(log_port "$TMP/$1.log" 'health probes')
    WPORT=""
}
wport() { WPORT=$(log_port "$TMP/$1.log" 'webhook server'); [ -n "$WPORT" ]; }
readyz() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HPORT/readyz"; }
ready() { [ "$(readyz)" = 200 ]; }
secret_key() { k get secret -n $NS $SECRET -o json | jq -r ".data[\"$1\"] // empty" | base64 -d; }

# post PATH BODY [CA] [CTYPE]: POSTs BODY to the webhook server; prints
# the body, then the status on the last line
post() {
    curl -s --cacert "${3:-$CERTS/ca.crt}" -H "Content-Type: ${4:-application/json}" \
        --data-binary "$2" -w '\n%{http_code}' "https://127.0.0.1:$WPORT$1"
}
code_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }

job_json() { # NAME SUSPEND
    jq -cn --arg n "$1" --argjson s "$2" '{apiVersion:"batch/v1",kind:"Job",
      metadata:{name:$n,namespace:"default",labels:{"kueue.x-k8s.io/queue-name":"lq"}},
      spec:{suspend:$s,parallelism:1,completions:1,template:{spec:{restartPolicy:"Never",
        containers:[{name:"main",image:"busybox",resources:{requests:{cpu:"1"}}}]}}}}'
}
review() { # UID OPERATION OBJECT
    jq -cn --arg u "$1" --arg op "$2" --argjson o "$3" '{apiVersion:"admission.k8s.io/v1",
      kind:"AdmissionReview",request:{uid:$u,kind:{group:"batch",version:"v1",kind:"Job"},
      resource:{group:"batch",version:"v1",resource:"jobs"},operation:$op,namespace:"default",
      name:$o.metadata.name,object:$o}}'
}

# ---- internal certificate management ----
start_ctrl ctrl "$TMP/config.yaml" "$CERTS"
wait_for 30 "ready with internal certificates (/readyz 200)" ready
wport ctrl || fail "webhook server port" "not in the log"
check "the Secret holds the CA, its key and the pair" "$(k get secret -n $NS $SECRET -o json | jq -c '.data | keys')" \
    bash -c "k() { kubectl --kubeconfig '$KC' \"\$@\"; }; k get secret -n $NS $SECRET -o json |
        jq -e '.data | has(\"ca.crt\") and has(\"ca.key\") and has(\"tls.crt\") and has(\"tls.key\")' >/dev/null"
same_files() { cmp -s "$CERTS/tls.crt" <(secret_key tls.crt) && cmp -s "$CERTS/ca.crt" <(secret_key ca.crt); }
check "the certificate directory holds the Secret's pair" "files differ from the Secret" same_files
check "the certificate names $SVC.$NS.svc and .svc.cluster.local" "$(openssl x509 -in "$CERTS/tls.crt" -noout -ext subjectAltName 2>&1)" \
    bash -c "openssl x509 -in '$CERTS/tls.crt' -noout -ext subjectAltName | grep -q 'DNS:$SVC.$NS.svc, DNS:$SVC.$NS.svc.cluster.local'"
check "the certificate verifies against the CA" "$(openssl verify -CAfile "$CERTS/ca.crt" "$CERTS/tls.crt" 2>&1)" \
    bash -c "openssl verify -CAfile '$CERTS/ca.crt' '$CERTS/tls.crt' >/dev/null 2>&1"
CERT1=$(secret_key tls.crt)

# ---- reviews by curl ----
J=$(job_json rv-job true)
hooks="/mutate-batch-v1-job /validate-batch-v1-job" # Kueue's Job webhooks (every path: test_whreview.c)
for p in $hooks; do
    r=$(post "$p" "$(review "uid-$p" CREATE "$J")")
    check "AdmissionReview at $p answered with its uid (HTTPS verified against the CA)" "$r" \
        jqt --arg u "uid-$p" '.response.uid == $u and (.response.allowed | type) == "boolean"' \
        <<<"$(body_of "$r")"
done
p1=${hooks%% *}
r=$(post "$p1" '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}')
check "a review without a request is 400 saying so" "$r" \
    bash -c '[ "$(tail -n 1 <<<"$1")" = 400 ] && grep -q "request: missing" <<<"$1"' _ "$r"
r=$(post "$p1" 'not json')
check "a body that is not JSON is 400" "$r" test "$(code_of "$r")" = 400
r=$(post "$p1" "$(review u CREATE "$J")" "" text/plain)
check "a body that is not application/json is 400" "$r" test "$(code_of "$r")" = 400
r=$(post /mutate-nothing "$(review u CREATE "$J")")
check "an unknown path is 404" "$r" test "$(code_of "$r")" = 404
r=$(curl -s --cacert "$CERTS/ca.crt" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$WPORT$p1")
check "a GET is 405" "$r" test "$r" = 405

LQ='{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq","namespace":"default"},"spec":{"clusterQueue":"cq"}}'
conv() { # DESIRED OBJECTS_JSON
    jq -cn --arg d "$1" --argjson o "$2" '{apiVersion:"apiextensions.k8s.io/v1",
      kind:"ConversionReview",request:{uid:"c-1",desiredAPIVersion:$d,objects:$o}}'
}
r1=$(post /convert "$(conv kueue.x-k8s.io/v1beta1 "[$LQ]")")
b1=$(body_of "$r1")
r2=$(post /convert "$(conv kueue.x-k8s.io/v1beta2 "$(jq -c .response.convertedObjects <<<"$b1")")")
check "ConversionReview: a LocalQueue to v1beta1" "$r1" \
    jqt '.response.uid == "c-1" and .response.result.status == "Success" and
           .response.convertedObjects[0].apiVersion == "kueue.x-k8s.io/v1beta1"' <<<"$b1"
check "ConversionReview: back to v1beta2, the same object" "$r2" \
    jqt --argjson want "$LQ" '.response.convertedObjects[0] == $want' <<<"$(body_of "$r2")"
r=$(post /convert "$(conv kueue.x-k8s.io/v9 "[$LQ]")")
check "ConversionReview to a version nobody serves: Failure" "$r" \
    jqt '.response.result.status == "Failure" and (.response.convertedObjects | length) == 0' \
    <<<"$(body_of "$r")"

# ---- through the cluster ----
webhook_config() { # KIND NAME HOOK PATH OPERATIONS: one configuration of one Job webhook
    cat <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: $1
metadata: {name: $2}
webhooks:
- name: $3
  clientConfig: {url: "https://127.0.0.1:$WPORT$4"}
  rules: [{apiGroups: [batch], apiVersions: [v1], operations: [$5], resources: [jobs]}]
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, $NS]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 10
YAML
}
webhook_configs() { # both, without a CA bundle
    webhook_config MutatingWebhookConfiguration $MWC mjob.kb.io /mutate-batch-v1-job CREATE
    echo ---
    webhook_config ValidatingWebhookConfiguration $VWC vjob.kb.io /validate-batch-v1-job "CREATE, UPDATE"
}
bundles_are() { # B64: every webhook of both configurations has it
    [ "$(k get mutatingwebhookconfiguration $MWC -o json | jq -r '.webhooks[].clientConfig.caBundle')" = "$1" ] &&
        [ "$(k get validatingwebhookconfiguration $VWC -o json | jq -r '.webhooks[].clientConfig.caBundle')" = "$1" ]
}
crd_bundle_is() { # CRD B64
    [ "$(k get crd "$1" -o json | jq -r '.spec.conversion.webhook.clientConfig.caBundle // empty')" = "$2" ]
}
cluster_checks() {
    local want
    want=$(base64 -w0 <"$CERTS/ca.crt")
    webhook_configs | k apply -f - >/dev/null || fail "webhook configurations" "apply failed"
    wait_for 20 "the CA bundle injected into every webhook of $MWC and $VWC" bundles_are "$want"
    webhook_configs | k replace -f - >/dev/null || fail "webhook configurations" "replace failed"
    wait_for 20 "the CA bundle injected again after the configurations were replaced without it" \
        bundles_are "$want"
    local crd
    for crd in localqueues workloads; do
        k patch crd $crd.kueue.x-k8s.io --type merge -p "{\"spec\":{\"conversion\":{\"strategy\":\"Webhook\",
            \"webhook\":{\"conversionReviewVersions\":[\"v1\"],\"clientConfig\":{\"service\":null,\"url\":\"https://127.0.0.1:$WPORT/convert\"}}}}}" \
            >/dev/null || fail "CRD $crd's conversion by URL" "patch failed"
    done
    wait_for 20 "the CA bundle injected into the LocalQueue CRD's conversion webhook" \
        crd_bundle_is localqueues.kueue.x-k8s.io "$want"
    wait_for 20 "... and the Workload CRD's" crd_bundle_is workloads.kueue.x-k8s.io "$want"
    # a v1beta1 read of a LocalQueue: through /convert, cohort-era fields
    # and all (the CRDs serve v1beta1; v1beta2 is stored)
    wait_for 20 "a v1beta1 read of the LocalQueues goes through /convert" \
        bash -c "kubectl --kubeconfig '$KC' get localqueues.v1beta1.kueue.x-k8s.io -n default lq -o json |
            jq -e '.apiVersion == \"kueue.x-k8s.io/v1beta1\"'"
    # the object as created (the controller may admit and start it at once)
    local created
    created=$(job_json wh-job false | k create -o json -f -) || fail "unsuspended Job" "create failed"
    check "a Job created unsuspended with the queue-name label is stored suspended" \
        "$(jq -c .spec.suspend <<<"$created")" jqt '.spec.suspend == true' <<<"$created"
    wait_for 30 "that Job's Workload is admitted" \
        bash -c "kubectl --kubeconfig '$KC' get workloads -n default -o json |
            jq -e '.items[] | select(.metadata.ownerReferences[0].name == \"wh-job\") |
                   .status.conditions[] | select(.type == \"Admitted\" and .status == \"True\")'"
    wait_for 30 "that Job is started (unsuspended)" \
        bash -c "kubectl --kubeconfig '$KC' get job wh-job -o json | jq -e '.spec.suspend == false'"
    check_v1beta1_workload default lq
}
cluster_checks

# ---- restarts ----
stop_pid "$CT_PID"
start_ctrl ctrl2 "$TMP/config.yaml" "$CERTS"
wait_for 30 "restarted: ready again" ready
check "a restart reuses the Secret's pair" "the certificate changed" \
    test "$(secret_key tls.crt)" = "$CERT1"
check "... and says so" "$(grep webhooks: "$TMP/ctrl2.log")" \
    grep -q "using the certificate of Secret $NS/$SECRET" "$TMP/ctrl2.log"
stop_pid "$CT_PID"
k patch secret -n $NS $SECRET --type merge -p '{"data":{"tls.crt":"bm90IGEgY2VydGlmaWNhdGU="}}' >/dev/null \
    || fail "spoil the Secret" "patch failed"
start_ctrl ctrl3 "$TMP/config.yaml" "$CERTS"
wait_for 30 "with a spoilt Secret: ready with a new pair" ready
check "the new pair is stored in the Secret and served" "$(grep webhooks: "$TMP/ctrl3.log")" \
    bash -c '[ "$1" != "$2" ] && grep -q "BEGIN CERTIFICATE" <<<"$1"' _ "$(secret_key tls.crt)" "$CERT1"
wport ctrl3
r=$(post "$p1" "$(review after CREATE "$J")")
check "the new pair verifies for 127.0.0.1" "$r" test "$(code_of "$r")" = 200
want=$(base64 -w0 <"$CERTS/ca.crt")
wait_for 20 "the new CA injected into the webhook configurations" bundles_are "$want"
stop_pid "$CT_PID"

# ---- rotation: certificates valid 6 s, renewed at half of it (a test knob) ----
k delete secret -n $NS $SECRET >/dev/null || fail "delete the Secret" "failed"
export CUEUE_TEST_WEBHOOK_CERT_SECONDS=6
start_ctrl ctrl5 "$TMP/config.yaml" "$CERTS"
unset CUEUE_TEST_WEBHOOK_CERT_SECONDS
wait_for 30 "short-lived certificates: ready" ready
wport ctrl5
poll 10 bash -c "grep -q 'stored in Secret' '$TMP/ctrl5.log'"
SHORT1=$(secret_key tls.crt)
renewed() { [ "$(secret_key tls.crt)" != "$SHORT1" ] && [ -n "$(secret_key tls.crt)" ]; }
wait_for 20 "rotation: a new pair is stored before the old one expires" renewed
check "rotation: said in the log" "$(grep webhooks: "$TMP/ctrl5.log" | tail -n 3)" \
    grep -q "new certificate for $SVC.$NS.svc (the certificate expires within 3 s)" "$TMP/ctrl5.log"
serves_dir_pair() { # the server answers with the pair the directory holds
    [ "$(code_of "$(post "$p1" "$(review rot CREATE "$J")")")" = 200 ]
}
wait_for 10 "rotation: the server restarted with the new pair" serves_dir_pair
cur_ca() { bundles_are "$(base64 -w0 <"$CERTS/ca.crt")"; }
wait_for 20 "rotation: the new CA injected into the webhook configurations" cur_ca
stop_pid "$CT_PID"

# ---- files, cert-manager style ----
FILES=$TMP/files
mkdir -p "$FILES"
pair() { # DIR CN: a self-signed pair for 127.0.0.1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=$2" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$1/key.pem" -out "$1/crt.pem" >/dev/null 2>&1
}
mkdir -p "$TMP/p1" "$TMP/p2"
pair "$TMP/p1" one && pair "$TMP/p2" two || fail "openssl" "cannot make pairs"
start_ctrl ctrl4 "$TMP/config-files.yaml" "$FILES"
poll 10 bash -c "grep -q 'waiting for $FILES/tls.crt' '$TMP/ctrl4.log'"
# (the informers sync first: the certificate's reason comes once they have)
wait_for 20 "files: not ready while the directory is empty" \
    bash -c "curl -s 'http://127.0.0.1:$HPORT/readyz' | grep -q 'webhook certificates not ready'"
check "files: no webhook listener before a certificate" "$(grep 'webhook server' "$TMP/ctrl4.log")" \
    bash -c "! grep -q 'webhook server on' '$TMP/ctrl4.log'"
cp "$TMP/p1/crt.pem" "$FILES/tls.crt" && cp "$TMP/p1/key.pem" "$FILES/tls.key"
wait_for 15 "files: ready once tls.crt and tls.key are written" ready
wport ctrl4
r=$(post "$p1" "$(review f1 CREATE "$J")" "$TMP/p1/crt.pem")
check "files: the first pair is served" "$r" test "$(code_of "$r")" = 200
cp "$TMP/p2/key.pem" "$FILES/tls.key.new" && cp "$TMP/p2/crt.pem" "$FILES/tls.crt.new" &&
    mv "$FILES/tls.key.new" "$FILES/tls.key" && mv "$FILES/tls.crt.new" "$FILES/tls.crt"
wait_for 30 "files: the new pair is served after the files change" \
    bash -c "curl -s --cacert '$TMP/p2/crt.pem' -H 'Content-Type: application/json' -d '{}' -o /dev/null \
        -w '%{http_code}' 'https://127.0.0.1:$WPORT$p1' | grep -q 400"
check "files: the reload is logged" "$(grep webhooks: "$TMP/ctrl4.log")" \
    grep -q "changed: reloaded" "$TMP/ctrl4.log"
stop_pid "$CT_PID"

e2e_finish
