#!/usr/bin/env bash
# Cross-node fan-out benchmark (issue 5 part 12): one server vs a two-node cluster on a real etcd.
#
#   bench/cluster/run.sh [--server /tmp/bench-cluster-bin/realtime-server] [--reps 3]
#                        [--subs 1000,200] [--layouts shared,split] [--modes window,rate]
#                        [--deliveries 50000] [--window 64] [--quick] [--nice -15]
#                        [--quiet-wait 20]
#
# Targets, interleaved per repetition (so slow drift of this VM hits all alike):
#   single   one server (no etcd, the embedded in-process backend), the publisher and N
#            subscribers on it
#   cluster  nodes A and B joined through a throwaway etcd 3.4 (tests/support/etcd/
#            etcd-cluster.sh, one per session, a fresh ETCD_PREFIX per run): the publisher and
#            N/2 subscribers on A, N/2 subscribers on B (bench/loadgen.js --port-b --subs-b), so
#            every broadcast is delivered on A and crosses one node link to B
# Modes: window = closed loop (at most --window publishes in flight: saturation deliveries/s);
#        rate = open loop at --deliveries / N publishes/s (below saturation: latency).
# Layouts of the cluster on this 2-core VM (the single server always runs on CPU 0, the loadgen
# on CPU 1):
#   shared   A and B both on CPU 0, the loadgen on CPU 1: the cluster gets the same server CPU
#            as the single server, but A and B take turns on one core (B waits for A's slice)
#   split    A on CPU 0, B on CPU 1 next to the loadgen: no turn-taking between A and B, but B
#            competes with the loadgen
# Per run: start the server(s) (each pinned with taskset, in its own session with a raised
# autogroup priority, like bench/run.sh), wait for the client port and, for the cluster, until
# both nodes list each other in GET /api/cluster; read A's link counters; run the loadgen
# (subscribers first, 2 s idle so B's interest in the tenant reaches A, then the publisher);
# read A's counters again; stop the servers by PID. One JSON line per run goes to
# bench/results/cluster-<UTC stamp>.jsonl: the loadgen's line plus target, layout and `link`
# (A -> B: messages, payload bytes and flooded messages during the run, per published message).
# At the end it prints bench/cluster/summarize.js's Markdown tables.
# --quick: 1 rep, N = 200 only, 3 s windows (smoke test, about 2 minutes).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$HERE")"
REPO_DIR="$(dirname "$BENCH_DIR")"
# shellcheck source=SCRIPTDIR/../lib/common.sh
source "$BENCH_DIR/lib/common.sh"
LOG_TAG=cluster/run.sh
ETCD_SCRIPT="$REPO_DIR/tests/support/etcd/etcd-cluster.sh"

# ---- options ----------------------------------------------------------------------------------
SERVER_BIN="$REPO_DIR/build/bin/realtime-server"
REPS=3
SUBS="1000,200"
LAYOUTS="shared,split"
MODES="window,rate"
DELIVERIES=50000
WINDOW=64
QUICK=0
NICE=-15
QUIET_WAIT=20

while [[ $# -gt 0 ]]; do
  opt="$1" val=""
  if [[ "$opt" == --*=* ]]; then val="${opt#*=}"; opt="${opt%%=*}"; fi
  need() { if [[ -z "$val" ]]; then val="${2:-}"; [[ -n "$val" ]] || { echo "run.sh: $1 needs a value" >&2; exit 64; }; SHIFT=2; fi; }
  SHIFT=1
  case "$opt" in
    --server) need "$opt" "${2:-}"; SERVER_BIN="$val" ;;
    --reps) need "$opt" "${2:-}"; REPS="$val" ;;
    --subs) need "$opt" "${2:-}"; SUBS="$val" ;;
    --layouts) need "$opt" "${2:-}"; LAYOUTS="$val" ;;
    --modes) need "$opt" "${2:-}"; MODES="$val" ;;
    --deliveries) need "$opt" "${2:-}"; DELIVERIES="$val" ;;
    --window) need "$opt" "${2:-}"; WINDOW="$val" ;;
    --nice) need "$opt" "${2:-}"; NICE="$val" ;;
    --quiet-wait) need "$opt" "${2:-}"; QUIET_WAIT="$val" ;;
    --quick) QUICK=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
  shift "$SHIFT"
