#!/usr/bin/env bash
# Benchmark driver: runs OUR server and two peers side by side, same loadgen, same session.
#
#   bench/run.sh [--quick] [--server build/bin/realtime-server] [--reps 3]
#                [--baseline-server other/realtime-server] [--targets ours,ws-phx,nats,base] [--scenarios a,b,c] [--no-probe] [--nice -15]
#                [--quiet-wait 20]
#
# For each scenario, each repetition and each target (targets interleaved, so slow drift of
# this VM hits all of them alike): start the server pinned to CPU 0, wait until its port
# accepts TCP, run bench/loadgen.js pinned to CPU 1 with the server's PID, stop the server by
# PID, append the JSON line (plus target/scenario/rep) to bench/results/<UTC stamp>.jsonl.
# At the end it prints bench/summarize.js's Markdown tables.
#
# Scenarios (shared/design/performance.md §6.2):
#   a  S2  fan-out 1 -> 1,000, saturation (closed loop, window 64), 10 s + 3 s warm-up
#   b  S2  fan-out 1 -> 1,000 at 50 publishes/s (50k deliveries/s): latency, CPU per delivery
#   c  S1+S2  1 -> 10,000: connect storm (500 concurrent), idle RSS per connection, then
#         saturation with window 8
#   d  S2  fan-out 1 -> 1,000, saturation with window 8: the same window as c, so that c / d
#         shows what 10x the subscribers cost (a window caps the frames one write can carry)
#   e  S2  fan-out 1 -> 10,000, saturation with window 64: the settings of a at ten times the
#         subscribers (e / a: "no collapse at 10,000")
#   f  S1  connect + JWT verify + join storm: 10,000 sockets (apikey JWT checked at the upgrade,
#         phx_join with access_token), 500 in flight, then 2 s idle for RSS per joined
#         connection; no publisher. ours and ws-phx only (nats verifies no JWT and has no join)
#   i  S2 over TLS  fan-out 1 -> 1,000 over wss: the settings of a, every target with TLS on its
#         port (issue 18 part 7); i / a is what TLS costs each target
#   j  S1 over TLS  TLS connect storm: 10,000 full TLS handshakes (ECDSA P-256 certificate, no
#         session resumption), then the upgrade with the JWT and the join of f, 500 in flight,
#         2 s idle. nats runs too, as in c: its "join" is CONNECT + SUB + PING/PONG and it checks
#         no JWT, so only the TLS handshake figures compare like for like (the line says so)
# The TLS scenarios (i, j) make a throwaway CA and server certificate per session (lib/certs.sh,
# needs openssl); the loadgen checks the chain and the name localhost and offers
# TLS_AES_128_GCM_SHA256 only, so that every target runs the same cipher.
# Target `base` is our server from another binary (--baseline-server, e.g. a release build of the
# previous main) with exactly the settings of `ours`: the before/after of a change, side by side
# in one session. It is not in the default targets. OURS_EXTRA_ENV="K=V ..." adds variables to
# ours and base, BASE_EXTRA_ENV="K=V ..." to base only (one binary against itself with a
# setting changed: --baseline-server = --server, BASE_EXTRA_ENV="TENANT_HISTORY_SIZE=0").
# --quick: each scenario once, 3 s window + 1 s warm-up (smoke test of the harness).
#
# Every loadgen run is bounded (hard self-exit at 60 s, plus `timeout` here); servers are
# killed by PID, also on errors and Ctrl-C (trap). Everything listens on 127.0.0.1 only.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$BENCH_DIR")"
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$BENCH_DIR/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/certs.sh
source "$BENCH_DIR/lib/certs.sh"
LOG_TAG=run.sh

