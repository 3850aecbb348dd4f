#!/usr/bin/env bash
# A streaming replica of the throwaway PostgreSQL 15 cluster that pg-cluster.sh made, for tests of
# read/write splitting (the control plane's DB_REPLICA_HOST). pg-cluster.sh itself is unchanged.
#
#   pg-replica.sh start  <dir> <primary-dir>  pg_basebackup -R from the cluster of <primary-dir>
#                                             (its pg.env), start it on another free port of
#                                             127.0.0.1, write <dir>/replica.env
#   pg-replica.sh stop   <dir>                stop it (fast, then immediate, then SIGKILL) and
#                                             remove <dir>
#   pg-replica.sh status <dir>                exit 0 when the replica of <dir> answers and is in
#                                             recovery
#
# The replica: a physical hot standby (primary_conninfo from -R, no replication slot, so the
# primary keeps nothing for it), the primary's configuration and roles, its own data directory
# and log. It streams as the trusted superuser over loopback (pg-cluster.sh's pg_hba allows it).
#
# <dir>/replica.env (KEY=value, sourceable by sh):
#   RT_PG_REPLICA_HOST RT_PG_REPLICA_PORT   where it listens (same users and passwords as pg.env)
#   RT_PG_REPLICA_DATA RT_PG_REPLICA_LOG    its data directory and server log
#
# Idempotent like pg-cluster.sh: `start` on a directory left by a crashed run stops that replica
# first; `stop` on a missing directory does nothing. As root, PostgreSQL binaries run as the
# `postgres` user; when that user cannot reach <dir>, the replica lives in a temporary directory
# that `stop` removes too. Only directories this script made are ever removed.
#
# Environment: RT_PG_BIN (default: the primary's RT_PG_BIN, else /usr/lib/postgresql/15/bin),
# RT_PG_PORT_RANGE (default 15000-32000).
set -euo pipefail

MARKER=.rt-pg-replica
START_TIMEOUT=60
ATTEMPTS=8

die() {
    echo "pg-replica: $*" >&2
    exit 1
}
note() { echo "pg-replica: $*" >&2; }

usage() {
    echo "usage: $0 start <dir> <primary-dir> | stop <dir> | status <dir>" >&2
    exit 2
}

