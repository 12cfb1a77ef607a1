#!/usr/bin/env bash
# cluster.sh - a real Kubernetes control plane on loopback, for the tests:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and KWOK
# (which plays the kubelets of fake nodes), built from their Go modules.
#
#   e2e/k8s/cluster.sh build            build the binaries at the pinned
#                                       versions (e2e/k8s/mod/*/go.mod) into
#                                       the cache; a no-op once built
#   e2e/k8s/cluster.sh built            exit 0 when every binary is built
#   e2e/k8s/cluster.sh bin              print the folder of the binaries
#   e2e/k8s/cluster.sh up DIR [--nodes FILE] [--control-plane-only]
#                                       start them; write DIR/kubeconfig
#                                       (cluster admin), DIR/pids, DIR/env
#                                       and logs DIR/*.log. With
#                                       --control-plane-only: etcd and
#                                       kube-apiserver alone (no nodes, no
#                                       controllers; what a controller
#                                       under test needs, as envtest)
#   e2e/k8s/cluster.sh down DIR         stop them
#   e2e/k8s/cluster.sh stop DIR NAME    stop one (etcd, kube-apiserver,
#                                       kube-controller-manager,
#                                       kube-scheduler, kwok)
#   e2e/k8s/cluster.sh start DIR NAME   start it again, as it was started
#   e2e/k8s/cluster.sh restart DIR NAME stop and start one; wait until ready
#   e2e/k8s/cluster.sh ports N          print N free loopback ports (for the
#                                       addons of addons.sh)
#
# The cache is ${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}. --nodes takes the
# same file as `cueue cluster --nodes` (v1 Node documents); the default is
# e2e/k8s/nodes.yaml, the embedded cluster's built-in nodes. KWOK marks a
# bound pod Running at once and, when it carries the annotation
# cueue.dev/simulated-runtime (a Go duration), Succeeded that long after,
# as the embedded cluster does. Extra flags for one component:
# CUEUE_K8S_FLAGS_<NAME> (e.g. CUEUE_K8S_FLAGS_KUBE_APISERVER).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CUEUE_K8S_CACHE:-$HOME/.cache/cueue-k8s}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

die() { echo "cluster.sh: $*" >&2; exit 1; }

# the version a build module requires of MODULE
modver() { sed -n "s|^[[:space:]]*\(require \)\{0,1\}$2 \(v[^ ]*\).*|\2|p" "$HERE/mod/$1/go.mod" | head -n 1; }

KUBE_V=$(modver kube k8s.io/kubernetes)
ETCD_V=$(modver etcd go.etcd.io/etcd/server/v3)
KWOK_V=$(modver kwok sigs.k8s.io/kwok)
[ -n "$KUBE_V" ] && [ -n "$ETCD_V" ] && [ -n "$KWOK_V" ] || die "cannot read the pinned versions in $HERE/mod"
# one folder per set of versions: a new pin builds anew, an old one stays
BIN="$CACHE/kube-$KUBE_V-etcd-$ETCD_V-kwok-$KWOK_V"
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler kwok"

built() {
    local c
    for c in $COMPONENTS; do [ -x "$BIN/$c" ] || return 1; done
}

# gobuild MODULE-FOLDER LDFLAGS PACKAGE...: go build into $BIN
gobuild() {
    local mod=$1 ld=$2 t0=$SECONDS
    shift 2
    echo "building $* ($mod) ..."
    (cd "$HERE/mod/$mod" && go build -trimpath -ldflags "$ld" -o "$BIN/.tmp/" "$@") \
        || die "go build of $* failed"
    echo "  built in $((SECONDS - t0)) s"
}

