#!/usr/bin/env bash
# Issue 17 part 2: hostile regex filters must not slow another subscriber down. A VICTIM's
# commit -> delivery latency for one-row inserts, with 0 and with H HOSTILE subscriptions on the
# same table whose filter is `body=match.^(a|a|aa)*$`, interleaved in one session.
#
#   bench/regex/run.sh [--server build/bin/realtime-server] [--reps 3] [--hostiles 0,100]
#                      [--rate 20] [--duration 10] [--warmup 3] [--drain 5] [--stall 3]
#                      [--match-every 20] [--near-miss-len 28] [--hostile-filter F]
#                      [--victim-filter F] [--rls] [--pg-env FILE] [--port 14100] [--nice -15]
#                      [--quick]
#
# The server binary is copied to a private temporary directory first, so a rebuild during the
# session does not change what is measured. A throwaway PostgreSQL 15 cluster
# (tests/support/postgres/pg-cluster.sh; or --pg-env of a running one) gets database regexbench
# with table items(id bigint primary key, body text, created_at timestamptz default
# clock_timestamp()), SELECT granted to authenticated, publication supabase_realtime FOR TABLE
# items (--rls: RLS enabled with a USING (true) policy for authenticated; default off, so only the
# filters differ between the configurations).
# For each rep and each H of --hostiles (order reversed on even reps: 0,100 / 100,0 / 0,100 ...,
# so a drift of the machine hits both alike): empty items, start our server (pinned to CPU 0,
# --workers 1, tenant `regexbench` seeded with a fresh slot name and limits far above the load),
# run loadgen.js pinned to CPU 1; stop the server by PID, drop its slot, append the JSON line to
# bench/results/regex-<UTC stamp>.jsonl. PostgreSQL is not pinned.
# The loadgen: H hostile clients (each its own socket, token and channel, filter --hostile-filter)
# and one victim (no filter, or --victim-filter, e.g. id=gt.0) on the same table; one psql writer
# inserts one row per transaction at --rate rows/s: every --match-every-th row has body 'aaaa'
# (matches the hostile pattern), the others the near miss 'a' x --near-miss-len + 'b'. Latency =
# created_at vs the victim's receive time, rows of the --duration s window after --warmup s.
# Correctness per run: the victim gets every row once, in order; every hostile gets exactly the
# matching rows, once, in order, and no near miss.
# Summary (summarize.js): p50/p99 per H per rep, median over reps, H vs 0 (difference and ratio),
# and the issue's target: hostile ≤ calm × 1.2 + 5 ms, for p50 and p99.
# Bounds: loadgen hard exit at warm-up + window + drain + 40 s (at most 120 s) and a `timeout`
# 15 s later; the server is killed by PID; PostgreSQL and servers are stopped on exit (trap).
# --quick: 1 rep, 4 s window, 1 s warm-up (a smoke test, about 1 minute).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$HERE")"
REPO_DIR="$(dirname "$BENCH_DIR")"

SERVER_BIN="$REPO_DIR/build/bin/realtime-server"
REPS=3
HOSTILES="0,100"
RATE=20
DURATION=10
WARMUP=3
DRAIN=5
STALL=3
MATCH_EVERY=20
NEAR_MISS_LEN=28
HOSTILE_FILTER='body=match.^(a|a|aa)*$'
VICTIM_FILTER=''
RLS=0
PG_ENV=""
NICE=-15
PORT=14100

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) SERVER_BIN="$2"; shift ;;
    --reps) REPS="$2"; shift ;;
    --hostiles) HOSTILES="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --drain) DRAIN="$2"; shift ;;
    --stall) STALL="$2"; shift ;;
    --match-every) MATCH_EVERY="$2"; shift ;;
    --near-miss-len) NEAR_MISS_LEN="$2"; shift ;;
    --hostile-filter) HOSTILE_FILTER="$2"; shift ;;
    --victim-filter) VICTIM_FILTER="$2"; shift ;;
    --rls) RLS=1 ;;
    --pg-env) PG_ENV="$2"; shift ;;
    --port) PORT="$2"; shift ;;
    --nice) NICE="$2"; shift ;;
    --quick) REPS=1; DURATION=4; WARMUP=1; DRAIN=3; STALL=2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
  shift
