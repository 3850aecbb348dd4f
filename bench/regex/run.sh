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
# shellcheck source=SCRIPTDIR/../lib/common.sh
source "$BENCH_DIR/lib/common.sh"
# shellcheck source=SCRIPTDIR/../lib/pg-bench.sh
source "$BENCH_DIR/lib/pg-bench.sh"

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
DB=regexbench
LOG_TAG=regex
# Limits of the seeded tenant beyond the common ones, far above the load.
TENANT_EXTRA='{"max_presence_events_per_second":1000000,"max_payload_size_in_kb":3000}'

while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift ;;
    --hostiles) HOSTILES="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --match-every) MATCH_EVERY="$2"; shift ;;
    --near-miss-len) NEAR_MISS_LEN="$2"; shift ;;
    --hostile-filter) HOSTILE_FILTER="$2"; shift ;;
    --victim-filter) VICTIM_FILTER="$2"; shift ;;
    --rls) RLS=1 ;;
    --port) PORT="$2"; shift ;;
    --nice) NICE="$2"; shift ;;
    --quick) REPS=1; DURATION=4; WARMUP=1; DRAIN=3; STALL=2 ;;
    *) pg_common_option "$@"; shift "$PG_OPT_ARGS"; continue ;;
  esac
  shift
done
require_server_bin "$PWD"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps must be a positive integer" >&2; exit 64; }

raise_fd_limit
init_results regex
install_cleanup
copy_server_bin

# ---- PostgreSQL ---------------------------------------------------------------------------------
start_postgres
create_bench_db
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
JWT_SECRET="$DB-$(random_hex 24)"
drop_slots() { drop_inactive_slots bench_rx_ || true; }
print_run_summary() {
  # shellcheck disable=SC2016  # JavaScript template literals, not shell
  node -e 'const r=JSON.parse(process.argv[1]);const l=r.latencyMs||{};console.error(r.error?`   error: ${r.error}`:`   victim p50 ${l.p50} ms, p99 ${l.p99} ms (${l.samples}/${l.expected}), ${r.insertedPerSec} rows/s, server ${r.serverCpuPct}% (${r.serverCpuMsPerRow} ms/row), pg ${r.pgCpuPct}%, others ${r.othersCpuPct}%, correct ${r.correct}${r.serverDiedDuringRun?" SERVER DIED":""}`)' "$1"
}

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
    meta="{\"scenario\":\"regex\",\"session\":\"$STAMP\",\"run\":$RUN,\"rep\":$rep,\"hostile\":$h,\"binarySha\":\"$BIN_SHA\",\"rls\":$RLS}"
    begin_run "rep$rep-h$h" "$meta" || continue
    reset_items
    drop_slots
    start_run_server "$BIN" "bench_rx_${STAMP,,}_$RUN" || continue
    log "run $RUN: rep $rep, $h hostile subscriptions"
    run_loadgen --hostile "$h" --hostile-filter "$HOSTILE_FILTER" --victim-filter "$VICTIM_FILTER" \
      --rate "$RATE" --match-every "$MATCH_EVERY" --near-miss-len "$NEAR_MISS_LEN"
    stop_server
    drop_slots
    record_result
  done
done
drop_slots
log "done: $OUT"
node "$HERE/summarize.js" "$OUT"