# ---- options ----------------------------------------------------------------------------------
QUICK=0
SERVER_BIN="$REPO_DIR/build/bin/realtime-server"
BASELINE_BIN=""
REPS=3
TARGETS="ours,ws-phx,nats"
SCENARIOS="a,b,c,d,e,f"
PROBE=1
# Priority of the server and the loadgen. The machine is shared with other engineers' builds and
# fuzzers; a high priority (root only; ignored otherwise) keeps them to the idle time so they
# disturb the run less. --nice 0 turns it off. The kernel groups CPU time by session
# ("autogroup"), so a per-process nice alone does nothing against another session's build:
# each server and loadgen runs in a session of its own (setsid) whose autogroup gets the nice.
NICE=-15
# Before each run, wait up to this many seconds for the machine to be quiet (others < 15%).
QUIET_WAIT=20

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --server) SERVER_BIN="$2"; shift ;;
    --server=*) SERVER_BIN="${1#*=}" ;;
    --baseline-server) BASELINE_BIN="$2"; shift ;;
    --baseline-server=*) BASELINE_BIN="${1#*=}" ;;
    --reps) REPS="$2"; shift ;;
    --reps=*) REPS="${1#*=}" ;;
    --targets) TARGETS="$2"; shift ;;
    --targets=*) TARGETS="${1#*=}" ;;
    --scenarios) SCENARIOS="$2"; shift ;;
    --scenarios=*) SCENARIOS="${1#*=}" ;;
    --no-probe) PROBE=0 ;;
    --nice) NICE="$2"; shift ;;
    --nice=*) NICE="${1#*=}" ;;
    --quiet-wait) QUIET_WAIT="$2"; shift ;;
    --quiet-wait=*) QUIET_WAIT="${1#*=}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
  shift
