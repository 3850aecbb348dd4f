#!/usr/bin/env bash
# A multi-host test bed on one machine: a network namespace per "host", joined by two bridges
# (toolchain.md §7). Root only. Addresses come from 198.18.0.0/15 (reserved for network
# benchmarks), so no test ever addresses a real network.
#
#   netns-bed.sh up     <dir> <host>...          make the bed, write <dir>/bed.env
#   netns-bed.sh down   <dir>                    kill what runs in it, remove it and <dir>
#   netns-bed.sh link   <dir> <host> down|up     take the host's back link down (a partition) or up
#   netns-bed.sh block  <dir> <host> <address>   the host can no longer reach <address> (route
#   netns-bed.sh unblock <dir> <host> <address>  "unreachable"); unblock lifts it
#   netns-bed.sh sweep                           remove the beds whose owner process is gone
#
# Every bed has a number N (1-254) of its own, two bridges and one namespace per host:
#   back  198.18.N.0/24: eth0 of every host; the cluster's traffic (etcd, PostgreSQL, node links)
#   front 198.19.N.0/24: eth1 of every host; the clients' traffic
# The machine itself (the test runner: clients, operator tools) is 198.18.N.1 and 198.19.N.1.
# Host k (1-based, in the order given) is 198.18.N.(10+k) and 198.19.N.(10+k). Taking a host's
# back link down cuts it off from etcd, PostgreSQL and the other nodes while its clients still
# reach it over the front network, as on a host whose private network fails. No host has a
# default route, so nothing leaks between the two networks through the machine.
#
# <dir>/bed.env (KEY=value, sourceable by sh):
#   RT_BED_ID RT_BED_NET RT_BED_BACK_BRIDGE RT_BED_FRONT_BRIDGE
#   RT_BED_OPERATOR_BACK RT_BED_OPERATOR_FRONT           the machine's addresses
#   RT_BED_HOSTS                                          the host names, space separated
#   RT_BED_<HOST>_NS RT_BED_<HOST>_BACK RT_BED_<HOST>_FRONT   per host (upper case, - as _)
# Run a process on a host with `ip netns exec "$RT_BED_<HOST>_NS" <command>`.
#
# Names are unique per bed (two runs may overlap): bridges rtb<id>/rtf<id>, veths rt<id><k>b and
# rt<id><k>f (at most 15 characters), namespaces rt-<id>-<host>. `up` cleans up after itself when
# it fails; `down` is idempotent. RT_BED_OWNER_PID (default: the caller's parent) names the
# process the bed belongs to: `up` first sweeps the beds whose owner died without `down`.
set -euo pipefail

STATE_ROOT=${RT_BED_STATE_ROOT:-/run/rt-netns-beds}
LOCK=$STATE_ROOT.lock
MARKER=.rt-netns-bed

die() {
    echo "netns-bed: $*" >&2
    exit 1
}
usage() {
    sed -n '5,11p' "$0" >&2
    exit 2
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and bridges)"
    command -v ip >/dev/null || die "ip not found; install the Debian package iproute2"
}