done
[[ "$SERVER_BIN" = /* ]] || SERVER_BIN="$PWD/$SERVER_BIN"
if [[ $QUICK -eq 1 ]]; then
  REPS=1; SUBS=200; TIMING="--duration 3 --warmup 1 --drain 2"
else
  TIMING="--duration 10 --warmup 3 --drain 3"
fi
[[ -x "$SERVER_BIN" ]] || { echo "run.sh: $SERVER_BIN is not an executable (--server)" >&2; exit 66; }
command -v etcd >/dev/null || { echo "run.sh: etcd not installed (Debian etcd-server)" >&2; exit 69; }

# Loopback ports away from bench/run.sh's (14000-14001) and the dev ports.
PORT_A=14100
PORT_B=14101
LINK_PORT_A=14110
LINK_PORT_B=14111
CLUSTER_SECRET="bench-cluster-$(random_hex 12)"
JWT_SECRET="bench-$(random_hex 24)"

raise_fd_limit

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS_DIR="$BENCH_DIR/results"
OUT="$RESULTS_DIR/cluster-$STAMP.jsonl"
LOG_DIR="$RESULTS_DIR/cluster-$STAMP.logs"
ETCD_DIR="$LOG_DIR/etcd"
mkdir -p "$LOG_DIR"

# ---- process life cycle -----------------------------------------------------------------------
declare -A SRV_PID=() SRV_DATA=()
ETCD_UP=0

stop_server() { # <name>
  local pid="${SRV_PID[$1]:-}"
  if [[ -n "$pid" ]]; then stop_pid "$pid" 50; fi
  if [[ -n "${SRV_DATA[$1]:-}" ]]; then rm -rf "${SRV_DATA[$1]}"; fi
  unset "SRV_PID[$1]" "SRV_DATA[$1]"
}
stop_all() {
  local n
  for n in "${!SRV_PID[@]}"; do stop_server "$n"; done
  if [[ $ETCD_UP -eq 1 ]]; then bash "$ETCD_SCRIPT" stop "$ETCD_DIR" >/dev/null 2>&1 || true; ETCD_UP=0; fi
}
trap 'stop_all' EXIT
trap 'stop_all; exit 130' INT TERM

# start_server <name> <cpu> <port> <logfile> [VAR=value ...]: sets SRV_PID[name].
start_server() {
  local name="$1" cpu="$2" port="$3" logf="$4"
  shift 4
  local data
  data="$(mktemp -d /tmp/qtrealtime-bench-cluster.XXXXXX)"
  SRV_DATA[$name]="$data"
  # The tenant limits of bench/run.sh (far above the load); one worker thread per server.
  setsid nice -n "$NICE" taskset -c "$cpu" env PORT="$port" SEED_SELF_HOST=true \
    API_JWT_SECRET="$JWT_SECRET" DATA_DIR="$data" LISTEN_ADDRESS=127.0.0.1 LOG_LEVEL=warning \
    TENANT_MAX_CONCURRENT_USERS=1000000 TENANT_MAX_EVENTS_PER_SECOND=1000000000 \
    TENANT_MAX_BYTES_PER_SECOND=1000000000 TENANT_MAX_JOINS_PER_SECOND=1000000 \
    TENANT_MAX_CHANNELS_PER_CLIENT=100 "$@" \
    "$SERVER_BIN" --workers 1 >"$logf" 2>&1 &
  SRV_PID[$name]=$!
  for _ in $(seq 1 150); do # up to 15 s
    if ! kill -0 "${SRV_PID[$name]}" 2>/dev/null; then log "$name exited during start-up (see $logf)"; stop_server "$name"; return 1; fi
    if port_open "$port"; then boost "${SRV_PID[$name]}" --quiet; return 0; fi
    sleep 0.1
  done
  log "$name did not accept TCP on 127.0.0.1:$port within 15 s (see $logf)"
  stop_server "$name"
  return 1
}

# The operator token of GET /api/cluster: HS256 with API_JWT_SECRET and an operator role.
OPERATOR_JWT="$(node -e 'console.log(require(process.argv[1]).signHS256({ role: "service_role" }, process.argv[2]))' "$BENCH_DIR/lib/jwt.js" "$JWT_SECRET")"
cluster_view() { # <port>
  curl -fsS -m 2 -H "Authorization: Bearer $OPERATOR_JWT" "http://127.0.0.1:$1/api/cluster"
}

# Wait until A and B both list two nodes (membership through etcd, link addresses known).
wait_cluster() {
  local _ a b
  for _ in $(seq 1 100); do # up to 10 s
    a=$(cluster_view "$PORT_A" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).nodes.length)}catch{console.log(0)}})')
    b=$(cluster_view "$PORT_B" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).nodes.length)}catch{console.log(0)}})')
    if [[ "$a" == 2 && "$b" == 2 ]]; then return 0; fi
    sleep 0.1
  done
  log "the nodes did not see each other within 10 s (A sees $a, B sees $b)"
  return 1
}

# ---- one run ------------------------------------------------------------------------------------
RUN_NO=0
# run_one <target> <layout> <N> <mode> <rep>
run_one() {
  local target="$1" layout="$2" n="$3" mode="$4" rep="$5"
  RUN_NO=$((RUN_NO + 1))
  local tag="$target-$layout-$n-$mode-$rep"
  local meta
  meta="{\"target\":\"$target\",\"layout\":\"$layout\",\"n\":$n,\"mode\":\"$mode\",\"rep\":$rep,\"session\":\"$STAMP\""
  local p
  for p in $PORT_A $PORT_B $LINK_PORT_A $LINK_PORT_B; do
    if port_open "$p"; then log "port $p is in use; not measuring someone else's server"; append_error "$meta}" "port $p in use"; return; fi
  done
  local busy
  busy=$(wait_quiet)
  meta="$meta,\"preRunBusyPct\":$busy"
  local modeargs
  if [[ $mode == window ]]; then
    modeargs="--mode window --window $WINDOW"
  else
    modeargs="--mode rate --rate $(node -e 'console.log(Math.max(1, Math.round(process.argv[1] / process.argv[2])))' "$DELIVERIES" "$n")"
  fi
  local loadgen_cpu=1 extra=() view0="" view1=""
  log "$tag"
  if [[ $target == single ]]; then
    start_server A 0 "$PORT_A" "$LOG_DIR/$tag.A.log" || { append_error "$meta}" "server failed to start"; return; }
    extra=(--server-pid "${SRV_PID[A]}")
  else
    local cpu_b=0
    [[ $layout == split ]] && cpu_b=1
    local prefix="/bench-cluster/$STAMP/$RUN_NO"
    local common=(ETCD_ENDPOINTS="$ETCD_ENDPOINTS" ETCD_PREFIX="$prefix" CLUSTER_SECRET="$CLUSTER_SECRET"
      CLUSTER_PLAINTEXT_LINKS=true
      CLUSTER_ADVERTISE_HOST=127.0.0.1 CLUSTER_LEASE_TTL_S=5)
    start_server A 0 "$PORT_A" "$LOG_DIR/$tag.A.log" "${common[@]}" NODE_NAME=node-a CLUSTER_PORT=$LINK_PORT_A \
      || { append_error "$meta}" "node A failed to start"; return; }
    start_server B "$cpu_b" "$PORT_B" "$LOG_DIR/$tag.B.log" "${common[@]}" NODE_NAME=node-b CLUSTER_PORT=$LINK_PORT_B \
      || { stop_all_servers; append_error "$meta}" "node B failed to start"; return; }
    if ! wait_cluster; then stop_all_servers; append_error "$meta}" "nodes did not join"; return; fi
    view0="$(cluster_view "$PORT_A" || echo '{}')"
    extra=(--server-pid "${SRV_PID[A]}" --port-b "$PORT_B" --subs-b $((n / 2)) --server-pid-b "${SRV_PID[B]}")
  fi
  set +e
  # shellcheck disable=SC2086  # TIMING and modeargs are lists of options
  timeout -k 5 75 setsid nice -n "$NICE" taskset -c "$loadgen_cpu" node "$BENCH_DIR/loadgen.js" \
    --autogroup-nice "$NICE" --adapter phx --port "$PORT_A" --jwt-secret "$JWT_SECRET" \
    --subs "$n" --conc 100 --idle 2 $modeargs $TIMING "${extra[@]}" --meta "$meta}" \
    >"$LOG_DIR/$tag.out" 2>"$LOG_DIR/$tag.loadgen"
  local rc=$?
  set -e
  [[ $target == cluster ]] && view1="$(cluster_view "$PORT_A" || echo '{}')"
  stop_all_servers
  local line
  line="$(tail -n 1 "$LOG_DIR/$tag.out")"
  if [[ "$line" != \{* ]]; then
    log "loadgen exited $rc without a result (see $LOG_DIR/$tag.loadgen)"
    append_error "$meta}" "loadgen exited $rc without output"
    return
  fi
  # Link figures of A towards B over the whole run (warm-up, window and drain), per published
  # message. bytes_out counts envelope payloads; each frame adds a 5-byte header on the wire.
  node -e '
    const r = JSON.parse(process.argv[1]);
    if (process.argv[2]) {
      const v0 = JSON.parse(process.argv[2] || "{}"), v1 = JSON.parse(process.argv[3] || "{}");
      const p0 = (v0.links || {})["node-b"] || {}, p1 = (v1.links || {})["node-b"] || {};
      const d = (k) => (p1[k] ?? 0) - (p0[k] ?? 0);
      const pub = r.published || 0;
      r.link = { messagesOut: d("messages_out"), bytesOut: d("bytes_out"), floodedOut: d("flooded_out"),
        droppedOut: d("dropped_out"), published: pub,
        messagesPerPublish: pub ? +(d("messages_out") / pub).toFixed(3) : null,
        payloadBytesPerMessage: d("messages_out") ? +(d("bytes_out") / d("messages_out")).toFixed(1) : null,
        wireBytesPerPublish: pub ? +((d("bytes_out") + 5 * d("messages_out")) / pub).toFixed(1) : null,
        interestKnown: p1.interest_known ?? null, nodesSeenByA: (v1.nodes || []).length };
    }
    console.log(JSON.stringify(r));' "$line" "$view0" "$view1" >>"$OUT"
  # shellcheck disable=SC2016  # JavaScript template literals, not shell
  tail -n 1 "$OUT" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const r = JSON.parse(s), f = (x) => (x == null ? "-" : x), L = (l) => (l ? `${f(l.p50)}/${f(l.p99)}` : "-");
      if (r.error) return console.error(`   error: ${r.error}`);
      let t = `   ${f(r.deliveriesPerSec)} deliveries/s, p50/p99 ${L(r.latencyMs)} ms`;
      if (r.groupA) t += ` (A ${L(r.groupA.latencyMs)}, B ${L(r.groupB.latencyMs)})`;
      if (r.link) t += `, link ${f(r.link.messagesPerPublish)} msg and ${f(r.link.wireBytesPerPublish)} B per publish`;
      t += `, lost ${f(r.lostAfterDrain)}, loadgen ${f(r.loadgenCpuPct)}%`;
      console.error(t);
    });'
}
stop_all_servers() { stop_server A; stop_server B; }

# ---- main ---------------------------------------------------------------------------------------
log "results -> $OUT (logs in $LOG_DIR); server $SERVER_BIN"
bash "$ETCD_SCRIPT" start "$ETCD_DIR" >"$LOG_DIR/etcd-start.log" 2>&1 || { log "etcd did not start (see $LOG_DIR/etcd-start.log)"; exit 1; }
ETCD_UP=1
ETCD_ENDPOINTS="$(bash -c 'source "$1"; echo "$RT_ETCD_ENDPOINTS"' _ "$ETCD_DIR/etcd.env")"
log "etcd at $ETCD_ENDPOINTS"

IFS=',' read -r -a SUBS_LIST <<<"$SUBS"
IFS=',' read -r -a LAYOUT_LIST <<<"$LAYOUTS"
IFS=',' read -r -a MODE_LIST <<<"$MODES"
for n in "${SUBS_LIST[@]}"; do
  for mode in "${MODE_LIST[@]}"; do
    for rep in $(seq 1 "$REPS"); do
      run_one single - "$n" "$mode" "$rep"
      for layout in "${LAYOUT_LIST[@]}"; do
        run_one cluster "$layout" "$n" "$mode" "$rep"
      done
    done
  done
done
stop_all
log "done: $OUT"
node "$HERE/summarize.js" "$OUT"
