#!/usr/bin/env bash
# controller-http.sh - end to end: the controller's HTTP servers against
# hostile clients, and its secure metrics serving, with the real binaries.
#
# `cueue cluster --tls --token-file` with three users: the kubeconfig's
# token (an administrator), prometheus (group system:monitoring: may get
# /metrics) and nobody (no rights).
#
# 1. A controller with its health and metrics servers on loopback (the
#    default: plain HTTP, no authentication, as e2e/prometheus.sh uses it).
#    On each port (issue 10, H5): 200 clients connect (a third send half a
#    request, a third a whole one), wait 0.5 s and close; /healthz (or
#    /metrics) must then answer within 1 s and no socket of the port may
#    stay in CLOSE-WAIT; twice. Then 80 slow clients send their headers a
#    byte at a time: the next client is answered once they time out (at
#    most 5 s after their last byte), and after they leave, within 1 s.
#    70 clients that send a byte every second are shut out when their
#    headers are not in after 10 s. Before the fix the servers never
#    answered again after the first round.
# 2. A controller with --metrics-secure on loopback (a self-signed
#    certificate generated at start): /metrics without a token 401, a bad
#    token 401, nobody 403, prometheus 200; /debug/pending prometheus 403,
#    the administrator 200; health probes stay plain and open; 20 scrapes
#    cost no review (the log counts the reviews at exit); H5's clients on
#    the HTTPS port too.
# 3. When openssl and prometheus are installed: a controller on a non-
#    loopback address (secure by default) with --metrics-cert-path; curl
#    verifies the certificate; our own Prometheus scrapes it over HTTPS
#    with prometheus's token file (up 1) and with nobody's (up 0, 403).
#
# Usage: e2e/controller-http.sh PATH_TO_cueue
# Needs: kubectl, curl, timeout; openssl, prometheus and jq for part 3.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
e2e_init "$@" kubectl curl
# the clients below write to sockets the server may have closed: EPIPE,
# not the end of the script
trap '' PIPE

dump() {
    local f
    for f in "$TMP"/ctrl*.log; do show "$f" "$(basename "$f")"; done
    show "$TMP/cluster.log" "cluster log" 20
    show "$TMP/prometheus.log" "prometheus log" 20
}

ADMIN=admin-$RANDOM$RANDOM PROMTOK=prom-$RANDOM$RANDOM NOBODY=nobody-$RANDOM$RANDOM
cat >"$TMP/tokens.csv" <<EOF
$ADMIN
$PROMTOK,prometheus,uid-prometheus,"system:monitoring"
$NOBODY,nobody,uid-nobody
EOF

start_cluster --tls --token-file "$TMP/tokens.csv"
apply_crds

# the review APIs through kubectl (discovery, then a create)
got=$(printf 'apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {token: %s}\n' "$PROMTOK" |
    k create --validate=false -f - -o jsonpath='{.status.authenticated} {.status.user.username}' 2>&1)
[ "$got" = "true prometheus" ] && pass "kubectl create TokenReview: $got" \
    || fail "kubectl create TokenReview" "$got"
got=$(printf 'apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec: {user: nobody, nonResourceAttributes: {path: /metrics, verb: get}}\n' |
    k create --validate=false -f - -o jsonpath='{.status.allowed}' 2>&1)
[ "$got" = "false" ] && pass "kubectl create SubjectAccessReview (nobody, get /metrics): not allowed" \
    || fail "kubectl create SubjectAccessReview" "$got"

# addr_of LOG WHAT: the address the controller logged for "WHAT on ADDR (".
addr_of() {
    local i a
    for i in $(seq 1 100); do
        a=$(sed -n "s/.*$2 on \\([^ ]*\\) (.*/\\1/p" "$1" | head -n 1)
        [ -n "$a" ] && { echo "$a"; return 0; }
        sleep 0.1
    done
    return 1
}