build() {
    if built; then
        echo "already built: $BIN"
        return 0
    fi
    command -v go >/dev/null || die "go is not installed"
    mkdir -p "$BIN/.tmp"
    local t0=$SECONDS ld="-s -w" minor p
    minor=${KUBE_V#v1.}
    minor=${minor%%.*}
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ld="$ld -X $p.gitVersion=$KUBE_V -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    echo "downloading modules ..."
    for p in kube etcd kwok; do
        (cd "$HERE/mod/$p" && go mod download) || die "go mod download failed in mod/$p"
    done
    echo "  downloaded in $((SECONDS - t0)) s"
    [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] \
        && [ -x "$BIN/kube-scheduler" ] \
        || gobuild kube "$ld" k8s.io/kubernetes/cmd/kube-apiserver \
            k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
    if [ ! -x "$BIN/etcd" ]; then
        gobuild etcd "-s -w" go.etcd.io/etcd/server/v3
        # go names the binary of a module path ending in /v3 after "server"
        for p in server v3; do [ -x "$BIN/.tmp/$p" ] && mv "$BIN/.tmp/$p" "$BIN/.tmp/etcd"; done
    fi
    [ -x "$BIN/kwok" ] || gobuild kwok "-s -w" sigs.k8s.io/kwok/cmd/kwok
    mv "$BIN"/.tmp/* "$BIN/" 2>/dev/null
    rmdir "$BIN/.tmp"
    built || die "not every binary was built in $BIN"
    "$BIN/kube-apiserver" --version
    "$BIN/etcd" --version | head -n 1
    echo "built in $((SECONDS - t0)) s: $BIN"
}

# ---------------- running ----------------

# free ports: N distinct ports nobody listens on
free_ports() {
    local n=$1 used out="" p
    used=" $(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}' | sort -u | tr '\n' ' ') "
    while [ "$(echo "$out" | wc -w)" -lt "$n" ]; do
        p=$((20000 + RANDOM % 12000))
        case "$used $out " in *" $p "*) continue ;; esac
        out="$out $p"
    done
    echo "$out"
}

# cert NAME SUBJECT EXTENSIONS [CA]: a key and a certificate signed by the
# CA (default ca; front-proxy-ca for the aggregator's client certificate)
cert() {
    local ca=${4:-ca}
    openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null || return 1
    openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null || return 1
    printf '%s\n' "$3" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days 30 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null || return 1
    rm -f "$1.csr" "$1.ext"
}

certs() {
    local d=$1
    mkdir -p "$d/pki"
    (
        cd "$d/pki" || exit 1
        openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null &&
        openssl req -x509 -new -key ca.key -subj "/CN=cueue-e2e-ca" -days 30 -out ca.crt \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null &&
        cert apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1" &&
        for u in "admin:/O=system:masters/CN=cueue-e2e-admin" \
                 "controller-manager:/CN=system:kube-controller-manager" \
                 "scheduler:/CN=system:kube-scheduler" \
                 "kwok:/O=system:masters/CN=kwok"; do
            cert "${u%%:*}" "${u#*:}" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth" || exit 1
        done &&
        # the aggregation layer's front proxy: a CA of its own (as kubeadm's
        # front-proxy-ca) and the client certificate kube-apiserver presents
        # to aggregated API servers (the controller's visibility API)
        openssl ecparam -name prime256v1 -genkey -noout -out front-proxy-ca.key 2>/dev/null &&
        openssl req -x509 -new -key front-proxy-ca.key -subj "/CN=cueue-e2e-front-proxy-ca" \
            -days 30 -out front-proxy-ca.crt \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null &&
        cert front-proxy-client "/CN=front-proxy-client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth" front-proxy-ca &&
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null &&
        openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    ) || die "could not make the certificates in $d/pki"
}

# kubeconfig FILE USER: a kubeconfig for the client certificate USER
kubeconfig() {
    cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $DIR/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $DIR/pki/$2.crt
    client-key: $DIR/pki/$2.key
contexts:
- name: e2e
  context: {cluster: e2e, user: $2}
current-context: e2e
EOF
}

# KWOK's stages (they replace its defaults): a node is made Ready (KWOK
# keeps its Lease renewed); a pod bound to one of its nodes is Running at
# once, Succeeded after the simulated runtime when it has one, and gone
# once deleted.
stages() {
    cat <<'EOF'
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: cueue-node-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - {key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: NotIn, values: ['True']}
  next:
    statusTemplate: |
      {{ $t := Now }}
      conditions:
      {{ range NodeConditions }}
      - {type: {{ .type | Quote }}, status: {{ .status | Quote }}, reason: {{ .reason | Quote }}, message: {{ .message | Quote }}, lastHeartbeatTime: {{ $t | Quote }}, lastTransitionTime: {{ $t | Quote }}}
      {{ end }}
      addresses:
      {{ with NodeIP }}
      - {type: InternalIP, address: {{ . | Quote }}}
      {{ end }}
      - {type: Hostname, address: {{ NodeName | Quote }}}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: ""
        osImage: ""
        machineID: ""
        systemUUID: ""
        bootID: ""
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: cueue-pod-running}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Pending]}
  next:
    statusTemplate: |
      {{ $t := Now }}
      phase: Running
      startTime: {{ $t | Quote }}
      conditions:
      {{ range (list "PodReadyToStartContainers" "Initialized" "Ready" "ContainersReady") }}
      - {type: {{ . }}, status: "True", lastTransitionTime: {{ $t | Quote }}}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        started: true
        restartCount: 0
        state: {running: {startedAt: {{ $t | Quote }}}}
      {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      {{ end }}
      {{ with PodIPsWith .spec.nodeName false .metadata.uid .metadata.name .metadata.namespace }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: cueue-pod-finished}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Running]}
    - {key: '.metadata.annotations["cueue.dev/simulated-runtime"]', operator: Exists}
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["cueue.dev/simulated-runtime"]'
  next:
    statusTemplate: |
      {{ $t := Now }}
      {{ $start := .status.startTime }}
      phase: Succeeded
      conditions:
      {{ range (list "Ready" "ContainersReady") }}
      - {type: {{ . }}, status: "False", reason: PodCompleted, lastTransitionTime: {{ $t | Quote }}}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          terminated: {exitCode: 0, reason: Completed, startedAt: {{ $start | Quote }}, finishedAt: {{ $t | Quote }}}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: cueue-pod-deleted}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: Exists}
  next:
    finalizers: {empty: true}
    delete: true
EOF
}

# the command line of component NAME, one argument per line (DIR/NAME.args)
args_of() {
    local n=$1 p=$DIR/pki extra
    case $n in
    etcd)
        printf '%s\n' --name=e2e --data-dir="$DIR/etcd-data" \
            --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
            --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
            --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
            --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
            --initial-cluster="e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
            --initial-cluster-state=new --unsafe-no-fsync=true \
            --quota-backend-bytes=8589934592 --log-level=warn ;;
    kube-apiserver)
        printf '%s\n' --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
            --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
            --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
            --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
            --client-ca-file="$p/ca.crt" --authorization-mode=Node,RBAC \
            --service-account-issuer="https://127.0.0.1:$APISERVER_PORT" \
            --service-account-key-file="$p/sa.pub" \
            --service-account-signing-key-file="$p/sa.key" \
            --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
            --max-requests-inflight=800 --max-mutating-requests-inflight=400 \
            --profiling=false --cert-dir="$DIR/apiserver-certs" \
            --requestheader-client-ca-file="$p/front-proxy-ca.crt" \
            --requestheader-allowed-names=front-proxy-client \
            --requestheader-username-headers=X-Remote-User \
            --requestheader-group-headers=X-Remote-Group \
            --requestheader-extra-headers-prefix=X-Remote-Extra- \
            --proxy-client-cert-file="$p/front-proxy-client.crt" \
            --proxy-client-key-file="$p/front-proxy-client.key" ;;
    kube-controller-manager)
        printf '%s\n' --kubeconfig="$DIR/controller-manager.kubeconfig" \
            --authentication-kubeconfig="$DIR/controller-manager.kubeconfig" \
            --authorization-kubeconfig="$DIR/controller-manager.kubeconfig" \
            --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
            --controllers=job-controller,statefulset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,node-lifecycle-controller,pod-garbage-collector-controller,ttl-after-finished-controller \
            --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
            --use-service-account-credentials=true \
            --kube-api-qps=200 --kube-api-burst=400 --concurrent-job-syncs=10 \
            --concurrent-gc-syncs=20 ;;
    kube-scheduler)
        printf '%s\n' --kubeconfig="$DIR/scheduler.kubeconfig" \
            --authentication-kubeconfig="$DIR/scheduler.kubeconfig" \
            --authorization-kubeconfig="$DIR/scheduler.kubeconfig" \
            --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false \
            --kube-api-qps=200 --kube-api-burst=400 ;;
    kwok)
        printf '%s\n' --kubeconfig="$DIR/kwok.kubeconfig" --manage-all-nodes=true \
            --config="$DIR/kwok.yaml" --node-lease-duration-seconds=40 \
            --cidr=10.244.0.1/16 --node-ip=10.1.0.1 ;;
    esac
    extra=CUEUE_K8S_FLAGS_$(echo "$n" | tr 'a-z-' 'A-Z_')
    [ -n "${!extra:-}" ] && printf '%s\n' ${!extra}
}

pid_of() { sed -n "s/^$1 //p" "$DIR/pids" 2>/dev/null | tail -n 1; }

start_one() {
    local n=$1 pid
    [ -s "$DIR/$n.args" ] || args_of "$n" > "$DIR/$n.args"
    mapfile -t a < "$DIR/$n.args"
    "$BIN/$n" "${a[@]}" >>"$DIR/$n.log" 2>&1 < /dev/null &
    pid=$!
    sed -i "/^$n /d" "$DIR/pids" 2>/dev/null
    echo "$n $pid" >> "$DIR/pids"
}

stop_one() {
    local n=$1 pid i
    pid=$(pid_of "$n")
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    sed -i "/^$n /d" "$DIR/pids"
}

# curl of the API server as the admin
acurl() {
    curl -sS --max-time 5 --cacert "$DIR/pki/ca.crt" --cert "$DIR/pki/admin.crt" \
        --key "$DIR/pki/admin.key" "$@"
}

# ready NAME: 0 once NAME serves (or, for kwok, every node is Ready)
ready() {
    local pid
    pid=$(pid_of "$1")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 2
    case $1 in
    etcd) curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"true"' ;;
    kube-apiserver) [ "$(acurl "https://127.0.0.1:$APISERVER_PORT/readyz" 2>/dev/null)" = ok ] ;;
    kube-controller-manager)
        curl -sfk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz" | grep -qx ok ;;
    kube-scheduler)
        curl -sfk --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz" | grep -qx ok ;;
    kwok)
        # every node Ready, without the not-ready taint the API server puts
        # on new nodes (the node lifecycle controller lifts it)
        acurl "https://127.0.0.1:$APISERVER_PORT/api/v1/nodes" 2>/dev/null | jq -e '
            .items | length > 0 and all(.[]; ([.status.conditions[]? | select(.type=="Ready")
            | .status] == ["True"]) and ([.spec.taints[]? | select(.key |
            startswith("node.kubernetes.io/"))] | length == 0))' >/dev/null ;;
    esac
}

wait_ready() {
    local n=$1 secs=${2:-60} end rc
    end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        ready "$n"
        rc=$?
        [ $rc -eq 0 ] && return 0
        [ $rc -eq 2 ] && { tail -n 20 "$DIR/$n.log" >&2; die "$n exited (log: $DIR/$n.log)"; }
        sleep 0.2
    done
    tail -n 20 "$DIR/$n.log" >&2
    die "$n not ready within ${secs}s (log: $DIR/$n.log)"
}

load_env() {
    [ -s "$DIR/env" ] || die "$DIR is not a cluster made by 'cluster.sh up'"
    # shellcheck disable=SC1091
    . "$DIR/env"
}

up() {
    local nodes=$HERE/nodes.yaml t0=$SECONDS ports n cponly=0
    [ $# -ge 1 ] || die "usage: cluster.sh up DIR [--nodes FILE] [--control-plane-only]"
    DIR=$1
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --nodes) [ $# -ge 2 ] || die "--nodes needs a file"; nodes=$2; shift 2 ;;
        --control-plane-only) cponly=1; shift ;;
        *) die "unknown argument $1" ;;
        esac
    done
    [ -r "$nodes" ] || die "cannot read the nodes file $nodes"
    built || die "the binaries are not built: run 'e2e/k8s/cluster.sh build' first"
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    [ -s "$DIR/pids" ] && die "$DIR already holds a running cluster (cluster.sh down $DIR)"
    ports=($(free_ports 5))
    cat > "$DIR/env" <<EOF
ETCD_PORT=${ports[0]}
ETCD_PEER_PORT=${ports[1]}
APISERVER_PORT=${ports[2]}
KCM_PORT=${ports[3]}
SCHEDULER_PORT=${ports[4]}
KUBECONFIG_FILE=$DIR/kubeconfig
SERVER=https://127.0.0.1:${ports[2]}
EOF
    load_env
    : > "$DIR/pids"
    certs "$DIR"
    kubeconfig "$DIR/kubeconfig" admin
    kubeconfig "$DIR/controller-manager.kubeconfig" controller-manager
    kubeconfig "$DIR/scheduler.kubeconfig" scheduler
    kubeconfig "$DIR/kwok.kubeconfig" kwok
    stages > "$DIR/kwok.yaml"
    start_one etcd
    wait_ready etcd 30
    start_one kube-apiserver
    wait_ready kube-apiserver 60
    if [ "$cponly" = 1 ]; then
        echo "control plane up in $((SECONDS - t0)) s: KUBECONFIG=$DIR/kubeconfig ($SERVER)"
        return 0
    fi
    # the nodes before KWOK starts, so that it finds them all at once
    kubectl --kubeconfig "$DIR/kubeconfig" apply -f "$nodes" >"$DIR/nodes.log" 2>&1 \
        || { cat "$DIR/nodes.log" >&2; die "could not create the nodes of $nodes"; }
    for n in kube-controller-manager kube-scheduler kwok; do start_one "$n"; done
    for n in kube-controller-manager kube-scheduler kwok; do wait_ready "$n" 60; done
    # a namespace is usable once its default ServiceAccount exists
    local end=$((SECONDS + 30))
    until kubectl --kubeconfig "$DIR/kubeconfig" get serviceaccount default -n default \
        >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || die "no default ServiceAccount after 30 s"
        sleep 0.2
    done
    echo "cluster up in $((SECONDS - t0)) s: KUBECONFIG=$DIR/kubeconfig ($SERVER)"
}

down() {
    local n
    [ $# -ge 1 ] || die "usage: cluster.sh down DIR"
    DIR=$(cd "$1" 2>/dev/null && pwd) || DIR=$1
    "$HERE/addons.sh" down "$DIR" # JobSet, LeaderWorkerSet, ... first
    for n in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_one "$n"; done
    rm -f "$DIR/pids"
    # and any component of this cluster the pids file no longer names
    local p
    for p in $(pgrep -f -- "^$BIN/[a-z-]+ .*$DIR/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
}

one() {
    local verb=$1
    [ $# -ge 3 ] || die "usage: cluster.sh $verb DIR NAME"
    DIR=$(cd "$2" && pwd) || die "no folder $2"
    case " $COMPONENTS " in *" $3 "*) ;; *) die "unknown component $3 ($COMPONENTS)" ;; esac
    load_env
    case $verb in
    stop) stop_one "$3" ;;
    start) start_one "$3"; wait_ready "$3" 60 ;;
    restart) stop_one "$3"; start_one "$3"; wait_ready "$3" 60 ;;
    esac
}

case ${1:-} in
build) build ;;
built) built ;;
bin) built && echo "$BIN" ;;
up) shift; up "$@" ;;
down) shift; down "$@" ;;
stop|start|restart) one "$@" ;;
ports) free_ports "${2:-1}" ;;
-h|--help|help)
    sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
*) die "usage: cluster.sh build|built|bin|up DIR [--nodes FILE]|down DIR|stop|start|restart DIR NAME" ;;
esac
