# shellcheck shell=bash
# The plumbing of the postgres_changes benchmarks (bench/pgchanges/run.sh, bench/regex/run.sh),
# sourced after common.sh: options both take, a throwaway PostgreSQL cluster, our server per run
# (pinned to CPU 0, tenant seeded with a fresh replication slot), the loadgen pinned to CPU 1
# under a timeout, and the result line. regex was first written as a copy of pgchanges; this
# keeps one copy of what they share. What a run measures stays in each run.sh.
#
# The script sets HERE (its directory, with loadgen.js), BENCH_DIR and REPO_DIR before sourcing;
# before using the functions SERVER_BIN, DURATION, WARMUP, DRAIN, STALL, PG_ENV (the option
# defaults), NICE, PORT, LOG_TAG and DB (the database; also the tenant's external_id and the
# prefix of the JWT secret and of the temporary directories); before the runs JWT_SECRET and HARD
# (the loadgen's --hard-timeout). It defines print_run_summary <result line>.

PG_CLUSTER="$REPO_DIR/tests/support/postgres/pg-cluster.sh"
PG_DIR=""         # the cluster this script started (empty with --pg-env)
SRV_PID=""        # our server of the current run
SRV_DATA=""       # its DATA_DIR (tenants file)
BIN_DIR=""        # private copy of the server binary, if any
TENANT_EXTRA='{}' # tenant settings beyond the common limits (JSON object)

# ---- options ------------------------------------------------------------------------------------

# pg_common_option <args...>: the options both benchmarks take; exits on -h and unknown options.
# Sets PG_OPT_ARGS to the number of arguments it consumed.
pg_common_option() {
  # shellcheck disable=SC2034  # read by the caller's option loop
  PG_OPT_ARGS=2
  case "$1" in
    --server) SERVER_BIN="$2" ;;
    --duration) DURATION="$2" ;;
    --warmup) WARMUP="$2" ;;
    --drain) DRAIN="$2" ;;
    --stall) STALL="$2" ;;
    --pg-env) PG_ENV="$2" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
}

