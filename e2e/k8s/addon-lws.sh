# addon-lws.sh - the LeaderWorkerSet controller manager (sigs.k8s.io/lws,
# pinned in mod/lws/go.mod) for e2e/k8s/addons.sh (sourced there; HERE and
# CACHE are set).
#
# Built from its module into $CACHE/lws-VERSION/ (the binary and the CRD
# from the module's source). Up: the CRD applied (server side: it is too
# large for the last-applied annotation), the manager run against
# DIR/kubeconfig without leader election, metrics or health probes, and
# with its webhooks: LWS's pod webhook gives each pod its group and worker
# index, which the controller needs, so they are served on a free loopback
# port with a self-signed certificate (its internal cert management off)
# and registered by URL, the pod webhooks only for pods with the LWS name
# label. Ready once a dry-run LWS passes its webhooks.

lws_version() {
    sed -n 's|^[[:space:]]*\(require \)\{0,1\}sigs.k8s.io/lws \(v[^ ]*\).*|\2|p' \
        "$HERE/mod/lws/go.mod" | head -n 1
}
LWS_BIN="$CACHE/lws-$(lws_version)"

addon_built() { [ -x "$LWS_BIN/lws-manager" ] && [ -s "$LWS_BIN/lws-crd.yaml" ]; }

addon_build() {
    if addon_built; then
        echo "already built: $LWS_BIN"
        return 0
    fi
    command -v go >/dev/null || { echo "addon lws: go is not installed" >&2; return 1; }
    local t0=$SECONDS src
    echo "building the LeaderWorkerSet manager $(lws_version) ..."
    mkdir -p "$LWS_BIN/.tmp" || return 1
    (cd "$HERE/mod/lws" && go mod download sigs.k8s.io/lws \
        && go build -trimpath -ldflags "-s -w" -o "$LWS_BIN/.tmp/lws-manager" sigs.k8s.io/lws/cmd) \
        || { echo "addon lws: go build failed" >&2; return 1; }
    src=$(cd "$HERE/mod/lws" && go list -m -f '{{.Dir}}' sigs.k8s.io/lws) || return 1
    cp "$src/config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml" \
        "$LWS_BIN/.tmp/lws-crd.yaml" || return 1
    mv "$LWS_BIN/.tmp/"* "$LWS_BIN/" && rmdir "$LWS_BIN/.tmp"
    echo "  built in $((SECONDS - t0)) s: $LWS_BIN"
}

# a loopback port nobody listens on
lws_free_port() {
    local used p
    used=" $(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}' | sort -u | tr '\n' ' ') "
    while :; do
        p=$((20000 + RANDOM % 12000))
        case $used in *" $p "*) ;; *) echo "$p"; return ;; esac
    done
}

addon_up() {
    local dir=$1 d port kc ca i
    d=$dir/lws
    kc=$dir/kubeconfig
    addon_built || { echo "addon lws: not built (e2e/k8s/addons.sh build lws)" >&2; return 1; }
    mkdir -p "$d/certs" || return 1
    kubectl --kubeconfig "$kc" apply --server-side --force-conflicts \
        -f "$LWS_BIN/lws-crd.yaml" >"$d/apply.log" 2>&1 || { cat "$d/apply.log" >&2; return 1; }
    # served a moment after it is created (kubectl wait fails on a CRD
    # that has no conditions yet)
    for i in $(seq 1 300); do
        kubectl --kubeconfig "$kc" get crd leaderworkersets.leaderworkerset.x-k8s.io \
            -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null \
            | grep -q True && break
        sleep 0.2
    done
    # the serving certificate of 127.0.0.1, signed by a CA of its own
    (cd "$d/certs" \
        && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
            -subj /CN=lws-webhook-ca -keyout ca.key -out ca.crt 2>/dev/null \
        && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj /CN=127.0.0.1 -keyout tls.key -out tls.csr 2>/dev/null \
        && printf 'subjectAltName=IP:127.0.0.1\n' >tls.ext \
        && openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
            -extfile tls.ext -out tls.crt 2>/dev/null) \
        || { echo "addon lws: could not make its certificate" >&2; return 1; }
    port=$(lws_free_port)
    cat >"$d/config.yaml" <<EOF
apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $port
  certDir: $d/certs
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: "0"
EOF
    "$LWS_BIN/lws-manager" --kubeconfig "$kc" --config "$d/config.yaml" --zap-log-level=2 \
        >"$dir/lws.log" 2>&1 &
    echo $! >"$dir/pids-lws"
    ca=$(base64 -w0 <"$d/certs/ca.crt")
    local url="https://127.0.0.1:$port"
    # lws_webhook NAME PATH GROUP RESOURCE OPERATIONS: one webhook of the
    # manager's, by URL (the pod ones only for LWS pods)
    lws_webhook() {
        cat <<EOF
- name: $1
  admissionReviewVersions: [v1]
  clientConfig: {url: "$url$2", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {apiGroups: ["$3"], apiVersions: [v1], operations: [$5], resources: [$4]}
EOF
        [ "$4" != pods ] \
            || echo "  objectSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/name, operator: Exists}]}"
    }
    {
        printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
        printf 'metadata: {name: lws-mutating-webhook-configuration}\nwebhooks:\n'
        lws_webhook mleaderworkerset.kb.io /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset \
            leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
        lws_webhook mpod.kb.io /mutate--v1-pod "" pods CREATE
        printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n'
        printf 'metadata: {name: lws-validating-webhook-configuration}\nwebhooks:\n'
        lws_webhook vleaderworkerset.kb.io /validate-leaderworkerset-x-k8s-io-v1-leaderworkerset \
            leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
        lws_webhook vpod.kb.io /validate--v1-pod "" pods "CREATE, UPDATE"
    } >"$d/webhooks.yaml"
    kubectl --kubeconfig "$kc" apply -f "$d/webhooks.yaml" >>"$d/apply.log" 2>&1 \
        || { cat "$d/apply.log" >&2; return 1; }
    # ready: a dry-run LWS goes through its webhooks
    for i in $(seq 1 300); do
        kill -0 "$(cat "$dir/pids-lws")" 2>/dev/null \
            || { echo "addon lws: the manager exited" >&2; tail -n 30 "$dir/lws.log" >&2; return 1; }
        if kubectl --kubeconfig "$kc" create --dry-run=server -o name -f - >/dev/null 2>&1 <<EOF
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws-ready-probe, namespace: default}
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers: [{name: c, image: x}]
EOF
        then
            echo "lws: up (webhooks on $url, log $dir/lws.log)"
            return 0
        fi
        sleep 0.2
    done
    echo "addon lws: its webhooks did not answer within 60 s" >&2
    tail -n 30 "$dir/lws.log" >&2
    return 1
}
