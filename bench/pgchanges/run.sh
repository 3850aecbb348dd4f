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
# shellcheck source=SCRIPTDIR/../lib/common.sh
source "$BENCH_DIR/lib/common.sh"
# shellcheck source=SCRIPTDIR/../lib/pg-bench.sh
source "$BENCH_DIR/lib/pg-bench.sh"

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
DB=pgbench
LOG_TAG=pgchanges

while [[ $# -gt 0 ]]; do
  case "$1" in
    --baseline-server) BASELINE_BIN="$2"; shift ;;
    --ks) KS="$2"; shift ;;
    --policies) POLICIES="$2"; shift ;;
    --strategies) STRATEGIES="$2"; shift ;;
    --modes) MODES="$2"; shift ;;
    --quick) DURATION=3; WARMUP=1; DRAIN=5; STALL=3 ;;
    *) pg_common_option "$@"; shift "$PG_OPT_ARGS"; continue ;;
  esac
  shift
done
require_server_bin "$REPO_DIR"
BUILD_LIST=(ours)
if [[ -n "$BASELINE_BIN" ]]; then
  [[ "$BASELINE_BIN" = /* ]] || BASELINE_BIN="$PWD/$BASELINE_BIN"
  [[ -x "$BASELINE_BIN" ]] || { echo "run.sh: no baseline binary at $BASELINE_BIN" >&2; exit 66; }
  BUILD_LIST=(ours base)
fi

raise_fd_limit
init_results pgchanges
install_cleanup

# ---- PostgreSQL ---------------------------------------------------------------------------------
start_postgres
create_bench_db
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
JWT_SECRET="$DB-$(random_hex 24)"
print_run_summary() {
  # shellcheck disable=SC2016  # JavaScript template literals, not shell
  node -e 'const r=JSON.parse(process.argv[1]);const l=r.latencyMs||{};console.error(r.error?`   error: ${r.error}`:`   ${r.deliveriesPerSec} deliveries/s, ${r.changesDeliveredPerSec} changes/s (inserted ${r.insertedPerSec}/s), p50 ${l.p50} ms, p99 ${l.p99} ms, server ${r.serverCpuPct}%, pg ${r.pgCpuPct}%, loadgen ${r.loadgenCpuPct}%, undelivered ${r.undelivered}, all delivered ${r.allDelivered}${r.serverDiedDuringRun?" SERVER DIED":""}`)' "$1"
}

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
        meta="{\"scenario\":\"g\",\"session\":\"$STAMP\",\"run\":$RUN,\"strategy\":\"$strategy\",\"build\":\"$build\",\"policy\":\"$policy\",\"k\":$k,\"mode\":\"$mode\"}"
        begin_run "$policy-k$k-$mode-$strategy-$build" "$meta" || continue
        # Fresh state: the policy, an empty table, no subscription rows, no inactive bench slots.
        reset_items -c "DROP POLICY IF EXISTS bench_read ON items" -c "$(policy_sql "$policy")"
        drop_inactive_slots bench_pgc_
        start_run_server "$bin" "bench_pgc_${STAMP,,}_$RUN" RLS_STRATEGY="$strategy" || continue
        log "run $RUN: policy $policy, K=$k, $mode, RLS_STRATEGY=$strategy, build $build"
        # shellcheck disable=SC2086  # MODE_ARGS is a list of options
        run_loadgen --subs "$k" --policy "$policy" $MODE_ARGS
        stop_server
        record_result
      done
      done
    done
  done
done
drop_inactive_slots bench_pgc_ || true
log "done: $OUT"
node "$HERE/summarize.js" "$OUT"
