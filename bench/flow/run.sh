#!/usr/bin/env bash
# Issue 17 part 3: one transaction of ROWS inserted rows to SUBSCRIBERS realtime-js subscribers
# plus one subscriber that stops reading. Runs the end-to-end test of flow control at benchmark
# size (tests/e2e/test/flow-control.test.mjs: its own throwaway PostgreSQL 15, one server, the
# unchanged realtime-js) and keeps the figures it prints: seconds from the INSERT to the last
# change at every subscriber, rows/s per subscriber, server RSS before and at its peak.
# The test itself asserts what must hold: every reading subscriber gets every row once and in
# order, RSS growth within the bound (256 MB at 1,000,000 rows), the stalled subscriber cut off
# after SLOW_CONSUMER_GRACE_MS with its system message and the 1008 close.
#
#   bench/flow/run.sh [--server build/bin/realtime-server] [--rows 1000000] [--subscribers 10]
#                     [--reps 1]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$(dirname "$HERE")")"
SERVER_BIN="$REPO_DIR/build/bin/realtime-server"
ROWS=1000000
SUBSCRIBERS=10
REPS=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --server) SERVER_BIN="$2"; shift 2 ;;
        --rows) ROWS="$2"; shift 2 ;;
        --subscribers) SUBSCRIBERS="$2"; shift 2 ;;
        --reps) REPS="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

# A private copy: a rebuild during the session does not change what is measured.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp "$SERVER_BIN" "$WORK/realtime-server"
mkdir -p "$REPO_DIR/bench/results"
OUT="$REPO_DIR/bench/results/flow-$(date -u +%Y%m%dT%H%M%SZ).txt"
for rep in $(seq 1 "$REPS"); do
    echo "== rep $rep: $ROWS rows, $SUBSCRIBERS subscribers" | tee -a "$OUT"
    (cd "$REPO_DIR/tests/e2e" && RT_SERVER_BIN="$WORK/realtime-server" RT_FLOW_ROWS="$ROWS" \
        RT_FLOW_SUBSCRIBERS="$SUBSCRIBERS" RT_FLOW_GRACE_MS=10000 node --test --test-reporter=tap \
        test/flow-control.test.mjs) 2>&1 | tee "$WORK/rep.log" | grep -E 'flow: rows=|^not ok|^ok' | tee -a "$OUT"
    if ! grep -q '^# pass 1' "$WORK/rep.log"; then
        echo "rep $rep failed; log:" >&2
        tail -50 "$WORK/rep.log" >&2
        exit 1
    fi
done
echo "figures in $OUT"