[ $# -ge 2 ] || usage
ACTION=$1
absolute() {
    case "$1" in
        /*) echo "${1%/}" ;;
        *) echo "$PWD/${1%/}" ;;
    esac
}
DIR=$(absolute "$2")
[ -n "$DIR" ] && [ "$DIR" != / ] || die "refusing to use / as the replica directory"
PRIMARY_DIR=""
if [ "$ACTION" = start ]; then
    [ $# -eq 3 ] || usage
    PRIMARY_DIR=$(absolute "$3")
else
    [ $# -eq 2 ] || usage
fi

IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

as_owner() {
    if [ "$IS_ROOT" -eq 1 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# A value of a KEY=value env file as pg-cluster.sh writes it (printf %q quoting undone by sh).
env_value() {
    local file=$1 key=$2
    (
        set +u
        # shellcheck disable=SC1090
        . "$file"
        eval "printf '%s' \"\${$key:-}\""
    )
}

PGBIN=${RT_PG_BIN:-/usr/lib/postgresql/15/bin}

recorded_base() {
    if [ -f "$DIR/base" ]; then
        cat "$DIR/base"
    fi
}

is_our_postmaster() {
    local pid=$1 data=$2 cmdline
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    case "$cmdline" in
        *postgres*"$data"*) return 0 ;;
        *) return 1 ;;
    esac
}

# Stops the server of data directory $1, harder at each step; never fails.
stop_server() {
    local data=$1 pid i
    [ -f "$data/postmaster.pid" ] || return 0
    pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)
    is_our_postmaster "$pid" "$data" || return 0
    as_owner "$PGBIN/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
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

remove_ours() {
    local path=$1
    [ -e "$path" ] || return 0
    if [ -f "$path/$MARKER" ]; then
        rm -rf -- "$path"
    else
        die "$path exists but was not made by pg-replica.sh (no $MARKER); not touching it"
    fi
}

teardown() {
    local base
    [ -e "$DIR" ] || return 0
    if [ ! -f "$DIR/$MARKER" ]; then
        if [ -d "$DIR" ] && [ -z "$(ls -A "$DIR")" ]; then
            rmdir -- "$DIR"
            return 0
        fi
        die "$DIR exists but was not made by pg-replica.sh (no $MARKER); not touching it"
    fi
    base=$(recorded_base)
    if [ -n "$base" ]; then
        stop_server "$base/data"
        if [ "$base" != "$DIR/replica" ]; then
            remove_ours "$base"
        fi
    fi
    rm -rf -- "$DIR"
}

owner_can_use() {
    [ "$IS_ROOT" -eq 0 ] && return 0
    runuser -u postgres -- test -x "$1" 2>/dev/null
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

random_port() {
    local range=${RT_PG_PORT_RANGE:-15000-32000} low high
    low=${range%-*}
    high=${range#*-}
    echo $((low + (RANDOM * 32768 + RANDOM) % (high - low + 1)))
}

psql_super() {
    local port=$1 user password
    shift
    user=$(env_value "$PRIMARY_ENV" RT_PG_SUPERUSER)
    password=$(env_value "$PRIMARY_ENV" RT_PG_SUPERPASSWORD)
    PGPASSWORD=$password "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" \
        -U "$user" -d postgres "$@"
}

start() {
    PRIMARY_ENV="$PRIMARY_DIR/pg.env"
    [ -f "$PRIMARY_ENV" ] || die "no primary cluster in $PRIMARY_DIR (start it with pg-cluster.sh)"
    PGBIN=${RT_PG_BIN:-$(env_value "$PRIMARY_ENV" RT_PG_BIN)}
    PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
    local tool
    for tool in pg_basebackup pg_ctl postgres psql; do
        [ -x "$PGBIN/$tool" ] || die "$PGBIN/$tool not found (Debian package postgresql-15)"
    done
    local primary_port superuser
    primary_port=$(env_value "$PRIMARY_ENV" PGPORT)
    superuser=$(env_value "$PRIMARY_ENV" RT_PG_SUPERUSER)
    [ -n "$primary_port" ] || die "$PRIMARY_ENV names no PGPORT"

    teardown
    mkdir -p -- "$DIR"
    touch "$DIR/$MARKER"
    local base
    if [ "$IS_ROOT" -eq 1 ]; then
        chmod 0755 "$DIR"
    fi
    if owner_can_use "$DIR"; then
        base="$DIR/replica"
        mkdir -p "$base"
    else
        base=$(mktemp -d "${TMPDIR:-/tmp}/rt-pg-replica.XXXXXX")
        chmod 0755 "$base"
        note "postgres cannot reach $DIR; the replica lives in $base"
    fi
    touch "$base/$MARKER"
    echo "$base" >"$DIR/base"
    if [ "$IS_ROOT" -eq 1 ]; then
        chown -R postgres: "$base"
    fi
    local data="$base/data" log="$base/server.log"

    # -R writes standby.signal and primary_conninfo; -X stream brings the WAL of the backup along.
    if ! as_owner "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U "$superuser" \
        -D "$data" -R -X stream -c fast >"$base/basebackup.log" 2>&1; then
        cat "$base/basebackup.log" >&2
        die "pg_basebackup from 127.0.0.1:$primary_port failed"
    fi
    # The primary's postgresql.conf includes rt-port.conf (pg-cluster.sh); the copy gets its own.
    grep -q "rt-port.conf" "$data/postgresql.conf" ||
        echo "include = 'rt-port.conf'" >>"$data/postgresql.conf"
    cat >>"$data/postgresql.conf" <<CONF

# pg-replica.sh: a hot standby of the test cluster
hot_standby = on
CONF

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
        stop_server "$data"
        if grep -qE 'could not bind|Address already in use|could not create any TCP/IP sockets' "$log" 2>/dev/null; then
            note "port $port was taken (attempt $attempt of $ATTEMPTS); trying another"
            : >"$log"
            continue
        fi
        tail -n 30 "$log" >&2 2>/dev/null || true
        die "the replica in $data did not start within ${START_TIMEOUT}s (log above: $log)"
    done
    [ "$started" -eq 1 ] || die "found no free port in $ATTEMPTS attempts"

    local recovering
    recovering=$(psql_super "$port" -tAc 'SELECT pg_is_in_recovery()' 2>/dev/null || true)
    if [ "$recovering" != t ]; then
        stop_server "$data"
        die "the server on port $port is not a standby (pg_is_in_recovery: '$recovering'; log: $log)"
    fi

    local tmp="$DIR/replica.env.tmp"
    {
        printf '%s=%q\n' RT_PG_REPLICA_HOST 127.0.0.1 RT_PG_REPLICA_PORT "$port" \
            RT_PG_REPLICA_DATA "$data" RT_PG_REPLICA_LOG "$log" RT_PG_REPLICA_PRIMARY_ENV \
            "$PRIMARY_ENV"
    } >"$tmp"
    mv -f "$tmp" "$DIR/replica.env"
    echo "pg-replica: hot standby of 127.0.0.1:$primary_port on 127.0.0.1:$port," \
        "env file $DIR/replica.env"
}

status() {
    local port
    [ -f "$DIR/replica.env" ] || die "no replica in $DIR"
    PRIMARY_ENV=$(env_value "$DIR/replica.env" RT_PG_REPLICA_PRIMARY_ENV)
    port=$(env_value "$DIR/replica.env" RT_PG_REPLICA_PORT)
    [ "$(psql_super "$port" -tAc 'SELECT pg_is_in_recovery()' 2>/dev/null || true)" = t ] ||
        die "the replica of $DIR does not answer as a standby on port $port"
    echo "pg-replica: standby running on 127.0.0.1:$port"
}

case "$ACTION" in
    start) start ;;
    stop)
        teardown
        echo "pg-replica: stopped and removed $DIR"
        ;;
    status) status ;;
    *) usage ;;
esac