done
[[ "$SERVER_BIN" = /* ]] || SERVER_BIN="$PWD/$SERVER_BIN"
[[ -x "$SERVER_BIN" ]] || { echo "run.sh: no server binary at $SERVER_BIN" >&2; exit 66; }
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps must be a positive integer" >&2; exit 64; }

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS_DIR="$BENCH_DIR/results"
OUT="$RESULTS_DIR/regex-$STAMP.jsonl"
LOG_DIR="$RESULTS_DIR/regex-$STAMP.logs"
mkdir -p "$LOG_DIR"
log() { printf '[regex %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

PG_DIR=""
SRV_PID=""
SRV_DATA=""
BIN_DIR=""
stop_server() {
  if [[ -n "$SRV_PID" ]]; then
    kill -TERM "$SRV_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
    SRV_PID=""
  fi
  if [[ -n "$SRV_DATA" ]]; then rm -rf "$SRV_DATA"; SRV_DATA=""; fi
}
cleanup() {
  stop_server
  if [[ -n "$PG_DIR" ]]; then "$REPO_DIR/tests/support/postgres/pg-cluster.sh" stop "$PG_DIR" >/dev/null 2>&1 || true; PG_DIR=""; fi
  if [[ -n "$BIN_DIR" ]]; then rm -rf "$BIN_DIR"; BIN_DIR=""; fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# ---- a private copy of the server -----------------------------------------------------------------
BIN_DIR="$(mktemp -d /tmp/qtrealtime-regexbench-bin.XXXXXX)"
cp "$SERVER_BIN" "$BIN_DIR/realtime-server"
BIN="$BIN_DIR/realtime-server"
BIN_SHA="$(sha256sum "$BIN" | cut -c1-12)"

# ---- PostgreSQL ---------------------------------------------------------------------------------
if [[ -z "$PG_ENV" ]]; then
  PG_DIR="$LOG_DIR/pg"
  "$REPO_DIR/tests/support/postgres/pg-cluster.sh" start "$PG_DIR" >&2
  PG_ENV="$PG_DIR/pg.env"
fi
# shellcheck disable=SC1090
source "$PG_ENV"
PSQL="$RT_PG_BIN/psql"
DB=regexbench
su_sql() { PGPASSWORD="$RT_PG_SUPERPASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_SUPERUSER" "$@"; }
rt_sql() { PGPASSWORD="$RT_PG_PASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_USER" -d "$DB" "$@"; }

# PostgreSQL gets the same scheduler priority as the server and the loadgen (see bench/pgchanges).
PM_PID=$(head -n 1 "$RT_PG_DATA/postmaster.pid")
echo "$NICE" >"/proc/$PM_PID/autogroup" 2>/dev/null || log "could not raise PostgreSQL's priority"

su_sql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB OWNER $RT_PG_USER"
rt_sql <<'SQL'
CREATE TABLE items (id bigint PRIMARY KEY, body text NOT NULL, created_at timestamptz DEFAULT clock_timestamp());
GRANT SELECT ON items TO authenticated;
CREATE PUBLICATION supabase_realtime FOR TABLE items;
SQL
if [[ $RLS -eq 1 ]]; then
  rt_sql -c "ALTER TABLE items ENABLE ROW LEVEL SECURITY" \
    -c "CREATE POLICY bench_read ON items FOR SELECT TO authenticated USING (true)"
fi

# ---- runs -----------------------------------------------------------------------------------------
JWT_SECRET="regexbench-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
append_error() { node -e 'console.log(JSON.stringify({...JSON.parse(process.argv[1]),error:process.argv[2]}))' "$1" "$2" >>"$OUT"; }
drop_slots() { su_sql -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'bench_rx_%' AND NOT active" >/dev/null || true; }

HARD=$((WARMUP + DURATION + DRAIN + 40)); ((HARD > 120)) && HARD=120
IFS=',' read -r -a H_LIST <<<"$HOSTILES"
RUN=0
log "results -> $OUT (logs in $LOG_DIR); server $SERVER_BIN (copy sha256 $BIN_SHA); PostgreSQL on port $RT_PG_PORT"
log "$REPS reps x hostiles {$HOSTILES}; $RATE rows/s, window $DURATION s after $WARMUP s; hostile filter $HOSTILE_FILTER; victim filter ${VICTIM_FILTER:-none}; rls $RLS"

for rep in $(seq 1 "$REPS"); do
  order=("${H_LIST[@]}")
  if ((rep % 2 == 0)); then
    order=()
    for ((j = ${#H_LIST[@]} - 1; j >= 0; j--)); do order+=("${H_LIST[j]}"); done
  fi
  for h in "${order[@]}"; do
    RUN=$((RUN + 1))
    name="rep$rep-h$h"
    slot="bench_rx_${STAMP,,}_$RUN"
    meta="{\"scenario\":\"regex\",\"session\":\"$STAMP\",\"run\":$RUN,\"rep\":$rep,\"hostile\":$h,\"binarySha\":\"$BIN_SHA\",\"rls\":$RLS}"
    if port_open "$PORT"; then log "port $PORT in use; not measuring someone else's server"; append_error "$meta" "port in use"; continue; fi
    rt_sql -c "TRUNCATE items" \
      -c "DO \$\$ BEGIN IF to_regclass('realtime.subscription') IS NOT NULL THEN DELETE FROM realtime.subscription; END IF; END \$\$" >/dev/null
    drop_slots
    SRV_DATA="$(mktemp -d /tmp/qtrealtime-regexbench.XXXXXX)"
    node -e '
      const [secret, host, port, db, user, pw, slot] = process.argv.slice(1);
      console.log(JSON.stringify({ tenants: [{ external_id: "regexbench", jwt_secret: secret,
        max_concurrent_users: 1000000, max_events_per_second: 1000000000, max_bytes_per_second: 1000000000,
        max_joins_per_second: 1000000, max_channels_per_client: 100, max_presence_events_per_second: 1000000,
        max_payload_size_in_kb: 3000,
        extensions: [{ type: "postgres_cdc_rls", settings: { region: "local", db_host: host, db_port: port,
          db_name: db, db_user: user, db_password: pw, ssl_enforced: false, slot_name: slot } }] }] }));' \
      "$JWT_SECRET" "$RT_PG_HOST" "$RT_PG_PORT" "$DB" "$RT_PG_USER" "$RT_PG_PASSWORD" "$slot" >"$SRV_DATA/tenants.json"
    logf="$LOG_DIR/$name.log"
    setsid nice -n "$NICE" taskset -c 0 env PORT="$PORT" LISTEN_ADDRESS=127.0.0.1 DATA_DIR="$SRV_DATA" \
      SEED_SELF_HOST=true API_JWT_SECRET="$JWT_SECRET" SEED_TENANTS_FILE="$SRV_DATA/tenants.json" \
      LOG_LEVEL=warning \
      TENANT_MAX_CONCURRENT_USERS=1000000 TENANT_MAX_EVENTS_PER_SECOND=1000000000 \
      TENANT_MAX_BYTES_PER_SECOND=1000000000 TENANT_MAX_JOINS_PER_SECOND=1000000 \
      ${OURS_EXTRA_ENV:-} "$BIN" --workers 1 >"$logf" 2>&1 &
    SRV_PID=$!
    up=0
    for _ in $(seq 1 150); do
      kill -0 "$SRV_PID" 2>/dev/null || break
      if port_open "$PORT"; then up=1; break; fi
      sleep 0.1
    done
    if [[ $up -eq 0 ]]; then log "$name: server did not start (see $logf)"; append_error "$meta" "server did not start"; stop_server; continue; fi
    echo "$NICE" >"/proc/$SRV_PID/autogroup" 2>/dev/null || true
    log "run $RUN: rep $rep, $h hostile subscriptions"
    set +e
    timeout -k 5 $((HARD + 15)) setsid nice -n "$NICE" taskset -c 1 node "$HERE/loadgen.js" --autogroup-nice "$NICE" \
      --port "$PORT" --tenant regexbench --jwt-secret "$JWT_SECRET" --hostile "$h" \
      --hostile-filter "$HOSTILE_FILTER" --victim-filter "$VICTIM_FILTER" \
      --rate "$RATE" --match-every "$MATCH_EVERY" --near-miss-len "$NEAR_MISS_LEN" \
      --duration "$DURATION" --warmup "$WARMUP" --drain "$DRAIN" --stall "$STALL" --hard-timeout "$HARD" \
      --pg-env "$PG_ENV" --db "$DB" --server-pid "$SRV_PID" --meta "$meta" >"$logf.out" 2>"$logf.loadgen"
    rc=$?
    set -e
    alive=1; kill -0 "$SRV_PID" 2>/dev/null || alive=0
    stop_server
    drop_slots
    line="$(tail -n 1 "$logf.out" 2>/dev/null || true)"
    if [[ "$line" == \{* ]]; then
      if [[ $alive -eq 0 ]]; then
        line=$(node -e 'const r=JSON.parse(process.argv[1]);r.serverDiedDuringRun=true;console.log(JSON.stringify(r))' "$line")
      fi
      echo "$line" >>"$OUT"
      node -e 'const r=JSON.parse(process.argv[1]);const l=r.latencyMs||{};console.error(r.error?`   error: ${r.error}`:`   victim p50 ${l.p50} ms, p99 ${l.p99} ms (${l.samples}/${l.expected}), ${r.insertedPerSec} rows/s, server ${r.serverCpuPct}% (${r.serverCpuMsPerRow} ms/row), pg ${r.pgCpuPct}%, others ${r.othersCpuPct}%, correct ${r.correct}${r.serverDiedDuringRun?" SERVER DIED":""}`)' "$line"
    else
      log "$name: loadgen exited $rc without a result (see $logf.loadgen)"
      append_error "$meta" "loadgen exited $rc without output"
    fi
  done
done
drop_slots
log "done: $OUT"
node "$HERE/summarize.js" "$OUT"
