#!/usr/bin/env bash
# A throwaway single-member etcd 3.4 for integration tests (toolchain.md §4).
#
#   etcd-cluster.sh start  <dir>   start etcd on free ports of 127.0.0.1, write <dir>/etcd.env
#   etcd-cluster.sh stop   <dir>   stop it (TERM, then KILL) and remove <dir>
#   etcd-cluster.sh halt   <dir>   stop the server but keep <dir> (data, ports, env): an outage
#   etcd-cluster.sh resume <dir>   start the halted server again, same ports and data
#   etcd-cluster.sh status <dir>   exit 0 when the server of <dir> answers /health
#
# <dir>/etcd.env (KEY=value, sourceable by sh):
#   RT_ETCD_ENDPOINTS        http://127.0.0.1:<client port> (the value for ETCD_ENDPOINTS)
#   RT_ETCD_CLIENT_PORT RT_ETCD_PEER_PORT RT_ETCD_DATA RT_ETCD_LOG
#
# Idempotent: `start` on a directory left by a crashed run stops that server and starts afresh;
# `stop` on a missing directory does nothing. Only directories this script made (marker inside)
# are ever removed, and only a process that is an etcd of this very data directory is signalled.
#
# With RT_ETCD_SECURE=1, `start` makes a secured etcd: https only, client certificates required
# (--client-cert-auth; the client certificate has no common name, since etcd's JSON gateway
# refuses one when authentication is on), and authentication enabled with a user `realtime`
# whose role may read and write only keys under RT_ETCD_SECURE_PREFIX (default /qtrealtime/).
# Simple tokens live RT_ETCD_AUTH_TOKEN_TTL seconds (default 300). etcd.env then also has
#   RT_ETCD_CA_FILE RT_ETCD_CERT_FILE RT_ETCD_KEY_FILE   the CA, the client certificate and key
#   RT_ETCD_USER RT_ETCD_PASSWORD RT_ETCD_PREFIX          the restricted user and its prefix
#
# Environment: RT_ETCD_BIN (default: etcd on PATH), RT_ETCD_PORT_RANGE (default 20000-32000).
# RT_ETCD_LISTEN_ADDRESS (e.g. a network namespace's address, tests/support/netns/netns-bed.sh):
# etcd serves clients there too (127.0.0.1 stays for this script's own checks), advertises that
# address, its certificate names it, and RT_ETCD_ENDPOINTS points at it.
set -euo pipefail

ETCD=${RT_ETCD_BIN:-$(command -v etcd || true)}
LISTEN_ADDRESS=${RT_ETCD_LISTEN_ADDRESS:-}
ADVERTISED_HOST=${LISTEN_ADDRESS:-127.0.0.1}
MARKER=.rt-etcd-cluster
START_TIMEOUT=20
ATTEMPTS=8

die() {
    echo "etcd-cluster: $*" >&2
    exit 1
}
note() { echo "etcd-cluster: $*" >&2; }
usage() {
    echo "usage: $0 start|stop|halt|resume|status <dir>" >&2
    exit 2
}