# close_wait PORT: sockets of local port PORT in state CLOSE-WAIT (08).
close_wait() {
    awk -v p="$(printf '%04X' "$1")" 'NR > 1 { split($2, l, ":"); if (l[2] == p && $4 == "08") n++ }
        END { print n + 0 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# answers_within SECS CURL_ARGS...: curl gets a 200 within SECS seconds.
answers_within() {
    local secs=$1; shift
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time "$secs" "$@")" = 200 ]
}

# come_and_go DESC PORT CURL_ARGS...: H5's clients, twice; then the server
# answers CURL_ARGS within 1 s and no CLOSE-WAIT socket remains.
come_and_go() {
    local desc=$1 port=$2 round i fd fds t0 ms cw; shift 2
    for round in 1 2; do
        fds=()
        for i in $(seq 0 199); do
            exec {fd}<>"/dev/tcp/127.0.0.1/$port" || { fail "$desc: connect $i" "refused"; break; }
            case $((i % 3)) in
                1) printf 'GET /healthz HTTP/1.1\r\nHo' >&"$fd" 2>/dev/null ;;
                2) printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' >&"$fd" 2>/dev/null ;;
            esac
            fds+=("$fd")
        done
        sleep 0.5
        for fd in "${fds[@]}"; do exec {fd}>&-; done
        t0=$(date +%s%N)
        if answers_within 1 "$@"; then
            ms=$((($(date +%s%N) - t0) / 1000000))
            pass "$desc, round $round: 200 clients came and went, then answered in $ms ms"
        else
            fail "$desc, round $round" "no answer within 1 s after 200 clients came and went"
            return 1
        fi
        poll 2 test "$(close_wait "$port")" = 0
        cw=$(close_wait "$port")
        [ "$cw" = 0 ] && pass "$desc, round $round: no socket left in CLOSE-WAIT" \
            || fail "$desc, round $round" "$cw sockets in CLOSE-WAIT after 2 s"
    done
}

# slowloris DESC PORT CURL_ARGS...: 80 clients send headers a byte at a time.
slowloris() {
    local desc=$1 port=$2 i k fd fds t0 ms cw
    local req='GET /healthz HTTP/1.1\r\nX-Slow: aaaa'; shift 2
    fds=()
    for i in $(seq 1 80); do exec {fd}<>"/dev/tcp/127.0.0.1/$port"; fds+=("$fd"); done
    for k in $(seq 0 9); do
        for fd in "${fds[@]}"; do printf '%s' "${req:$k:1}" >&"$fd" 2>/dev/null; done
        sleep 0.05
    done
    t0=$(date +%s%N)
    if answers_within 10 "$@"; then
        ms=$((($(date +%s%N) - t0) / 1000000))
        pass "$desc: answered in $ms ms while 80 slow clients were connected"
    else
        fail "$desc" "no answer within 10 s while 80 slow clients were connected"
    fi
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    if answers_within 1 "$@"; then pass "$desc: answered within 1 s after the slow clients left"
    else fail "$desc" "no answer within 1 s after the slow clients left"; fi
    poll 2 test "$(close_wait "$port")" = 0
    cw=$(close_wait "$port")
    [ "$cw" = 0 ] && pass "$desc: no socket left in CLOSE-WAIT" \
        || fail "$desc" "$cw sockets in CLOSE-WAIT after 2 s"
}

# persistent_slowloris DESC PORT CURL_ARGS...: 70 clients keep sending a
# header byte every second (MHD's idle timeout never fires): they are shut
# out 10 s after they connected, and the next client is answered then.
persistent_slowloris() {
    local desc=$1 port=$2 i fd fds t0 ms trickler; shift 2
    fds=()
    for i in $(seq 1 70); do exec {fd}<>"/dev/tcp/127.0.0.1/$port"; fds+=("$fd"); done
    (
        for i in $(seq 1 25); do
            for fd in "${fds[@]}"; do printf 'X' >&"$fd" 2>/dev/null; done
            sleep 1
        done
    ) &
    trickler=$!
    t0=$(date +%s%N)
    if answers_within 14 "$@"; then
        ms=$((($(date +%s%N) - t0) / 1000000))
        pass "$desc: answered in $ms ms while 70 clients trickled their headers"
    else
        fail "$desc" "no answer within 14 s while 70 clients trickled their headers"
    fi
    stop_pid "$trickler"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
}

# ---- 1. loopback defaults: plain HTTP, open

start_controller ctrl1 -v 1 --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0
CT1=$CT_PID
HADDR=$(addr_of "$TMP/ctrl1.log" "health probes") || { fail "health address" "not logged"; e2e_finish; }
MADDR=$(addr_of "$TMP/ctrl1.log" metrics) || { fail "metrics address" "not logged"; e2e_finish; }
grep -q "metrics on $MADDR (/metrics)" "$TMP/ctrl1.log" \
    && pass "loopback metrics are plain HTTP by default" \
    || fail "loopback metrics" "$(grep 'metrics on' "$TMP/ctrl1.log")"
