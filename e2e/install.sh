#!/usr/bin/env bash
# install.sh - end to end on the real control plane (CUEUE_E2E_CLUSTER=k8s;
# etcd and kube-apiserver suffice): what a user installs, and the
# controller running with the Deployment's identity.
#
# 1. `kubectl apply --server-side -f dist/install.yaml` succeeds (every
#    object created; the CRDs established), and again (idempotent).
# 2. The Deployment cannot run here (no kubelet can run its containers), so
#    it is scaled to 0 and the controller runs as a local process with the
#    pod's identity: no kubeconfig, KUBERNETES_SERVICE_HOST/PORT of the API
#    server, and token (`kubectl create token` of the ServiceAccount
#    cueue-system/cueue-controller-manager), ca.crt and namespace in a
#    service-account folder (CUEUE_TEST_SERVICEACCOUNT_DIR, the stand-in for
#    /var/run/secrets/kubernetes.io/serviceaccount), with the Configuration
#    of the ConfigMap cueue-manager-config (--config; the addresses moved
#    to loopback by flags, metrics kept secure as in the pod).
#    Checked: it connects in-cluster, syncs, takes the Lease
#    cueue-system/c1f6bfd2.kueue.x-k8s.io, is ready (/readyz), admits a
#    suspended Job with the queue-name label and starts it; /metrics answers
#    a scraper bound to the shipped cueue-metrics-reader (200) and nobody
#    else (401 without a token); neither its metrics
#    (cueue_api_requests_total) nor its log show a 401 or 403.
# 3. Webhooks, when the controller serves them (`--webhook-bind-address` in
#    its help): the webhook server gets a
#    certificate for 127.0.0.1 made here (internalCertManagement off, as
#    with cert-manager; the Configuration's webhook host, port and certDir
#    moved to loopback, port CUEUE_E2E_WEBHOOK_PORT, default 19543), and the two webhook configurations' clientConfig
#    is patched to `url: https://127.0.0.1:PORT/PATH` with that CA (no
#    Service routing on this control plane). Checked: a Job created
#    unsuspended with the queue-name label is suspended on creation and
#    admitted later; a ClusterQueue with a borrowingLimit and no cohort is
#    refused by vclusterqueue.kb.io; a good one is accepted. Without them
#    the webhook configurations are deleted before any object is created:
#    with failurePolicy Fail and nobody serving them, every create of the
#    kinds they cover fails (as with Kueue's manifests and Kueue down).
#
# Exits 77 (skipped) on the embedded cluster and when the real components
# are not built. CUEUE_E2E_KUBECONFIG=FILE uses a control plane that is
# already up (cluster admin) instead of starting one.
#
# Usage: CUEUE_E2E_CLUSTER=k8s e2e/install.sh PATH_TO_cueue
# Needs: kubectl, jq, curl, openssl, timeout.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
if [ "${CUEUE_E2E_CLUSTER:-embedded}" != k8s ]; then
    echo "SKIP  all: needs the real control plane (CUEUE_E2E_CLUSTER=k8s)"
    exit 77
fi
e2e_init "$@" kubectl jq curl openssl

SANS=cueue-system SA=cueue-controller-manager LEASE=c1f6bfd2.kueue.x-k8s.io
# on a control plane that is not ours (and may have no namespace
# controller to finish deletions), names of our own
SUF=${CUEUE_E2E_KUBECONFIG:+-$$}
NS=team$SUF MON=monitoring$SUF CQ=cq$SUF
WEBHOOK_PORT=${CUEUE_E2E_WEBHOOK_PORT:-19543}

