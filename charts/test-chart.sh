#!/usr/bin/env bash
# test-chart.sh - the Helm chart charts/cueue against dist/install.yaml, with
# helm built from its Go module (scripts/helm/helm.sh; cached).
#
# 1. `helm lint` passes (also --strict).
# 2. `helm template cueue charts/cueue --namespace cueue-system` with the
#    default values renders the objects of dist/install.yaml (compare.py:
#    same objects, same contents, modulo Helm's labels, the config checksum
#    and the Namespace).
# 3. The comparison can fail: with replicas=3 it reports the difference.
# 4. The switches: enableCertManager renders a Certificate and an Issuer,
#    no empty Secret, the Secret mounted as the certificate directory, the
#    CA injection annotations on the webhook configurations and CRDs, and
#    internalCertManagement off; enablePrometheus renders the
#    ServiceMonitor; another namespace moves every namespaced object and
#    the webhooks' Service reference, and the Job webhooks' selector
#    follows managedJobsNamespaceSelector; installCRDs=false leaves the
#    CRDs out.
#
# Exits 77 (skipped) when Go is not installed and helm is not built.
# Usage (from anywhere): charts/test-chart.sh
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
HELM=scripts/helm/helm.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
nfail=0
pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1: $2"; nfail=$((nfail + 1)); }
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP  all: python3 with PyYAML is needed"; exit 77; }

$HELM build >/dev/null || exit $?

render() { $HELM template cueue charts/cueue --namespace "${NS:-cueue-system}" "$@" 2>"$TMP/err"; }
# q FILE PYTHON-EXPRESSION: evaluates over `objs` (the rendered documents),
# prints it
q() { python3 -c '
import sys, yaml
objs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def get(kind, name):
    return next((o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name), None)
print(eval(sys.argv[2]))' "$1" "$2"; }

# 1. lint
if $HELM lint --strict charts/cueue >"$TMP/lint" 2>&1; then
    pass "helm lint --strict"
else
    fail "helm lint --strict" "$(tail -n 5 "$TMP/lint")"
fi

# 2. the default render is dist/install.yaml
if render >"$TMP/default.yaml"; then
    if python3 charts/compare.py dist/install.yaml "$TMP/default.yaml" >"$TMP/cmp" 2>&1; then
        pass "helm template with the default values = dist/install.yaml ($(tail -n 1 "$TMP/cmp"))"
    else
        fail "helm template = dist/install.yaml" "$(head -n 20 "$TMP/cmp")"
    fi
else
    fail "helm template" "$(cat "$TMP/err")"
fi

# 3. the comparison can fail
render --set controllerManager.replicas=3 >"$TMP/r3.yaml"
if python3 charts/compare.py dist/install.yaml "$TMP/r3.yaml" >"$TMP/cmp3" 2>&1; then
    fail "a changed value is a difference" "compare.py found none"
elif grep -q "spec.replicas: expected 2, rendered 3" "$TMP/cmp3"; then
    pass "a changed value is a difference (replicas: expected 2, rendered 3)"
else
    fail "a changed value is a difference" "$(head -n 5 "$TMP/cmp3")"
fi

# 4. the switches
check() { # DESC FILE EXPR: EXPR must print True
    local got
    got=$(q "$2" "$3" 2>&1)
    if [ "$got" = True ]; then pass "$1"; else fail "$1" "$3 -> $got"; fi
}
render --set enableCertManager=true --set enablePrometheus=true >"$TMP/cm.yaml" \
    || fail "render with cert-manager" "$(cat "$TMP/err")"
F=$TMP/cm.yaml
check "cert-manager: a Certificate for the webhook Service, into the Secret" "$F" \
    'get("Certificate", "cueue-serving-cert")["spec"]["secretName"] == "cueue-webhook-server-cert" and "cueue-webhook-service.cueue-system.svc" in get("Certificate", "cueue-serving-cert")["spec"]["dnsNames"]'
check "cert-manager: a self-signed Issuer" "$F" 'get("Issuer", "cueue-selfsigned-issuer") is not None'
check "cert-manager: no empty Secret shipped" "$F" 'get("Secret", "cueue-webhook-server-cert") is None'
check "cert-manager: the Secret is the certificate directory" "$F" \
    '[v for v in get("Deployment", "cueue-controller-manager")["spec"]["template"]["spec"]["volumes"] if v["name"] == "cert"][0] == {"name": "cert", "secret": {"secretName": "cueue-webhook-server-cert"}}'
check "cert-manager: CA injection on both webhook configurations and all CRDs" "$F" \
    'all(o["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "cueue-system/cueue-serving-cert" for o in objs if o["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition")) and sum(o["kind"] == "CustomResourceDefinition" for o in objs) == 8'
check "cert-manager: internalCertManagement off in the Configuration" "$F" \
    'yaml.safe_load(get("ConfigMap", "cueue-manager-config")["data"]["controller_manager_config.yaml"])["internalCertManagement"] == {"enable": False}'
check "enablePrometheus: the ServiceMonitor of config/prometheus/" "$F" \
    'get("ServiceMonitor", "cueue-controller-manager-metrics-monitor")["spec"] == yaml.safe_load(open("config/prometheus/servicemonitor.yaml"))["spec"]'

NS=team-ops render --set-json 'controllerManager.nodeSelector={"pool":"system"}' >"$TMP/ns.yaml" \
    || fail "render in another namespace" "$(cat "$TMP/err")"
F=$TMP/ns.yaml
check "another namespace: every namespaced object in it" "$F" \
    'all(o["metadata"].get("namespace", "team-ops") == "team-ops" for o in objs) and get("RoleBinding", "cueue-leader-election-rolebinding")["subjects"][0]["namespace"] == "team-ops"'
check "another namespace: webhooks call the Service there and skip it" "$F" \
    'all(w["clientConfig"]["service"]["namespace"] == "team-ops" and ("namespaceSelector" not in w or "team-ops" in w["namespaceSelector"]["matchExpressions"][0]["values"]) for k in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration") for w in next(o for o in objs if o["kind"] == k)["webhooks"])'
check "another namespace: the Configuration's namespace and Lease follow" "$F" \
    '(lambda c: c["namespace"] == "team-ops" and c["leaderElection"]["resourceNamespace"] == "team-ops")(yaml.safe_load(get("ConfigMap", "cueue-manager-config")["data"]["controller_manager_config.yaml"]))'
check "nodeSelector reaches the pods" "$F" \
    'get("Deployment", "cueue-controller-manager")["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "system"}'

cat >"$TMP/sel.yaml" <<'YAML'
managerConfig:
  controllerManagerConfigYaml: |-
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    namespace: {{ .Release.Namespace }}
    managedJobsNamespaceSelector:
      matchLabels: {cueue: managed}
    integrations:
      frameworks: [batch/job]
installCRDs: false
YAML
render -f "$TMP/sel.yaml" >"$TMP/sel.out" || fail "render with a values file" "$(cat "$TMP/err")"
F=$TMP/sel.out
check "the Job webhooks take managedJobsNamespaceSelector" "$F" \
    '[w["namespaceSelector"] for w in get("MutatingWebhookConfiguration", "cueue-mutating-webhook-configuration")["webhooks"] if w["name"] == "mjob.kb.io"] == [{"matchLabels": {"cueue": "managed"}}]'
check "installCRDs=false: no CRDs" "$F" 'not any(o["kind"] == "CustomResourceDefinition" for o in objs)'

[ "$nfail" -eq 0 ] || { echo "$nfail check(s) failed"; exit 1; }
echo "all chart checks passed"
