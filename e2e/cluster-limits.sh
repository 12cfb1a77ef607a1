#!/usr/bin/env bash
# cluster-limits.sh - the embedded API server's resource limits against the
# real binary, for what needs sockets (issue 10): bodies over 3 MiB get 413
# unread, objects over etcd's 1.5 MiB get kube-apiserver's 500, a request
# without a token gets 401 before its body is read, one client address
# cannot hold every connection, idle connections and slow TLS handshakes
# are closed while quiet watches live on, many watches on large objects
# get their initial events while the server keeps answering, and SIGTERM
# stops a busy server at once.
#
# Usage: e2e/cluster-limits.sh PATH_TO_cueue
# Needs: curl, kubectl.
set -u
. "$(dirname "$0")/lib.sh"
e2e_init "$@" curl kubectl

TOK=limits-token
echo "$TOK" >"$TMP/tokens"
start_cluster --token-file "$TMP/tokens"
HOSTPORT=${API#http://}
PORT=${HOSTPORT##*:}
AUTH="Authorization: Bearer $TOK"
c() { curl -s --max-time 30 "$@"; }

# big FILE BYTES NAME: a Lease body with one value of BYTES bytes (a kind
# with no size rule of its own: a ConfigMap's data is refused over 1 MiB
# before the storage limit is reached)
big() {
    { printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s"},"spec":{"holderIdentity":"' "$3"; head -c "$2" /dev/zero | tr '\0' x; printf '"}}'; } >"$1"
}
CM=$API/apis/coordination.k8s.io/v1/namespaces/default/leases

# ---- M1: request bodies over 3 MiB: 413 as from kube-apiserver
big "$TMP/4m.json" $((4 << 20)) four
out=$(c -o "$TMP/413.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    --data-binary @"$TMP/4m.json" "$CM")
check "a 4 MiB body gets 413" "got $out: $(head -c 300 "$TMP/413.json")" \
    grep -q '"message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413' "$TMP/413.json"

# ---- M1: objects over etcd's 1.5 MiB: 500 "etcdserver: request is too large"
big "$TMP/1600k.json" 1600000 toolarge
out=$(c -o "$TMP/500.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    --data-binary @"$TMP/1600k.json" "$CM")
check "a 1.6 MB Lease gets 500 from the storage limit" "got $out: $(head -c 300 "$TMP/500.json")" \
    grep -q '"message":"etcdserver: request is too large","code":500' "$TMP/500.json"
big "$TMP/1400k.json" 1400000 fits
out=$(c -o /dev/null -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    --data-binary @"$TMP/1400k.json" "$CM")
check "a 1.4 MB Lease is stored" "got $out" [ "$out" = 201 ]

# ---- M2: no token: 401 before the body is read
head -c $((60 << 20)) /dev/zero >"$TMP/60m"
out=$(c -o "$TMP/401.json" -w '%{http_code} %{size_upload}' -H 'Content-Type: application/json' \
    --data-binary @"$TMP/60m" "$CM")
code=${out% *} up=${out#* }
check "a 60 MB POST without a token gets 401 without being sent" "got $out" \
    test "$code" = 401 -a "$up" -lt $((4 << 20))
out=$(c -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary '{"metadata":{"name":"x"}}' "$CM")
check "a small POST without a token gets 401" "got $out" [ "$out" = 401 ]

# ---- H6: one client address cannot hold every connection (default 256 per
# address): 256 idle connections from 127.0.0.1, the next one is closed at
# once, and a client on another address is served
fds=()
for i in $(seq 1 256); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" && fds+=("$fd")
done
exec {extra}<>"/dev/tcp/127.0.0.1/$PORT"
read -r -t 3 -u "$extra" _; rc=$?
check "connection 257 from one address is closed at once" "read status $rc (not EOF)" [ "$rc" = 1 ]
exec {extra}>&-
out=$(c -o /dev/null -w '%{http_code}' --interface 127.0.0.2 -H "$AUTH" "$CM?limit=1")
check "another address is served while one holds 256 connections" "got $out" [ "$out" = 200 ]
for fd in "${fds[@]}"; do exec {fd}>&-; done

# ---- SIGTERM while busy: 100 watches, an upload in progress, an idle connection
fds=()
for i in $(seq 1 100); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || continue
    fds+=("$fd")
    printf 'GET /api/v1/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n' "$AUTH" >&"$fd"
done
exec {up}<>"/dev/tcp/127.0.0.1/$PORT"
printf 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{"metadata":{"name":"slow"},"data":{"a":"' "$AUTH" >&"$up"
head -c 100000 /dev/zero | tr '\0' x >&"$up"
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$CL_PID"
for i in $(seq 1 50); do kill -0 "$CL_PID" 2>/dev/null || break; sleep 0.1; done
ms=$((($(date +%s%N) - t0) / 1000000))
check "SIGTERM stops a busy server within 2 s" "still running after ${ms} ms" \
    test "$ms" -lt 2000 -a ! -d "/proc/$CL_PID"
wait "$CL_PID" 2>/dev/null
CL_PID=""
for fd in "${fds[@]}"; do exec {fd}>&-; done
exec {up}>&-

# ---- H6: idle connections and slow TLS handshakes are closed, quiet
# watches live on (a second server: --tls, --idle-timeout 2)
rm -f "$KC"
start_cluster --tls --idle-timeout 2
HOSTPORT=${API#https://}
PORT=${HOSTPORT##*:}
exec {idle}<>"/dev/tcp/127.0.0.1/$PORT"
t0=$SECONDS
read -r -t 8 -u "$idle" _; rc=$?
check "a connection that never starts its TLS handshake is closed after the idle timeout" \
    "read status $rc after $((SECONDS - t0)) s" [ "$rc" = 1 ]
exec {idle}>&-
k get configmaps -n default --watch -o name >"$TMP/watch.out" 2>"$TMP/watch.err" &
WPID=$!
sleep 5    # quiet for longer than the idle timeout
k create configmap late -n default >/dev/null
wait_for 10 "a watch quiet for longer than the idle timeout still gets events" \
    grep -q 'configmap/late' "$TMP/watch.out"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null

# ---- H7 (small): 50 watches from resourceVersion 0 with a field selector
# over 3 Leases of 1.4 MB; all get their initial event, and the server
# answers other requests meanwhile
k create namespace big >/dev/null
for i in 0 1 2; do
    big "$TMP/cm$i.json" 1400000 "cm-$i"
    k create -n big -f "$TMP/cm$i.json" >/dev/null || fail "create cm-$i" "refused"
done
CA=$TMP/ca.pem
sed -n 's/^ *certificate-authority-data: *//p' "$KC" | head -n 1 | base64 -d >"$CA"
pids=()
t0=$(date +%s%N)
for i in $(seq 1 50); do
    curl -s -N --cacert "$CA" --max-time 60 \
        "$API/apis/coordination.k8s.io/v1/namespaces/big/leases?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dcm-2" \
        >"$TMP/w$i.out" &
    pids+=($!)
done
worst=0
all_in() {
    local i
    for i in $(seq 1 50); do grep -q '"name":"cm-2"' "$TMP/w$i.out" 2>/dev/null || return 1; done
}
while [ $((($(date +%s%N) - t0) / 1000000)) -lt 30000 ]; do
    a=$(date +%s%N)
    curl -s -o /dev/null --cacert "$CA" --max-time 30 "$API/api/v1/namespaces/default/configmaps?limit=1"
    d=$((($(date +%s%N) - a) / 1000000))
    [ "$d" -gt "$worst" ] && worst=$d
    all_in && break
    sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "      (50 watches: all initial events in ${ms} ms, slowest other request ${worst} ms)"
check "50 watches on large objects all get their initial event" "not within 30 s" all_in
check "the server answers other requests meanwhile" "slowest took ${worst} ms" [ "$worst" -lt 3000 ]
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
wait "${pids[@]}" 2>/dev/null

dump() {
    show "$TMP/cluster.log" "cluster log"
}
e2e_finish