abs_dir() {
    case "$1" in
        /*) echo "${1%/}" ;;
        *) echo "$PWD/${1%/}" ;;
    esac
}

var_of() { echo "$1" | tr 'a-z-' 'A-Z_'; }

# A bed number whose two /24s no interface of the machine uses yet.
free_net() {
    local used n
    used=$(ip -4 -o addr show | awk '{print $4}')
    for n in $(shuf -i 1-254); do
        if ! grep -qE "^198\.1[89]\.$n\." <<<"$used"; then
            echo "$n"
            return 0
        fi
    done
    die "no free 198.18.N.0/24 left"
}

# Removes everything of bed <id> that exists: processes in its namespaces, namespaces, veths,
# bridges, its state directory. Never fails.
remove_bed() {
    local id=$1 ns pids
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^rt-$id-" || true); do
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        if [ -n "$pids" ]; then
            # shellcheck disable=SC2086
            kill -KILL $pids 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || true
    done
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
        grep -E "^rt$id[0-9]+[bf]$|^rt[bf]$id$" || true); do
        ip link del "$link" 2>/dev/null || true
    done
    rm -rf -- "${STATE_ROOT:?}/$id"
}

sweep() {
    local state owner
    [ -d "$STATE_ROOT" ] || return 0
    for state in "$STATE_ROOT"/*; do
        [ -f "$state/owner" ] || continue
        owner=$(cat "$state/owner")
        if ! kill -0 "$owner" 2>/dev/null; then
            echo "netns-bed: removing bed $(basename "$state") (owner $owner is gone)" >&2
            remove_bed "$(basename "$state")"
        fi
    done
}

add_host() {
    local id=$1 net=$2 k=$3 host=$4 ns="rt-$1-$4"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    local side addr bridge dev
    for side in b f; do
        if [ "$side" = b ]; then addr="198.18.$net.$((10 + k))" bridge="rtb$id" dev=eth0; else
            addr="198.19.$net.$((10 + k))" bridge="rtf$id" dev=eth1
        fi
        ip link add "rt$id$k$side" type veth peer name "$dev" netns "$ns"
        ip link set "rt$id$k$side" master "$bridge" up
        ip -n "$ns" addr add "$addr/24" dev "$dev"
        ip -n "$ns" link set "$dev" up
    done
    local var
    var=$(var_of "$host")
    printf '%s=%q\n' "RT_BED_${var}_NS" "$ns" "RT_BED_${var}_BACK" "198.18.$net.$((10 + k))" \
        "RT_BED_${var}_FRONT" "198.19.$net.$((10 + k))"
}

up() {
    local dir=$1
    shift
    [ $# -ge 1 ] && [ $# -le 50 ] || die "give 1 to 50 host names"
    local host
    for host in "$@"; do
        [[ "$host" =~ ^[a-z][a-z0-9-]{0,15}$ ]] || die "host name '$host': lower case letters, digits and -, at most 16"
    done
    [ ! -e "$dir" ] || [ -f "$dir/$MARKER" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ] ||
        die "$dir exists and is not a bed directory"
    [ ! -f "$dir/bed.env" ] || down "$dir"
    mkdir -p "$STATE_ROOT" "$dir"
    touch "$dir/$MARKER"
    local id net
    exec 9>"$LOCK"
    flock 9
    sweep
    id=$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')
    while [ -e "$STATE_ROOT/$id" ]; do id=$(od -An -N2 -tx2 /dev/urandom | tr -d ' '); done
    net=$(free_net)
    mkdir -p "$STATE_ROOT/$id"
    echo "${RT_BED_OWNER_PID:-$PPID}" >"$STATE_ROOT/$id/owner"
    # From here on a failure removes what was made.
    trap 'remove_bed '"$id"'; rm -f "$dir/bed.env"; exit 1' ERR INT TERM
    ip link add "rtb$id" type bridge
    ip link add "rtf$id" type bridge
    ip addr add "198.18.$net.1/24" dev "rtb$id"
    ip addr add "198.19.$net.1/24" dev "rtf$id"
    ip link set "rtb$id" up
    ip link set "rtf$id" up
    local tmp="$dir/bed.env.tmp" k=0
    printf '%s=%q\n' RT_BED_ID "$id" RT_BED_NET "$net" RT_BED_BACK_BRIDGE "rtb$id" \
        RT_BED_FRONT_BRIDGE "rtf$id" RT_BED_OPERATOR_BACK "198.18.$net.1" \
        RT_BED_OPERATOR_FRONT "198.19.$net.1" RT_BED_HOSTS "$*" >"$tmp"
    for host in "$@"; do
        k=$((k + 1))
        add_host "$id" "$net" "$k" "$host" >>"$tmp"
    done
    trap - ERR INT TERM
    flock -u 9
    mv -f "$tmp" "$dir/bed.env"
    echo "netns-bed: bed $id on 198.18.$net.0/24 (back) and 198.19.$net.0/24 (front): $*" >&2
}

bed_value() {
    local dir=$1 key=$2
    sed -n "s/^$key=//p" "$dir/bed.env" | head -n 1
}

down() {
    local dir=$1 id
    [ -e "$dir" ] || return 0
    [ -f "$dir/$MARKER" ] || die "$dir was not made by netns-bed.sh; not touching it"
    if [ -f "$dir/bed.env" ]; then
        id=$(bed_value "$dir" RT_BED_ID)
        [ -z "$id" ] || remove_bed "$id"
    fi
    rm -rf -- "$dir"
}

host_ns() {
    local dir=$1 host=$2 ns
    [ -f "$dir/bed.env" ] || die "no bed in $dir"
    ns=$(bed_value "$dir" "RT_BED_$(var_of "$host")_NS")
    [ -n "$ns" ] || die "no host '$host' in the bed of $dir"
    echo "$ns"
}

[ $# -ge 1 ] || usage
ACTION=$1
shift
need_root
case "$ACTION" in
    up)
        [ $# -ge 2 ] || usage
        up "$(abs_dir "$1")" "${@:2}"
        ;;
    down)
        [ $# -eq 1 ] || usage
        down "$(abs_dir "$1")"
        ;;
    link)
        [ $# -eq 3 ] && [[ "$3" =~ ^(up|down)$ ]] || usage
        ip -n "$(host_ns "$(abs_dir "$1")" "$2")" link set eth0 "$3"
        ;;
    block | unblock)
        [ $# -eq 3 ] || usage
        [[ "$3" =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]] || die "'$3' is not an address of a bed"
        if [ "$ACTION" = block ]; then
            ip -n "$(host_ns "$(abs_dir "$1")" "$2")" route add unreachable "$3/32"
        else
            ip -n "$(host_ns "$(abs_dir "$1")" "$2")" route del unreachable "$3/32"
        fi
        ;;
    sweep)
        exec 9>"$LOCK"
        flock 9
        sweep
        ;;
    *) usage ;;
esac