wait_for 30 "controller 1 healthy" answers_within 2 "http://$HADDR/healthz"
wait_for 30 "loopback /metrics open without a token (as e2e/prometheus.sh scrapes it)" \
    answers_within 2 "http://$MADDR/metrics"

come_and_go "health port" "${HADDR##*:}" "http://$HADDR/healthz"
come_and_go "metrics port" "${MADDR##*:}" "http://$MADDR/metrics"
slowloris "health port, slow clients" "${HADDR##*:}" "http://$HADDR/healthz"
persistent_slowloris "health port, persistent slow clients" "${HADDR##*:}" "http://$HADDR/healthz"
answers_within 2 "http://$HADDR/readyz" && pass "/readyz still answers 200" \
    || fail "/readyz" "not 200 after the clients"
kill -0 "$CT1" 2>/dev/null && pass "controller 1 still running" || fail "controller 1" "exited"
stop_pid "$CT1" && pass "controller 1 stopped (exit 0)" || fail "controller 1 stopped" "exit $?"

# ---- 2. --metrics-secure on loopback: generated certificate, reviews

start_controller ctrl2 -v 1 --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0 \
    --metrics-secure
CT2=$CT_PID
HADDR=$(addr_of "$TMP/ctrl2.log" "health probes") || { fail "health address" "not logged"; e2e_finish; }
MADDR=$(addr_of "$TMP/ctrl2.log" metrics) || { fail "metrics address" "not logged"; e2e_finish; }
grep -q "metrics on $MADDR (/metrics; HTTPS with a self-signed certificate, authenticated and authorized)" \
    "$TMP/ctrl2.log" && pass "--metrics-secure: HTTPS with a generated certificate" \
    || fail "--metrics-secure" "$(grep 'metrics on' "$TMP/ctrl2.log")"
wait_for 30 "controller 2 ready (/readyz, plain HTTP, no token)" answers_within 2 "http://$HADDR/readyz"

# code PATH [TOKEN]: the status of a GET of the secure metrics server.
code() {
    curl -sk -o /dev/null -w '%{http_code}' --max-time 10 ${2:+-H "Authorization: Bearer $2"} \
        "https://$MADDR$1"
}
expect_code() {
    local got; got=$(code "$2" "${3:-}")
    [ "$got" = "$4" ] && pass "$1: $4" || fail "$1" "expected $4, got $got"
}
expect_code "/metrics without a token" /metrics "" 401
expect_code "/metrics with an unknown token" /metrics "bad-$RANDOM" 401
expect_code "/metrics, user nobody" /metrics "$NOBODY" 403
expect_code "/metrics, user prometheus (system:monitoring)" /metrics "$PROMTOK" 200
for i in $(seq 1 20); do code /metrics "$PROMTOK" >>"$TMP/scrapes"; echo >>"$TMP/scrapes"; done
[ "$(grep -c '^200$' "$TMP/scrapes")" = 20 ] && pass "20 more scrapes: 200" \
    || fail "20 more scrapes" "$(sort "$TMP/scrapes" | uniq -c | tr '\n' ' ')"
expect_code "/debug/pending, user prometheus" /debug/pending "$PROMTOK" 403
expect_code "/debug/explain, user nobody" "/debug/explain?workload=default/x" "$NOBODY" 403
got=$(code /debug/pending "$ADMIN")
[ "$got" = 200 ] || [ "$got" = 503 ] && pass "/debug/pending, administrator: $got (passed the gate)" \
    || fail "/debug/pending, administrator" "got $got"
body=$(curl -sk --max-time 5 "https://$MADDR/metrics")
[ "$body" = "Unauthorized" ] && pass "401 body 'Unauthorized'" || fail "401 body" "'$body'"
body=$(curl -sk --max-time 5 -H "Authorization: Bearer $NOBODY" "https://$MADDR/metrics")
[ "$body" = "Authorization denied for user nobody" ] && pass "403 body names the user" \
    || fail "403 body" "'$body'"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://$MADDR/metrics")" != 200 ] \
    && pass "no plain HTTP on the secure port" || fail "plain HTTP" "answered 200"
answers_within 2 "http://$HADDR/healthz" && pass "health probes stay plain HTTP without a token" \
    || fail "health probes" "/healthz not 200"
come_and_go "secure metrics port" "${MADDR##*:}" -k -H "Authorization: Bearer $PROMTOK" \
    "https://$MADDR/metrics"