done
[[ "$SERVER_BIN" = /* ]] || SERVER_BIN="$REPO_DIR/$SERVER_BIN"
[[ -z "$BASELINE_BIN" || "$BASELINE_BIN" = /* ]] || BASELINE_BIN="$PWD/$BASELINE_BIN"
[[ $QUICK -eq 1 ]] && REPS=1

# Fixed loopback ports, away from the usual dev ports (4000, 4222, 9222) so a developer's own
# server is never measured by mistake. nats ports are in servers/nats.conf.
PORT_OURS=14000
PORT_WSPHX=14001
PORT_NATS=14223

# ---- scenarios --------------------------------------------------------------------------------
if [[ $QUICK -eq 1 ]]; then TIMING="--duration 3 --warmup 1 --drain 2"; else TIMING="--duration 10 --warmup 3 --drain 3"; fi
scenario_args() {
  case "$1" in
    a) echo "--subs 1000 --conc 100 --mode window --window 64 $TIMING" ;;
    b) echo "--subs 1000 --conc 100 --mode rate --rate 50 $TIMING" ;;
    c) echo "--subs 10000 --conc 500 --mode window --window 8 $TIMING" ;;
    d) echo "--subs 1000 --conc 100 --mode window --window 8 $TIMING" ;;
    e) echo "--subs 10000 --conc 500 --mode window --window 64 $TIMING" ;;
    f) echo "--subs 10000 --conc 500 --mode storm --idle 2" ;;
    # The mandatory TLS 1.3 suite (RFC 8446 §9.1) and browsers' first choice. Pinned because
    # the servers pick differently from Node's default offer (AES-256 first): OpenSSL follows
    # the client's order, Go's crypto/tls (nats) its own, and the bulk cipher would differ.
    i) echo "--subs 1000 --conc 100 --mode window --window 64 $TIMING --tls --tls-ciphers TLS_AES_128_GCM_SHA256" ;;
    # --storm-timeout 50: the client core manages only 450-750 full handshakes/s (below), so
    # the storm takes 15-25 s; the default 30 s would cut it short on a slow moment of this VM.
    j) echo "--subs 10000 --conc 500 --mode storm --idle 2 --storm-timeout 50 --tls --tls-ciphers TLS_AES_128_GCM_SHA256" ;;
    *) echo "run.sh: unknown scenario $1" >&2; exit 64 ;;
  esac
}
scenario_name() {
  case "$1" in
    a) echo "fan-out 1->1000, saturation (window 64)" ;;
    b) echo "fan-out 1->1000 at 50 publishes/s" ;;
    c) echo "1->10000: connect storm + idle RSS + saturation (window 8)" ;;
    d) echo "fan-out 1->1000, saturation (window 8, as c)" ;;
    e) echo "fan-out 1->10000, saturation (window 64, as a)" ;;
    f) echo "connect + JWT verify + join storm, 10000 sockets (500 in flight) + idle RSS" ;;
    i) echo "fan-out 1->1000 over wss, saturation (window 64, as a)" ;;
    j) echo "TLS connect storm: 10000 full handshakes (ECDSA P-256) + JWT + join (500 in flight) + idle RSS" ;;
  esac
}
# The scenarios whose every connection speaks TLS (the loadgen's --tls).
is_tls_scenario() { [[ $1 == i || $1 == j ]]; }

# ---- environment ------------------------------------------------------------------------------
# File descriptors: the loadgen holds N+1 sockets and the server N. 65536 where allowed; this
# sandbox caps the hard limit at 20000, which is enough for N = 10,000.
raise_fd_limit
if [[ "$(ulimit -n)" != unlimited && "$(ulimit -n)" -lt 10100 ]]; then
  echo "run.sh: warning: ulimit -n is $(ulimit -n); scenario c needs > 10100" >&2
fi

if [[ ! -d "$BENCH_DIR/node_modules/ws" ]]; then
  echo "run.sh: installing bench dependencies (npm ci)" >&2
  (cd "$BENCH_DIR" && npm ci --no-audit --no-fund >&2)
fi

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS_DIR="$BENCH_DIR/results"
mkdir -p "$RESULTS_DIR"
OUT="$RESULTS_DIR/$STAMP.jsonl"
LOG_DIR="$RESULTS_DIR/$STAMP.logs"
mkdir -p "$LOG_DIR"

# One HS256 secret per session; ours and ws-phx verify the same kind of token.
JWT_SECRET="bench-$(random_hex 24)"

# TLS material for the wss scenarios: made once per session (a fresh CA each time, so nothing
# trusts it after the session), deleted on exit. TLS_DIR stays empty if none is selected.
TLS_DIR=""
TLS_ERROR=""
for s in ${SCENARIOS//,/ }; do
  if is_tls_scenario "$s"; then
    TLS_DIR="$(mktemp -d /tmp/qtrealtime-bench-tls.XXXXXX)"
    if ! make_bench_certs "$TLS_DIR" 2>"$LOG_DIR/certs.log"; then
      TLS_ERROR="could not make the TLS certificates (see $LOG_DIR/certs.log)"
      log "TLS scenarios: SKIPPED - $TLS_ERROR"
    fi
    break
  fi
done

# ---- server life cycle ------------------------------------------------------------------------
SRV_PID=""
SRV_DATA=""

stop_server() {
  if [[ -n "$SRV_PID" ]]; then stop_pid "$SRV_PID" 30; SRV_PID=""; fi
  if [[ -n "$SRV_DATA" ]]; then rm -rf "$SRV_DATA"; SRV_DATA=""; fi
}
cleanup() {
  stop_server
  if [[ -n "$TLS_DIR" ]]; then rm -rf "$TLS_DIR"; TLS_DIR=""; fi
}
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM

# start_server <target> <logfile> [tls]: sets SRV_PID, SRV_PORT, ADAPTER. Returns 1 on failure.
# With `tls` the target serves wss only, with the session's certificate (TLS_DIR): ours and
# ws-phx through TLS_CERT_FILE / TLS_KEY_FILE, nats through servers/nats-tls.conf.
start_server() {
  local target="$1" logf="$2" tls="${3:-}"
  local tls_env=()
  [[ $tls == tls ]] && tls_env=(TLS_CERT_FILE="$TLS_DIR/server.pem" TLS_KEY_FILE="$TLS_DIR/server.key")
  case "$target" in
    ours|base)
      local bin="$SERVER_BIN"
      [[ $target == base ]] && bin="$BASELINE_BIN"
      SRV_PORT=$PORT_OURS; ADAPTER=phx
      SRV_DATA="$(mktemp -d /tmp/qtrealtime-bench.XXXXXX)"
      # Tenant limits are raised far above the benchmark: the upstream defaults (200 users,
      # 100 events/s, 100 joins/s) would refuse it. Same env names as upstream (TENANT_MAX_*);
      # 1e9 is the largest value our config accepts. Loopback only; warnings-only logging
      # (the peers log nothing per connection either).
      # OURS_EXTRA_ENV="K=V K2=V2" adds variables (e.g. QT_NO_GLIB=1) for experiments, to both
      # ours and base; BASE_EXTRA_ENV adds more to base only, after them (a later one wins), so
      # that one binary can run against itself with one setting changed, e.g.
      # BASE_EXTRA_ENV="TENANT_HISTORY_SIZE=0" (fan-out without broadcast history, issue 19).
      local extra_env="${OURS_EXTRA_ENV:-}"
      [[ $target == base ]] && extra_env="$extra_env ${BASE_EXTRA_ENV:-}"
      # shellcheck disable=SC2086  # word splitting of the extra variables is intended
      setsid nice -n "$NICE" taskset -c 0 env PORT="$SRV_PORT" SEED_SELF_HOST=true API_JWT_SECRET="$JWT_SECRET" \
        DATA_DIR="$SRV_DATA" LISTEN_ADDRESS=127.0.0.1 LOG_LEVEL=warning \
        TENANT_MAX_CONCURRENT_USERS=1000000 TENANT_MAX_EVENTS_PER_SECOND=1000000000 \
        TENANT_MAX_BYTES_PER_SECOND=1000000000 TENANT_MAX_JOINS_PER_SECOND=1000000 \
        TENANT_MAX_CHANNELS_PER_CLIENT=100 "${tls_env[@]}" \
        $extra_env \
        "$bin" --workers 1 >"$logf" 2>&1 &
      ;;
    ws-phx)
      SRV_PORT=$PORT_WSPHX; ADAPTER=phx
      setsid nice -n "$NICE" taskset -c 0 env API_JWT_SECRET="$JWT_SECRET" "${tls_env[@]}" \
        node "$BENCH_DIR/servers/ws-phx.js" "$SRV_PORT" >"$logf" 2>&1 &
      ;;
    nats)
      SRV_PORT=$PORT_NATS; ADAPTER=nats
      if [[ $tls == tls ]]; then
        # nats-tls.conf names the files as $BENCH_TLS_CERT / $BENCH_TLS_KEY (environment).
        setsid nice -n "$NICE" taskset -c 0 env BENCH_TLS_CERT="$TLS_DIR/server.pem" BENCH_TLS_KEY="$TLS_DIR/server.key" \
          nats-server -c "$BENCH_DIR/servers/nats-tls.conf" >"$logf" 2>&1 &
      else
        setsid nice -n "$NICE" taskset -c 0 nats-server -c "$BENCH_DIR/servers/nats.conf" >"$logf" 2>&1 &
      fi
      ;;
  esac
  SRV_PID=$!
  local _
  for _ in $(seq 1 150); do # up to 15 s
    if ! kill -0 "$SRV_PID" 2>/dev/null; then log "$target exited during start-up (see $logf)"; SRV_PID=""; return 1; fi
    if port_open "$SRV_PORT"; then boost "$SRV_PID"; return 0; fi
    sleep 0.1
  done
  log "$target did not accept TCP on 127.0.0.1:$SRV_PORT within 15 s (see $logf)"
  stop_server
  return 1
}

# Append a JSON object made from key=value pairs (values are JSON) to the results file.
append_json() { node -e 'const o={};for(const kv of process.argv.slice(1)){const i=kv.indexOf("=");o[kv.slice(0,i)]=JSON.parse(kv.slice(i+1));}console.log(JSON.stringify(o))' "$@" >>"$OUT"; }

# ---- the physical-limit probe (calibrates this VM for this session) ----------------------------
run_probe() {
  if ! command -v gcc >/dev/null; then log "probe skipped: no gcc"; return; fi
  local bin="$LOG_DIR/fanout"
  gcc -O2 -o "$bin" "$BENCH_DIR/probe/fanout.c"
  local k secs=3
  [[ $QUICK -eq 1 ]] && secs=1
  for k in 1 16; do
    local line
    # shellcheck disable=SC2016  # $$ and $0.. belong to the inner shell
    if line=$(timeout -k 2 20 setsid sh -c 'echo "$0" >/proc/self/autogroup 2>/dev/null; exec nice -n "$0" "$@"' \
      "$NICE" "$bin" 1000 200 "$k" "$secs"); then
      node -e 'const o=JSON.parse(process.argv[1]);console.log(JSON.stringify({target:"probe",scenario:"probe",rep:1,session:process.argv[2],...o}))' "$line" "$STAMP" >>"$OUT"
      log "probe k=$k: $line"
    else
      log "probe k=$k failed"
    fi
  done
}

# ---- main loop ----------------------------------------------------------------------------------
IFS=',' read -r -a TARGET_LIST <<<"$TARGETS"
IFS=',' read -r -a SCEN_LIST <<<"$SCENARIOS"

OURS_OK=1
if [[ " ${TARGET_LIST[*]} " == *" ours "* ]] && [[ ! -x "$SERVER_BIN" ]]; then
  log "ours: SKIPPED - $SERVER_BIN does not exist (build it: cmake --build build --target realtime-server)"
  OURS_OK=0
fi
BASE_OK=1
if [[ " ${TARGET_LIST[*]} " == *" base "* ]] && [[ ! -x "$BASELINE_BIN" ]]; then
  log "base: SKIPPED - no --baseline-server binary (${BASELINE_BIN:-none given})"
  BASE_OK=0
fi
NATS_OK=1
if [[ " ${TARGET_LIST[*]} " == *" nats "* ]] && ! command -v nats-server >/dev/null; then
  log "nats: SKIPPED - nats-server not installed (apt-get install nats-server)"
  NATS_OK=0
fi

log "results -> $OUT (server logs in $LOG_DIR)"
[[ $PROBE -eq 1 ]] && run_probe

for scen in "${SCEN_LIST[@]}"; do
  # LOADGEN_EXTRA_ARGS="--conc 1000" is appended to every scenario's options (later options win;
  # the loadgen records its parameters in each result line) for experiments.
  ARGS="$(scenario_args "$scen") ${LOADGEN_EXTRA_ARGS:-}"
  NAME="$(scenario_name "$scen")"
  TLS_MODE=""
  if is_tls_scenario "$scen"; then
    TLS_MODE=tls
    ARGS="$ARGS --ca $TLS_DIR/ca.pem"
  fi
  for rep in $(seq 1 "$REPS"); do
    for target in "${TARGET_LIST[@]}"; do
      meta=(target="\"$target\"" scenario="\"$scen\"" rep="$rep" session="\"$STAMP\"")
      if [[ $target == ours && $OURS_OK -eq 0 ]]; then
        append_json "${meta[@]}" skipped="\"binary missing: $SERVER_BIN\""; continue
      fi
      if [[ $target == base && $BASE_OK -eq 0 ]]; then
        append_json "${meta[@]}" skipped="\"no baseline binary\""; continue
      fi
      if [[ $target == nats && $scen == f ]]; then
        append_json "${meta[@]}" skipped="\"not comparable: nats verifies no JWT and has no channel join\""; continue
      fi
      if [[ $target == nats && $NATS_OK -eq 0 ]]; then
        append_json "${meta[@]}" skipped="\"nats-server not installed\""; continue
      fi
      if [[ -n $TLS_MODE && -n $TLS_ERROR ]]; then
        append_json "${meta[@]}" error="\"$TLS_ERROR\""; continue
      fi
      case "$target" in ours|base) p=$PORT_OURS ;; ws-phx) p=$PORT_WSPHX ;; nats) p=$PORT_NATS ;; *) log "unknown target $target"; exit 64 ;; esac
      if port_open "$p"; then
        log "$target: port $p is already in use; not measuring someone else's server"
        append_json "${meta[@]}" error="\"port $p already in use\""; continue
      fi
      busy=$(wait_quiet)
      logf="$LOG_DIR/$target-$scen-$rep.log"
      log "scenario $scen ($NAME) rep $rep/$REPS: $target"
      if ! start_server "$target" "$logf" "$TLS_MODE"; then
        append_json "${meta[@]}" error="\"server failed to start (see $logf)\""; continue
      fi
      metajson="{\"target\":\"$target\",\"scenario\":\"$scen\",\"rep\":$rep,\"session\":\"$STAMP\",\"preRunBusyPct\":$busy}"
      if [[ $target == ours || $target == base ]]; then
        # The extra variables this server ran with, kept with its figures.
        extra="${OURS_EXTRA_ENV:-}"
        [[ $target == base ]] && extra="$extra ${BASE_EXTRA_ENV:-}"
        read -r -a extra_words <<<"$extra"
        if [[ ${#extra_words[@]} -gt 0 ]]; then
          metajson="$(node -e 'const o=JSON.parse(process.argv[1]);o.serverExtraEnv=process.argv.slice(2).join(" ");console.log(JSON.stringify(o))' "$metajson" "${extra_words[@]}")"
        fi
      fi
      if [[ $target == nats && $scen == j ]]; then
        # Kept with the figures, so that nobody reads nats' joins/s as the same work as ours.
        metajson="${metajson%\}},\"comparability\":\"nats verifies no JWT and has no channel join: after the TLS handshake and the upgrade its join is CONNECT + SUB + PING/PONG; TLS handshakes/s compare like for like, connects/s and joins/s do not\"}"
      fi
      set +e
      # shellcheck disable=SC2086  # ARGS is a list of options
      timeout -k 5 75 setsid nice -n "$NICE" taskset -c 1 node "$BENCH_DIR/loadgen.js" --autogroup-nice "$NICE" \
        --adapter "$ADAPTER" --port "$SRV_PORT" \
        --jwt-secret "$JWT_SECRET" --server-pid "$SRV_PID" --meta "$metajson" $ARGS \
        >"$logf.out" 2>"$logf.loadgen"
      rc=$?
      set -e
      stop_server
      line="$(tail -n 1 "$logf.out")"
      if [[ "$line" == \{* ]]; then
        echo "$line" >>"$OUT"
        # shellcheck disable=SC2016  # JavaScript template literals, not shell
        node -e 'const r=JSON.parse(process.argv[1]);const f=(x)=>x==null?"-":x;console.error(r.error?`   error: ${r.error}`:r.params&&r.params.mode==="storm"?`   ${r.tlsHandshakesPerSec==null?"":`${f(r.tlsHandshakesPerSec)} TLS handshakes/s (p99 ${f(r.tlsHandshakeLatencyMs&&r.tlsHandshakeLatencyMs.p99)} ms), `}${f(r.connectsPerSec)} connects/s, ${f(r.joinsPerSec)} joins/s, join p50 ${f(r.joinLatencyMs&&r.joinLatencyMs.p50)} ms, p99 ${f(r.joinLatencyMs&&r.joinLatencyMs.p99)} ms, connect p99 ${f(r.connectLatencyMs&&r.connectLatencyMs.p99)} ms, ${f(r.serverCpuUsPerJoin)} us/join, idle ${f(r.serverBytesPerIdleConn)} B/conn, server ${f(r.serverCpuPct)}%, loadgen ${f(r.loadgenCpuPct)}%, failures ${f(r.connectFailures)}`:`   ${f(r.deliveriesPerSec)} deliveries/s, p50 ${f(r.latencyMs&&r.latencyMs.p50)} ms, p99 ${f(r.latencyMs&&r.latencyMs.p99)} ms, ${f(r.serverCpuUsPerDelivery)} us/delivery, idle ${f(r.serverBytesPerIdleConn)} B/conn, loadgen ${f(r.loadgenCpuPct)}%, others ${f(r.otherProcsCpuPct)}%`)' "$line"
      else
        log "$target: loadgen exited $rc without a result (see $logf.loadgen)"
        append_json "${meta[@]}" error="\"loadgen exited $rc without output\""
      fi
    done
  done
done

log "done: $OUT"
node "$BENCH_DIR/summarize.js" "$OUT"
