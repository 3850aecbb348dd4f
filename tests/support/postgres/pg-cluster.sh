#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for integration tests (see docs: toolchain.md §3, recipe A).
#
#   pg-cluster.sh start  <dir>   create and start a cluster on a free port of 127.0.0.1, write <dir>/pg.env
#   pg-cluster.sh stop   <dir>   stop it (fast, then immediate, then SIGKILL) and remove <dir>
#   pg-cluster.sh status <dir>   exit 0 when the cluster of <dir> accepts connections
#
# The cluster: wal_level=logical, 32 replication slots / WAL senders, fsync off, TCP only (no unix
# socket, so long build paths do not matter). Superuser `postgres` (trust), role `realtime`
# (LOGIN REPLICATION, scram password, member of anon/authenticated/service_role), databases
# `realtime_control` and `tenant_db` owned by realtime, roles anon/authenticated/service_role
# (NOLOGIN) for RLS tests. TLS is on (connections may still choose plaintext): the server's
# certificate names only `localhost` (not 127.0.0.1, so that verify-full can be seen refusing a
# wrong host name) and is issued by a throwaway CA written to <dir>/pg-ca.crt.
#
# <dir>/pg.env (KEY=value, sourceable by sh):
#   PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE        superuser, for psql and friends
#   RT_PG_HOST RT_PG_PORT RT_PG_USER RT_PG_PASSWORD   the realtime role
#   RT_PG_CONTROL_DB RT_PG_TENANT_DB                  its databases
#   RT_PG_SUPERUSER RT_PG_SUPERPASSWORD               superuser again, under our prefix
#   RT_PG_DATA RT_PG_LOG RT_PG_BIN                    where the cluster and its log are
#   RT_PG_SSL_ROOT_CERT                               the CA of the server's certificate
#
# Idempotent: `start` on a directory left by a crashed run stops that cluster and starts afresh;
# `stop` on a missing directory does nothing. As root, initdb/pg_ctl run as the `postgres` user
# (initdb refuses root); when that user cannot reach <dir>, the cluster lives in a temporary
# directory that `stop` removes too. Only directories this script made are ever removed.
#
# Environment: RT_PG_BIN (default /usr/lib/postgresql/15/bin), RT_PG_PORT_RANGE (default 15000-32000).
# RT_PG_LISTEN_ADDRESS (e.g. a network namespace's address, tests/support/netns/netns-bed.sh): the
# cluster listens there too (127.0.0.1 stays for this script's own checks), its certificate names
# that address besides localhost, clients from RT_PG_CLIENT_NET (default the address's /24) must
# use TLS (hostssl, scram), and pg.env names the address as PGHOST and RT_PG_HOST.
set -euo pipefail

PGBIN=${RT_PG_BIN:-/usr/lib/postgresql/15/bin}
LISTEN_ADDRESS=${RT_PG_LISTEN_ADDRESS:-}
CLIENT_NET=${RT_PG_CLIENT_NET:-${LISTEN_ADDRESS%.*}.0/24}
ADVERTISED_HOST=${LISTEN_ADDRESS:-127.0.0.1}
MARKER=.rt-pg-cluster
SUPERUSER=postgres
SUPERPASSWORD=postgres
RT_USER=realtime
RT_PASSWORD=realtime-test-password
START_TIMEOUT=30
ATTEMPTS=8

die() {
    echo "pg-cluster: $*" >&2
    exit 1
}
note() { echo "pg-cluster: $*" >&2; }

usage() {
    echo "usage: $0 start|stop|status <dir>" >&2
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
[ -n "$DIR" ] && [ "$DIR" != / ] || die "refusing to use / as the cluster directory"

IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

# Runs a PostgreSQL server binary as the user that owns the cluster.
as_owner() {
    if [ "$IS_ROOT" -eq 1 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

need_binaries() {
    local missing=() tool
    for tool in initdb pg_ctl postgres psql; do
        [ -x "$PGBIN/$tool" ] || missing+=("$tool")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        die "PostgreSQL 15 server binaries not found in $PGBIN (missing: ${missing[*]}); install the" \
            "Debian package postgresql-15 (scripts/install-deps.sh does) or set RT_PG_BIN"
    fi
    if [ "$IS_ROOT" -eq 1 ]; then
        command -v runuser >/dev/null || die "running as root needs runuser (util-linux) to drop to postgres"
        id postgres >/dev/null 2>&1 || die "running as root needs the system user postgres (package postgresql-15)"
    fi
}

# The cluster base (holding data/ and server.log) recorded in <dir>, or empty.
recorded_base() {
    if [ -f "$DIR/base" ]; then
        cat "$DIR/base"
    fi
}

# Is pid a live postgres postmaster of the data directory $2?
is_our_postmaster() {
    local pid=$1 data=$2 cmdline
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    case "$cmdline" in
        *postgres*"$data"*) return 0 ;;
        *) return 1 ;;
    esac
}

# Stops the cluster whose data directory is $1, harder at each step; never fails. A stale
# postmaster.pid (crashed run, pid perhaps reused since) is left alone: nothing is signalled
# unless the pid is a postgres of this very data directory.
stop_cluster() {
    local data=$1 pid i
    [ -f "$data/postmaster.pid" ] || return 0
    pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)
    is_our_postmaster "$pid" "$data" || return 0
    as_owner "$PGBIN/pg_ctl" -D "$data" -m fast -w -t "$START_TIMEOUT" stop >/dev/null 2>&1 ||
        as_owner "$PGBIN/pg_ctl" -D "$data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
    if is_our_postmaster "$pid" "$data"; then
        note "postmaster $pid did not stop; killing it"
        kill -KILL "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            is_our_postmaster "$pid" "$data" || break
            sleep 0.1
        done
    fi
}

