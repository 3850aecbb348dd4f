#!/usr/bin/env bash
# Scenario g: postgres_changes with row level security, our batched RLS strategy vs the naive one
# (one visibility query per subscriber per change, upstream's way), interleaved in one session.
#
#   bench/pgchanges/run.sh [--server build/bin/realtime-server] [--baseline-server BIN] [--ks 1,100,1000]
#                          [--policies all,owner] [--strategies batched,naive] [--modes window,rate]
#                          [--duration 12] [--warmup 3] [--drain 10] [--stall 8] [--pg-env FILE] [--quick]
#
# A throwaway PostgreSQL 15 cluster (tests/support/postgres/pg-cluster.sh; or --pg-env of a running
# one) gets database pgbench with table items(id bigint primary key, owner text, v int,
# created_at timestamptz default clock_timestamp()), RLS enabled, SELECT granted to authenticated,
# and publication supabase_realtime FOR TABLE items. For each policy × K × mode × strategy
# (strategies innermost, so batched and naive alternate): set the policy, empty items, start our
# server (RLS_STRATEGY=<strategy>, pinned to CPU 0, tenant `pgbench` seeded with a fresh slot
# name) and run loadgen.js pinned to CPU 1; stop the server by PID, drop its slot, append the JSON
# line to bench/results/pgchanges-<UTC stamp>.jsonl. PostgreSQL is not pinned.
#
# --baseline-server: each run is repeated, right after ours, with another build of our server (e.g.
# the previous main's release binary); its lines carry "build":"base" (ours: "build":"ours").
# Policies: all   = USING (true) for authenticated: every subscriber sees every row;
#           owner = USING (owner = request.jwt.claims->>'sub'): each row is one subscriber's.
# Modes:    window = closed loop (100-row transactions, at most 400 rows undelivered): the
#                    sustained delivery rate; latency is queueing there;
#           rate   = open loop at the issue's targets, 50-row transactions: policy all
#                    min(40,000/K, 2,000) rows/s (40,000 deliveries/s at K = 100 and 1,000),
#                    policy owner 500 rows/s: latency at the target load, and whether it keeps up.
# Drain: up to --drain s after the writer stops, ended early after --stall s without a delivery
# (8 s: one merged RLS batch at K = 1,000 can take several seconds before its first frame).
# Every run is bounded (loadgen hard exit at subscribe + warm-up + window + drain + 30 s, at most
# 120 s, and a `timeout` 15 s later); the server is killed by PID.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$HERE")"
REPO_DIR="$(dirname "$BENCH_DIR")"

SERVER_BIN="$REPO_DIR/build/bin/realtime-server"
BASELINE_BIN=""
KS="1,100,1000"
POLICIES="all,owner"
STRATEGIES="batched,naive"
MODES="window,rate"
DURATION=12
WARMUP=3
DRAIN=10
STALL=8
PG_ENV=""
NICE=-15
PORT=14000

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) SERVER_BIN="$2"; shift ;;
    --baseline-server) BASELINE_BIN="$2"; shift ;;
    --ks) KS="$2"; shift ;;
    --policies) POLICIES="$2"; shift ;;
    --strategies) STRATEGIES="$2"; shift ;;
    --modes) MODES="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --drain) DRAIN="$2"; shift ;;
    --stall) STALL="$2"; shift ;;
    --pg-env) PG_ENV="$2"; shift ;;
    --quick) DURATION=3; WARMUP=1; DRAIN=5; STALL=3 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
  shift