dump() {
    local l
    for l in "$TMP"/*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 40; done
    echo "---- workloads"
    k get workloads -A -o wide 2>&1 | sed 's/^/  | /'
}

if [ -n "${CUEUE_E2E_KUBECONFIG:-}" ]; then
    cp "$CUEUE_E2E_KUBECONFIG" "$KC"
    API=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
else
    start_cluster
fi

# ---- 1. the install

if k apply --server-side -f "$ROOT/dist/install.yaml" >"$TMP/apply.log" 2>&1; then
    pass "kubectl apply --server-side -f dist/install.yaml ($(grep -c . "$TMP/apply.log") objects)"
else
    fail "kubectl apply --server-side -f dist/install.yaml" "$(grep -v 'serverside-applied\|created\|configured' "$TMP/apply.log" | head -n 5)"
fi
want=$(grep -c '^kind:' "$ROOT/dist/install.yaml")
check "every object of dist/install.yaml applied ($want)" "$(grep -c . "$TMP/apply.log") lines" \
    test "$(grep -c 'serverside-applied' "$TMP/apply.log")" -eq "$want"
check "CRDs established" "$(k wait --for condition=established --timeout=60s crd -l '!x' 2>&1 | tail -n 1)" \
    k wait --for condition=established --timeout=60s -f "$ROOT/crds/"
k apply --server-side -f "$ROOT/dist/install.yaml" >"$TMP/apply2.log" 2>&1
check "applied again: unchanged, no conflict" "$(grep -v unchanged "$TMP/apply2.log" | head -n 3)" \
    test "$(grep -c 'serverside-applied' "$TMP/apply2.log")" -eq "$want"
k -n "$SANS" scale deployment "$SA" --replicas=0 >/dev/null
check "the Deployment (2 replicas, probes, non-root) scaled to 0 here" "" \
    test "$(k -n "$SANS" get deployment "$SA" -o jsonpath='{.spec.replicas}')" = 0

# ---- 2. the controller with the pod's identity

SADIR=$TMP/serviceaccount
mkdir -p "$SADIR"
echo "$SANS" >"$SADIR/namespace"
k create token "$SA" -n "$SANS" --duration=1h >"$SADIR/token" 2>"$TMP/token.log"
check "a token of $SANS/$SA (TokenRequest)" "$(cat "$TMP/token.log")" test -s "$SADIR/token"
ca=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
if [ -n "$ca" ]; then
    base64 -d <<<"$ca" >"$SADIR/ca.crt"
else
    cp "$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" "$SADIR/ca.crt"
fi
k -n "$SANS" get configmap cueue-manager-config \
    -o jsonpath='{.data.controller_manager_config\.yaml}' >"$TMP/config.yaml"
check "the Configuration from the ConfigMap" "" grep -q "namespace: $SANS" "$TMP/config.yaml"

# the webhook server (when this cueue has one) on loopback, on a port of
# ours, its certificates in $TMP/certs: set in the Configuration
WEBHOOKS=0
CERTS=$TMP/certs
mkdir -p "$CERTS"
if "$CUEUE" controller --help 2>&1 | grep -q -- --webhook-bind-address; then
    sed -i -e "s|^\( *\)port: 9443\$|\1host: 127.0.0.1\n\1port: $WEBHOOK_PORT|" \
        -e "s|^\( *certDir:\).*|\1 $CERTS|" "$TMP/config.yaml"
    WEBHOOKS=1
else
    echo "SKIP  ${E2E_PREFIX:-}webhooks: this cueue serves none (no --webhook-bind-address)"
    # and refuses a Configuration with the webhook server's fields (any
    # warning about the file is fatal): leave them out
    awk '/^[^ #]/ { skip = ($1 == "webhook:" || $1 == "internalCertManagement:") } !skip' \
        "$TMP/config.yaml" >"$TMP/config.tmp" && mv "$TMP/config.tmp" "$TMP/config.yaml"
fi
if [ "$WEBHOOKS" = 1 ]; then
    # a CA and a serving certificate for 127.0.0.1 (kube-apiserver calls the
    # webhooks by URL here), as cert-manager would put in the Secret;
    # internal certificate management off
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=e2e-ca \
        -keyout "$CERTS/ca.key" -out "$CERTS/ca.crt" >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj /CN=cueue-webhook \
        -keyout "$CERTS/tls.key" -out "$CERTS/tls.csr" >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1,DNS:cueue-webhook-service.cueue-system.svc\n' >"$CERTS/ext"
    openssl x509 -req -in "$CERTS/tls.csr" -CA "$CERTS/ca.crt" -CAkey "$CERTS/ca.key" \
        -CAcreateserial -days 1 -extfile "$CERTS/ext" -out "$CERTS/tls.crt" >/dev/null 2>&1
    sed -i 's/^\( *enable:\) true/\1 false/' "$TMP/config.yaml"
fi

HOSTPORT=${API#https://}
HOSTPORT=${HOSTPORT%%/*}
env -u KUBECONFIG KUBERNETES_SERVICE_HOST="${HOSTPORT%:*}" KUBERNETES_SERVICE_PORT="${HOSTPORT##*:}" \
    CUEUE_TEST_SERVICEACCOUNT_DIR="$SADIR" \
    "$CUEUE" controller -v 1 --config "$TMP/config.yaml" --metrics-bind-address 127.0.0.1:0 \
    --metrics-secure --health-probe-bind-address 127.0.0.1:0 \
    2>>"$TMP/ctrl.log" &
CT_PID=$!
wait_for 30 "in-cluster configuration: connects to KUBERNETES_SERVICE_HOST:PORT" \
    grep -q "connecting to https://$HOSTPORT" "$TMP/ctrl.log"
wait_for 60 "informers synced as the ServiceAccount" grep -q "all informers synced" "$TMP/ctrl.log"
wait_for 60 "takes the Lease $SANS/$LEASE" grep -q "became leader (Lease $SANS/$LEASE" "$TMP/ctrl.log"
holder=$(k get lease -n "$SANS" "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
check "the Lease names the controller" "holder '$holder'" test -n "$holder"
MADDR=$(sed -n 's/.*metrics on \([^ ]*\) (.*/\1/p' "$TMP/ctrl.log" | head -n 1)
HADDR=$(sed -n 's/.*health probes on \([^ ]*\) (.*/\1/p' "$TMP/ctrl.log" | head -n 1)
[ -n "$HADDR" ] || HADDR=$(sed -n 's/.*probes on \([^ ]*\) (.*/\1/p' "$TMP/ctrl.log" | head -n 1)
wait_for 30 "ready (/readyz 200)" curl -sf --max-time 5 "http://$HADDR/readyz"

# the webhook configurations: called by URL on loopback, or, when this
# controller serves no webhooks, removed (failurePolicy Fail: every create
# of the kinds they cover would fail, as with Kueue's manifests and no
# Kueue running)
if [ "$WEBHOOKS" = 1 ]; then
    wait_for 30 "the webhook server listens on 127.0.0.1:$WEBHOOK_PORT" \
        curl -s --max-time 2 --cacert "$CERTS/ca.crt" -o /dev/null "https://127.0.0.1:$WEBHOOK_PORT/"
    cab=$(base64 -w0 <"$CERTS/ca.crt")
    for conf in mutatingwebhookconfiguration/cueue-mutating-webhook-configuration \
        validatingwebhookconfiguration/cueue-validating-webhook-configuration; do
        k get "$conf" -o json | jq --arg p "$WEBHOOK_PORT" --arg ca "$cab" \
            '.webhooks |= map(.clientConfig = {url: ("https://127.0.0.1:" + $p + .clientConfig.service.path), caBundle: $ca})
             | del(.metadata.managedFields)' >"$TMP/wh.json"
        k replace -f "$TMP/wh.json" >/dev/null 2>"$TMP/replace.log" \
            || fail "patch $conf to url" "$(cat "$TMP/replace.log")"
    done
    # and the CRDs' conversion webhook, by URL too
    for crd in $(k get crd -o json | jq -r '.items[] | select(.spec.conversion.strategy == "Webhook")
                                              | .metadata.name'); do
        k patch crd "$crd" --type merge -p "{\"spec\":{\"conversion\":{\"webhook\":{\"clientConfig\":
            {\"service\":null,\"url\":\"https://127.0.0.1:$WEBHOOK_PORT/convert\",\"caBundle\":\"$cab\"}}}}}" \
            >/dev/null 2>"$TMP/crd.log" || fail "patch CRD $crd's conversion to url" "$(cat "$TMP/crd.log")"
    done
else
    k delete mutatingwebhookconfiguration cueue-mutating-webhook-configuration >/dev/null
    k delete validatingwebhookconfiguration cueue-validating-webhook-configuration >/dev/null
fi

# quota, and a suspended Job with the queue-name label
k create namespace "$NS" >/dev/null 2>&1
quota_yaml --namespace "$NS" "$CQ:lq:4" | k apply -f - >/dev/null || fail "quota setup" "apply failed"
job_yaml j1 1 1s lq "$NS" | k apply -f - >/dev/null
wl_of() { k get workloads -n "$NS" -o json | jq -r --arg j "$1" \
    '.items[] | select(.metadata.ownerReferences[]?.name == $j) | .metadata.name' | head -n 1; }
wl_admitted() {
    local w; w=$(wl_of "$1"); [ -n "$w" ] || return 1
    k get workload -n "$NS" "$w" -o json |
        jq -e 'any(.status.conditions[]?; .type == "Admitted" and .status == "True")' >/dev/null
}
job_suspend() { k get job -n "$NS" "$1" -o jsonpath='{.spec.suspend}'; }
wait_for 60 "a suspended Job with the queue-name label: its Workload admitted" wl_admitted j1
wait_for 30 "and the Job started (unsuspended)" test "$(job_suspend j1)" = false

# ---- 3. webhooks

if [ "$WEBHOOKS" = 1 ]; then
    job_yaml j2 1 1s lq "$NS" | sed 's/suspend: true/suspend: false/' >"$TMP/j2.yaml"
    s=$(k create -f "$TMP/j2.yaml" -o jsonpath='{.spec.suspend}' 2>"$TMP/j2.log")
    check "a Job created unsuspended with the queue-name label is suspended on creation" \
        "spec.suspend '$s': $(cat "$TMP/j2.log")" test "$s" = true
    wait_for 60 "and admitted later" wl_admitted j2
    cat >"$TMP/badcq.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: general
      resources:
      - {name: cpu, nominalQuota: 1, borrowingLimit: 1}
YAML
    if k create -f "$TMP/badcq.yaml" >"$TMP/badcq.log" 2>&1; then
        fail "a ClusterQueue with a borrowingLimit and no cohort is refused" "it was created"
    else
        check "a ClusterQueue with a borrowingLimit and no cohort is refused by vclusterqueue.kb.io" \
            "$(cat "$TMP/badcq.log")" grep -q 'admission webhook "vclusterqueue.kb.io" denied the request' "$TMP/badcq.log"
        check "with Kueue's message (the field)" "$(cat "$TMP/badcq.log")" grep -q 'borrowingLimit' "$TMP/badcq.log"
    fi
    sed -e 's/name: bad/name: good/' -e 's/, borrowingLimit: 1//' "$TMP/badcq.yaml" | k create -f - >/dev/null 2>"$TMP/goodcq.log"
    check "a good ClusterQueue passes the webhooks" "$(cat "$TMP/goodcq.log")" k get clusterqueue good

    check_v1beta1_workload "$NS" lq
fi

# ---- metrics, and no refusal anywhere

k create namespace "$MON" >/dev/null 2>&1
k create serviceaccount prometheus -n "$MON" >/dev/null 2>&1
k create clusterrolebinding "e2e-prometheus$SUF" --clusterrole cueue-metrics-reader \
    --serviceaccount="$MON:prometheus" >/dev/null 2>&1
PTOKEN=$(k create token prometheus -n "$MON")
code=$(curl -sk --max-time 10 -o "$TMP/metrics.txt" -w '%{http_code}' \
    -H "Authorization: Bearer $PTOKEN" "https://$MADDR/metrics")
check "metrics served over HTTPS to a scraper bound to cueue-metrics-reader (200)" "HTTP $code" test "$code" = 200
code=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "https://$MADDR/metrics")
check "and refused without a token (401)" "HTTP $code" test "$code" = 401
check "metrics: cueue_api_requests_total counts requests" "" \
    grep -qE '^cueue_api_requests_total\{.*code="20[01]"\} [1-9]' "$TMP/metrics.txt"
refused=$(grep -E '^cueue_api_requests_total\{.*code="40[13]"' "$TMP/metrics.txt" | grep -v ' 0$' || true)
check "metrics: no request refused with 401 or 403" "$refused" test -z "$refused"
check "log: no 401 or 403" "$(grep -E 'HTTP 40[13]|403 Forbidden|401 Unauthorized' "$TMP/ctrl.log" | head -n 3)" \
    bash -c "! grep -qE 'HTTP 40[13]|403 Forbidden|401 Unauthorized' '$TMP/ctrl.log'"

stop_pid "$CT_PID"
rc=$?
CT_PID=""
check "controller stopped cleanly (exit 0)" "exit $rc" test "$rc" -eq 0
# leave the shared control plane as it was when it is not ours
if [ -n "${CUEUE_E2E_KUBECONFIG:-}" ]; then
    k delete clusterrolebinding "e2e-prometheus$SUF" >/dev/null 2>&1
    k delete namespace "$NS" "$MON" --wait=false >/dev/null 2>&1
    k delete clusterqueue "$CQ" good --ignore-not-found --wait=false >/dev/null 2>&1
fi
e2e_finish