# require_server_bin <dir>: make SERVER_BIN absolute (relative to <dir>); exit 66 if it is missing.
require_server_bin() {
  [[ "$SERVER_BIN" = /* ]] || SERVER_BIN="$1/$SERVER_BIN"
  [[ -x "$SERVER_BIN" ]] || { echo "run.sh: no server binary at $SERVER_BIN" >&2; exit 66; }
}

# ---- session ------------------------------------------------------------------------------------

# init_results <name>: STAMP, OUT (bench/results/<name>-<stamp>.jsonl) and LOG_DIR next to it.
init_results() {
  STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
  RESULTS_DIR="$BENCH_DIR/results"
  OUT="$RESULTS_DIR/$1-$STAMP.jsonl"
  LOG_DIR="$RESULTS_DIR/$1-$STAMP.logs"
  mkdir -p "$LOG_DIR"
}

stop_server() {
  if [[ -n "$SRV_PID" ]]; then stop_pid "$SRV_PID" 30; SRV_PID=""; fi
  if [[ -n "$SRV_DATA" ]]; then rm -rf "$SRV_DATA"; SRV_DATA=""; fi
}

# The server, our cluster and the binary copy go away on every exit, errors and Ctrl-C included.
pg_bench_cleanup() {
  stop_server
  if [[ -n "$PG_DIR" ]]; then "$PG_CLUSTER" stop "$PG_DIR" >/dev/null 2>&1 || true; PG_DIR=""; fi
  if [[ -n "$BIN_DIR" ]]; then rm -rf "$BIN_DIR"; BIN_DIR=""; fi
}
install_cleanup() {
  trap pg_bench_cleanup EXIT
  trap 'pg_bench_cleanup; exit 130' INT TERM
}

# copy_server_bin: BIN = a private copy of SERVER_BIN, BIN_SHA its short sha256, so that a rebuild
# during the session does not change what is measured.
copy_server_bin() {
  BIN_DIR="$(mktemp -d "/tmp/qtrealtime-$DB-bin.XXXXXX")"
  cp "$SERVER_BIN" "$BIN_DIR/realtime-server"
  BIN="$BIN_DIR/realtime-server"
  # shellcheck disable=SC2034  # recorded by the caller
  BIN_SHA="$(sha256sum "$BIN" | cut -c1-12)"
}

# ---- PostgreSQL ---------------------------------------------------------------------------------

# start_postgres: a throwaway cluster in LOG_DIR/pg unless --pg-env named a running one; loads
# its pg.env (RT_PG_*), sets PSQL and gives PostgreSQL the priority of the server and the loadgen.
start_postgres() {
  if [[ -z "$PG_ENV" ]]; then
    PG_DIR="$LOG_DIR/pg"
    "$PG_CLUSTER" start "$PG_DIR" >&2
    PG_ENV="$PG_DIR/pg.env"
  fi
  # shellcheck disable=SC1090
  source "$PG_ENV"
  PSQL="$RT_PG_BIN/psql"
  # pg_ctl starts the postmaster in a session of its own, whose autogroup every backend inherits.
  local pm_pid
  pm_pid=$(head -n 1 "$RT_PG_DATA/postmaster.pid")
  echo "$NICE" >"/proc/$pm_pid/autogroup" 2>/dev/null || log "could not raise PostgreSQL's priority"
}

su_sql() { PGPASSWORD="$RT_PG_SUPERPASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_SUPERUSER" "$@"; }
rt_sql() { PGPASSWORD="$RT_PG_PASSWORD" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -h "$RT_PG_HOST" -p "$RT_PG_PORT" -U "$RT_PG_USER" -d "$DB" "$@"; }

create_bench_db() {
  su_sql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB OWNER $RT_PG_USER"
}

# reset_items [psql args]: fresh state for a run, in one session after the given commands: an
# empty table and no subscription rows of an earlier server.
# shellcheck disable=SC2120  # the arguments are optional
reset_items() {
  rt_sql "$@" -c "TRUNCATE items" \
    -c "DO \$\$ BEGIN IF to_regclass('realtime.subscription') IS NOT NULL THEN DELETE FROM realtime.subscription; END IF; END \$\$" >/dev/null
}

# drop_inactive_slots <prefix>: drop the replication slots of earlier runs (named <prefix>...).
drop_inactive_slots() {
  su_sql -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE '$1%' AND NOT active" >/dev/null
}

# ---- one run ------------------------------------------------------------------------------------

# begin_run <name> <meta json>: RUN_NAME, RUN_META and RUN_LOG (the server's log; the loadgen's
# go to RUN_LOG.out and RUN_LOG.loadgen). Returns 1, with an error line, if PORT is taken.
begin_run() {
  RUN_NAME="$1"
  RUN_META="$2"
  RUN_LOG="$LOG_DIR/$1.log"
  if port_open "$PORT"; then
    log "port $PORT in use; not measuring someone else's server"
    append_error "$RUN_META" "port in use"
    return 1
  fi
}

# write_tenants <file> <slot>: the seeded tenant DB, limits far above the load, and its
# postgres_cdc_rls extension on our database with replication slot <slot>.
write_tenants() {
  node -e '
    const [secret, host, port, db, user, pw, slot, extra] = process.argv.slice(1);
    console.log(JSON.stringify({ tenants: [{ external_id: db, jwt_secret: secret,
      max_concurrent_users: 1000000, max_events_per_second: 1000000000, max_bytes_per_second: 1000000000,
      max_joins_per_second: 1000000, max_channels_per_client: 100, ...JSON.parse(extra),
      extensions: [{ type: "postgres_cdc_rls", settings: { region: "local", db_host: host, db_port: port,
        db_name: db, db_user: user, db_password: pw, ssl_enforced: false, slot_name: slot } }] }] }));' \
    "$JWT_SECRET" "$RT_PG_HOST" "$RT_PG_PORT" "$DB" "$RT_PG_USER" "$RT_PG_PASSWORD" "$2" "$TENANT_EXTRA" >"$1"
}

# start_run_server <binary> <slot> [VAR=value ...]: our server for this run, pinned to CPU 0 in a
# session of its own, one worker; waits up to 15 s for its port. Returns 1, with an error line,
# if it does not come up.
start_run_server() {
  local bin="$1" slot="$2"
  shift 2
  SRV_DATA="$(mktemp -d "/tmp/qtrealtime-$DB.XXXXXX")"
  write_tenants "$SRV_DATA/tenants.json" "$slot"
  # OURS_EXTRA_ENV="K=V K2=V2" adds variables for experiments (as in bench/run.sh).
  # shellcheck disable=SC2086  # word splitting of OURS_EXTRA_ENV is intended
  setsid nice -n "$NICE" taskset -c 0 env PORT="$PORT" LISTEN_ADDRESS=127.0.0.1 DATA_DIR="$SRV_DATA" \
    SEED_SELF_HOST=true API_JWT_SECRET="$JWT_SECRET" SEED_TENANTS_FILE="$SRV_DATA/tenants.json" \
    LOG_LEVEL=warning "$@" \
    TENANT_MAX_CONCURRENT_USERS=1000000 TENANT_MAX_EVENTS_PER_SECOND=1000000000 \
    TENANT_MAX_BYTES_PER_SECOND=1000000000 TENANT_MAX_JOINS_PER_SECOND=1000000 \
    ${OURS_EXTRA_ENV:-} "$bin" --workers 1 >"$RUN_LOG" 2>&1 &
  SRV_PID=$!
  local _
  for _ in $(seq 1 150); do
    kill -0 "$SRV_PID" 2>/dev/null || break
    if port_open "$PORT"; then
      echo "$NICE" >"/proc/$SRV_PID/autogroup" 2>/dev/null || true
      return 0
    fi
    sleep 0.1
  done
  log "$RUN_NAME: server did not start (see $RUN_LOG)"
  append_error "$RUN_META" "server did not start"
  stop_server
  return 1
}

# run_loadgen <options...>: HERE/loadgen.js pinned to CPU 1 with the run's options around the
# given ones, bounded by `timeout` 15 s after its own hard exit. Sets LOADGEN_RC and SERVER_ALIVE
# (0 if the server died during the run).
run_loadgen() {
  set +e
  timeout -k 5 $((HARD + 15)) setsid nice -n "$NICE" taskset -c 1 node "$HERE/loadgen.js" --autogroup-nice "$NICE" \
    --port "$PORT" --tenant "$DB" --jwt-secret "$JWT_SECRET" "$@" \
    --duration "$DURATION" --warmup "$WARMUP" --drain "$DRAIN" --stall "$STALL" --hard-timeout "$HARD" \
    --pg-env "$PG_ENV" --db "$DB" --server-pid "$SRV_PID" --meta "$RUN_META" >"$RUN_LOG.out" 2>"$RUN_LOG.loadgen"
  LOADGEN_RC=$?
  set -e
  SERVER_ALIVE=1
  kill -0 "$SRV_PID" 2>/dev/null || SERVER_ALIVE=0
}

# record_result: append the loadgen's line (marked if the server died) to OUT and print the
# script's one-line summary of it; an error line if there is none.
record_result() {
  local line
  line="$(tail -n 1 "$RUN_LOG.out" 2>/dev/null || true)"
  if [[ "$line" == \{* ]]; then
    if [[ $SERVER_ALIVE -eq 0 ]]; then
      line=$(node -e 'const r=JSON.parse(process.argv[1]);r.serverDiedDuringRun=true;console.log(JSON.stringify(r))' "$line")
    fi
    echo "$line" >>"$OUT"
    print_run_summary "$line"
  else
    log "$RUN_NAME: loadgen exited $LOADGEN_RC without a result (see $RUN_LOG.loadgen)"
    append_error "$RUN_META" "loadgen exited $LOADGEN_RC without output"
  fi
}