[ $# -eq 2 ] || usage
ACTION=$1
DIR=$2
case "$DIR" in
    /*) ;;
    *) DIR="$PWD/$DIR" ;;
esac
DIR=${DIR%/}
[ -n "$DIR" ] && [ "$DIR" != / ] || die "refusing to use / as the etcd directory"

DATA="$DIR/data"
LOG="$DIR/etcd.log"
PIDFILE="$DIR/etcd.pid"

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

random_port() {
    local range=${RT_ETCD_PORT_RANGE:-20000-32000} low high
    low=${range%-*}
    high=${range#*-}
    echo $((low + (RANDOM * 32768 + RANDOM) % (high - low + 1)))
}

# Is pid a live etcd of our data directory?
is_our_etcd() {
    local pid=$1 cmdline
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    case "$cmdline" in
        *etcd*"$DATA"*) return 0 ;;
        *) return 1 ;;
    esac
}

healthy() {
    if [ -f "$DIR/tls/ca.crt" ]; then
        curl -fsS -m 1 --cacert "$DIR/tls/ca.crt" --cert "$DIR/tls/client.crt" \
            --key "$DIR/tls/client.key" "https://127.0.0.1:$1/health" 2>/dev/null \
            | grep -q '"health":"true"'
        return
    fi
    curl -fsS -m 1 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"health":"true"'
}

# The CA, etcd's certificate (127.0.0.1, localhost; clientAuth too: etcd's JSON gateway dials
# its own gRPC server with it) and a client certificate without a CN.
make_certificates() {
    local tls="$DIR/tls"
    mkdir -p "$tls"
    (
        cd "$tls"
        openssl ecparam -name prime256v1 -genkey -noout -out ca.key
        openssl req -x509 -new -key ca.key -sha256 -days 30 -subj '/CN=etcd-cluster test CA' \
            -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign' -out ca.crt
        openssl ecparam -name prime256v1 -genkey -noout -out server.key
        openssl req -new -key server.key -subj '/CN=etcd' -out server.csr
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1%s\nextendedKeyUsage=serverAuth,clientAuth\n' \
            "${LISTEN_ADDRESS:+,IP:$LISTEN_ADDRESS}" >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -sha256 -days 30 \
            -extfile server.ext -out server.crt
        openssl ecparam -name prime256v1 -genkey -noout -out client.key
        openssl req -new -key client.key -subj '/O=qtrealtime node' -out client.csr
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 3 -sha256 -days 30 \
            -extfile client.ext -out client.crt
    ) >/dev/null 2>&1 || die "could not make the test certificates (openssl)"
    chmod 0600 "$tls"/*.key
}

# Users, the restricted role, then authentication on (etcdctl over the client certificate).
enable_auth() {
    local client=$1 prefix=${RT_ETCD_SECURE_PREFIX:-/qtrealtime/}
    local ctl=(etcdctl --endpoints "https://127.0.0.1:$client" --cacert "$DIR/tls/ca.crt"
        --cert "$DIR/tls/client.crt" --key "$DIR/tls/client.key")
    {
        "${ctl[@]}" user add root:etcd-root-password
        "${ctl[@]}" user grant-role root root
        "${ctl[@]}" role add realtime
        "${ctl[@]}" role grant-permission realtime --prefix=true readwrite "$prefix"
        "${ctl[@]}" user add realtime:etcd-realtime-password
        "${ctl[@]}" user grant-role realtime realtime
        "${ctl[@]}" auth enable
    } >>"$LOG" 2>&1 || die "could not enable authentication (log: $LOG)"
    echo "$prefix" >"$DIR/secure"
}

# Stops the server of <dir>, if any; never fails.
halt_server() {
    local pid i
    [ -f "$PIDFILE" ] || return 0
    pid=$(cat "$PIDFILE" 2>/dev/null || true)
    if is_our_etcd "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            is_our_etcd "$pid" || break
            sleep 0.1
        done
        if is_our_etcd "$pid"; then
            note "etcd $pid did not stop; killing it"
            kill -KILL "$pid" 2>/dev/null || true
            for i in $(seq 1 50); do
                is_our_etcd "$pid" || break
                sleep 0.1
            done
        fi
    fi
    rm -f "$PIDFILE"
}

teardown() {
    [ -e "$DIR" ] || return 0
    if [ ! -f "$DIR/$MARKER" ]; then
        if [ -d "$DIR" ] && [ -z "$(ls -A "$DIR")" ]; then
            rmdir -- "$DIR"
            return 0
        fi
        die "$DIR exists but was not made by etcd-cluster.sh (no $MARKER); not touching it"
    fi
    halt_server
    rm -rf -- "$DIR"
}

# Launches etcd on the ports in $DIR/ports, detached (its own session, output to the log, so
# that ctest does not wait for it), and waits until it is healthy. Returns 1 if it did not start.
launch() {
    local client peer pid i
    read -r client peer <"$DIR/ports"
    local scheme=http secure=()
    if [ -f "$DIR/tls/ca.crt" ]; then
        scheme=https
        secure=(--cert-file "$DIR/tls/server.crt" --key-file "$DIR/tls/server.key"
            --client-cert-auth --trusted-ca-file "$DIR/tls/ca.crt"
            --auth-token-ttl "${RT_ETCD_AUTH_TOKEN_TTL:-300}")
    fi
    setsid "$ETCD" --name rt-test --data-dir "$DATA" --logger=zap --log-level=warn \
        --listen-client-urls "$scheme://127.0.0.1:$client${LISTEN_ADDRESS:+,$scheme://$LISTEN_ADDRESS:$client}" \
        --advertise-client-urls "$scheme://$ADVERTISED_HOST:$client" "${secure[@]}" \
        --listen-peer-urls "http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "rt-test=http://127.0.0.1:$peer" --initial-cluster-state new \
        </dev/null >>"$LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDFILE"
    for i in $(seq 1 $((START_TIMEOUT * 10))); do
        if healthy "$client"; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    halt_server
    return 1
}

write_env() {
    local client peer tmp="$DIR/etcd.env.tmp"
    read -r client peer <"$DIR/ports"
    if [ -f "$DIR/secure" ]; then
        printf '%s=%q\n' RT_ETCD_ENDPOINTS "https://$ADVERTISED_HOST:$client" \
            RT_ETCD_CA_FILE "$DIR/tls/ca.crt" RT_ETCD_CERT_FILE "$DIR/tls/client.crt" \
            RT_ETCD_KEY_FILE "$DIR/tls/client.key" RT_ETCD_USER realtime \
            RT_ETCD_PASSWORD etcd-realtime-password RT_ETCD_PREFIX "$(cat "$DIR/secure")" >"$tmp"
    else
        printf '%s=%q\n' RT_ETCD_ENDPOINTS "http://$ADVERTISED_HOST:$client" >"$tmp"
    fi
    printf '%s=%q\n' RT_ETCD_CLIENT_PORT "$client" \
        RT_ETCD_PEER_PORT "$peer" RT_ETCD_DATA "$DATA" RT_ETCD_LOG "$LOG" >>"$tmp"
    mv -f "$tmp" "$DIR/etcd.env"
}

start() {
    [ -n "$ETCD" ] && [ -x "$ETCD" ] || die "etcd not found; install the Debian package etcd-server or set RT_ETCD_BIN"
    command -v curl >/dev/null || die "curl is needed to check etcd's health"
    teardown
    mkdir -p -- "$DIR"
    touch "$DIR/$MARKER"
    local attempt client peer
    for attempt in $(seq 1 "$ATTEMPTS"); do
        client=$(random_port)
        peer=$(random_port)
        if [ "$client" = "$peer" ] || port_in_use "$client" || port_in_use "$peer"; then
            continue
        fi
        echo "$client $peer" >"$DIR/ports"
        rm -rf -- "$DATA"
        if [ -n "${RT_ETCD_SECURE:-}" ] && [ ! -f "$DIR/tls/ca.crt" ]; then
            make_certificates
        fi
        if launch; then
            if [ -n "${RT_ETCD_SECURE:-}" ]; then
                enable_auth "$client"
            fi
            write_env
            echo "etcd-cluster: etcd $("$ETCD" --version | awk 'NR==1{print $3}') on $ADVERTISED_HOST:$client, env file $DIR/etcd.env"
            return 0
        fi
        if grep -q 'address already in use' "$LOG" 2>/dev/null; then
            note "port $client or $peer was taken (attempt $attempt of $ATTEMPTS); trying others"
            : >"$LOG"
            continue
        fi
        tail -n 30 "$LOG" >&2 || true
        die "etcd did not become healthy within ${START_TIMEOUT}s (log above: $LOG)"
    done
    die "found no free ports in $ATTEMPTS attempts"
}

resume() {
    [ -f "$DIR/$MARKER" ] && [ -f "$DIR/ports" ] || die "no halted etcd in $DIR"
    if [ -f "$PIDFILE" ] && is_our_etcd "$(cat "$PIDFILE")"; then
        return 0
    fi
    launch || {
        tail -n 30 "$LOG" >&2 || true
        die "etcd did not come back within ${START_TIMEOUT}s (log: $LOG)"
    }
    echo "etcd-cluster: resumed on 127.0.0.1:$(cut -d' ' -f1 "$DIR/ports")"
}

case "$ACTION" in
    start) start ;;
    stop)
        teardown
        echo "etcd-cluster: stopped and removed $DIR"
        ;;
    halt)
        [ -f "$DIR/$MARKER" ] || die "no etcd in $DIR"
        halt_server
        echo "etcd-cluster: halted (data kept in $DATA)"
        ;;
    resume) resume ;;
    status)
        [ -f "$DIR/ports" ] || die "no etcd in $DIR"
        healthy "$(cut -d' ' -f1 "$DIR/ports")" || die "the etcd of $DIR does not answer"
        echo "etcd-cluster: running on 127.0.0.1:$(cut -d' ' -f1 "$DIR/ports")"
        ;;
    *) usage ;;
esac