# Removes a directory only when this script made it (marker inside).
remove_ours() {
    local path=$1
    [ -e "$path" ] || return 0
    if [ -f "$path/$MARKER" ]; then
        rm -rf -- "$path"
    else
        die "$path exists but was not made by pg-cluster.sh (no $MARKER); not touching it"
    fi
}

# Stops whatever cluster <dir> holds and removes <dir> (and an out-of-tree base).
teardown() {
    local base
    [ -e "$DIR" ] || return 0
    if [ ! -f "$DIR/$MARKER" ]; then
        if [ -d "$DIR" ] && [ -z "$(ls -A "$DIR")" ]; then
            rmdir -- "$DIR"
            return 0
        fi
        die "$DIR exists but was not made by pg-cluster.sh (no $MARKER); not touching it"
    fi
    base=$(recorded_base)
    if [ -n "$base" ]; then
        stop_cluster "$base/data"
        if [ "$base" != "$DIR/cluster" ]; then
            remove_ours "$base"
        fi
    fi
    rm -rf -- "$DIR"
}

# Could the postgres user create files in $1 (and reach it)?
owner_can_use() {
    [ "$IS_ROOT" -eq 0 ] && return 0
    runuser -u postgres -- test -x "$1" 2>/dev/null
}

port_in_use() {
    # A successful connect means something listens there.
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

random_port() {
    local range=${RT_PG_PORT_RANGE:-15000-32000} low high
    low=${range%-*}
    high=${range#*-}
    echo $((low + (RANDOM * 32768 + RANDOM) % (high - low + 1)))
}

psql_super() {
    PGPASSWORD=$SUPERPASSWORD "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" \
        -U "$SUPERUSER" -d postgres "${@:2}"
}

start() {
    need_binaries
    teardown

    mkdir -p -- "$DIR"
    touch "$DIR/$MARKER"
    local base
    if [ "$IS_ROOT" -eq 1 ]; then
        chmod 0755 "$DIR"
    fi
    if owner_can_use "$DIR"; then
        base="$DIR/cluster"
        mkdir -p "$base"
    else
        # The postgres user cannot reach <dir> (e.g. under a 0700 home): keep the cluster in /tmp.
        base=$(mktemp -d "${TMPDIR:-/tmp}/rt-pg.XXXXXX")
        chmod 0755 "$base"
        note "postgres cannot reach $DIR; the cluster lives in $base"
    fi
    touch "$base/$MARKER"
    echo "$base" >"$DIR/base"
    if [ "$IS_ROOT" -eq 1 ]; then
        chown -R postgres: "$base"
    fi
    local data="$base/data" log="$base/server.log"

    if ! as_owner "$PGBIN/initdb" -D "$data" -U "$SUPERUSER" --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$base/initdb.log" 2>&1; then
        cat "$base/initdb.log" >&2
        die "initdb failed in $data"
    fi
    make_certificates "$DIR" "$data"
    cat >>"$data/postgresql.conf" <<CONF

# pg-cluster.sh: throwaway test cluster
include = 'rt-port.conf'
listen_addresses = '127.0.0.1${LISTEN_ADDRESS:+,$LISTEN_ADDRESS}'
unix_socket_directories = ''
wal_level = logical
max_replication_slots = 32
max_wal_senders = 32
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
CONF
    cat >"$data/pg_hba.conf" <<HBA
local   all          all                      trust
host    all          $SUPERUSER  127.0.0.1/32   trust
host    replication  $SUPERUSER  127.0.0.1/32   trust
host    all          all       127.0.0.1/32   scram-sha-256
host    replication  all       127.0.0.1/32   scram-sha-256
HBA
    if [ -n "$LISTEN_ADDRESS" ]; then
        printf 'hostssl all          all       %s   scram-sha-256\nhostssl replication  all       %s   scram-sha-256\n' \
            "$CLIENT_NET" "$CLIENT_NET" >>"$data/pg_hba.conf"
    fi

    local attempt port="" started=0
    for attempt in $(seq 1 "$ATTEMPTS"); do
        port=$(random_port)
        if port_in_use "$port"; then
            continue
        fi
        echo "port = $port" >"$data/rt-port.conf"
        if [ "$IS_ROOT" -eq 1 ]; then
            chown postgres: "$data/rt-port.conf"
        fi
        if as_owner "$PGBIN/pg_ctl" -D "$data" -l "$log" -w -t "$START_TIMEOUT" start >/dev/null 2>&1; then
            started=1
            break
        fi
        stop_cluster "$data"
        if grep -qE 'could not bind|Address already in use|could not create any TCP/IP sockets' "$log" 2>/dev/null; then
            note "port $port was taken (attempt $attempt of $ATTEMPTS); trying another"
            : >"$log"
            continue
        fi
        tail -n 30 "$log" >&2 2>/dev/null || true
        die "the server in $data did not start within ${START_TIMEOUT}s (log above: $log)"
    done
    [ "$started" -eq 1 ] || die "found no free port in $ATTEMPTS attempts"

    if ! psql_super "$port" >/dev/null <<SQL; then
ALTER ROLE $SUPERUSER PASSWORD '$SUPERPASSWORD';
CREATE ROLE anon NOLOGIN NOINHERIT;
CREATE ROLE authenticated NOLOGIN NOINHERIT;
CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
CREATE ROLE $RT_USER LOGIN REPLICATION PASSWORD '$RT_PASSWORD';
GRANT anon, authenticated, service_role TO $RT_USER;
CREATE DATABASE realtime_control OWNER $RT_USER;
CREATE DATABASE tenant_db OWNER $RT_USER;
SQL
        stop_cluster "$data"
        die "could not create the test roles and databases (server log: $log)"
    fi

    local tmp="$DIR/pg.env.tmp"
    {
        printf '%s=%q\n' PGHOST "$ADVERTISED_HOST" PGPORT "$port" PGUSER "$SUPERUSER" \
            PGPASSWORD "$SUPERPASSWORD" PGDATABASE postgres \
            RT_PG_HOST "$ADVERTISED_HOST" RT_PG_PORT "$port" RT_PG_USER "$RT_USER" \
            RT_PG_PASSWORD "$RT_PASSWORD" RT_PG_CONTROL_DB realtime_control \
            RT_PG_TENANT_DB tenant_db RT_PG_SUPERUSER "$SUPERUSER" \
            RT_PG_SUPERPASSWORD "$SUPERPASSWORD" RT_PG_DATA "$data" RT_PG_LOG "$log" \
            RT_PG_BIN "$PGBIN" RT_PG_SSL_ROOT_CERT "$DIR/pg-ca.crt"
    } >"$tmp"
    mv -f "$tmp" "$DIR/pg.env"
    echo "pg-cluster: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on $ADVERTISED_HOST:$port," \
        "env file $DIR/pg.env"
}

# A CA (<dir>/pg-ca.crt) and the server's certificate and key in the data directory.
make_certificates() {
    local dir=$1 data=$2 work
    work=$(mktemp -d)
    (
        cd "$work"
        openssl ecparam -name prime256v1 -genkey -noout -out ca.key
        openssl req -x509 -new -key ca.key -sha256 -days 30 -subj '/CN=pg-cluster test CA' \
            -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign' -out ca.crt
        openssl ecparam -name prime256v1 -genkey -noout -out server.key
        openssl req -new -key server.key -subj '/CN=localhost' -out server.csr
        printf 'subjectAltName=DNS:localhost%s\nextendedKeyUsage=serverAuth\n' \
            "${LISTEN_ADDRESS:+,IP:$LISTEN_ADDRESS}" >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -sha256 -days 30 \
            -extfile server.ext -out server.crt
    ) >/dev/null 2>&1 || die "could not make the test certificates (openssl)"
    cp "$work/ca.crt" "$dir/pg-ca.crt"
    chmod 0644 "$dir/pg-ca.crt"
    install -m 0600 "$work/server.key" "$data/server.key"
    install -m 0644 "$work/server.crt" "$data/server.crt"
    if [ "$IS_ROOT" -eq 1 ]; then
        chown postgres: "$data/server.key" "$data/server.crt"
    fi
    rm -rf "$work"
}

status() {
    local base port
    base=$(recorded_base)
    [ -n "$base" ] && [ -f "$DIR/pg.env" ] || die "no cluster in $DIR"
    port=$(sed -n 's/^PGPORT=//p' "$DIR/pg.env")
    psql_super "$port" -tAc 'SELECT 1' >/dev/null || die "the cluster of $DIR does not answer on port $port"
    echo "pg-cluster: running on 127.0.0.1:$port (data $base/data)"
}

case "$ACTION" in
    start) start ;;
    stop)
        teardown
        echo "pg-cluster: stopped and removed $DIR"
        ;;
    status) status ;;
    *) usage ;;
esac