done
[[ "$SERVER_BIN" = /* ]] || SERVER_BIN="$REPO_DIR/$SERVER_BIN"
[[ -x "$SERVER_BIN" ]] || { echo "run.sh: no server binary at $SERVER_BIN" >&2; exit 66; }
BUILD_LIST=(ours)
if [[ -n "$BASELINE_BIN" ]]; then
  [[ "$BASELINE_BIN" = /* ]] || BASELINE_BIN="$PWD/$BASELINE_BIN"
  [[ -x "$BASELINE_BIN" ]] || { echo "run.sh: no baseline binary at $BASELINE_BIN" >&2; exit 66; }
  BUILD_LIST=(ours base)
fi

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS_DIR="$BENCH_DIR/results"
OUT="$RESULTS_DIR/pgchanges-$STAMP.jsonl"
LOG_DIR="$RESULTS_DIR/pgchanges-$STAMP.logs"
mkdir -p "$LOG_DIR"
log() { printf '[pgchanges %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# ---- PostgreSQL ---------------------------------------------------------------------------------
PG_DIR=""
SRV_PID=""
SRV_DATA=""
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
  if [[ -n "$PG_DIR" ]]; then "$REPO_DIR/tests/support/postgres/pg-cluster.sh" stop "$PG_DIR" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

if [[ -z "$PG_ENV" ]]; then
  PG_DIR="$LOG_DIR/pg"
  "$REPO_DIR/tests/support/postgres/pg-cluster.sh" start "$PG_DIR" >&2
  PG_ENV="$PG_DIR/pg.env"
fi
# shellcheck disable=SC1090
source "$PG_ENV"
PSQL="$RT_PG_BIN/psql"
DB=pgbench
su_sql() { PGPASSWORD="$RT_PG_SUPERPASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_SUPERUSER" "$@"; }
rt_sql() { PGPASSWORD="$RT_PG_PASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_USER" -d "$DB" "$@"; }

# PostgreSQL gets the same scheduler priority as the server and the loadgen: pg_ctl starts the
# postmaster in a session of its own, whose autogroup every backend inherits.
PM_PID=$(head -n 1 "$RT_PG_DATA/postmaster.pid")
echo "$NICE" >"/proc/$PM_PID/autogroup" 2>/dev/null || log "could not raise PostgreSQL's priority"

su_sql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB OWNER $RT_PG_USER"
rt_sql <<'SQL'
CREATE TABLE items (id bigint PRIMARY KEY, owner text, v int, created_at timestamptz DEFAULT clock_timestamp());
ALTER TABLE items ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON items TO authenticated;
CREATE PUBLICATION supabase_realtime FOR TABLE items;
SQL

policy_sql() {
  case "$1" in
    all) echo "CREATE POLICY bench_read ON items FOR SELECT TO authenticated USING (true)" ;;
    owner) echo "CREATE POLICY bench_read ON items FOR SELECT TO authenticated USING (owner = current_setting('request.jwt.claims', true)::jsonb->>'sub')" ;;
  esac
}

# ---- runs -----------------------------------------------------------------------------------------
JWT_SECRET="pgbench-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
append_error() { node -e 'console.log(JSON.stringify({...JSON.parse(process.argv[1]),error:process.argv[2]}))' "$1" "$2" >>"$OUT"; }

HARD=$((WARMUP + DURATION + DRAIN + 30)); ((HARD > 120)) && HARD=120
RUN=0
IFS=',' read -r -a POLICY_LIST <<<"$POLICIES"
IFS=',' read -r -a K_LIST <<<"$KS"
IFS=',' read -r -a MODE_LIST <<<"$MODES"
IFS=',' read -r -a STRAT_LIST <<<"$STRATEGIES"
log "results -> $OUT (logs in $LOG_DIR); server $SERVER_BIN${BASELINE_BIN:+, baseline $BASELINE_BIN}; PostgreSQL on port $RT_PG_PORT"

for policy in "${POLICY_LIST[@]}"; do
  for k in "${K_LIST[@]}"; do
    for mode in "${MODE_LIST[@]}"; do
      if [[ $mode == window ]]; then
        MODE_ARGS="--mode window --txn 100 --window 400"
      elif [[ $policy == all ]]; then
        rate=$((40000 / k)); ((rate > 2000)) && rate=2000
        MODE_ARGS="--mode rate --txn 50 --rate $rate"
      else
        MODE_ARGS="--mode rate --txn 50 --rate 500"
      fi
      for strategy in "${STRAT_LIST[@]}"; do
      for build in "${BUILD_LIST[@]}"; do
        bin="$SERVER_BIN"
        [[ $build == base ]] && bin="$BASELINE_BIN"
        RUN=$((RUN + 1))
        name="$policy-k$k-$mode-$strategy-$build"
        slot="bench_pgc_${STAMP,,}_$RUN"
        meta="{\"scenario\":\"g\",\"session\":\"$STAMP\",\"run\":$RUN,\"strategy\":\"$strategy\",\"build\":\"$build\",\"policy\":\"$policy\",\"k\":$k,\"mode\":\"$mode\"}"
        if port_open "$PORT"; then log "port $PORT in use; not measuring someone else's server"; append_error "$meta" "port in use"; continue; fi
        # Fresh state: the policy, an empty table, no subscription rows, no inactive bench slots.
        rt_sql -c "DROP POLICY IF EXISTS bench_read ON items" -c "$(policy_sql "$policy")" -c "TRUNCATE items" \
          -c "DO \$\$ BEGIN IF to_regclass('realtime.subscription') IS NOT NULL THEN DELETE FROM realtime.subscription; END IF; END \$\$" >/dev/null
        su_sql -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'bench_pgc_%' AND NOT active" >/dev/null
        SRV_DATA="$(mktemp -d /tmp/qtrealtime-pgbench.XXXXXX)"
        node -e '
          const [secret, host, port, db, user, pw, slot] = process.argv.slice(1);
          console.log(JSON.stringify({ tenants: [{ external_id: "pgbench", jwt_secret: secret,
            max_concurrent_users: 1000000, max_events_per_second: 1000000000, max_bytes_per_second: 1000000000,
            max_joins_per_second: 1000000, max_channels_per_client: 100,
            extensions: [{ type: "postgres_cdc_rls", settings: { region: "local", db_host: host, db_port: port,
              db_name: db, db_user: user, db_password: pw, ssl_enforced: false, slot_name: slot } }] }] }));' \
          "$JWT_SECRET" "$RT_PG_HOST" "$RT_PG_PORT" "$DB" "$RT_PG_USER" "$RT_PG_PASSWORD" "$slot" >"$SRV_DATA/tenants.json"
        logf="$LOG_DIR/$name.log"
        setsid nice -n "$NICE" taskset -c 0 env PORT="$PORT" LISTEN_ADDRESS=127.0.0.1 DATA_DIR="$SRV_DATA" \
          SEED_SELF_HOST=true API_JWT_SECRET="$JWT_SECRET" SEED_TENANTS_FILE="$SRV_DATA/tenants.json" \
          LOG_LEVEL=warning RLS_STRATEGY="$strategy" \
          TENANT_MAX_CONCURRENT_USERS=1000000 TENANT_MAX_EVENTS_PER_SECOND=1000000000 \
          TENANT_MAX_BYTES_PER_SECOND=1000000000 TENANT_MAX_JOINS_PER_SECOND=1000000 \
          ${OURS_EXTRA_ENV:-} "$bin" --workers 1 >"$logf" 2>&1 &
        SRV_PID=$!
        up=0
        for _ in $(seq 1 150); do
          kill -0 "$SRV_PID" 2>/dev/null || break
          if port_open "$PORT"; then up=1; break; fi
          sleep 0.1
        done
        if [[ $up -eq 0 ]]; then log "$name: server did not start (see $logf)"; append_error "$meta" "server did not start"; stop_server; continue; fi
        echo "$NICE" >"/proc/$SRV_PID/autogroup" 2>/dev/null || true
        log "run $RUN: policy $policy, K=$k, $mode, RLS_STRATEGY=$strategy, build $build"
        set +e
        # shellcheck disable=SC2086
        timeout -k 5 $((HARD + 15)) setsid nice -n "$NICE" taskset -c 1 node "$HERE/loadgen.js" --autogroup-nice "$NICE" \
          --port "$PORT" --tenant pgbench --jwt-secret "$JWT_SECRET" --subs "$k" --policy "$policy" $MODE_ARGS \
          --duration "$DURATION" --warmup "$WARMUP" --drain "$DRAIN" --stall "$STALL" --hard-timeout "$HARD" --pg-env "$PG_ENV" --db "$DB" \
          --server-pid "$SRV_PID" --meta "$meta" >"$logf.out" 2>"$logf.loadgen"
        rc=$?
        set -e
        alive=1; kill -0 "$SRV_PID" 2>/dev/null || alive=0
        stop_server
        line="$(tail -n 1 "$logf.out")"
        if [[ "$line" == \{* ]]; then
          if [[ $alive -eq 0 ]]; then
            line=$(node -e 'const r=JSON.parse(process.argv[1]);r.serverDiedDuringRun=true;console.log(JSON.stringify(r))' "$line")
          fi
          echo "$line" >>"$OUT"
          node -e 'const r=JSON.parse(process.argv[1]);const l=r.latencyMs||{};console.error(r.error?`   error: ${r.error}`:`   ${r.deliveriesPerSec} deliveries/s, ${r.changesDeliveredPerSec} changes/s (inserted ${r.insertedPerSec}/s), p50 ${l.p50} ms, p99 ${l.p99} ms, server ${r.serverCpuPct}%, pg ${r.pgCpuPct}%, loadgen ${r.loadgenCpuPct}%, undelivered ${r.undelivered}, all delivered ${r.allDelivered}${r.serverDiedDuringRun?" SERVER DIED":""}`)' "$line"
        else
          log "$name: loadgen exited $rc without a result (see $logf.loadgen)"
          append_error "$meta" "loadgen exited $rc without output"
        fi
      done
      done
    done
  done
done
su_sql -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'bench_pgc_%' AND NOT active" >/dev/null || true
log "done: $OUT"
node "$HERE/summarize.js" "$OUT"
