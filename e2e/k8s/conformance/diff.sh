#!/usr/bin/env bash
# diff.sh - the differential conformance test: the same request sequences are
# sent to the embedded cluster (`cueue cluster`) and to a real kube-apiserver
# (e2e/k8s/cluster.sh up), the answers are masked where they legitimately
# differ (uids, times, resourceVersion values, generated names, continue
# tokens, ages) and compared. Prints every difference (sequence, step, the
# request, both masked answers as a unified diff) and `N sequences, M
# identical`. Exits 0 when every sequence is identical or each differing
# one is listed in known-differences.txt (with the reason in docs/cluster.md,
# "Known differences from kube-apiserver"), 1 otherwise, 77 (skip) when the
# real binaries are not built.
#
# Usage: e2e/k8s/conformance/diff.sh PATH_TO_cueue [SEQUENCE_GLOB...]
# Environment:
#   CONF_REAL_KUBECONFIG=FILE  use this running cluster as the real one
#                              (no cluster.sh up/down); its etcd is not
#                              compacted unless CONF_ETCD is set too
#   CONF_SELF=1                compare two embedded clusters (a sanity check
#                              of the harness: everything must be identical)
#   CONF_CLUSTER_SH=FILE       the cluster script (default e2e/k8s/cluster.sh)
#   CONF_OUT=DIR               keep the recorded answers there
#   CONF_STRICT=1              known differences fail too
# Needs: kubectl, curl, jq.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REAL_HOME=$HOME
. "$HERE/../../lib.sh"
e2e_init "${1:-}" kubectl jq curl base64
shift
ROOT=$(cd "$HERE/../../.." && pwd)
GLOBS=("$@")
[ ${#GLOBS[@]} -eq 0 ] && GLOBS=("*")
export CUEUE_K8S_CACHE=${CUEUE_K8S_CACHE:-$REAL_HOME/.cache/cueue-k8s}
CLUSTER_SH=${CONF_CLUSTER_SH:-$ROOT/e2e/k8s/cluster.sh}
OUT=${CONF_OUT:-$TMP/out}
mkdir -p "$OUT"
REAL_DIR=""

# ---- the two servers -------------------------------------------------
# srv_from_kc NAME KUBECONFIG: URL_NAME and the curl options CURL_NAME
# (an array) for the kubeconfig's first cluster and user.
srv_from_kc() {
    local n=$1 kc=$2 d=$TMP/srv-$1 v
    mkdir -p "$d"
    kubectl --kubeconfig "$kc" config view --raw -o json >"$d/kc.json" || return 1
    eval "URL_$n=\$(jq -r '.clusters[0].cluster.server' \"\$d/kc.json\")"
    eval "CURL_$n=()"
    v=$(jq -r '.clusters[0].cluster["certificate-authority-data"] // empty' "$d/kc.json")
    if [ -n "$v" ]; then
        base64 -d <<<"$v" >"$d/ca.crt"; eval "CURL_$n+=(--cacert \"\$d/ca.crt\")"
    fi
    v=$(jq -r '.clusters[0].cluster["certificate-authority"] // empty' "$d/kc.json")
    [ -n "$v" ] && eval "CURL_$n+=(--cacert \"\$v\")"
    v=$(jq -r '.users[0].user["client-certificate-data"] // empty' "$d/kc.json")
    if [ -n "$v" ]; then
        base64 -d <<<"$v" >"$d/cl.crt"; eval "CURL_$n+=(--cert \"\$d/cl.crt\")"
    fi
    v=$(jq -r '.users[0].user["client-certificate"] // empty' "$d/kc.json")
    [ -n "$v" ] && eval "CURL_$n+=(--cert \"\$v\")"
    v=$(jq -r '.users[0].user["client-key-data"] // empty' "$d/kc.json")
    if [ -n "$v" ]; then
        base64 -d <<<"$v" >"$d/cl.key"; eval "CURL_$n+=(--key \"\$d/cl.key\")"
    fi
    v=$(jq -r '.users[0].user["client-key"] // empty' "$d/kc.json")
    [ -n "$v" ] && eval "CURL_$n+=(--key \"\$v\")"
    v=$(jq -r '.users[0].user.token // empty' "$d/kc.json")
    [ -n "$v" ] && eval "CURL_$n+=(-H \"Authorization: Bearer \$v\")"
    eval "KC_$n=\$kc"
}

start_real() {
    if [ -n "${CONF_REAL_KUBECONFIG:-}" ]; then
        srv_from_kc real "$CONF_REAL_KUBECONFIG"
        ETCD_URL=${CONF_ETCD:-}
        return
    fi
    if [ ! -x "$CLUSTER_SH" ]; then
        echo "SKIP  all: $CLUSTER_SH is missing"
        exit 77
    fi
    if ! "$CLUSTER_SH" built >/dev/null 2>&1; then
        echo "SKIP  all: the real binaries are not built (run e2e/k8s/cluster.sh build)"
        exit 77
    fi
    REAL_DIR=$TMP/real
    if ! "$CLUSTER_SH" up "$REAL_DIR" >"$TMP/real-up.log" 2>&1; then
        echo "FAIL  the real cluster did not start"
        tail -n 40 "$TMP/real-up.log"
        for l in "$REAL_DIR"/*.log; do [ -e "$l" ] && show "$l" "${l##*/}" 20; done
        exit 1
    fi
    srv_from_kc real "$REAL_DIR/kubeconfig"
    ETCD_URL=http://127.0.0.1:$(sed -n 's/^ETCD_PORT=//p' "$REAL_DIR/env")
}
stop_real() {
    [ -n "$REAL_DIR" ] && "$CLUSTER_SH" down "$REAL_DIR" >/dev/null 2>&1
    REAL_DIR=""
}
trap 'stop_real; e2e_cleanup' EXIT

# the embedded cluster, with its built-in nodes (cluster.sh up gives the
# real one the same) and the fault endpoint for compaction
start_cluster --admin
srv_from_kc emb "$KC"
if [ -n "${CONF_SELF:-}" ]; then
    KC_SAVE=$KC; KC=$TMP/kc2; CL_LISTEN=127.0.0.1:0; CL_LOG=$TMP/cluster2.log
    start_cluster --admin
    srv_from_kc real "$KC"
    KC=$KC_SAVE
    REAL_KIND=embedded
else
    start_real
    REAL_KIND=kube-apiserver
fi
echo "embedded: $URL_emb"
echo "real ($REAL_KIND): $URL_real"

# ---- recording -------------------------------------------------------
# The mask: what legitimately differs between two servers. managedFields
# are sorted by time in seconds (both servers), so entries written in the
# same second or across a second's boundary are sorted by manager here.
MASK='
def uuidish: test("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");
def timeish: test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$");
def ageish: test("^([0-9]+[smhdy]([0-9]+[smhd])?|<unknown>|<invalid>)$");
def notroot: ((.metadata.name? // "") != "kube-root-ca.crt");
def maskobj:
  # kube-controller-manager puts the ConfigMap kube-root-ca.crt in every
  # namespace: left out of lists, Tables and watches
  (if (.items? | type) == "array" then .items |= map(select(notroot)) else . end)
  | (if (.rows? | type) == "array" then .rows |= map(select(.object | notroot)) else . end)
  | (if (.resourceVersion? | type) == "string" and .resourceVersion != "" then .resourceVersion = "<rv>" else . end)
  | (if (.managedFields? | type) == "array"
     then .managedFields |= sort_by(.operation, .manager, .subresource // "", .apiVersion) else . end)
  | (if (.continue? | type) == "string" and .continue != "" then .continue = "<continue>" else . end)
  | (if (.generateName? | type) == "string" and (.name? | type) == "string"
        and (.generateName as $g | .name | startswith($g)) then .name = .generateName + "<gen>" else . end);
walk(if type == "object" then maskobj
     elif type == "string" and (uuidish or timeish or ageish)
       then (if uuidish then "<uid>" elif timeish then "<time>" else "<age>" end)
     else . end)'
# the same for text (kubectl output, messages): uids, times, ages, RVs
mask_text() {
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<uid>/g' \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)/<time>/g' \
        -e 's/(^|[[:space:]])(<invalid>|<unknown>|[0-9]+[smhdy]([0-9]+[smhd])?)([[:space:]]|$)/\1<age>\4/g' \
        -e 's/(resourceVersion|resource version)(:? *"?)[0-9]+/\1\2<rv>/g' \
        -e 's/"[0-9]+"( +)<age>/"<rv>"\1<age>/g' \
        -e 's/(ResourceVersion in record|too old resource version: [0-9]+) \([0-9]+\)/\1 (<rv>)/g' \
        -e "s#$URL_emb#<server>#g" -e "s#$URL_real#<server>#g" \
        -e 's/127\.0\.0\.1:[0-9]+/<server>/g'
}

STEP=0
SEQ_DIR=""
# rec TITLE: starts a step's record (the title is what the step sent)
rec() {
    STEP=$((STEP + 1))
    REC=$SEQ_DIR/$(printf '%02d' "$STEP")
    printf '%s\n' "$1" >"$REC.req"
    : >"$REC"
}
# mask_json FILE: the masked, key-sorted JSON of FILE (or the text, masked,
# when it is not JSON); FILTER may post-process the masked JSON
mask_json() {
    if jq -e . "$1" >/dev/null 2>&1; then
        jq -S "$MASK | if type == \"object\" and .kind == \"Status\" then . else ${FILTER:-.} end" "$1" 2>&1 | mask_text
    else
        mask_text <"$1"
    fi
}

# req METHOD PATH [BODY [CONTENT-TYPE [ACCEPT]]]: one HTTP request; records
# the status code, the Warning headers and the masked body. $FILTER (jq) is
# applied to the masked body. The raw body stays in $BODY for the sequence.
req() {
    local m=$1 p=$2 body=${3:-} ct=${4:-application/json} acc=${5:-application/json}
    local -a args=(-sS -o "$TMP/body" -D "$TMP/hdr" -w '%{http_code}' -X "$m" \
        -H "Accept: $acc" --max-time 30)
    [ -n "$body" ] && args+=(-H "Content-Type: $ct" --data-binary "$body")
    local -n cv=CURL_$SRV
    local url
    eval "url=\$URL_$SRV"
    rec "$m $p${body:+ ($ct) $body}"
    CODE=$(curl "${cv[@]}" "${args[@]}" "$url$p" 2>"$TMP/curl.err") || true
    BODY=$TMP/body
    {
        echo "code: $CODE"
        # header names are lower case over HTTP/2 (the real one), as sent otherwise
        grep -i '^warning:' "$TMP/hdr" | tr -d '\r' | sed 's/^[Ww]arning:/Warning:/' | sort | mask_text
        mask_json "$TMP/body"
    } >>"$REC"
}
# raw METHOD PATH [BODY [CONTENT-TYPE]]: like req, not recorded (set-up)
raw() {
    local m=$1 p=$2 body=${3:-} ct=${4:-application/json}
    local -a args=(-sS -o "$TMP/rawbody" -w '%{http_code}' -X "$m" --max-time 30)
    [ -n "$body" ] && args+=(-H "Content-Type: $ct" --data-binary "$body")
    local -n cv=CURL_$SRV
    local url
    eval "url=\$URL_$SRV"
    curl "${cv[@]}" "${args[@]}" "$url$p" 2>/dev/null
}
# kc ARGS...: one kubectl command; records the exit code, stdout and stderr,
# masked. Stdin is passed on.
kc() {
    local kcf
    eval "kcf=\$KC_$SRV"
    rec "kubectl $*"
    local rc=0
    kubectl --kubeconfig "$kcf" --request-timeout=20s "$@" >"$TMP/kout" 2>"$TMP/kerr" || rc=$?
    {
        echo "exit: $rc"
        if jq -e . "$TMP/kout" >/dev/null 2>&1; then
            mask_json "$TMP/kout"
        else
            grep -v '^kube-root-ca\.crt ' "$TMP/kout" | mask_text
        fi
        echo "stderr:"
        grep -v -e '^W[0-9]\{4\} ' -e 'version difference between client' "$TMP/kerr" | mask_text
    } >>"$REC"
}
# kq ARGS...: kubectl, not recorded (set-up)
kq() {
    local kcf
    eval "kcf=\$KC_$SRV"
    kubectl --kubeconfig "$kcf" --request-timeout=20s "$@"
}
# watch PATH SECONDS [JQ]: a watch (curl, ends after SECONDS or at the
# server's timeoutSeconds); records the status code and each event, masked
# and reduced by JQ (default: the whole event)
watch_req() {
    local p=$1 secs=$2 f=${3:-.}
    local -n cv=CURL_$SRV
    local url
    eval "url=\$URL_$SRV"
    rec "WATCH $p"
    CODE=$(curl "${cv[@]}" -sS -N -o "$TMP/wbody" -w '%{http_code}' --max-time "$secs" "$url$p" 2>/dev/null) || true
    {
        echo "code: $CODE"
        # a Status (an error instead of a stream) is shown whole
        jq -c -S "$MASK | if .kind == \"Status\" then . elif (.object | notroot) then $f else empty end" \
            "$TMP/wbody" 2>&1 | mask_text
    } >>"$REC"
}
# note TEXT: records a line the sequence computed itself
note() {
    rec "note"
    printf '%s\n' "$*" >>"$REC"
}
# until SECONDS COMMAND...: polls (not recorded); returns 1 on timeout
until_ok() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.3
    done
    return 1
}
# server-specific actions, for what cannot be the same request on both
# compact: drop the watch history (embedded: the compact fault; real:
# compact etcd at its current revision through its JSON gateway)
compact() {
    if [ "$SRV" = emb ] || [ "$REAL_KIND" = embedded ]; then
        raw POST /cueue/faults '{"compact":true}' >/dev/null
        return
    fi
    [ -n "${ETCD_URL:-}" ] || return 1
    local rev
    rev=$(curl -sS --max-time 10 -X POST "$ETCD_URL/v3/kv/range" -d '{"key":"AA=="}' | jq -r .header.revision)
    curl -sS --max-time 30 -X POST "$ETCD_URL/v3/kv/compaction" \
        -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
}
can_compact() { [ "$SRV" = emb ] || [ "$REAL_KIND" = embedded ] || [ -n "${ETCD_URL:-}" ]; }

# ---- the sequences ---------------------------------------------------
SEQS=()
# seq NAME: declares seq_NAME (defined in sequences.sh)
. "$HERE/sequences.sh"

# set-up on both: the Kueue CRDs and the test CRD, established
for SRV in emb real; do
    kq apply -f "$ROOT/crds/" >/dev/null || { echo "FAIL  apply crds on $SRV"; exit 1; }
    kq apply -f "$HERE/widget-crd.yaml" >/dev/null || { echo "FAIL  apply widget crd on $SRV"; exit 1; }
    kq wait --for condition=established --timeout=60s crd --all >/dev/null 2>&1 \
        || { echo "FAIL  CRDs not established on $SRV"; exit 1; }
done
# kubectl's discovery cache sees the new CRDs (both servers)
sleep 1

NSEQ=0 NSAME=0 NKNOWN=0 HARNESS_FAILS=0
DIFFS=()
KNOWN_FILE=$HERE/known-differences.txt
known() { grep -v '^#' "$KNOWN_FILE" 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }
for name in "${SEQS[@]}"; do
    sel=0
    for g in "${GLOBS[@]}"; do
        # shellcheck disable=SC2053
        [[ $name == $g ]] && sel=1
    done
    [ $sel = 1 ] || continue
    NSEQ=$((NSEQ + 1))
    t0=$SECONDS
    for SRV in emb real; do
        SEQ_DIR=$OUT/$SRV/$name
        rm -rf "$SEQ_DIR"; mkdir -p "$SEQ_DIR"
        STEP=0
        NS=conf-${name//_/-}
        kq create namespace "$NS" >/dev/null 2>&1
        "seq_$name" >"$SEQ_DIR/log" 2>&1
    done
    if grep -l 'jq: error' "$OUT"/*/"$name"/[0-9][0-9] >/dev/null 2>&1; then
        echo "FAIL  $name: the harness's jq failed:"
        grep -h -A2 'jq: error' "$OUT"/*/"$name"/[0-9][0-9] | head -n 6
        HARNESS_FAILS=$((HARNESS_FAILS + 1))
    fi
    if diff -r -q "$OUT/emb/$name" "$OUT/real/$name" -x log -x '*.req'  >/dev/null 2>&1; then
        NSAME=$((NSAME + 1))
        echo "SAME  $name ($((SECONDS - t0)) s)"
        continue
    fi
    # the steps that differ; each is known (listed in known-differences.txt
    # as NAME/STEP) or new
    newsteps="" report=""
    for st in $( (ls "$OUT/emb/$name"; ls "$OUT/real/$name") | grep -x '[0-9][0-9]' | sort -u); do
        a=$OUT/emb/$name/$st b=$OUT/real/$name/$st
        cmp -s "$a" "$b" 2>/dev/null && continue
        if known "$name/$st"; then tag="known"; else tag="NEW"; newsteps="$newsteps $st"; fi
        report+="  step $st ($tag): $(head -c 400 "$a.req" 2>/dev/null || head -c 400 "$b.req")"$'\n'
        report+="$(diff -u --label embedded --label "$REAL_KIND" "$a" "$b" 2>&1 | sed 's/^/    /' | head -n "${CONF_DIFF_LINES:-80}")"$'\n'
    done
    if [ -z "$newsteps" ]; then
        NKNOWN=$((NKNOWN + 1)); echo "KNOWN $name"
    else
        DIFFS+=("$name"); echo "DIFF  $name (new in steps$newsteps)"
    fi
    printf '%s' "$report"
done

echo "$NSEQ sequences, $NSAME identical, $NKNOWN known differences (docs/cluster.md), ${#DIFFS[@]} new differences"
[ "$HARNESS_FAILS" -ne 0 ] && exit 1
if [ ${#DIFFS[@]} -ne 0 ] || { [ -n "${CONF_STRICT:-}" ] && [ "$NKNOWN" -ne 0 ]; }; then
    [ ${#DIFFS[@]} -ne 0 ] && echo "new differences: ${DIFFS[*]}"
    exit 1
fi
exit 0
