# lib.sh - shell helpers of the scripts that run Kueue's manager outside a
# cluster (kueue-perf-manager, bench/diff-kueue.sh); sourced, not run.

# selfsigned DIR CN: a throwaway key pair for localhost in
# DIR/tls.{crt,key}, kept when it is there already
selfsigned() {
    [ -s "$1/tls.crt" ] && [ -s "$1/tls.key" ] && return 0
    mkdir -p "$1" && openssl req -x509 -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
        -days 3650 -subj "/CN=$2" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$1/tls.key" -out "$1/tls.crt" 2>/dev/null
}

# free_port: a TCP port below Linux's ephemeral range that nobody listens
# on now (a refused connection)
free_port() {
    local p i
    for i in $(seq 50); do
        p=$((20000 + RANDOM % 12000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}
