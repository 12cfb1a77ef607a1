# addon-jobset.sh - the JobSet controller manager (sigs.k8s.io/jobset, the
# version e2e/k8s/mod/jobset/go.mod pins) beside the real control plane,
# for e2e/addons.sh. Sourced; defines addon_build, addon_built, addon_up.
#
# addon_up DIR applies JobSet's CRD (from the module's source) to the
# cluster in DIR and runs the manager with DIR/kubeconfig: no leader
# election, no internal certificate rotation; its webhook server (JobSet's
# defaulting and validation of JobSets, which its controller relies on) on
# a free loopback port with a certificate made here, registered with the
# API server by URL; its secure metrics and health probes on free ports.
# Its pod webhook (exclusive placement) is not registered.

JOBSET_MOD="$HERE/mod/jobset"
JOBSET_V=$(sed -n 's|^[[:space:]]*\(require \)\{0,1\}sigs.k8s.io/jobset \(v[^ ]*\).*|\2|p' \
    "$JOBSET_MOD/go.mod" | head -n 1)
JOBSET_BIN="$CACHE/jobset-$JOBSET_V/jobset-manager"

addon_built() { [ -n "$JOBSET_V" ] && [ -x "$JOBSET_BIN" ]; }

addon_build() {
    [ -n "$JOBSET_V" ] || die "cannot read the pinned JobSet version in $JOBSET_MOD/go.mod"
    if addon_built; then
        echo "already built: $JOBSET_BIN"
        return 0
    fi
    command -v go >/dev/null || die "go is not installed"
    local t0=$SECONDS d
    d=$(dirname "$JOBSET_BIN")
    mkdir -p "$d/.tmp"
    echo "building the JobSet $JOBSET_V manager ..."
    (cd "$JOBSET_MOD" && go mod download sigs.k8s.io/jobset && go build -trimpath \
        -ldflags "-s -w -X sigs.k8s.io/jobset/pkg/version.GitVersion=$JOBSET_V" \
        -o "$d/.tmp/jobset-manager" sigs.k8s.io/jobset) || die "go build of the JobSet manager failed"
    mv "$d/.tmp/jobset-manager" "$JOBSET_BIN" && rmdir "$d/.tmp"
    echo "  built in $((SECONDS - t0)) s: $JOBSET_BIN"
}

# jobset_src: the module's source folder (downloaded by the build)
jobset_src() { (cd "$JOBSET_MOD" && go list -m -f '{{.Dir}}' sigs.k8s.io/jobset); }

# jobset_certs CERTDIR: a CA and the webhook server's certificate for 127.0.0.1
jobset_certs() {
    local d=$1
    mkdir -p "$d"
    (
        cd "$d" &&
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=jobset-e2e-ca \
                -keyout ca.key -out ca.crt 2>/dev/null &&
            openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout tls.key \
                -out tls.csr 2>/dev/null &&
            printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > ext.cnf &&
            openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
                -extfile ext.cnf -out tls.crt 2>/dev/null
    ) || die "could not make the JobSet webhook certificate in $d"
}

# jobset_webhooks PORT CABUNDLE: JobSet's JobSet webhooks, called by URL
jobset_webhooks() {
    local url="https://127.0.0.1:$1" kind verb path name ops
    for kind in Mutating Validating; do
        if [ $kind = Mutating ]; then
            path=/mutate-jobset-x-k8s-io-v1alpha2-jobset name=mjobset.kb.io ops="[CREATE]"
        else
            path=/validate-jobset-x-k8s-io-v1alpha2-jobset name=vjobset.kb.io
            ops="[CREATE, UPDATE]"
        fi
        verb=$(echo $kind | tr 'A-Z' 'a-z')
        cat <<EOF
---
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: jobset-e2e-$verb}
webhooks:
- name: $name
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {url: "$url$path", caBundle: "$2"}
  rules:
  - {apiGroups: [jobset.x-k8s.io], apiVersions: [v1alpha2], operations: $ops, resources: [jobsets]}
EOF
    done
}

addon_up() {
    local dir=$1 kc="$1/kubeconfig" src ports cfg log="$1/jobset.log" pid end
    addon_built || die "the JobSet manager is not built: run 'e2e/k8s/addons.sh build jobset' first"
    [ -r "$kc" ] || die "no kubeconfig in $dir"
    src=$(jobset_src) && [ -d "$src" ] || die "the JobSet module's source is not downloaded"
    kubectl --kubeconfig "$kc" apply --server-side \
        -f "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" >/dev/null \
        || die "could not apply JobSet's CRD"
    end=$((SECONDS + 60))
    until [ "$(kubectl --kubeconfig "$kc" get crd jobsets.jobset.x-k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ]; do
        [ $SECONDS -lt $end ] || die "JobSet's CRD is not established after 60 s"
        sleep 0.2
    done
    read -r -a ports <<<"$("$HERE/cluster.sh" ports 3)"
    jobset_certs "$dir/jobset-certs"
    cfg="$dir/jobset-config.yaml"
    cat > "$cfg" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: ${ports[0]}, host: 127.0.0.1, certDir: $dir/jobset-certs}
metrics: {bindAddress: "127.0.0.1:${ports[1]}", certDir: $dir/jobset-certs}
health: {healthProbeBindAddress: "127.0.0.1:${ports[2]}"}
EOF
    KUBECONFIG=$kc setsid "$JOBSET_BIN" --config "$cfg" --zap-log-level=info \
        --metrics-bind-address "127.0.0.1:${ports[1]}" \
        --health-probe-bind-address "127.0.0.1:${ports[2]}" >"$log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" > "$dir/pids-jobset"
    end=$((SECONDS + 60))
    until curl -sf "http://127.0.0.1:${ports[2]}/readyz" >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$log" >&2; die "the JobSet manager exited"; }
        [ $SECONDS -lt $end ] || { tail -n 20 "$log" >&2; die "the JobSet manager is not ready after 60 s"; }
        sleep 0.3
    done
    jobset_webhooks "${ports[0]}" "$(base64 -w0 < "$dir/jobset-certs/ca.crt")" \
        | kubectl --kubeconfig "$kc" apply -f - >/dev/null || die "could not register JobSet's webhooks"
    # working: a JobSet goes through its webhooks (a dry run)
    end=$((SECONDS + 30))
    until kubectl --kubeconfig "$kc" create --dry-run=server -o name -f - >/dev/null 2>&1 <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: jobset-e2e-probe, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: busybox}]
EOF
    do
        [ $SECONDS -lt $end ] || { tail -n 20 "$log" >&2; die "JobSet's webhooks do not answer"; }
        sleep 0.3
    done
    echo "JobSet $JOBSET_V manager up (pid $pid, webhooks on 127.0.0.1:${ports[0]}, log $log)"
}
