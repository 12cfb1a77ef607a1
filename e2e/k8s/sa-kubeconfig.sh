#!/usr/bin/env bash
# sa-kubeconfig.sh - a kubeconfig with which `cueue controller` runs as its
# ServiceAccount, with only the RBAC we ship, on a real API server.
#
#   e2e/k8s/sa-kubeconfig.sh ADMIN_KUBECONFIG OUT [DURATION]
#
# With ADMIN_KUBECONFIG (cluster admin, e.g. DIR/kubeconfig of
# `e2e/k8s/cluster.sh up DIR`) it applies config/rbac/ (idempotent), takes a
# token of cueue-system/cueue-controller-manager from the TokenRequest API
# (`kubectl create token`, valid DURATION, default 2h) and writes OUT: the
# admin kubeconfig's server and CA with that token, nothing else. Prints
# nothing on success; exits 1 with kubectl's message otherwise.
set -u -o pipefail
[ $# -ge 2 ] || { echo "usage: $0 ADMIN_KUBECONFIG OUT [DURATION]" >&2; exit 2; }
ADMIN=$1 OUT=$2 DURATION=${3:-2h}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ka() { kubectl --kubeconfig "$ADMIN" --request-timeout=30s "$@"; }

out=$(ka apply -f "$ROOT/config/rbac/" 2>&1) || { echo "$0: applying config/rbac/: $out" >&2; exit 1; }
token=$(ka create token cueue-controller-manager -n cueue-system --duration="$DURATION" 2>&1) \
    || { echo "$0: kubectl create token: $token" >&2; exit 1; }
server=$(ka config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(ka config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
if [ -z "$ca" ]; then
    caf=$(ka config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
    case "$caf" in "" | /*) ;; *) caf=$(dirname "$ADMIN")/$caf ;; esac
    [ -n "$caf" ] && ca=$(base64 -w0 <"$caf")
fi
[ -n "$server" ] && [ -n "$ca" ] || { echo "$0: no server or CA in $ADMIN" >&2; exit 1; }
umask 077
cat >"$OUT.tmp" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: k8s
  cluster: {server: "$server", certificate-authority-data: "$ca"}
users:
- name: cueue-controller-manager
  user: {token: "$token"}
contexts:
- name: cueue-controller-manager
  context: {cluster: k8s, user: cueue-controller-manager}
current-context: cueue-controller-manager
YAML
mv "$OUT.tmp" "$OUT"