stop_pid "$CT2" && pass "controller 2 stopped (exit 0)" || fail "controller 2 stopped" "exit $?"
# the reviews: unknown token 1 (TokenReview), nobody 2 (TokenReview and
# SubjectAccessReview for /metrics) + 1 (/debug/explain), prometheus 2 +
# 1 (/debug/pending), administrator 2; the 20 scrapes, the bodies and
# H5's scrapes come from the caches
if grep -q "metrics authentication: 9 reviews" "$TMP/ctrl2.log"; then
    pass "reviews are cached: 9 reviews for all the requests above"
else
    fail "review cache" "$(grep 'metrics authentication' "$TMP/ctrl2.log" || echo 'no count logged')"
fi

# ---- 3. not loopback: secure by default, certificate files, Prometheus

if ! command -v openssl >/dev/null 2>&1; then
    echo "SKIP  certificate files and Prometheus: openssl is not installed"
    e2e_finish
fi
# a non-loopback address of this host, or every address (":0")
IP=$(hostname -I 2>/dev/null | awk '{print $1}')
case "$IP" in *.*.*.*) ;; *) IP="" ;; esac
mkdir -p "$TMP/certs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=cueue-metrics \
    -addext "subjectAltName=IP:127.0.0.1${IP:+,IP:$IP}" -keyout "$TMP/certs/key.pem" \
    -out "$TMP/certs/cert.pem" >/dev/null 2>&1 || { fail "openssl" "could not make a certificate"; e2e_finish; }
start_controller ctrl3 -v 1 --health-probe-bind-address 0 --metrics-bind-address "${IP:-}:0" \
    --metrics-cert-path "$TMP/certs" --metrics-cert-name cert.pem --metrics-cert-key key.pem
MADDR=$(addr_of "$TMP/ctrl3.log" metrics) || { fail "metrics address" "not logged"; e2e_finish; }
grep -q "metrics on $MADDR (/metrics; HTTPS, authenticated and authorized)" "$TMP/ctrl3.log" \
    && pass "${IP:-every address}: secure by default, the given certificate" \
    || fail "non-loopback default" "$(grep 'metrics on' "$TMP/ctrl3.log")"
TARGET=${IP:-127.0.0.1}:${MADDR##*:}
wait_for 30 "curl verifies the given certificate (prometheus: 200)" answers_within 3 \
    --cacert "$TMP/certs/cert.pem" -H "Authorization: Bearer $PROMTOK" "https://$TARGET/metrics"
if ! command -v prometheus >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
    echo "SKIP  Prometheus over HTTPS: prometheus or jq is not installed"
    e2e_finish
fi
printf '%s' "$PROMTOK" >"$TMP/prom.token"
printf '%s' "$NOBODY" >"$TMP/nobody.token"
mkdir -p "$TMP/prom/data"
cat >"$TMP/prom/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: cueue
    scheme: https
    authorization: {credentials_file: $TMP/prom.token}
    tls_config: {ca_file: $TMP/certs/cert.pem}
    static_configs: [{targets: ['$TARGET']}]
  - job_name: cueue-nobody
    scheme: https
    authorization: {credentials_file: $TMP/nobody.token}
    tls_config: {ca_file: $TMP/certs/cert.pem}
    static_configs: [{targets: ['$TARGET']}]
YAML
PROM=""
for _ in 1 2 3; do
    PP=$((20000 + RANDOM % 40000))
    prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
        --web.listen-address="127.0.0.1:$PP" --log.level=warn 2>>"$TMP/prometheus.log" &
    PROM_PID=$!
    PROM=http://127.0.0.1:$PP
    ready() { kill -0 "$PROM_PID" 2>/dev/null && curl -sf --max-time 2 "$PROM/-/ready" >/dev/null; }
    poll 60 ready && break
    stop_pid "$PROM_PID"
    PROM=""
done
[ -n "$PROM" ] || { fail "prometheus started" "see its log"; e2e_finish; }
upv() {
    curl -sfG --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=up{job=\"$1\"}" |
        jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}
up1() { [ "$(upv cueue)" = 1 ]; }
up0() { [ "$(upv cueue-nobody)" = 0 ]; }
poll 30 up1 && pass "Prometheus scrapes over HTTPS with prometheus's token file: up{job=cueue} = 1" \
    || fail "up{job=cueue}" "'$(upv cueue)'"
poll 30 up0 && pass "up{job=cueue-nobody} = 0 (nobody gets 403)" \
    || fail "up{job=cueue-nobody}" "'$(upv cueue-nobody)'"
stop_pid "$PROM_PID"

e2e_finish
